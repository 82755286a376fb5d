//! [`Catalog`]: the board files built in are the checkout's, and a user's folder wins by
//! name, its errors naming its file and line.

use super::*;

fn zero_w_text() -> String {
    std::fs::read_to_string(boards_dir().join("rpi-zero-w.toml")).unwrap()
}

#[test]
fn builtin_boards_are_the_checkout_s_files() {
    let names = list(&boards_dir()).unwrap();
    assert_eq!(Catalog::builtin_names(), names);
    assert_eq!(Catalog::builtin().names().unwrap(), names);
    assert!(names.contains(&"rpi-zero-w".to_owned()), "{names:?}");
    for name in &names {
        let built_in = Catalog::builtin()
            .load(name)
            .unwrap_or_else(|e| panic!("{e}"));
        let on_disk = load(&boards_dir(), name).unwrap();
        assert_eq!(built_in.name, *name);
        assert_eq!(built_in.description, on_disk.description, "{name}");
        assert_eq!(built_in.kernel.package, on_disk.kernel.package, "{name}");
        assert_eq!(built_in.modules, on_disk.modules, "{name}");
        assert_eq!(built_in.boot.cmdline, on_disk.boot.cmdline, "{name}");
    }
    let shared = Catalog::builtin_shared().unwrap();
    assert_eq!(
        shared.kernels.keys().collect::<Vec<_>>(),
        Shared::load(&boards_dir())
            .unwrap()
            .kernels
            .keys()
            .collect::<Vec<_>>()
    );
    assert_eq!(
        shared.file,
        Path::new("built-in boards").join("shared.toml"),
        "messages name the built-in file"
    );
}

#[test]
fn a_user_s_folder_wins_by_name_and_adds_boards() {
    let dir = tempfile::tempdir().unwrap();
    let mine = zero_w_text().replacen("description = \"", "description = \"MY OWN ", 1);
    assert!(
        mine.contains("MY OWN "),
        "rpi-zero-w.toml has a description line"
    );
    std::fs::write(dir.path().join("rpi-zero-w.toml"), &mine).unwrap();
    let extra = zero_w_text().replacen("name = \"rpi-zero-w\"", "name = \"my-zero\"", 1);
    std::fs::write(dir.path().join("my-zero.toml"), extra).unwrap();
    let cat = Catalog::with_dir(Some(dir.path().to_owned()));

    let zero = cat.load("rpi-zero-w").unwrap();
    assert!(
        zero.description.starts_with("MY OWN "),
        "{}",
        zero.description
    );
    assert_eq!(cat.load("my-zero").unwrap().name, "my-zero");
    // Built-in boards the folder lacks still load, from the binary.
    assert_eq!(cat.load("rpi-4b").unwrap().name, "rpi-4b");
    let names = cat.names().unwrap();
    assert!(names.contains(&"my-zero".to_owned()) && names.contains(&"rpi-4b".to_owned()));
    assert_eq!(names.iter().filter(|n| *n == "rpi-zero-w").count(), 1);

    let err = cat.load("rpi-9").unwrap_err().to_string();
    assert_eq!(
        err,
        format!(
            "no board named `rpi-9` among {} and the boards built in; known boards: {}",
            dir.path().display(),
            names.join(", ")
        )
    );
}

#[test]
fn a_user_s_malformed_board_file_is_named_by_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rpi-zero-w.toml");
    // Line 3 of the file is broken.
    let mut lines: Vec<String> = zero_w_text().lines().map(str::to_owned).collect();
    lines.insert(2, "cpu = = \"oops\"".to_owned());
    std::fs::write(&file, lines.join("\n")).unwrap();
    let err = Catalog::with_dir(Some(dir.path().to_owned()))
        .load("rpi-zero-w")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with(&format!("{}: ", file.display())),
        "names the file: {err}"
    );
    assert!(err.contains("line 3"), "names the line: {err}");
}

#[test]
fn a_missing_user_folder_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let gone = dir.path().join("no-such-folder");
    let err = Catalog::with_dir(Some(gone.clone()))
        .load("rpi-zero-w")
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        format!(
            "--boards {}: no such folder: --boards takes a folder of board files (<name>.toml)",
            gone.display()
        )
    );
}

