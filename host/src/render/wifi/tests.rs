//! The WiFi section on a hand-made run ([`wifi_run`], shared with the CSV/JSON, compare
//! and plot tests): the table's exact cells, the flags (mismatch, power save), the
//! driver's missing counters, the skipped entry, the radio and regulatory lines, the
//! emulated alert and QEMU's checks.

use super::blocks::{radio_lines, regulatory_line, wifi_blocks, wifi_table, EMULATED_WIFI};
use super::*;
use crate::doc::{Block, Doc, Grid};
use benchboot_plan::Plan;
use benchboot_results::network::{CpuTimes, HttpRun, NetInterval};
use benchboot_results::wifi::{
    BandName, Bitrate, Neighbour, RadioFacts, Regulatory, StationInfo, WifiCheck,
};
use benchboot_results::{RunResults, SystemInfo};

const MIB: u64 = 1 << 20;

fn chan(band: BandName, channel: u8, freq: u32, width: u32, centre: u32) -> WifiChannel {
    WifiChannel {
        band,
        channel,
        freq_mhz: freq,
        width_mhz: width,
        center1_mhz: centre,
        no_ht: false,
    }
}

/// One 1 s interval per element, `MiB` MiB each (fractions allowed).
fn tcp(link: &str, direction: NetDirection, streams: u32, mib_per_s: &[f64]) -> ThroughputRun {
    let intervals: Vec<NetInterval> = mib_per_s
        .iter()
        .enumerate()
        .map(|(i, &m)| NetInterval {
            start_ns: i as u64 * 1_000_000_000,
            end_ns: (i as u64 + 1) * 1_000_000_000,
            bytes: (m * MIB as f64) as u64,
            board_cpu: CpuTimes::default(),
            host_cpu: CpuTimes::default(),
            board_tcp: None,
            host_tcp: None,
        })
        .collect();
    ThroughputRun {
        link: link.into(),
        direction,
        streams,
        omit_ns: 5_000_000_000,
        bytes: intervals.iter().map(|i| i.bytes).sum(),
        nanos: intervals.len() as u64 * 1_000_000_000,
        intervals,
        board_cpu: CpuTimes::default(),
        host_cpu: CpuTimes::default(),
        board_tcp: None,
        host_tcp: None,
    }
}

fn http_in(link: &str, mib: u64) -> HttpRun {
    HttpRun {
        link: link.into(),
        direction: NetDirection::HostToBoard,
        bytes: mib * MIB,
        nanos: 5_000_000_000,
        board_cpu: CpuTimes::default(),
        host_cpu: CpuTimes::default(),
    }
}

fn neighbour(freq: u32, signal: i32, ours: bool) -> Neighbour {
    Neighbour {
        freq_mhz: freq,
        signal_dbm: Some(signal),
        width_mhz: 20,
        ssid_hash: format!("{freq:016x}"),
        ours,
    }
}

