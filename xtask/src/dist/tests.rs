//! Tests of `cargo xtask dist`'s pure parts: the archives are the same bytes whatever
//! order and time the files come in, the checksums file is `sha256sum -c`'s, and the
//! selectors of `--boards` / `--hosts`.

use super::*;

fn entries(order: &[usize]) -> Vec<Entry> {
    let all = [
        Entry {
            path: "benchboot-0.1.0-x/benchboot".into(),
            data: b"\x7fELF program".to_vec(),
            executable: true,
        },
        Entry {
            path: "benchboot-0.1.0-x/GETTING-STARTED.txt".into(),
            data: b"read me".to_vec(),
            executable: false,
        },
    ];
    order.iter().map(|&i| all[i].clone()).collect()
}

#[test]
fn an_archive_is_the_same_bytes_whatever_the_order_and_holds_sorted_fixed_entries() {
    let a = tar_gz(entries(&[0, 1]), 1_704_067_200).unwrap();
    let b = tar_gz(entries(&[1, 0]), 1_704_067_200).unwrap();
    assert_eq!(crate::sha256_hex(&a), crate::sha256_hex(&b));
    // gzip: magic, deflate, no name (FLG 0), MTIME 0.
    assert_eq!(&a[..8], &[0x1f, 0x8b, 8, 0, 0, 0, 0, 0]);
    // Another SOURCE_DATE_EPOCH is another archive: the time is the epoch's, not now.
    assert_ne!(a, tar_gz(entries(&[0, 1]), 1_704_067_201).unwrap());

    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(a.as_slice()));
    let got: Vec<(String, u32, u64, u64, u64)> = tar
        .entries()
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let h = e.header();
            (
                e.path().unwrap().display().to_string(),
                h.mode().unwrap(),
                h.mtime().unwrap(),
                h.uid().unwrap(),
                h.size().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("benchboot-0.1.0-x/".to_string(), 0o755, 1_704_067_200, 0, 0),
            (
                "benchboot-0.1.0-x/GETTING-STARTED.txt".to_string(),
                0o644,
                1_704_067_200,
                0,
                7
            ),
            (
                "benchboot-0.1.0-x/benchboot".to_string(),
                0o755,
                1_704_067_200,
                0,
                12
            ),
        ]
    );
}

#[test]
fn the_checksums_file_is_sorted_covers_every_other_file_and_sha256sum_accepts_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("b.img.xz"), b"image").unwrap();
    std::fs::write(dir.path().join("a.tar.gz"), b"tool").unwrap();
    let files = write_sums(dir.path()).unwrap();
    let names: Vec<String> = files
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["SHA256SUMS", "a.tar.gz", "b.img.xz"]);
    let text = std::fs::read_to_string(dir.path().join(SUMS)).unwrap();
    assert_eq!(
        text,
        format!(
            "{}  a.tar.gz\n{}  b.img.xz\n",
            crate::sha256_hex(b"tool"),
            crate::sha256_hex(b"image")
        )
    );
    let check = std::process::Command::new("sha256sum")
        .args(["-c", "--strict", SUMS])
        .current_dir(dir.path())
        .output()
        .expect("sha256sum (coreutils) runs");
    assert!(check.status.success(), "{check:?}");
    // A second run over the same files writes the same checksums (SHA256SUMS itself is
    // not listed in it).
    write_sums(dir.path()).unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join(SUMS)).unwrap(),
        text
    );
}

#[test]
fn clean_removes_only_what_a_dist_writes() {
    let dir = tempfile::tempdir().unwrap();
    for f in [
        "benchboot-0.1.0-rpi-3b.img.xz",
        SUMS,
        GETTING_STARTED_FILE,
        "notes.txt",
    ] {
        std::fs::write(dir.path().join(f), b"x").unwrap();
    }
    clean(dir.path()).unwrap();
    let left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["notes.txt"]);
}

#[test]
fn selectors_default_to_everything_and_take_none() {
    let all: Vec<&str> = hosts(None).unwrap().iter().map(|t| t.triple).collect();
    assert_eq!(
        all,
        [
            "x86_64-unknown-linux-musl",
            "aarch64-unknown-linux-musl",
            "aarch64-apple-darwin",
            "x86_64-apple-darwin",
            "x86_64-pc-windows-gnu"
        ]
    );
    assert!(hosts(Some(&["none".into()])).unwrap().is_empty());
    let one = hosts(Some(&["aarch64-unknown-linux-musl".into()])).unwrap();
    assert_eq!(one[0].zig_target, "aarch64-linux-musl");
    assert!(hosts(Some(&["mips-unknown-linux-gnu".into()])).is_err());

    let boards_all = boards(None).unwrap();
    assert!(boards_all.len() >= 10, "{boards_all:?}");
    for b in [
        "rpi-zero-w",
        "rpi-4b",
        "qemu-virt-arm64",
        "beaglebone-black",
    ] {
        assert!(boards_all.iter().any(|n| n == b), "{b} in {boards_all:?}");
    }
    assert!(!boards_all.iter().any(|n| n == "shared"));
    assert!(boards(Some(&["none".into()])).unwrap().is_empty());
    let e = boards(Some(&["rpi-99".into()])).unwrap_err().to_string();
    assert!(e.contains("rpi-99"), "{e}");
}

#[test]
fn getting_started_walks_install_flash_plug_collect_report() {
    let g = GETTING_STARTED;
    let at = |s: &str| {
        g.find(s)
            .unwrap_or_else(|| panic!("{s:?} not in the guide"))
    };
    assert!(at("sha256sum -c SHA256SUMS") < at("tar -xzf"));
    assert!(at("tar -xzf") < at("benchboot flash"));
    assert!(at("benchboot flash") < at("Plug in"));
    assert!(at("Plug in") < at("benchboot collect"));
    assert!(at("benchboot collect") < at("benchboot report"));
    // Every archive and image it names exists under that name in a dist.
    for t in crate::host_cross::DIST_TARGETS {
        assert!(g.contains(t.triple), "{}", t.triple);
    }
    assert!(g.contains("benchboot-VERSION-rpi-zero-w.img.xz"));
    assert!(g.lines().all(|l| l.len() <= 90), "lines fit a terminal");
}
