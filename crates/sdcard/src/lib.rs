//! The SD card's own registers (CID, CSD, SCR, SSR, OCR) and the host controller's
//! `ios`, read from the kernel's mmc sysfs/debugfs text and decoded.
//!
//! Pure decoding plus one small reader ([`RawRegisters::read`]). Bit layouts: SD
//! Physical Layer Simplified Specification (OCR 5.1, CID 5.2, CSD 5.3, SCR 5.6,
//! SD Status 4.10.2) and Linux drivers/mmc/core/sd.c (mmc_decode_cid, mmc_decode_csd,
//! mmc_decode_scr, mmc_read_ssr). MMC/eMMC cards (`type` = MMC) get their CID read with
//! the JEDEC layout; their CSD is not decoded (said so, never read with the SD layout).
//!
//! Linux's `ssr` attribute exists since commit 5275a652d296 ("mmc: sd: Export SD Status
//! via "ssr" device attribute", v4.9), so Debian bookworm's 6.1 has it; when a kernel
//! lacks it, [`Card::warnings`] says "not exposed by this kernel".

#![forbid(unsafe_code)]

mod cid;
mod csd;
mod hex;
mod ios;
mod status;

use std::path::Path;

use serde::{Deserialize, Serialize};

pub use cid::{lookup, Cid, Layout, Manufacturer, MANUFACTURERS, TABLE_VERSION};
pub use csd::Csd;
pub use ios::Ios;
pub use status::{AppClass, Ocr, Scr, Ssr};

/// Hex digits per register as sysfs prints them.
pub const CID_DIGITS: usize = 32;
/// CSD: 128 bits.
pub const CSD_DIGITS: usize = 32;
/// SCR: 64 bits.
pub const SCR_DIGITS: usize = 16;
/// SD Status: 512 bits.
pub const SSR_DIGITS: usize = 128;
/// OCR: 32 bits (sysfs prints it as `0x%08x`; the `0x` is accepted).
pub const OCR_DIGITS: usize = 8;

/// Raw register text as the kernel prints it (lower-case hex, no 0x), one field per
/// sysfs attribute; None when absent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RawRegisters {
    /// `type`: "SD", "MMC", "SDIO", "SDcombo".
    #[serde(default)]
    pub kind: Option<String>,
    /// `cid`, 32 hex digits.
    #[serde(default)]
    pub cid: Option<String>,
    /// `csd`, 32 hex digits.
    #[serde(default)]
    pub csd: Option<String>,
    /// `scr`, 16 hex digits (SD only).
    #[serde(default)]
    pub scr: Option<String>,
    /// `ssr`, 128 hex digits (SD only, Linux 4.9+).
    #[serde(default)]
    pub ssr: Option<String>,
    /// `ocr`, 8 hex digits (sysfs adds `0x`).
    #[serde(default)]
    pub ocr: Option<String>,
    /// The debugfs `ios` text, whole.
    #[serde(default)]
    pub ios: Option<String>,
}

impl RawRegisters {
    /// Reads <device_dir>/{type,cid,csd,scr,ssr,ocr} and the ios file (debugfs path, may
    /// be None). Missing files are None, never an error; text is trimmed and an empty
    /// file counts as missing.
    pub fn read(device_dir: &Path, ios: Option<&Path>) -> RawRegisters {
        let get = |p: &Path| {
            std::fs::read_to_string(p)
                .ok()
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
        };
        RawRegisters {
            kind: get(&device_dir.join("type")),
            cid: get(&device_dir.join("cid")),
            csd: get(&device_dir.join("csd")),
            scr: get(&device_dir.join("scr")),
            ssr: get(&device_dir.join("ssr")),
            ocr: get(&device_dir.join("ocr")),
            ios: ios.and_then(get),
        }
    }

    /// The CID with its serial number (PSN) and CRC zeroed: what may be stored; the
    /// serial goes in Card's serial_sha256 only. A CID that does not parse as 32 hex
    /// digits is dropped (None), since it could still hold the serial.
    pub fn redacted(&self) -> RawRegisters {
        let layout = self.layout().unwrap_or(Layout::Sd);
        let cid = self.cid.as_deref().and_then(|text| {
            let mut b = hex::parse("cid", text, CID_DIGITS).ok()?;
            for i in cid::psn_bytes(layout) {
                b[i] = 0;
            }
            b[15] = 0;
            Some(hex::to_hex(&b))
        });
        RawRegisters {
            cid,
            ..self.clone()
        }
    }

