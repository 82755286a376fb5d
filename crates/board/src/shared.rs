//! `boards/shared.toml`: kernel flavours, boot loaders and module sets that several
//! boards reference by name, and where radio files come from (`[radio]`). Parsed and
//! checked once; board files only name them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::BoardError;

/// File name of the shared pieces inside `boards/`.
pub const SHARED_FILE: &str = "shared.toml";

/// A Debian kernel flavour: one pinned `linux-image-<release>` package.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Kernel {
    /// Debian package, e.g. `linux-image-6.1.0-50-armmp` (pinned in the lock file).
    pub package: String,
    /// `uname -r` of the kernel, e.g. `6.1.0-50-armmp`; names `boot/vmlinuz-<release>`
    /// and `lib/modules/<release>/` in the package.
    pub release: String,
    /// Debian architecture of the package: `armel`, `armhf` or `arm64`.
    pub arch: String,
}

/// How the boot loader finds the kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BootConfig {
    /// Raspberry Pi firmware: `config.txt` + `cmdline.txt` on the boot partition.
    ConfigTxt,
    /// U-Boot distro boot: `/extlinux/extlinux.conf` on the bootable partition
    /// (U-Boot doc/develop/distro.rst).
    Extlinux,
}

/// A file written raw at a byte offset of the card (before the first partition).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawBlob {
    /// File name inside the loader's `dir`.
    pub file: String,
    /// Byte offset on the card (the boot ROM's documented location).
    pub offset: u64,
}

/// Boot firmware / boot loader files from one pinned package.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Loader {
    /// Name in `shared.toml` (`loaders.<name>`); filled in on load.
    #[serde(skip)]
    pub name: String,
    pub package: String,
    /// Folder inside the unpacked package.
    pub dir: String,
    /// Copied to the root of the boot partition.
    #[serde(default)]
    pub files: Vec<String>,
    /// Written at byte offsets of the card.
    #[serde(default)]
    pub raw: Vec<RawBlob>,
    pub config: BootConfig,
}

/// Where the files of a radio come from (`[radio]`): the packages a board's
/// `wifi.firmware` is looked up in, the regulatory database and the QEMU stand-in AP.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RadioPackages {
    /// Packages whose `lib/firmware/` holds `wifi.firmware` files, searched in order.
    pub firmware_packages: Vec<String>,
    pub regulatory: Regulatory,
    /// The QEMU-only stand-in access point of `qemu.wifi = "hwsim"`.
    pub hwsim_ap: StandInAp,
}

/// cfg80211's regulatory database and its signature, from one package.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Regulatory {
    pub package: String,
    /// File name under `/lib/firmware/` (as the kernel asks for it) → path in the package.
    pub files: BTreeMap<String, String>,
}

/// A dynamic Debian program for QEMU runs only, with what it needs to start.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct StandInAp {
    /// The package holding the program.
    pub package: String,
    /// Its path in the package, which is its path in the initramfs: `usr/sbin/hostapd`.
    pub program: String,
    /// Debian architecture of the program and its libraries: `arm64`.
    pub arch: String,
    /// Packages holding the shared libraries its NEEDED entries name (transitively) and
    /// the loader its PT_INTERP names; each must provide at least one of them.
    pub libraries: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawShared {
    kernels: BTreeMap<String, Kernel>,
    loaders: BTreeMap<String, Loader>,
    module_sets: BTreeMap<String, Vec<String>>,
    radio: RadioPackages,
}

/// The parsed `boards/shared.toml`.
#[derive(Debug, Clone)]
pub struct Shared {
    /// The file it came from (for error messages).
    pub file: PathBuf,
    pub kernels: BTreeMap<String, Kernel>,
    pub loaders: BTreeMap<String, Loader>,
    pub module_sets: BTreeMap<String, Vec<String>>,
    pub radio: RadioPackages,
}

