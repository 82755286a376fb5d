//! `cargo xtask lock`: re-pins every package of the lock to what the mirror serves now.
//!
//! Reads `<mirror>/dists/<suite>/<component>/binary-<arch>/Packages.xz` and rewrites
//! version, pool path, size and SHA-256 of each locked package.

use anyhow::{bail, Context, Result};

use crate::packages::{Lock, LOCK_FILE};

/// One stanza of a Debian `Packages` index: the fields the lock needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexEntry {
    pub package: String,
    pub version: String,
    pub filename: String,
    pub sha256: String,
    pub size: u64,
}

/// Parses a `Packages` index (deb822 stanzas separated by blank lines). Stanzas missing
/// any needed field are skipped.
pub fn parse_index(text: &str) -> Vec<IndexEntry> {
    text.split("\n\n")
        .filter_map(|stanza| {
            let field = |name: &str| {
                stanza
                    .lines()
                    .find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(':')))
                    .map(|v| v.trim().to_owned())
            };
            Some(IndexEntry {
                package: field("Package")?,
                version: field("Version")?,
                filename: field("Filename")?,
                sha256: field("SHA256")?,
                size: field("Size")?.parse().ok()?,
            })
        })
        .collect()
}

pub fn run() -> Result<()> {
    let path = crate::repo_root().join(LOCK_FILE);
    let mut lock = Lock::load(&path)?;
    let mirror = lock.mirror();
    let mut indexes: Vec<((String, String), Vec<IndexEntry>)> = Vec::new();
    for p in &mut lock.packages {
        let key = (p.component.clone(), p.arch.clone());
        if !indexes.iter().any(|(k, _)| *k == key) {
            let url = format!(
                "{}/dists/{}/{}/binary-{}/Packages.xz",
                mirror.trim_end_matches('/'),
                lock.suite,
                p.component,
                p.arch
            );
            eprintln!("lock: reading {url}");
            let resp = ureq::get(&url)
                .call()
                .with_context(|| format!("GET {url}"))?;
            let mut text = String::new();
            std::io::Read::read_to_string(
                &mut xz2::read::XzDecoder::new(resp.into_reader()),
                &mut text,
            )
            .with_context(|| format!("decompressing {url}"))?;
            indexes.push((key.clone(), parse_index(&text)));
        }
        let entries = &indexes
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, e)| e)
            .unwrap_or_else(|| unreachable!());
        let Some(e) = entries.iter().rev().find(|e| e.package == p.name) else {
            bail!(
                "{} is no longer in {} {}/{}: for a kernel, the ABI moved: set kernel.package and \
                 kernel.release in boards/*.toml and the [[package]] name in {LOCK_FILE} to the \
                 linux-image-<abi>-<flavour> the mirror serves now, then run `cargo xtask lock` again",
                p.name,
                lock.suite,
                p.component,
                p.arch
            );
        };
        if e.version != p.version {
            eprintln!("lock: {} {} -> {}", p.name, p.version, e.version);
        }
        p.version = e.version.clone();
        p.filename = e.filename.clone();
        p.sha256 = e.sha256.clone();
        p.size = e.size;
    }
    let header =
        "# Pinned Debian packages for every board: exact version, pool path and SHA-256.\n\
         # `cargo xtask lock` refreshes versions from the mirror's index. Nothing here is\n\
         # committed as a binary: images are built from these downloads.\n";
    let text = format!("{header}{}", toml::to_string(&lock)?);
    crate::write_atomically(&path, text.as_bytes())?;
    eprintln!("lock: wrote {}", path.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stanzas() {
        let text = "Package: raspi-firmware\nVersion: 1.2\nFilename: pool/r/x.deb\nSize: 10\nSHA256: ab\nDescription: x\n continued\n\nPackage: broken\nVersion: 1\n\n";
        let e = parse_index(text);
        assert_eq!(e.len(), 1);
        assert_eq!(
            e[0],
            IndexEntry {
                package: "raspi-firmware".into(),
                version: "1.2".into(),
                filename: "pool/r/x.deb".into(),
                sha256: "ab".into(),
                size: 10
            }
        );
    }
}
