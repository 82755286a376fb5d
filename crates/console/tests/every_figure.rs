//! The console's figure lines and LAVA's case ids for a document with every kind of
//! figure (`crates/results/tests/data/every-figure.json`: storage sync + direct, device
//! reads, random I/O, verification, memory, clock checks, card check, a command, network
//! per link: gadget, wired, UDP, WiFi entries), pinned as an insta snapshot: any change
//! to an id, a value or a unit shows in the diff.
#![forbid(unsafe_code)]

use benchboot_console::{figures, lava, lines};
use benchboot_results::RunResults;

fn every_figure() -> RunResults {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../results/tests/data/every-figure.json"
    );
    RunResults::from_json(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn console_figure_lines_and_lava_ids_of_every_kind_of_figure() {
    let r = every_figure();
    let text: String = figures::all(&r)
        .iter()
        .map(|f| {
            let line = lines::figure(f).unwrap_or_else(|| "(not finite: no line)".into());
            format!("{line}  lava={}\n", lava::fold_id(&f.id))
        })
        .collect();
    insta::assert_snapshot!("every_figure_console_lines", text);
}
