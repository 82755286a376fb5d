//! `flash`'s write path over a disk that takes whole sectors only, as Windows' raw disks
//! (`\\.\PhysicalDriveN`) and unbuffered files do: the target is a regular file behind
//! the test double `benchboot_sector::Strict`, which fails every read or write whose
//! offset, length or buffer address is not whole sectors, as Windows does
//! (`ERROR_INVALID_PARAMETER`). On Windows (and under wine, `tests/tests/system/
//! host_cross.rs`) the file is opened as `flash` opens a disk there:
//! `FILE_FLAG_NO_BUFFERING | FILE_FLAG_WRITE_THROUGH`.

use std::fs::File;
use std::io;
use std::path::Path;

use benchboot::flash::io::{Sink, Source, Target as OpenTarget};
use benchboot::flash::{self, Options, Target};
use benchboot_sector::{RawIo, Sectors, Strict};
use sha2::{Digest, Sha256};

const MIB: usize = 1 << 20;
/// 5 MiB + 1234 bytes: the last body chunk ends inside a sector.
const LEN: usize = 5 * MIB + 1234;
/// The card: 8 MiB of 0xee.
const CARD: usize = 8 * MIB;

fn image_bytes() -> Vec<u8> {
    crate::image_noise(LEN, 0x2545_f491_4f6c_dd1d)
}

/// The card file opened for reading and writing as `flash` opens a target on this OS.
fn open_rw(path: &Path) -> io::Result<File> {
    #[cfg(windows)]
    return benchboot_windisk::open_unbuffered(path, true);
    #[cfg(not(windows))]
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
}

/// A target with no alignment of its own: every request goes to the double as it is.
struct Bare(Strict<File>);

impl Sink for Bare {
    fn write_at(&mut self, buf: &[u8], offset: u64) -> io::Result<()> {
        let n = self.0.write_raw(buf, offset)?;
        assert_eq!(n, buf.len());
        Ok(())
    }
    fn sync(&mut self) -> io::Result<()> {
        self.0.flush_raw()
    }
}

impl Source for Bare {
    fn read_at(&mut self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        self.0.read_raw(buf, offset)
    }
    fn drop_cache(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl OpenTarget for Bare {
    fn is_direct(&self) -> bool {
        true
    }
}

#[test]
fn a_disk_that_takes_whole_sectors_only_is_flashed_and_verified() {
    let dir = tempfile::tempdir().unwrap();
    let image = dir.path().join("board.img");
    let card = dir.path().join("card.img");
    let bytes = image_bytes();
    std::fs::write(&image, &bytes).unwrap();
    let opts = Options {
        image: image.clone(),
        device: card.clone(),
        dry_run: false,
        verify: true,
        skip_zeros: false,
        allow_large: false,
        yes: true,
    };
    let want_sha: String = Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    for sector in [512, 4096] {
        std::fs::write(&card, vec![0xee; CARD]).unwrap();
        let plan = flash::plan(&opts, Path::new("/")).unwrap();
        assert_eq!(
            plan.target,
            Target::File {
                exists: true,
                blank: false
            }
        );
        let mut opened = 0;
        let out = flash::execute_with(
            &plan,
            &mut |p, _| {
                opened += 1;
                Ok(Box::new(Sectors::new(
                    Strict::new(open_rw(&p.path)?, sector),
                    sector,
                )))
            },
            &mut |_, _, _| {},
        )
        .unwrap_or_else(|e| panic!("{sector}-byte sectors: {e:#}"));
        assert_eq!(opened, 1);
        assert_eq!(out.verify.unwrap().sha256, want_sha);
        assert_eq!(out.write.bytes_written, LEN as u64);
        let got = std::fs::read(&card).unwrap();
        assert_eq!(got.len(), CARD, "{sector}: the card's length changed");
        assert!(got[..LEN] == bytes[..], "{sector}: the image differs");
        // The last sector was read, changed and written back: the card's old bytes
        // after the image are still there.
        assert!(
            got[LEN..].iter().all(|&b| b == 0xee),
            "{sector}: bytes past the image changed"
        );
    }

    // The double is no pushover: the same write without the sector layer fails at the
    // image's unaligned end, with Windows' answer, and the head is still blank.
    std::fs::write(&card, vec![0xee; CARD]).unwrap();
    let plan = flash::plan(&opts, Path::new("/")).unwrap();
    let e = flash::execute_with(
        &plan,
        &mut |p, _| Ok(Box::new(Bare(Strict::new(open_rw(&p.path)?, 512)))),
        &mut |_, _, _| {},
    )
    .unwrap_err();
    let said = format!("{e:#}");
    assert!(
        said.contains("write of 1234 bytes at byte 5242880")
            && said.contains("not whole 512-byte sectors (ERROR_INVALID_PARAMETER, 87)"),
        "{said}"
    );
    assert!(said.contains("its first 1 MiB is blank"), "{said}");
    let got = std::fs::read(&card).unwrap();
    assert!(
        got[..MIB].iter().all(|&b| b == 0),
        "the head was not zeroed"
    );
}
