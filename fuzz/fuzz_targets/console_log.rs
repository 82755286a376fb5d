//! The console-log reader as `benchboot collect --from-log` / `--from-lava FILE` runs
//! it: the bytes as text (lossy, like `read_log`), `log_file::parse` (a serial capture,
//! or a LAVA job log when its first line is a record), then `document::rebuild` over
//! every line. Then the input is noise around documents the board's writer
//! (`document::encode`) printed, in both log forms: they must read back equal.
#![no_main]

use benchboot_console::document::{self, DocumentError, MAX_JSON_BYTES};
use benchboot_console::lines::protocol_text;
use benchboot_console::log_file;
use libfuzzer_sys::fuzz_target;

/// The line an error names, if it names one.
fn error_line(e: &DocumentError) -> Option<usize> {
    match e {
        DocumentError::None { started } => started.as_ref().map(|(_, l)| *l),
        DocumentError::BadLine { line, .. }
        | DocumentError::Truncated { line, .. }
        | DocumentError::Corrupt { line, .. } => Some(*line),
    }
}

/// The two documents of the round trip: the first 600 bytes of a run's (four chunk
/// lines, kept short so a run stays fast) and a tiny one.
const DOC_A: &[u8] = include_bytes!("../../host/tests/data/handmade-a.json")
    .split_at(600)
    .0;
const DOC_B: &[u8] = br#"{"board":"rpi-zero-w"}"#;

/// Their lines as the board's writer prints them, encoded once (zlib level 9 per run
/// would be most of the time of a run).
fn documents() -> &'static (Vec<String>, Vec<String>) {
    static DOCS: std::sync::OnceLock<(Vec<String>, Vec<String>)> = std::sync::OnceLock::new();
    DOCS.get_or_init(|| {
        (
            document::encode("run-a", DOC_A),
            document::encode("run-b", DOC_B),
        )
    })
}

/// What `collect --from-log` reads of `text`: every document, or the error.
fn read(text: &str) -> Option<Result<Vec<document::Found>, DocumentError>> {
    let log = log_file::parse("fuzz.log", text).ok()?;
    Some(document::rebuild(
        log.lines.iter().map(|(n, l)| (*n, l.as_str())),
    ))
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let n_lines = text.lines().count();

    // 1. The input itself as a log: line numbers are the file's, sizes are bounded.
    match log_file::parse("fuzz.log", &text) {
        Ok(log) => {
            assert!(log.lines.windows(2).all(|w| w[0].0 < w[1].0));
            assert!(log.lines.iter().all(|(n, _)| (1..=n_lines).contains(n)));
            match document::rebuild(log.lines.iter().map(|(n, l)| (*n, l.as_str()))) {
                Ok(found) => {
                    let total: usize = found.iter().map(|f| f.json.len()).sum();
                    assert!(total <= document::MAX_TOTAL_JSON_BYTES);
                    for f in &found {
                        assert!(f.json.len() <= MAX_JSON_BYTES);
                        assert!(f.lines.0 < f.lines.1 && f.lines.1 <= n_lines);
                    }
                }
                Err(e) => {
                    if let Some(l) = error_line(&e) {
                        assert!((1..=n_lines).contains(&l), "{e} ({n_lines} lines)");
                    }
                }
            }
        }
        Err(e) => assert!(format!("{e:#}").starts_with("fuzz.log: line "), "{e:#}"),
    }

    // 2. Documents the board wrote, in the input's noise: the noise lines that carry no
    //    protocol line, and the noise as the tag before each line (a capture's time
    //    stamp). A document begun and cut short (a reset) is dropped for its rerun.
    let noise: Vec<&str> = text
        .lines()
        .filter(|l| protocol_text(l).is_none())
        .collect();
    let (a, b) = documents();
    let mut proto: Vec<&str> = b[..2].iter().map(String::as_str).collect();
    proto.extend(a.iter().map(String::as_str));
    proto.extend(b.iter().map(String::as_str));
    // A capture's first line is the boot loader's: noise looking like a LAVA record
    // (`{"lvl": ...`) first would make it read as one, rightly.
    let mut plain = String::from("U-Boot 2024.01\n");
    let mut lava = String::new();
    let yaml_safe = |s: &str| -> String {
        s.chars()
            .map(|c| if (' '..='~').contains(&c) { c } else { '?' })
            .collect()
    };
    for (i, p) in proto.iter().enumerate() {
        let tag = noise.get(i % noise.len().max(1)).copied().unwrap_or("");
        if let Some(extra) = noise.get(i) {
            plain.push_str(extra);
            plain.push('\n');
            let msg = serde_json::to_string(&yaml_safe(extra)).expect("a string");
            lava.push_str(&format!(
                "{{\"dt\": \"t\", \"lvl\": \"info\", \"msg\": {msg}}}\n"
            ));
        }
        plain.push_str(&format!("{tag}benchboot: {p}\r\n"));
        let msg = serde_json::to_string(&format!("benchboot: {p}")).expect("a string");
        lava.push_str(&format!(
            "- {{\"dt\": \"t\", \"lvl\": \"target\", \"msg\": {msg}}}\n"
        ));
    }
    // The LAVA form must start with a record to be read as one.
    let lava = format!("{{\"dt\": \"t\", \"lvl\": \"info\", \"msg\": \"start\"}}\n{lava}");
    // One form a run (the input's first byte picks), to keep runs fast.
    let forms = [("plain", &plain), ("lava", &lava)];
    let pick = usize::from(data.first().is_some_and(|b| b & 1 == 1));
    for (form, log) in &forms[pick..=pick] {
        let found = match read(log) {
            Some(Ok(found)) => found,
            Some(Err(e)) => panic!("{form}: {e}\n{log}"),
            None => panic!("{form}: not read as a log\n{log}"),
        };
        let got: Vec<(&str, &[u8])> = found
            .iter()
            .map(|f| (f.run_id.as_str(), f.json.as_slice()))
            .collect();
        assert_eq!(got, [("run-a", DOC_A), ("run-b", DOC_B)], "{form}");
    }
});