/// A hardware run on a Raspberry Pi 4 B (CYW43455 on brcmfmac), the board as AP,
/// country DE, three entries:
/// - `wifi-ch1-20`: 2.4 GHz ch 1 20 MHz as asked, WPA2; single-stream TCP board → host
///   at 2, 3 and 4 MiB/s per 1 s interval and host → board at 1.5 and 2.5 (a 4-stream
///   run at 10 MiB/s does not count); HTTP 20 MiB into the board in 5 s (4 MiB/s);
///   tx 72.2 Mbit/s HT MCS 7 short GI, rx 65.0 HT MCS 7; signal -41 (avg -42); 37
///   retries and 0 failed of 41,230 frames during the tests; neighbours: one on ch 1
///   (-61), one on ch 3 (-70, overlapping), one on ch 6 (-50, clear).
/// - `wifi-ch36-80`: asked 5 GHz ch 36 80 MHz, got 40 MHz (centre 5190): MISMATCH;
///   power save ON; legacy 54 Mbit/s only, no retry counters (`absent`); TCP board → host
///   at 1 MiB/s twice; HTTP 30 MiB into the board in 5 s (6 MiB/s).
/// - `wifi-ch52-20`: skipped (DFS).
pub(crate) fn wifi_run() -> RunResults {
    let mut r = RunResults::new("run-wifi".into(), Plan::example(), SystemInfo::default());
    r.board = "rpi-4b".into();
    r.emulated = false;
    let n = &mut r.network;
    n.throughput = vec![
        tcp(
            "wifi-ch1-20",
            NetDirection::BoardToHost,
            1,
            &[3.0, 2.0, 4.0],
        ),
        tcp("wifi-ch1-20", NetDirection::BoardToHost, 4, &[10.0, 10.0]),
        tcp("wifi-ch1-20", NetDirection::HostToBoard, 1, &[1.5, 2.5]),
        tcp("wifi-ch36-80", NetDirection::BoardToHost, 1, &[1.0, 1.0]),
    ];
    n.http = vec![http_in("wifi-ch1-20", 20), http_in("wifi-ch36-80", 30)];
    let ch1 = chan(BandName::Ghz2, 1, 2412, 20, 2412);
    let station = |retries: u32, packets: u32| StationInfo {
        signal_dbm: Some(-41),
        signal_avg_dbm: Some(-42),
        chain_signal_dbm: vec![],
        tx_bitrate: Some(Bitrate {
            bitrate_100kbps: Some(722),
            mcs: Some(7),
            kind: "ht".into(),
            nss: None,
            width_mhz: Some(20),
            short_gi: true,
        }),
        rx_bitrate: Some(Bitrate {
            bitrate_100kbps: Some(650),
            mcs: Some(7),
            kind: "ht".into(),
            nss: None,
            width_mhz: None,
            short_gi: false,
        }),
        tx_retries: Some(retries),
        tx_failed: Some(2),
        tx_packets: Some(packets),
        ..StationInfo::default()
    };
    let first = WifiEntryResult {
        link: "wifi-ch1-20".into(),
        role: "ap".into(),
        security: "wpa2-psk".into(),
        security_note: Some("handshake in the radio's firmware".into()),
        ssid: Some("bb-rpi-4b-ch1-20".into()),
        ssid_hash: "0123456789abcdef".into(),
        asked: Some(ch1),
        obtained: Some(ch1),
        bssid: Some("dc:a6:32:00:00:01".into()),
        power_save: Some(false),
        txpower_mbm: Some(2000),
        station_before: Some(station(10, 100)),
        station_after: Some(station(47, 41_330)),
        neighbours: vec![
            neighbour(2412, -30, true),
            neighbour(2412, -61, false),
            neighbour(2422, -70, false),
            neighbour(2437, -50, false),
        ],
        connect_ns: Some(1_200_000_000),
        lease_ns: Some(300_000_000),
        board_address: Some([10, 58, 0, 1]),
        peer_address: Some([10, 58, 0, 2]),
        peer_found_by: Some("lease".into()),
        ..WifiEntryResult::default()
    };
    let legacy = StationInfo {
        signal_dbm: Some(-67),
        tx_bitrate: Some(Bitrate {
            bitrate_100kbps: Some(540),
            kind: "legacy".into(),
            ..Bitrate::default()
        }),
        rx_bitrate: None,
        ..StationInfo::default()
    };
    let second = WifiEntryResult {
        link: "wifi-ch36-80".into(),
        role: "ap".into(),
        security: "wpa2-psk".into(),
        ssid: Some("bb-rpi-4b-ch36-80".into()),
        ssid_hash: "fedcba9876543210".into(),
        asked: Some(chan(BandName::Ghz5, 36, 5180, 80, 5210)),
        obtained: Some(chan(BandName::Ghz5, 36, 5180, 40, 5190)),
        power_save: Some(true),
        station_after: Some(legacy),
        absent: vec!["tx_retries".into(), "tx_failed".into()],
        neighbours: vec![neighbour(5200, -80, false)],
        ..WifiEntryResult::default()
    };
    let third = WifiEntryResult {
        link: "wifi-ch52-20".into(),
        role: "ap".into(),
        security: "wpa2-psk".into(),
        ssid_hash: "00".into(),
        asked: Some(chan(BandName::Ghz5, 52, 5260, 20, 5260)),
        skipped: Some("channel 52 needs radar detection (DFS) in DE".into()),
        ..WifiEntryResult::default()
    };
    n.wifi.entries = vec![first, second, third];
    n.wifi.radio = Some(RadioFacts {
        chip: Some("CYW43455".into()),
        driver: Some("brcmfmac".into()),
        firmware_version: Some("7.45.234".into()),
        chip_revision: Some("BCM4345/6".into()),
        files: vec![
            "brcm/brcmfmac43455-sdio.bin".into(),
            "brcm/brcmfmac43455-sdio.clm_blob".into(),
        ],
        phy: "phy0".into(),
        interface: "wlan0".into(),
        mac: "dc:a6:32:00:00:01".into(),
        bands: vec!["2.4".into(), "5".into()],
        ext_features: vec!["4way-handshake-ap-psk".into()],
        iftypes: vec!["station".into(), "ap".into()],
    });
    n.wifi.regulatory = Some(Regulatory {
        asked: "DE".into(),
        alpha2: "DE".into(),
        dfs_region: Some("ETSI".into()),
        rules: vec!["2400-2483 MHz @ 40 MHz, 20.00 dBm".into()],
    });
    r
}

