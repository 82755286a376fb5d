//! `cargo xtask dist`: what a release carries, written to `target/dist/` (or `--out`):
//!
//! - `benchboot-<version>-<triple>.tar.gz` per host target ([`host_cross::DIST_TARGETS`]:
//!   Linux x86_64 and aarch64 (static, musl), macOS aarch64 and x86_64, Windows x86_64),
//!   each holding `benchboot-<version>-<triple>/benchboot[.exe]` and `GETTING-STARTED.txt`;
//! - `benchboot-<version>-<board>.img.xz` per board (`cargo xtask image --board B`, the
//!   `standard` plan), xz preset [`XZ_LEVEL`], one thread;
//! - `GETTING-STARTED.txt` ([`GETTING_STARTED`]) and `SHA256SUMS` (`sha256sum -c` reads it).
//!
//! Reproducible: archive entries sorted, owner 0, modes 0755 / 0644, every time
//! `SOURCE_DATE_EPOCH` ([`reproducible::source_date_epoch`]); gzip with no name and no
//! time; the host binaries built with the build paths remapped (`host_cross::cargo_env`);
//! the images reproducible by construction ([`reproducible`]); each target built by a
//! cargo run of its own (one run unifies features across its targets). Two runs give
//! the same `SHA256SUMS`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use benchboot_image::plans::PlanText;

use crate::host_cross::{self, HostTarget};
use crate::reproducible;

/// The version in every file name: the workspace's.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The xz preset of the images (xz(1)'s default: 6; 94 MiB to compress, 9 MiB to unpack).
pub const XZ_LEVEL: u32 = 6;
/// The gzip level of the host tool archives.
pub const GZIP_LEVEL: u32 = 9;
/// The checksums file's name.
pub const SUMS: &str = "SHA256SUMS";
/// The getting-started file's name.
pub const GETTING_STARTED_FILE: &str = "GETTING-STARTED.txt";

/// What a release's reader does first: install, flash, plug in, collect, report.
pub const GETTING_STARTED: &str = "\
benchboot: boot a single-board computer from an SD card, measure it, read the results.

1. Check the downloads:  sha256sum -c SHA256SUMS   (macOS: shasum -a 256 -c SHA256SUMS)

2. Install the host tool: unpack the archive of your computer and put `benchboot`
   (`benchboot.exe` on Windows) on your PATH:
     tar -xzf benchboot-VERSION-x86_64-unknown-linux-musl.tar.gz
   Linux: x86_64-unknown-linux-musl, aarch64-unknown-linux-musl (static, any distro);
   macOS: aarch64-apple-darwin (Apple silicon), x86_64-apple-darwin (Intel);
   Windows: x86_64-pc-windows-gnu (`tar -xzf` works in PowerShell).

3. Unpack your board's card image (1 GiB):  xz -dk benchboot-VERSION-rpi-zero-w.img.xz
   (Windows: 7-Zip).

4. Flash it:  benchboot devices                      (which disk is the card?)
              benchboot flash benchboot-VERSION-rpi-zero-w.img --device /dev/sdX
   (macOS /dev/diskN, Windows \\\\.\\PhysicalDriveN or E:). flash refuses system and
   mounted disks and reads the card back to verify it.

5. Plug in: the card into the board; the board's USB data port into this computer
   (on a Pi Zero W the port marked USB, not PWR IN). Boards without a USB device port
   report over Ethernet instead: a cable to this computer.
   Start the host end of the network tests:  benchboot peer &

