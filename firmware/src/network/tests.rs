//! Tests of the gadget step over a temp configfs/sysfs tree and a recording
//! [`LinkOps`]: the UDC choice, the configfs tree written and bound, the addresses each
//! link gets, the failures recorded as events and the teardown.
use super::*;
use crate::netkit::fake::{events, results, LinkCall, Recorder};
use benchboot_plan::net_steps::GADGET_ATTEMPTS;

/// A temp tree standing in for `/sys/class/{net,udc}` and the gadget's configfs folder.
struct Tree {
    dir: tempfile::TempDir,
    roots: Roots,
}

impl Tree {
    fn new() -> Tree {
        let dir = tempfile::tempdir().unwrap();
        let roots = Roots {
            net: dir.path().join("class/net"),
            udc: dir.path().join("class/udc"),
            gadget: dir.path().join("config/usb_gadget/benchboot"),
        };
        std::fs::create_dir_all(&roots.net).unwrap();
        std::fs::create_dir_all(&roots.udc).unwrap();
        Tree { dir, roots }
    }
    fn udc(&self, name: &str) {
        std::fs::create_dir(self.roots.udc.join(name)).unwrap();
    }
    /// What the kernel does once the gadget is bound: the function's `ifname` attribute
    /// and the interface under class/net.
    fn interface(&self, f: GadgetFunction, ifname: &str) {
        let dir = self
            .roots
            .gadget
            .join(format!("functions/{}.usb0", f.configfs_type()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("ifname"), format!("{ifname}\n")).unwrap();
        std::fs::create_dir_all(self.roots.net.join(ifname)).unwrap();
    }
    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.roots.gadget.join(rel))
            .unwrap_or_else(|e| panic!("{rel}: {e}"))
    }
}

fn plan_with(g: GadgetPlan) -> Plan {
    let mut plan = Plan::example();
    plan.network.gadget = Some(g);
    plan.network.tests = None;
    plan
}

fn gadget_plan() -> GadgetPlan {
    GadgetPlan {
        link_wait_ms: 0,
        ..GadgetPlan::default_for("rpi-zero-w")
    }
}

const SERIAL: &str = "00000000abcd1234";

fn run<'a>(plan: &'a Plan, ops: &'a Recorder, tree: &'a Tree) -> GadgetRun<'a> {
    GadgetRun {
        plan,
        g: plan.network.gadget.as_ref().unwrap(),
        ops,
        roots: &tree.roots,
        udc: "dummy_udc.0".into(),
        serial: SERIAL,
    }
}

#[test]
fn no_udc_is_an_error_event_and_nothing_is_written() {
    let tree = Tree::new();
    let plan = plan_with(gadget_plan());
    let ops = Recorder::new();
    let mut r = results(&plan);
    run_gadget_on(
        &plan,
        plan.network.gadget.as_ref().unwrap(),
        &ops,
        &tree.roots,
        SERIAL,
        &mut r,
    );
    let ev = events(&r);
    assert_eq!(ev.len(), 1, "{ev:?}");
    assert_eq!((ev[0].0.as_str(), ev[0].1), ("gadget.udc", Severity::Error));
    assert!(ev[0].2.contains("no UDC appeared"), "{ev:?}");
    assert!(
        !tree.roots.gadget.exists(),
        "configfs written without a UDC"
    );
    assert!(ops.calls().is_empty());
    assert!(r.network.links.is_empty());
}

#[test]
fn the_plans_udc_must_be_there() {
    let tree = Tree::new();
    tree.udc("dummy_udc.0");
    let plan = plan_with(GadgetPlan {
        udc: Some("20980000.usb".into()),
        ..gadget_plan()
    });
    let ops = Recorder::new();
    let mut r = results(&plan);
    run_gadget_on(
        &plan,
        plan.network.gadget.as_ref().unwrap(),
        &ops,
        &tree.roots,
        SERIAL,
        &mut r,
    );
    let ev = events(&r);
    assert_eq!(ev.len(), 1, "{ev:?}");
    assert_eq!(ev[0].0, "gadget.udc");
    assert!(ev[0].2.contains("20980000.usb"), "{ev:?}");
    assert!(!tree.roots.gadget.exists());
}

