//! Snapshot tests (insta) of `benchboot report` and `benchboot compare` on stored results
//! documents: two real QEMU runs, two hand-made runs with repetitions and a hand-made
//! run whose board throttled, the same as schema 1.4 with the isolation proof
//! (`tests/data/`), and a document with every kind of figure
//! (`crates/results/tests/data/every-figure.json`: storage sync + direct, device reads,
//! random I/O, verification, memory, clock checks, card check, a command, network per
//! link: gadget, wired, UDP, WiFi entries). Review changes with `cargo insta review`, or accept them with
//! `INSTA_UPDATE=always cargo test -p benchboot --test integration report_snapshots`.

use benchboot::compare::{compare, output};
use benchboot::reference;
use benchboot::report::{load_run, render, Format};

const RPI: &str = "tests/data/rpi-zero-w-qemu.json";
const VIRT: &str = "tests/data/qemu-virt-arm64-qemu.json";
const HAND_A: &str = "tests/data/handmade-a.json";
const HAND_B: &str = "tests/data/handmade-b.json";
const THROTTLED: &str = "tests/data/handmade-throttled.json";
const ISOLATION: &str = "tests/data/handmade-isolation.json";
const EVERY: &str = "../crates/results/tests/data/every-figure.json";

fn report(path: &str, format: Format) -> String {
    let (_, r) = load_run(path).unwrap();
    render(&r, format).unwrap()
}

fn compare_text(runs: &[&str], refs: &[&str], format: Format) -> String {
    let runs: Vec<_> = runs.iter().map(|p| load_run(p).unwrap()).collect();
    let refs: Vec<_> = refs.iter().map(|n| reference::find(n).unwrap()).collect();
    output::render(&compare(&runs, &refs).unwrap(), format).unwrap()
}

#[test]
fn report_table_rpi_zero_w_qemu() {
    insta::assert_snapshot!("report_table_rpi_zero_w_qemu", report(RPI, Format::Table));
}

#[test]
fn report_table_qemu_virt_arm64_with_network() {
    insta::assert_snapshot!("report_table_qemu_virt_arm64", report(VIRT, Format::Table));
}

#[test]
fn report_markdown_handmade_with_repetitions_and_events() {
    insta::assert_snapshot!(
        "report_markdown_handmade_a",
        report(HAND_A, Format::Markdown)
    );
}

#[test]
fn report_csv_handmade() {
    insta::assert_snapshot!("report_csv_handmade_a", report(HAND_A, Format::Csv));
}

#[test]
fn report_json_handmade() {
    insta::assert_snapshot!("report_json_handmade_a", report(HAND_A, Format::Json));
}

#[test]
fn compare_table_handmade_runs_and_a_network_reference() {
    insta::assert_snapshot!(
        "compare_table_handmade_a_b_pi_zero",
        compare_text(&[HAND_A, HAND_B], &["pi-zero-wh-usb-gadget"], Format::Table)
    );
}

#[test]
fn compare_markdown_qemu_run_against_pi_model_b() {
    insta::assert_snapshot!(
        "compare_markdown_rpi_qemu_pi_model_b",
        compare_text(&[RPI], &["pi-model-b-usb-hdd"], Format::Markdown)
    );
}

#[test]
fn list_of_references() {
    insta::assert_snapshot!(
        "references_table",
        output::references_text(Format::Table).unwrap()
    );
}

#[test]
fn report_table_throttled_board_warns_and_marks_cells() {
    let text = report(THROTTLED, Format::Table);
    insta::assert_snapshot!("report_table_handmade_throttled", text);
}

/// Context, warnings and census lines (the tables are those of the throttled run).
#[test]
fn report_table_isolation_proof_in_context_warnings_and_census() {
    let text = report(ISOLATION, Format::Table);
    let head = &text[..text.find("\nStorage\n").unwrap()];
    let tail = &text[text.find("\nVerification, disks, census\n").unwrap()..];
    insta::assert_snapshot!(
        "report_table_handmade_isolation",
        format!("{head}\n[...]\n{tail}")
    );
}

#[test]
fn report_csv_throttled_board_carries_the_flags() {
    insta::assert_snapshot!(
        "report_csv_handmade_throttled",
        report(THROTTLED, Format::Csv)
    );
}

