//! `benchboot flash` to regular files (the same code path as a card): bytes and SHA-256
//! equal after a flash, a corrupted byte fails verification, an interrupted write leaves
//! the first 1 MiB unwritten, `--dry-run` writes nothing, no terminal means no write
//! without `--yes`.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use benchboot::flash::io::{
    self as fio, Disk, Sink, Source, VerifyError, WriteOptions, CHUNK, HEAD,
};
use benchboot::flash::{self, Options, Target};
use sha2::{Digest, Sha256};

const MIB: u64 = 1 << 20;
/// 13 MiB + 1234 bytes: four body chunks (the last one short and unaligned) + the head.
const LEN: u64 = 13 * MIB + 1234;

/// An image with a boot signature, pseudo-random data, and one all-zero 4 MiB chunk
/// ([5 MiB, 9 MiB)).
fn image_bytes() -> Vec<u8> {
    let mut v = crate::image_noise(LEN as usize, 0x9e37_79b9_7f4a_7c15);
    v[(5 * MIB) as usize..(9 * MIB) as usize].fill(0);
    v
}

fn setup() -> (tempfile::TempDir, PathBuf, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let image = dir.path().join("board.img");
    let bytes = image_bytes();
    std::fs::write(&image, &bytes).unwrap();
    (dir, image, bytes)
}

fn options(image: &Path, device: &Path) -> Options {
    Options {
        image: image.to_owned(),
        device: device.to_owned(),
        dry_run: false,
        verify: true,
        skip_zeros: false,
        allow_large: false,
        yes: true,
    }
}

fn sha256_hex(b: &[u8]) -> String {
    Sha256::digest(b)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn flash_file(opts: &Options) -> anyhow::Result<flash::Outcome> {
    let plan = flash::plan(opts, Path::new("/"))?;
    flash::execute(&plan, &mut |_, _, _| {})
}

#[test]
fn a_new_file_in_a_missing_folder_is_refused_before_anything_is_written() {
    let (dir, image, _) = setup();
    let card = dir.path().join("no/such/folder/card.img");
    let err = format!(
        "{:#}",
        flash::plan(&options(&image, &card), Path::new("/")).unwrap_err()
    );
    assert!(err.contains("no/such/folder does not exist"), "{err}");
    assert!(!dir.path().join("no").exists());
}

#[test]
fn flash_to_a_new_file_writes_and_verifies() {
    let (dir, image, bytes) = setup();
    let card = dir.path().join("card.img");
    let plan = flash::plan(&options(&image, &card), Path::new("/")).unwrap();
    assert_eq!(
        plan.target,
        Target::File {
            exists: false,
            blank: true
        }
    );
    // A file just created reads as zeros: zero chunks are skipped, no head zeroing.
    assert_eq!(
        plan.write,
        WriteOptions {
            skip_zeros: true,
            known_blank: true
        }
    );
    let mut last = (0, 0);
    let outcome = flash::execute(&plan, &mut |phase, done, total| {
        assert!(done <= total && total == LEN);
        if phase == flash::Phase::Verify {
            last = (done, total);
        }
    })
    .unwrap();
    assert_eq!(last, (LEN, LEN));
    let written = std::fs::read(&card).unwrap();
    assert!(written == bytes, "card bytes differ from the image");
    let verify = outcome.verify.unwrap();
    assert_eq!(verify.sha256, sha256_hex(&bytes));
    assert_eq!(verify.sha256, sha256_hex(&written));
    assert_eq!(outcome.write.chunks_skipped, 1);
    assert_eq!(outcome.write.bytes_skipped, 4 * MIB);
    assert_eq!(outcome.write.bytes_written, LEN - 4 * MIB);
}

#[test]
fn flash_over_a_used_card_file_writes_the_zero_chunks_too() {
    let (dir, image, bytes) = setup();
    let card = dir.path().join("used.img");
    std::fs::write(&card, vec![0xffu8; (16 * MIB) as usize]).unwrap();
    let outcome = flash_file(&options(&image, &card)).unwrap();
    assert_eq!(outcome.write.chunks_skipped, 0);
    let written = std::fs::read(&card).unwrap();
    assert!(written[..LEN as usize] == bytes[..], "image range differs");
    // Beyond the image the card keeps what it had, like a card larger than the image.
    assert!(written[LEN as usize..].iter().all(|&b| b == 0xff));
    assert_eq!(outcome.verify.unwrap().sha256, sha256_hex(&bytes));
}

#[test]
fn skip_zeros_on_a_used_card_is_caught_by_verification() {
    let (dir, image, _) = setup();
    let card = dir.path().join("used.img");
    std::fs::write(&card, vec![0xffu8; (16 * MIB) as usize]).unwrap();
    let mut opts = options(&image, &card);
    opts.skip_zeros = true;
    let err = flash_file(&opts).unwrap_err();
    let text = format!("{err:#}");
    assert!(text.contains(&card.display().to_string()), "{text}");
    assert!(
        text.contains(&format!("byte {} differs", 5 * MIB)),
        "{text}"
    );
}

#[test]
fn a_corrupted_byte_fails_verification() {
    let (dir, image, _) = setup();
    let card = dir.path().join("card.img");
    File::create(&card).unwrap().set_len(LEN).unwrap();
    let img = File::open(&image).unwrap();
    let mut disk = Disk::open(&card, 512, false).unwrap();
    let opts = WriteOptions {
        skip_zeros: true,
        known_blank: true,
    };
    fio::write_image(&img, LEN, &mut disk, 512, opts, &mut |_| {}).unwrap();
    // Between the phases: one byte flips on the card.
    let flipped = 7 * MIB + 3;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&card)
        .unwrap();
    let mut b = [0u8];
    f.read_exact_at(&mut b, flipped).unwrap();
    f.write_all_at(&[b[0] ^ 0x01], flipped).unwrap();
    f.sync_all().unwrap();
    match fio::verify_image(&img, LEN, &mut disk, 512, &mut |_| {}) {
        Err(VerifyError::Mismatch {
            offset,
            image_sha256,
            device_sha256,
        }) => {
            assert_eq!(offset, flipped);
            assert_ne!(image_sha256, device_sha256);
        }
        other => panic!("want a mismatch, got {other:?}"),
    }
    // The same card without the flip verifies.
    f.write_all_at(&b, flipped).unwrap();
    f.sync_all().unwrap();
    fio::verify_image(&img, LEN, &mut disk, 512, &mut |_| {}).unwrap();
}

