//! The built `benchboot` binary on bad input: the message (the whole context chain)
//! after `error: `, exit status 1, and no backtrace even with `RUST_BACKTRACE=1` set, as
//! CI and developer machines set it.

use std::process::{Command, Output};

fn benchboot(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_benchboot"))
        .args(args)
        .env("RUST_BACKTRACE", "1")
        .env("RUST_LIB_BACKTRACE", "1")
        .output()
        .expect("benchboot runs")
}

fn assert_no_backtrace(stderr: &str) {
    for word in [
        "stack backtrace",
        "Stack backtrace",
        "Stack Backtrace",
        "panicked",
    ] {
        assert!(!stderr.contains(word), "`{word}` in stderr:\n{stderr}");
    }
}

#[test]
fn a_missing_file_is_a_message_naming_it_not_a_backtrace() {
    let out = benchboot(&["show", "/nonexistent/run.json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with("error: reading /nonexistent/run.json: "),
        "{stderr}"
    );
    // The OS's own words: Linux/macOS ENOENT, Windows ERROR_PATH_NOT_FOUND.
    let os_words = if cfg!(windows) {
        "Path not found. (os error 3)"
    } else {
        "No such file or directory"
    };
    assert!(stderr.contains(os_words), "{stderr}");
    // Once, and in words only (no ` (os error 2)` on Linux and macOS).
    assert_eq!(stderr.matches(os_words).count(), 1, "{stderr}");
    if !cfg!(windows) {
        assert!(!stderr.contains("(os error"), "{stderr}");
    }
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert_no_backtrace(&stderr);
    assert!(out.stdout.is_empty());
}

#[test]
fn a_file_that_is_not_a_results_document_is_named_with_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes.json");
    std::fs::write(&file, "{\"hello\": 1}").unwrap();
    let out = benchboot(&["show", file.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with(&format!("error: {}: ", file.display())),
        "{stderr}"
    );
    assert!(
        stderr.contains("expected a benchboot results document"),
        "{stderr}"
    );
    assert_no_backtrace(&stderr);
}

#[test]
fn a_usage_error_exits_with_clap_status_2() {
    let out = benchboot(&["show"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("<RUN>"), "{stderr}");
    assert_no_backtrace(&stderr);
}

/// A Windows build lacks the commands that need Linux or macOS system calls: each says
/// so and what to use instead, exit status 1, no backtrace. `flash`, `probe` and
/// `devices` it has.
#[cfg(windows)]
#[test]
fn commands_windows_lacks_say_what_to_use_instead() {
    for (args, instead) in [
        (&["memory"][..], "run it on Linux"),
        (&["storage", "--path", "."][..], "run it on Linux or macOS"),
        (&["prepare-disk", "disk.img"][..], "mke2fs"),
        (
            &["field-test", "--board", "rpi-zero-w"][..],
            "run `benchboot flash`",
        ),
    ] {
        let out = benchboot(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.starts_with(&format!(
                "error: `benchboot {}` is not available on windows: ",
                args[0]
            )),
            "{args:?}: {stderr}"
        );
        assert!(stderr.contains(instead), "{args:?}: {stderr}");
        assert_no_backtrace(&stderr);
    }
    // `flash` and `probe` are Windows' too now: they get as far as their input.
    for (args, said) in [
        (
            &["flash", "x.img", "--device", "card.img"][..],
            "error: image x.img: not readable",
        ),
        (
            &["probe", r"\\.\PhysicalDrive63", "--yes"][..],
            r"error: \\.\PhysicalDrive63: not a disk this machine lists",
        ),
    ] {
        let out = benchboot(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        // Notes of the disk scan may come first.
        assert!(stderr.contains(said), "{args:?}: {stderr}");
        assert_no_backtrace(&stderr);
    }
    // `devices` is Windows' too now: it lists (under wine, one refused disk) and
    // exits 0.
    let out = benchboot(&["devices"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_no_backtrace(&stderr);
}

/// `--format html` and `-o`: a folder as the output file, and the runs page without a
/// file to write (it writes a report per run beside it), each say what to pass; nothing
/// is written. A report written with `-o` is whole and says where it went.
#[test]
fn html_output_names_the_file_to_pass() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let out = benchboot(&[
        "report",
        "tests/data/handmade-a.json",
        "--format",
        "html",
        "-o",
        d,
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr.trim_end(),
        format!(
            "error: -o {d}: is a folder; name a file (e.g. {})",
            dir.path().join("report.html").display()
        )
    );
    assert_eq!(std::fs::read_dir(d).unwrap().count(), 0, "nothing written");

    // A symbolic link (or a FIFO, a device) would be replaced, not written through.
    #[cfg(unix)]
    {
        let target = dir.path().join("precious.txt");
        std::fs::write(&target, "keep").unwrap();
        let link = dir.path().join("link.html");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let out = benchboot(&[
            "report",
            "tests/data/handmade-a.json",
            "--format",
            "html",
            "-o",
            link.to_str().unwrap(),
        ]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains("is not a regular file"), "{stderr}");
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
        std::fs::remove_file(&link).unwrap();
        std::fs::remove_file(&target).unwrap();
    }

    let store = dir.path().join("store");
    let out = benchboot(&[
        "runs",
        "--store",
        store.to_str().unwrap(),
        "--format",
        "html",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr.trim_end(),
        "error: --format html writes a page and a report per run: name the page with -o \
         FILE (e.g. -o runs/index.html)"
    );
    assert_no_backtrace(&stderr);

    let page = dir.path().join("a.html");
    let out = benchboot(&[
        "report",
        "tests/data/handmade-a.json",
        "--format",
        "html",
        "-o",
        page.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty());
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>") && html.trim_end().ends_with("</html>"));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim_end(),
        format!("wrote {}", page.display())
    );
}

/// `benchboot power show` with a trace nothing ties to the run: exit status 1, both
/// files and the reason named, nothing on stdout.
#[test]
fn power_show_refuses_a_trace_that_does_not_align() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.power.json");
    let samples: Vec<String> = (0..100)
        .map(|i| format!(r#"{{"t_s":{},"watts":2.0}}"#, f64::from(i) / 10.0))
        .collect();
    std::fs::write(
        &trace,
        format!(
            r#"{{"meter":"m","clock":"own","emulated":true,"resolution_w":0.001,"period_s":0.1,"samples":[{}]}}"#,
            samples.join(",")
        ),
    )
    .unwrap();
    let results = "tests/data/handmade-a.json";
    let out = benchboot(&["power", "show", results, trace.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "error: {} cannot be tied to the steps of {results} (run ",
            trace.display()
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("the run recorded no sync pattern and the trace has no console stamps"),
        "{stderr}"
    );
    assert_no_backtrace(&stderr);
    assert!(out.stdout.is_empty());
}
