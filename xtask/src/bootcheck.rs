//! Structural checks of a built card for boards booted by U-Boot (`config = "extlinux"`
//! loaders): what the boot ROM, the SPL and U-Boot's distro boot look for, checked on the
//! image itself. The BeagleBone Black and the Banana Pi M1 have no QEMU machine, so this
//! is all that tests their cards; the QEMU-only copy of a stand-in card is checked the
//! same way before it boots.
//!
//! Formats, each from its documented source:
//! - MBR: the boot ROMs and U-Boot's distro boot take the partition with the active flag
//!   (0x80), else partition 1 (U-Boot doc/develop/distro.rst); FAT boot partition.
//! - Allwinner eGON boot header (linux-sunxi.org Boot0; U-Boot include/sunxi_image.h):
//!   an ARM branch, `eGON.BT0` at 4, checksum at 0x0c, length at 0x10. The checksum is
//!   the 32-bit little-endian word sum over `length` bytes with the checksum field taken
//!   as the seed 0x5F0A6C39; `length` is a multiple of 512 on MMC and the boot ROM loads
//!   at most 32 KiB. U-Boot's SPL adds `SPL` + version at 0x14 and, from version 2, the
//!   offset of its device-tree name at 0x20. The SPL reads U-Boot proper from card sector
//!   80 (40 KiB: the blob's offset 32 KiB; CONFIG_SYS_MMCSD_RAW_MODE_U_BOOT_SECTOR=0x50).
//! - TI GP image (AM335x TRM "image format", U-Boot tools/omapimage.c): an optional
//!   512-byte configuration header (a TOC naming `CHSETTINGS`), then the GP header: size
//!   of the image including the 8-byte header, and the load address. On GP devices the
//!   boot ROM copies it to public SRAM from 0x402F0400, at most 109 KiB (to 0x4030B800).
//! - U-Boot images: legacy uImage (magic 0x27051956, big-endian 64-byte header with CRC-32
//!   of header and data, include/image.h) or FIT (a flattened device tree, 0xd00dfeed).
//! - ARM zImage: magic 0x016F2818 at 0x24, start and end addresses at 0x28 / 0x2c
//!   (Linux Documentation/arch/arm/booting.rst); arm64 Image: `ARM\x64` at 0x38.
//! - extlinux.conf as U-Boot's boot/pxe_utils.c reads it: see [`parse_extlinux`].

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use anyhow::{bail, ensure, Context, Result};
use benchboot::card::{self, Partition};
use benchboot_board::{Arch, Board, BootConfig};
use benchboot_plan::{DEFAULT_PLAN, PLANS_DIR};

use crate::image::EXTLINUX_CONF;
use crate::layout::{self, Layout};

/// Seed of the eGON checksum (the checksum field's value while summing).
pub const EGON_CHECKSUM_SEED: u32 = 0x5F0A_6C39;
/// The most an Allwinner boot ROM loads as SPL (linux-sunxi.org BROM).
pub const EGON_MAX_BYTES: u32 = 32 * 1024;
/// Where the sunxi SPL finds U-Boot proper, from the start of its own blob (sector 80 of
/// the card, the SPL being at sector 16).
pub const SUNXI_U_BOOT_OFFSET: usize = 32 * 1024;
/// AM335x public SRAM the boot ROM downloads a GP image to (TRM, GP devices).
pub const AM335X_SRAM: std::ops::Range<u32> = 0x402F_0400..0x4030_B800;
/// ARM zImage magic at byte 0x24 (Linux Documentation/arch/arm/booting.rst).
#[cfg(test)]
const ZIMAGE_MAGIC: u32 = 0x016F_2818;
/// Legacy U-Boot image magic (include/image.h).
pub const UIMAGE_MAGIC: u32 = 0x2705_1956;
/// Flattened device tree magic (FIT images and DTBs).
pub const FDT_MAGIC: u32 = 0xD00D_FEED;

fn le32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// What an eGON SPL header says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Egon {
    /// Bytes the boot ROM loads and checksums.
    pub length: u32,
    pub checksum: u32,
    /// U-Boot's SPL signature version (`SPL` + version at 0x14), if present.
    pub spl_version: Option<u8>,
    /// The device tree U-Boot's SPL was built for (SPL version 2 and later).
    pub dt_name: Option<String>,
}

/// The eGON checksum of `blob[..length]`: the word sum with the checksum field as seed.
pub fn egon_checksum(blob: &[u8], length: usize) -> u32 {
    blob[..length]
        .chunks_exact(4)
        .enumerate()
        .map(|(i, w)| {
            if i == 3 {
                EGON_CHECKSUM_SEED
            } else {
                u32::from_le_bytes([w[0], w[1], w[2], w[3]])
            }
        })
        .fold(0u32, u32::wrapping_add)
}

/// Checks an Allwinner eGON boot header at the start of `blob` as the boot ROM does.
///
/// # Errors
/// No branch instruction, no `eGON.BT0`, a length the boot ROM refuses or a wrong
/// checksum.
pub fn check_egon(blob: &[u8]) -> Result<Egon> {
    ensure!(
        blob.len() >= 0x30,
        "{} bytes: too short for an eGON header",
        blob.len()
    );
    ensure!(
        blob[3] == 0xEA,
        "no ARM branch at byte 0 ({:02x?}): the boot ROM jumps there",
        &blob[..4]
    );
    ensure!(
        &blob[4..12] == b"eGON.BT0",
        "no eGON.BT0 magic at byte 4 (found {:?})",
        String::from_utf8_lossy(&blob[4..12])
    );
    let checksum = le32(blob, 0x0c).unwrap_or(0);
    let length = le32(blob, 0x10).unwrap_or(0);
    ensure!(
        length > 0 && length.is_multiple_of(512),
        "eGON length {length}: must be a non-zero multiple of 512 on MMC"
    );
    ensure!(
        length <= EGON_MAX_BYTES,
        "eGON length {length}: the boot ROM loads at most {EGON_MAX_BYTES} bytes"
    );
    ensure!(
        length as usize <= blob.len(),
        "eGON length {length} runs past the blob ({} bytes)",
        blob.len()
    );
    let sum = egon_checksum(blob, length as usize);
    ensure!(
        sum == checksum,
        "eGON checksum {checksum:#010x} does not match the sum {sum:#010x} over {length} bytes"
    );
    let spl_version = (&blob[0x14..0x17] == b"SPL").then_some(blob[0x17]);
    let dt_name = match spl_version {
        Some(v) if v >= 2 => le32(blob, 0x20)
            .filter(|&o| o != 0 && (o as usize) < length as usize)
            .map(|o| {
                let s = &blob[o as usize..length as usize];
                let end = s.iter().position(|&b| b == 0).unwrap_or(s.len());
                String::from_utf8_lossy(&s[..end]).into_owned()
            }),
        _ => None,
    };
    Ok(Egon {
        length,
        checksum,
        spl_version,
        dt_name,
    })
}

