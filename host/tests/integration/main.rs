//! The host crate's integration tests, one module per area, linked into one test binary
//! (one link of `benchboot` and its dependencies instead of one per file). Fixtures stay
//! in `tests/data/` and `tests/fixtures/`; insta keeps its snapshots in
//! `tests/integration/snapshots/`, named `integration__<module>__<name>.snap`.
//!
//! Tests of all modules run in parallel threads of this one process: a test that sets
//! an environment variable holds [`ENV`] while it does (see `collect_discover`).
//!
//! The modules that need Linux or macOS (flash's sysfs trees, `O_DIRECT` and diskutil,
//! prepare-disk, field-test, memory, relay) are `cfg(unix)`; the rest, `flash_raw`
//! included, also run as a Windows build under wine (`tests/tests/system/host_cross.rs`).
#![forbid(unsafe_code)]

mod boards_built_in;
mod card_litter;
mod cli_errors;
mod collect_card;
mod collect_discover;
mod collect_journal;
mod collect_log;
mod collect_net;
mod collect_store;
mod compare_verdict;
mod emulated_everywhere;
mod fake_board;
mod fetch;
#[cfg(unix)]
mod field_test_hil;
#[cfg(unix)]
mod flash_devices;
#[cfg(unix)]
mod flash_diskutil;
mod flash_raw;
#[cfg(unix)]
mod flash_write;
mod headline;
mod hostile_text;
#[cfg(unix)]
mod memory_cli;
mod peer_wifi;
mod plan_write;
mod power_record;
#[cfg(unix)]
mod prepare_disk;
#[cfg(unix)]
mod relay;
mod report_compare;
mod report_formats;
mod report_plots;
mod report_snapshots;
mod store_lock;
mod store_recovery;
mod terminal_width;
#[cfg(target_os = "linux")]
mod write_targets;

/// Held by a test while it changes this process's environment or starts a process that
/// inherits it, so that no other test reads a value meant for one test.
pub static ENV: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Takes [`ENV`], also after a test that held it panicked (the environment is restored
/// by the holder's own guard).
pub fn env_lock() -> std::sync::MutexGuard<'static, ()> {
    ENV.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Waits until `cmd` (a file this test just wrote and made executable) can be executed,
/// running it once; panics on any other error, or after 10 s.
///
/// A test thread's fork can inherit the writer's descriptor of the new file for the
/// moment until its own `exec`; meanwhile `execve` of the file fails with ETXTBSY
/// (fs/exec.c `deny_write_access`). Once one exec succeeds no descriptor is left: only a
/// fork made before this test closed its file could hold one. `cmd` must do nothing
/// harmful (`--version`, or a script's probe variable).
#[cfg(unix)]
pub fn wait_until_executable(cmd: &mut std::process::Command) {
    const ETXTBSY: i32 = 26;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        match cmd.output() {
            Ok(_) => return,
            Err(e) if e.raw_os_error() == Some(ETXTBSY) && std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(10))
            }
            Err(e) => panic!("{cmd:?}: {e}"),
        }
    }
}

/// `collect --from-card CARD --store STORE`, as the CLI passes it (1 s timeout, no
/// progress bar, LAVA's check on).
pub fn from_card(card: &std::path::Path, store: &std::path::Path) -> benchboot::collect::Options {
    benchboot::collect::Options {
        addr: None,
        from_card: Some(card.to_owned()),
        from_log: None,
        run: None,
        token: None,
        lava_check: true,
        store: Some(store.to_owned()),
        timeout: std::time::Duration::from_secs(1),
        progress: false,
    }
}

/// `len` bytes of xorshift noise from `seed`, an MBR boot signature at bytes 510-511:
/// a disk image `flash` accepts, whose every chunk differs.
pub fn image_noise(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed;
    let mut v: Vec<u8> = (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect();
    v[510] = 0x55;
    v[511] = 0xaa;
    v
}