/// The cells of one rendered row (outer `│`, inner `┆` borders).
fn cells(row: &str) -> Vec<String> {
    row.split(['│', '┆'])
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(String::from)
        .collect()
}

/// The rendered rows of `grid` whose first cells are `link` and `direction`.
fn row_of(grid: &Grid, link: &str, direction: &str) -> Vec<String> {
    let text = grid.to_string();
    text.lines()
        .map(cells)
        .find(|c| c.len() > 3 && c[0] == link && c[3] == direction)
        .unwrap_or_else(|| panic!("no row {link} / {direction} in\n{text}"))
}

#[test]
fn one_row_per_entry_and_direction_with_interval_spread() {
    let r = wifi_run();
    let rows = wifi_rows(&r.network);
    let keys: Vec<(&str, Option<NetDirection>)> = rows
        .iter()
        .map(|w| (w.entry.link.as_str(), w.direction))
        .collect();
    assert_eq!(
        keys,
        [
            ("wifi-ch1-20", Some(NetDirection::BoardToHost)),
            ("wifi-ch1-20", Some(NetDirection::HostToBoard)),
            ("wifi-ch36-80", Some(NetDirection::BoardToHost)),
            ("wifi-ch52-20", None),
        ]
    );
    // The single-stream intervals only: 2, 3, 4 MiB/s (the 4-stream run's 10s left out).
    let s = rows[0].spread.unwrap();
    assert_eq!((s.mib.min, s.mib.median, s.mib.max), (2.0, 3.0, 4.0));
    assert_eq!(s.mib.count, 3);
    assert!((s.mbit.median - 3.0 * 8.388_608).abs() < 1e-9);
    assert_eq!((s.interval_ns, s.omit_ns), (1_000_000_000, 5_000_000_000));
    assert_eq!(rows[1].spread.unwrap().mib.median, 2.0);
}

