//! Board farms: the LAVA jobs `cargo xtask lava` writes, checked and run by Debian's
//! LAVA (2023.01, unpacked by `cargo xtask setup --tests`; `xtask::lava::tools`).
//!
//! - Every job of every board passes `lava-schema.py job --strict` and `lava-run
//!   --validate` against a device of its device type, rendered from lava-server's
//!   templates and benchboot's own (`boards/lava/`), which `lava-schema.py device`
//!   checks too. A job the schema must refuse is refused (the check can fail).
//! - `lava-run` (no server) runs the `qemu` job of qemu-virt-arm64 in real QEMU: the job
//!   completes, LAVA's results hold the figures as numbers with units (storage among
//!   them) and the verdicts, the device's user command fetches `results.json` from the
//!   board over the job's forwarded port, and `benchboot collect --from-log` rebuilds
//!   from LAVA's log the very document the board served, LAVA's results checked
//!   against it.
//!
//! Without LAVA unpacked these fail under CI and skip elsewhere.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use benchboot_console::lava::{fold_id, FIGURES, VERDICTS};
use xtask::lava::{self, tools};

fn lava_present(test: &str) -> bool {
    match tools::missing() {
        None => true,
        Some(why) => {
            benchboot_tests::missing(test, &why, "run `cargo xtask setup --tests`");
            false
        }
    }
}

/// A lab's device of `device_type`: its connection and power commands, the flasher's
/// card writer (never run by `--validate`).
fn device_dict(dir: &Path, device_type: &str, extra: &str) -> PathBuf {
    let base = if device_type == "qemu" {
        "{% extends 'qemu.jinja2' %}\n{% set mac_addr = '52:54:00:12:34:59' %}\n".to_owned()
    } else {
        format!(
            "{{% extends '{device_type}.jinja2' %}}\n\
             {{% set connection_command = 'telnet localhost 7000' %}}\n\
             {{% set hard_reset_command = '/bin/true' %}}\n\
             {{% set power_off_command = '/bin/true' %}}\n\
             {{% set power_on_command = '/bin/true' %}}\n\
             {{% set flasher_deploy_commands = ['/bin/true {{IMAGE}}'] %}}\n"
        )
    };
    let path = dir.join(format!("{device_type}-01.jinja2"));
    std::fs::write(&path, format!("{base}{extra}")).unwrap();
    path
}

/// The files a job names under `file://`: stand-ins, for `--validate` only checks that
/// they are there.
fn touch_artifacts(job: &Path) {
    let text = std::fs::read_to_string(job).unwrap();
    for url in text.split_whitespace().filter(|w| w.starts_with("file://")) {
        let p = Path::new(url.trim_start_matches("file://"));
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, b"stand-in").unwrap();
    }
}

