//! Pinned Debian packages: the lock file, the download cache, SHA-256 checks, unpacking.
//!
//! `boards/packages.lock.toml` records exact versions, pool paths and SHA-256 sums. A
//! package is fetched with `apt-get download` where apt knows it, else over HTTP from
//! the mirror named in the lock (override: `BENCHBOOT_DEBIAN_MIRROR`), cached in
//! `~/.cache/benchboot/debs` (or `$XDG_CACHE_HOME/benchboot/debs`), verified, then
//! unpacked into `target/pkgs/<name>_<version>_<arch>/`.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

/// The lock file, relative to the repository root.
pub const LOCK_FILE: &str = "boards/packages.lock.toml";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lock {
    /// Debian mirror base URL, e.g. `http://deb.debian.org/debian`.
    pub mirror: String,
    /// Suite whose index `cargo xtask lock` reads, e.g. `bookworm`.
    pub suite: String,
    #[serde(rename = "package")]
    pub packages: Vec<Pinned>,
}

/// One exact package version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pinned {
    pub name: String,
    pub version: String,
    pub arch: String,
    /// Archive component: `main`, `non-free-firmware`, ...
    pub component: String,
    /// Path below the mirror, from the index's `Filename:`.
    pub filename: String,
    pub sha256: String,
    /// Bytes.
    pub size: u64,
}

impl Lock {
    /// Reads and parses the lock file.
    ///
    /// # Errors
    /// Names the file and the TOML problem.
    pub fn load(path: &Path) -> Result<Lock> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        toml::from_str(&text).with_context(|| format!("{}: not a valid lock file", path.display()))
    }

    /// The repository's lock.
    pub fn load_repo() -> Result<Lock> {
        Lock::load(&crate::repo_root().join(LOCK_FILE))
    }

    /// The pinned entry for `name` (any arch).
    ///
    /// # Errors
    /// When the lock has no such package, saying how to add it.
    pub fn get(&self, name: &str) -> Result<&Pinned> {
        self.packages.iter().find(|p| p.name == name).with_context(|| {
            format!(
                "{LOCK_FILE}: no `[[package]]` named `{name}`: add one (name, version, arch, component, filename, sha256, size from `apt-cache show {name}`) and run `cargo xtask lock`"
            )
        })
    }

    /// The mirror to use: `BENCHBOOT_DEBIAN_MIRROR` or the lock's.
    pub fn mirror(&self) -> String {
        std::env::var("BENCHBOOT_DEBIAN_MIRROR").unwrap_or_else(|_| self.mirror.clone())
    }
}

/// `~/.cache/benchboot/debs` (or under `$XDG_CACHE_HOME`).
pub fn cache_dir() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(|| crate::target_dir().join("cache"));
    base.join("benchboot").join("debs")
}

/// Returns the cached, verified `.deb` for `p`, downloading it first if needed.
///
/// # Errors
/// When neither apt nor the mirror serves that exact version (the message says how to
/// refresh the lock), or when the SHA-256 does not match.
pub fn fetch(lock: &Lock, p: &Pinned) -> Result<PathBuf> {
    let dir = cache_dir();
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let base = p.filename.rsplit('/').next().unwrap_or(&p.filename);
    let cached = dir.join(base);
    if cached.is_file() && crate::sha256_file(&cached)? == p.sha256 {
        return Ok(cached);
    }
    let tmp = tempfile::tempdir_in(&dir)?;
    let got = match apt_download(p, tmp.path()) {
        Ok(path) => {
            eprintln!("packages: {} {} from apt", p.name, p.version);
            path
        }
        Err(apt_err) => {
            let url = format!("{}/{}", lock.mirror().trim_end_matches('/'), p.filename);
            eprintln!(
                "packages: {} {} from {url} (apt: {apt_err})",
                p.name, p.version
            );
            http_download(&url, &tmp.path().join(base)).map_err(|e| {
                e.context(format!(
                    "{} {} ({}) is not served any more: Debian replaces kernel packages with security updates. \
                     Refresh the pin with `cargo xtask lock` (and, if the kernel ABI moved, the \
                     kernel.package/release of the board file), or point BENCHBOOT_DEBIAN_MIRROR at a mirror \
                     that still has it (e.g. http://snapshot.debian.org/archive/debian/<date>)",
                    p.name, p.version, p.arch
                ))
            })?
        }
    };
    let sum = crate::sha256_file(&got)?;
    if sum != p.sha256 {
        bail!(
            "{}: SHA-256 {sum} does not match {LOCK_FILE} ({}): the download is corrupt or the pin is wrong; \
             delete {} and retry, or refresh with `cargo xtask lock`",
            p.name,
            p.sha256,
            got.display()
        );
    }
    std::fs::rename(&got, &cached)?;
    Ok(cached)
}