/// A U-Boot image header: what kind and how many bytes it covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UBootImage {
    /// Legacy uImage: 64-byte header + `data_bytes`, both CRCs checked.
    Legacy { data_bytes: u32, name: String },
    /// FIT: a device tree of `fdt_bytes` (external data may follow).
    Fit { fdt_bytes: u32 },
}

impl UBootImage {
    /// Bytes the image spans at least.
    pub fn bytes(&self) -> u64 {
        match self {
            UBootImage::Legacy { data_bytes, .. } => 64 + u64::from(*data_bytes),
            UBootImage::Fit { fdt_bytes } => u64::from(*fdt_bytes),
        }
    }
}

/// Checks a U-Boot image (legacy uImage with its CRCs, or FIT) at the start of `data`.
///
/// # Errors
/// Neither magic, a CRC mismatch, or a size past the end of `data`.
pub fn check_u_boot_image(data: &[u8]) -> Result<UBootImage> {
    match be32(data, 0) {
        Some(UIMAGE_MAGIC) => {
            ensure!(data.len() >= 64, "uImage header cut short");
            let mut header = data[..64].to_vec();
            let hcrc = be32(&header, 4).unwrap_or(0);
            header[4..8].fill(0);
            ensure!(
                crc32(&header) == hcrc,
                "uImage header CRC {hcrc:#010x} does not match"
            );
            let size = be32(data, 12).unwrap_or(0);
            let end = 64 + size as usize;
            ensure!(
                end <= data.len(),
                "uImage data of {size} bytes runs past the end ({} bytes)",
                data.len()
            );
            let dcrc = be32(data, 24).unwrap_or(0);
            ensure!(
                crc32(&data[64..end]) == dcrc,
                "uImage data CRC {dcrc:#010x} does not match"
            );
            let name = &data[32..64];
            let name_end = name.iter().position(|&b| b == 0).unwrap_or(32);
            Ok(UBootImage::Legacy {
                data_bytes: size,
                name: String::from_utf8_lossy(&name[..name_end]).into_owned(),
            })
        }
        Some(FDT_MAGIC) => {
            let size = be32(data, 4).unwrap_or(0);
            ensure!(
                size >= 40 && size as usize <= data.len(),
                "FIT of {size} bytes in {} bytes",
                data.len()
            );
            Ok(UBootImage::Fit { fdt_bytes: size })
        }
        _ => bail!(
            "no U-Boot image: neither uImage ({UIMAGE_MAGIC:#x}) nor FIT ({FDT_MAGIC:#x}) magic"
        ),
    }
}

fn crc32(data: &[u8]) -> u32 {
    let mut c = flate2::Crc::new();
    c.update(data);
    c.sum()
}

/// What a TI GP image (MLO) says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpImage {
    /// True when a configuration header (TOC with `CHSETTINGS`) precedes the GP header.
    pub config_header: bool,
    /// Image size, the 8-byte GP header included.
    pub size: u32,
    pub load_address: u32,
}

/// Checks a TI GP image for an AM335x GP device: where the GP header is, that the file
/// holds what it announces and that it fits the SRAM the boot ROM copies it to.
///
/// # Errors
/// A size or load address the boot ROM cannot use.
pub fn check_gp_image(data: &[u8]) -> Result<GpImage> {
    // The TOC's first item: offset, size, 12 reserved bytes, a 12-byte name.
    let config_header = data.get(20..30) == Some(b"CHSETTINGS".as_slice());
    let at = if config_header { 512 } else { 0 };
    let size = le32(data, at).context("no GP header: file too short")?;
    let load_address = le32(data, at + 4).context("no GP header: file too short")?;
    ensure!(
        size > 8 && (size as usize) <= data.len() - at,
        "GP header size {size}: the file holds {} bytes from the header on",
        data.len() - at
    );
    ensure!(
        AM335X_SRAM.contains(&load_address)
            && u64::from(load_address) + u64::from(size) - 8 <= u64::from(AM335X_SRAM.end),
        "GP image of {size} bytes at {load_address:#010x}: the boot ROM loads into \
         {:#010x}..{:#010x} only",
        AM335X_SRAM.start,
        AM335X_SRAM.end
    );
    Ok(GpImage {
        config_header,
        size,
        load_address,
    })
}

/// Checks that `data` is a kernel image the board's boot loader can start: an ARM zImage
/// (`bootz`) for 32-bit boards, an arm64 Image (`booti`) for 64-bit ones (the header
/// magic read by [`crate::boards::kernel_image_arch`]); a zImage must hold the bytes its
/// start and end addresses announce.
///
/// # Errors
/// No kernel header, one for the other architecture, or a zImage cut short.
pub fn check_kernel(data: &[u8], arch: Arch) -> Result<String> {
    let found = crate::boards::kernel_image_arch(data)?;
    ensure!(found == arch, "a {found:?} kernel for an {arch:?} board");
    match arch {
        Arch::Arm => {
            let (start, end) = (le32(data, 0x28).unwrap_or(0), le32(data, 0x2c).unwrap_or(0));
            let len = end.wrapping_sub(start);
            ensure!(
                end > start && len as usize <= data.len(),
                "zImage spans {start:#x}..{end:#x} but the file has {} bytes",
                data.len()
            );
            Ok(format!("ARM zImage ({len} bytes)"))
        }
        Arch::Aarch64 => Ok(format!("arm64 Image ({} bytes)", data.len())),
    }
}

