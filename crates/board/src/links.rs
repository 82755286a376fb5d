//! `[wifi] firmware-links`: a firmware file the driver asks for, read from another name
//! of the pinned packages (the link a later package version adds), and its checks.

use serde::Deserialize;

use crate::shared::check_relative_path;
use crate::WifiRadio;

/// A `wifi.firmware` file read from another file of the firmware packages: the
/// initramfs holds `to`'s contents at `file`, as a package that ships `file` as a link
/// to `to` would.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FirmwareLink {
    /// The name the driver asks for, below `/lib/firmware` (one of `wifi.firmware`).
    pub file: String,
    /// The file of the firmware packages whose contents it gets, below `/lib/firmware`.
    pub to: String,
    /// Where the link comes from (the package version that ships it) and why it holds.
    pub why: String,
}

impl WifiRadio {
    /// The name below `/lib/firmware` the packages hold `file`'s contents under: its
    /// [`FirmwareLink::to`], else `file` itself.
    pub fn source_name<'a>(&'a self, file: &'a str) -> &'a str {
        (self.firmware_links.iter())
            .find(|l| l.file == file)
            .map_or(file, |l| l.to.as_str())
    }
}

/// Each link names a file of `firmware` (once), another relative name below
/// `/lib/firmware` and why; the message says what to fix.
pub(crate) fn check(firmware: &[String], links: &[FirmwareLink]) -> Result<(), String> {
    for (i, l) in links.iter().enumerate() {
        if !firmware.contains(&l.file) {
            return Err(format!(
                "`{}` is not in wifi.firmware: link only a file the driver asks for",
                l.file
            ));
        }
        check_relative_path(&l.to)?;
        if l.to == l.file || l.why.trim().is_empty() {
            return Err(format!(
                "`{}`: give the other file it is read from (to) and why (the package version \
                 that ships the link)",
                l.file
            ));
        }
        if links[..i].iter().any(|o| o.file == l.file) {
            return Err(format!("`{}` is linked twice: keep one entry", l.file));
        }
    }
    Ok(())
}
