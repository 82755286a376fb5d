//! Test support: loop devices, for tests that need a real block device (O_DIRECT,
//! fdatasync, device numbers).

use std::path::{Path, PathBuf};

/// A loop device over a sparse file, detached on drop (needs root and losetup, as CI
/// runs: fails, does not skip, without them).
pub struct Loop(pub PathBuf);

impl Loop {
    pub fn attach(file: &Path) -> Loop {
        let out = std::process::Command::new("losetup")
            .args(["--find", "--show"])
            .arg(file)
            .output()
            .expect("running losetup (util-linux): this test needs it, as root");
        assert!(
            out.status.success(),
            "losetup: {} (this test needs root and loop devices)",
            String::from_utf8_lossy(&out.stderr)
        );
        Loop(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = std::process::Command::new("losetup")
            .arg("-d")
            .arg(&self.0)
            .status();
    }
}
