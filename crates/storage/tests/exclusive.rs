//! A raw target is written only through an exclusive claim (Linux `O_EXCL` on a block
//! device): while anything else claims the device (a mount, another `O_EXCL` opener),
//! the sweep and the random writes fail `EBUSY` instead of writing under it.
//!
//! Needs root and losetup (util-linux) for a loop device over a sparse file: fails
//! (does not skip) without them, as CI runs as root on this kind of machine (as the
//! probe system test does). The loop device goes on drop, also on panic.
#![forbid(unsafe_code)]
#![cfg(target_os = "linux")]

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use benchboot_plan::{Filesystem, Mode, StorageTarget};
use benchboot_results::RandomOp;
use benchboot_storage::engine::Caps;
use benchboot_storage::os::open_with;
use benchboot_storage::sweep::{measure_pair, random_io, FileCache, Place};

/// A loop device, detached on drop.
struct Loop(PathBuf);

impl Loop {
    fn attach(file: &Path) -> Loop {
        let out = Command::new("losetup")
            .args(["--find", "--show"])
            .arg(file)
            .output()
            .expect("running losetup (util-linux): this test needs it, as root");
        assert!(
            out.status.success(),
            "losetup --find --show {}: {} (this test needs root and loop devices)",
            file.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        Loop(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.0).status();
    }
}

#[test]
fn a_raw_target_claimed_elsewhere_is_not_written() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("disk.img");
    std::fs::File::create(&file)
        .unwrap()
        .set_len(8 << 20)
        .unwrap();
    let dev = Loop::attach(&file);
    let place = Place {
        target: StorageTarget {
            label: "raw".into(),
            device: dev.0.display().to_string(),
            filesystem: Filesystem::Raw,
            optional: false,
        },
        path: dev.0.clone(),
        logical_block_size: 512,
        capacity: Some(8 << 20),
    };
    let caps = Caps {
        bytes: 1 << 20,
        time_ns: 5_000_000_000,
    };
    let sweep = || measure_pair(&place, caps, 64 << 10, Mode::Sync, 0, &FileCache);
    let random = || random_io(&place, RandomOp::Write, 4096, 1 << 20, 2, Duration::ZERO);

    // Someone else holds the device (as a mount does): nothing is written.
    let claim = open_with(OpenOptions::new().read(true), &dev.0, false, true).unwrap();
    let e = sweep().unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EBUSY), "sweep: {e}");
    let e = random().unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EBUSY), "random writes: {e}");
    let untouched = std::fs::read(&file).unwrap();
    assert!(untouched.iter().all(|&b| b == 0), "the device was written");
    drop(claim);

    // Free again: the sweep writes and reads its 1 MiB, the random writes run with two
    // threads under the run's own claim.
    let pair = sweep().unwrap();
    assert_eq!(pair.len(), 2);
    assert!(pair.iter().all(|m| m.bytes == 1 << 20), "{pair:?}");
    let r = random().unwrap();
    assert!(r.ios >= 2, "{r:?}");
}
