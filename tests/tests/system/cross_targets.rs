//! The same firmware code builds for every CPU a board names and for each target's
//! baseline (`cargo xtask firmware --target`), and every build passes every gate
//! (static, ELF machine, ARM attributes, runs under qemu-user on that very core:
//! arm1176, cortex-a7, cortex-a8, cortex-a53, cortex-a72). The image and QEMU tests
//! build the same keys, so their builds are shared.

use std::process::Command;

use xtask::firmware::{build, CpuTarget};

/// `readelf -A` of an ARM build: (Tag_CPU_arch, Tag_FP_arch, Tag_Advanced_SIMD_arch).
fn arm_attributes(bin: &std::path::Path) -> (String, String, String) {
    let out = Command::new("readelf").arg("-A").arg(bin).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let tag = |name: &str| {
        text.lines()
            .find_map(|l| l.trim().strip_prefix(name))
            .map(|v| v.trim().to_owned())
            .unwrap_or_default()
    };
    (
        tag("Tag_CPU_arch:"),
        tag("Tag_FP_arch:"),
        tag("Tag_Advanced_SIMD_arch:"),
    )
}

#[test]
fn every_board_cpu_and_baseline_builds_and_passes_the_gates() {
    let _slot = benchboot_tests::qemu_slot(module_path!());
    let mut cpus: Vec<CpuTarget> = xtask::boards::all()
        .unwrap()
        .iter()
        .map(CpuTarget::of_board)
        .collect();
    for triple in [
        "armv7-unknown-linux-musleabihf",
        "aarch64-unknown-linux-musl",
    ] {
        cpus.push(CpuTarget::baseline(triple).unwrap());
    }
    cpus.sort_by_key(CpuTarget::key);
    cpus.dedup_by_key(|c| c.key());
    let keys: Vec<String> = cpus.iter().map(CpuTarget::key).collect();
    for cpu in [
        "arm-unknown-linux-musleabihf-arm1176jzf-s",
        "armv7-unknown-linux-musleabihf-cortex-a7",
        "armv7-unknown-linux-musleabihf-cortex-a8",
        "aarch64-unknown-linux-musl-cortex-a53",
        "aarch64-unknown-linux-musl-cortex-a72",
    ] {
        assert!(
            keys.iter().any(|k| k == cpu),
            "no board names {cpu}: {keys:?}"
        );
    }

    for cpu in &cpus {
        let key = cpu.key();
        // qemu-user runs the build on the board's own core where QEMU models it.
        let expected_qemu = match cpu.rustc_cpu.as_deref() {
            Some("arm1176jzf-s") => "arm1176",
            Some(c) => c,
            None if cpu.triple.starts_with("armv7") => "cortex-a7",
            None => "cortex-a53",
        };
        assert_eq!(cpu.qemu_cpu, expected_qemu, "{key}");
        let bin = build(cpu).unwrap_or_else(|e| panic!("{key}: {e:#}"));
        assert!(
            bin.ends_with(format!("{key}/benchboot-init")),
            "{}",
            bin.display()
        );
        assert!(std::fs::metadata(&bin).unwrap().len() > 100_000);
        if cpu.triple.starts_with("aarch64") {
            continue;
        }
        // The FP/SIMD level must not exceed the core's: the Cortex-A8 has VFPv3 + NEON
        // but no VFPv4 (fused multiply-add), which a Cortex-A7 build uses.
        let (arch, fp, simd) = arm_attributes(&bin);
        let (want_arch, want_fp) = match cpu.rustc_cpu.as_deref() {
            Some("arm1176jzf-s") => ("v6", "VFPv2"),
            Some("cortex-a7") => ("v7", "VFPv4"),
            Some("cortex-a8") => ("v7", "VFPv3"),
            None => ("v7", "VFPv3-D16"),
            Some(other) => panic!("{key}: no expected attributes for {other}"),
        };
        assert!(arch.starts_with(want_arch), "{key}: Tag_CPU_arch {arch}");
        assert_eq!(fp, want_fp, "{key}: Tag_FP_arch");
        let neon_allowed = matches!(cpu.rustc_cpu.as_deref(), Some("cortex-a7" | "cortex-a8"));
        assert!(
            neon_allowed || simd.is_empty(),
            "{key}: Tag_Advanced_SIMD_arch {simd}"
        );
    }
}
