//! The initramfs: a gzip-compressed cpio "newc" archive (kernel doc
//! Documentation/driver-api/early-userspace/buffer-format.rst).

use std::io::Write;

use anyhow::Result;

/// One node of the archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    Dir,
    /// Contents and permission bits (e.g. 0o755).
    File(Vec<u8>, u32),
    /// Character device (major, minor), mode 0600.
    CharDev(u32, u32),
}

/// Builds the compressed archive. Paths are relative (`init`, `dev/console`); parents
/// must come before children. Reproducible: entries in the order given, owner 0:0,
/// mtime 0, inode numbers by position, a gzip header without name or time; the same
/// entries give the same bytes.
pub fn build(entries: &[(String, Node)]) -> Result<Vec<u8>> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    for (ino, (path, node)) in entries.iter().enumerate() {
        let b = cpio::newc::Builder::new(path)
            .ino(ino as u32 + 1)
            .uid(0)
            .gid(0)
            .mtime(0);
        match node {
            Node::Dir => {
                b.mode(0o040_755).nlink(2).write(&mut gz, 0).finish()?;
            }
            Node::File(data, perm) => {
                let mut w = b
                    .mode(0o100_000 | perm)
                    .nlink(1)
                    .write(&mut gz, data.len() as u32);
                w.write_all(data)?;
                w.finish()?;
            }
            Node::CharDev(major, minor) => {
                b.mode(0o020_600)
                    .nlink(1)
                    .rdev_major(*major)
                    .rdev_minor(*minor)
                    .write(&mut gz, 0)
                    .finish()?;
            }
        }
    }
    cpio::newc::trailer(&mut gz)?;
    Ok(gz.finish()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_through_a_reader() {
        let entries = vec![
            ("dev".to_string(), Node::Dir),
            ("dev/console".to_string(), Node::CharDev(5, 1)),
            ("init".to_string(), Node::File(b"\x7fELF".to_vec(), 0o755)),
        ];
        let gz = build(&entries).unwrap();
        let mut raw = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&gz[..]), &mut raw).unwrap();
        let mut rest = &raw[..];
        let mut seen = Vec::new();
        loop {
            let r = cpio::newc::Reader::new(rest).unwrap();
            if r.entry().is_trailer() {
                break;
            }
            let e = r.entry();
            seen.push((
                e.name().to_owned(),
                e.mode(),
                e.rdev_major(),
                e.rdev_minor(),
                e.file_size(),
            ));
            rest = r.finish().unwrap();
        }
        assert_eq!(
            seen,
            [
                ("dev".into(), 0o040_755, 0, 0, 0),
                ("dev/console".into(), 0o020_600, 5, 1, 0),
                ("init".into(), 0o100_755, 0, 0, 4),
            ]
        );
    }
}