6. Collect:  benchboot collect        (waits for the board, keeps the run; the results
   are also on the card's BBRESULTS partition: benchboot collect --from-card /dev/sdX)

7. Report:   benchboot report <run id>            (the id collect prints)
             benchboot report <run id> --format html -o report.html

The full guide, and how to build all of this yourself: README.md in benchboot's sources.
";

/// What `cargo xtask dist` builds.
#[derive(Debug, Clone)]
pub struct Options {
    /// The folder written (its earlier `benchboot-*`, `SHA256SUMS` and
    /// `GETTING-STARTED.txt` are removed first).
    pub out: PathBuf,
    /// Boards whose image goes in (names of `boards/*.toml`).
    pub boards: Vec<String>,
    /// Host targets whose tool goes in.
    pub hosts: Vec<&'static HostTarget>,
}

/// `target/dist`.
pub fn default_out() -> PathBuf {
    crate::target_dir().join("dist")
}

/// The boards of `--boards`: every board file when `None`, none for `none`, else the
/// names given (each checked to load).
///
/// # Errors
/// A board that does not load.
pub fn boards(arg: Option<&[String]>) -> Result<Vec<String>> {
    match arg {
        None => Ok(benchboot_board::list(&crate::boards_dir())?),
        Some([one]) if one == "none" => Ok(Vec::new()),
        Some(names) => {
            for n in names {
                crate::load_board(n)?;
            }
            Ok(names.to_vec())
        }
    }
}

/// The host targets of `--hosts`: all of [`host_cross::DIST_TARGETS`] when `None`,
/// none for `none`, else the triples given.
///
/// # Errors
/// An unknown triple.
pub fn hosts(arg: Option<&[String]>) -> Result<Vec<&'static HostTarget>> {
    match arg {
        None => Ok(host_cross::DIST_TARGETS.iter().collect()),
        Some([one]) if one == "none" => Ok(Vec::new()),
        Some(triples) => triples.iter().map(|t| HostTarget::of(t)).collect(),
    }
}

/// Builds everything `opts` names into `opts.out` and writes `SHA256SUMS`; prints each
/// file with its size and the time each part took. Returns the files written, sorted.
///
/// # Errors
/// A build, an image or a write that fails; a malformed `SOURCE_DATE_EPOCH`.
pub fn run(opts: &Options) -> Result<Vec<PathBuf>> {
    let epoch = reproducible::source_date_epoch()?;
    clean(&opts.out)?;
    let guide = GETTING_STARTED.replace("VERSION", VERSION);
    crate::write_atomically(&opts.out.join(GETTING_STARTED_FILE), guide.as_bytes())?;
    if !opts.hosts.is_empty() {
        let t0 = Instant::now();
        // One cargo run per target: cargo unifies features across the targets of one
        // run, so a binary would depend on which other targets were asked for.
        let mut built = Vec::new();
        for t in &opts.hosts {
            built.extend(host_cross::build(&[t])?);
        }
        eprintln!(
            "dist: host tool for {} target(s) built in {:.0} s",
            opts.hosts.len(),
            t0.elapsed().as_secs_f64()
        );
        for (t, bin) in opts.hosts.iter().zip(&built) {
            let name = format!("benchboot-{VERSION}-{}", t.triple);
            let exe = bin.file_name().context("a binary has a file name")?;
            let files = vec![
                Entry {
                    path: format!("{name}/{}", exe.to_string_lossy()),
                    data: std::fs::read(bin)
                        .with_context(|| format!("reading {}", bin.display()))?,
                    executable: true,
                },
                Entry {
                    path: format!("{name}/{GETTING_STARTED_FILE}"),
                    data: guide.clone().into_bytes(),
                    executable: false,
                },
            ];
            let archive = tar_gz(files, epoch)?;
            crate::write_atomically(&opts.out.join(format!("{name}.tar.gz")), &archive)?;
        }
    }
    for name in &opts.boards {
        let t0 = Instant::now();
        let board = crate::load_board(name)?;
        let built = crate::image::run_with(
            &board,
            &crate::image::image_path(&board),
            &PlanText::standard(),
        )?;
        let built_s = t0.elapsed().as_secs_f64();
        let out = opts.out.join(format!("benchboot-{VERSION}-{name}.img.xz"));
        xz_file(&built.image, &out)?;
        eprintln!(
            "dist: {name}: image built in {built_s:.0} s, compressed in {:.0} s",
            t0.elapsed().as_secs_f64() - built_s
        );
    }
    let files = write_sums(&opts.out)?;
    for f in &files {
        // A release's files are for everyone to read (a temporary file's 0600 is not).
        std::fs::set_permissions(f, std::os::unix::fs::PermissionsExt::from_mode(0o644))?;
        let size = std::fs::metadata(f)?.len();
        eprintln!("dist: {:>12} {}", size, f.display());
    }
    Ok(files)
}

