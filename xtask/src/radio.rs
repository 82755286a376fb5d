//! A radio's files in the initramfs, from the pinned packages: the firmware a board's
//! `[wifi]` lists (links inside the package followed: the contents land at the name the
//! driver asks for; a `wifi.firmware-links` file is read from the other name it gives), cfg80211's `regulatory.db` and its signature, and for `qemu.wifi =
//! "hwsim"` the QEMU-only stand-in AP: its program, the shared libraries its NEEDED
//! entries name (transitively, where the loader's default search finds them: there is
//! no `ld.so.cache`) and the loader its PT_INTERP names.
//!
//! [`check`] is `cargo xtask boards`' part: every file there, and a brcmfmac radio's
//! files named as the driver asks for them (`brcm/brcmfmac<chip>-sdio.<board>.bin|txt`,
//! board = the DTB's first root compatible, before the generic names; the CLM blob by
//! its generic name only: wifi.md).

use std::collections::{BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

use anyhow::{bail, ensure, Context, Result};
use benchboot_board::{Board, QemuWifi, RadioPackages, StandInAp, WifiRadio, SHARED_FILE};
use serde::Serialize;

use crate::packages::{self, Lock, Pinned};

/// What a radio file is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RadioRole {
    /// Firmware the driver loads (`wifi.firmware`).
    Firmware,
    /// cfg80211's regulatory database or its signature.
    Regulatory,
    /// The QEMU-only stand-in AP: its program, a shared library or the loader.
    StandInAp,
}

/// One file of a radio, as it goes into the initramfs.
#[derive(Debug, Clone)]
pub struct RadioFile {
    /// Path in the initramfs, relative: `lib/firmware/brcm/brcmfmac43430-sdio.bin`.
    pub path: String,
    pub data: Vec<u8>,
    /// Permission bits as the package has them.
    pub mode: u32,
    pub package: String,
    pub version: String,
    /// The file in the package the contents come from, links followed:
    /// `lib/firmware/cypress/cyfmac43430-sdio.bin`.
    pub from: String,
    pub role: RadioRole,
    /// The stand-in AP: QEMU runs only, never needed on hardware.
    pub qemu_only: bool,
}

impl RadioFile {
    /// `firmware-brcm80211 20230210-5: lib/firmware/cypress/cyfmac43430-sdio.bin`, with
    /// `(QEMU only)` for the stand-in AP.
    pub fn source(&self) -> String {
        let qemu = if self.qemu_only { " (QEMU only)" } else { "" };
        format!("{} {}: {}{qemu}", self.package, self.version, self.from)
    }
}

/// The radio files of `board` in initramfs order: firmware, regulatory database, then
/// the stand-in AP (program, loader, libraries); empty for a board without a radio.
///
/// # Errors
/// A file not in its package (the message lists every one and says to run `cargo xtask
/// boards`), or a package that cannot be fetched.
pub fn files(board: &Board, lock: &Lock) -> Result<Vec<RadioFile>> {
    let c = collect(board, lock)?;
    if !c.problems.is_empty() {
        bail!(
            "{} radio problem(s) (`cargo xtask boards` checks them all):\n{}",
            c.problems.len(),
            c.problems.join("\n")
        );
    }
    Ok(c.files)
}

/// The pinned packages `files` came from, each once, in order of first use.
///
/// # Errors
/// A package missing from the lock (cannot happen for files [`files`] returned).
pub fn pinned(files: &[RadioFile], lock: &Lock) -> Result<Vec<Pinned>> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for f in files {
        if seen.insert(f.package.as_str()) {
            out.push(lock.get(&f.package)?.clone());
        }
    }
    Ok(out)
}

