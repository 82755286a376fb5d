//! The card reader over images built here: hostile tables, Windows' raw paths.

use super::*;

#[test]
fn windows_raw_disks_are_refused_with_what_works() {
    for raw in [r"\\.\PhysicalDrive1", r"\\.\E:", "//./PhysicalDrive2"] {
        let e = read_results(Path::new(raw)).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!(
                "{raw}: a raw Windows disk is read only through whole sectors"
            )),
            "{e}"
        );
        assert!(e.contains("BBRESULTS volume"), "{e}");
        assert!(read_kept_runs(Path::new(raw)).is_err());
    }
    assert!(refuse_raw_windows_device(Path::new(r"E:\")).is_ok());
    assert!(refuse_raw_windows_device(Path::new("/dev/sdb")).is_ok());
}

#[test]
fn no_mbr_no_partitions() {
    let mut c = io::Cursor::new(vec![0u8; 64 * 1024]);
    assert!(partitions(&mut c).unwrap().is_empty());
    let err = format!("{:#}", find_results_partition(&mut c).unwrap_err());
    assert!(err.contains("no MBR partition table"), "{err}");
}

#[test]
fn a_table_whose_entries_all_start_at_lba_0_is_read_not_panicked_on() {
    // p1: FAT32 (LBA) at LBA 0, 100 sectors (mbrman's `MBR::read_from` panics).
    let mut d = vec![0u8; 64 * 1024];
    d[446 + 4] = 0x0c;
    d[446 + 12..446 + 16].copy_from_slice(&100u32.to_le_bytes());
    d[510..512].copy_from_slice(&[0x55, 0xaa]);
    let parts = partitions(&mut io::Cursor::new(d)).unwrap();
    assert_eq!(
        parts,
        [Partition {
            number: 1,
            mbr_type: 0x0c,
            offset: 0,
            len: 100 * 512
        }]
    );
}

#[test]
fn reads_stop_at_the_budget() {
    let mut r = ReadOnly {
        inner: io::Cursor::new(vec![7u8; 10]),
        budget: 6,
        partition_len: 10,
    };
    let mut buf = [0u8; 4];
    assert_eq!(r.read(&mut buf).unwrap(), 4);
    assert_eq!(
        r.read(&mut buf).unwrap(),
        2,
        "only what is left of the budget"
    );
    let err = r.read(&mut buf).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidData);
    assert!(err.to_string().contains("cluster chain loops"), "{err}");
    assert_eq!(read_budget(10), 40 + (64 << 20));
}

#[test]
fn read_only_refuses_writes() {
    let mut r = ReadOnly {
        inner: io::Cursor::new(vec![0u8; 4]),
        budget: 4,
        partition_len: 4,
    };
    assert_eq!(
        r.write(b"x").unwrap_err().kind(),
        io::ErrorKind::PermissionDenied
    );
}

/// A card (or a device) that starts with `{` was read whole as the document: a
/// disk of 32 GB with a `{` first filled the memory.
#[test]
fn a_brace_first_device_is_read_no_further_than_a_document() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("card.img");
    let f = File::create(&path).unwrap();
    (&f).write_all(b"{").unwrap();
    // Sparse: 65 MiB on the reader's side, nothing on the disk's.
    f.set_len(65 << 20).unwrap();
    let e = format!("{:#}", read_results(&path).unwrap_err());
    assert_eq!(
        e,
        format!(
            "reading {}: more than a results document has (64 MiB at most)",
            absolute(&path).display()
        )
    );
}

/// Writes one 16-byte MBR entry of the table sector at byte `at`.
fn put_entry(d: &mut [u8], at: usize, i: usize, sys: u8, lba: u32, sectors: u32) {
    let e = at + 446 + 16 * i;
    d[e + 4] = sys;
    d[e + 8..e + 12].copy_from_slice(&lba.to_le_bytes());
    d[e + 12..e + 16].copy_from_slice(&sectors.to_le_bytes());
    d[at + 510..at + 512].copy_from_slice(&[0x55, 0xaa]);
}

/// 131,000 EBRs chained one per sector in a 96 MiB image, each with a FAT-typed
/// partition: through mbrman every one was read and tried as FAT (82 s), and the
/// error listed them all (a 3.6 MB line). Now the chain stops at 64 and the line is
/// short.
#[test]
fn a_chain_of_131000_logical_partitions_is_read_no_further_than_64() {
    let sectors = (96u32 << 20) / 512;
    let mut d = vec![0u8; 96 << 20];
    put_entry(&mut d, 0, 0, 0x0f, 2048, sectors - 2048);
    for k in 0..131_000u32 {
        let at = (2048 + k) as usize * 512;
        // The data: this EBR's own sector; the next EBR: one sector on.
        put_entry(&mut d, at, 0, 0x0c, 0, 1);
        put_entry(&mut d, at, 1, 0x05, k + 1, 1);
    }
    let mut c = io::Cursor::new(d);
    let parts = partitions(&mut c).unwrap();
    assert_eq!(parts.len(), mbr::MAX_LOGICAL);
    assert_eq!(
        (parts[0].number, parts[0].offset, parts[0].len),
        (5, 2048 * 512, 512)
    );
    assert_eq!(parts[63].number, 68);
    let e = format!("{:#}", find_results_partition(&mut c).unwrap_err());
    assert_eq!(
        e,
        "no results partition (FAT labelled BBRESULTS, or a FAT p2): found p5 type 0x0c; \
         p6 type 0x0c; p7 type 0x0c; p8 type 0x0c; p9 type 0x0c; p10 type 0x0c; p11 type \
         0x0c; p12 type 0x0c; and 56 more"
    );
}

