//! The WiFi section of the report: the radio and the regulatory domain, the table of
//! entries (one row per entry and direction, [`super::wifi_rows`]), the skipped
//! entries with their reasons, the legends of what is flagged, and QEMU's checks. An
//! emulated run says in an alert that these are QEMU's figures, not a radio's.

use benchboot_results::network::NetworkResults;
use benchboot_results::wifi::{RadioFacts, Regulatory};

use super::{
    channel_mismatch, has_wifi, mode_cell, neighbours_cell, phy_cell, power_save_cell,
    regulatory_mismatch, retries_cell, security_cell, signal_cell, wifi_rows, WifiRow, MISMATCH,
};
use crate::doc::{Block, Grid};
use crate::render::net_direction_label;
use crate::units::duration_label_ns;

/// The alert of an emulated run's WiFi section.
pub const EMULATED_WIFI: &str = "EMULATED WIFI: QEMU's mac80211_hwsim radios pass frames \
     through the guest's RAM; these WiFi figures are QEMU's, not a radio's, and say \
     nothing about the board's WiFi hardware";

/// The radio in two or three lines: chip, revision, driver and firmware; interface,
/// MAC, phy, bands, interface types and features; the firmware files.
pub fn radio_lines(r: &RadioFacts) -> Vec<String> {
    let mut first = format!("radio: {}", r.chip.as_deref().unwrap_or("chip unknown"));
    if let Some(rev) = &r.chip_revision {
        first.push_str(&format!(" ({rev})"));
    }
    first.push_str(&format!(
        ", driver {}",
        r.driver.as_deref().unwrap_or("unknown")
    ));
    match r.firmware_version.as_deref().filter(|s| !s.is_empty()) {
        Some(f) => first.push_str(&format!(", firmware {f}")),
        None => first.push_str(", firmware version not reported"),
    }
    let mut second = format!("{} ({}), {}", r.interface, r.mac, r.phy);
    if !r.bands.is_empty() {
        let bands: Vec<String> = r.bands.iter().map(|b| format!("{b} GHz")).collect();
        second.push_str(&format!("; bands {}", bands.join(", ")));
    }
    if !r.iftypes.is_empty() {
        second.push_str(&format!("; modes {}", r.iftypes.join(", ")));
    }
    if !r.ext_features.is_empty() {
        second.push_str(&format!("; features {}", r.ext_features.join(", ")));
    }
    let mut out = vec![first, second];
    if !r.files.is_empty() {
        out.push(format!("files: {}", r.files.join(", ")));
    }
    out
}

/// `regulatory domain: asked DE, obtained DE, DFS region ETSI`; a domain other than the
/// one asked is flagged.
pub fn regulatory_line(g: &Regulatory) -> String {
    let mut s = format!(
        "regulatory domain: asked {}, obtained {}",
        g.asked, g.alpha2
    );
    if regulatory_mismatch(g) {
        s.push_str(&format!(
            " {MISMATCH} (the kernel kept {}: channels and powers are that domain's)",
            g.alpha2
        ));
    }
    match &g.dfs_region {
        Some(d) => s.push_str(&format!(", DFS region {d}")),
        None => s.push_str(", DFS region unset"),
    }
    s
}