fn apt_download(p: &Pinned, dir: &Path) -> Result<PathBuf> {
    let spec = format!("{}:{}={}", p.name, p.arch, p.version);
    let out = Command::new("apt-get")
        .args(["download", "-q", &spec])
        .current_dir(dir)
        .output()
        .context("apt-get not found")?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        bail!(
            "{}",
            err.lines()
                .find(|l| l.starts_with("E:"))
                .unwrap_or("apt-get download failed")
        );
    }
    std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|e| e == "deb"))
        .context("apt-get download wrote no .deb")
}

/// Downloads `url` to `dest` (plain HTTP GET).
pub fn http_download(url: &str, dest: &Path) -> Result<PathBuf> {
    let resp = ureq::get(url)
        .call()
        .with_context(|| format!("GET {url}"))?;
    let mut file = std::fs::File::create(dest)?;
    std::io::copy(&mut resp.into_reader(), &mut file).with_context(|| format!("reading {url}"))?;
    file.sync_all()?;
    Ok(dest.to_owned())
}

/// Unpacks the `data.tar.*` member of a `.deb` (an `ar` archive) into `dest`.
///
/// # Errors
/// When the archive has no data member or uses a compression other than xz/gzip/none.
pub fn unpack_deb(deb: &Path, dest: &Path) -> Result<()> {
    let file = std::fs::File::open(deb).with_context(|| format!("opening {}", deb.display()))?;
    let mut archive = ar::Archive::new(file);
    while let Some(entry) = archive.next_entry() {
        let entry = entry.with_context(|| format!("{}: not an ar archive", deb.display()))?;
        let name = String::from_utf8_lossy(entry.header().identifier()).into_owned();
        if !name.starts_with("data.tar") {
            continue;
        }
        let reader: Box<dyn Read> = match name.as_str() {
            "data.tar.xz" => Box::new(xz2::read::XzDecoder::new(entry)),
            "data.tar.gz" => Box::new(flate2::read::GzDecoder::new(entry)),
            "data.tar" => Box::new(entry),
            other => bail!(
                "{}: member {other} uses an unsupported compression",
                deb.display()
            ),
        };
        tar::Archive::new(reader)
            .unpack(dest)
            .with_context(|| format!("unpacking {} into {}", deb.display(), dest.display()))?;
        return Ok(());
    }
    bail!(
        "{}: no data.tar member: not a Debian package",
        deb.display()
    )
}

