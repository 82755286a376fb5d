//! The fast QEMU tier: the `qemu-virt-arm64` image boots in `virt` and PID 1 brings up its
//! own configfs gadget with NCM, ECM and RNDIS in turn against `dummy_hcd`; the host-side
//! drivers (cdc_ncm, cdc_ether, rndis_host) bind each in their own network namespace of
//! the guest, take a DHCP lease from the board, and the network tests run both ways
//! across the emulated USB. Structure only, never speed (emulated figures).

use std::time::Duration;

use benchboot_results::network::NetDirection;
use benchboot_results::{RunResults, Severity};

#[test]
fn virt_gadget_links_dhcp_and_network_tests() {
    let _slot = benchboot_tests::qemu_slot(module_path!());
    let board = xtask::load_board("qemu-virt-arm64").unwrap();
    let run = xtask::qemu::run(&board, Duration::from_secs(900)).unwrap();
    let r = RunResults::from_json(&std::fs::read_to_string(&run.results).unwrap()).unwrap();
    assert!(r.emulated && r.complete);
    assert_eq!(r.system.machine, "aarch64");
    let errors: Vec<_> = r
        .events
        .iter()
        .filter(|e| e.severity == Severity::Error)
        .collect();
    assert!(errors.is_empty(), "errors: {errors:?}");

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
    // The namespace children were ended and reaped: only PID 1 is left.
    let after = r.census.iter().find(|c| c.at == "after-network").unwrap();
    assert!(after.only_pid1(), "{:?}", after.user_processes);
}