    /// The CID/CSD layout `type` calls for: SD for SD/SDIO/SDcombo and when `type` is
    /// absent, MMC for MMC; Err for anything else.
    fn layout(&self) -> Result<Layout, String> {
        match self.kind.as_deref().map(str::trim) {
            None | Some("SD") | Some("SDIO") | Some("SDcombo") => Ok(Layout::Sd),
            Some("MMC") => Ok(Layout::Mmc),
            Some(other) => Err(format!("unknown card type {other:?}")),
        }
    }
}

/// One register's decoding: serialized as `{"status":"ok","value":...}`,
/// `{"status":"missing"}` or `{"status":"invalid","reason":"..."}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub enum Decoded<T> {
    /// Decoded.
    Ok {
        /// The decoded register.
        value: T,
    },
    /// The attribute was absent.
    Missing,
    /// Present but not decodable; the reason names the register.
    Invalid {
        /// Why, e.g. "csd: 30 hex digits, expected 32".
        reason: String,
    },
}

impl<T> Decoded<T> {
    /// The value when decoded.
    pub fn ok(&self) -> Option<&T> {
        match self {
            Decoded::Ok { value } => Some(value),
            _ => None,
        }
    }

    fn from(r: Result<T, String>) -> Self {
        match r {
            Ok(value) => Decoded::Ok { value },
            Err(reason) => Decoded::Invalid { reason },
        }
    }
}

/// Everything decoded from one card.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Card {
    /// The raw registers, redacted ([`RawRegisters::redacted`]).
    pub raw: RawRegisters,
    /// The manufacturer table version [`Card::manufacturer_name`] came from.
    pub table_version: u32,
    /// The brand from that table at decode time; [`Card::manufacturer`] redoes it.
    #[serde(default)]
    pub manufacturer_name: Option<String>,
    /// CID (spec 5.2 / JEDEC 7.2).
    pub cid: Decoded<Cid>,
    /// CSD (spec 5.3), SD only.
    pub csd: Decoded<Csd>,
    /// SCR (spec 5.6).
    pub scr: Decoded<Scr>,
    /// SD Status (spec 4.10.2).
    pub ssr: Decoded<Ssr>,
    /// OCR (spec 5.1), as sysfs gives it (see [`Ocr`]).
    pub ocr: Decoded<Ocr>,
    /// The host's bus state.
    pub ios: Decoded<Ios>,
}

fn reg<T>(
    text: &Option<String>,
    name: &str,
    digits: usize,
    f: impl FnOnce(&[u8]) -> Result<T, String>,
) -> Decoded<T> {
    match text {
        None => Decoded::Missing,
        Some(t) => Decoded::from(hex::parse(name, t, digits).and_then(|b| f(&b))),
    }
}

/// Decodes every register; never fails. `raw` is the unredacted one (so the serial
/// hash can be taken); the Card holds `raw.redacted()`.
pub fn decode(raw: &RawRegisters) -> Card {
    let layout = raw.layout();
    let cid = match &layout {
        Ok(l) => reg(&raw.cid, "cid", CID_DIGITS, |b| Ok(cid::decode(b, *l))),
        Err(e) if raw.cid.is_some() => Decoded::Invalid {
            reason: format!("cid: not decoded: {e}"),
        },
        Err(_) => Decoded::Missing,
    };
    let csd = match &layout {
        Ok(Layout::Sd) => reg(&raw.csd, "csd", CSD_DIGITS, csd::decode),
        _ if raw.csd.is_none() => Decoded::Missing,
        Ok(Layout::Mmc) => Decoded::Invalid {
            reason: "csd: MMC: not decoded (JEDEC layout; eMMC capacity is in EXT_CSD)".to_string(),
        },
        Err(e) => Decoded::Invalid {
            reason: format!("csd: not decoded: {e}"),
        },
    };
    let manufacturer_name = cid
        .ok()
        .and_then(|c| lookup(c.manufacturer_id, c.layout))
        .map(|m| m.name.to_string());
    Card {
        raw: raw.redacted(),
        table_version: TABLE_VERSION,
        manufacturer_name,
        cid,
        csd,
        scr: reg(&raw.scr, "scr", SCR_DIGITS, status::decode_scr),
        ssr: reg(&raw.ssr, "ssr", SSR_DIGITS, |b| Ok(status::decode_ssr(b))),
        ocr: reg(&raw.ocr, "ocr", OCR_DIGITS, |b| Ok(status::decode_ocr(b))),
        ios: match &raw.ios {
            None => Decoded::Missing,
            Some(t) => Decoded::from(ios::parse(t)),
        },
    }
}

impl Card {
    /// Capacity in bytes by the CSD (SD cards only).
    pub fn capacity_bytes(&self) -> Option<u64> {
        self.csd.ok().map(|c| c.capacity_bytes)
    }

