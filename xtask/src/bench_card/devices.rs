//! The devices both tools meet: a loop device over a preallocated file on this machine's
//! disk ([`Genuine`]), and a fake card held by the `fake-card` binary of the system
//! tests' crate ([`FakeCard`]). Each is made fresh for every pass and gone on drop.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};

use anyhow::{bail, ensure, Context, Result};

/// A block device under test.
pub trait Device {
    fn path(&self) -> &Path;
}

/// `losetup --direct-io=on` over `file`, made with `fallocate -l BYTES` (every block
/// allocated, unwritten: no allocation inside a timed write, and no page cache of the
/// backing file between the loop device and the disk). Detached and removed on drop.
pub struct Genuine {
    dev: PathBuf,
    file: PathBuf,
}

impl Genuine {
    pub fn new(file: &Path, bytes: u64) -> Result<Genuine> {
        let _ = std::fs::remove_file(file);
        let st = Command::new("fallocate")
            .args(["-l", &bytes.to_string()])
            .arg(file)
            .status()
            .context("running fallocate (util-linux)")?;
        ensure!(
            st.success(),
            "fallocate -l {bytes} {} failed",
            file.display()
        );
        let out = Command::new("losetup")
            .args(["--find", "--show", "--direct-io=on"])
            .arg(file)
            .output()
            .context("running losetup (util-linux)")?;
        if !out.status.success() {
            let _ = std::fs::remove_file(file);
            bail!(
                "losetup --direct-io=on {}: {}",
                file.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(Genuine {
            dev: PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()),
            file: file.to_path_buf(),
        })
    }
}

impl Device for Genuine {
    fn path(&self) -> &Path {
        &self.dev
    }
}

impl Drop for Genuine {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.dev).status();
        let _ = std::fs::remove_file(&self.file);
    }
}

/// A fake card: the `fake-card SIZE MODEL` process (`tests/src/bin/fake-card.rs`) and
/// the loop device it printed. Dropping this closes its stdin, on which it detaches the
/// loop device and unmounts its filesystem; then it is waited for.
pub struct FakeCard {
    dev: PathBuf,
    child: Child,
    stdin: Option<ChildStdin>,
}

impl FakeCard {
    /// `bin SIZE MODEL` (`MODEL`: `wrap=BYTES`, `drop=BYTES`, `eio=BYTES`,
    /// `paced=WRITE,READ` in bytes/s).
    pub fn new(bin: &Path, size: u64, model: &str) -> Result<FakeCard> {
        let mut child = Command::new(bin)
            .arg(size.to_string())
            .arg(model)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .with_context(|| format!("running {}", bin.display()))?;
        let stdin = child.stdin.take();
        let mut line = String::new();
        let stdout = child.stdout.take().context("fake-card's stdout")?;
        BufReader::new(stdout).read_line(&mut line)?;
        let dev = PathBuf::from(line.trim());
        if !dev.starts_with("/dev/") {
            let _ = child.kill();
            let _ = child.wait();
            bail!(
                "{} {size} {model} printed no device (see its error above)",
                bin.display()
            );
        }
        Ok(FakeCard { dev, child, stdin })
    }
}

impl Device for FakeCard {
    fn path(&self) -> &Path {
        &self.dev
    }
}

impl Drop for FakeCard {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}
