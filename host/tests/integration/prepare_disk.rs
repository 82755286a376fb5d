//! `benchboot prepare-disk` on an image file in a temporary folder (never a real block
//! device): the MBR (read back with `crates/card`), each filesystem's type and label
//! (`blkid -p -O OFFSET`), fsck-clean, inode tables written out (dumpe2fs); dry run and
//! refusals write nothing; the refusal rules against the fake sysfs trees.

use std::path::{Path, PathBuf};
use std::process::Command;

use benchboot::devices::{self, Limits};
use benchboot::prepare_disk::{self, PrepareDiskArgs};
use benchboot_card::disk_labels;

const MIB: u64 = 1 << 20;

fn image(dir: &Path, bytes: u64) -> PathBuf {
    let path = dir.join("disk.img");
    std::fs::File::create(&path)
        .unwrap()
        .set_len(bytes)
        .unwrap();
    path
}

fn args(device: &Path) -> PrepareDiskArgs {
    PrepareDiskArgs {
        device: device.to_owned(),
        dry_run: false,
        allow_large: false,
        yes: true,
    }
}

fn tool(name: &str) -> PathBuf {
    prepare_disk::find_tool(name)
        .unwrap_or_else(|| panic!("{name} is needed (e2fsprogs, dosfstools, util-linux)"))
}

/// `blkid -p -O OFFSET FILE` as KEY=VALUE pairs.
fn blkid(file: &Path, offset: u64) -> Vec<(String, String)> {
    let out = Command::new(tool("blkid"))
        .args(["-p", "-o", "export", "-O", &offset.to_string()])
        .arg(file)
        .output()
        .unwrap();
    assert!(out.status.success(), "blkid at {offset}: {out:?}");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.split_once('=').map(|(k, v)| (k.to_owned(), v.to_owned())))
        .collect()
}

fn get<'a>(pairs: &'a [(String, String)], key: &str) -> &'a str {
    pairs
        .iter()
        .find(|(k, _)| k == key)
        .map_or("", |(_, v)| v.as_str())
}

/// Copies `len` bytes at `offset` of `file` into a file of their own, for fsck tools
/// that take no offset.
fn slice(file: &Path, offset: u64, len: u64, to: &Path) {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = std::fs::File::open(file).unwrap();
    f.seek(SeekFrom::Start(offset)).unwrap();
    let mut out = std::fs::File::create(to).unwrap();
    std::io::copy(&mut f.take(len), &mut out).unwrap();
}

#[test]
fn a_256_mib_image_gets_four_labelled_filesystems() {
    let dir = tempfile::tempdir().unwrap();
    let img = image(dir.path(), 256 * MIB);
    let plan = prepare_disk::plan(&args(&img), Path::new("/")).unwrap();
    let mut said = Vec::new();
    prepare_disk::execute(&plan, &mut |l| said.push(l.to_owned())).unwrap();
    assert_eq!(said.len(), 5, "{said:?}");
    assert_eq!(
        std::fs::metadata(&img).unwrap().len(),
        256 * MIB,
        "size unchanged"
    );

    // The MBR, as the card reader reads it: four primary partitions, 63 MiB each.
    let mut f = std::fs::File::open(&img).unwrap();
    let parts = benchboot_card::partitions(&mut f).unwrap();
    let got: Vec<(u8, u8, u64, u64)> = parts
        .iter()
        .map(|p| (p.number, p.mbr_type, p.offset / MIB, p.len / MIB))
        .collect();
    assert_eq!(
        got,
        [
            (1, 0x83, 1, 63),
            (2, 0x83, 64, 63),
            (3, 0x83, 127, 63),
            (4, 0x0c, 190, 63)
        ]
    );
    assert_eq!(
        benchboot_card::fat_label(&mut f, &parts[3])
            .unwrap()
            .as_deref(),
        Some(disk_labels::VFAT)
    );

    // Each filesystem at its offset: type and label as blkid probes them.
    let expected = [
        ("ext2", disk_labels::EXT2),
        ("ext3", disk_labels::EXT3),
        ("ext4", disk_labels::EXT4),
        ("vfat", disk_labels::VFAT),
    ];
    for (p, (fs, label)) in parts.iter().zip(expected) {
        let id = blkid(&img, p.offset);
        assert_eq!(
            (get(&id, "TYPE"), get(&id, "LABEL")),
            (fs, label),
            "p{}: {id:?}",
            p.number
        );
    }
    assert_eq!(get(&blkid(&img, parts[3].offset), "VERSION"), "FAT32");
    // FAT's hidden sectors = the partition's start, as on a disk (boot sector byte 28).
    let mut boot = [0u8; 512];
    {
        use std::io::{Read, Seek, SeekFrom};
        f.seek(SeekFrom::Start(parts[3].offset)).unwrap();
        f.read_exact(&mut boot).unwrap();
    }
    assert_eq!(
        u32::from_le_bytes(boot[28..32].try_into().unwrap()),
        (190 * MIB / 512) as u32
    );

    // fsck-clean, 4 KiB blocks, every inode table written out (no lazy init).
    for p in &parts[..3] {
        let copy = dir.path().join(format!("p{}.img", p.number));
        slice(&img, p.offset, p.len, &copy);
        let fsck = Command::new(tool("e2fsck"))
            .arg("-fn")
            .arg(&copy)
            .output()
            .unwrap();
        assert!(fsck.status.success(), "e2fsck p{}: {fsck:?}", p.number);
        let dump = Command::new(tool("dumpe2fs")).arg(&copy).output().unwrap();
        let dump = String::from_utf8_lossy(&dump.stdout);
        assert!(dump.contains("Block size:               4096"), "{dump}");
        let groups: Vec<&str> = dump
            .lines()
            .filter(|l| l.starts_with("Group ") && l.contains(": (Blocks"))
            .collect();
        assert!(!groups.is_empty(), "{dump}");
        if p.number > 1 {
            // ext3/ext4 (has_journal); ext2 has none.
            assert!(dump.contains("has_journal"), "p{}: {dump}", p.number);
        }
        if p.number == 3 {
            assert!(
                groups.iter().all(|g| g.contains("ITABLE_ZEROED")),
                "{groups:?}"
            );
        }
    }
    let copy = dir.path().join("p4.img");
    slice(&img, parts[3].offset, parts[3].len, &copy);
    let fsck = Command::new(tool("fsck.fat"))
        .arg("-n")
        .arg(&copy)
        .output()
        .unwrap();
    assert!(fsck.status.success(), "fsck.fat: {fsck:?}");

    // What was made, as printed.
    let table = plan.table();
    assert!(
        table.contains("p4                  190 MiB       63 MiB vfat       BBVFAT"),
        "{table}"
    );
}

