//! The fast QEMU tier: the `qemu-virt-arm64` image boots in `virt` and PID 1 brings up its
//! own configfs gadget with NCM, ECM and RNDIS in turn against `dummy_hcd`; the host-side
//! drivers (cdc_ncm, cdc_ether, rndis_host) bind each in their own network namespace of
//! the guest, take a DHCP lease from the board, and the network tests run both ways
//! across the emulated USB. Structure only, never speed (emulated figures).

use std::time::Duration;

use benchboot_results::counters::NetDirection;
use benchboot_results::{Direction, RunResults, Severity};
use benchboot_tests::checks;

#[test]
fn virt_gadget_links_dhcp_and_network_tests() {
    let _slot = benchboot_tests::qemu_slot(module_path!());
    let board = xtask::load_board("qemu-virt-arm64").unwrap();
    // With the emulated meter beside QEMU: the energy path end to end (energy.rs).
    let opts = xtask::qemu::Options {
        meter: true,
        ..xtask::qemu::Options::new(Duration::from_secs(900))
    };
    let run = xtask::qemu::run_with(&board, &opts).unwrap();
    let r = RunResults::from_json(&std::fs::read_to_string(&run.results).unwrap()).unwrap();
    assert!(r.emulated && r.complete);
    crate::energy::assert_energy(&run, &r);
    assert_eq!(r.system.machine, "aarch64");
    // The only errors are the QEMU plan's two wired links that cannot run (bad input):
    // one line each, and the rest of the plan ran.
    let errors: Vec<(&str, &str)> = r
        .events
        .iter()
        .filter(|e| e.severity == Severity::Error)
        .map(|e| (e.step.as_str(), e.message.as_str()))
        .collect();
    assert_eq!(errors.len(), 2, "errors: {errors:?}");
    assert_eq!(errors[0].0, "network.wired.absent-usb");
    assert!(
        errors[0].1.contains("qemu-virt-arm64 has no USB host port"),
        "{errors:?}"
    );
    assert_eq!(errors[1].0, "network.wired.absent-nic");
    assert!(
        errors[1]
            .1
            .contains("no interface driven by r8152 appeared within 2000 ms"),
        "{errors:?}"
    );

    // Each function's host-side interface left with its gadget (gone from the host
    // side's namespace, then from PID 1's) before the next function bound the UDC.
    let lingering: Vec<_> = r
        .events
        .iter()
        .filter(|e| e.step.starts_with("gadget.") && e.step.ends_with(".teardown"))
        .collect();
    assert!(lingering.is_empty(), "{lingering:?}");

    // Every function came up, with its own /30 and a lease taken by the host side. A
    // retried function (the carrier race) appears twice; the last record counts.
    let tests = r.plan.network.tests.as_ref().unwrap();
    for (i, f) in ["ncm", "ecm", "rndis"].iter().enumerate() {
        let link = r
            .network
            .links
            .iter()
            .rev()
            .find(|l| l.function == *f)
            .unwrap_or_else(|| panic!("no {f} link: {:?}", r.network.links));
        let base = 4 * i as u8;
        assert_eq!(link.board_address, [10, 55, 0, base + 1], "{link:?}");
        assert_eq!(link.host_address, Some([10, 55, 0, base + 2]), "{link:?}");
        assert_eq!(link.udc, "dummy_udc.0");
        assert!(link.lease_ns.is_some_and(|ns| ns > 0), "{link:?}");
        assert_ne!(link.board_mac, link.host_mac);

        // Both directions at every stream count, with intervals and both CPU sides.
        for &streams in &tests.streams {
            for dir in [NetDirection::BoardToHost, NetDirection::HostToBoard] {
                let t = r
                    .network
                    .throughput
                    .iter()
                    .find(|t| t.link == *f && t.streams == streams && t.direction == dir)
                    .unwrap_or_else(|| panic!("no {f} {dir:?} x{streams} run"));
                assert!(t.bytes > 0 && t.nanos > 0, "{t:?}");
                assert!(!t.intervals.is_empty(), "{t:?}");
                assert_eq!(t.intervals.iter().map(|i| i.bytes).sum::<u64>(), t.bytes);
                assert!(t.board_cpu.total() > 0 && t.host_cpu.total() > 0, "{t:?}");
            }
        }
        let lat = r.network.latency.iter().find(|l| l.link == *f).unwrap();
        assert_eq!(lat.rtt_ns.len(), tests.latency_samples as usize);
        for dir in [NetDirection::BoardToHost, NetDirection::HostToBoard] {
            let h = r
                .network
                .http
                .iter()
                .find(|h| h.link == *f && h.direction == dir)
                .unwrap_or_else(|| panic!("no {f} HTTP {dir:?}"));
            assert_eq!(h.bytes, tests.http_bytes, "{h:?}");
        }
    }
    assert_wired_links(&r);
    assert_wifi(&r);
    // Drivers by modalias: the QEMU plan lists every module the image carries, so the
    // scans load nothing, and every device of virt has its driver; what never binds
    // (the PCIe host bridge 1b36:0008, cfg80211's regulatory, psci-cpuidle, the cpu
    // root) is not reported as a device without one.
    assert!(
        r.modalias.no_driver.is_empty(),
        "{:?}",
        r.modalias.no_driver
    );
    assert!(
        r.modalias.loaded.iter().all(|l| l.error.is_none()),
        "{:?}",
        r.modalias.loaded
    );
    // Cortex-A53 x 2: every AArch64 kernel (AT_HWCAP fp + asimd), libc per core and on
    // both at once; Debian's arm64 kernel has transparent huge pages.
    checks::assert_memory(
        &r,
        &[
            "libc-memcpy",
            "libc-memset",
            "read-u64",
            "a64-ldp-stp",
            "a64-ld1-st1",
            "a64-ldp-stnp",
            "a64-stp-fill",
            "a64-st1-fill",
            "a64-stnp-fill",
        ],
        2,
        &["base", "huge"],
    );
    let cpu = &r.memory.as_ref().unwrap().cpu;
    assert_eq!(
        (cpu.arch.as_str(), cpu.model.as_str()),
        ("aarch64", "Cortex-A53")
    );
    // The whole QEMU plan's sweep (the main job and the raspi0 smoke test boot 5 of its
    // block sizes): every cell of 18 sizes x 5 targets x 2 modes x 2 directions, O_DIRECT
    // below 512 B run as sync, with its latency distribution.
    assert_eq!(r.plan.storage.block_sizes.len(), 18);
    assert_eq!(r.plan.storage.targets.len(), 5);
    checks::assert_storage_complete(&r);
    // The plan's one long cell (ext4, O_DIRECT, 4 KiB, up to 3 s): its write lasts long
    // enough for throughput over time, which the report draws as a timeline figure.
    let long = r.plan.storage.long_cell.as_ref().expect("the long cell");
    let w = r
        .storage
        .iter()
        .find(|m| {
            m.target == long.target
                && m.requested_mode == long.mode
                && m.block_size == long.block_size
                && m.direction == Direction::Write
        })
        .expect("the long cell's write");
    assert!(benchboot::plot::latency::has_timeline(w), "{w:?}");
    let rates = benchboot_results::latency::interval_rates(&w.timeline);
    assert!(rates.len() >= 4, "{rates:?}");
    assert_eq!(
        rates.iter().map(|i| i.bytes).sum::<u64>(),
        w.bytes,
        "{rates:?}"
    );
    let figures = benchboot::plot::report_figures(&r);
    assert!(
        figures.iter().any(|f| f.stem.ends_with("-timeline-ext4")),
        "{:?}",
        figures.iter().map(|f| &f.stem).collect::<Vec<_>>()
    );
    // The virtio disk has no SD registers; the card check ran over its free space.
    for d in &r.devices {
        checks::assert_card_registers(d);
    }
    checks::assert_card_check_genuine(&r, &std::fs::read_to_string(&run.console_log).unwrap());

    // The namespace children were ended and reaped: only PID 1 is left.
    let after = r.census.iter().find(|c| c.at == "after-network").unwrap();
    assert!(after.only_pid1(), "{:?}", after.user_processes);

    // This run's report as an HTML page (network plots per link, WiFi), opened in
    // headless chromium.
    if benchboot_tests::browser::require_chromium("qemu_virt") {
        let pages = tempfile::tempdir().unwrap();
        crate::browser::check_report_page(&r, pages.path());
    }
}