/// A sink whose writes fail with EIO after `left` successful ones, like a card pulled
/// out of the reader.
struct PulledOut<'a> {
    inner: &'a mut Disk,
    left: usize,
}

impl Sink for PulledOut<'_> {
    fn write_at(&mut self, buf: &[u8], offset: u64) -> io::Result<()> {
        if self.left == 0 {
            return Err(io::Error::from_raw_os_error(5));
        }
        self.left -= 1;
        self.inner.write_at(buf, offset)
    }
    fn sync(&mut self) -> io::Result<()> {
        self.inner.sync()
    }
}

#[test]
fn an_interrupted_write_leaves_the_first_sector_unwritten() {
    let (dir, image, bytes) = setup();
    let img = File::open(&image).unwrap();
    let chunks = fio::chunk_order(LEN).len();
    for old in [None, Some(0xaau8)] {
        // Every point of interruption: after 0, 1, ... writes, never the last one.
        for n in 0..chunks {
            let card = dir.path().join("card.img");
            let known_blank = old.is_none();
            match old {
                None => File::create(&card).unwrap().set_len(LEN).unwrap(),
                Some(fill) => std::fs::write(&card, vec![fill; LEN as usize]).unwrap(),
            }
            let mut disk = Disk::open(&card, 512, false).unwrap();
            let mut sink = PulledOut {
                inner: &mut disk,
                left: n + usize::from(!known_blank),
            };
            let opts = WriteOptions {
                skip_zeros: false,
                known_blank,
            };
            let err = fio::write_image(&img, LEN, &mut sink, 512, opts, &mut |_| {}).unwrap_err();
            assert_eq!(err.raw_os_error(), Some(5));
            let after = std::fs::read(&card).unwrap();
            // No boot signature, no partition table: the whole first 1 MiB is zero, on a
            // blank card and on one that held another image alike.
            assert!(
                after[..HEAD as usize].iter().all(|&b| b == 0),
                "old={old:?} n={n}: first MiB not blank"
            );
            // What was written before the failure is the image's.
            if n > 0 {
                let end = (HEAD as usize + CHUNK).min(LEN as usize);
                assert!(after[HEAD as usize..end] == bytes[HEAD as usize..end]);
            }
            std::fs::remove_file(&card).unwrap();
        }
    }
}