#[test]
fn every_job_of_every_board_passes_lava_s_checks() {
    if !lava_present("lava::every_job_of_every_board_passes_lava_s_checks") {
        return;
    }
    let started = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let art = dir.path().join("artifacts");
    let mut checked = Vec::new();
    for board in xtask::boards::all().unwrap() {
        let name = board.name.clone();
        let out = dir.path().join(&name);
        let w = lava::run(&lava::Options {
            board: board.clone(),
            plan: benchboot_image::plans::PlanText::standard(),
            artifacts: format!("file://{}", art.display()),
            out: out.clone(),
            fetch_command: None,
            artifacts_too: false,
        })
        .unwrap_or_else(|e| panic!("{name}: {e:#}"));
        let templates = vec![out.join("device-types")];
        let dict = device_dict(&out, &board.lava.device_type, "");
        tools::schema_device(&dict, &templates).unwrap_or_else(|e| panic!("{name}: {e:#}"));
        assert_eq!(
            w.device_types.len(),
            usize::from(board.lava.template.is_some()),
            "{name}"
        );
        for job in &w.jobs {
            tools::schema_job(job).unwrap_or_else(|e| panic!("{e:#}"));
            touch_artifacts(job);
            let device = out.join("device.yaml");
            tools::render_device(&dict, job, &templates, &device)
                .unwrap_or_else(|e| panic!("{e:#}"));
            let run_out = out.join("validate");
            let o = tools::lava_run(job, &device, &run_out, 1, true).unwrap();
            let log = String::from_utf8_lossy(&o.stderr);
            assert!(
                log.contains(r#""case": "validate", "definition": "lava", "result": "pass""#)
                    && log.contains(r#""case": "job", "definition": "lava", "result": "pass""#),
                "lava-run --validate {}: {log}\n{}",
                job.display(),
                String::from_utf8_lossy(&o.stdout)
            );
            checked.push(job.file_name().unwrap().to_string_lossy().into_owned());
        }
    }
    // Every board has its card route; the U-Boot boards their TFTP route; virt its qemu.
    for want in [
        "rpi-zero-w-flasher.yaml",
        "rpi-zero-2-w-flasher.yaml",
        "rpi-4b-flasher.yaml",
        "beaglebone-black-tftp.yaml",
        "bananapi-m1-tftp.yaml",
        "qemu-virt-arm64-qemu.yaml",
        "qemu-virt-armv7-qemu.yaml",
    ] {
        assert!(checked.iter().any(|c| c == want), "{want}: {checked:?}");
    }
    assert_eq!(checked.len(), 12, "{checked:?}");
    // The checks can fail: a monitor name with a space, an action timeout above the job's.
    let job = dir.path().join("rpi-3b/rpi-3b-flasher.yaml");
    let text = std::fs::read_to_string(&job).unwrap();
    let bad = dir.path().join("bad.yaml");
    std::fs::write(
        &bad,
        text.replace("name: benchboot-figures", "name: benchboot figures"),
    )
    .unwrap();
    assert!(tools::schema_job(&bad).is_err());
    let bad_dict = device_dict(dir.path(), "no-such-device-type", "");
    assert!(tools::schema_device(&bad_dict, &[]).is_err());
    eprintln!(
        "lava: {} jobs checked in {:.1} s",
        checked.len(),
        started.elapsed().as_secs_f64()
    );
}

/// The board's console lines in LAVA's log that tell of trouble (an error or warning
/// event, a failure, a retry), at most 60: what a failed verdict's message shows, since
/// the job's files are gone with the test's temporary folder.
fn board_trouble(log: &str) -> String {
    let words = ["error", "fail", "warning", "no lease", "retry", "timed out"];
    let lines: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("benchboot: "))
        .filter(|l| {
            let l = l.to_ascii_lowercase();
            words.iter().any(|w| l.contains(w))
        })
        .take(60)
        .collect();
    format!(
        "the board's console lines of trouble:\n{}",
        lines.join("\n")
    )
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn lava_runs_the_qemu_job_and_the_document_comes_back_from_its_log() {
    let _slot = benchboot_tests::qemu_slot(module_path!());
    if !lava_present("lava::lava_runs_the_qemu_job_and_the_document_comes_back_from_its_log")
        || !benchboot_tests::require_machine("lava qemu job", "qemu-system-aarch64", "virt")
    {
        return;
    }
    let started = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("lava");
    let board = xtask::load_board("qemu-virt-arm64").unwrap();
    let w = lava::run(&lava::Options {
        board,
        plan: benchboot_image::plans::PlanText::standard(),
        artifacts: format!("file://{}", out.display()),
        out: out.clone(),
        fetch_command: Some("benchboot_fetch".into()),
        artifacts_too: true,
    })
    .unwrap();
    let job = &w.jobs[0];
    let tool = xtask::qemu::build_host_tool(false).unwrap();
    let port = free_port();
    let served = dir.path().join("served.json");
    // The lab's device: the board's results server forwarded to this machine's loopback,
    // and the user command that fetches from it once the verdicts are in.
    let dict = device_dict(
        dir.path(),
        "qemu",
        &format!(
            "{{% set netdevice = 'user,restrict=on,hostfwd=tcp:127.0.0.1:{port}-:8080' %}}\n\
             {{% set user_commands = {{'benchboot_fetch': {{'do': '{} fetch --addr \
             127.0.0.1:{port} --out {} --timeout 120'}}}} %}}\n",
            tool.display(),
            served.display()
        ),
    );
    let device = dir.path().join("qemu-01.yaml");
    tools::render_device(&dict, job, &[], &device).unwrap();
    let o = tools::lava_run(job, &device, &dir.path().join("run"), 7, false).unwrap();
    // lava-run with no server logs JSON lines to stderr.
    let log = String::from_utf8_lossy(&o.stderr).into_owned();
    let log_file = dir.path().join("job-7.log");
    std::fs::write(&log_file, &log).unwrap();
    // LAVA's results as its log records them (PyYAML writes a measurement as `! "1.5"`:
    // the host tool's reader takes the tag off).
    let parsed = benchboot::console_log::parse("job-7.log", &log).unwrap();
    let results = parsed.lava.expect("LAVA results in the log");
    let job_result = results
        .iter()
        .find(|m| m.suite == "lava" && m.case == "job")
        .unwrap_or_else(|| panic!("no job result: {log}"));
    assert_eq!(job_result.result, "pass", "{log}");
    // Figures as numbers with units; the storage ones among them.
    let figures: Vec<_> = results.iter().filter(|m| m.suite == FIGURES.name).collect();
    let storage: Vec<_> = figures
        .iter()
        .filter(|m| m.case.starts_with("storage_"))
        .collect();
    assert!(storage.len() >= 80, "{} storage figures", storage.len());
    for m in &storage {
        assert_eq!(m.units.as_deref(), Some("MiB/s"), "{m:?}");
        assert!(m.measurement.is_some_and(|v| v > 0.0), "{m:?}");
        assert_eq!(m.result, "pass");
    }
    let verdicts: Vec<_> = results
        .iter()
        .filter(|m| m.suite == VERDICTS.name)
        .collect();
    let verdict = |id: &str| {
        verdicts
            .iter()
            .find(|m| m.case == fold_id(id))
            .map(|m| m.result.clone())
    };
    assert_eq!(
        verdict("run.complete").as_deref(),
        Some("pass"),
        "{verdicts:?}\n{}",
        board_trouble(&log)
    );
    assert_eq!(
        verdict("run.errors").as_deref(),
        Some("pass"),
        "{verdicts:?}\n{}",
        board_trouble(&log)
    );
    assert_eq!(verdict("verify.ext4").as_deref(), Some("pass"));
    // The document rebuilt from LAVA's log is the one the board served, byte for byte.
    let store = dir.path().join("store");
    let c = Command::new(&tool)
        .args(["collect", "--from-log"])
        .arg(&log_file)
        .arg("--store")
        .arg(&store)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&c.stderr);
    assert!(c.status.success(), "{err}");
    assert!(err.contains("match the document"), "{err}");
    let served = std::fs::read_to_string(&served).expect("the user command fetched results.json");
    let r = benchboot_results::RunResults::from_json(&served).unwrap();
    let rebuilt = std::fs::read_to_string(store.join(format!("runs/{}.json", r.run_id))).unwrap();
    assert!(
        rebuilt == served,
        "the document from LAVA's log differs from the served one"
    );
    match &r.system.kernel_cmdline {
        benchboot_results::Reading::Ok { value, .. } => {
            assert!(value.contains("benchboot.plan=qemu-lava"), "{value}");
        }
        other => panic!("{other:?}"),
    }
    eprintln!(
        "lava: the qemu job ran in {:.1} s ({} figures, {} verdicts in LAVA's results)",
        started.elapsed().as_secs_f64(),
        figures.len(),
        verdicts.len()
    );
}
