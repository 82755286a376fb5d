//! The storage plan's steps over real files and devices: the sweep (write then read per
//! block size and mode), `hdparm`-style device reads, random IOPS and verification.
//!
//! Shared by PID 1 (which runs each step in a forked worker) and the host tool
//! (`benchboot storage --path DIR`, in process), so both measure with the same code.
//! Page-cache control is a trait ([`PageCache`]) so tests can prove where it happens.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use benchboot_plan::{DeviceReadPlan, Filesystem, Mode, StorageTarget};
use benchboot_results::{
    DeviceRead, DeviceReadKind, Direction, RandomIo, RandomOp, StorageMeasurement, Verify,
};

use crate::engine::{
    fill_pattern, first_mismatch, pattern_block, random_loop, stamp_block, timed_read_recorded,
    timed_write_recorded, Caps, Clock, MonotonicClock, PassRecord, RandomOffsets, SyncFile, Timed,
};
use crate::os;
use crate::AlignedBuf;
use benchboot_results::latency::LatencyHistogram;

/// The file each sweep pass writes and reads on a filesystem target.
pub const BENCH_FILE: &str = "benchboot.dat";
/// The region file of random I/O on a filesystem target.
pub const RANDOM_FILE: &str = "benchboot-random.dat";
/// The file of the verification pass on a filesystem target.
pub const VERIFY_FILE: &str = "benchboot-verify.dat";

/// Empties the page cache of what a pass just wrote, so the next read comes from the
/// device. Called between every write and read.
pub trait PageCache {
    fn drop_caches(&self, file: &File) -> io::Result<()>;
}

/// On the board (root, PID 1): evict the file, then `sync` + `drop_caches=3`.
pub struct WholeCache;
impl PageCache for WholeCache {
    fn drop_caches(&self, file: &File) -> io::Result<()> {
        os::evict_file(file)?;
        os::drop_caches()
    }
}

/// On a host (maybe not root): evict the file's own pages with `posix_fadvise`.
pub struct FileCache;
impl PageCache for FileCache {
    fn drop_caches(&self, file: &File) -> io::Result<()> {
        os::evict_file(file)
    }
}

/// A target resolved to something to open.
#[derive(Debug, Clone)]
pub struct Place {
    pub target: StorageTarget,
    /// Folder for filesystem/dir targets; the block device for raw ones.
    pub path: PathBuf,
    /// Alignment `O_DIRECT` needs here, bytes.
    pub logical_block_size: u64,
    /// Bytes available to a raw target (its partition size).
    pub capacity: Option<u64>,
}

impl Place {
    fn is_raw(&self) -> bool {
        self.target.filesystem == Filesystem::Raw
    }

    fn file(&self, name: &str) -> PathBuf {
        if self.is_raw() {
            self.path.clone()
        } else {
            self.path.join(name)
        }
    }

    /// Opens a step's file, or the device of a raw target; a raw target is opened for
    /// writing `O_EXCL` ([`os::open_with`]): `EBUSY` while anything has it mounted or
    /// claimed, never a write under a mounted filesystem.
    fn open(&self, name: &str, write: bool, direct: bool) -> io::Result<File> {
        let mut o = OpenOptions::new();
        if write {
            o.write(true);
            if !self.is_raw() {
                o.create(true).truncate(true);
            }
        } else {
            o.read(true);
        }
        if write && self.is_raw() {
            os::open_with(&mut o, &self.file(name), direct, true)
        } else if direct {
            os::open_direct(&mut o, &self.file(name))
        } else if write {
            o.open(self.file(name))
        } else {
            os::open_read_uncached(&self.file(name))
        }
    }

    /// Removes a step's file from a filesystem target (raw targets keep nothing). Sweep
    /// passes truncate and rewrite one file, as `dd` does, so the filesystem's allocator
    /// sees the seeds' pattern; remove [`BENCH_FILE`] once the target's sweep is done,
    /// before the next step needs the space.
    pub fn clean_up(&self, name: &str) {
        if !self.is_raw() {
            let _ = std::fs::remove_file(self.file(name));
        }
    }