/// The interval length the rows share, as words (`1 s`); `interval` when they differ.
fn interval_words(rows: &[WifiRow<'_>]) -> String {
    let mut lengths: Vec<u64> = rows
        .iter()
        .filter_map(|r| r.spread.map(|s| s.interval_ns))
        .collect();
    lengths.sort_unstable();
    lengths.dedup();
    match lengths.as_slice() {
        [one] => duration_label_ns(*one),
        _ => "interval".into(),
    }
}

/// The header of [`wifi_table`]; `per` is the interval length in words.
fn header(per: &str) -> Vec<String> {
    vec![
        "entry".into(),
        "mode (band, channel, width; MHz)".into(),
        "security".into(),
        "direction".into(),
        format!("MiB/s per {per} min / median / max"),
        format!("Mbit/s per {per} min / median / max"),
        "PHY rate".into(),
        "signal".into(),
        "power save".into(),
        "tx retries / failed".into(),
        "neighbours on the channel".into(),
    ]
}

/// The write-ups' table: one row per entry and direction (an entry without a
/// single-stream TCP run, or skipped, gets one row), MiB/s with two decimals and Mbit/s
/// with one, min / median / max over the intervals.
pub fn wifi_table(n: &NetworkResults) -> Grid {
    let rows = wifi_rows(n);
    let mut g = Grid::new(header(&interval_words(&rows)));
    g.left_columns = 4;
    for r in &rows {
        let e = r.entry;
        let (direction, mib, mbit) = match (&e.skipped, r.direction, r.spread) {
            (Some(_), _, _) => ("SKIPPED".to_owned(), "—".into(), "—".into()),
            (None, None, _) => (
                "—".to_owned(),
                "no single-stream TCP run".into(),
                "—".into(),
            ),
            (None, Some(d), None) => (
                net_direction_label(d).to_owned(),
                "no intervals".into(),
                "—".into(),
            ),
            (None, Some(d), Some(s)) => (
                net_direction_label(d).to_owned(),
                format!("{:.2} / {:.2} / {:.2}", s.mib.min, s.mib.median, s.mib.max),
                format!(
                    "{:.1} / {:.1} / {:.1}",
                    s.mbit.min, s.mbit.median, s.mbit.max
                ),
            ),
        };
        let ran = e.skipped.is_none();
        let or_dash = |s: String| if ran { s } else { "—".into() };
        g.push(vec![
            e.link.clone(),
            mode_cell(e),
            security_cell(e),
            direction,
            mib,
            mbit,
            or_dash(phy_cell(e, r.direction)),
            or_dash(signal_cell(e)),
            or_dash(power_save_cell(e)),
            or_dash(retries_cell(e)),
            or_dash(neighbours_cell(e)),
        ]);
    }
    g
}

/// How the table's figures were obtained, in words.
fn how(n: &NetworkResults) -> String {
    let rows = wifi_rows(n);
    let omit = rows
        .iter()
        .filter_map(|r| r.spread.map(|s| s.omit_ns))
        .max();
    let warm = omit.map_or(String::new(), |o| {
        format!(" after a {} warm-up", duration_label_ns(o))
    });
    format!(
        "One row per entry and direction. MiB/s (2^20 B/s) and Mbit/s (10^6 bit/s): min / \
         median / max over {} of the entry's single-stream TCP run, counted \
         at the receiver{warm}. PHY rate: the board's transmit (board → host) or receive \
         (host → board) rate with the peer station, read after the tests. Signal: the peer \
         station as the board heard it. Retries: the board's transmit retries and failures \
         from before to after the tests. Neighbours: other BSSs whose primary 20 MHz \
         channel overlaps the entry's channel, from a scan before the tests.",
        match interval_words(&rows).as_str() {
            "interval" => "the report intervals".to_owned(),
            per => format!("the {per} intervals"),
        }
    )
}

/// The WiFi section as blocks; empty when the run has nothing WiFi.
pub fn wifi_blocks(n: &NetworkResults, emulated: bool) -> Vec<Block> {
    let w = &n.wifi;
    if !has_wifi(w) {
        return Vec::new();
    }
    let mut out = vec![Block::Heading(format!(
        "WiFi{}",
        if emulated {
            " (EMULATED: QEMU's hwsim radios, not hardware)"
        } else {
            ""
        }
    ))];
    if emulated {
        out.push(Block::Alert(EMULATED_WIFI.into()));
    }
    let mut facts = w.radio.as_ref().map(radio_lines).unwrap_or_default();
    if let Some(g) = &w.regulatory {
        facts.push(regulatory_line(g));
    }
    if !facts.is_empty() {
        out.push(Block::Text(facts.join("\n")));
    }
    if let Some(g) = w.regulatory.as_ref().filter(|g| !g.rules.is_empty()) {
        out.push(Block::Text(format!("the {} domain's rules:", g.alpha2)));
        out.push(Block::List(g.rules.clone()));
    }
    if !w.entries.is_empty() {
        out.push(Block::Text(how(n)));
        out.push(Block::Grid(wifi_table(n)));
        let skipped: Vec<String> = w
            .entries
            .iter()
            .filter_map(|e| {
                e.skipped
                    .as_ref()
                    .map(|why| format!("{} skipped: {why}", e.link))
            })
            .collect();
        if !skipped.is_empty() {
            out.push(Block::List(skipped));
        }
        if w.entries.iter().any(channel_mismatch) {
            out.push(Block::Text(format!(
                "{MISMATCH}: the radio obtained another channel or width than the plan asked \
                 (the driver or the regulatory domain narrowed it); the figures are the \
                 obtained channel's"
            )));
        }
        if w.entries.iter().any(|e| e.power_save == Some(true)) {
            out.push(Block::Text(
                "power save ON: the radio sleeps between beacons, so throughput and round \
                 trips over that entry are lower than the link allows"
                    .into(),
            ));
        }
    }
    if !w.checks.is_empty() {
        out.push(Block::Text(
            "QEMU's checks of what hwsim can only partly model:".into(),
        ));
        out.push(Block::List(
            w.checks
                .iter()
                .map(|c| {
                    format!(
                        "{}: {}{}",
                        c.name,
                        if c.passed { "PASS" } else { "FAIL" },
                        if c.detail.is_empty() {
                            String::new()
                        } else {
                            format!(" ({})", c.detail)
                        }
                    )
                })
                .collect(),
        ));
    }
    out
}