#[test]
fn bring_up_writes_the_tree_binds_the_udc_and_addresses_each_link() {
    let tree = Tree::new();
    tree.interface(GadgetFunction::Ncm, "usb0");
    tree.interface(GadgetFunction::Ecm, "usb1");
    let plan = plan_with(gadget_plan());
    let ops = Recorder::new();
    let cx = run(&plan, &ops, &tree);
    let functions = [(0, GadgetFunction::Ncm), (1, GadgetFunction::Ecm)];
    let bound = bring_up(&cx, &functions).unwrap();
    // The device, its strings, the functions with their MACs, the configuration links.
    assert_eq!(tree.read("idVendor"), "0x1d6b");
    assert_eq!(tree.read("idProduct"), "0x0104");
    assert_eq!(
        tree.read("strings/0x409/serialnumber"),
        gadget::usb_serial(SERIAL)
    );
    for f in [GadgetFunction::Ncm, GadgetFunction::Ecm] {
        let t = f.configfs_type();
        let dev = gadget::mac_text(&gadget::mac_for(SERIAL, f, "device"));
        let host = gadget::mac_text(&gadget::mac_for(SERIAL, f, "host"));
        assert_eq!(tree.read(&format!("functions/{t}.usb0/dev_addr")), dev);
        assert_eq!(tree.read(&format!("functions/{t}.usb0/host_addr")), host);
        assert!(tree
            .roots
            .gadget
            .join(format!("configs/c.1/{t}.usb0"))
            .is_symlink());
    }
    // Bound last, to the chosen UDC.
    assert_eq!(tree.read("UDC"), "dummy_udc.0");
    // Each link on its own /30 (by plan index), IPv4 then the link-local fallback.
    let g = plan.network.gadget.as_ref().unwrap();
    let (a, b) = (g.link_addresses(0).0, g.link_addresses(1).0);
    assert_ne!(a, b);
    assert_eq!(
        ops.calls(),
        [
            LinkCall::Ipv4("usb0".into(), a, 30),
            LinkCall::Ipv6("usb0".into(), BOARD_LINK_LOCAL, 64),
            LinkCall::Ipv4("usb1".into(), b, 30),
            LinkCall::Ipv6("usb1".into(), BOARD_LINK_LOCAL, 64),
        ]
    );
    let recs: Vec<_> = bound.links.iter().map(|l| &l.2).collect();
    assert_eq!(recs[0].board_interface, "usb0");
    assert_eq!(recs[0].udc, "dummy_udc.0");
    assert_eq!(recs[1].function, "ecm");
    assert_eq!(recs[1].board_address, b);
    assert_eq!(
        recs[1].host_mac,
        gadget::mac_text(&gadget::mac_for(SERIAL, GadgetFunction::Ecm, "host"))
    );
    assert_eq!(
        recs[0].board_mac,
        gadget::mac_text(&gadget::mac_for(SERIAL, GadgetFunction::Ncm, "device"))
    );
}

#[test]
fn rndis_gets_configuration_1_and_the_os_descriptors() {
    let tree = Tree::new();
    tree.interface(GadgetFunction::Rndis, "usb0");
    tree.interface(GadgetFunction::Ncm, "usb1");
    // configfs makes a gadget's os_desc/ with it, and RNDIS's interface.rndis/ with it.
    for d in ["os_desc", "functions/rndis.usb0/os_desc/interface.rndis"] {
        std::fs::create_dir_all(tree.roots.gadget.join(d)).unwrap();
    }
    let plan = plan_with(gadget_plan());
    let ops = Recorder::new();
    let cx = run(&plan, &ops, &tree);
    bring_up(&cx, &[(0, GadgetFunction::Ncm), (2, GadgetFunction::Rndis)]).unwrap();
    assert!(tree
        .roots
        .gadget
        .join("configs/c.1/rndis.usb0")
        .is_symlink());
    assert!(tree.roots.gadget.join("configs/c.2/ncm.usb0").is_symlink());
    assert!(tree.roots.gadget.join("os_desc/c.1").is_symlink());
    assert_eq!(tree.read("os_desc/use"), "1");
    assert_eq!(
        tree.read("functions/rndis.usb0/os_desc/interface.rndis/compatible_id"),
        "RNDIS"
    );
    assert_eq!(
        tree.read("configs/c.1/strings/0x409/configuration"),
        "RNDIS"
    );
}