    /// Limits `bytes` to what the target holds (raw partitions), whole blocks.
    fn clamp(&self, bytes: u64, block: u64) -> u64 {
        match self.capacity {
            Some(c) => bytes.min(c / block * block),
            None => bytes,
        }
    }
}

/// The mode that can run: `O_DIRECT` needs whole logical blocks, so smaller sizes run
/// as [`Mode::Sync`], with the reason.
pub fn effective_mode(
    requested: Mode,
    block_size: u64,
    logical_block_size: u64,
) -> (Mode, Option<String>) {
    if requested == Mode::Direct && !block_size.is_multiple_of(logical_block_size.max(1)) {
        let note = format!(
            "{block_size} B is not a multiple of the {logical_block_size} B logical block size: O_DIRECT impossible, ran sync"
        );
        return (Mode::Sync, Some(note));
    }
    (requested, None)
}

/// The logical and physical block sizes of the disk holding `/dev/<name>` (a disk or a
/// partition), from sysfs `queue/`.
pub fn block_sizes_of(sys_block: &Path, name: &str) -> io::Result<(u64, u64)> {
    let dev = sys_block.join(name);
    let disk = if dev.join("partition").exists() {
        dev.canonicalize()?
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or(dev)
    } else {
        dev
    };
    let read = |f: &str| -> io::Result<u64> {
        std::fs::read_to_string(disk.join("queue").join(f))?
            .trim()
            .parse()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("{f}: {e}")))
    };
    Ok((read("logical_block_size")?, read("physical_block_size")?))
}

/// Where the I/O buffers start: a page boundary (4 KiB), or the logical block size when
/// larger. `O_DIRECT` needs only the logical block size (512 B on most disks), but a
/// buffer that starts mid-page spans one page more than its length, so every direct
/// request carries one more segment than dd's or fio's (both allocate page-aligned
/// buffers).
fn buffer_align(place: &Place) -> usize {
    place.logical_block_size.max(4096) as usize
}

/// One write pass then one read pass at `block_size`, in `requested` mode when it can run.
/// The pass truncates and rewrites [`BENCH_FILE`]; [`Place::clean_up`] removes it.
///
/// # Errors
/// The first I/O error (ENOSPC, EIO, ...).
pub fn measure_pair(
    place: &Place,
    caps: Caps,
    block_size: u64,
    requested: Mode,
    repetition: u32,
    cache: &dyn PageCache,
) -> io::Result<Vec<StorageMeasurement>> {
    let (mut mode, mut note) = effective_mode(requested, block_size, place.logical_block_size);
    let caps = Caps {
        bytes: place.clamp(caps.bytes, block_size),
        time_ns: caps.time_ns,
    };
    if caps.bytes == 0 {
        return Err(io::Error::other(format!(
            "{block_size} B does not fit on {}",
            place.path.display()
        )));
    }
    let mut buf = AlignedBuf::new(block_size as usize, buffer_align(place));
    buf.copy_from_slice(&pattern_block(
        block_size as usize,
        block_size ^ u64::from(repetition),
    ));
    let file = match place.open(BENCH_FILE, true, mode == Mode::Direct) {
        Err(e) if mode == Mode::Direct && os::is_einval(&e) => {
            mode = Mode::Sync;
            note = Some(format!(
                "O_DIRECT refused by {} (EINVAL): ran sync",
                place.target.filesystem.name()
            ));
            place.open(BENCH_FILE, true, false)?
        }
        other => other?,
    };
    // Nothing of an earlier pass may sit in the page cache or the dirty lists.
    cache.drop_caches(&file)?;
    let mut sink = SyncFile(file);
    // The stamps' tag names the pass: block size, repetition and mode.
    let tag = block_size ^ (u64::from(repetition) << 40) ^ (u64::from(mode == Mode::Direct) << 63);
    // Both passes' histograms and timelines are allocated before either clock starts.
    let (mut write_rec, mut read_rec) = (PassRecord::new(), PassRecord::new());
    let write_begin = crate::engine::boottime_ns();
    let w = timed_write_recorded(
        &mut sink,
        &mut buf,
        tag,
        caps,
        &mut MonotonicClock,
        &mut write_rec,
    )?;
    // A read right after a write would be served from the page cache.
    cache.drop_caches(&sink.0)?;
    drop(sink);
    let mut source = SyncFile(place.open(BENCH_FILE, false, mode == Mode::Direct)?);
    let read_caps = Caps {
        bytes: w.bytes,
        time_ns: caps.time_ns,
    };
    let read_begin = crate::engine::boottime_ns();
    let r = timed_read_recorded(
        &mut source,
        &mut buf,
        read_caps,
        &mut MonotonicClock,
        &mut read_rec,
    )?;
    drop(source);
    let m = |direction, t: Timed, rec: PassRecord, begin_ns| {
        let (latency, timeline) = rec.into_results(&t);
        StorageMeasurement {
            target: place.target.label.clone(),
            filesystem: place.target.filesystem,
            block_size,
            direction,
            mode,
            requested_mode: requested,
            note: note.clone(),
            repetition,
            bytes: t.bytes,
            nanos: t.nanos,
            stopped_by: t.stopped_by,
            begin_ns: Some(begin_ns),
            latency,
            timeline,
        }
    };
    Ok(vec![
        m(Direction::Write, w, write_rec, write_begin),
        m(Direction::Read, r, read_rec, read_begin),
    ])
}

