//! A fake SD card as a kernel block device: one file, `card`, of a FUSE filesystem
//! written here (`fuser`, a pure-Rust mount, as root straight on /dev/fuse) whose storage
//! wraps at N, drops writes past N, fails past N, or holds everything at a pace its
//! sleeps set ([`Model`]); and a loop device over that file ([`fake`]).
//!
//! The file is opened with `FOPEN_DIRECT_IO`, so the kernel's page cache of the FUSE file
//! cannot hide the fake; the loop device runs with `--direct-io=off` (its backing file
//! is the FUSE file). Data lives in memory, sparse, one 512-byte sector at a time: a
//! fake holds at most what it stores (its real size, or the claimed size for
//! [`Model::Timed`]).
//!
//! Users: `tests/tests/system/probe.rs` (`benchboot probe` against fakes), and
//! `cargo xtask bench card` through the `fake-card` binary (`src/bin/fake-card.rs`),
//! which mounts one, prints its loop device and holds it until its stdin closes. The
//! bench runs that binary instead of linking this module because xtask cannot depend on
//! this crate (this crate depends on xtask), and a FUSE filesystem in xtask itself would
//! put `fuser` into every `cargo xtask` build.
//!
//! Needs root, /dev/fuse and losetup. The loop device and the mount go on drop, also on
//! panic.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, UNIX_EPOCH};

use anyhow::{bail, ensure, Context, Result};
use fuser::{
    Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, INodeNo, LockOwner, OpenFlags,
    ReplyAttr, ReplyData, ReplyEmpty, ReplyEntry, ReplyOpen, ReplyWrite, Request, WriteFlags,
};

/// The fake's sector: its unit of storage, bytes.
pub const SECTOR: u64 = 512;

/// How a fake card's storage behaves. Sizes and offsets are bytes, rates bytes/s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Model {
    /// Holds `real` bytes: a write at offset `o` lands on `o % real` (over the data
    /// below), a read of `o` reads `o % real`.
    Wrap { real: u64 },
    /// Holds the first `real` bytes; writes past them vanish, reads there give zeros.
    Drop { real: u64 },
    /// Holds the first `real` bytes; a read or write that reaches past them fails (EIO).
    Eio { real: u64 },
    /// Holds everything; writes go at `fast` bytes/s below `knee` and `slow` past it
    /// (the end of an SLC cache), and a write holding a multiple of `stall_every` (not 0)
    /// sleeps `stall_ms` more; reads go at `read` bytes/s (0: as fast as FUSE answers).
    /// The sleeps set the pace: FUSE alone moves several hundred MiB/s, and unevenly.
    Timed {
        knee: u64,
        fast: u64,
        slow: u64,
        stall_every: u64,
        stall_ms: u64,
        read: u64,
    },
}

impl Model {
    /// A card that writes at `write` bytes/s and reads at `read` bytes/s (0: unpaced)
    /// from first to last sector, no fall, no stall.
    pub fn paced(write: u64, read: u64) -> Model {
        Model::Timed {
            knee: u64::MAX,
            fast: write,
            slow: write,
            stall_every: 0,
            stall_ms: 0,
            read,
        }
    }

    /// Parses `wrap=BYTES`, `drop=BYTES`, `eio=BYTES` or `paced=WRITE,READ` (bytes/s;
    /// READ 0: unpaced), the `fake-card` binary's argument.
    pub fn parse(s: &str) -> Result<Model> {
        let (kind, value) = s
            .split_once('=')
            .with_context(|| format!("{s:?}: want KIND=VALUE"))?;
        let num = |v: &str| -> Result<u64> {
            v.trim()
                .parse()
                .with_context(|| format!("{v:?} in {s:?} is not a whole number"))
        };
        let model = match kind {
            "wrap" => Model::Wrap { real: num(value)? },
            "drop" => Model::Drop { real: num(value)? },
            "eio" => Model::Eio { real: num(value)? },
            "paced" => {
                let (w, r) = value
                    .split_once(',')
                    .with_context(|| format!("{s:?}: want paced=WRITE,READ (bytes/s)"))?;
                Model::paced(num(w)?, num(r)?)
            }
            other => bail!("unknown model {other:?}: wrap, drop, eio or paced"),
        };
        match model {
            Model::Wrap { real } | Model::Drop { real } | Model::Eio { real } => {
                ensure!(real > 0, "{s:?}: the real size must be above 0");
            }
            Model::Timed { fast, .. } => ensure!(fast > 0, "{s:?}: the write rate must be above 0"),
        }
        Ok(model)
    }
}

