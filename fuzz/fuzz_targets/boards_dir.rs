//! A user's board folder as `--boards DIR` reads it (`Catalog::with_dir`): the input
//! is files, `=== <name>\n` before each one's bytes, written into a folder; then every
//! name the catalog lists is loaded against the folder's `shared.toml` (or the built-in
//! one), through the one reader of named files.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use benchboot_board::Catalog;
use libfuzzer_sys::fuzz_target;

fn dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("bb-fuzz-boards-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    })
}

fuzz_target!(|data: &[u8]| {
    let dir = dir();
    for e in std::fs::read_dir(dir).unwrap() {
        let _ = std::fs::remove_file(e.unwrap().path());
    }
    // `=== name\n` headers; names of [A-Za-z0-9._-] only, so each is a file of the
    // folder (the folder's own listing is what is fuzzed, not the file system's rules).
    let text = String::from_utf8_lossy(data);
    for part in text.split("=== ").skip(1).take(16) {
        let (name, body) = part.split_once('\n').unwrap_or((part, ""));
        if name.is_empty()
            || name.len() > 64
            || name.starts_with('.')
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
        {
            continue;
        }
        // The host's disk, not the reader: a full disk (ENOSPC) skips the input.
        if std::fs::write(dir.join(name), body).is_err() {
            return;
        }
    }
    let cat = Catalog::with_dir(Some(dir.clone()));
    let names = cat.names().expect("a folder of at most 16 files is listed");
    let mine = benchboot_board::list(dir).expect("listed");
    assert!(mine.iter().all(|n| names.contains(n)));
    for name in mine.iter().take(8) {
        match cat.load(name) {
            Ok(b) => assert_eq!(&b.name, name),
            Err(e) => {
                // Every error names a file of the folder or a built-in one, in a line
                // of bounded length.
                let m = e.to_string();
                assert!(
                    m.contains(dir.to_str().unwrap()) || m.contains("built-in boards"),
                    "{m}"
                );
                assert!(m.chars().count() < 4000, "{} chars", m.chars().count());
            }
        }
    }
    let e = cat.load("no-such-board-here").unwrap_err().to_string();
    assert!(e.chars().count() < 4000, "{e}");
});
