//! Sweep tests on real files in a temporary folder (one test per measuring trap).

use super::*;
use std::cell::RefCell;

/// Records, at each cache drop, how many bytes the file then held.
struct RecordingCache(RefCell<Vec<u64>>);
impl PageCache for RecordingCache {
    fn drop_caches(&self, file: &File) -> io::Result<()> {
        self.0.borrow_mut().push(file.metadata()?.len());
        FileCache.drop_caches(file)
    }
}

fn place(dir: &Path) -> Place {
    Place {
        target: StorageTarget {
            label: "dir".into(),
            device: dir.display().to_string(),
            filesystem: Filesystem::Dir,
            optional: false,
        },
        path: dir.to_owned(),
        logical_block_size: 4096,
        capacity: None,
    }
}

const CAPS: Caps = Caps {
    bytes: 1 << 20,
    time_ns: u64::MAX,
};

#[test]
fn read_after_write_is_preceded_by_a_cache_drop() {
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let cache = RecordingCache(RefCell::new(Vec::new()));
    let pair = measure_pair(&place(dir.path()), CAPS, 4096, Mode::Sync, 0, &cache).unwrap();
    // Dropped once before the write (empty file) and once after it (whole file), before
    // the read: the read cannot be served from what the write left in the page cache.
    assert_eq!(*cache.0.borrow(), vec![0, 1 << 20]);
    assert_eq!(pair[1].direction, Direction::Read);
    assert_eq!(pair[1].bytes, 1 << 20);
    // 256 calls of 4 KiB, one timed in each group of 16; the timelines end at the passes'
    // ends with all their bytes.
    for m in &pair {
        let l = m.latency.as_ref().unwrap();
        assert_eq!((l.calls, l.count), (256, 16), "{m:?}");
        let end = m.timeline.last().unwrap();
        assert_eq!((end.end_ns, end.bytes), (m.nanos, m.bytes));
    }
    assert!(
        dir.path().join(BENCH_FILE).exists(),
        "the next pass truncates and rewrites it"
    );
    place(dir.path()).clean_up(BENCH_FILE);
    assert!(!dir.path().join(BENCH_FILE).exists());
}

#[test]
fn eight_byte_direct_falls_back_to_sync_and_says_so() {
    let (mode, note) = effective_mode(Mode::Direct, 8, 512);
    assert_eq!(mode, Mode::Sync);
    assert!(note.unwrap().contains("512 B logical block"));
    assert_eq!(
        effective_mode(Mode::Direct, 4096, 512),
        (Mode::Direct, None)
    );
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let caps = Caps {
        bytes: 4096,
        time_ns: u64::MAX,
    };
    let pair = measure_pair(&place(dir.path()), caps, 8, Mode::Direct, 0, &FileCache).unwrap();
    for m in &pair {
        assert_eq!((m.mode, m.requested_mode), (Mode::Sync, Mode::Direct));
        assert!(m.note.is_some());
    }
}

#[test]
fn direct_mode_runs_where_the_filesystem_supports_it() {
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let pair = measure_pair(&place(dir.path()), CAPS, 65536, Mode::Direct, 0, &FileCache).unwrap();
    // Either O_DIRECT ran, or the filesystem refused it and the result says so.
    for m in &pair {
        assert_eq!(m.requested_mode, Mode::Direct);
        assert!(
            m.mode == Mode::Direct || m.note.as_deref().is_some_and(|n| n.contains("EINVAL")),
            "{m:?}"
        );
        assert_eq!(m.bytes, 1 << 20);
    }
}

#[test]
fn verify_finds_nothing_wrong_on_a_good_disk() {
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let v = verify(&place(dir.path()), 3 << 20, 5, &FileCache).unwrap();
    assert_eq!((v.bytes, v.first_mismatch), (3 << 20, None));
}

#[test]
fn random_io_counts_operations() {
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let p = place(dir.path());
    let region = prepare_region(&p, 4 << 20).unwrap();
    assert_eq!(region, 4 << 20);
    assert_every_sector_distinct_and_placed(&dir.path().join(RANDOM_FILE));
    for op in [RandomOp::Read, RandomOp::Write] {
        let r = random_io(&p, op, 4096, region, 2, Duration::from_millis(200)).unwrap();
        assert!(r.ios > 0 && r.nanos >= 200_000_000, "{r:?}");
        // Every I/O of both threads timed.
        let l = r.latency.as_ref().unwrap();
        assert_eq!((l.count, l.calls), (r.ios, r.ios));
        assert!(l.max_ns <= r.nanos && l.min_ns > 0, "{l:?}");
        assert_eq!((r.queue_depth, r.block_size), (2, 4096));
    }
    // The random writes stamped what they wrote: still no two sectors alike.
    assert_every_sector_distinct_and_placed(&dir.path().join(RANDOM_FILE));
}

/// What a deduplicating controller would see in `file`: every 512 B sector distinct,
/// each starting with its own byte offset.
fn assert_every_sector_distinct_and_placed(file: &Path) {
    let bytes = std::fs::read(file).unwrap();
    let sectors: std::collections::HashSet<&[u8]> = bytes.chunks(512).collect();
    assert_eq!(sectors.len(), bytes.len() / 512, "{}", file.display());
    for (i, s) in bytes.chunks_exact(512).enumerate() {
        assert_eq!(s[..8], (i as u64 * 512).to_le_bytes(), "sector {i}");
    }
}

#[test]
fn the_sweep_writes_no_sector_twice_alike() {
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    for bs in [8, 4096, 1 << 20] {
        measure_pair(&place(dir.path()), CAPS, bs, Mode::Sync, 0, &FileCache).unwrap();
        assert_every_sector_distinct_and_placed(&dir.path().join(BENCH_FILE));
    }
}

#[test]
fn block_sizes_come_from_the_disk_of_a_partition() {
    let root = tempfile::tempdir().unwrap();
    let disk = root.path().join("devices/mmcblk0");
    std::fs::create_dir_all(disk.join("queue")).unwrap();
    std::fs::create_dir_all(disk.join("mmcblk0p5")).unwrap();
    std::fs::write(disk.join("mmcblk0p5/partition"), "5\n").unwrap();
    std::fs::write(disk.join("queue/logical_block_size"), "512\n").unwrap();
    std::fs::write(disk.join("queue/physical_block_size"), "4096\n").unwrap();
    let block = root.path().join("block");
    std::fs::create_dir_all(&block).unwrap();
    std::os::unix::fs::symlink(disk.join("mmcblk0p5"), block.join("mmcblk0p5")).unwrap();
    std::os::unix::fs::symlink(&disk, block.join("mmcblk0")).unwrap();
    assert_eq!(block_sizes_of(&block, "mmcblk0p5").unwrap(), (512, 4096));
    assert_eq!(block_sizes_of(&block, "mmcblk0").unwrap(), (512, 4096));
}
