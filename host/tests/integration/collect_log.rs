//! `benchboot collect --from-log` / `--from-lava`: a run rebuilt from a console log (a
//! serial capture, a LAVA job log in both of LAVA's record forms), LAVA's stored results
//! checked against it, a LAVA server's REST API on loopback; and the bad logs, each
//! refused with the line named and nothing stored.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output};

use benchboot_console::{document, figures, lava, lines, verdicts};
use benchboot_results::RunResults;

const DOC: &str = include_str!("../data/qemu-virt-arm64-qemu.json");

fn benchboot(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_benchboot"))
        .args(args)
        .env_remove("LAVA_TOKEN")
        .output()
        .unwrap()
}

fn doc() -> RunResults {
    RunResults::from_json(DOC).unwrap()
}

/// What PID 1 prints from its start line to its last verdict for the document `json`
/// of run `r` (protocol text, without `benchboot: `).
fn console(r: &RunResults, json: &str) -> Vec<String> {
    let mut out = vec![format!("start run={} board={}", r.run_id, r.board)];
    out.extend(figures::all(r).iter().filter_map(lines::figure));
    out.push(lines::figures_end(&r.run_id, out.len() - 1));
    out.extend(document::encode(&r.run_id, json.as_bytes()));
    let v = verdicts::all(r);
    out.push(lines::verdicts_begin(&r.run_id));
    out.extend(v.iter().map(lines::verdict));
    out.push(lines::verdicts_end(&r.run_id, &v));
    out
}

/// A serial capture of `console`: kernel lines and time stamps around the protocol.
fn capture(console: &[String]) -> String {
    let mut s = String::from("[    0.000000] Booting Linux on physical CPU 0x0\r\n");
    for (i, l) in console.iter().enumerate() {
        s.push_str(&format!(
            "[{:>12.6}] benchboot: {l}\r\n",
            3.0 + i as f64 * 0.01
        ));
    }
    s
}

