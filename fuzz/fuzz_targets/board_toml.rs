//! The board file parser: `Board::from_toml` against the real `boards/shared.toml`.
#![no_main]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use benchboot_board::{Board, Shared};
use libfuzzer_sys::fuzz_target;

fn shared() -> &'static Shared {
    static SHARED: OnceLock<Shared> = OnceLock::new();
    SHARED.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../boards");
        Shared::load(&dir).expect("boards/shared.toml loads")
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // The file must be named after the board: name it after the `name` field when there
    // is one, so inputs get past that check to the rest of the validation.
    let name = toml::from_str::<toml::Table>(text)
        .ok()
        .and_then(|t| t.get("name")?.as_str().map(str::to_owned))
        .unwrap_or_else(|| "fuzz".to_owned());
    let file = PathBuf::from("boards").join(format!("{name}.toml"));
    match Board::from_toml(&file, text, shared()) {
        Ok(board) => {
            let _ = board.results_link();
        }
        Err(e) => {
            // Every error names the file it is about.
            let message = e.to_string();
            assert!(message.contains("boards/"), "{message}");
        }
    }
});
