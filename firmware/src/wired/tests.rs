//! Tests of the wired step over a temp sysfs tree and a recording [`LinkOps`]: which
//! interface a link takes, the facts recorded from sysfs, carrier down, the direct
//! cable's address, the failures as events.
use super::*;
use crate::netkit::fake::{events, results, LinkCall, Recorder};
use benchboot_plan::WiredKind;
use benchboot_results::Severity;
use std::os::unix::fs::symlink;

/// A temp `/sys/class/net` with interfaces whose `device/driver` links to a driver.
struct Net {
    dir: tempfile::TempDir,
    roots: Roots,
}

impl Net {
    fn new() -> Net {
        let dir = tempfile::tempdir().unwrap();
        let roots = Roots {
            net: dir.path().join("class/net"),
            udc: dir.path().join("class/udc"),
            gadget: dir.path().join("gadget"),
        };
        std::fs::create_dir_all(&roots.net).unwrap();
        Net { dir, roots }
    }
    /// Interface `name` with `mac`, `driver` (none: a virtual interface) and its
    /// attribute files.
    fn iface(&self, name: &str, mac: &str, driver: Option<&str>, attrs: &[(&str, &str)]) {
        let d = self.roots.net.join(name);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("address"), format!("{mac}\n")).unwrap();
        for (k, v) in attrs {
            std::fs::write(d.join(k), format!("{v}\n")).unwrap();
        }
        if let Some(drv) = driver {
            let dev = self.dir.path().join(format!("devices/{name}"));
            let drv_dir = self.dir.path().join(format!("bus/drivers/{drv}"));
            std::fs::create_dir_all(&dev).unwrap();
            std::fs::create_dir_all(&drv_dir).unwrap();
            symlink(&drv_dir, dev.join("driver")).unwrap();
            symlink(&dev, d.join("device")).unwrap();
        }
    }
}

const UP_1000: &[(&str, &str)] = &[
    ("carrier", "1"),
    ("speed", "1000"),
    ("duplex", "full"),
    ("mtu", "1500"),
];

fn wired(topology: Topology) -> WiredPlan {
    WiredPlan {
        name: "eth".into(),
        kind: WiredKind::Builtin,
        drivers: vec!["bcmgenet".into()],
        mac: None,
        topology,
        link_wait_ms: 0,
        rated_mbit: Some(1000),
        host_in_namespace: None,
        unavailable: None,
    }
}

fn direct_plan() -> WiredPlan {
    wired(Topology::Direct {
        subnet: [10, 57, 0, 0],
        lease_secs: 3600,
    })
}

fn plan() -> Plan {
    let mut p = Plan::example();
    p.network.tests = None;
    p
}

#[test]
fn the_link_is_found_by_driver_skipping_those_in_use_and_the_stand_ins_end() {
    let net = Net::new();
    net.iface("bbt0", "02:00:00:00:00:01", Some("bcmgenet"), UP_1000);
    net.iface("bbt1", "02:00:00:00:00:02", Some("bcmgenet"), UP_1000);
    net.iface("bbt2", "02:00:00:00:00:03", Some("bcmgenet"), UP_1000);
    net.iface("bbtv", "02:00:00:00:00:04", None, UP_1000);
    let mut w = direct_plan();
    assert_eq!(find_link(&w, &[], &net.roots.net).unwrap(), "bbt0");
    assert_eq!(
        find_link(&w, &["bbt0".into()], &net.roots.net).unwrap(),
        "bbt1"
    );
    w.host_in_namespace = Some("02:00:00:00:00:02".into());
    assert_eq!(
        find_link(&w, &["bbt0".into()], &net.roots.net).unwrap(),
        "bbt2"
    );
    // A MAC wins over the drivers.
    w.mac = Some("02:00:00:00:00:04".into());
    assert_eq!(find_link(&w, &[], &net.roots.net).unwrap(), "bbtv");
    w.mac = None;
    w.drivers = vec!["r8152".into()];
    let err = find_link(&w, &[], &net.roots.net).unwrap_err();
    assert!(err.contains("driven by r8152"), "{err}");
}

#[test]
fn an_unavailable_link_is_an_error_and_nothing_is_touched() {
    let net = Net::new();
    net.iface("bbt0", "02:00:00:00:00:01", Some("bcmgenet"), UP_1000);
    let w = WiredPlan {
        unavailable: Some("this board has no Ethernet".into()),
        ..direct_plan()
    };
    let (plan, ops) = (plan(), Recorder::new());
    let mut r = results(&plan);
    let edge = Edge {
        ops: &ops,
        roots: &net.roots,
    };
    assert_eq!(one_link(&plan, &w, &[], &edge, &mut r), None);
    assert_eq!(
        events(&r),
        [(
            "network.wired.eth".to_owned(),
            Severity::Error,
            "this board has no Ethernet".to_owned()
        )]
    );
    assert!(ops.calls().is_empty());
    assert!(r.network.wired.is_empty());
}