/// One `label` of an extlinux.conf, as U-Boot keeps it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Label {
    pub name: String,
    /// `kernel` or `linux` (the last one given), without a FIT `#config` suffix.
    pub kernel: Option<String>,
    /// The first `initrd`, else `initrd=` from `append`.
    pub initrd: Option<String>,
    /// The first `fdt` / `devicetree`.
    pub fdt: Option<String>,
    pub fdtdir: Option<String>,
    pub append: Option<String>,
    pub localboot: bool,
}

/// An extlinux.conf as U-Boot's pxe_utils parses it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extlinux {
    /// `default` / `ontimeout` (the last one), else the first label with `menu default`.
    pub default: Option<String>,
    pub timeout: Option<i64>,
    pub prompt: Option<i64>,
    pub labels: Vec<Label>,
    /// Top-level lines U-Boot ignores ("Ignoring unknown command").
    pub ignored: Vec<String>,
}

impl Extlinux {
    /// The label U-Boot boots with no one at the console: the default when it names a
    /// label, else (U-Boot tries the labels in order) the first.
    pub fn boot_label(&self) -> Option<&Label> {
        self.default
            .as_ref()
            .and_then(|d| self.labels.iter().find(|l| &l.name == d))
            .or_else(|| self.labels.first())
    }
}

/// Splits a line the way pxe_utils' lexer does: leading blanks skipped, a `#` there
/// makes the rest a comment; a keyword is the next whitespace-delimited word, lowercased;
/// a string literal is the rest of the line, verbatim (trailing blanks and a CR kept,
/// as U-Boot keeps them).
fn keyword(line: &str) -> Option<(String, &str)> {
    let line = line.trim_start_matches([' ', '\t']);
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    let end = line.find(char::is_whitespace).unwrap_or(line.len());
    let rest = line[end..].trim_start_matches([' ', '\t']);
    Some((line[..end].to_ascii_lowercase(), rest))
}

/// The string literal after a keyword; U-Boot refuses an empty one or one starting with
/// `#` ("Expected string literal").
fn literal(kw: &str, rest: &str, n: usize) -> Result<String> {
    ensure!(
        !rest.is_empty() && !rest.starts_with('#'),
        "line {n}: `{kw}` needs a value"
    );
    Ok(rest.to_owned())
}

fn integer(kw: &str, rest: &str, n: usize) -> Result<i64> {
    let s = literal(kw, rest, n)?;
    // simple_strtol: leading digits, 0 when there are none.
    let digits: String = s
        .trim()
        .chars()
        .enumerate()
        .take_while(|(i, c)| c.is_ascii_digit() || (*i == 0 && *c == '-'))
        .map(|(_, c)| c)
        .collect();
    Ok(digits.parse().unwrap_or(0))
}

/// Parses an extlinux.conf with U-Boot's keywords (boot/pxe_utils.c): top level
/// `default`, `ontimeout`, `timeout`, `prompt`, `menu`, `label`, `include`; in a label
/// `kernel` / `linux`, `initrd`, `fdt` / `devicetree`, `fdtdir` / `devicetreedir`,
/// `append`, `localboot`, `menu default`, `menu label`, and the ones that change nothing
/// here (`fdtoverlays`, `ipappend`, `kaslrseed`, `say`). As in U-Boot, any other word
/// ends the label and is then ignored at the top level, and so does a second `initrd`,
/// `fdt` or `fdtdir`: only the first is read, and its value is then taken for the next
/// keyword (what follows in the label is lost).
///
/// # Errors
/// What U-Boot refuses: a keyword without its value, a label without a name, and
/// `include` (its file would have to be fetched; benchboot never writes one).
pub fn parse_extlinux(text: &str) -> Result<Extlinux> {
    let mut conf = Extlinux::default();
    let mut menu_default: Option<String> = None;
    let mut in_label = false;
    for (i, raw) in text.split('\n').enumerate() {
        let n = i + 1;
        let Some((mut kw, mut rest)) = keyword(raw) else {
            continue;
        };
        let mut line = raw.to_owned();
        if in_label {
            let label = conf.labels.last_mut().expect("in a label");
            // `Some(first)`: a keyword whose first value wins; a second one ends the label.
            let first_wins = match kw.as_str() {
                "initrd" => Some(&mut label.initrd),
                "fdt" | "devicetree" => Some(&mut label.fdt),
                "fdtdir" | "devicetreedir" => Some(&mut label.fdtdir),
                _ => None,
            };
            let handled = match first_wins {
                Some(slot @ None) => {
                    *slot = Some(literal(&kw, rest, n)?);
                    true
                }
                Some(Some(_)) => {
                    // The value is read as the next keyword: the label ends there.
                    match keyword(rest) {
                        Some((k, r)) => (kw, rest, line) = (k, r, rest.to_owned()),
                        None => {
                            in_label = false;
                            continue;
                        }
                    }
                    false
                }
                None => match kw.as_str() {
                    "kernel" | "linux" => {
                        let v = literal(&kw, rest, n)?;
                        label.kernel = Some(v.split('#').next().unwrap_or("").to_owned());
                        true
                    }
                    "append" => {
                        let v = literal(&kw, rest, n)?;
                        if label.initrd.is_none() {
                            if let Some(p) = v.find("initrd=") {
                                let s = &v[p + 7..];
                                let end = s.find(' ').unwrap_or(s.len());
                                label.initrd = Some(s[..end].to_owned());
                            }
                        }
                        label.append = Some(v);
                        true
                    }
                    "localboot" => {
                        integer(&kw, rest, n)?;
                        label.localboot = true;
                        true
                    }
                    "menu" => {
                        if keyword(rest).is_some_and(|(k, _)| k == "default")
                            && menu_default.is_none()
                        {
                            menu_default = Some(label.name.clone());
                        }
                        true
                    }
                    "fdtoverlays" | "devicetree-overlay" | "ipappend" | "kaslrseed" | "say" => true,
                    _ => false,
                },
            };
            if handled {
                continue;
            }
            in_label = false;
        }
        match kw.as_str() {
            "label" => {
                let name = literal(&kw, rest, n).context("a label needs a name")?;
                conf.labels.push(Label {
                    name,
                    ..Label::default()
                });
                in_label = true;
            }
            "default" | "ontimeout" => conf.default = Some(literal(&kw, rest, n)?),
            "timeout" => conf.timeout = Some(integer(&kw, rest, n)?),
            "prompt" => conf.prompt = integer(&kw, rest, n).ok(),
            "menu" | "fallback" => {}
            "include" => bail!("line {n}: `include` is not followed by this check"),
            _ => conf.ignored.push(line),
        }
    }
    if conf.default.is_none() {
        conf.default = menu_default;
    }
    Ok(conf)
}