/// The two cables inside QEMU (virtio-pair): direct (the board's DHCP server leased the
/// stand-in host 10.57.0.2) and LAN (the board leased 10.56.0.2 from the stand-in LAN's
/// DHCP server and found the peer by its announcement), each measured both ways over
/// TCP, HTTP and UDP with the interface counters around every test.
fn assert_wired_links(r: &RunResults) {
    let tests = r.plan.network.tests.as_ref().unwrap();
    let names: Vec<&str> = r.network.wired.iter().map(|w| w.name.as_str()).collect();
    // absent-usb never looked for an interface; absent-nic found none: no record.
    assert_eq!(
        names,
        ["virtio-direct", "virtio-lan"],
        "{:?}",
        r.network.wired
    );
    let direct = &r.network.wired[0];
    assert_eq!(direct.topology, "direct");
    assert_eq!(direct.board_address, [10, 57, 0, 1]);
    assert_eq!(direct.prefix_len, 30);
    assert_eq!(direct.peer_address, Some([10, 57, 0, 2]));
    assert_eq!(direct.peer_found_by.as_deref(), Some("lease"));
    assert_eq!(direct.mac, "52:54:00:be:00:01");
    let lan = &r.network.wired[1];
    assert_eq!(lan.topology, "lan");
    assert_eq!(lan.board_address, [10, 56, 0, 2]);
    assert_eq!(lan.prefix_len, 24);
    assert_eq!(lan.dhcp_server, Some([10, 56, 0, 1]));
    assert_eq!(lan.peer_address, Some([10, 56, 0, 1]));
    assert_eq!(lan.peer_found_by.as_deref(), Some("announce"));
    assert_eq!(lan.mac, "52:54:00:be:00:03");
    for w in [direct, lan] {
        assert_eq!(w.kind, "builtin");
        assert_eq!(w.facts.driver.as_deref(), Some("virtio_net"), "{w:?}");
        assert!(w.facts.carrier, "{w:?}");
        assert_eq!(w.facts.mtu, Some(1500), "{w:?}");
        assert!(w.facts.usb.is_none(), "{w:?}");
        assert!(w.lease_ns.is_some_and(|ns| ns > 0), "{w:?}");
        let name = w.name.as_str();
        for &streams in &tests.streams {
            for dir in [NetDirection::BoardToHost, NetDirection::HostToBoard] {
                let t = r
                    .network
                    .throughput
                    .iter()
                    .find(|t| t.link == name && t.streams == streams && t.direction == dir)
                    .unwrap_or_else(|| panic!("no {name} {dir:?} x{streams} run"));
                assert!(t.bytes > 0 && !t.intervals.is_empty(), "{t:?}");
                assert!(t.board_cpu.total() > 0 && t.host_cpu.total() > 0, "{t:?}");
            }
        }
        for dir in [NetDirection::BoardToHost, NetDirection::HostToBoard] {
            let h = r
                .network
                .http
                .iter()
                .find(|h| h.link == name && h.direction == dir)
                .unwrap_or_else(|| panic!("no {name} HTTP {dir:?}"));
            assert_eq!(h.bytes, tests.http_bytes, "{h:?}");
            let u = r
                .network
                .udp
                .iter()
                .find(|u| u.link == name && u.direction == dir)
                .unwrap_or_else(|| panic!("no {name} UDP {dir:?}"));
            assert_eq!(u.target_bitrate, tests.udp_bitrate, "{u:?}");
            assert!(
                u.sent > 0 && u.received > 0 && u.received <= u.sent,
                "{u:?}"
            );
            assert_eq!(u.bytes, u.received * u64::from(u.datagram_bytes), "{u:?}");
            assert!(u.board_cpu.total() > 0 && u.host_cpu.total() > 0, "{u:?}");
        }
        // Counters around every test that ran, and they moved: bytes crossed this NIC.
        let ran = tests.streams.len() * 2 + 1 + 2 + 2;
        assert_eq!(w.counters.len(), ran, "{name}: {:?}", w.counters);
        for c in &w.counters {
            assert!(c.after.rx_bytes > c.before.rx_bytes, "{name}: {c:?}");
            assert!(c.after.tx_bytes > c.before.tx_bytes, "{name}: {c:?}");
        }
    }
}

