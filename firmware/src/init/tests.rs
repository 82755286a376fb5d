//! PID 1's sequence: the mount table, where the results are served, the panic path.

use super::*;

#[test]
fn mount_table_has_the_pseudo_filesystems() {
    let targets: Vec<_> = MOUNTS.iter().map(|m| m.1).collect();
    assert_eq!(targets, ["/proc", "/sys", "/dev", "/sys/kernel/debug"]);
}

#[test]
fn a_failed_mount_is_an_event_an_error_when_essential() {
    let err = std::io::Error::from_raw_os_error(19);
    let essential: Vec<&str> = MOUNTS.iter().filter(|m| m.3).map(|m| m.2).collect();
    assert_eq!(essential, ["proc", "sysfs", "devtmpfs"]);
    let (what, severity, why) = mount_failure("sysfs", "/sys", true, &err);
    assert_eq!((what.as_str(), severity), ("mount.sysfs", Severity::Error));
    assert!(why.starts_with("cannot mount sysfs on /sys: "), "{why}");
    let (what, severity, _) = mount_failure("debugfs", "/sys/kernel/debug", false, &err);
    assert_eq!(
        (what.as_str(), severity),
        ("mount.debugfs", Severity::Warning)
    );
}

#[test]
fn served_on_the_links_own_addresses_only() {
    let mut plan = Plan::example();
    plan.network.gadget = Some(benchboot_plan::GadgetPlan::default_for("rpi-zero-w"));
    let mut r = RunResults::new(
        "t".into(),
        plan.clone(),
        benchboot_storage::system::system_info(0),
    );
    let link = |ifname: &str, a: [u8; 4]| benchboot_results::network::LinkRecord {
        function: "ncm".into(),
        udc: "20980000.usb".into(),
        board_interface: ifname.into(),
        board_mac: String::new(),
        host_mac: String::new(),
        board_address: a,
        host_address: None,
        lease_ns: None,
    };
    // `lo` stands for a link whose interface exists; the other has gone.
    r.network.links = vec![link("lo", [10, 55, 0, 1]), link("gone0", [10, 55, 0, 5])];
    let lo = if_index("lo").expect("every Linux host has lo");
    let got: Vec<String> = served_addresses(&plan, &r)
        .iter()
        .map(|a| a.to_string())
        .collect();
    assert_eq!(
        got,
        [
            "10.0.2.15:8080".to_owned(),
            "10.55.0.1:8080".to_owned(),
            format!("[fe80::1%{lo}]:8080"),
            "10.55.0.5:8080".to_owned(),
        ]
    );
    assert!(got.iter().all(|a| !a.starts_with("0.0.0.0")));
    // Links taken one at a time (QEMU's dummy_hcd test) are gone when serving.
    plan.network.gadget.as_mut().unwrap().in_turn = true;
    assert_eq!(served_addresses(&plan, &r).len(), 1);
}

#[test]
fn kept_runs_are_named_by_their_run_id() {
    assert_eq!(
        kept_name(br#"{"run_id":"rpi-zero-w-0123abcd4567","x":1}"#),
        "rpi-zero-w-0123abcd4567.json"
    );
    // No path tricks, no hidden files, no device names, bounded.
    assert_eq!(
        kept_name(br#"{"run_id":"../../etc/x y"}"#),
        "_._.._etc_x_y.json"
    );
    assert_eq!(kept_name(br#"{"run_id":"..."}"#), "_._.json");
    assert_eq!(kept_name(br#"{"run_id":"nul"}"#), "_nul.json");
    assert_eq!(kept_name(br#"{"run_id":"-rf"}"#), "_rf.json");
    assert_eq!(kept_name(br#"{"run_id":""}"#), "unreadable.json");
    assert_eq!(kept_name(&[b'{'; 10]), "unreadable.json");
    assert_eq!(kept_name(b""), "unreadable.json");
    let long = format!(r#"{{"run_id":"{}"}}"#, "a".repeat(300));
    assert_eq!(
        kept_name(long.as_bytes()),
        format!("{}.json", "a".repeat(benchboot_results::name::MAX_LEN))
    );
}
