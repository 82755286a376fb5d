//! extlinux.conf as U-Boot's boot/pxe_utils.c reads it ([`parse_extlinux`]), and the
//! label distro boot takes checked against the board: kernel, DTB, initramfs and command
//! line ([`check_extlinux`]).

use std::io::Read;

use anyhow::{bail, ensure, Context, Result};
use benchboot_board::Board;
use benchboot_plan::{DEFAULT_PLAN, PLANS_DIR};

use super::blobs::{be32, check_kernel, FDT_MAGIC};

/// Where U-Boot's distro boot looks first on the bootable partition
/// (U-Boot doc/develop/distro.rst).
pub const EXTLINUX_CONF: &str = "extlinux/extlinux.conf";

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