/// `cargo xtask boards`' radio checks of `board`, each problem naming the file and the
/// field: every `wifi.firmware` file in the firmware packages (links followed), the
/// regulatory files, the stand-in AP with every library it needs (and no library
/// package it does not), and with `dtb` (the board's DTB in the kernel package) a
/// brcmfmac radio's files named as the driver asks for them on this board.
///
/// # Errors
/// Only when a package cannot be fetched or a DTB not read (not a board problem).
pub fn check(board: &Board, lock: &Lock, dtb: Option<&Path>) -> Result<Vec<String>> {
    let mut problems = collect(board, lock)?.problems;
    if let (Some(w), Some(dtb), Some(rp)) = (board.wifi(), dtb, &board.radio_packages) {
        if w.driver == "brcmfmac" {
            let compatible = root_compatible(dtb)?;
            let file = format!("boards/{}.toml", board.name);
            let lookup = |name: &str| -> Result<Option<String>> {
                let name = w.source_name(name);
                for p in &rp.firmware_packages {
                    let (root, pin) = packages::unpacked(lock, p)?;
                    if let Ok(Some(_)) = follow(&root, &format!("lib/firmware/{name}")) {
                        return Ok(Some(format!("{p} {}", pin.version)));
                    }
                }
                Ok(None)
            };
            problems.extend(
                brcmfmac_names(w, &compatible, lookup)?
                    .into_iter()
                    .map(|p| format!("{file}: wifi.firmware: {p}")),
            );
        }
    }
    Ok(problems)
}

/// What [`collect`] found: the files, and what is not there.
struct Collected {
    files: Vec<RadioFile>,
    problems: Vec<String>,
}

fn collect(board: &Board, lock: &Lock) -> Result<Collected> {
    let mut c = Collected {
        files: Vec::new(),
        problems: Vec::new(),
    };
    let Some(rp) = &board.radio_packages else {
        return Ok(c);
    };
    let file = format!("boards/{}.toml", board.name);
    if let Some(w) = board.wifi() {
        firmware(&file, w, rp, lock, &mut c)?;
    }
    regulatory(&file, rp, lock, &mut c)?;
    if board
        .qemu
        .as_ref()
        .is_some_and(|q| q.wifi == QemuWifi::Hwsim)
    {
        stand_in_ap(&file, rp, lock, &mut c)?;
    }
    Ok(c)
}

/// Reads `from` of package `name` into a [`RadioFile`] at `path`.
fn radio_file(
    root: &Path,
    pin: &Pinned,
    from: String,
    path: String,
    role: RadioRole,
) -> Result<RadioFile> {
    use std::os::unix::fs::PermissionsExt;
    let full = root.join(&from);
    let data = std::fs::read(&full).with_context(|| format!("reading {}", full.display()))?;
    let mode = std::fs::metadata(&full)?.permissions().mode() & 0o777;
    Ok(RadioFile {
        path,
        data,
        mode,
        package: pin.name.clone(),
        version: pin.version.clone(),
        from,
        role,
        qemu_only: role == RadioRole::StandInAp,
    })
}

/// `wifi.firmware`: each file the first firmware package has below `lib/firmware/`
/// (a `wifi.firmware-links` file: its `to`, held at the file's own name).
fn firmware(
    file: &str,
    w: &WifiRadio,
    rp: &RadioPackages,
    lock: &Lock,
    c: &mut Collected,
) -> Result<()> {
    'files: for f in &w.firmware {
        let rel = format!("lib/firmware/{f}");
        let source = format!("lib/firmware/{}", w.source_name(f));
        let mut searched = Vec::new();
        for p in &rp.firmware_packages {
            let (root, pin) = packages::unpacked(lock, p)?;
            searched.push(format!("{p} {}", pin.version));
            match follow(&root, &source) {
                Ok(Some(from)) => {
                    c.files
                        .push(radio_file(&root, &pin, from, rel, RadioRole::Firmware)?);
                    continue 'files;
                }
                Ok(None) => {}
                Err(e) => {
                    c.problems.push(format!(
                        "{file}: wifi.firmware: {f}: {e:#} ({p} {})",
                        pin.version
                    ));
                    continue 'files;
                }
            }
        }
        let read_as = match w.source_name(f) {
            s if s == f => String::new(),
            s => format!(" (read as {s}, wifi.firmware-links)"),
        };
        c.problems.push(format!(
            "{file}: wifi.firmware: {f}{read_as} is in none of the firmware packages ({}; \
             boards/{SHARED_FILE} radio.firmware-packages) below lib/firmware/: name the file \
             as the driver asks for it, or pin the package that ships it",
            searched.join(", ")
        ));
    }
    Ok(())
}