#[test]
fn a_refused_address_is_an_error_naming_the_interface() {
    let tree = Tree::new();
    tree.interface(GadgetFunction::Ncm, "usb0");
    let plan = plan_with(gadget_plan());
    let ops = Recorder::refusing(|c| matches!(c, LinkCall::Ipv4(..)));
    let cx = run(&plan, &ops, &tree);
    let err = bring_up(&cx, &[(0, GadgetFunction::Ncm)]).err().unwrap();
    assert!(err.starts_with("usb0: "), "{err}");
    // A refused fe80::1 is not an error: IPv4 is enough.
    let ops = Recorder::refusing(|c| matches!(c, LinkCall::Ipv6(..)));
    let cx = run(&plan, &ops, &tree);
    assert!(bring_up(&cx, &[(0, GadgetFunction::Ncm)]).is_ok());
}

#[test]
fn a_function_without_its_interface_is_an_error_and_is_unbound() {
    let tree = Tree::new();
    let plan = plan_with(gadget_plan());
    let ops = Recorder::new();
    let cx = run(&plan, &ops, &tree);
    let mut r = results(&plan);
    assert!(!one_function(&cx, (0, GadgetFunction::Ecm), true, &mut r));
    let ev = events(&r);
    assert_eq!(ev.len(), 1, "{ev:?}");
    assert_eq!((ev[0].0.as_str(), ev[0].1), ("gadget.ecm", Severity::Error));
    assert!(ev[0].2.contains("ecm ifname"), "{ev:?}");
    // Unbound and unlinked (a plain folder keeps the attribute files configfs drops).
    assert_eq!(tree.read("UDC"), "\n");
    assert!(!tree.roots.gadget.join("configs/c.1/ecm.usb0").is_symlink());
    assert!(ops.calls().is_empty());
    assert!(r.network.links.is_empty());
}

#[test]
fn in_turn_every_function_is_tried_its_attempts_in_plan_order() {
    let tree = Tree::new();
    tree.udc("dummy_udc.0");
    let plan = plan_with(GadgetPlan {
        in_turn: true,
        ..gadget_plan()
    });
    let ops = Recorder::new();
    let mut r = results(&plan);
    run_gadget_on(
        &plan,
        plan.network.gadget.as_ref().unwrap(),
        &ops,
        &tree.roots,
        SERIAL,
        &mut r,
    );
    let steps: Vec<_> = events(&r).into_iter().map(|e| e.0).collect();
    let mut want = Vec::new();
    for f in ["ncm", "ecm", "rndis"] {
        for _ in 0..GADGET_ATTEMPTS {
            want.push(format!("gadget.{f}"));
        }
    }
    assert_eq!(steps, want);
}

#[test]
fn bounce_takes_the_link_down_and_up_and_puts_fe80_back() {
    let ops = Recorder::new();
    bounce(&ops, "usb0").unwrap();
    assert_eq!(
        ops.calls(),
        [
            LinkCall::Down("usb0".into()),
            LinkCall::Up("usb0".into()),
            LinkCall::Ipv6("usb0".into(), BOARD_LINK_LOCAL, 64),
        ]
    );
    let ops = Recorder::refusing(|c| matches!(c, LinkCall::Down(_)));
    assert!(bounce(&ops, "usb0").is_err());
    assert_eq!(ops.calls(), [LinkCall::Down("usb0".into())]);
}

#[test]
fn the_host_side_is_found_by_its_mac() {
    let tree = Tree::new();
    let mac = gadget::mac_for(SERIAL, GadgetFunction::Ncm, "host");
    for (name, addr) in [
        ("eth0", "52:54:00:12:34:56".to_owned()),
        ("usb1", gadget::mac_text(&mac)),
    ] {
        std::fs::create_dir_all(tree.roots.net.join(name)).unwrap();
        std::fs::write(
            tree.roots.net.join(name).join("address"),
            format!("{addr}\n"),
        )
        .unwrap();
    }
    assert_eq!(
        interface_with_mac(&tree.roots.net, &mac).as_deref(),
        Some("usb1")
    );
    let other = gadget::mac_for(SERIAL, GadgetFunction::Ecm, "host");
    assert_eq!(interface_with_mac(&tree.roots.net, &other), None);
    let _ = &tree.dir;
}