/// Resolves a path of an extlinux.conf on its partition as U-Boot's `sysboot` does:
/// absolute paths from the partition root, others from the folder of the config file.
pub fn resolve(conf_path: &str, path: &str) -> String {
    match path.strip_prefix('/') {
        Some(abs) => abs.to_owned(),
        None => {
            let dir = conf_path.rsplit_once('/').map_or("", |(d, _)| d);
            if dir.is_empty() {
                path.to_owned()
            } else {
                format!("{dir}/{path}")
            }
        }
    }
}

/// Checks the boot label of an extlinux.conf against the board: kernel, initramfs and
/// DTB are named and exist (`read` reads a file of the boot partition), the kernel is
/// one the loader boots, the DTB is the board's, the initramfs holds `/init` and the
/// plan the command line selects, and the command line carries the board's console.
///
/// # Errors
/// Every problem found, one per line.
pub fn check_extlinux(
    conf: &Extlinux,
    board: &Board,
    read: &mut dyn FnMut(&str) -> Result<Vec<u8>>,
) -> Result<BootLabel> {
    let mut problems = Vec::new();
    if let Some(d) = &conf.default {
        if !conf.labels.iter().any(|l| &l.name == d) {
            problems.push(format!("`default {d}` names no label"));
        }
    }
    for line in &conf.ignored {
        problems.push(format!(
            "U-Boot ignores {line:?} (not a keyword where it stands)"
        ));
    }
    let Some(label) = conf.boot_label() else {
        bail!("no label to boot");
    };
    if label.localboot {
        problems.push(format!("label {}: `localboot` boots no kernel", label.name));
    }
    let mut file = |what: &str, path: &Option<String>| -> Option<(String, Vec<u8>)> {
        let Some(p) = path else {
            problems.push(format!("label {}: no {what}", label.name));
            return None;
        };
        let at = resolve(EXTLINUX_CONF, p);
        match read(&at) {
            Ok(d) => Some((at, d)),
            Err(e) => {
                problems.push(format!("label {}: {what} {p:?}: {e:#}", label.name));
                None
            }
        }
    };
    let kernel = file("kernel", &label.kernel);
    let initrd = file("initrd", &label.initrd);
    let fdt = if board.kernel.dtb.is_some() || label.fdt.is_some() {
        file("fdt", &label.fdt)
    } else {
        None
    };
    let mut kernel_kind = String::new();
    if let Some((_, k)) = &kernel {
        match check_kernel(k, board.arch) {
            Ok(kind) => kernel_kind = kind,
            Err(e) => problems.push(format!("kernel: {e:#}")),
        }
    }
    if let Some((at, d)) = &fdt {
        let name = at.rsplit('/').next().unwrap_or(at);
        if board.kernel.dtb.as_deref() != Some(name) {
            problems.push(format!(
                "fdt {at}: the board's DTB is {:?}",
                board.kernel.dtb
            ));
        }
        if be32(d, 0) != Some(FDT_MAGIC) || be32(d, 4).is_none_or(|s| s as usize > d.len()) {
            problems.push(format!("fdt {at}: not a flattened device tree"));
        }
    }
    let append = label.append.clone().unwrap_or_default();
    let words: Vec<&str> = append.split_whitespace().collect();
    let console = format!("console={}", board.boot.console);
    if !words.contains(&console.as_str()) {
        problems.push(format!("append {append:?} lacks {console}"));
    }
    let plan = words
        .iter()
        .rev()
        .find_map(|w| w.strip_prefix("benchboot.plan="))
        .unwrap_or(DEFAULT_PLAN)
        .to_owned();
    if let Some((at, d)) = &initrd {
        let want = format!("{}/{plan}.json", PLANS_DIR.trim_start_matches('/'));
        match initramfs_has(d, &["init", &want]) {
            Ok(()) => {}
            Err(e) => problems.push(format!("initrd {at}: {e:#}")),
        }
    }
    ensure!(problems.is_empty(), "{}", problems.join("\n"));
    Ok(BootLabel {
        name: label.name.clone(),
        kernel: kernel.map(|(p, _)| p).unwrap_or_default(),
        kernel_kind,
        initrd: initrd.map(|(p, _)| p).unwrap_or_default(),
        fdt: fdt.map(|(p, _)| p),
        plan,
        append,
    })
}

/// Checks that a gzip-compressed (or plain) newc initramfs holds `names`, `init` as an
/// executable regular file.
fn initramfs_has(data: &[u8], names: &[&str]) -> Result<()> {
    let mut raw = Vec::new();
    if data.starts_with(&[0x1f, 0x8b]) {
        flate2::read::GzDecoder::new(data)
            .read_to_end(&mut raw)
            .context("not a gzip stream")?;
    } else {
        raw = data.to_vec();
    }
    let mut found: Vec<String> = Vec::new();
    let mut rest: &[u8] = &raw;
    loop {
        let r = cpio::newc::Reader::new(rest).context("not a cpio newc archive")?;
        if r.entry().is_trailer() {
            break;
        }
        let e = r.entry();
        let exec = e.mode() & 0o170_000 == 0o100_000 && e.mode() & 0o111 != 0;
        if e.name() != "init" || exec {
            found.push(e.name().to_owned());
        }
        rest = r.finish()?;
    }
    let missing: Vec<&str> = names
        .iter()
        .filter(|n| !found.iter().any(|f| f == *n))
        .copied()
        .collect();
    ensure!(
        missing.is_empty(),
        "the archive lacks {} (an executable `init`, the plan the command line selects)",
        missing.join(", ")
    );
    Ok(())
}

