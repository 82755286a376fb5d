//! `[lava]`: the LAVA device type a lab's device of this board has (Linaro's board-farm
//! engine: the jobs `cargo xtask lava` writes name it). Either an upstream type of
//! lava-server's `device-types/` folder, or one benchboot ships in `boards/lava/` for
//! the boards upstream lacks (a lab admin installs it beside lava-server's own).

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::BoardError;

/// `[lava]` as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawLava {
    /// `bcm2837-rpi-3-b`, `beaglebone-black`, `qemu`, or one of `boards/lava/`.
    pub device_type: String,
}

/// The board's LAVA device type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lava {
    pub device_type: String,
    /// benchboot's own template (`boards/lava/<device_type>.jinja2`) when upstream has
    /// none; `None`: lava-server's own.
    pub template: Option<PathBuf>,
}

/// Folder of benchboot's own device-type templates, beside the board files.
pub const TEMPLATES_DIR: &str = "lava";

impl RawLava {
    /// Checks the name (LAVA's device type names: `^[-_a-zA-Z0-9.]+$`) and finds
    /// benchboot's own template, if any, in `boards_dir/lava/`.
    ///
    /// # Errors
    /// [`BoardError::Invalid`] on `lava.device-type`.
    pub fn validate(self, file: &Path, boards_dir: &Path) -> Result<Lava, BoardError> {
        let ok = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
        if self.device_type.is_empty() || !self.device_type.chars().all(ok) {
            return Err(BoardError::Invalid {
                file: file.to_owned(),
                field: "lava.device-type",
                message: format!(
                    "`{}` is no LAVA device type name (letters, digits, `-`, `_`, `.`), e.g. \
                     `bcm2837-rpi-3-b`",
                    self.device_type
                ),
            });
        }
        let own = boards_dir
            .join(TEMPLATES_DIR)
            .join(format!("{}.jinja2", self.device_type));
        Ok(Lava {
            template: own.is_file().then_some(own),
            device_type: self.device_type,
        })
    }
}