/// WiFi over mac80211_hwsim: the board as client of a stand-in AP (hostapd on the other
/// radio, in a namespace) per entry, each at the asked frequency, width and centre; the
/// two entries regulatory domain DE refuses skipped with the reason; the board's own
/// AP seen by the other radio's scan; an IBSS with TCP round trips across.
fn assert_wifi(r: &RunResults) {
    let w = &r.network.wifi;
    let radio = w.radio.as_ref().expect("radio facts");
    assert_eq!(radio.chip.as_deref(), Some("mac80211_hwsim"), "{radio:?}");
    assert_eq!(radio.bands, ["2.4", "5"], "{radio:?}");
    assert!(radio.iftypes.iter().any(|t| t == "ap"), "{radio:?}");
    assert!(
        radio
            .files
            .iter()
            .any(|f| f == "/lib/firmware/regulatory.db"),
        "{radio:?}"
    );
    let reg = w.regulatory.as_ref().expect("regulatory domain");
    assert_eq!(
        (reg.asked.as_str(), reg.alpha2.as_str()),
        ("DE", "DE"),
        "{reg:?}"
    );
    assert_eq!(reg.dfs_region.as_deref(), Some("ETSI"), "{reg:?}");
    let names: Vec<&str> = w.entries.iter().map(|e| e.link.as_str()).collect();
    assert_eq!(
        names,
        [
            "wifi-ch1-20",
            "wifi-ch36-40",
            "wifi-ch36-80",
            "wifi-ch52-20",
            "wifi-ch14-20"
        ]
    );
    let wifi_tests = r
        .plan
        .network
        .wifi
        .as_ref()
        .unwrap()
        .tests
        .as_ref()
        .unwrap();
    for (e, (freq, width, centre)) in
        w.entries
            .iter()
            .zip([(2412, 20, 2412), (5180, 40, 5190), (5180, 80, 5210)])
    {
        assert_eq!(e.skipped, None, "{e:?}");
        let got = e
            .obtained
            .unwrap_or_else(|| panic!("{}: nothing obtained", e.link));
        assert_eq!(
            (got.freq_mhz, got.width_mhz, got.center1_mhz),
            (freq, width, centre),
            "{e:?}"
        );
        assert_eq!(e.asked, Some(got), "asked and obtained differ: {e:?}");
        assert_eq!(e.role, "client");
        assert_eq!(e.power_save, Some(false), "{e:?}");
        assert_eq!(e.board_address, Some([10, 60, 0, 2]), "{e:?}");
        assert_eq!(e.peer_found_by.as_deref(), Some("announce"), "{e:?}");
        assert!(e.connect_ns.is_some_and(|ns| ns > 0), "{e:?}");
        assert!(
            e.neighbours.iter().any(|n| n.ours && n.freq_mhz == freq),
            "{e:?}"
        );
        let st = e.station_before.as_ref().expect("the AP as a station");
        assert!(st.signal_dbm.is_some() && st.tx_bitrate.is_some(), "{st:?}");
        for dir in [NetDirection::BoardToHost, NetDirection::HostToBoard] {
            let t = r
                .network
                .throughput
                .iter()
                .find(|t| t.link == e.link && t.direction == dir)
                .unwrap_or_else(|| panic!("no {} {dir:?} run", e.link));
            assert!(t.bytes > 0 && !t.intervals.is_empty(), "{t:?}");
        }
        let lat = r.network.latency.iter().find(|l| l.link == e.link).unwrap();
        assert_eq!(lat.rtt_ns.len(), wifi_tests.latency_samples as usize);
        assert!(!e.counters.is_empty(), "{e:?}");
    }
    let dfs = w.entries[3].skipped.as_deref().unwrap_or_default();
    assert!(dfs.contains("DFS channel in DE"), "{dfs}");
    let ch14 = w.entries[4].skipped.as_deref().unwrap_or_default();
    assert!(
        ch14.contains("not allowed in regulatory domain DE"),
        "{ch14}"
    );
    let checks: Vec<(&str, bool)> = w
        .checks
        .iter()
        .map(|c| (c.name.as_str(), c.passed))
        .collect();
    assert_eq!(
        checks,
        [("ap-beacons", true), ("ibss", true)],
        "{:?}",
        w.checks
    );
    let ibss = r
        .network
        .latency
        .iter()
        .find(|l| l.link == "wifi-ibss")
        .unwrap();
    assert_eq!(ibss.rtt_ns.len(), 20);
}