#[test]
fn table_cells_say_mode_security_rates_and_flags() {
    let r = wifi_run();
    let g = wifi_table(&r.network);
    assert_eq!(g.header[4], "MiB/s per 1 s min / median / max");
    assert_eq!(g.header[5], "Mbit/s per 1 s min / median / max");
    assert_eq!(
        row_of(&g, "wifi-ch1-20", "board → host"),
        [
            "wifi-ch1-20",
            "2.4 GHz ch 1 20 MHz, centre 2412 MHz",
            "wpa2-psk (handshake in the radio's firmware)",
            "board → host",
            "2.00 / 3.00 / 4.00",
            "16.8 / 25.2 / 33.6",
            "tx 72.2 Mbit/s HT MCS 7, short GI, 20 MHz",
            "-41 dBm (avg -42)",
            "off",
            "37 retries, 0 failed of 41,230 frames",
            "2 (strongest -61 dBm), 3 on the band",
        ]
    );
    let back = row_of(&g, "wifi-ch1-20", "host → board");
    assert_eq!(back[4], "1.50 / 2.00 / 2.50");
    assert_eq!(back[6], "rx 65.0 Mbit/s HT MCS 7, long GI");
    assert_eq!(
        row_of(&g, "wifi-ch36-80", "board → host"),
        [
            "wifi-ch36-80",
            "asked 5 GHz ch 36 80 MHz → got 5 GHz ch 36 40 MHz, centre 5190 MHz (primary 5180) MISMATCH",
            "wpa2-psk",
            "board → host",
            "1.00 / 1.00 / 1.00",
            "8.4 / 8.4 / 8.4",
            "tx 54.0 Mbit/s legacy",
            "-67 dBm",
            "ON (figures suffer)",
            "not given by the driver",
            // 5200 MHz is inside ch 36-40 (5170-5210).
            "1 (strongest -80 dBm), 1 on the band",
        ]
    );
    let skipped = row_of(&g, "wifi-ch52-20", "SKIPPED");
    assert_eq!(skipped[1], "asked 5 GHz ch 52 20 MHz, centre 5260 MHz");
    assert!(skipped[4..].iter().all(|c| c == "—"), "{skipped:?}");
}