/// A chain that points back (EBR 2 names EBR 1 as next) is broken: primaries only.
#[test]
fn a_chain_that_does_not_go_forward_is_broken() {
    let mut d = vec![0u8; 1 << 20];
    put_entry(&mut d, 0, 0, 0x0c, 8, 8);
    put_entry(&mut d, 0, 1, 0x0f, 100, 1000);
    put_entry(&mut d, 100 * 512, 0, 0x83, 1, 10);
    put_entry(&mut d, 100 * 512, 1, 0x05, 50, 20);
    put_entry(&mut d, 150 * 512, 0, 0x83, 1, 10);
    put_entry(&mut d, 150 * 512, 1, 0x05, 50, 20);
    let parts = partitions(&mut io::Cursor::new(&d)).unwrap();
    assert_eq!(parts.iter().map(|p| p.number).collect::<Vec<_>>(), [1]);
    // Pointing forward, the same chain gives p5 and p6 at absolute sectors.
    put_entry(&mut d, 150 * 512, 1, 0x05, 0, 0);
    let parts = partitions(&mut io::Cursor::new(&d)).unwrap();
    assert_eq!(
        parts
            .iter()
            .map(|p| (p.number, p.offset / 512))
            .collect::<Vec<_>>(),
        [(1, 8), (5, 101), (6, 151)]
    );
}

/// A FIFO given as the card blocked in `open` for ever; `/dev/zero` was taken for a
/// disk. Both are refused as what they are.
#[cfg(unix)]
#[test]
fn a_fifo_or_a_character_device_is_no_card() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("card");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let e = format!("{:#}", read_results(&fifo).unwrap_err());
    assert!(
        e.ends_with("card: a FIFO (named pipe), not a regular file: a card or an image of one is read only from a file (a device or a pipe may never end); save it to a file and give that"),
        "{e}"
    );
    let e = format!("{:#}", read_results(Path::new("/dev/zero")).unwrap_err());
    assert!(
        e.starts_with("/dev/zero: a character device, not a regular file"),
        "{e}"
    );
    assert!(read_kept_runs(&fifo).is_err());
}

/// A `runs/` of 300 files, and of documents passing 256 MiB in all: the runs past
/// either bound are listed, unread (every one was read, into memory at once).
#[test]
fn kept_runs_are_read_within_their_bounds() {
    let mut reads = 0;
    let runs = kept_within_bounds((0..300).map(|i| format!("runs/{i}.json")), |_| {
        reads += 1;
        Ok(b"{}".to_vec())
    });
    assert_eq!((runs.len(), reads), (300, MAX_KEPT_RUNS));
    let e = format!("{:#}", runs[MAX_KEPT_RUNS].text.as_ref().unwrap_err());
    assert_eq!(e, "not read: more than 256 kept runs (damaged or crafted)");
    let mut reads = 0;
    let runs = kept_within_bounds((0..10).map(|i| format!("runs/{i}.json")), |_| {
        reads += 1;
        Ok(vec![b' '; 60 << 20])
    });
    // 5 x 60 MiB passes 256 MiB: the sixth and later are not read.
    assert_eq!(reads, 5);
    let e = format!("{:#}", runs[5].text.as_ref().unwrap_err());
    assert_eq!(e, "not read: the kept runs before it pass 256 MiB in all");
}

/// A FAT whose `results.json` entry names cluster 1 (reserved): fatfs computes
/// `cluster - 2` unchecked and panicked (debug builds; found by the `card_image` fuzz
/// target). Now an error that says the filesystem is damaged.
#[test]
fn a_file_in_the_reserved_clusters_is_an_error_not_a_panic() {
    let mut img = io::Cursor::new(vec![0u8; 4 << 20]);
    fatfs::format_volume(
        &mut img,
        fatfs::FormatVolumeOptions::new().volume_label(*b"BBRESULTS  "),
    )
    .unwrap();
    img.set_position(0);
    {
        let fs = fatfs::FileSystem::new(&mut img, fatfs::FsOptions::new()).unwrap();
        let mut f = fs.root_dir().create_file(RESULTS_FILE).unwrap();
        f.write_all(b"{\"run_id\": \"r-1\"}").unwrap();
        f.flush().unwrap();
        drop(f);
        fs.unmount().unwrap();
    }
    let mut d = img.into_inner();
    // The 8.3 entry of `results.json`: its first cluster (low word at +26) set to 1.
    let at = d
        .windows(11)
        .position(|w| w.starts_with(b"RESULT~1"))
        .expect("the short name of results.json");
    d[at + 26..at + 28].copy_from_slice(&1u16.to_le_bytes());
    let whole = Partition {
        number: 0,
        mbr_type: 0,
        offset: 0,
        len: d.len() as u64,
    };
    let e = read_fat_file(io::Cursor::new(&d), &whole, RESULTS_FILE).unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::InvalidData);
    assert_eq!(
        e.to_string(),
        "the FAT filesystem is damaged (a file or folder points into its reserved \
         clusters); check it with fsck.vfat -n"
    );
}