    /// A1/A2 claimed by the SSR.
    pub fn app_class(&self) -> Option<AppClass> {
        self.ssr.ok().and_then(Ssr::app_class)
    }

    /// The manufacturer again from the current table (brand names are a lookup redone
    /// from the raw registers, so a newer table names old results).
    pub fn manufacturer(&self) -> Option<&'static Manufacturer> {
        let c = self.cid.ok()?;
        lookup(c.manufacturer_id, c.layout)
    }

    /// Warnings to record: CSD capacity != the block device's size (bytes; 0 = not
    /// known, no comparison), unknown manufacturer, an invalid register, an SSR the
    /// kernel does not expose or could not read.
    pub fn warnings(&self, block_device_bytes: u64) -> Vec<String> {
        let mut w = Vec::new();
        if let (Some(csd), true) = (self.capacity_bytes(), block_device_bytes > 0) {
            if csd != block_device_bytes {
                w.push(format!(
                    "capacity: the CSD says {csd} bytes but the block device has {block_device_bytes} bytes ({:+} bytes): a fake or mis-reporting card, or a kernel quirk",
                    i128::from(block_device_bytes) - i128::from(csd)
                ));
            }
        }
        if let Some(c) = self.cid.ok() {
            match self.manufacturer() {
                None => w.push(format!(
                    "cid: manufacturer id 0x{:02x} is not in the table (v{TABLE_VERSION})",
                    c.manufacturer_id
                )),
                Some(m) if m.widely_reported_only => w.push(format!(
                    "cid: manufacturer 0x{:02x} = {} is only widely reported, not confirmed",
                    m.id, m.name
                )),
                Some(_) => {}
            }
        }
        for reason in [
            invalid(&self.cid),
            invalid(&self.csd),
            invalid(&self.scr),
            invalid(&self.ssr),
            invalid(&self.ocr),
            invalid(&self.ios),
        ]
        .into_iter()
        .flatten()
        {
            w.push(reason.to_string());
        }
        let sd = matches!(self.raw.kind.as_deref(), Some("SD") | Some("SDcombo"));
        if sd && self.raw.ssr.is_none() {
            w.push("ssr: not exposed by this kernel (sysfs `ssr` needs Linux 4.9+)".to_string());
        }
        if self.ssr.ok().is_some_and(|s| s.all_zero) {
            w.push(
                "ssr: all zero: the kernel could not read the SD Status, or the card is emulated"
                    .to_string(),
            );
        }
        w
    }

    /// One line for reports, e.g. `Samsung (0x1b, table v1) "EB1QT" rev 3.0, 2017-10,
    /// 29.8 GiB by CSD v2.0, SD 3.0x, C10 U3 V30 A2; bus: sd uhs SDR104 4-bit at 200 MHz`.
    /// Parts whose register is missing or invalid are left out.
    pub fn summary(&self) -> String {
        let mut head = Vec::new();
        if let Some(c) = self.cid.ok() {
            let who = match self.manufacturer() {
                Some(m) => format!(
                    "{} (0x{:02x}, table v{TABLE_VERSION})",
                    m.name, c.manufacturer_id
                ),
                None => format!(
                    "unknown manufacturer (0x{:02x}, table v{TABLE_VERSION})",
                    c.manufacturer_id
                ),
            };
            head.push(format!("{who} \"{}\" rev {}", c.product_name, c.revision));
            head.push(format!("{:04}-{:02}", c.year, c.month));
        } else if let Decoded::Invalid { reason } = &self.cid {
            head.push(reason.clone());
        }
        match &self.csd {
            Decoded::Ok { value } => head.push(format!(
                "{:.1} GiB by CSD v{}",
                value.capacity_bytes as f64 / (1u64 << 30) as f64,
                value.version
            )),
            Decoded::Invalid { reason } if reason.contains("MMC") => {
                head.push("MMC: CSD not decoded".to_string())
            }
            _ => {}
        }
        if let Some(s) = self.scr.ok() {
            head.push(s.spec_version.clone());
        }
        if let Some(s) = self.ssr.ok() {
            let l = s.classes_label();
            if !l.is_empty() {
                head.push(l);
            }
        }
        let mut line = if head.is_empty() {
            "no card registers".to_string()
        } else {
            head.join(", ")
        };
        if let Some(i) = self.ios.ok() {
            line.push_str("; bus: ");
            line.push_str(&i.summary());
        }
        line
    }
}

fn invalid<T>(d: &Decoded<T>) -> Option<&str> {
    match d {
        Decoded::Invalid { reason } => Some(reason),
        _ => None,
    }
}
