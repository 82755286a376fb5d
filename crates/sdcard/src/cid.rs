//! The CID register (card identification) in its two layouts, SD and JEDEC eMMC, and
//! the sourced manufacturer table the brand names come from.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::hex::Bits;

/// Which specification's bit layout a register was read with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    /// SD Physical Layer Simplified Specification (also SDIO combo cards).
    Sd,
    /// JEDEC JESD84 (MMC/eMMC).
    Mmc,
}

/// The decoded CID. SD: Physical Layer Simplified Spec. section 5.2 (table 5-2);
/// MMC: JEDEC JESD84-B51 section 7.2.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cid {
    /// The layout the fields below were read with.
    pub layout: Layout,
    /// MID: SD [127:120], MMC [127:120]. Assigned by SD-3C / JEDEC; not published.
    pub manufacturer_id: u8,
    /// OID as text: SD [119:104] two ASCII characters (e.g. "SD", "TM"); MMC [111:104]
    /// one byte, shown as `0xNN`. Non-printable SD bytes are shown as `0xNNNN`.
    pub oem_id: String,
    /// OID as a number (SD: 16 bits, MMC: 8 bits).
    pub oem_id_raw: u16,
    /// PNM: SD [103:64] five ASCII characters, MMC [103:56] six; trailing NULs and
    /// spaces removed, non-printable bytes as `?`.
    pub product_name: String,
    /// PRV: SD [63:56], MMC [55:48]: "n.m" from two 4-bit fields (n = hardware,
    /// m = firmware revision, as Linux's hwrev/fwrev attributes).
    pub revision: String,
    /// The upper nibble of PRV.
    pub hw_rev: u8,
    /// The lower nibble of PRV.
    pub fw_rev: u8,
    /// SHA-256 (lower-case hex) of the PSN's four bytes, big-endian: SD [55:24],
    /// MMC [47:16]. The serial itself is never kept. Note: 2^32 serials can be
    /// enumerated, so this hides the serial from casual reading, not from an attacker.
    pub serial_sha256: String,
    /// Manufacturing year. SD: MDT [19:8], year = 2000 + the 8-bit binary field
    /// [19:12] (not BCD). MMC: MDT [11:8] + 1997, moved to 2013.. for values that
    /// would fall before 2010 (Linux mmc_decode_cid for EXT_CSD_REV > 4, which every
    /// eMMC 4.41+ part has; this crate does not read EXT_CSD).
    pub year: u16,
    /// Manufacturing month 1..12 (SD [11:8], MMC [15:12]); 0 when the card says 0.
    pub month: u8,
}

pub(crate) fn decode(bytes: &[u8], layout: Layout) -> Cid {
    let b = Bits(bytes);
    let rev = b.field(63, 56) as u8;
    match layout {
        Layout::Sd => {
            let oem = b.field(119, 104) as u16;
            let psn = b.field(55, 24) as u32;
            Cid {
                layout,
                manufacturer_id: b.field(127, 120) as u8,
                oem_id: ascii_or_hex(&oem.to_be_bytes()),
                oem_id_raw: oem,
                product_name: name(&bytes[3..8]),
                revision: format!("{}.{}", rev >> 4, rev & 0xf),
                hw_rev: rev >> 4,
                fw_rev: rev & 0xf,
                serial_sha256: hash(psn),
                year: 2000 + b.field(19, 12) as u16,
                month: b.field(11, 8) as u8,
            }
        }
        Layout::Mmc => {
            let prv = b.field(55, 48) as u8;
            let y = b.field(11, 8) as u16;
            let year = if 1997 + y < 2010 { 2013 + y } else { 1997 + y };
            Cid {
                layout,
                manufacturer_id: b.field(127, 120) as u8,
                oem_id: format!("0x{:02x}", b.field(111, 104)),
                oem_id_raw: b.field(111, 104) as u16,
                product_name: name(&bytes[3..9]),
                revision: format!("{}.{}", prv >> 4, prv & 0xf),
                hw_rev: prv >> 4,
                fw_rev: prv & 0xf,
                serial_sha256: hash(b.field(47, 16) as u32),
                year,
                month: b.field(15, 12) as u8,
            }
        }
    }
}

/// The bytes of the CID that hold the serial (PSN) for `layout`.
pub(crate) fn psn_bytes(layout: Layout) -> std::ops::Range<usize> {
    match layout {
        Layout::Sd => 9..13,
        Layout::Mmc => 10..14,
    }
}

fn hash(psn: u32) -> String {
    crate::hex::to_hex(&Sha256::digest(psn.to_be_bytes()))
}

fn ascii_or_hex(b: &[u8]) -> String {
    if b.iter().all(|c| c.is_ascii_graphic() || *c == b' ') {
        b.iter().map(|&c| c as char).collect()
    } else {
        format!("0x{}", crate::hex::to_hex(b))
    }
}

fn name(b: &[u8]) -> String {
    let s: String = b
        .iter()
        .map(|&c| {
            if c.is_ascii_graphic() || c == b' ' {
                c as char
            } else if c == 0 {
                ' '
            } else {
                '?'
            }
        })
        .collect();
    s.trim_end().to_string()
}

/// The manufacturer table's version; bump it whenever an entry is added or changed, so a
/// stored result says which table named its brand.
pub const TABLE_VERSION: u32 = 1;