/// Removes what an earlier dist left in `dir` (only its own file names) and creates it.
fn clean(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        let name = e.file_name().to_string_lossy().into_owned();
        let ours = name.starts_with("benchboot-") || name == SUMS || name == GETTING_STARTED_FILE;
        if ours && e.file_type()?.is_file() {
            std::fs::remove_file(e.path())?;
        }
    }
    Ok(())
}

/// One file of an archive: its path inside, bytes, and whether it is a program.
#[derive(Debug, Clone)]
pub struct Entry {
    pub path: String,
    pub data: Vec<u8>,
    pub executable: bool,
}

/// A `.tar.gz` of `entries`, reproducibly: sorted by path, the folders they name first
/// (mode 0755), owner and group 0 with no names, mode 0755 for programs and 0644 else,
/// every mtime `epoch` (seconds since 1970); gzip level [`GZIP_LEVEL`] with no file
/// name and mtime 0 in its header.
///
/// # Errors
/// A path tar cannot hold.
pub fn tar_gz(mut entries: Vec<Entry>, epoch: u64) -> Result<Vec<u8>> {
    entries.sort_by(|a, b| a.path.cmp(&b.path));
    let gz = flate2::GzBuilder::new()
        .mtime(0)
        .write(Vec::new(), flate2::Compression::new(GZIP_LEVEL));
    let mut tar = tar::Builder::new(gz);
    let mut dirs: Vec<String> = Vec::new();
    for e in &entries {
        let mut at = 0;
        while let Some(i) = e.path[at..].find('/') {
            let dir = format!("{}/", &e.path[..at + i]);
            if !dirs.contains(&dir) {
                let mut h = header(epoch, 0o755, 0);
                h.set_entry_type(tar::EntryType::Directory);
                tar.append_data(&mut h, &dir, std::io::empty())?;
                dirs.push(dir);
            }
            at += i + 1;
        }
        let mode = if e.executable { 0o755 } else { 0o644 };
        let mut h = header(epoch, mode, e.data.len() as u64);
        tar.append_data(&mut h, &e.path, e.data.as_slice())
            .with_context(|| format!("adding {}", e.path))?;
    }
    let gz = tar.into_inner()?;
    Ok(gz.finish()?)
}

fn header(epoch: u64, mode: u32, size: u64) -> tar::Header {
    let mut h = tar::Header::new_gnu();
    h.set_mode(mode);
    h.set_mtime(epoch);
    h.set_uid(0);
    h.set_gid(0);
    h.set_size(size);
    h
}

/// Compresses `src` into `dst` (xz preset [`XZ_LEVEL`], one thread, CRC64), through a
/// temporary file and a rename.
fn xz_file(src: &Path, dst: &Path) -> Result<()> {
    let dir = dst.parent().unwrap_or(Path::new("."));
    let tmp = tempfile::NamedTempFile::new_in(dir)?;
    let mut input =
        std::fs::File::open(src).with_context(|| format!("opening {}", src.display()))?;
    let mut xz = xz2::write::XzEncoder::new(std::io::BufWriter::new(tmp.as_file()), XZ_LEVEL);
    std::io::copy(&mut input, &mut xz).with_context(|| format!("compressing {}", src.display()))?;
    xz.finish()?.flush()?;
    tmp.persist(dst)?;
    Ok(())
}

/// Writes `SHA256SUMS` (`<hex>  <name>` per file, sorted by name: sha256sum's format)
/// over every other file of `dir`, and returns every file of `dir`, sorted.
fn write_sums(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = Vec::new();
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        if e.file_type()?.is_file() && e.file_name() != SUMS {
            files.push(e.path());
        }
    }
    files.sort();
    let mut text = String::new();
    for f in &files {
        let name = f.file_name().context("a file name")?.to_string_lossy();
        if name.contains(char::is_whitespace) {
            bail!("{}: a name with a space breaks {SUMS}", f.display());
        }
        text.push_str(&format!("{}  {name}\n", crate::sha256_file(f)?));
    }
    let sums = dir.join(SUMS);
    crate::write_atomically(&sums, text.as_bytes())?;
    files.push(sums);
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests;
