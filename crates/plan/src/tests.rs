//! Tests of `Plan`: the kernel command line's plan name, JSON round trips, supervision
//! and the validation rules (repetitions, labels, results link, random targets).
use super::*;

#[test]
fn plan_from_cmdline() {
    assert_eq!(plan_name("console=ttyS1 benchboot.plan=qemu quiet"), "qemu");
    assert_eq!(plan_name("console=ttyS1"), "plan");
    assert_eq!(plan_name("benchboot.plan=../etc/x"), "plan");
    assert_eq!(plan_path("qemu"), "/etc/benchboot/qemu.json");
}

#[test]
fn seed_sizes_are_8_bytes_to_1_mib() {
    let sizes = seed_block_sizes();
    assert_eq!(sizes.len(), 18);
    assert_eq!(sizes[0], 8);
    assert_eq!(sizes[17], MIB);
}

#[test]
fn json_round_trip() {
    let plan = Plan::example();
    let text = serde_json::to_string(&plan).unwrap();
    assert_eq!(Plan::from_json(&text).unwrap(), plan);
    assert!(text.contains("\"filesystem\":\"ext4\""), "{text}");
}

#[test]
fn faults_and_supervision() {
    assert_eq!(Fault::Pid1Panic.step(), "fault.pid1-panic");
    assert_eq!(Fault::Segfault.step(), "fault.segfault");
    // A plan from before schema 1.5 has neither field: the defaults.
    let mut v = serde_json::to_value(Plan::example()).unwrap();
    let o = v.as_object_mut().unwrap();
    assert!(
        !o.contains_key("faults"),
        "an empty fault list is not written"
    );
    o.remove("supervision");
    let old = Plan::from_json(&v.to_string()).unwrap();
    assert_eq!(old.supervision.worker_limit_ms, 600_000);
    assert_eq!(old.supervision.watchdog_timeout_s, 60);
    assert!(old.faults.is_empty());

    let mut plan = Plan::example();
    plan.faults = vec![Fault::Segfault, Fault::Hang];
    let text = serde_json::to_string(&plan).unwrap();
    assert!(text.contains(r#""faults":["segfault","hang"]"#), "{text}");
    assert_eq!(Plan::from_json(&text).unwrap(), plan);
    plan.emulated = false;
    assert_eq!(
        plan.validate().unwrap_err().to_string(),
        "plan: field `faults`: fault injection is for QEMU plans (emulated: true) only; remove it"
    );
    plan.faults.clear();
    plan.supervision.worker_limit_ms = 0;
    assert!(plan
        .validate()
        .unwrap_err()
        .to_string()
        .contains("`supervision.worker_limit_ms`"));
}

#[test]
fn zero_repetitions_refused() {
    let mut plan = Plan::example();
    plan.storage.repetitions = 0;
    assert_eq!(
        plan.validate(),
        Err(PlanError::Invalid {
            field: "storage.repetitions".into(),
            message: "must be at least 1".into()
        })
    );
}

/// The long cell runs under its own caps, only where it names a cell of the sweep; the
/// estimate adds its longer write and read; a cell the sweep lacks, or zero caps, are
/// refused naming the field.
#[test]
fn the_long_cell_has_its_own_caps_and_must_be_a_cell_of_the_sweep() {
    let mut plan = Plan::example();
    let label = plan.storage.targets[0].label.clone();
    let bs = plan.storage.block_sizes[0];
    let before = crate::estimate::total_ms(&crate::estimate::estimate(&plan));
    let (caps, reps) = (
        (plan.storage.byte_cap, plan.storage.time_cap_ms),
        u64::from(plan.storage.repetitions),
    );
    let cell = LongCell {
        target: label.clone(),
        mode: Mode::Direct,
        block_size: bs,
        byte_cap: 1 << 30,
        time_cap_ms: caps.1 + 10_000,
    };
    assert!(plan.storage.modes.contains(&Mode::Direct));
    plan.storage.long_cell = Some(cell.clone());
    plan.validate().unwrap();
    assert_eq!(
        plan.storage.cell_caps(&label, Mode::Direct, bs),
        (1 << 30, caps.1 + 10_000)
    );
    assert_eq!(plan.storage.cell_caps(&label, Mode::Sync, bs), caps);
    assert_eq!(plan.storage.cell_caps("other", Mode::Direct, bs), caps);
    let after = crate::estimate::total_ms(&crate::estimate::estimate(&plan));
    assert_eq!(after - before, 2 * reps * 10_000);
    // JSON keeps it; a plan without one writes no key.
    let back = Plan::from_json(&serde_json::to_string(&plan).unwrap()).unwrap();
    assert_eq!(back.storage.long_cell, Some(cell.clone()));
    assert!(!serde_json::to_string(&Plan::example())
        .unwrap()
        .contains("long_cell"));

    plan.storage.long_cell = Some(LongCell {
        block_size: 3,
        ..cell.clone()
    });
    let err = plan.validate().unwrap_err().to_string();
    assert!(
        err.contains("storage.long_cell") && err.contains("3 B is no cell of the sweep"),
        "{err}"
    );
    plan.storage.long_cell = Some(LongCell {
        time_cap_ms: 0,
        ..cell
    });
    let err = plan.validate().unwrap_err().to_string();
    assert!(err.contains("must be above 0"), "{err}");
}

/// A base plan's long cell (a built-in QEMU plan's) stays while the file keeps its
/// target, mode and block size, and goes, without an error, when the file drops one.
#[test]
fn a_file_keeps_the_long_cell_only_while_the_cell_exists() {
    let mut b = Plan::example();
    b.emulated = false;
    b.network.tests = Some(NetTests::hardware());
    b.storage.targets.retain(|t| t.label == "ext4");
    let cell = LongCell {
        target: "ext4".into(),
        mode: Mode::Direct,
        block_size: 4096,
        byte_cap: 32 * MIB,
        time_cap_ms: 3_000,
    };
    b.storage.long_cell = Some(cell.clone());
    let file = |sizes: &str| {
        format!("extends = \"quick\"\n[storage]\ncard = [\"ext4\"]\nblock-sizes = [{sizes}]\n")
    };
    let p = crate::resolve(
        "my.toml",
        &file("\"4 KiB\", \"1 MiB\""),
        &b,
        &ImageFacts::example(),
    )
    .unwrap();
    assert_eq!(p.storage.long_cell, Some(cell));
    let p = crate::resolve("my.toml", &file("\"1 MiB\""), &b, &ImageFacts::example()).unwrap();
    assert_eq!(p.storage.long_cell, None);
    p.validate().unwrap();
}

#[test]
fn only_an_emulated_plan_may_go_without_a_results_link() {
    let mut plan = Plan::example();
    plan.network.interface.clear();
    plan.network.gadget = None;
    plan.network.tests = None;
    plan.validate().unwrap();
    plan.emulated = false;
    let err = plan.validate().unwrap_err().to_string();
    assert!(err.contains("network.interface"), "{err}");
}

#[test]
fn duplicate_labels_refused() {
    let mut plan = Plan::example();
    let t = plan.storage.targets[0].clone();
    plan.storage.targets.push(t);
    assert!(plan.validate().unwrap_err().to_string().contains("unique"));
}

/// A farm keys results by the name lower-cased with `-` as `_`: two names that are one
/// there are refused, naming both.
#[test]
fn labels_that_fold_together_are_refused() {
    let mut plan = Plan::example();
    let mut t = plan.storage.targets[0].clone();
    t.label = t.label.to_uppercase().replace('_', "-");
    if t.label == plan.storage.targets[0].label {
        t.label.push_str("-X");
        plan.storage.targets[0].label.push_str("_x");
    }
    plan.storage.targets.push(t.clone());
    let err = plan.validate().unwrap_err().to_string();
    assert!(err.contains("differ only in case or `-`/`_`"), "{err}");
    assert!(err.contains(&format!("`{}`", t.label)), "{err}");
    assert_eq!(crate::spelling::folded_name("USB-ext4"), "usb_ext4");
    assert_eq!(
        crate::file::name_clash(["a", "usb-ext4", "b", "USB_ext4"]),
        Some(("usb-ext4", "USB_ext4"))
    );
    assert_eq!(crate::file::name_clash(["a", "b"]), None);
}

#[test]
fn random_target_must_exist() {
    let mut plan = Plan::example();
    plan.storage.random.as_mut().unwrap().targets = vec!["usb".into()];
    let err = plan.validate().unwrap_err().to_string();
    assert!(
        err.contains("storage.random.targets") && err.contains("`usb`"),
        "{err}"
    );
}

#[test]
fn dir_targets_take_paths_others_devices() {
    let mut plan = Plan::example();
    plan.storage.targets[0].device = "/tmp/x".into();
    assert!(plan.validate().is_err());
    plan.storage.targets[0].filesystem = Filesystem::Dir;
    plan.validate().unwrap();
    plan.storage.modes.clear();
    assert!(plan
        .validate()
        .unwrap_err()
        .to_string()
        .contains("storage.modes"));
}

#[test]
fn targets_named_by_label_or_partlabel() {
    let mut plan = Plan::example();
    let t = &mut plan.storage.targets[0];
    assert_eq!(t.device_ref(), DeviceRef::Path("/dev/mmcblk0p7"));
    t.device = "LABEL=BBUSB".into();
    assert_eq!(t.device_ref(), DeviceRef::Label("BBUSB"));
    assert_eq!(t.device_ref().to_string(), "LABEL=BBUSB");
    plan.validate().unwrap();
    let t = &mut plan.storage.targets[0];
    t.device = "PARTLABEL=bench data".into();
    t.filesystem = Filesystem::Raw;
    assert_eq!(t.device_ref(), DeviceRef::PartLabel("bench data"));
    plan.validate().unwrap();
    let text = serde_json::to_string(&plan).unwrap();
    assert!(
        text.contains(r#""device":"PARTLABEL=bench data""#),
        "{text}"
    );
    assert_eq!(Plan::from_json(&text).unwrap(), plan);
}

#[test]
fn bad_label_names_are_refused_naming_the_field() {
    let cases = [
        ("LABEL=", Filesystem::Ext4, "needs a name"),
        ("PARTLABEL=", Filesystem::Raw, "needs a name"),
        ("LABEL=seventeen-bytes-x", Filesystem::Ext4, "17 bytes"),
        ("LABEL=CARD", Filesystem::Raw, "PARTLABEL"),
        (
            "PARTLABEL=0123456789012345678901234567890123456",
            Filesystem::Raw,
            "36 UTF-16",
        ),
        ("sda1", Filesystem::Ext4, "LABEL=<filesystem label>"),
        ("label=x", Filesystem::Vfat, "must be a /dev/ path"),
    ];
    for (device, filesystem, why) in cases {
        let mut plan = Plan::example();
        plan.storage.targets[0].device = device.into();
        plan.storage.targets[0].filesystem = filesystem;
        let err = plan.validate().unwrap_err().to_string();
        assert!(
            err.contains("storage.targets[0].device") && err.contains("target `ext4`"),
            "{device}: {err}"
        );
        assert!(err.contains(why), "{device}: {err}");
    }
    // 36 UTF-16 code units is the most a GPT name holds; non-ASCII is counted in units.
    let mut plan = Plan::example();
    plan.storage.targets[0].device = format!("PARTLABEL={}", "é".repeat(36));
    plan.validate().unwrap();
}

#[test]
fn dir_targets_are_paths_whatever_their_name() {
    let mut plan = Plan::example();
    plan.storage.targets[0].filesystem = Filesystem::Dir;
    plan.storage.targets[0].device = "LABEL=".into();
    assert_eq!(
        plan.storage.targets[0].device_ref(),
        DeviceRef::Path("LABEL=")
    );
    plan.validate().unwrap();
}

#[test]
fn huge_block_refused() {
    let mut plan = Plan::example();
    plan.storage.block_sizes.push(128 * MIB);
    let err = plan.validate().unwrap_err().to_string();
    assert!(err.contains("134217728"), "{err}");
}

#[test]
fn unknown_field_refused() {
    let text = serde_json::to_string(&Plan::example())
        .unwrap()
        .replacen('{', "{\"colour\":1,", 1);
    assert_eq!(
        Plan::from_json(&text),
        Err(PlanError::UnknownField("colour".into()))
    );
    let nested = serde_json::to_string(&Plan::example()).unwrap().replacen(
        "\"repetitions\"",
        "\"passes\":2,\"repetitions\"",
        1,
    );
    assert_eq!(
        Plan::from_json(&nested),
        Err(PlanError::UnknownField("storage.passes".into()))
    );
    // The derive itself ignores them: that is how a results reader reads a newer plan.
    let lenient: Plan = serde_json::from_str(&nested).unwrap();
    assert_eq!(lenient, Plan::example());
}