/// `hdparm -T` and `-t` on one disk: cached re-reads of the first chunk, then sequential
/// reads from the device after dropping the caches.
pub fn device_reads(
    disk: &Path,
    plan: &DeviceReadPlan,
    cache: &dyn PageCache,
) -> io::Result<Vec<DeviceRead>> {
    let file = File::open(disk)?;
    let chunk = plan.chunk_bytes as usize;
    let mut buf = vec![0u8; chunk];
    let timed = |kind, ms: u64, sequential: bool, buf: &mut [u8]| -> io::Result<DeviceRead> {
        let (start, until) = (Instant::now(), Duration::from_millis(ms));
        let (mut bytes, mut offset) = (0u64, 0u64);
        while start.elapsed() < until {
            let n = file.read_at(buf, offset)?;
            if n == 0 {
                break;
            }
            bytes += n as u64;
            if sequential {
                offset += n as u64;
            }
        }
        Ok(DeviceRead {
            device: disk.display().to_string(),
            kind,
            bytes,
            nanos: start.elapsed().as_nanos() as u64,
        })
    };
    file.read_exact_at(&mut buf, 0)?; // prime the cache for -T
    let cached = timed(DeviceReadKind::Cached, plan.cached_ms, false, &mut buf)?;
    cache.drop_caches(&file)?;
    let buffered = timed(DeviceReadKind::Buffered, plan.buffered_ms, true, &mut buf)?;
    Ok(vec![cached, buffered])
}

/// Writes the random-I/O region once (untimed), so reads hit written blocks; every
/// sector stamped with its position ([`stamp_block`]), none alike.
pub fn prepare_region(place: &Place, region: u64) -> io::Result<u64> {
    let region = place.clamp(region, 4096);
    let mut f = place.open(RANDOM_FILE, true, false)?;
    let mut chunk = pattern_block(1 << 20, 99);
    let mut done = 0;
    while done < region {
        let n = (region - done).min(chunk.len() as u64) as usize;
        stamp_block(&mut chunk[..n], done, 99);
        io::Write::write_all(&mut f, &chunk[..n])?;
        done += n as u64;
    }
    f.sync_all()?;
    Ok(region)
}

