//! The jobs' shape per route; LAVA's own checks of them (lava-schema, lava-run
//! --validate) are the system test `tests/tests/system/lava.rs`.

use super::*;

fn board(name: &str) -> Board {
    crate::load_board(name).unwrap()
}

fn jobs_of(name: &str) -> Vec<(PathBuf, yaml_serde::Value)> {
    let dir = tempfile::tempdir().unwrap();
    let w = run(&Options {
        board: board(name),
        plan: PlanText::standard(),
        artifacts: "https://lab.example/benchboot/".into(),
        out: dir.path().to_owned(),
        fetch_command: Some("benchboot_fetch".into()),
        artifacts_too: false,
    })
    .unwrap();
    w.jobs
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            (p.clone(), yaml_serde::from_str(&text).unwrap())
        })
        .collect()
}

#[test]
fn routes_per_board() {
    assert_eq!(routes(&board("rpi-zero-w")), [Route::Flasher]);
    assert_eq!(routes(&board("rpi-3b")), [Route::Flasher]);
    assert_eq!(
        routes(&board("beaglebone-black")),
        [Route::Flasher, Route::Tftp]
    );
    assert_eq!(routes(&board("bananapi-m1")), [Route::Flasher, Route::Tftp]);
    assert_eq!(routes(&board("qemu-virt-arm64")), [Route::Qemu]);
    assert_eq!(routes(&board("qemu-virt-armv7")), [Route::Qemu]);
}

#[test]
fn the_tftp_job_of_the_banana_pi() {
    let jobs = jobs_of("bananapi-m1");
    let names: Vec<String> = jobs
        .iter()
        .map(|(p, _)| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["bananapi-m1-flasher.yaml", "bananapi-m1-tftp.yaml"]);
    let j = &jobs[1].1;
    assert_eq!(j["device_type"].as_str(), Some("sun7i-a20-bananapi"));
    let deploy = &j["actions"][0]["deploy"];
    assert_eq!(deploy["to"].as_str(), Some("tftp"));
    assert_eq!(
        deploy["kernel"]["url"].as_str(),
        Some("https://lab.example/benchboot/bananapi-m1-vmlinuz")
    );
    assert_eq!(deploy["kernel"]["type"].as_str(), Some("zimage"));
    assert_eq!(deploy["ramdisk"]["header"].as_str(), Some("u-boot"));
    assert_eq!(deploy["ramdisk"]["install_overlay"].as_bool(), Some(false));
    assert_eq!(
        deploy["dtb"]["url"].as_str(),
        Some("https://lab.example/benchboot/bananapi-m1-sun7i-a20-bananapi.dtb")
    );
    let boot = &j["actions"][1]["boot"];
    assert_eq!(
        (boot["method"].as_str(), boot["commands"].as_str()),
        (Some("u-boot"), Some("ramdisk"))
    );
    let monitors = j["actions"][2]["test"]["monitors"].as_sequence().unwrap();
    assert_eq!(monitors.len(), 2);
    assert_eq!(
        monitors[0]["pattern"].as_str(),
        Some(benchboot_console::lava::FIGURES.pattern)
    );
    assert_eq!(
        j["actions"][3]["command"]["name"].as_str(),
        Some("benchboot_fetch")
    );
}

/// Every action's timeout fits the job's (lava-schema refuses one above it), and the
/// test action's comes from the plan's estimate.
#[test]
fn timeouts_fit_and_follow_the_estimate() {
    for name in ["rpi-zero-w", "beaglebone-black", "qemu-virt-arm64"] {
        for (p, j) in jobs_of(name) {
            let job = j["timeouts"]["job"]["minutes"].as_u64().unwrap();
            let mut sum = 0;
            for a in j["actions"].as_sequence().unwrap() {
                let (_, body) = a.as_mapping().unwrap().iter().next().unwrap();
                let t = body["timeout"]["minutes"].as_u64().unwrap();
                assert!(t <= job, "{}", p.display());
                sum += t;
            }
            assert!(sum <= job, "{}: {sum} > {job}", p.display());
        }
    }
    let layout = layout::plan(&layout::Spec::default()).unwrap();
    let b = board("rpi-zero-w");
    let standard = plans::hardware(&b, &layout, vec![], &PlanText::standard()).unwrap();
    let quick = plans::hardware(&b, &layout, vec![], &PlanText::preset("quick").unwrap()).unwrap();
    assert!(test_minutes(&standard) > test_minutes(&quick));
    assert!(test_minutes(&quick) > SLACK_MIN);
}

#[test]
fn the_qemu_job_boots_what_the_qemu_tests_boot() {
    let jobs = jobs_of("qemu-virt-arm64");
    let j = &jobs[0].1;
    assert_eq!(j["device_type"].as_str(), Some("qemu"));
    let c = &j["context"];
    assert_eq!(c["arch"].as_str(), Some("arm64"));
    assert_eq!(c["cpu"].as_str(), Some("cortex-a53"));
    assert_eq!(c["memory"].as_u64(), Some(1024));
    let extra: Vec<&str> = c["extra_options"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(extra[0], "-smp 2");
    assert!(
        extra[1].starts_with("-append \"console=ttyAMA0 loglevel=4")
            && extra[1].ends_with(" benchboot.plan=qemu-lava\""),
        "{extra:?}"
    );
    let images = &j["actions"][0]["deploy"]["images"];
    assert_eq!(
        images["card"]["url"].as_str(),
        Some("https://lab.example/benchboot/qemu-virt-arm64.img")
    );
    assert!(images["card"]["image_arg"]
        .as_str()
        .unwrap()
        .contains("virtio-blk-device"));
}

#[test]
fn the_zero_w_s_device_type_ships_with_its_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let w = run(&Options {
        board: board("rpi-zero-w"),
        plan: PlanText::standard(),
        artifacts: "file:///srv".into(),
        out: dir.path().to_owned(),
        fetch_command: None,
        artifacts_too: false,
    })
    .unwrap();
    assert_eq!(w.device_types.len(), 1);
    assert!(w.device_types[0].ends_with("device-types/bcm2835-rpi-zero-w.jinja2"));
    let j: yaml_serde::Value =
        yaml_serde::from_str(&std::fs::read_to_string(&w.jobs[0]).unwrap()).unwrap();
    assert_eq!(j["actions"].as_sequence().unwrap().len(), 3, "no command");
    assert_eq!(
        j["actions"][0]["deploy"]["images"]["image"]["url"].as_str(),
        Some("file:///srv/rpi-zero-w.img")
    );
}