/// A path inside a package or below `/lib/firmware`: relative, `/`-separated, no empty,
/// `.` or `..` component, no whitespace or backslash.
pub(crate) fn check_relative_path(p: &str) -> Result<(), String> {
    let bad = p.is_empty()
        || p.starts_with('/')
        || p.contains(char::is_whitespace)
        || p.contains('\\')
        || p.split('/').any(|c| c.is_empty() || c == "." || c == "..");
    if bad {
        return Err(format!(
            "`{p}`: give a relative path without `.`/`..` parts or spaces, e.g. `brcm/brcmfmac43430-sdio.bin`"
        ));
    }
    Ok(())
}

impl Shared {
    /// Parses and checks the shared file's text.
    ///
    /// # Errors
    /// [`BoardError::Parse`] for TOML/shape errors, [`BoardError::Invalid`] for a bad
    /// module name, file name, or a loader with nothing to install.
    pub fn from_toml(file: &Path, text: &str) -> Result<Shared, BoardError> {
        let raw: RawShared = toml::from_str(text).map_err(|e| BoardError::Parse {
            file: file.to_owned(),
            message: e.to_string(),
        })?;
        let bad = |field: &'static str, message: String| BoardError::Invalid {
            file: file.to_owned(),
            field,
            message,
        };
        for (name, k) in &raw.kernels {
            if !k.package.ends_with(&k.release) {
                return Err(bad(
                    "kernels.release",
                    format!(
                        "kernels.{name}: `{}` does not match package `{}` (Debian names it \
                         linux-image-<release>)",
                        k.release, k.package
                    ),
                ));
            }
        }
        let mut loaders = raw.loaders;
        for (name, l) in &mut loaders {
            l.name.clone_from(name);
            if l.files.is_empty() && l.raw.is_empty() {
                return Err(bad(
                    "loaders.files",
                    format!("loaders.{name}: list `files` or `raw` blobs to install"),
                ));
            }
            let names = l.files.iter().chain(l.raw.iter().map(|r| &r.file));
            for f in names {
                if f.is_empty() || f.contains('/') {
                    return Err(bad(
                        "loaders.files",
                        format!("loaders.{name}: `{f}` must be a bare file name"),
                    ));
                }
            }
        }
        for (name, set) in &raw.module_sets {
            crate::check_module_names(set)
                .map_err(|m| bad("module-sets", format!("{name}: {m}")))?;
        }
        check_radio(&raw.radio).map_err(|(field, m)| bad(field, m))?;
        Ok(Shared {
            file: file.to_owned(),
            kernels: raw.kernels,
            loaders,
            module_sets: raw.module_sets,
            radio: raw.radio,
        })
    }

    /// Reads `<dir>/shared.toml`.
    ///
    /// # Errors
    /// [`BoardError::Input`] when the file cannot be read, is no regular file or is
    /// larger than [`crate::MAX_BOARD_FILE_BYTES`], else as [`Shared::from_toml`].
    pub fn load(dir: &Path) -> Result<Shared, BoardError> {
        let file = dir.join(SHARED_FILE);
        let text = crate::read_board_file(&file)?;
        Shared::from_toml(&file, &text)
    }

    /// Expands a module list: `@<set>` entries are replaced by the set, in order;
    /// duplicates keep their first position.
    ///
    /// # Errors
    /// [`ModuleListError::UnknownSet`] naming the set and the known ones, or
    /// [`ModuleListError::BadName`].
    pub fn expand_modules(&self, list: &[String]) -> Result<Vec<String>, ModuleListError> {
        let mut out: Vec<String> = Vec::new();
        for entry in list {
            let items: &[String] = match entry.strip_prefix('@') {
                Some(set) => self.module_sets.get(set).ok_or_else(|| {
                    ModuleListError::UnknownSet(Unknown::new(
                        "module set",
                        set,
                        self.module_sets.keys(),
                    ))
                })?,
                None => std::slice::from_ref(entry),
            };
            for m in items {
                if !out.contains(m) {
                    out.push(m.clone());
                }
            }
        }
        crate::check_module_names(&out).map_err(ModuleListError::BadName)?;
        Ok(out)
    }

    /// The kernel flavour `name`.
    ///
    /// # Errors
    /// [`Unknown`] listing the known flavours.
    pub fn kernel(&self, name: &str) -> Result<&Kernel, Unknown> {
        self.kernels
            .get(name)
            .ok_or_else(|| Unknown::new("kernel flavour", name, self.kernels.keys()))
    }

    /// The boot loader `name`.
    ///
    /// # Errors
    /// [`Unknown`] listing the known loaders.
    pub fn loader(&self, name: &str) -> Result<&Loader, Unknown> {
        self.loaders
            .get(name)
            .ok_or_else(|| Unknown::new("boot loader", name, self.loaders.keys()))
    }
}

