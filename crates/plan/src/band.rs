//! The WiFi band as plans spell it (`2.4`, `5`), below both the plan file's syntax
//! (`file.rs`) and the WiFi plan it resolves to (`wifi.rs`, which re-exports it).

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