/// `radio.regulatory`: regulatory.db and its signature under the kernel's names.
fn regulatory(file: &str, rp: &RadioPackages, lock: &Lock, c: &mut Collected) -> Result<()> {
    let r = &rp.regulatory;
    let (root, pin) = packages::unpacked(lock, &r.package)?;
    for (name, from) in &r.files {
        match follow(&root, from) {
            Ok(Some(path)) => c.files.push(radio_file(
                &root,
                &pin,
                path,
                format!("lib/firmware/{name}"),
                RadioRole::Regulatory,
            )?),
            Ok(None) => c.problems.push(format!(
                "boards/{SHARED_FILE}: radio.regulatory.files: {from} is not in {} {} (for {file})",
                r.package, pin.version
            )),
            Err(e) => c.problems.push(format!(
                "boards/{SHARED_FILE}: radio.regulatory.files: {e:#} (for {file})"
            )),
        }
    }
    Ok(())
}

/// The loader's default directories for a Debian architecture (no `ld.so.cache` in the
/// initramfs), and the ELF machine its programs are for.
fn search_dirs(arch: &str) -> Result<([String; 4], object::Architecture)> {
    use object::Architecture as A;
    let (triplet, machine) = match arch {
        "arm64" => ("aarch64-linux-gnu", A::Aarch64),
        "armhf" => ("arm-linux-gnueabihf", A::Arm),
        "armel" => ("arm-linux-gnueabi", A::Arm),
        "amd64" => ("x86_64-linux-gnu", A::X86_64),
        other => bail!(
            "boards/{SHARED_FILE}: radio.hwsim-ap.arch: `{other}` has no known multiarch triplet"
        ),
    };
    Ok((
        [
            format!("lib/{triplet}"),
            format!("usr/lib/{triplet}"),
            "lib".into(),
            "usr/lib".into(),
        ],
        machine,
    ))
}

/// `radio.hwsim-ap`: the program, its loader and the shared libraries it needs.
fn stand_in_ap(file: &str, rp: &RadioPackages, lock: &Lock, c: &mut Collected) -> Result<()> {
    let ap = &rp.hwsim_ap;
    let field = format!("boards/{SHARED_FILE}: radio.hwsim-ap");
    let why = format!("(qemu.wifi = \"hwsim\" of {file})");
    let (dirs, machine) = search_dirs(&ap.arch)?;
    let (root, pin) = packages::unpacked(lock, &ap.package)?;
    if pin.arch != ap.arch {
        c.problems.push(format!(
            "{field}.package: {} is pinned for {}, the stand-in for {} {why}",
            ap.package, pin.arch, ap.arch
        ));
        return Ok(());
    }
    let program = match follow(&root, &ap.program) {
        Ok(Some(from)) => radio_file(&root, &pin, from, ap.program.clone(), RadioRole::StandInAp)?,
        Ok(None) => {
            c.problems.push(format!(
                "{field}.program: {} is not in {} {} {why}",
                ap.program, ap.package, pin.version
            ));
            return Ok(());
        }
        Err(e) => {
            c.problems.push(format!("{field}.program: {e:#} {why}"));
            return Ok(());
        }
    };
    let libs: Vec<(String, PathBuf, Pinned)> = ap
        .libraries
        .iter()
        .map(|l| packages::unpacked(lock, l).map(|(r, p)| (l.clone(), r, p)))
        .collect::<Result<_>>()?;
    for (l, _, p) in &libs {
        if p.arch != ap.arch {
            c.problems.push(format!(
                "{field}.libraries: {l} is pinned for {}, the stand-in for {} {why}",
                p.arch, ap.arch
            ));
        }
    }
    let dynamic = match elf_dynamic(&program.data, machine) {
        Ok(d) => d,
        Err(e) => {
            c.problems
                .push(format!("{field}.program: {}: {e:#} {why}", ap.program));
            return Ok(());
        }
    };
    if !dynamic.runpath.is_empty() {
        c.problems.push(format!(
            "{field}.program: {} has a RUNPATH/RPATH ({}), which the stand-in's library search \
             does not follow {why}",
            ap.program,
            dynamic.runpath.join(":")
        ));
    }
    let mut search = LibrarySearch {
        libs,
        dirs,
        machine,
        field: &field,
        why: &why,
        used: BTreeSet::new(),
    };
    let mut out = vec![program];
    let mut loader_name = None;
    if let Some(interp) = &dynamic.interp {
        loader_name = interp.rsplit('/').next().map(str::to_owned);
        out.extend(search.loader(interp, ap, c)?);
    }
    out.extend(search.needed(dynamic.needed, ap, loader_name.as_deref(), c)?);
    for l in &ap.libraries {
        if !search.used.contains(l) {
            c.problems.push(format!(
                "{field}.libraries: {l} provides none of the libraries {} needs: remove it {why}",
                ap.program
            ));
        }
    }
    c.files.extend(out);
    Ok(())
}