#[test]
fn section_has_radio_regulatory_reasons_and_legends() {
    let r = wifi_run();
    let text = Doc {
        blocks: wifi_blocks(&r.network, false),
    }
    .text();
    assert!(text.starts_with("\nWiFi\n"), "{text}");
    assert!(
        text.contains(
            "radio: CYW43455 (BCM4345/6), driver brcmfmac, firmware 7.45.234\n\
             wlan0 (dc:a6:32:00:00:01), phy0; bands 2.4 GHz, 5 GHz; modes station, ap; \
             features 4way-handshake-ap-psk\n\
             files: brcm/brcmfmac43455-sdio.bin, brcm/brcmfmac43455-sdio.clm_blob\n\
             regulatory domain: asked DE, obtained DE, DFS region ETSI\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("- 2400-2483 MHz @ 40 MHz, 20.00 dBm\n"),
        "{text}"
    );
    assert!(
        text.contains("- wifi-ch52-20 skipped: channel 52 needs radar detection (DFS) in DE\n"),
        "{text}"
    );
    assert!(text.contains("over the 1 s intervals of the entry's single-stream TCP run"));
    assert!(text.contains("after a 5 s warm-up"), "{text}");
    assert!(text.contains("MISMATCH: the radio obtained another channel"));
    assert!(text.contains("power save ON: the radio sleeps"));
    assert!(!text.contains("EMULATED"));
    assert!(!text.contains("QEMU's checks"));
}

#[test]
fn emulated_run_says_so_and_lists_its_checks() {
    let mut r = wifi_run();
    r.emulated = true;
    r.network.wifi.checks = vec![
        WifiCheck {
            name: "ap-beacons".into(),
            passed: true,
            detail: "12 beacons seen on 2412 MHz".into(),
        },
        WifiCheck {
            name: "ibss".into(),
            passed: false,
            detail: String::new(),
        },
    ];
    let blocks = wifi_blocks(&r.network, true);
    assert_eq!(
        blocks[0],
        Block::Heading("WiFi (EMULATED: QEMU's hwsim radios, not hardware)".into())
    );
    assert_eq!(blocks[1], Block::Alert(EMULATED_WIFI.into()));
    assert_eq!(
        blocks.last(),
        Some(&Block::List(vec![
            "ap-beacons: PASS (12 beacons seen on 2412 MHz)".into(),
            "ibss: FAIL".into()
        ]))
    );
    // And in the whole report.
    let text = crate::render::report(&r);
    assert!(text.contains(EMULATED_WIFI), "{text}");
}

#[test]
fn regulatory_and_radio_facts_flag_what_is_missing() {
    let g = Regulatory {
        asked: "DE".into(),
        alpha2: "00".into(),
        dfs_region: None,
        rules: vec![],
    };
    assert_eq!(
        regulatory_line(&g),
        "regulatory domain: asked DE, obtained 00 MISMATCH (the kernel kept 00: channels \
         and powers are that domain's), DFS region unset"
    );
    let r = RadioFacts {
        phy: "phy1".into(),
        interface: "wlan1".into(),
        mac: "02:00:00:00:01:00".into(),
        driver: Some("mac80211_hwsim".into()),
        ..RadioFacts::default()
    };
    assert_eq!(
        radio_lines(&r),
        [
            "radio: chip unknown, driver mac80211_hwsim, firmware version not reported",
            "wlan1 (02:00:00:00:01:00), phy1"
        ]
    );
}

#[test]
fn retries_without_a_before_reading_count_since_association() {
    let mut r = wifi_run();
    let e = &mut r.network.wifi.entries[0];
    e.station_before = None;
    assert_eq!(
        retries_cell(e),
        "47 retries, 2 failed of 41,330 frames (since association)"
    );
    e.absent = vec!["tx_failed".into()];
    assert_eq!(
        retries_cell(e),
        "47 retries, failed not given by the driver of 41,330 frames (since association)"
    );
}

#[test]
fn wifi_links_are_described_and_carry_their_facts() {
    let r = wifi_run();
    let n = &r.network;
    assert_eq!(
        crate::render::network_links(n),
        ["wifi-ch1-20", "wifi-ch36-80", "wifi-ch52-20"]
    );
    assert_eq!(
        crate::render::link_description(n, "wifi-ch36-80"),
        "WiFi 5 GHz ch 36 40 MHz, board as AP"
    );
    assert_eq!(
        entry_facts_line(&n.wifi.entries[0]),
        "SSID bb-rpi-4b-ch1-20; BSSID dc:a6:32:00:00:01; tx power 20.00 dBm; a station \
         joined in 1.2 s; lease in 300 ms; board 10.58.0.1, peer 10.58.0.2 (lease)"
    );
    let text = crate::render::report(&r);
    // The per-link table of a WiFi entry, then the WiFi section after the links.
    let link = text
        .find("Link wifi-ch1-20 (WiFi 2.4 GHz ch 1 20 MHz, board as AP)")
        .expect(&text);
    let section = text.find("\nWiFi\n").expect(&text);
    assert!(link < section);
    assert!(text.contains("SSID bb-rpi-4b-ch1-20; BSSID"), "{text}");
}

#[test]
fn csv_has_one_wifi_row_per_entry_and_direction() {
    let r = wifi_run();
    let rows = crate::report::tidy::rows(&r);
    let wifi: Vec<&crate::report::tidy::TidyRow> =
        rows.iter().filter(|x| x.section == "wifi").collect();
    let keys: Vec<(&str, &str)> = wifi
        .iter()
        .map(|x| (x.target.as_str(), x.direction.as_str()))
        .collect();
    assert_eq!(
        keys,
        [
            ("wifi-ch1-20", "board-to-host"),
            ("wifi-ch1-20", "host-to-board"),
            ("wifi-ch36-80", "board-to-host"),
            ("wifi-ch52-20", ""),
        ]
    );
    let a = wifi[0];
    assert_eq!(
        (a.min_mib_per_s, a.mib_per_s, a.max_mib_per_s),
        (Some(2.0), Some(3.0), Some(4.0))
    );
    assert!((a.mbit_per_s.unwrap() - 25.165_824).abs() < 1e-9);
    assert_eq!(
        (
            a.wifi_band.as_str(),
            a.wifi_channel,
            a.wifi_width_mhz,
            a.wifi_center_mhz
        ),
        ("2.4", Some(1), Some(20), Some(2412))
    );
    assert_eq!((a.phy_mbit_per_s, a.signal_dbm), (Some(72.2), Some(-41)));
    assert_eq!(
        (a.tx_retries, a.tx_failed, a.power_save),
        (Some(37), Some(0), Some(false))
    );
    assert_eq!(a.neighbours_on_channel, Some(2));
    assert_eq!(a.streams, Some(1));
    let b = wifi[2];
    assert_eq!((b.wifi_mismatch, b.wifi_width_mhz), (Some(true), Some(40)));
    assert_eq!((b.tx_retries, b.power_save), (None, Some(true)));
    assert!(b.wifi_mode.ends_with("MISMATCH"));
    assert_eq!(
        wifi[3].note,
        "skipped: channel 52 needs radar detection (DFS) in DE"
    );
    assert_eq!(wifi[3].mib_per_s, None);
    // The runs themselves are the ordinary rows of their link.
    assert_eq!(
        rows.iter()
            .filter(|x| x.section == "tcp-interval" && x.target == "wifi-ch1-20")
            .count(),
        7
    );
    let csv = crate::report::tidy::to_csv(&rows).unwrap();
    assert!(csv
        .lines()
        .next()
        .unwrap()
        .contains(",wifi_security,phy_mbit_per_s,phy_rate,signal_dbm,power_save,tx_retries,tx_failed,neighbours_on_channel,"));
    assert_eq!(crate::report::tidy::from_csv(&csv).unwrap(), rows);
}

#[test]
fn json_has_the_wifi_section_with_spreads() {
    let r = wifi_run();
    let j = crate::report::summary::summary(&r);
    let w = j.network.wifi.as_ref().unwrap();
    assert_eq!(w.notice, None);
    assert!(!w.regulatory_mismatch);
    assert_eq!(w.radio.as_ref().unwrap().chip.as_deref(), Some("CYW43455"));
    let links: Vec<&str> = w.entries.iter().map(|e| e.link.as_str()).collect();
    assert_eq!(links, ["wifi-ch1-20", "wifi-ch36-80", "wifi-ch52-20"]);
    let e = &w.entries[0];
    assert_eq!(e.directions.len(), 2);
    let d = &e.directions[0];
    assert_eq!(d.direction, NetDirection::BoardToHost);
    let m = d.mib_per_s.unwrap();
    assert_eq!((m.n, m.min, m.median, m.max), (3, 2.0, 3.0, 4.0));
    assert_eq!((d.interval_s, d.omit_s), (Some(1.0), Some(5.0)));
    assert_eq!(d.phy.as_ref().unwrap().mcs, Some(7));
    assert_eq!(
        e.directions[1].phy.as_ref().unwrap().bitrate_100kbps,
        Some(650)
    );
    assert_eq!(
        (e.tx_retries, e.tx_failed, e.retries_during_tests),
        (Some(37), Some(0), true)
    );
    assert_eq!((e.neighbours_on_channel, e.neighbours_on_band), (2, 3));
    assert_eq!(e.signal_dbm, Some(-41));
    assert!(w.entries[1].channel_mismatch);
    assert_eq!(w.entries[1].tx_retries, None);
    assert!(w.entries[2].directions.is_empty());
    assert_eq!(
        w.entries[2].skipped.as_deref(),
        Some("channel 52 needs radar detection (DFS) in DE")
    );
    // Round trip through the JSON text.
    let text = crate::report::render(&r, crate::report::Format::Json).unwrap();
    let back: crate::report::summary::ReportJson = serde_json::from_str(&text).unwrap();
    assert_eq!(back.network.wifi, j.network.wifi);
    // An emulated run's section carries the notice; a run without WiFi has no key.
    let mut emu = r.clone();
    emu.emulated = true;
    let j = crate::report::summary::summary(&emu);
    assert_eq!(
        j.network.wifi.unwrap().notice.as_deref(),
        Some(EMULATED_WIFI)
    );
    let wired = crate::render::network::tests::wired_run();
    let text = crate::report::render(&wired, crate::report::Format::Json).unwrap();
    assert!(!text.contains("\"wifi\""));
}

/// The whole WiFi section of [`wifi_run`] as the terminal prints it, and the section of
/// the same run from QEMU (review with `cargo insta review`).
#[test]
fn wifi_section_snapshot() {
    let r = wifi_run();
    insta::assert_snapshot!(
        "wifi_section_table",
        Doc {
            blocks: wifi_blocks(&r.network, false)
        }
        .text()
    );
    insta::assert_snapshot!(
        "wifi_section_markdown",
        Doc {
            blocks: wifi_blocks(&r.network, true)
        }
        .markdown()
    );
}