/// The label U-Boot boots, as checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BootLabel {
    pub name: String,
    /// Paths on the boot partition.
    pub kernel: String,
    pub kernel_kind: String,
    pub initrd: String,
    pub fdt: Option<String>,
    pub append: String,
    /// The plan `benchboot.plan=` selects (default `plan`).
    pub plan: String,
}

/// What [`check_card`] found.
#[derive(Debug, Clone)]
pub struct CardReport {
    /// The partition the boot ROM and distro boot take (active flag).
    pub boot_partition: Partition,
    /// Per raw blob: file, card offset, bytes it spans, description.
    pub raw_blobs: Vec<(String, u64, u64, String)>,
    /// Per loader file on the boot partition: name and description.
    pub loader_files: Vec<(String, String)>,
    pub extlinux: Extlinux,
    pub label: BootLabel,
}

impl CardReport {
    /// One line for logs.
    pub fn summary(&self) -> String {
        let mut parts = vec![format!(
            "boot partition p{} (active, FAT) at {} MiB",
            self.boot_partition.number,
            self.boot_partition.offset >> 20
        )];
        for (f, o, n, what) in &self.raw_blobs {
            parts.push(format!("{f} at {o}..{}: {what}", o + n));
        }
        for (f, what) in &self.loader_files {
            parts.push(format!("{f}: {what}"));
        }
        parts.push(format!(
            "extlinux label {}: {} ({}), {}, {}, append {:?}",
            self.label.name,
            self.label.kernel,
            self.label.kernel_kind,
            self.label.initrd,
            self.label.fdt.as_deref().unwrap_or("no fdt"),
            self.label.append
        ));
        format!("boot check passed: {}", parts.join("; "))
    }
}

/// Checks a built card of a U-Boot board against the board file and the layout: the MBR
/// (layout as planned, one active FAT partition: p1), the loader's raw blobs in the gap
/// before p1 and its files on p1 in the formats their boot ROM / SPL load, and the
/// extlinux.conf distro boot reads ([`check_extlinux`]).
///
/// # Errors
/// A board without an `extlinux` loader, or every problem found.
pub fn check_card(board: &Board, image: &Path, layout: &Layout) -> Result<CardReport> {
    let Some(loader) = board
        .loader
        .as_ref()
        .filter(|l| l.config == BootConfig::Extlinux)
    else {
        bail!(
            "{}: the boot check covers U-Boot (extlinux) loaders only",
            board.name
        );
    };
    let mut disk = File::open(image).with_context(|| format!("opening {}", image.display()))?;
    let mut problems: Vec<String> = Vec::new();

    // The partition table: as planned, and exactly one active partition, p1, FAT.
    let parts = card::partitions(&mut disk)?;
    ensure!(!parts.is_empty(), "no MBR partition table");
    for want in &layout.parts {
        match parts.iter().find(|p| p.number == want.number) {
            Some(p)
                if (p.offset, p.len, p.mbr_type)
                    == (want.offset_bytes(), want.size_bytes(), want.mbr_type) => {}
            Some(p) => problems.push(format!(
                "p{}: type {:#04x} at {}+{} bytes, planned {:#04x} at {}+{}",
                p.number,
                p.mbr_type,
                p.offset,
                p.len,
                want.mbr_type,
                want.offset_bytes(),
                want.size_bytes()
            )),
            None => problems.push(format!("p{} is missing", want.number)),
        }
    }
    let mbr = mbrman::MBR::read_from(&mut disk, layout::SECTOR as u32)?;
    let active: Vec<usize> = mbr
        .iter()
        .filter(|(_, e)| e.is_used() && e.boot == mbrman::BOOT_ACTIVE)
        .map(|(i, _)| i)
        .collect();
    ensure!(
        active == [1],
        "active partitions {active:?}: the boot ROM and distro boot need p1 alone marked active"
    );
    let boot = *parts
        .iter()
        .find(|p| p.number == 1)
        .context("no partition 1")?;
    if !boot.is_fat_type() {
        problems.push(format!("p1 has type {:#04x}, not FAT", boot.mbr_type));
    }
    let first_part = parts.iter().map(|p| p.offset).min().unwrap_or(0);

    // Raw blobs, in the gap between the MBR and the first partition.
    let mut raw_blobs = Vec::new();
    for blob in &loader.raw {
        let mut head = vec![0u8; usize::try_from(first_part.saturating_sub(blob.offset))?];
        disk.seek(SeekFrom::Start(blob.offset))?;
        disk.read_exact(&mut head)
            .with_context(|| format!("reading {} at {}", blob.file, blob.offset))?;
        match check_raw(&blob.file, &head, board) {
            Ok((span, what)) => raw_blobs.push((blob.file.clone(), blob.offset, span, what)),
            Err(e) => problems.push(format!("{} at byte {}: {e:#}", blob.file, blob.offset)),
        }
    }

    // Loader files on the boot partition's root, where the boot ROM / SPL look.
    let mut read =
        |name: &str| -> Result<Vec<u8>> { Ok(card::read_fat_file(&mut disk, &boot, name)?) };
    let mut loader_files = Vec::new();
    for f in &loader.files {
        match read(f).and_then(|d| check_file(f, &d)) {
            Ok(what) => loader_files.push((f.clone(), what)),
            Err(e) => problems.push(format!("p1:/{f}: {e:#}")),
        }
    }

    let conf_text = read(EXTLINUX_CONF)
        .and_then(|d| Ok(String::from_utf8(d)?))
        .with_context(|| format!("p1:/{EXTLINUX_CONF}"))?;
    let extlinux = parse_extlinux(&conf_text).context(EXTLINUX_CONF)?;
    let label = match check_extlinux(&extlinux, board, &mut read) {
        Ok(l) => Some(l),
        Err(e) => {
            problems.push(format!("{EXTLINUX_CONF}: {e:#}"));
            None
        }
    };
    ensure!(
        problems.is_empty(),
        "{}: {} problem(s):\n{}",
        image.display(),
        problems.len(),
        problems.join("\n")
    );
    Ok(CardReport {
        boot_partition: boot,
        raw_blobs,
        loader_files,
        extlinux,
        label: label.expect("checked"),
    })
}

