//! Reproducible images: the rpi-zero-w image built twice from the same lock file, into
//! two different folders, is byte-identical (image and manifest), and its filesystem
//! ids are the ones the lock file seeds (xtask/src/reproducible.rs). Reuses the built
//! firmware and the unpacked packages, so it costs two image renders.

use std::path::Path;
use std::time::Instant;

use benchboot_image::layout::{self, Role};
use benchboot_plan::Filesystem;
use xtask::reproducible::{source_date_epoch, Stamp};

#[test]
fn rpi_zero_w_image_is_byte_identical_when_built_twice() {
    let _slot = benchboot_tests::qemu_slot(module_path!());
    let board = xtask::load_board("rpi-zero-w").unwrap();
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let t0 = Instant::now();
    let a = xtask::image::run_to(&board, &dir_a.path().join("card.img")).unwrap();
    let t1 = Instant::now();
    let b = xtask::image::run_to(&board, &dir_b.path().join("card.img")).unwrap();
    eprintln!(
        "reproducible: builds took {:.1} s and {:.1} s",
        (t1 - t0).as_secs_f64(),
        t1.elapsed().as_secs_f64()
    );

    // SHA-256 of both images, each hashed here (in parallel), not taken from the
    // manifest; then the manifests, byte for byte.
    let (sha_a, sha_b) = std::thread::scope(|s| {
        let ha = s.spawn(|| xtask::sha256_file(&a.image).unwrap());
        let hb = s.spawn(|| xtask::sha256_file(&b.image).unwrap());
        (ha.join().unwrap(), hb.join().unwrap())
    });
    assert_eq!(
        sha_a,
        sha_b,
        "two builds differ: `cmp -l {} {} | head` shows where",
        a.image.display(),
        b.image.display()
    );
    let (ma, mb) = (read(&a.manifest), read(&b.manifest));
    assert_eq!(ma, mb, "the manifests differ");
    assert!(ma.contains(&sha_a), "the manifest names another image");

    // The ids in the image are the lock file's: FAT volume ids, ext UUIDs and hash
    // seeds, as dumpe2fs reads them; every ext time is the stamp's epoch.
    let stamp = Stamp::for_board(&board.name).unwrap();
    assert_eq!(stamp.epoch, source_date_epoch().unwrap());
    let layout = layout::plan(&layout::Spec::default()).unwrap();
    let (mut fat_seen, mut ext_seen) = (0, 0);
    for part in &layout.parts {
        let bytes = |o: u64, n: usize| read_at(&a.image, part.offset_bytes() + o, n);
        let le32 = |o: u64| u32::from_le_bytes(bytes(o, 4).try_into().unwrap());
        match part.role {
            Role::Boot | Role::Results | Role::Test(Filesystem::Vfat) => {
                // The volume id sits at 0x43 in a FAT32 boot sector, 0x27 in FAT12/16.
                let id = if bytes(0x52, 8) == b"FAT32   " {
                    le32(0x43)
                } else {
                    assert_eq!(bytes(0x36, 3), b"FAT", "p{}", part.number);
                    le32(0x27)
                };
                assert_eq!(id, stamp.fat_volume_id(part.number), "p{}", part.number);
                fat_seen += 1;
            }
            Role::Test(Filesystem::Ext2 | Filesystem::Ext3 | Filesystem::Ext4) => {
                let tmp = benchboot_tests::extract_partition(&a.image, part).unwrap();
                let dump = benchboot_tests::check_tool("dumpe2fs", &["-h"], tmp.path()).unwrap();
                let field = |name: &str| {
                    dump.lines()
                        .find_map(|l| l.strip_prefix(name))
                        .unwrap_or_else(|| panic!("p{}: no {name}\n{dump}", part.number))
                        .trim()
                        .to_owned()
                };
                assert_eq!(field("Filesystem UUID:"), stamp.ext_uuid(part.number));
                assert_eq!(
                    field("Directory Hash Seed:"),
                    stamp.ext_hash_seed(part.number)
                );
                let created = field("Filesystem created:");
                assert_eq!(field("Last write time:"), created, "p{}", part.number);
                assert_eq!(field("Last checked:"), created, "p{}", part.number);
                // s_mkfs_time and s_wtime, low 32 bits (superblock at 1024).
                for o in [0x108, 0x30] {
                    assert_eq!(u64::from(le32(1024 + o)), stamp.epoch, "p{}", part.number);
                }
                ext_seen += 1;
            }
            // A new image's journal holds no record: all zeros, which the flash writes.
            Role::Journal => {
                let j = bytes(0, part.size_bytes() as usize);
                assert!(j.iter().all(|b| *b == 0), "p{}: not zeros", part.number);
                assert!(benchboot_journal::scan(&j).records.is_empty());
            }
            Role::Test(_) => {}
        }
    }
    assert_eq!(
        (fat_seen, ext_seen),
        (3, 3),
        "boot, results, vfat; ext2, ext3, ext4"
    );

    // Another lock file gives other ids (so the checks above can fail).
    let mut lock = stamp.lock.clone();
    lock.extend_from_slice(b"\n# changed\n");
    let other = Stamp::new(&board.name, &lock, stamp.epoch);
    assert_ne!(other.fat_volume_id(1), stamp.fat_volume_id(1));
    assert_ne!(other.ext_uuid(5), stamp.ext_uuid(5));
}

/// `n` bytes of `path` from byte `offset`.
fn read_at(path: &Path, offset: u64, n: usize) -> Vec<u8> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = std::fs::File::open(path).unwrap();
    f.seek(SeekFrom::Start(offset)).unwrap();
    let mut buf = vec![0; n];
    f.read_exact(&mut buf).unwrap();
    buf
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}