/// One manufacturer id. Not Deserialize: entries are `'static` table rows; results
/// store the id and the table version and redo the lookup.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Manufacturer {
    /// MID as it appears in CID [127:120].
    pub id: u8,
    /// Which id space: SD (assigned by SD-3C) or MMC (assigned by JEDEC); the same
    /// number means different companies in the two.
    pub layout: Layout,
    /// The brand or company.
    pub name: &'static str,
    /// Where the attribution comes from.
    pub source: &'static str,
    /// True when the only sources are crowd-sourced lists ("widely reported"), not a
    /// kernel table or the maker's own product.
    pub widely_reported_only: bool,
}

const KERNEL: &str = "Linux drivers/mmc/core/card.h CID_MANFID_*";
const SDINFO: &str = "widely reported: crowd-sourced list in mike548141/sdinfo rpi-sdinfo.py (CIDs of labelled cards), same id on cameramemoryspeed.com's list";

/// Manufacturer ids, each with its source.
///
/// SD-3C and JEDEC do not publish their MID lists, so every SD entry is either from the
/// Linux kernel (drivers/mmc/core/card.h, whose `CID_MANFID_SANDISK_SD` 0x03,
/// `CID_MANFID_KINGSTON_SD` 0x9f, `CID_MANFID_SWISSBIT` 0x5d and `CID_MANFID_GIGASTONE`
/// 0x12 are SD ids, while its other ids, e.g. `CID_MANFID_SANDISK` 0x02 or
/// `CID_MANFID_TOSHIBA` 0x11, are eMMC ids) or from crowd-sourced lists of real cards,
/// flagged `widely_reported_only`.
///
/// 0x02 on SD is Toshiba (now Kioxia): Toshiba's own FlashAir cards report MID 0x02 with
/// OID "TM" (the FlashAir CONFIG file carries `CID=02544d53...`, `VENDOR=TOSHIBA`).
/// Kingston sold Toshiba-made cards, so Kingston-labelled cards with MID 0x02/"TM" exist
/// (e.g. the Kingston 4 GB microSDHC in Andrew Bradford's 2014 "Flashbenching" post), and
/// lists that call 0x02 "Kingston" are a known error elsewhere: Kingston's own SD id is
/// 0x41 (crowd-sourced) and 0x9f (the kernel's `CID_MANFID_KINGSTON_SD`); 0x70 Kingston
/// is an eMMC id.
pub const MANUFACTURERS: &[Manufacturer] = &[
    sd(0x01, "Panasonic", SDINFO, true),
    sd(0x02, "Toshiba/Kioxia", "Toshiba FlashAir CONFIG (CID=02544d53..., VENDOR=TOSHIBA); Kingston-labelled cards with MID 0x02 OID \"TM\" are Toshiba-made", false),
    sd(0x03, "SanDisk", "Linux drivers/mmc/core/card.h CID_MANFID_SANDISK_SD", false),
    sd(0x12, "Gigastone", "Linux drivers/mmc/core/card.h CID_MANFID_GIGASTONE", false),
    sd(0x1b, "Samsung", "widely reported: Samsung EVO Plus CID in mikee47/Sming Storage/SD/CID.h, mike548141/sdinfo", true),
    sd(0x1d, "ADATA", SDINFO, true),
    sd(0x27, "Phison", SDINFO, true),
    sd(0x28, "Lexar", SDINFO, true),
    sd(0x41, "Kingston", SDINFO, true),
    sd(0x5d, "Swissbit", "Linux drivers/mmc/core/card.h CID_MANFID_SWISSBIT", false),
    sd(0x74, "Transcend", SDINFO, true),
    sd(0x76, "Patriot", SDINFO, true),
    sd(0x82, "Sony", SDINFO, true),
    sd(0x9c, "Angelbird/Hoodman", SDINFO, true),
    sd(0x9f, "Kingston", "Linux drivers/mmc/core/card.h CID_MANFID_KINGSTON_SD", false),
    sd(0xaa, "QEMU (emulated card)", "QEMU hw/sd/sd.c MID 0xaa", false),
    mmc(0x02, "SanDisk", KERNEL),
    mmc(0x09, "ATP", KERNEL),
    mmc(0x11, "Toshiba/Kioxia", KERNEL),
    mmc(0x13, "Micron", KERNEL),
    mmc(0x15, "Samsung", KERNEL),
    mmc(0x70, "Kingston", KERNEL),
    mmc(0x90, "SK hynix", KERNEL),
    mmc(0xfe, "Micron (Numonyx)", KERNEL),
];

const fn sd(id: u8, name: &'static str, source: &'static str, crowd: bool) -> Manufacturer {
    Manufacturer {
        id,
        layout: Layout::Sd,
        name,
        source,
        widely_reported_only: crowd,
    }
}

const fn mmc(id: u8, name: &'static str, source: &'static str) -> Manufacturer {
    Manufacturer {
        id,
        layout: Layout::Mmc,
        name,
        source,
        widely_reported_only: false,
    }
}

/// The table entry for `id` in `layout`'s id space.
pub fn lookup(id: u8, layout: Layout) -> Option<&'static Manufacturer> {
    MANUFACTURERS
        .iter()
        .find(|m| m.id == id && m.layout == layout)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_has_unique_ids_per_layout_and_a_source_each() {
        for (i, a) in MANUFACTURERS.iter().enumerate() {
            assert!(!a.source.is_empty());
            for b in &MANUFACTURERS[i + 1..] {
                assert!(a.id != b.id || a.layout != b.layout, "{a:?} / {b:?}");
            }
        }
        assert_eq!(lookup(0x02, Layout::Sd).unwrap().name, "Toshiba/Kioxia");
        assert_eq!(lookup(0x41, Layout::Sd).unwrap().name, "Kingston");
        assert_eq!(lookup(0x02, Layout::Mmc).unwrap().name, "SanDisk");
    }
}
