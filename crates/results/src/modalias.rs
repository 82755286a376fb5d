//! Drivers PID 1 loaded by modalias, and the devices it found with no driver in the
//! image (schema 1.11): a USB disk or adapter plugged in, or a device the board file's
//! module lists forgot. The decisions are benchboot-kmod's `autoload`; the lines for a
//! person are here, so the board's console and the host's report say the same thing.

use benchboot_kmod::{describe, printable};
use serde::{Deserialize, Serialize};

/// What PID 1's modalias scans did over the run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Modalias {
    /// Every module loaded (or tried) because a device's modalias asked for it, in load
    /// order: dependencies and `softdep` `pre:` modules before the module, `post:` after.
    #[serde(default)]
    pub loaded: Vec<ModaliasLoad>,
    /// Devices with no driver bound whose modalias matches no module the image carries,
    /// as the last scan saw them (a device that got a driver later is dropped; one that
    /// went away stays), leaving out what never binds (benchboot-kmod
    /// `autoload::worth_reporting`).
    #[serde(default)]
    pub no_driver: Vec<NoDriver>,
}

impl Modalias {
    /// Nothing loaded, nothing missing (and so left out of the document).
    pub fn is_empty(&self) -> bool {
        self.loaded.is_empty() && self.no_driver.is_empty()
    }
}

/// One module loaded for a device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModaliasLoad {
    /// Canonical module name (`usb_storage`).
    pub module: String,
    /// The sysfs directory of the device whose modalias asked for it.
    pub device: String,
    /// That device's modalias, as read (`usb:v0781p5581d0100dc00dsc00dp00ic08isc06ip50in00`).
    pub modalias: String,
    /// `alias` (its pattern matched), `dependency of M`, `softdep pre: of M` or
    /// `softdep post: of M`.
    pub why: String,
    /// The scan that loaded it: `boot` (after the plan's modules), `storage` (before the
    /// storage targets are looked for), `network.wired.<link>`, `end`.
    pub at: String,
    /// `None`: loaded (or already there, `EEXIST`); else why `finit_module(2)` failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl ModaliasLoad {
    /// `usb_storage for USB 0781:5581 (interface class 08, mass storage) at
    /// /sys/devices/... (scan: boot)`, `usbcore (dependency of usb_storage) for ...`, and
    /// `: FAILED: <why>` after a failure. Nothing read from the device is printed raw.
    pub fn line(&self) -> String {
        let why = if self.why == "alias" {
            String::new()
        } else {
            format!(" ({})", printable(&self.why))
        };
        let failed = self
            .error
            .as_ref()
            .map_or(String::new(), |e| format!(": FAILED: {}", printable(e)));
        format!(
            "{}{why} for {} at {} (scan: {}){failed}",
            printable(&self.module),
            describe(&self.modalias),
            printable(&self.device),
            printable(&self.at)
        )
    }
}

/// A device no driver of the image serves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoDriver {
    /// Its sysfs directory.
    pub device: String,
    /// Its modalias, as read.
    pub modalias: String,
    /// Its subsystem (`usb`, `scsi`, `platform`...).
    pub subsystem: String,
    /// The first scan that saw it without a driver.
    pub at: String,
}

impl NoDriver {
    /// `USB 0bda:8153 (interface class ff, vendor specific): no driver in this image
    /// (/sys/devices/..., seen at scan storage)`.
    pub fn line(&self) -> String {
        format!(
            "{}: no driver in this image ({}, seen at scan {})",
            describe(&self.modalias),
            printable(&self.device),
            printable(&self.at)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_for_a_person() {
        let load = ModaliasLoad {
            module: "usbcore".into(),
            device: "/sys/devices/platform/3f980000.usb/usb1/1-1/1-1:1.0".into(),
            modalias: "usb:v0781p5581d0100dc00dsc00dp00ic08isc06ip50in00".into(),
            why: "dependency of usb_storage".into(),
            at: "boot".into(),
            error: None,
        };
        assert_eq!(
            load.line(),
            "usbcore (dependency of usb_storage) for USB 0781:5581 (interface class 08, mass \
             storage) at /sys/devices/platform/3f980000.usb/usb1/1-1/1-1:1.0 (scan: boot)"
        );
        let failed = ModaliasLoad {
            module: "uas".into(),
            why: "alias".into(),
            error: Some("Unknown symbol in module (os error 2)".into()),
            ..load
        };
        assert!(
            failed.line().starts_with("uas for USB 0781:5581")
                && failed
                    .line()
                    .ends_with(": FAILED: Unknown symbol in module (os error 2)"),
            "{}",
            failed.line()
        );
        let none = NoDriver {
            device: "/sys/devices/platform/3f980000.usb/usb1/1-1/1-1:1.0".into(),
            modalias: "usb:v0BDAp8153d3100dc00dsc00dp00icFFisc00ip00in00".into(),
            subsystem: "usb".into(),
            at: "network.wired.lan".into(),
        };
        assert_eq!(
            none.line(),
            "USB 0bda:8153 (interface class ff, vendor specific): no driver in this image \
             (/sys/devices/platform/3f980000.usb/usb1/1-1/1-1:1.0, seen at scan network.wired.lan)"
        );
        // A hostile modalias and path: escaped, never raw.
        let evil = NoDriver {
            device: "/sys/devices/x\x1b]0;pwned\x07".into(),
            modalias: "acme:\x1b[2J".into(),
            subsystem: "acme".into(),
            at: "end".into(),
        };
        let line = evil.line();
        assert!(!line.chars().any(char::is_control), "{line:?}");
        assert!(line.starts_with("acme:\\x1b[2J: no driver"), "{line}");
    }

    #[test]
    fn empty_is_left_out_and_old_documents_read() {
        assert!(Modalias::default().is_empty());
        let m: Modalias = serde_json::from_str("{}").unwrap();
        assert!(m.is_empty());
        let mut r = crate::RunResults::new(
            "r".into(),
            benchboot_plan::Plan::example(),
            crate::SystemInfo::default(),
        );
        assert!(!r.to_json().contains("\"modalias\""));
        r.modalias.no_driver.push(NoDriver {
            device: "/sys/devices/u/1-1:1.0".into(),
            modalias: "usb:v0BDAp8153d3100dc00dsc00dp00icFFisc00ip00in00".into(),
            subsystem: "usb".into(),
            at: "boot".into(),
        });
        let back = crate::RunResults::from_json(&r.to_json()).unwrap();
        assert_eq!(back.modalias, r.modalias);
    }
}
