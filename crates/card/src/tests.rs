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