/// One file, `card`, of `size` bytes whose storage behaves as `model` says.
pub struct FakeCard {
    size: u64,
    model: Model,
    /// Physical sector -> contents (sparse).
    data: Mutex<HashMap<u64, Vec<u8>>>,
}

const CARD: INodeNo = INodeNo(2);

impl FakeCard {
    /// A card claiming `size` bytes (the file's length), empty (reads zeros).
    pub fn new(size: u64, model: Model) -> FakeCard {
        FakeCard {
            size,
            model,
            data: Mutex::new(HashMap::new()),
        }
    }

    fn attr(&self, ino: INodeNo) -> FileAttr {
        let file = ino == CARD;
        FileAttr {
            ino,
            size: if file { self.size } else { 0 },
            blocks: 0,
            atime: UNIX_EPOCH,
            mtime: UNIX_EPOCH,
            ctime: UNIX_EPOCH,
            crtime: UNIX_EPOCH,
            kind: if file {
                FileType::RegularFile
            } else {
                FileType::Directory
            },
            perm: if file { 0o600 } else { 0o755 },
            nlink: if file { 1 } else { 2 },
            uid: 0,
            gid: 0,
            rdev: 0,
            flags: 0,
            blksize: 512,
        }
    }

    /// Where the byte range at `off` is kept: None = dropped, Err = EIO.
    fn place(&self, off: u64, len: u64) -> Result<Option<u64>, ()> {
        match self.model {
            Model::Wrap { real } => Ok(Some(off % real)),
            Model::Drop { real } => Ok((off < real).then_some(off)),
            Model::Timed { .. } => Ok(Some(off)),
            Model::Eio { real } => {
                if off + len > real {
                    Err(())
                } else {
                    Ok(Some(off))
                }
            }
        }
    }
}

const TTL: Duration = Duration::from_secs(1);

impl Filesystem for FakeCard {
    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        if parent == INodeNo::ROOT && name == "card" {
            reply.entry(&TTL, &self.attr(CARD), fuser::Generation(0));
        } else {
            reply.error(Errno::ENOENT);
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        if ino == INodeNo::ROOT || ino == CARD {
            reply.attr(&TTL, &self.attr(ino));
        } else {
            reply.error(Errno::ENOENT);
        }
    }

    fn open(&self, _req: &Request, _ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        // No page cache for this file: every read and write reaches `read`/`write`.
        reply.opened(FileHandle(0), FopenFlags::FOPEN_DIRECT_IO);
    }

    fn read(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        let end = (offset + u64::from(size)).min(self.size);
        let mut out = vec![0u8; end.saturating_sub(offset) as usize];
        let data = self.data.lock().unwrap();
        let mut at = offset;
        while at < end {
            let in_sector = at % SECTOR;
            let n = (SECTOR - in_sector).min(end - at);
            match self.place(at - in_sector, SECTOR) {
                Err(()) => return reply.error(Errno::EIO),
                Ok(Some(p)) => {
                    if let Some(s) = data.get(&(p / SECTOR)) {
                        let i = (at - offset) as usize;
                        out[i..i + n as usize]
                            .copy_from_slice(&s[in_sector as usize..(in_sector + n) as usize]);
                    }
                }
                Ok(None) => {}
            }
            at += n;
        }
        drop(data);
        if let Model::Timed { read, .. } = self.model {
            if read > 0 {
                std::thread::sleep(Duration::from_secs_f64(out.len() as f64 / read as f64));
            }
        }
        reply.data(&out);
    }

