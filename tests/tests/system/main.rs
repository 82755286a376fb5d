//! The system tests, one module per area, linked into one test binary (one link of
//! xtask, the host tool and the firmware instead of one per file).
//!
//! The harness runs tests in parallel threads. Every test that boots QEMU, builds
//! images or cross-builds takes `benchboot_tests::qemu_slot(module_path!())` first, so
//! that only the tests of one module run side by side, as when each module was a test
//! binary of its own: the QEMU tiers together, everything else alone. `bad_input` and
//! `log_decode` need no slot (no QEMU, no build, no fixed port).
//!
//! QEMU runs: `cargo test -p benchboot-tests --test system qemu_smoke` (a module name
//! filters its tests). A missing QEMU machine or tool fails under CI (`CI=true`) and is
//! skipped elsewhere (`benchboot_tests::needs`).
#![forbid(unsafe_code)]

mod arm32_units;
mod bad_input;
mod browser;
mod cross_targets;
mod energy;
mod host_cross;
mod lava;
mod log_decode;
mod probe;
mod qemu_bpim2u;
mod qemu_faults;
mod qemu_plan_file;
mod qemu_powercut;
mod qemu_smoke;
mod qemu_tiers;
mod qemu_virt;
mod qemu_watchdog;
mod reproducible_image;
mod uboot_cards;
