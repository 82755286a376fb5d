//! `cargo xtask` as a person runs it: a user error is one `error:` line naming what was
//! wrong, exit status 1, and no stack backtrace even with `RUST_BACKTRACE=1` set.
#![forbid(unsafe_code)]

use std::process::Command;

#[test]
fn a_user_error_is_one_line_without_a_backtrace() {
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["image", "--board", "no-such-board"])
        .env("RUST_BACKTRACE", "1")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.starts_with("error: "), "{err}");
    assert!(err.contains("no-such-board"), "{err}");
    assert!(
        !err.to_lowercase().contains("backtrace"),
        "a user error printed a backtrace:\n{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}