/// Checks a raw blob by U-Boot's output name; returns the bytes it spans on the card and
/// a description. `head` runs from the blob's offset to the first partition.
fn check_raw(file: &str, head: &[u8], board: &Board) -> Result<(u64, String)> {
    match file {
        "u-boot-sunxi-with-spl.bin" => {
            let egon = check_egon(head)?;
            // U-Boot's SPL is built for one board: its device tree must be the card's.
            let want = board
                .kernel
                .dtb
                .as_deref()
                .map(|d| d.trim_end_matches(".dtb"));
            if let (Some(dt), Some(want)) = (&egon.dt_name, want) {
                ensure!(
                    dt == want,
                    "the SPL was built for {dt}, the card's DTB is {want}.dtb"
                );
            }
            let proper = head
                .get(SUNXI_U_BOOT_OFFSET..)
                .context("no room for U-Boot proper before the first partition")?;
            let image = check_u_boot_image(proper)
                .context("U-Boot proper, where the SPL reads it (blob offset 32 KiB)")?;
            let span = SUNXI_U_BOOT_OFFSET as u64 + image.bytes();
            Ok((
                span,
                format!(
                    "eGON SPL of {} bytes (checksum {:#010x} valid, built for {}) + {} at +32 KiB",
                    egon.length,
                    egon.checksum,
                    egon.dt_name.as_deref().unwrap_or("?"),
                    describe_image(&image)
                ),
            ))
        }
        other => bail!("no format check for a raw blob named {other}"),
    }
}

fn describe_image(image: &UBootImage) -> String {
    match image {
        UBootImage::Legacy { data_bytes, name } => {
            format!("uImage {name:?} ({data_bytes} bytes, CRCs valid)")
        }
        UBootImage::Fit { fdt_bytes } => format!("FIT ({fdt_bytes} bytes of tree)"),
    }
}

