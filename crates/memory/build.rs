//! `bb_armv7`: the 32-bit ARM build is ARMv7 (Cortex-A7/A8: NEON kernels compiled in,
//! chosen at run time by AT_HWCAP). The ARMv6 build (ARM1176: VFP, no NEON) has no
//! NEON code at all. rustc exposes no stable `cfg` for the ARM architecture version, so
//! the target triple says it.
#![forbid(unsafe_code)]

fn main() {
    println!("cargo::rustc-check-cfg=cfg(bb_armv7)");
    let target = std::env::var("TARGET").unwrap_or_default();
    if target.starts_with("armv7") || target.starts_with("thumbv7") {
        println!("cargo::rustc-cfg=bb_armv7");
    }
}