/// A LAVA job log of `console` as the server stores it (`- ` records) or as lava-run
/// prints it (JSON lines), with the results LAVA's monitors file (`! "12.5"`
/// measurements, as PyYAML writes them).
fn lava_log(console: &[String], server: bool) -> String {
    let rec = |lvl: &str, msg: String| {
        let r =
            format!("{{\"dt\": \"2026-12-02T06:00:00\", \"lvl\": \"{lvl}\", \"msg\": {msg}}}\n");
        if server {
            format!("- {r}")
        } else {
            r
        }
    };
    let mut s = rec("info", "\"start: 1 tmpfs-deploy\"".into());
    for l in console {
        s.push_str(&rec("target", format!("\"benchboot: {l}\"")));
        let text = l.as_str();
        if let Some(f) = lines::parse_figure(text) {
            s.push_str(&rec(
                "results",
                format!(
                    "{{\"case\": \"{}\", \"definition\": \"benchboot-figures\", \"level\": \"3.1\", \
                     \"measurement\": ! \"{}\", \"result\": \"pass\", \"units\": \"{}\"}}",
                    lava::fold_id(&f.id),
                    f.value,
                    f.units
                ),
            ));
        } else if let Some((id, o)) = lines::parse_verdict(text) {
            s.push_str(&rec(
                "results",
                format!(
                    "{{\"case\": \"{}\", \"definition\": \"benchboot-verdicts\", \"level\": \"3.1\", \
                     \"result\": \"{}\"}}",
                    lava::fold_id(&id),
                    o.name()
                ),
            ));
        }
    }
    s.push_str(&rec(
        "results",
        "{\"case\": \"job\", \"definition\": \"lava\", \"result\": \"pass\"}".into(),
    ));
    s
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

fn stored(store: &Path, run_id: &str) -> Option<String> {
    std::fs::read_to_string(store.join("runs").join(format!("{run_id}.json"))).ok()
}

#[test]
fn a_serial_capture_and_lava_logs_give_the_served_document() {
    let r = doc();
    let c = console(&r, DOC);
    for (name, text, lava) in [
        ("capture.txt", capture(&c), false),
        ("server.log", lava_log(&c, true), true),
        ("lava-run.log", lava_log(&c, false), true),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let log = write(dir.path(), name, &text);
        let store = dir.path().join("store");
        let flag = if lava { "--from-lava" } else { "--from-log" };
        let out = benchboot(&["collect", flag, &log, "--store", store.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{name}: {err}");
        // Byte for byte the document the board served.
        assert_eq!(stored(&store, &r.run_id).as_deref(), Some(DOC), "{name}");
        if lava {
            assert!(
                err.contains("LAVA's results: ") && err.contains("match the document"),
                "{name}: {err}"
            );
        }
    }
}

/// Each bad log is refused with the line that is wrong, and nothing is stored.
#[test]
fn bad_logs_name_the_line_and_store_nothing() {
    let r = doc();
    let c = console(&r, DOC);
    let text = capture(&c);
    let lines: Vec<&str> = text.lines().collect();
    let begin = lines
        .iter()
        .position(|l| l.contains("document begin"))
        .unwrap()
        + 1;
    let mut bad_crc: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    // One base64 character changed on the way (line begin + 3 is chunk 3).
    let l = &mut bad_crc[begin + 2];
    let at = l.find(" document 3/").unwrap() + 16;
    let ch = if &l[at..=at] == "A" { "B" } else { "A" };
    l.replace_range(at..=at, ch);
    let other = RunResults {
        run_id: "qemu-virt-arm64-0000other000".into(),
        ..r.clone()
    };
    let two = format!(
        "{}{}",
        capture(&c),
        capture(&console(&other, &other.to_json()))
    );
    let cases = [
        (
            "truncated",
            lines[..begin + 10].join("\n"),
            format!(
                "line {}: the document of run {} (begun at line {begin}) stops after 10 of its",
                begin + 10,
                r.run_id
            ),
        ),
        (
            "bad crc",
            bad_crc.join("\n"),
            format!("line {}: document line 3/", begin + 3),
        ),
        (
            "two runs",
            two,
            format!("2 runs in one log: {} (lines {begin}-", r.run_id),
        ),
        (
            "no run",
            "[ 0.0] Booting Linux\n[ 1.0] Kernel panic - not syncing\n".into(),
            "no results document in the log".into(),
        ),
        (
            "cut before the document",
            lines[..begin - 1].join("\n"),
            format!(
                "run {} started at line 2, but the log ends before",
                r.run_id
            ),
        ),
    ];
    for (what, text, want) in cases {
        let dir = tempfile::tempdir().unwrap();
        let log = write(dir.path(), "console.log", &text);
        let store = dir.path().join("store");
        let out = benchboot(&[
            "collect",
            "--from-log",
            &log,
            "--store",
            store.to_str().unwrap(),
        ]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{what}: accepted");
        assert!(err.contains(&want), "{what}: {err}");
        assert!(
            err.contains("console.log"),
            "{what}: the file is named: {err}"
        );
        assert!(!store.exists(), "{what}: a store was made");
    }
    // Two runs: --run picks one.
    let dir = tempfile::tempdir().unwrap();
    let log = write(
        dir.path(),
        "two.log",
        &format!(
            "{}{}",
            capture(&c),
            capture(&console(&other, &other.to_json()))
        ),
    );
    let store = dir.path().join("store");
    let out = benchboot(&[
        "collect",
        "--from-log",
        &log,
        "--run",
        &other.run_id,
        "--store",
        store.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stored(&store, &other.run_id).is_some() && stored(&store, &r.run_id).is_none());
}

/// A hostile begin line: `collect --from-log` aborted on it (exit 134, an allocation of
/// 10^12 bytes; exit 101, capacity overflow), and `--from-lava FILE` the same. Now exit
/// 1 and the file, the line and the sizes named; nothing stored.
#[test]
fn a_hostile_begin_line_is_refused_not_a_crash() {
    let sha = "0".repeat(64);
    for (zlib, lines) in [
        ("18446744073709551615", "192153584101141163"),
        ("1000000000000", "10416666667"),
    ] {
        let begin = format!(
            "benchboot: document begin run=x format=zlib+base64 json-bytes=10 \
             zlib-bytes={zlib} lines={lines} sha256={sha}"
        );
        let lava = format!(
            "{{\"dt\": \"t\", \"lvl\": \"info\", \"msg\": \"start\"}}\n\
             - {{\"dt\": \"t\", \"lvl\": \"target\", \"msg\": \"{begin}\"}}\n"
        );
        for (flag, text) in [
            ("--from-log", format!("[ 0.1] booting\n[ 9.9] {begin}\n")),
            ("--from-lava", lava),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let log = write(dir.path(), "hostile.log", &text);
            let store = dir.path().join("store");
            let out = benchboot(&["collect", flag, &log, "--store", store.to_str().unwrap()]);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{flag} {zlib}: {err}");
            assert!(
                err.contains(&format!(
                    "{log}: line 2: document begin line with impossible sizes (json-bytes=10, \
                     zlib-bytes={zlib}, lines={lines}: 10 bytes compress to 143 at most, in \
                     lines of 96); a corrupt or hostile log"
                )),
                "{flag} {zlib}: {err}"
            );
            assert!(!store.exists(), "{flag}: a store was made");
        }
    }
}

/// LAVA's stored results that disagree with the document: refused, each difference
/// named; `--no-lava-check` stores the (checksummed) document anyway. A plain capture
/// is no LAVA log.
#[test]
fn lava_results_that_disagree_are_named() {
    let r = doc();
    let c = console(&r, DOC);
    let log = lava_log(&c, true).replacen("\"result\": \"pass\"}}", "\"result\": \"fail\"}}", 1);
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "job.log", &log);
    let store = dir.path().join("store");
    let out = benchboot(&[
        "collect",
        "--from-lava",
        &path,
        "--store",
        store.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains(
            "LAVA's stored results disagree with the run's document in 1 place(s); nothing stored"
        ),
        "{err}"
    );
    assert!(!store.exists());
    let out = benchboot(&[
        "collect",
        "--from-lava",
        &path,
        "--no-lava-check",
        "--store",
        store.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stored(&store, &r.run_id).as_deref(), Some(DOC));
    let cap = write(dir.path(), "cap.txt", &capture(&c));
    let out = benchboot(&[
        "collect",
        "--from-lava",
        &cap,
        "--store",
        store.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("use --from-log"),
        "{err}"
    );
}

/// A LAVA server on loopback: the job's log and its results export come from the REST
/// API (`/api/v0.2/jobs/<id>/logs/` and `/yaml/`), with the token sent as LAVA wants it.
#[test]
fn from_a_lava_server() {
    let r = doc();
    let c = console(&r, DOC);
    let log = lava_log(&c, true);
    let mut export = String::new();
    for l in &c {
        if let Some(f) = lines::parse_figure(l) {
            export.push_str(&format!(
                "- {{name: {}, suite: 0_benchboot-figures, result: pass, measurement: '{:.10}', unit: {}}}\n",
                lava::fold_id(&f.id),
                f.value,
                f.units.replace('%', "'%'")
            ));
        } else if let Some((id, o)) = lines::parse_verdict(l) {
            export.push_str(&format!(
                "- {{name: {}, suite: 0_benchboot-verdicts, result: {}, measurement: 'None', unit: ''}}\n",
                lava::fold_id(&id),
                o.name()
            ));
        }
    }
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        let mut asked = Vec::new();
        for _ in 0..2 {
            let (mut s, _) = listener.accept().unwrap();
            let mut req = Vec::new();
            let mut buf = [0u8; 4096];
            while !req.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = s.read(&mut buf).unwrap();
                req.extend_from_slice(&buf[..n]);
            }
            let head = String::from_utf8_lossy(&req).into_owned();
            let body = if head.starts_with("GET /lava/api/v0.2/jobs/42/logs/ ") {
                log.clone()
            } else if head.starts_with("GET /lava/api/v0.2/jobs/42/yaml/ ") {
                export.clone()
            } else {
                String::new()
            };
            let status = if body.is_empty() {
                "404 Not Found"
            } else {
                "200 OK"
            };
            write!(
                s,
                "HTTP/1.1 {status}\r\nContent-Length: {}\r\nContent-Type: application/yaml\r\nConnection: close\r\n\r\n{body}",
                body.len()
            )
            .unwrap();
            asked.push(head);
        }
        asked
    });
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let url = format!("http://127.0.0.1:{port}/lava/scheduler/job/42");
    let out = benchboot(&[
        "collect",
        "--from-lava",
        &url,
        "--token",
        "s3cret",
        "--store",
        store.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(stored(&store, &r.run_id).as_deref(), Some(DOC));
    let asked = server.join().unwrap();
    assert!(
        asked
            .iter()
            .all(|h| h.contains("Authorization: Token s3cret")),
        "{asked:?}"
    );
}

/// A begin line that names another run than its document holds: refused, naming both,
/// nothing stored (before, `--run other` stored run `handmade-a`, replacing a copy).
#[test]
fn a_begin_line_naming_another_run_is_refused() {
    let r = doc();
    let mut lines = vec![format!("start run=other board={}", r.board)];
    lines.extend(document::encode("other", DOC.as_bytes()));
    let dir = tempfile::tempdir().unwrap();
    let log = write(dir.path(), "other.log", &capture(&lines));
    let store = dir.path().join("store");
    let out = benchboot(&[
        "collect",
        "--from-log",
        &log,
        "--run",
        "other",
        "--store",
        store.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "the begin line says run other but its document is run {}",
            r.run_id
        )),
        "{err}"
    );
    assert!(!store.exists(), "a store was made");
}