/// Fetches and unpacks `name` from the lock; returns the unpacked root. Unpacking is
/// done once per version (a stamp file records the SHA-256), one package at a time in
/// a process: two threads (tests run side by side) never replace a tree the other reads.
pub fn unpacked(lock: &Lock, name: &str) -> Result<(PathBuf, Pinned)> {
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let p = lock.get(name)?.clone();
    let root = crate::target_dir().join("pkgs").join(format!(
        "{}_{}_{}",
        p.name,
        p.version.replace(':', "%3a"),
        p.arch
    ));
    let stamp = root.join(".benchboot-unpacked");
    if std::fs::read_to_string(&stamp).ok().as_deref() == Some(p.sha256.as_str()) {
        return Ok((root, p));
    }
    let deb = fetch(lock, &p)?;
    let parent = root.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent)?;
    let tmp = tempfile::tempdir_in(parent)?;
    unpack_deb(&deb, tmp.path())?;
    std::fs::write(tmp.path().join(".benchboot-unpacked"), &p.sha256)?;
    if root.exists() {
        std::fs::remove_dir_all(&root)?;
    }
    std::fs::rename(tmp.keep(), &root)?;
    Ok((root, p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repo_lock_parses_and_pins_every_board_package() {
        let lock = Lock::load_repo().unwrap();
        for name in benchboot_board::list(&crate::boards_dir()).unwrap() {
            let board = crate::load_board(&name).unwrap();
            let k = lock.get(&board.kernel.package).unwrap();
            assert_eq!(k.arch, board.kernel.arch, "{name}");
            assert_eq!(k.sha256.len(), 64);
            assert!(k.filename.ends_with(".deb"));
            let loaders = board.loader.iter();
            for l in loaders.chain(board.qemu.iter().flat_map(|q| &q.loader)) {
                lock.get(&l.package).unwrap();
            }
            // A radio's packages: firmware and regulatory.db for every radio, the
            // stand-in AP's for QEMU's, each for the architecture it runs on.
            if let Some(r) = &board.radio_packages {
                for p in r.firmware_packages.iter().chain([&r.regulatory.package]) {
                    assert_eq!(lock.get(p).unwrap().arch, "all", "{name}: {p}");
                }
                let hwsim = board.qemu.as_ref().map(|q| q.wifi);
                if hwsim == Some(benchboot_board::QemuWifi::Hwsim) {
                    let ap = &r.hwsim_ap;
                    for p in ap.libraries.iter().chain([&ap.package]) {
                        assert_eq!(lock.get(p).unwrap().arch, ap.arch, "{name}: {p}");
                    }
                }
            }
        }
    }

    #[test]
    fn missing_package_error_says_how_to_add() {
        let lock = Lock::load_repo().unwrap();
        let err = lock.get("linux-image-9.9-foo").unwrap_err().to_string();
        assert!(err.contains("packages.lock.toml"), "{err}");
        assert!(err.contains("cargo xtask lock"), "{err}");
    }

    #[test]
    fn unpack_rejects_non_deb() {
        let dir = tempfile::tempdir().unwrap();
        let bogus = dir.path().join("x.deb");
        std::fs::write(&bogus, b"!<arch>\n").unwrap();
        let err = unpack_deb(&bogus, dir.path()).unwrap_err().to_string();
        assert!(err.contains("no data.tar member"), "{err}");
    }

    #[test]
    fn unpack_a_built_deb() {
        // Build a minimal .deb: ar { debian-binary, data.tar.gz { hello.txt } }.
        let dir = tempfile::tempdir().unwrap();
        let mut tar_gz = Vec::new();
        {
            let enc = flate2::write::GzEncoder::new(&mut tar_gz, flate2::Compression::fast());
            let mut t = tar::Builder::new(enc);
            let mut h = tar::Header::new_gnu();
            h.set_size(5);
            h.set_mode(0o644);
            h.set_cksum();
            t.append_data(&mut h, "usr/share/hello.txt", &b"hello"[..])
                .unwrap();
            t.into_inner().unwrap().finish().unwrap();
        }
        let deb = dir.path().join("t.deb");
        let mut b = ar::Builder::new(std::fs::File::create(&deb).unwrap());
        b.append(
            &ar::Header::new(b"debian-binary".to_vec(), 4),
            &b"2.0\n"[..],
        )
        .unwrap();
        b.append(
            &ar::Header::new(b"data.tar.gz".to_vec(), tar_gz.len() as u64),
            &tar_gz[..],
        )
        .unwrap();
        drop(b);
        let out = dir.path().join("out");
        unpack_deb(&deb, &out).unwrap();
        assert_eq!(
            std::fs::read_to_string(out.join("usr/share/hello.txt")).unwrap(),
            "hello"
        );
    }
}