/// The stand-in AP's library packages, searched in order below the loader's directories
/// for what its program needs; `used` collects the packages that provided something.
struct LibrarySearch<'a> {
    /// (package, unpacked root, pin)
    libs: Vec<(String, PathBuf, Pinned)>,
    dirs: [String; 4],
    machine: object::Architecture,
    field: &'a str,
    why: &'a str,
    used: BTreeSet<String>,
}

impl LibrarySearch<'_> {
    /// `rel` in the first library package holding it (links followed): its index and
    /// the path it was read from.
    fn find(&self, rel: &str) -> Result<Option<(usize, String)>> {
        for (i, (_, root, _)) in self.libs.iter().enumerate() {
            if let Some(from) = follow(root, rel)? {
                return Ok(Some((i, from)));
            }
        }
        Ok(None)
    }

    /// The file at `rel` of package `i`, its package counted as used.
    fn take(&mut self, i: usize, from: String, rel: &str) -> Result<RadioFile> {
        let (name, root, p) = &self.libs[i];
        self.used.insert(name.clone());
        radio_file(root, p, from, rel.to_owned(), RadioRole::StandInAp)
    }

    /// The program's loader (its PT_INTERP `interp`), or a problem when no package has it.
    fn loader(
        &mut self,
        interp: &str,
        ap: &StandInAp,
        c: &mut Collected,
    ) -> Result<Option<RadioFile>> {
        let rel = interp.trim_start_matches('/');
        match self.find(rel)? {
            Some((i, from)) => Ok(Some(self.take(i, from, rel)?)),
            None => {
                c.problems.push(format!(
                    "{}.libraries: the loader {interp} ({}'s PT_INTERP) is in none of {} {}",
                    self.field,
                    ap.program,
                    ap.libraries.join(", "),
                    self.why
                ));
                Ok(None)
            }
        }
    }

    /// The shared libraries `needed` pulls in, breadth first (each library's own
    /// DT_NEEDED after it), each loaded once; the loader answers for its own name.
    fn needed(
        &mut self,
        needed: Vec<String>,
        ap: &StandInAp,
        loader_name: Option<&str>,
        c: &mut Collected,
    ) -> Result<Vec<RadioFile>> {
        let (field, why) = (self.field, self.why);
        let mut out = Vec::new();
        let mut queue: VecDeque<(String, String)> = needed
            .into_iter()
            .map(|n| (n, ap.program.clone()))
            .collect();
        let mut placed: BTreeSet<String> = BTreeSet::new();
        'needed: while let Some((soname, who)) = queue.pop_front() {
            if loader_name == Some(soname.as_str()) || !placed.insert(soname.clone()) {
                continue;
            }
            for d in self.dirs.clone() {
                let rel = format!("{d}/{soname}");
                if let Some((i, from)) = self.find(&rel)? {
                    let lib = self.take(i, from, &rel)?;
                    match elf_dynamic(&lib.data, self.machine) {
                        Ok(dy) => queue.extend(dy.needed.into_iter().map(|n| (n, rel.clone()))),
                        Err(e) => c
                            .problems
                            .push(format!("{field}.libraries: {rel}: {e:#} {why}")),
                    }
                    out.push(lib);
                    continue 'needed;
                }
            }
            c.problems.push(format!(
                "{field}.libraries: {soname} (NEEDED by /{who}) is in none of {} below /{}: add \
                 the package that ships it {why}",
                ap.libraries.join(", "),
                self.dirs.join(", /")
            ));
        }
        Ok(out)
    }
}