/// Checks a loader file of the boot partition by U-Boot's output name.
fn check_file(file: &str, data: &[u8]) -> Result<String> {
    match file {
        "MLO" => {
            let gp = check_gp_image(data)?;
            Ok(format!(
                "GP image of {} bytes for {:#010x}{}",
                gp.size,
                gp.load_address,
                if gp.config_header {
                    " after a CHSETTINGS configuration header"
                } else {
                    ""
                }
            ))
        }
        "u-boot.img" => Ok(describe_image(&check_u_boot_image(data)?)),
        _ => Ok(format!("{} bytes", data.len())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal eGON SPL of `length` bytes with a valid checksum and a DT name.
    fn egon(length: usize, dt: &str) -> Vec<u8> {
        let mut b = vec![0u8; length];
        b[..4].copy_from_slice(&[0x16, 0, 0, 0xea]);
        b[4..12].copy_from_slice(b"eGON.BT0");
        b[0x10..0x14].copy_from_slice(&(length as u32).to_le_bytes());
        b[0x14..0x18].copy_from_slice(b"SPL\x02");
        b[0x20..0x24].copy_from_slice(&0x2cu32.to_le_bytes());
        b[0x2c..0x2c + dt.len()].copy_from_slice(dt.as_bytes());
        b[0x100] = 0x5a;
        let sum = egon_checksum(&b, length);
        b[0x0c..0x10].copy_from_slice(&sum.to_le_bytes());
        b
    }

    fn uimage(data: &[u8], name: &str) -> Vec<u8> {
        let mut h = vec![0u8; 64];
        h[..4].copy_from_slice(&UIMAGE_MAGIC.to_be_bytes());
        h[12..16].copy_from_slice(&(data.len() as u32).to_be_bytes());
        h[24..28].copy_from_slice(&crc32(data).to_be_bytes());
        h[32..32 + name.len()].copy_from_slice(name.as_bytes());
        let hcrc = crc32(&h);
        h[4..8].copy_from_slice(&hcrc.to_be_bytes());
        [h, data.to_vec()].concat()
    }

    #[test]
    fn egon_header_checksum_and_limits() {
        let b = egon(8192, "sun7i-a20-bananapi");
        let e = check_egon(&b).unwrap();
        assert_eq!(e.length, 8192);
        assert_eq!(e.spl_version, Some(2));
        assert_eq!(e.dt_name.as_deref(), Some("sun7i-a20-bananapi"));
        // Any changed byte inside `length` breaks the checksum.
        let mut bad = b.clone();
        bad[4000] ^= 1;
        let err = check_egon(&bad).unwrap_err().to_string();
        assert!(err.contains("checksum"), "{err}");
        // ...outside it does not matter to the boot ROM.
        let mut tail = [b.clone(), vec![0xff; 100]].concat();
        tail[8192] = 0;
        check_egon(&tail).unwrap();
        let mut magic = b.clone();
        magic[8] = b'X';
        assert!(check_egon(&magic)
            .unwrap_err()
            .to_string()
            .contains("eGON.BT0"));
        let err = check_egon(&egon(40 * 1024, "x")).unwrap_err().to_string();
        assert!(err.contains("at most 32768"), "{err}");
        let mut odd = egon(8192, "x");
        odd[0x10..0x14].copy_from_slice(&1000u32.to_le_bytes());
        assert!(check_egon(&odd).unwrap_err().to_string().contains("512"));
    }

    #[test]
    fn u_boot_images_legacy_with_crcs_and_fit() {
        let u = uimage(b"u-boot proper", "U-Boot test");
        assert_eq!(
            check_u_boot_image(&u).unwrap(),
            UBootImage::Legacy {
                data_bytes: 13,
                name: "U-Boot test".into()
            }
        );
        assert_eq!(check_u_boot_image(&u).unwrap().bytes(), 77);
        let mut bad = u.clone();
        bad[70] ^= 1;
        assert!(check_u_boot_image(&bad)
            .unwrap_err()
            .to_string()
            .contains("data CRC"));
        let mut bad = u.clone();
        bad[40] ^= 1;
        assert!(check_u_boot_image(&bad)
            .unwrap_err()
            .to_string()
            .contains("header CRC"));
        let mut fit = vec![0u8; 100];
        fit[..4].copy_from_slice(&FDT_MAGIC.to_be_bytes());
        fit[4..8].copy_from_slice(&64u32.to_be_bytes());
        assert_eq!(
            check_u_boot_image(&fit).unwrap(),
            UBootImage::Fit { fdt_bytes: 64 }
        );
        assert!(check_u_boot_image(&[0u8; 100]).is_err());
    }

    fn mlo(config_header: bool, size: u32, load: u32, len: usize) -> Vec<u8> {
        let mut b = vec![0u8; len];
        let at = if config_header {
            b[..4].copy_from_slice(&0x40u32.to_le_bytes());
            b[20..30].copy_from_slice(b"CHSETTINGS");
            512
        } else {
            0
        };
        b[at..at + 4].copy_from_slice(&size.to_le_bytes());
        b[at + 4..at + 8].copy_from_slice(&load.to_le_bytes());
        b
    }

    #[test]
    fn gp_image_header_size_and_load_address() {
        // As u-boot-omap's MLO: a CH, then the GP header; size = file - 512.
        let g = check_gp_image(&mlo(true, 109_736, 0x402F_0400, 110_248)).unwrap();
        assert_eq!(
            g,
            GpImage {
                config_header: true,
                size: 109_736,
                load_address: 0x402F_0400
            }
        );
        assert!(
            !check_gp_image(&mlo(false, 1000, 0x402F_0400, 1000))
                .unwrap()
                .config_header
        );
        let err = check_gp_image(&mlo(true, 200_000, 0x402F_0400, 110_248))
            .unwrap_err()
            .to_string();
        assert!(err.contains("holds 109736 bytes"), "{err}");
        let err = check_gp_image(&mlo(false, 1000, 0x8000_0000, 1000))
            .unwrap_err()
            .to_string();
        assert!(err.contains("loads into"), "{err}");
        // 109 KiB at most: the image (without its GP header) must end by 0x4030B800.
        let max = 0x1B400 + 8;
        check_gp_image(&mlo(false, max, 0x402F_0400, max as usize)).unwrap();
        assert!(check_gp_image(&mlo(false, max + 4, 0x402F_0400, max as usize + 4)).is_err());
    }

    #[test]
    fn kernel_magic() {
        let mut z = vec![0u8; 0x1000];
        z[0x24..0x28].copy_from_slice(&ZIMAGE_MAGIC.to_le_bytes());
        z[0x2c..0x30].copy_from_slice(&0x1000u32.to_le_bytes());
        assert_eq!(
            check_kernel(&z, Arch::Arm).unwrap(),
            "ARM zImage (4096 bytes)"
        );
        z[0x2c..0x30].copy_from_slice(&0x2000u32.to_le_bytes());
        assert!(check_kernel(&z, Arch::Arm).is_err());
        assert!(check_kernel(&z, Arch::Aarch64).is_err());
        let mut i = vec![0u8; 0x100];
        i[0x38..0x3c].copy_from_slice(b"ARM\x64");
        check_kernel(&i, Arch::Aarch64).unwrap();
    }

    #[test]
    fn extlinux_as_u_boot_reads_it() {
        let board = crate::load_board("bananapi-m1").unwrap();
        let text = crate::image::extlinux_conf(&board, board.kernel.dtb.as_deref());
        let c = parse_extlinux(&text).unwrap();
        assert_eq!(c.default.as_deref(), Some("benchboot"));
        assert_eq!((c.prompt, c.timeout), (Some(0), Some(1)));
        assert!(c.ignored.is_empty(), "{:?}", c.ignored);
        let l = c.boot_label().unwrap();
        assert_eq!(l.kernel.as_deref(), Some("/vmlinuz"));
        assert_eq!(l.initrd.as_deref(), Some("/initrd.img"));
        assert_eq!(l.fdt.as_deref(), Some("/sun7i-a20-bananapi.dtb"));
        assert_eq!(
            l.append.as_deref(),
            Some("console=ttyS0,115200 loglevel=4 rootwait")
        );

        // pxe_utils' rules: keywords in any case, `linux` = `kernel`, `devicetree` =
        // `fdt`, the first initrd/fdt wins, `initrd=` in append counts, any other
        // keyword ends the label, comments only where a token starts, values verbatim.
        let c = parse_extlinux(
            "# c\nMENU title x\nlabel a\n  LINUX /a#conf\n  devicetree /a.dtb\n  \
             append x=1 initrd=/i1 y # not a comment\n  initrd /i2\n  kernel /lost\n\
             label b\n  kernel /k\r\n  menu default\n  fdt /b1.dtb\n  fdt /b2.dtb\n  \
             append lost\ntimeout 30\n",
        )
        .unwrap();
        assert_eq!(c.labels.len(), 2);
        let a = &c.labels[0];
        assert_eq!(a.kernel.as_deref(), Some("/a"));
        assert_eq!(a.fdt.as_deref(), Some("/a.dtb"));
        assert_eq!(a.initrd.as_deref(), Some("/i1"));
        assert_eq!(
            a.append.as_deref(),
            Some("x=1 initrd=/i1 y # not a comment")
        );
        let b = &c.labels[1];
        assert_eq!(b.kernel.as_deref(), Some("/k\r"), "CR kept, as U-Boot");
        assert_eq!(b.fdt.as_deref(), Some("/b1.dtb"));
        assert_eq!(b.append, None, "a second fdt ended the label");
        assert_eq!(
            c.ignored,
            ["/i2", "  kernel /lost", "/b2.dtb", "  append lost"]
        );
        assert_eq!(c.default.as_deref(), Some("b"), "menu default");
        assert_eq!(c.timeout, Some(30));
        assert!(parse_extlinux("label x\n kernel\n").is_err());
        assert!(parse_extlinux("label\n").is_err());
        // An unknown default: U-Boot tries the labels in order.
        let c = parse_extlinux("default z\nlabel y\n kernel /k\n").unwrap();
        assert_eq!(c.boot_label().unwrap().name, "y");
        assert_eq!(resolve("extlinux/extlinux.conf", "/vmlinuz"), "vmlinuz");
        assert_eq!(resolve("extlinux/extlinux.conf", "k"), "extlinux/k");
    }

    #[test]
    fn extlinux_check_names_every_problem() {
        let board = crate::load_board("bananapi-m1").unwrap();
        let conf = parse_extlinux(
            "default benchboot\nlabel benchboot\n kernel /vmlinuz\n initrd /initrd.img\n \
             fdt /other.dtb\n append console=ttyS1,115200\n",
        )
        .unwrap();
        let mut read = |p: &str| -> Result<Vec<u8>> {
            match p {
                "vmlinuz" => Ok(vec![0u8; 0x100]),
                _ => bail!("no such file"),
            }
        };
        let err = check_extlinux(&conf, &board, &mut read)
            .unwrap_err()
            .to_string();
        for want in [
            "initrd \"/initrd.img\": no such file",
            "fdt \"/other.dtb\": no such file",
            "neither an ARM zImage",
            "lacks console=ttyS0,115200",
        ] {
            assert!(err.contains(want), "{want}: {err}");
        }
    }

    /// A whole small card with stand-in blobs and files, checked end to end.
    #[test]
    fn small_card_passes_and_a_broken_blob_is_named() {
        use crate::image::{render, Contents, INITRAMFS_FILE, KERNEL_FILE};
        use crate::initramfs::Node;
        use crate::layout::{plan, Role, Spec};
        let board = crate::load_board("bananapi-m1").unwrap();
        let spec = Spec {
            disk_mib: 64,
            boot_start_mib: 4,
            boot_mib: 34,
            results_mib: 8,
            test_slot_mib: 4,
            tests: vec![benchboot_plan::Filesystem::Raw],
        };
        let l = plan(&spec).unwrap();
        let mut zimage = vec![0u8; 0x400];
        zimage[0x24..0x28].copy_from_slice(&ZIMAGE_MAGIC.to_le_bytes());
        zimage[0x2c..0x30].copy_from_slice(&0x400u32.to_le_bytes());
        let mut dtb = vec![0u8; 64];
        dtb[..4].copy_from_slice(&FDT_MAGIC.to_be_bytes());
        dtb[4..8].copy_from_slice(&64u32.to_be_bytes());
        let initrd = crate::initramfs::build(&[
            ("init".into(), Node::File(b"\x7fELF".to_vec(), 0o755)),
            ("etc".into(), Node::Dir),
            ("etc/benchboot".into(), Node::Dir),
            (
                "etc/benchboot/plan.json".into(),
                Node::File(b"{}".to_vec(), 0o644),
            ),
        ])
        .unwrap();
        let spl = egon(8192, "sun7i-a20-bananapi");
        let mut blob = spl.clone();
        blob.resize(SUNXI_U_BOOT_OFFSET, 0);
        blob.extend(uimage(&[7u8; 5000], "U-Boot"));
        let contents = |blob: Vec<u8>| Contents {
            boot_files: vec![
                (
                    EXTLINUX_CONF.into(),
                    crate::image::extlinux_conf(&board, board.kernel.dtb.as_deref()).into_bytes(),
                    "t".into(),
                ),
                (KERNEL_FILE.into(), zimage.clone(), "t".into()),
                (INITRAMFS_FILE.into(), initrd.clone(), "t".into()),
                ("sun7i-a20-bananapi.dtb".into(), dtb.clone(), "t".into()),
            ],
            raw_blobs: vec![(8192, blob, "t".into())],
            initramfs: vec![],
        };
        let dir = tempfile::tempdir().unwrap();
        let img = dir.path().join("card.img");
        let stamp = crate::reproducible::Stamp::new("t", b"lock", 0);
        render(&img, &l, &contents(blob.clone()), &stamp).unwrap();
        let r = check_card(&board, &img, &l).unwrap();
        assert_eq!(r.boot_partition.offset, 4 << 20);
        assert_eq!(r.raw_blobs[0].2, (SUNXI_U_BOOT_OFFSET + 64 + 5000) as u64);
        assert_eq!(r.label.plan, "plan");
        assert!(
            r.summary().contains("built for sun7i-a20-bananapi"),
            "{}",
            r.summary()
        );
        assert_eq!(l.part(Role::Boot).unwrap().number, 1);

        // U-Boot proper damaged: the data CRC fails, and the message says where.
        let mut broken = blob.clone();
        broken[SUNXI_U_BOOT_OFFSET + 100] ^= 0xff;
        render(&img, &l, &contents(broken), &stamp).unwrap();
        let err = format!("{:#}", check_card(&board, &img, &l).unwrap_err());
        assert!(
            err.contains("u-boot-sunxi-with-spl.bin at byte 8192") && err.contains("data CRC"),
            "{err}"
        );
        // An SPL for another board.
        let mut other = egon(8192, "sun8i-r40-bananapi-m2-ultra");
        other.resize(SUNXI_U_BOOT_OFFSET, 0);
        other.extend(uimage(&[7u8; 5000], "U-Boot"));
        render(&img, &l, &contents(other), &stamp).unwrap();
        let err = format!("{:#}", check_card(&board, &img, &l).unwrap_err());
        assert!(
            err.contains("built for sun8i-r40-bananapi-m2-ultra"),
            "{err}"
        );
    }
}