/// A name the shared board file does not define: `what` (`kernel flavour`, `boot
/// loader`), the name asked for, and the names it does define, in order.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no {what} `{name}` in {SHARED_FILE}; known: {}", known.join(", "))]
pub struct Unknown {
    /// What kind of entry was asked for.
    pub what: &'static str,
    /// The name asked for.
    pub name: String,
    /// The names defined, sorted.
    pub known: Vec<String>,
}

/// Why [`Shared::expand_modules`] refused a module list.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModuleListError {
    /// An `@<set>` the shared file does not define (`known` without the `@`).
    #[error(
        "`@{}`: no module set `{}` in {SHARED_FILE}; known sets: {}",
        .0.name,
        .0.name,
        .0.known.iter().map(|k| format!("@{k}")).collect::<Vec<_>>().join(", ")
    )]
    UnknownSet(Unknown),
    /// A module name with a path or `.ko`: the message names it.
    #[error("{0}")]
    BadName(String),
}

impl Unknown {
    fn new<'a>(what: &'static str, name: &str, known: impl Iterator<Item = &'a String>) -> Unknown {
        Unknown {
            what,
            name: name.to_owned(),
            known: known.cloned().collect(),
        }
    }
}

/// `[radio]`: packages named, paths relative, regulatory files bare names below
/// `/lib/firmware`.
fn check_radio(r: &RadioPackages) -> Result<(), (&'static str, String)> {
    let named = |field: &'static str, name: &str| {
        if name.is_empty() || name.contains(char::is_whitespace) {
            return Err((field, format!("`{name}`: give a Debian package name")));
        }
        Ok(())
    };
    if r.firmware_packages.is_empty() {
        return Err((
            "radio.firmware-packages",
            "list the packages whose lib/firmware/ holds the boards' radio firmware".into(),
        ));
    }
    for p in &r.firmware_packages {
        named("radio.firmware-packages", p)?;
    }
    named("radio.regulatory.package", &r.regulatory.package)?;
    if r.regulatory.files.is_empty() {
        return Err((
            "radio.regulatory.files",
            "map `regulatory.db` (and its `.p7s`) to their paths in the package".into(),
        ));
    }
    for (name, from) in &r.regulatory.files {
        if name.is_empty() || name.contains('/') {
            return Err((
                "radio.regulatory.files",
                format!("`{name}`: give the file name the kernel asks for below /lib/firmware"),
            ));
        }
        check_relative_path(from).map_err(|m| ("radio.regulatory.files", m))?;
    }
    let ap = &r.hwsim_ap;
    named("radio.hwsim-ap.package", &ap.package)?;
    check_relative_path(&ap.program).map_err(|m| ("radio.hwsim-ap.program", m))?;
    named("radio.hwsim-ap.arch", &ap.arch)?;
    if ap.libraries.is_empty() {
        return Err((
            "radio.hwsim-ap.libraries",
            "list the packages holding the program's shared libraries and loader (libc6 at least)"
                .into(),
        ));
    }
    for p in &ap.libraries {
        named("radio.hwsim-ap.libraries", p)?;
    }
    Ok(())
}