/// What the loader reads of an ELF file: PT_INTERP, DT_NEEDED, DT_RUNPATH / DT_RPATH.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Dynamic {
    pub interp: Option<String>,
    pub needed: Vec<String>,
    pub runpath: Vec<String>,
}

/// Reads [`Dynamic`] from an ELF file built for `machine`.
///
/// # Errors
/// Not an ELF file, another machine, or a malformed dynamic section.
pub fn elf_dynamic(data: &[u8], machine: object::Architecture) -> Result<Dynamic> {
    use object::{elf, Endianness, FileKind, Object};
    let arch = object::File::parse(data)
        .context("not an ELF file")?
        .architecture();
    ensure!(arch == machine, "built for {arch:?}, not {machine:?}");
    match FileKind::parse(data)? {
        FileKind::Elf64 => dynamic_of::<elf::FileHeader64<Endianness>>(data),
        FileKind::Elf32 => dynamic_of::<elf::FileHeader32<Endianness>>(data),
        other => bail!("not an ELF file ({other:?})"),
    }
}

fn dynamic_of<Elf>(data: &[u8]) -> Result<Dynamic>
where
    Elf: object::read::elf::FileHeader<Endian = object::Endianness>,
{
    use object::elf;
    use object::read::elf::{Dyn, ProgramHeader};
    let header = Elf::parse(data)?;
    let endian = header.endian()?;
    let mut out = Dynamic::default();
    for ph in header.program_headers(endian, data)? {
        if let Some(i) = ph.interpreter(endian, data)? {
            out.interp = Some(String::from_utf8_lossy(i).into_owned());
        }
    }
    let sections = header.sections(endian, data)?;
    if let Some((dyns, link)) = sections.dynamic(endian, data)? {
        let strings = sections.strings(endian, data, link)?;
        for d in dyns {
            let text = || -> Result<String> {
                Ok(String::from_utf8_lossy(d.string(endian, strings)?).into_owned())
            };
            match d.tag32(endian) {
                Some(elf::DT_NULL) => break,
                Some(elf::DT_NEEDED) => out.needed.push(text()?),
                Some(elf::DT_RUNPATH | elf::DT_RPATH) => out.runpath.push(text()?),
                _ => {}
            }
        }
    }
    Ok(out)
}

/// `rel` inside the unpacked package `root`, symbolic links followed inside the package
/// (relative to the link's folder; an absolute target from the package root): the
/// regular file's path, or `None` when nothing is at `rel`.
///
/// # Errors
/// A link that dangles, leaves the package or loops, or a path that ends at something
/// other than a regular file.
pub fn follow(root: &Path, rel: &str) -> Result<Option<String>> {
    let mut path = rel.to_owned();
    for _ in 0..16 {
        let full = root.join(&path);
        let meta = match std::fs::symlink_metadata(&full) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && path == rel => return Ok(None),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                bail!("{rel} is a link to {path}, which is not in the package")
            }
            Err(e) => return Err(e).with_context(|| format!("reading {}", full.display())),
        };
        if !meta.file_type().is_symlink() {
            ensure!(meta.is_file(), "{rel} is not a regular file");
            return Ok(Some(path));
        }
        let target = std::fs::read_link(&full)?;
        let target = target
            .to_str()
            .with_context(|| format!("{rel}: a link with a name that is not UTF-8"))?;
        let joined = match (target.strip_prefix('/'), path.rsplit_once('/')) {
            (Some(absolute), _) => absolute.to_owned(),
            (None, Some((dir, _))) => format!("{dir}/{target}"),
            (None, None) => target.to_owned(),
        };
        path = normalize(&joined)
            .with_context(|| format!("{rel}: the link to {target} leaves the package"))?;
    }
    bail!("{rel}: more than 16 links in a row")
}

