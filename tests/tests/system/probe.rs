//! `benchboot probe` against real kernel block devices: a loop device over one file of a
//! FUSE filesystem written here (`fuser`, pure-Rust mount, as root straight on
//! /dev/fuse) whose storage wraps at N, drops writes past N or fails past N, and a loop
//! device over a sparse file (genuine). The file is opened with FOPEN_DIRECT_IO, so
//! the kernel's page cache of the FUSE file cannot hide the fake; the loop device runs
//! with `--direct-io=off` (its backing file is the FUSE file).
//!
//! Needs root, /dev/fuse and losetup: fails (does not skip) without them, as CI runs
//! as root on this kind of machine. Loop devices and the mount go on drop, also on
//! panic.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, UNIX_EPOCH};

use benchboot_probe::{Found, ProbeReport, Verdict};
use fuser::{
    Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, INodeNo, LockOwner, OpenFlags,
    ReplyAttr, ReplyData, ReplyEmpty, ReplyEntry, ReplyOpen, ReplyWrite, Request, WriteFlags,
};

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;
const SECTOR: u64 = 512;

#[derive(Debug, Clone, Copy)]
enum Model {
    Wrap {
        real: u64,
    },
    Drop {
        real: u64,
    },
    Eio {
        real: u64,
    },
    /// Holds everything; writes go at `fast` bytes/s below `knee` and `slow` past it
    /// (the end of an SLC cache), and a write holding a multiple of `stall_every` (not 0)
    /// sleeps `stall_ms` more. The sleeps set the pace: FUSE alone moves several
    /// hundred MiB/s, and unevenly.
    Timed {
        knee: u64,
        fast: u64,
        slow: u64,
        stall_every: u64,
        stall_ms: u64,
    },
}

/// One file, `card`, of `size` bytes whose storage behaves as `model` says.
struct FakeCard {
    size: u64,
    model: Model,
    /// Physical sector -> contents (sparse).
    data: Mutex<HashMap<u64, Vec<u8>>>,
}

const CARD: INodeNo = INodeNo(2);