#[test]
fn report_json_throttled_board_carries_flags_per_cell_and_every_snapshot() {
    let json: serde_json::Value = serde_json::from_str(&report(THROTTLED, Format::Json)).unwrap();
    let kinds: Vec<&str> = json["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w["kind"].as_str())
        .filter(|k| k.starts_with("health"))
        .collect();
    assert_eq!(
        kinds,
        ["health", "health", "health"],
        "{:#}",
        json["warnings"]
    );
    let flagged: Vec<(String, u64, String)> = json["storage"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| !c["health_flags"].as_array().unwrap().is_empty())
        .map(|c| {
            (
                format!(
                    "{}.{}",
                    c["target"].as_str().unwrap(),
                    c["mode"].as_str().unwrap()
                ),
                c["block_size_bytes"].as_u64().unwrap(),
                c["health_flags"].to_string(),
            )
        })
        .collect();
    // Write and read of the one cell group.
    let want = (
        "ext4.sync".to_owned(),
        4096,
        r#"["under-voltage","throttled"]"#.to_owned(),
    );
    assert_eq!(flagged, [want.clone(), want]);
    let tcp = &json["network"]["throughput"];
    assert_eq!(tcp[0]["health_flags"].to_string(), "[]");
    assert_eq!(
        tcp[1]["health_flags"].to_string(),
        r#"["frequency-capped"]"#
    );
    assert_eq!(json["health"].as_array().unwrap().len(), 20);
    assert_eq!(
        json["health"][1]["after"]["throttled"]["value"]["raw"].as_u64(),
        Some(0x50005)
    );
    assert_eq!(json["context"]["cpu_clock_hz"].as_u64(), Some(700_000_000));
}

/// The HTML page with each inline SVG reduced to its opening tag and size (plotters'
/// drawing is pinned by the PNG/SVG plot tests; here the page around it): skeleton,
/// CSP, styles, every block as markup, the figures' places and the script.
fn without_svg_bodies(html: &str) -> String {
    let mut out = String::new();
    let mut rest = html;
    while let Some(i) = rest.find("<svg ") {
        out.push_str(&rest[..i]);
        let body = &rest[i..];
        let end = body
            .find("</svg>")
            .map_or(body.len(), |e| e + "</svg>".len());
        let open = &body[..body.find('>').map_or(0, |o| o + 1)];
        out.push_str(&format!("{open}[{} bytes of SVG]</svg>", end));
        rest = &body[end..];
    }
    out.push_str(rest);
    out
}

#[test]
fn report_html_every_kind_of_figure() {
    insta::assert_snapshot!(
        "report_html_every_figure",
        without_svg_bodies(&report(EVERY, Format::Html))
    );
}

#[test]
fn compare_html_handmade_runs() {
    insta::assert_snapshot!(
        "compare_html_handmade",
        without_svg_bodies(&compare_text(&[HAND_A, HAND_B], &[], Format::Html))
    );
}

#[test]
fn report_csv_every_kind_of_figure() {
    insta::assert_snapshot!("report_csv_every_figure", report(EVERY, Format::Csv));
}

#[test]
fn report_json_every_kind_of_figure() {
    insta::assert_snapshot!("report_json_every_figure", report(EVERY, Format::Json));
}

#[test]
fn report_table_every_kind_of_figure() {
    insta::assert_snapshot!("report_table_every_figure", report(EVERY, Format::Table));
}

#[test]
fn compare_csv_every_kind_of_figure_against_handmade() {
    insta::assert_snapshot!(
        "compare_csv_every_figure_handmade_a",
        compare_text(&[EVERY, HAND_A], &[], Format::Csv)
    );
}

/// The store's counts of the document with every kind of figure: storage passes, device
/// reads, random runs, verifications, network runs (throughput + latency + HTTP).
#[test]
fn store_counts_every_kind_of_figure() {
    let (_, r) = load_run(EVERY).unwrap();
    let c = benchboot::store::Counts::of(&r);
    assert_eq!(
        (
            c.storage,
            c.device_reads,
            c.random,
            c.verify,
            c.network,
            c.events
        ),
        (96, 2, 8, 1, 17, 2)
    );
    assert_eq!(c.measurements(), 124);
}