#[test]
fn the_command_asks_first_and_a_dry_run_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let img = image(dir.path(), 200 * MIB);
    let run = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_benchboot"))
            .arg("prepare-disk")
            .arg(&img)
            .args(extra)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    };
    let blank = |img: &Path| std::fs::read(img).unwrap().iter().all(|&b| b == 0);

    let dry = run(&["--dry-run"]);
    let stdout = String::from_utf8_lossy(&dry.stdout);
    assert!(dry.status.success(), "{dry:?}");
    assert!(
        stdout.contains("4 primary partitions of 49 MiB each, from 1 MiB on"),
        "{stdout}"
    );
    assert!(stdout.contains("dry run: nothing written"), "{stdout}");
    assert!(blank(&img));

    let no_tty = run(&[]);
    let stderr = String::from_utf8_lossy(&no_tty.stderr);
    assert_eq!(no_tty.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("no terminal to confirm on: pass --yes"),
        "{stderr}"
    );
    assert!(blank(&img));

    let yes = run(&["--yes"]);
    let stdout = String::from_utf8_lossy(&yes.stdout);
    assert!(yes.status.success(), "{yes:?}");
    assert!(
        stdout.contains("p1                    1 MiB       49 MiB ext2       BBEXT2"),
        "{stdout}"
    );
    assert!(stdout.contains("LABEL=BBEXT4"), "{stdout}");
    assert!(!blank(&img));
}

#[test]
fn too_small_and_missing_files_are_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let img = image(dir.path(), 100 * MIB);
    let err = format!(
        "{:#}",
        prepare_disk::plan(&args(&img), Path::new("/")).unwrap_err()
    );
    assert!(err.contains("100 MiB is too small"), "{err}");
    assert!(err.contains("truncate -s 256M"), "{err}");
    assert!(std::fs::read(&img).unwrap().iter().all(|&b| b == 0));

    let missing = dir.path().join("none.img");
    let err = format!(
        "{:#}",
        prepare_disk::plan(&args(&missing), Path::new("/")).unwrap_err()
    );
    assert!(err.contains("none.img: no such disk or file"), "{err}");
    assert!(!missing.exists());
}

/// The rules against the fake trees of `flash_devices`: the system disk, mounted
/// disks, read-only and loop devices refused; a fixed USB disk accepted.
#[test]
fn system_mounted_and_virtual_disks_are_refused_a_usb_disk_accepted() {
    let tree = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sysfs/desktop");
    let all = devices::scan_linux(&tree).unwrap();
    let reasons = |name: &str, allow_large: bool| {
        let d = all.iter().find(|d| d.name == name).unwrap();
        prepare_disk::refusals(d, &Limits::new(allow_large))
    };
    let system = reasons("nvme0n1", true);
    assert_eq!(system.len(), 2, "{system:?}");
    assert_eq!(
        system[0],
        "a fixed nvme disk: prepare-disk makes USB or SATA test disks only"
    );
    assert!(
        system[1].starts_with("holds the running system (/ on nvme0n1p2"),
        "{system:?}"
    );
    // The 2 TB fixed USB disk: what prepare-disk is for, once --allow-large.
    assert!(reasons("sde", true).is_empty());
    assert_eq!(reasons("sde", false).len(), 1);
    // A mounted card: flash would unmount it; prepare-disk refuses, naming each mount.
    let mounted = reasons("sdc", false);
    assert_eq!(mounted.len(), 2, "{mounted:?}");
    assert!(mounted
        .iter()
        .all(|r| r.contains("is mounted: unmount it first")));
    assert!(mounted[0].starts_with("/media/x is mounted"), "{mounted:?}");
    assert!(reasons("sdd", false)[0].starts_with("read-only"));
    // A loop device: prepare-disk points at its image file, never at flash's --device.
    let virt = &reasons("loop1", false)[0];
    assert!(
        virt.starts_with("a loop device over /home/me/qemu.img, not a test disk")
            && virt.contains("`benchboot prepare-disk /home/me/qemu.img`")
            && !virt.contains("--device"),
        "{virt}"
    );
    assert!(reasons("sdf", false)[0].contains("is mounted through"));
    assert!(reasons("sdb", false).is_empty());
}
