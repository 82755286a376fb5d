//! How a plan spells things, below both the plan file's syntax (`file.rs`) and the
//! parts of the plan it resolves to (`network.rs`, `wifi.rs`): the WiFi band (`2.4`,
//! `5`; re-exported by `wifi`), the kind of a wired link (`builtin`, `usb-adapter`;
//! re-exported by `network`), and a name folded as a board farm keys it (re-exported
//! by `file`).

use serde::{Deserialize, Serialize};

/// A band as plans spell it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum WifiBand {
    #[serde(rename = "2.4")]
    Ghz2,
    #[serde(rename = "5")]
    Ghz5,
}

impl WifiBand {
    /// `2.4` / `5`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Ghz2 => "2.4",
            Self::Ghz5 => "5",
        }
    }

    /// The band in the WiFi crate's terms.
    pub fn band(self) -> benchboot_wifi::channel::Band {
        match self {
            Self::Ghz2 => benchboot_wifi::channel::Band::Ghz2,
            Self::Ghz5 => benchboot_wifi::channel::Band::Ghz5,
        }
    }
}

/// What kind of wired link: the board's own Ethernet or an adapter on a USB host port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WiredKind {
    /// The board's Ethernet (board file `[ethernet]`).
    Builtin,
    /// A USB Ethernet adapter (smsc75xx, ax88179_178a, r8152, asix, cdc_ether, cdc_ncm...).
    UsbAdapter,
}

impl WiredKind {
    /// `builtin` / `usb-adapter`, as plans and results spell it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Builtin => "builtin",
            Self::UsbAdapter => "usb-adapter",
        }
    }
}

/// `name` as a board farm keys it: LAVA lower-cases a case id and turns `-` (every
/// non-word character) into `_` (benchboot_console::lava::fold_id), so `USB-ext4` and
/// `usb_ext4` would be one case there. Names of one kind must differ in this form.
pub fn folded_name(name: &str) -> String {
    name.to_ascii_lowercase().replace('-', "_")
}