    fn write(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        buf: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        let end = offset + buf.len() as u64;
        if end > self.size {
            return reply.error(Errno::ENOSPC);
        }
        let mut data = self.data.lock().unwrap();
        let mut at = offset;
        while at < end {
            let in_sector = at % SECTOR;
            let n = (SECTOR - in_sector).min(end - at);
            match self.place(at - in_sector, SECTOR) {
                Err(()) => return reply.error(Errno::EIO),
                Ok(Some(p)) => {
                    let s = data
                        .entry(p / SECTOR)
                        .or_insert_with(|| vec![0u8; SECTOR as usize]);
                    let i = (at - offset) as usize;
                    s[in_sector as usize..(in_sector + n) as usize]
                        .copy_from_slice(&buf[i..i + n as usize]);
                }
                Ok(None) => {}
            }
            at += n;
        }
        drop(data);
        if let Model::Timed {
            knee,
            fast,
            slow,
            stall_every,
            stall_ms,
            ..
        } = self.model
        {
            let slow_bytes = end - offset.max(knee).min(end);
            let fast_bytes = end - offset - slow_bytes;
            let mut pause = Duration::from_secs_f64(
                fast_bytes as f64 / fast as f64 + slow_bytes as f64 / slow as f64,
            );
            if stall_every > 0 && offset.div_ceil(stall_every).max(1) * stall_every < end {
                pause += Duration::from_millis(stall_ms);
            }
            std::thread::sleep(pause);
        }
        reply.written(buf.len() as u32);
    }

    fn flush(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        reply.ok();
    }

    fn fsync(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        reply.ok();
    }
}

/// A loop device (`/dev/loopN`, the path in `.0`), detached on drop.
pub struct Loop(pub PathBuf);

impl Loop {
    /// `losetup --find --show --direct-io=off FILE`: the next free loop device over
    /// `file`.
    pub fn attach(file: &Path) -> Result<Loop> {
        let out = Command::new("losetup")
            .args(["--find", "--show", "--direct-io=off"])
            .arg(file)
            .output()
            .context("running losetup (util-linux): a fake card needs it, as root")?;
        ensure!(
            out.status.success(),
            "losetup --find --show {}: {} (a fake card needs root and loop devices)",
            file.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
        Ok(Loop(PathBuf::from(
            String::from_utf8_lossy(&out.stdout).trim(),
        )))
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.0).status();
    }
}

/// A fake card: the FUSE mount and the loop device over its file (the loop device is
/// detached first, then the filesystem unmounted, then its folder removed).
pub struct Fake {
    /// The block device to hand to the tool under test.
    pub dev: Loop,
    _session: fuser::BackgroundSession,
    _dir: tempfile::TempDir,
}

/// Mounts a [`FakeCard`] of `size` bytes behaving as `model` on a temporary folder and
/// attaches a loop device over its `card`.
pub fn fake(size: u64, model: Model) -> Result<Fake> {
    let dir = tempfile::tempdir().context("a folder for the fake card's mount")?;
    let mut config = fuser::Config::default();
    config.mount_options = vec![fuser::MountOption::FSName("benchboot-fake-card".into())];
    let session = fuser::spawn_mount(FakeCard::new(size, model), dir.path(), &config)
        .with_context(|| {
            format!(
                "mounting the fake card's FUSE filesystem on {} (needs root and /dev/fuse)",
                dir.path().display()
            )
        })?;
    let dev = Loop::attach(&dir.path().join("card"))?;
    Ok(Fake {
        dev,
        _session: session,
        _dir: dir,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_parse_from_the_binarys_argument() {
        assert_eq!(
            Model::parse("wrap=16777216").unwrap(),
            Model::Wrap { real: 16 << 20 }
        );
        assert_eq!(Model::parse("drop=5").unwrap(), Model::Drop { real: 5 });
        assert_eq!(Model::parse("eio=7").unwrap(), Model::Eio { real: 7 });
        assert_eq!(
            Model::parse("paced=41943040,0").unwrap(),
            Model::paced(40 << 20, 0)
        );
        for bad in ["wrap", "wrap=0", "wrap=x", "paced=1", "paced=0,1", "spin=3"] {
            assert!(Model::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn storage_follows_the_model() {
        let wrap = FakeCard::new(1 << 20, Model::Wrap { real: 4096 });
        assert_eq!(wrap.place(4096 + 512, 512), Ok(Some(512)));
        let drop = FakeCard::new(1 << 20, Model::Drop { real: 4096 });
        assert_eq!(
            (drop.place(0, 512), drop.place(4096, 512)),
            (Ok(Some(0)), Ok(None))
        );
        let eio = FakeCard::new(1 << 20, Model::Eio { real: 4096 });
        assert_eq!(
            (eio.place(3584, 512), eio.place(3584, 1024)),
            (Ok(Some(3584)), Err(()))
        );
    }
}