/// Random `O_DIRECT` I/O of `block` bytes over `region` bytes with `depth` threads for
/// `duration` (each thread does at least one I/O); writes end with `fdatasync` inside the
/// timed region, which runs from before the threads start until all have joined. Each
/// write is stamped ([`stamp_block`]) with its offset and a tag of thread and count: no
/// two writes alike, even to one offset.
pub fn random_io(
    place: &Place,
    op: RandomOp,
    block: u64,
    region: u64,
    depth: u32,
    duration: Duration,
) -> io::Result<RandomIo> {
    let align = buffer_align(place);
    // A raw device is claimed (O_EXCL) for the whole run; the threads' own opens are
    // plain (a second O_EXCL open of one device fails EBUSY).
    let _claim = if place.is_raw() && op == RandomOp::Write {
        Some(place.open(RANDOM_FILE, true, false)?)
    } else {
        None
    };
    // Each thread's descriptor and buffer are made before the clock starts: the timed
    // region holds the I/O, not the opens and the per-byte fill of the buffers.
    let threads = (0..depth)
        .map(|t| -> io::Result<(u64, File, AlignedBuf)> {
            let mut o = OpenOptions::new();
            match op {
                RandomOp::Read => o.read(true),
                RandomOp::Write => o.write(true),
            };
            let file = os::open_direct(&mut o, &place.file(RANDOM_FILE))?;
            let mut buf = AlignedBuf::new(block as usize, align);
            fill_pattern(&mut buf, 0, u64::from(t));
            Ok((u64::from(t), file, buf))
        })
        .collect::<io::Result<Vec<_>>>()?;
    // Each thread's histogram too: the clock starts after every allocation.
    let threads: Vec<_> = threads
        .into_iter()
        .map(|(t, file, buf)| (t, file, buf, LatencyHistogram::new()))
        .collect();
    let start = MonotonicClock.now_ns();
    let duration_ns = u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX);
    let results: Vec<io::Result<(u64, LatencyHistogram)>> = std::thread::scope(|s| {
        let handles: Vec<_> = threads
            .into_iter()
            .map(|(t, file, mut buf, mut hist)| {
                s.spawn(move || -> io::Result<(u64, LatencyHistogram)> {
                    // Each thread completes at least one I/O (a slow device or a late
                    // thread start must not give an empty figure), then stops at the
                    // deadline; every I/O timed.
                    let ios = random_loop(
                        &mut MonotonicClock,
                        start,
                        duration_ns,
                        RandomOffsets::new(t + 1, region, block),
                        &mut buf,
                        &mut hist,
                        |buf, offset, n| {
                            if op == RandomOp::Write {
                                stamp_block(buf, offset, t << 48 | n);
                            }
                        },
                        |buf, offset| match op {
                            RandomOp::Read => file.read_exact_at(buf, offset),
                            RandomOp::Write => file.write_all_at(buf, offset),
                        },
                    )?;
                    if op == RandomOp::Write {
                        os::flush_data(&file)?;
                    }
                    Ok((ios, hist))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(io::Error::other("thread panicked")))
            })
            .collect()
    });
    let nanos = MonotonicClock.now_ns() - start;
    let mut ios = 0;
    let mut hist: Option<LatencyHistogram> = None;
    for r in results {
        let (n, h) = r?;
        ios += n;
        match &mut hist {
            Some(all) => all.merge(&h),
            None => hist = Some(h),
        }
    }
    Ok(RandomIo {
        target: place.target.label.clone(),
        op,
        block_size: block,
        queue_depth: depth,
        region_bytes: region,
        ios,
        nanos,
        latency: hist.and_then(|h| h.to_latency(ios)),
    })
}

/// Writes a position-stamped pattern over `bytes`, drops the caches, reads it back and
/// reports the first wrong byte.
pub fn verify(place: &Place, bytes: u64, seed: u64, cache: &dyn PageCache) -> io::Result<Verify> {
    const CHUNK: u64 = 1 << 20;
    let bytes = place.clamp(bytes, CHUNK);
    let mut buf = vec![0u8; CHUNK as usize];
    let file = place.open(VERIFY_FILE, true, false)?;
    let mut offset = 0;
    while offset < bytes {
        fill_pattern(&mut buf, offset, seed);
        file.write_all_at(&buf, offset)?;
        offset += CHUNK;
    }
    file.sync_all()?;
    cache.drop_caches(&file)?;
    drop(file);
    let file = place.open(VERIFY_FILE, false, false)?;
    let mut first = None;
    let mut offset = 0;
    while offset < bytes && first.is_none() {
        file.read_exact_at(&mut buf, offset)?;
        first = first_mismatch(&buf, offset, seed);
        offset += CHUNK;
    }
    place.clean_up(VERIFY_FILE);
    Ok(Verify {
        target: place.target.label.clone(),
        bytes,
        first_mismatch: first,
    })
}

#[cfg(test)]
mod tests;