#[test]
fn chunks_go_in_order_with_the_head_last() {
    let c = CHUNK;
    assert_eq!(
        fio::chunk_order(LEN),
        vec![
            (MIB, c),
            (5 * MIB, c),
            (9 * MIB, c),
            (13 * MIB, 1234),
            (0, MIB as usize)
        ]
    );
    assert_eq!(fio::chunk_order(1000), vec![(0, 1000)]);
    assert_eq!(fio::chunk_order(MIB), vec![(0, MIB as usize)]);
}

/// A target shorter than the image.
struct Short(Vec<u8>);

impl Source for Short {
    fn read_at(&mut self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let start = (offset as usize).min(self.0.len());
        let n = buf.len().min(self.0.len() - start);
        buf[..n].copy_from_slice(&self.0[start..start + n]);
        Ok(n)
    }
    fn drop_cache(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_short_target_fails_verification() {
    let (_dir, image, bytes) = setup();
    let img = File::open(&image).unwrap();
    let mut short = Short(bytes[..(6 * MIB) as usize].to_vec());
    match fio::verify_image(&img, LEN, &mut short, 512, &mut |_| {}) {
        Err(VerifyError::Short { end, len }) => assert_eq!((end, len), (6 * MIB, LEN)),
        other => panic!("want short, got {other:?}"),
    }
}

#[test]
fn dry_run_writes_nothing() {
    let (dir, image, _) = setup();
    let card = dir.path().join("card.img");
    let mut opts = options(&image, &card);
    opts.dry_run = true;
    flash::run(&opts).unwrap();
    assert!(!card.exists());
    let text = flash::plan(&opts, Path::new("/")).unwrap().describe();
    assert!(text.contains("new regular file"), "{text}");
    assert!(
        text.contains("4 chunk(s) of up to 4 MiB from byte 1048576 on"),
        "{text}"
    );
    assert!(text.contains("all-zero chunks skipped"), "{text}");
    assert!(text.contains("compare SHA-256"), "{text}");
}

#[test]
fn nonsense_targets_are_refused() {
    let (dir, image, _) = setup();
    let err = flash::plan(&options(&image, &image), Path::new("/")).unwrap_err();
    assert!(err.to_string().contains("is the image itself"), "{err}");
    let err = flash::plan(&options(&image, Path::new("/dev/sdzz9")), Path::new("/")).unwrap_err();
    assert!(err.to_string().contains("benchboot devices"), "{err}");
    let err = flash::plan(
        &options(&dir.path().join("none.img"), &dir.path().join("c.img")),
        Path::new("/"),
    )
    .unwrap_err();
    assert!(err.to_string().contains("cargo xtask image"), "{err}");
    let err = flash::plan(&options(&image, dir.path()), Path::new("/")).unwrap_err();
    assert!(
        err.to_string().contains("not a disk this machine lists")
            || err.to_string().contains("not a block device"),
        "{err}"
    );
}

#[test]
fn the_command_asks_and_refuses_without_a_terminal_unless_yes() {
    let (dir, image, bytes) = setup();
    let card = dir.path().join("card.img");
    let run = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_benchboot"))
            .arg("flash")
            .arg(&image)
            .arg("--device")
            .arg(&card)
            .args(extra)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let out = run(&[]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no terminal to confirm on: pass --yes"),
        "{stderr}"
    );
    assert!(!card.exists());
    let out = run(&["--yes"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains(&format!("SHA-256 {} matches", sha256_hex(&bytes))),
        "{stdout}"
    );
    assert!(std::fs::read(&card).unwrap() == bytes);
}

#[test]
fn a_file_without_an_mbr_signature_is_not_an_image() {
    let dir = tempfile::tempdir().unwrap();
    let tiny = dir.path().join("tiny.img");
    std::fs::write(&tiny, b"abc").unwrap();
    let mut sector = vec![0u8; 1024];
    let unsigned = dir.path().join("unsigned.img");
    std::fs::write(&unsigned, &sector).unwrap();
    for bad in [&tiny, &unsigned] {
        let err = flash::check_disk_image(bad).unwrap_err().to_string();
        assert!(
            err.contains("not a disk image") && err.contains("0x55AA"),
            "{err}"
        );
    }
    sector[510] = 0x55;
    sector[511] = 0xaa;
    std::fs::write(&unsigned, &sector).unwrap();
    flash::check_disk_image(&unsigned).unwrap();
    // The whole path refuses before touching the device.
    let device = dir.path().join("card.img");
    let err = format!("{:#}", flash_file(&options(&tiny, &device)).unwrap_err());
    assert!(err.contains("not a disk image"), "{err}");
    assert!(!device.exists());
}
