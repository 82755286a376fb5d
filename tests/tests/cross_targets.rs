//! The same firmware code builds for every supported target and passes every gate
//! (static, ELF machine, ARM attributes, runs under qemu-user). The ARMv6 target is
//! built and gated by the QEMU smoke test.

use xtask::firmware::{build, CpuTarget};

#[test]
fn builds_for_armv7_and_aarch64() {
    for triple in [
        "armv7-unknown-linux-musleabihf",
        "aarch64-unknown-linux-musl",
    ] {
        let cpu = CpuTarget::baseline(triple).unwrap();
        let bin = build(&cpu).unwrap_or_else(|e| panic!("{triple}: {e:#}"));
        assert!(
            bin.ends_with(format!("{triple}/benchboot-init")),
            "{}",
            bin.display()
        );
        assert!(std::fs::metadata(&bin).unwrap().len() > 100_000);
    }
}