impl FakeCard {
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

/// A loop device, detached on drop.
struct Loop(PathBuf);

impl Loop {
    fn attach(file: &Path) -> Loop {
        let out = Command::new("losetup")
            .args(["--find", "--show", "--direct-io=off"])
            .arg(file)
            .output()
            .expect("running losetup (util-linux): the probe test needs it, as root");
        assert!(
            out.status.success(),
            "losetup --find --show {}: {} (the probe test needs root and loop devices)",
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

/// A fake card: the FUSE mount and the loop device over its file (detached first).
struct Fake {
    dev: Loop,
    _session: fuser::BackgroundSession,
    _dir: tempfile::TempDir,
}

fn fake(size: u64, model: Model) -> Fake {
    let dir = tempfile::tempdir().unwrap();
    let mut config = fuser::Config::default();
    config.mount_options = vec![fuser::MountOption::FSName("benchboot-fake-card".into())];
    let fs = FakeCard {
        size,
        model,
        data: Mutex::new(HashMap::new()),
    };
    let session = fuser::spawn_mount(fs, dir.path(), &config).unwrap_or_else(|e| {
        panic!(
            "mounting the fake card's FUSE filesystem on {}: {e} (the probe test needs \
             root and /dev/fuse)",
            dir.path().display()
        )
    });
    let dev = Loop::attach(&dir.path().join("card"));
    Fake {
        dev,
        _session: session,
        _dir: dir,
    }
}

fn run_probe(tool: &Path, dev: &Path, out: &Path) -> (bool, ProbeReport, String) {
    run_probe_with(tool, dev, out, &["--cache-flush-mib", "8"])
}

fn run_probe_with(
    tool: &Path,
    dev: &Path,
    out: &Path,
    args: &[&str],
) -> (bool, ProbeReport, String) {
    let o = Command::new(tool)
        .arg("probe")
        .arg(dev)
        .args(["--yes", "--allow-virtual"])
        .args(args)
        .arg("--json")
        .arg(out)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let json = std::fs::read_to_string(out).unwrap_or_else(|e| panic!("{e}: {text}"));
    let report: ProbeReport = serde_json::from_str(&json).unwrap();
    (o.status.success(), report, text)
}

fn assert_real(r: &ProbeReport, real: u64, text: &str) {
    let got = r
        .real_bytes
        .unwrap_or_else(|| panic!("no real size: {text}"));
    assert!(
        got.abs_diff(real) <= r.resolution_bytes,
        "real size {got} vs {real} (resolution {}): {text}",
        r.resolution_bytes
    );
    let fb = r.first_bad.unwrap();
    assert!(
        fb >= real && fb - real <= r.resolution_bytes,
        "first bad {fb} vs {real}: {text}"
    );
}

#[test]
fn loop_devices_fake_and_genuine() {
    let _slot = benchboot_tests::qemu_slot(module_path!());
    let tool = xtask::qemu::build_host_tool(false).unwrap();
    let work = tempfile::tempdir().unwrap();
    let claimed = 4 * GIB;

    // Genuine: a sparse file of the same claimed size.
    let sparse = work.path().join("genuine.img");
    std::fs::File::create(&sparse)
        .unwrap()
        .set_len(claimed)
        .unwrap();
    let dev = Loop::attach(&sparse);
    let (ok, r, text) = run_probe(&tool, &dev.0, &work.path().join("genuine.json"));
    eprintln!("{text}");
    assert!(ok, "a genuine loop device exits 0: {text}");
    assert_eq!(r.verdict, Verdict::Genuine, "{text}");
    assert_eq!(r.claimed_bytes, claimed);
    assert!(text.contains("genuine: 4.0 GiB claimed"), "{text}");
    drop(dev);

    // Wraps at 1 GiB + 3 MiB + 5 sectors: not a power of two.
    let real = GIB + 3 * MIB + 5 * SECTOR;
    let card = fake(claimed, Model::Wrap { real });
    let (ok, r, text) = run_probe(&tool, &card.dev.0, &work.path().join("wrap.json"));
    eprintln!("{text}");
    assert!(!ok, "a fake exits non-zero: {text}");
    assert_eq!(r.verdict, Verdict::Fake { real_bytes: real }, "{text}");
    assert_eq!(r.wraps_at, Some(real), "{text}");
    assert_real(&r, real, &text);
    let (at, holds) = r
        .bad
        .iter()
        .find_map(|b| match b.found {
            Found::Alias { holds } => Some((b.offset, holds)),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no aliased block: {text}"));
    assert_eq!((at - holds) % real, 0, "{at} holds {holds}: {text}");
    assert!(text.contains("FAKE: claims 4.0 GiB"), "{text}");
    drop(card);

    // Wraps below the default 32 MiB of cache flush data, the classic counterfeit (a few
    // MiB of flash behind the claim): the period, exact, and said in words.
    for (claimed, real) in [
        (256 * MIB, 16 * MIB),
        (GIB, 48 * MIB + 5 * SECTOR),
        (64 * MIB, 3 * MIB + SECTOR),
    ] {
        let card = fake(claimed, Model::Wrap { real });
        let (ok, r, text) = run_probe_with(
            &tool,
            &card.dev.0,
            &work.path().join("small-wrap.json"),
            &[],
        );
        eprintln!("{text}");
        assert!(!ok, "{text}");
        assert_eq!(r.verdict, Verdict::Fake { real_bytes: real }, "{text}");
        assert_eq!(
            (r.wraps_at, r.first_bad),
            (Some(real), Some(real)),
            "{text}"
        );
        assert!(r.bad.iter().all(|b| b.offset >= real), "{text}");
        let words = format!(
            "is a wrap-around fake: it claims {} but holds {};",
            benchboot_probe::human(claimed),
            benchboot_probe::human(real)
        );
        assert!(text.contains(&words), "{words}: {text}");
        drop(card);
    }

    // The whole-card pass on kernel block devices: one whose writes slow to 16 MiB/s
    // past 24 MiB (the fall, within one interval), one that stalls 300 ms at every
    // 16 MiB (each stall, with its length), one that drops writes past 40 MiB + 3
    // sectors (the bad region, to the sector).
    let small = 64 * MIB;
    let store = work.path().join("store");
    let store_arg = store.to_str().unwrap();
    let full = |model: Model, name: &str| {
        let card = fake(small, model);
        let (ok, r, text) = run_probe_with(
            &tool,
            &card.dev.0,
            &work.path().join(name),
            &["--cache-flush-mib", "8", "--full", "--store", store_arg],
        );
        eprintln!("{text}");
        let f = r
            .full
            .clone()
            .unwrap_or_else(|| panic!("no whole-card pass in the JSON: {text}"));
        assert_eq!(f.written_bytes, small, "{text}");
        assert!(f.interval_bytes * 100 <= small, "{text}");
        (ok, f, text)
    };
    let knee = 24 * MIB;
    let (ok, f, text) = full(
        Model::Timed {
            knee,
            fast: 128 * MIB,
            slow: 16 * MIB,
            stall_every: 0,
            stall_ms: 0,
        },
        "knee.json",
    );
    assert!(ok, "{text}");
    assert_eq!(f.falls.len(), 1, "{text}");
    assert!(f.falls[0].at.abs_diff(knee) <= f.interval_bytes, "{text}");
    let after = f.falls[0].after_mib_s;
    assert!((12.0..=16.5).contains(&after), "{after}: {text}");
    assert!(text.contains("falls at      24.0 MiB"), "{text}");
    // Each size's latency, sampled after the read-back (the sizes below the pass's
    // own writes of 327.5 KiB: 512 KiB is left out on this small device).
    assert_eq!(
        f.latency_by_size
            .iter()
            .map(|l| l.io_bytes)
            .collect::<Vec<_>>(),
        vec![4096, 65536],
        "{text}"
    );
    assert!(text.contains("writes of   4.0 KiB: p50"), "{text}");
    // The run is in the store: its report has the pass and draws its profile, and
    // compare sets it beside another run with a row per figure.
    let id = text
        .lines()
        .find_map(|l| l.strip_prefix("stored        run ")?.split(' ').next())
        .unwrap_or_else(|| panic!("no stored run: {text}"))
        .to_owned();
    assert!(id.starts_with("host-probe-"), "{id}");
    let plots = work.path().join("plots");
    let o = Command::new(&tool)
        .args(["report", &id, "--store", store_arg, "--plots"])
        .arg(&plots)
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{report}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(report.contains("The whole card: /dev/loop"), "{report}");
    assert!(report.contains("falls at      24.0 MiB"), "{report}");
    assert!(
        plots.join(format!("{id}-card-profile.svg")).is_file(),
        "{report}"
    );
    let (ok, f, text) = full(
        Model::Timed {
            knee: u64::MAX,
            fast: 128 * MIB,
            slow: 1,
            stall_every: 16 * MIB,
            stall_ms: 300,
        },
        "stalls.json",
    );
    assert!(ok, "{text}");
    // Each stall found with its length. A busy CI machine may add a hiccup of its own
    // (the fake clock's unit test counts them exactly).
    for k in 1..=3u64 {
        let at = k * 16 * MIB;
        let s = f
            .stalls
            .iter()
            .find(|s| s.at <= at && at < s.at + f.io_bytes)
            .unwrap_or_else(|| panic!("no stall at {at}: {text}"));
        assert!(
            (290..450).contains(&(s.excess_ns / 1_000_000)),
            "{s:?}: {text}"
        );
    }
    let stalls_id = text
        .lines()
        .find_map(|l| l.strip_prefix("stored        run ")?.split(' ').next())
        .unwrap_or_else(|| panic!("no stored run: {text}"))
        .to_owned();
    let o = Command::new(&tool)
        .args(["compare", &id, &stalls_id, "--store", store_arg, "--plots"])
        .arg(&plots)
        .output()
        .unwrap();
    let cmp = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{cmp}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        cmp.contains("write, sustained (after the fast cache)"),
        "{cmp}"
    );
    assert!(plots.join("compare-card-profile.svg").is_file(), "{cmp}");
    let real = 40 * MIB + 3 * SECTOR;
    let (ok, f, text) = full(Model::Drop { real }, "full-drop.json");
    assert!(!ok, "{text}");
    assert_eq!(f.first_bad, Some(real), "{text}");
    assert_eq!((f.good_bytes, f.bad_bytes), (real, small - real), "{text}");
    assert!(text.contains("bad regions   1"), "{text}");

    // Drops writes past 1.5 GiB + 7 sectors (reads zeros).
    let real = GIB + GIB / 2 + 7 * SECTOR;
    let card = fake(claimed, Model::Drop { real });
    let (ok, r, text) = run_probe(&tool, &card.dev.0, &work.path().join("drop.json"));
    eprintln!("{text}");
    assert!(!ok, "{text}");
    assert!(matches!(r.verdict, Verdict::Fake { .. }), "{text}");
    assert_real(&r, real, &text);
    assert!(r.bad.iter().all(|b| b.found == Found::Zeros), "{text}");
    drop(card);

    // EIO past 700 MiB + 3 sectors.
    let real = 700 * MIB + 3 * SECTOR;
    let card = fake(claimed, Model::Eio { real });
    let (ok, r, text) = run_probe(&tool, &card.dev.0, &work.path().join("eio.json"));
    eprintln!("{text}");
    assert!(!ok, "{text}");
    let Verdict::IoErrors { first_at } = r.verdict else {
        panic!("{text}")
    };
    assert!(first_at.abs_diff(real) <= r.resolution_bytes, "{text}");
    assert_real(&r, real, &text);
    assert!(r.bad.iter().all(|b| b.found.is_io_error()), "{text}");
    drop(card);
}