/// `a/b/../c` → `a/c`; `None` when `..` climbs above the start.
fn normalize(p: &str) -> Option<String> {
    let mut out: Vec<&str> = Vec::new();
    for c in p.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                out.pop()?;
            }
            c => out.push(c),
        }
    }
    Some(out.join("/"))
}

/// The DTB's first root `compatible` string (`raspberrypi,model-zero-w`), which
/// brcmfmac takes as the board name of its firmware files.
fn root_compatible(dtb: &Path) -> Result<String> {
    let sh = xshell::Shell::new()?;
    let out = xshell::cmd!(sh, "fdtget -t s {dtb} / compatible")
        .quiet()
        .read()
        .with_context(|| {
            format!(
                "reading / compatible of {} (apt-get install device-tree-compiler)",
                dtb.display()
            )
        })?;
    out.split_whitespace()
        .next()
        .map(str::to_owned)
        .with_context(|| format!("{}: the root node has no compatible", dtb.display()))
}

/// A brcmfmac radio's list against what the driver asks for with board name
/// `compatible`: for each `brcm/brcmfmac<chip>-sdio` listed, the `.bin` and `.txt` it
/// takes (the board's own name first, then the generic one: the first that a package
/// has, `lookup` saying which) and the generic `.clm_blob` when a package has one must
/// be listed, and no name the driver would never read.
fn brcmfmac_names(
    w: &WifiRadio,
    compatible: &str,
    lookup: impl Fn(&str) -> Result<Option<String>>,
) -> Result<Vec<String>> {
    let mut problems = Vec::new();
    let mut bases: Vec<&str> = Vec::new();
    for f in &w.firmware {
        if let Some(end) = f.find("-sdio.").filter(|_| f.starts_with("brcm/brcmfmac")) {
            let base = &f[..end + "-sdio".len()];
            if !bases.contains(&base) {
                bases.push(base);
            }
        }
    }
    if bases.is_empty() {
        problems.push(
            "no brcm/brcmfmac<chip>-sdio.* file: brcmfmac's SDIO radios load \
             brcm/brcmfmac<chip>-sdio.bin, .clm_blob and .txt"
                .to_owned(),
        );
    }
    for base in bases {
        for ext in ["bin", "txt", "clm_blob"] {
            let asked: Vec<String> = if ext == "clm_blob" {
                vec![format!("{base}.{ext}")]
            } else {
                vec![
                    format!("{base}.{compatible}.{ext}"),
                    format!("{base}.{ext}"),
                ]
            };
            let mut taken = None;
            for a in &asked {
                if let Some(pkg) = lookup(a)? {
                    taken = Some((a.clone(), pkg));
                    break;
                }
            }
            let listed: Vec<&String> = w.firmware.iter().filter(|f| asked.contains(f)).collect();
            let order = asked.join(", then ");
            match &taken {
                None if ext == "clm_blob" => {}
                None => problems.push(format!(
                    "brcmfmac asks for {order}: no firmware package has either"
                )),
                Some((name, pkg)) if !listed.contains(&name) => problems.push(format!(
                    "list {name} ({pkg}): brcmfmac asks for {order} on this board \
                     (DTB compatible `{compatible}`)"
                )),
                Some(_) => {}
            }
            for f in listed {
                if taken.as_ref().is_some_and(|(name, _)| name != f) {
                    problems.push(format!(
                        "brcmfmac never reads {f} on this board: it asks for {order} and takes \
                         the first a package has; drop it"
                    ));
                }
            }
        }
        let known = |f: &&String| {
            !f.starts_with(base)
                || ["bin", "txt", "clm_blob"].iter().any(|ext| {
                    **f == format!("{base}.{ext}") || **f == format!("{base}.{compatible}.{ext}")
                })
        };
        for f in w.firmware.iter().filter(|f| !known(f)) {
            problems.push(format!(
                "brcmfmac never asks for {f} on this board (DTB compatible `{compatible}`): \
                 drop it or name the file as the driver does"
            ));
        }
    }
    Ok(problems)
}

#[cfg(test)]
mod tests;