#[test]
fn no_interface_is_an_error_naming_the_link() {
    let net = Net::new();
    let (plan, ops) = (plan(), Recorder::new());
    let mut r = results(&plan);
    let edge = Edge {
        ops: &ops,
        roots: &net.roots,
    };
    assert_eq!(one_link(&plan, &direct_plan(), &[], &edge, &mut r), None);
    let ev = events(&r);
    assert_eq!(
        (ev[0].0.as_str(), ev[0].1),
        ("network.wired.eth", Severity::Error)
    );
    assert!(ev[0].2.contains("driven by bcmgenet"), "{ev:?}");
    assert!(ops.calls().is_empty());
}

#[test]
fn carrier_down_is_recorded_with_its_facts_and_not_addressed() {
    let net = Net::new();
    net.iface(
        "bbt0",
        "02:00:00:00:00:01",
        Some("bcmgenet"),
        &[("carrier", "0"), ("speed", "100"), ("duplex", "half")],
    );
    let (plan, ops) = (plan(), Recorder::new());
    let mut r = results(&plan);
    let edge = Edge {
        ops: &ops,
        roots: &net.roots,
    };
    assert_eq!(
        one_link(&plan, &direct_plan(), &[], &edge, &mut r).as_deref(),
        Some("bbt0")
    );
    assert_eq!(ops.calls(), [LinkCall::Up("bbt0".into())]);
    let ev = events(&r);
    assert_eq!(ev.len(), 1, "{ev:?}");
    assert!(ev[0].2.contains("bbt0: no carrier"), "{ev:?}");
    let rec = &r.network.wired[0];
    assert_eq!(rec.interface, "bbt0");
    assert_eq!(rec.mac, "02:00:00:00:00:01");
    assert_eq!(rec.facts.speed_mbit, Some(100));
    assert_eq!(rec.facts.duplex.as_deref(), Some("half"));
    assert_eq!(rec.facts.driver.as_deref(), Some("bcmgenet"));
    assert!(!rec.facts.carrier);
    assert_eq!(rec.board_address, [0; 4]);
}

#[test]
fn a_link_the_kernel_will_not_bring_up_is_an_error_without_a_record() {
    let net = Net::new();
    net.iface("bbt0", "02:00:00:00:00:01", Some("bcmgenet"), UP_1000);
    let plan = plan();
    let ops = Recorder::refusing(|c| matches!(c, LinkCall::Up(_)));
    let mut r = results(&plan);
    let edge = Edge {
        ops: &ops,
        roots: &net.roots,
    };
    assert_eq!(
        one_link(&plan, &direct_plan(), &[], &edge, &mut r).as_deref(),
        Some("bbt0")
    );
    let ev = events(&r);
    assert!(ev[0].2.contains("bbt0: cannot bring it up"), "{ev:?}");
    assert!(r.network.wired.is_empty());
}

#[test]
fn direct_takes_dot_1_of_its_slash_30_and_a_slow_link_is_a_warning() {
    let net = Net::new();
    net.iface(
        "bbt0",
        "02:00:00:00:00:01",
        Some("bcmgenet"),
        &[("carrier", "1"), ("speed", "100"), ("duplex", "full")],
    );
    let plan = plan();
    // Refused: the step stops before its DHCP server and records why.
    let ops = Recorder::refusing(|c| matches!(c, LinkCall::Ipv4(..)));
    let mut r = results(&plan);
    let edge = Edge {
        ops: &ops,
        roots: &net.roots,
    };
    one_link(&plan, &direct_plan(), &[], &edge, &mut r);
    assert_eq!(
        ops.calls(),
        [
            LinkCall::Up("bbt0".into()),
            LinkCall::Ipv4("bbt0".into(), [10, 57, 0, 1], 30)
        ]
    );
    let ev = events(&r);
    assert_eq!(ev.len(), 2, "{ev:?}");
    assert_eq!(ev[0].1, Severity::Warning);
    assert!(
        ev[0].2.contains("negotiated 100 Mb/s on a port rated 1000"),
        "{ev:?}"
    );
    assert_eq!(ev[1].1, Severity::Error);
    assert!(ev[1].2.contains("cannot set 10.57.0.1"), "{ev:?}");
    let rec = &r.network.wired[0];
    assert_eq!(
        (rec.facts.speed_mbit, rec.facts.rated_mbit),
        (Some(100), Some(1000))
    );
    assert_eq!(rec.peer_address, None);
}

#[test]
fn a_lan_link_without_a_mac_asks_no_lease() {
    let net = Net::new();
    net.iface("bbt0", "", Some("bcmgenet"), UP_1000);
    let plan = plan();
    let ops = Recorder::new();
    let mut r = results(&plan);
    let edge = Edge {
        ops: &ops,
        roots: &net.roots,
    };
    one_link(
        &plan,
        &wired(Topology::Lan { peer: None }),
        &[],
        &edge,
        &mut r,
    );
    let ev = events(&r);
    assert!(ev[0].2.contains("no MAC address"), "{ev:?}");
    assert_eq!(ops.calls(), [LinkCall::Up("bbt0".into())]);
    assert_eq!(r.network.wired[0].topology, "lan");
}

#[test]
fn a_lease_without_a_netmask_is_a_slash_24() {
    assert_eq!(lease_prefix(Ipv4Addr::new(255, 255, 255, 0)), 24);
    assert_eq!(lease_prefix(Ipv4Addr::new(255, 255, 0, 0)), 16);
    assert_eq!(lease_prefix(Ipv4Addr::UNSPECIFIED), 24);
}