/// `--boards quick.toml`: a board file where its folder belongs is said to be one, with
/// the folder to give instead; a device is said as what it is.
#[test]
fn a_file_given_as_the_board_folder_is_said_to_be_one() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("quick.toml");
    std::fs::write(&file, zero_w_text()).unwrap();
    let err = Catalog::with_dir(Some(file.clone()))
        .load("rpi-zero-w")
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        format!(
            "--boards {} is a file: --boards takes a folder of board files (<name>.toml), not \
             one board file; give the folder that holds it (--boards {}) or copy the file \
             into a folder of its own",
            file.display(),
            dir.path().display()
        )
    );
    // A name without a folder (tests run in crates/board): the current one holds it.
    let err = crate::folder::user_folder(Path::new("Cargo.toml")).unwrap_err();
    assert!(err.to_string().contains("(--boards .)"), "{err}");
    #[cfg(unix)]
    assert_eq!(
        Catalog::with_dir(Some("/dev/null".into()))
            .names()
            .unwrap_err()
            .to_string(),
        "--boards /dev/null is a character device: --boards takes a folder of board files \
         (<name>.toml)"
    );
}

#[test]
fn unknown_builtin_board_lists_the_built_in_ones() {
    for name in ["rpi-9", "shared", "../boards/rpi-4b", "packages.lock"] {
        let err = Catalog::builtin().load(name).unwrap_err().to_string();
        assert_eq!(
            err,
            format!(
                "no board named `{name}` among the boards built in; known boards: {}",
                list(&boards_dir()).unwrap().join(", ")
            )
        );
    }
}

/// `--boards DIR` holding a FIFO named as a board (it waited for ever), a device link
/// and a board file of 1 MiB: each refused by name, as what it is.
#[cfg(unix)]
#[test]
fn a_user_s_board_that_is_no_regular_file_or_too_large_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    assert!(std::process::Command::new("mkfifo")
        .arg(dir.path().join("fifo-board.toml"))
        .status()
        .unwrap()
        .success());
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("zero-board.toml")).unwrap();
    std::fs::write(dir.path().join("big-board.toml"), vec![b'#'; 1 << 20]).unwrap();
    let cat = Catalog::with_dir(Some(dir.path().to_owned()));
    let e = cat.load("fifo-board").unwrap_err().to_string();
    assert!(e.ends_with("fifo-board.toml: a FIFO (named pipe), not a regular file: a board file is read only from a file (a device or a pipe may never end); save it to a file and give that"), "{e}");
    let e = cat.load("zero-board").unwrap_err().to_string();
    assert!(
        e.contains("zero-board.toml: a character device, not a regular file"),
        "{e}"
    );
    let e = cat.load("big-board").unwrap_err().to_string();
    assert!(e.ends_with("big-board.toml: 1 MiB is more than a board file has (256 KiB at most): check that it is a board file"), "{e}");
    // shared.toml of the folder too.
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("shared.toml")).unwrap();
    std::fs::write(dir.path().join("ok.toml"), "x").unwrap();
    let e = cat.load("ok").unwrap_err().to_string();
    assert!(e.contains("shared.toml: a character device"), "{e}");
}

/// A folder of 5,000 entries (a home folder, /dev given by mistake) is refused after
/// 4,096; one of 100 board names is listed in a line of 32 of them.
#[test]
fn a_user_s_folder_is_read_no_further_than_its_bound() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..100 {
        std::fs::write(dir.path().join(format!("b{i:03}.toml")), "").unwrap();
    }
    let cat = Catalog::with_dir(Some(dir.path().to_owned()));
    let e = cat.load("nosuch").unwrap_err().to_string();
    assert!(e.contains("known boards: b000, b001, "), "{e}");
    assert!(
        e.ends_with(&format!(
            "b031 and {} more",
            100 + Catalog::builtin_names().len() - 32
        )),
        "{e}"
    );
    for i in 100..5000 {
        std::fs::write(dir.path().join(format!("x{i}.txt")), "").unwrap();
    }
    let e = cat.load("nosuch").unwrap_err().to_string();
    assert_eq!(
        e,
        format!(
            "--boards {} holds more than 4096 entries, the most a board folder is read to \
             (the project's has a dozen board files): give the folder of your board files, or \
             move what is not one out of it",
            dir.path().display()
        )
    );
}
