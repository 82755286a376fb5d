//! Built-in references for `benchboot compare --reference NAME`: published hobbyist
//! measurements (2014–2019) that the project grew from, and sbc-bench's tinymembench
//! figures ([`memory`]), compiled into the binary from `host/reference/*.csv` (copied
//! unchanged from `shared/data/reference/`) with their provenance. They are other
//! people's boards measured with `dd`, `wget`, `iperf` and tinymembench, not ground
//! truth, and they carry no repetitions (no spread).

use anyhow::{bail, Context as _, Result};
use serde::Serialize;

use crate::figure::{Key, LinkClass, Section, Stat};

pub mod memory;

/// What a reference holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefData {
    /// The seeds' dd tables: `block_size_bytes,ext2_mib_s,ext3_mib_s,ext4_mib_s,vfat_mib_s`.
    Storage {
        write_csv: &'static str,
        read_csv: &'static str,
    },
    /// The rows of `network-seed-figures.csv` with this board and link, set beside the
    /// runs' links that `applies_to` matches.
    Network {
        board: &'static str,
        link: &'static str,
        applies_to: RefLink,
    },
    /// `memory-sbc-bench.csv`: tinymembench figures per published run, set beside a
    /// run's memory results by its board, one entry per row ([`memory::rows_for`]).
    Memory { csv: &'static str },
}

/// Which of a run's links a network reference is set beside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefLink {
    /// A WiFi entry measured on a channel `width_mhz` wide, with HT (802.11n) or
    /// without (`ht: false`: 802.11a/g). Always a caveat: the reference's `radio` (a
    /// USB dongle, a mini PCIe card) is not the board's.
    Wifi {
        width_mhz: u32,
        ht: bool,
        /// The reference's radio in a few words: `a USB dongle on a Pi model B`.
        radio: &'static str,
    },
    /// USB gadget links (and links the document does not describe).
    Gadget,
    /// A board's built-in Ethernet (wired links of kind `builtin`).
    Builtin,
    /// A USB Ethernet adapter (wired links of kind `usb-adapter`): `chip` bound to the
    /// Linux `driver`; an adapter on another driver is still compared, as a different
    /// adapter.
    UsbAdapter {
        chip: &'static str,
        driver: &'static str,
    },
}

/// Whether a reference figure sits beside a run's link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkMatch {
    No,
    Yes,
    /// Compared, with this caveat (`different adapter: ...`).
    Caveat(String),
}

impl RefLink {
    /// Whether a reference for this kind of link compares with a link of `class`.
    pub fn matches(self, class: &LinkClass) -> LinkMatch {
        match (self, class) {
            (
                RefLink::Wifi {
                    width_mhz,
                    ht,
                    radio,
                },
                LinkClass::Wifi {
                    width_mhz: w,
                    no_ht,
                    radio: ours,
                },
            ) if *w == width_mhz && *no_ht != ht => LinkMatch::Caveat(match ours {
                Some(o) => format!("different radio: {radio}; this run's is the {o}"),
                None => format!("different radio: {radio}"),
            }),
            (RefLink::Gadget, LinkClass::Gadget | LinkClass::Other) => LinkMatch::Yes,
            (RefLink::Builtin, LinkClass::Wired { kind, .. }) if kind == "builtin" => {
                LinkMatch::Yes
            }
            (RefLink::UsbAdapter { chip, driver }, LinkClass::Wired { kind, driver: d })
                if kind == "usb-adapter" =>
            {
                match d.as_deref() {
                    Some(d) if d == driver => LinkMatch::Yes,
                    Some(d) => LinkMatch::Caveat(format!(
                        "different adapter: this one runs the {d} driver, the reference's \
                         {chip} runs {driver}"
                    )),
                    None => LinkMatch::Caveat(format!(
                        "different adapter?: this one's driver is unknown, the reference's \
                         {chip} runs {driver}"
                    )),
                }
            }
            _ => LinkMatch::No,
        }
    }
}

/// One built-in reference and where its figures come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reference {
    /// What `--reference` takes.
    pub name: &'static str,
    /// Board and disk or link, in a few words.
    pub title: &'static str,
    /// The board alone.
    pub board: &'static str,
    /// Where the figures were published.
    pub source: &'static str,
    /// What was measured.
    pub measured: &'static str,
    /// How it was measured.
    pub method: &'static str,
    /// Files in `host/reference/` the figures come from.
    pub files: &'static [&'static str],
    pub data: RefData,
}

/// The provenance note shipped with the data (`host/reference/README.md`).
pub const PROVENANCE: &str = include_str!("../reference/README.md");

const SOURCE: &str = "published hobbyist write-ups (2014-2019) this project grew from, \
     copied unchanged from shared/data/reference/ (see host/reference/README.md)";
const DD: &str = "dd writing then reading 1 GiB per block size (8 B ... 1 MiB), sync around \
     each write, MiB/s = 1024 / seconds; compared with benchboot's sync mode";
const NETWORK_CSV: &str = include_str!("../reference/network-seed-figures.csv");

macro_rules! storage {
    ($write:literal, $read:literal) => {
        RefData::Storage {
            write_csv: include_str!(concat!("../reference/", $write)),
            read_csv: include_str!(concat!("../reference/", $read)),
        }
    };
}

/// Every built-in reference, storage first.
pub const REFERENCES: &[Reference] = &[
    Reference {
        name: "pi-model-b-usb-hdd",
        title: "Raspberry Pi model B (512 MB, 700 MHz), 2 TB HDD on USB behind the internal hub",
        board: "Raspberry Pi model B",
        source: SOURCE,
        measured: "sequential write and read MiB/s by block size on ext2, ext3, ext4 and vfat \
                   partitions of the same HDD; the USB hub is shared with the Ethernet chip",
        method: DD,
        files: &[
            "storage-raspberry-pi-model-b-usb-disk-write-results.csv",
            "storage-raspberry-pi-model-b-usb-disk-read-results.csv",
        ],
        data: storage!(
            "storage-raspberry-pi-model-b-usb-disk-write-results.csv",
            "storage-raspberry-pi-model-b-usb-disk-read-results.csv"
        ),
    },
    Reference {
        name: "desktop-usb2-hdd",
        title: "midrange desktop PC, the same 2 TB HDD on a dedicated USB 2.0 port",
        board: "midrange desktop PC",
        source: SOURCE,
        measured: "sequential write and read MiB/s by block size, ext2/ext3/ext4/vfat",
        method: DD,
        files: &[
            "storage-midrange-desktop-pc-disk-write-results-dedicated-hs-usb-2-0-port.csv",
            "storage-midrange-desktop-pc-disk-read-results-dedicated-hs-usb-2-0-port.csv",
        ],
        data: storage!(
            "storage-midrange-desktop-pc-disk-write-results-dedicated-hs-usb-2-0-port.csv",
            "storage-midrange-desktop-pc-disk-read-results-dedicated-hs-usb-2-0-port.csv"
        ),
    },
    Reference {
        name: "desktop-esata-hdd",
        title: "midrange desktop PC, the same 2 TB HDD on a 1.5 Gbit/s eSATA port",
        board: "midrange desktop PC",
        source: SOURCE,
        measured: "sequential write and read MiB/s by block size, ext2/ext3/ext4/vfat",
        method: DD,
        files: &[
            "storage-midrange-desktop-pc-disk-write-results-1-5-gbit-sec-esata-port.csv",
            "storage-midrange-desktop-pc-disk-read-results-1-5-gbit-sec-esata-port.csv",
        ],
        data: storage!(
            "storage-midrange-desktop-pc-disk-write-results-1-5-gbit-sec-esata-port.csv",
            "storage-midrange-desktop-pc-disk-read-results-1-5-gbit-sec-esata-port.csv"
        ),
    },
    Reference {
        name: "banana-pi-sata-hdd",
        title: "Banana Pi M1 (Allwinner A20, 1 GiB), the same 2 TB HDD on SATA",
        board: "Banana Pi M1",
        source: SOURCE,
        measured: "sequential write and read MiB/s by block size, ext2/ext3/ext4/vfat",
        method: DD,
        files: &[
            "storage-banana-pi-sata-disk-write-results-spinning-rust.csv",
            "storage-banana-pi-sata-disk-read-results-spinning-rust.csv",
        ],
        data: storage!(
            "storage-banana-pi-sata-disk-write-results-spinning-rust.csv",
            "storage-banana-pi-sata-disk-read-results-spinning-rust.csv"
        ),
    },
    Reference {
        name: "banana-pi-sata-ssd",
        title: "Banana Pi M1, an old 128 GB SSD on SATA",
        board: "Banana Pi M1",
        source: SOURCE,
        measured: "sequential write (4 KiB ... 1 MiB only) and read MiB/s by block size, \
                   ext2/ext3/ext4/vfat",
        method: DD,
        files: &[
            "storage-banana-pi-sata-disk-write-results-ssd.csv",
            "storage-banana-pi-sata-disk-read-results-ssd.csv",
        ],
        data: storage!(
            "storage-banana-pi-sata-disk-write-results-ssd.csv",
            "storage-banana-pi-sata-disk-read-results-ssd.csv"
        ),
    },
    Reference {
        name: "pi-zero-wh-usb-gadget",
        title: "Raspberry Pi Zero WH, USB gadget Ethernet (RNDIS/ECM) to a laptop",
        board: "Raspberry Pi Zero WH",
        source: SOURCE,
        measured: "TCP throughput both ways (Mbit/s) and the board's CPU (system, softirq %) \
                   while sending",
        method: "iperf TCP, 300 s board to host and 100 s host to board, 10 s intervals; \
                 compared with benchboot's TCP runs",
        files: &["network-seed-figures.csv"],
        data: RefData::Network {
            board: "raspberry-pi-zero-wh",
            link: "USB gadget RNDIS/ECM to laptop",
            applies_to: RefLink::Gadget,
        },
    },
    Reference {
        name: "banana-pi-m1-gigabit-ethernet",
        title: "Banana Pi M1, built-in gigabit Ethernet",
        board: "Banana Pi M1",
        source: SOURCE,
        measured: "download into and upload from the board, MiB/s (average)",
        method: "wget of a 100 MiB file from a RAM disk over the LAN; compared with \
                 benchboot's HTTP GETs",
        files: &["network-seed-figures.csv"],
        data: RefData::Network {
            board: "bananapi-m1",
            link: "built-in gigabit Ethernet",
            applies_to: RefLink::Builtin,
        },
    },
    Reference {
        name: "banana-pi-m1-usb-gigabit-adapter",
        title: "Banana Pi M1, USB 2.0 gigabit adapter (LAN7500)",
        board: "Banana Pi M1",
        source: SOURCE,
        measured: "download into and upload from the board, MiB/s (average); a peak over a \
                   200 Mbit/s internet link is listed in the file but not compared",
        method: "wget of a 100 MiB file from a RAM disk over the LAN; compared with \
                 benchboot's HTTP GETs",
        files: &["network-seed-figures.csv"],
        data: RefData::Network {
            board: "bananapi-m1",
            link: "USB 2.0 gigabit adapter (LAN7500)",
            applies_to: RefLink::UsbAdapter {
                chip: "LAN7500",
                driver: "smsc75xx",
            },
        },
    },
    Reference {
        name: "sbc-bench-memory",
        title: "sbc-bench's tinymembench figures for the run's board, one entry per published run",
        board: "the run's board",
        source: "ThomasKaiser/sbc-bench result files (BeagleBone Black: TI's Processor SDK \
                 performance guide for the AM335x EVM), copied unchanged from \
                 shared/data/reference/ (see host/reference/README.md)",
        measured: "standard memcpy and standard memset, MB/s (10^6 B/s, a copy counted once); \
                   single random read latency, ns over L1, at 64 MiB and 1 MiB",
        method: "tinymembench (one row lmbench); compared with benchboot's libc memcpy / \
                 memset on the first CPU (best sample) and its base-pages latency table \
                 (fastest repeat over the L1 baseline); each row's clock, kernel and \
                 userland beside it",
        files: &["memory-sbc-bench.csv"],
        data: RefData::Memory {
            csv: memory::MEMORY_CSV,
        },
    },
    wifi(
        "pi-model-b-wifi-11ag",
        "Raspberry Pi model B, USB WiFi dongle, 802.11a/g 20 MHz (54 Mbit/s)",
        PI_B,
        (20, false, PI_B_DONGLE),
        "wifi 802.11a/g 20MHz (54 Mbit/s) USB dongle",
    ),
    wifi(
        "pi-model-b-wifi-11n-20mhz",
        "Raspberry Pi model B, USB WiFi dongle, 802.11n 20 MHz (72 Mbit/s)",
        PI_B,
        (20, true, PI_B_DONGLE),
        "wifi 802.11n 20MHz (72 Mbit/s) USB dongle",
    ),
    wifi(
        "pi-model-b-wifi-11n-40mhz",
        "Raspberry Pi model B, USB WiFi dongle, 802.11n 40 MHz (150 Mbit/s)",
        PI_B,
        (40, true, PI_B_DONGLE),
        "wifi 802.11n 40MHz (150 Mbit/s) USB dongle",
    ),
    wifi(
        "wetab-wifi-11ag",
        "WeTab (AR9285 mini PCIe WiFi), 802.11a/g 20 MHz (54 Mbit/s)",
        WETAB,
        (20, false, WETAB_CARD),
        "wifi 802.11a/g 20MHz (54 Mbit/s) mini PCIe",
    ),
    wifi(
        "wetab-wifi-11n-20mhz",
        "WeTab (AR9285 mini PCIe WiFi), 802.11n 20 MHz (65 Mbit/s)",
        WETAB,
        (20, true, WETAB_CARD),
        "wifi 802.11n 20MHz (65 Mbit/s) mini PCIe",
    ),
    wifi(
        "wetab-wifi-11n-40mhz",
        "WeTab (AR9285 mini PCIe WiFi), 802.11n 40 MHz (150 Mbit/s)",
        WETAB,
        (40, true, WETAB_CARD),
        "wifi 802.11n 40MHz (150 Mbit/s) mini PCIe",
    ),
];

/// The WiFi references' boards: (short name, the CSV's `board`).
const PI_B: (&str, &str) = ("Raspberry Pi model B", "raspberry-pi-model-b");
const WETAB: (&str, &str) = ("WeTab", "wetab-ar9285");
/// The WiFi references' radios, as a caveat names them.
const PI_B_DONGLE: &str = "a USB dongle on a Pi model B";
const WETAB_CARD: &str = "an AR9285 mini PCIe card in a WeTab";

/// A WiFi reference: `(width_mhz, ht, radio)` say which entries it sits beside
/// ([`RefLink::Wifi`]).
const fn wifi(
    name: &'static str,
    title: &'static str,
    board: (&'static str, &'static str),
    (width_mhz, ht, radio): (u32, bool, &'static str),
    link: &'static str,
) -> Reference {
    Reference {
        name,
        title,
        board: board.0,
        source: SOURCE,
        measured: "download into the board, MiB/s, min and max of three runs (no median)",
        method: "wget of a 100 MiB file from a RAM disk over the LAN, per WiFi channel and \
                 mode; compared with benchboot's HTTP GETs into the board over WiFi entries \
                 of the same width (802.11n: HT, 802.11a/g: no HT)",
        files: &["network-seed-figures.csv"],
        data: RefData::Network {
            board: board.1,
            link,
            applies_to: RefLink::Wifi {
                width_mhz,
                ht,
                radio,
            },
        },
    }
}

impl Reference {
    /// Which links a network reference is set beside; `None` for storage.
    pub fn applies_to(&self) -> Option<RefLink> {
        match self.data {
            RefData::Network { applies_to, .. } => Some(applies_to),
            RefData::Storage { .. } | RefData::Memory { .. } => None,
        }
    }
}

/// The reference called `name`.
///
/// # Errors
/// Lists the known names when there is none.
pub fn find(name: &str) -> Result<&'static Reference> {
    REFERENCES.iter().find(|r| r.name == name).with_context(|| {
        let names: Vec<&str> = REFERENCES.iter().map(|r| r.name).collect();
        format!(
            "no built-in reference `{name}`; known: {} (details: benchboot compare --list-references)",
            names.join(", ")
        )
    })
}

/// MiB/s to Mbit/s: 2^20 bytes × 8 bits / 10^6.
pub const MIB_S_TO_MBIT_S: f64 = 8.388_608;

fn parse_storage(csv_text: &str, direction: &str, out: &mut Vec<(Key, Stat)>) -> Result<()> {
    let mut lines = csv_text.lines();
    let header: Vec<&str> = lines
        .next()
        .context("empty reference CSV")?
        .split(',')
        .collect();
    if header.first() != Some(&"block_size_bytes") {
        bail!("reference CSV: first column is not block_size_bytes");
    }
    for line in lines.filter(|l| !l.trim().is_empty()) {
        let cells: Vec<&str> = line.split(',').collect();
        let bs: u64 = cells[0].parse().context("reference CSV: block size")?;
        for (col, cell) in header.iter().zip(&cells).skip(1) {
            let fs = col.trim_end_matches("_mib_s");
            let v: f64 = cell
                .parse()
                .with_context(|| format!("reference CSV: `{cell}` is not a number"))?;
            out.push((Key::storage("sync", direction, fs, bs), Stat::single(v)));
        }
    }
    Ok(())
}

/// The figures of a reference as compare cells. Network figures are link-agnostic
/// keys (`target` empty, `param` 0): they are set beside every run row of the same test
/// and direction over a link the reference applies to ([`Reference::applies_to`]).
/// A memory reference gives every row's figures one after the other (keys repeat):
/// `compare` makes each row an entry of its own instead ([`memory::rows_for`]).
///
/// # Errors
/// Only if the shipped data were malformed (a test reads every reference).
pub fn figures(r: &Reference) -> Result<Vec<(Key, Stat)>> {
    let mut out = Vec::new();
    match r.data {
        RefData::Storage {
            write_csv,
            read_csv,
        } => {
            parse_storage(write_csv, "write", &mut out)?;
            parse_storage(read_csv, "read", &mut out)?;
        }
        RefData::Memory { csv } => {
            for row in memory::parse_rows(csv)? {
                out.extend(row.figures().into_iter().map(|(k, s, _)| (k, s)));
            }
        }
        RefData::Network { board, link, .. } => {
            // Per (section, direction): min, max and the central figure.
            struct Slot {
                section: Section,
                direction: &'static str,
                min: Option<f64>,
                max: Option<f64>,
                central: Option<f64>,
            }
            let mut acc: Vec<Slot> = Vec::new();
            for line in NETWORK_CSV.lines().skip(1) {
                let c: Vec<&str> = line.split(',').collect();
                if c.len() != 7 || c[0] != board || c[1] != link {
                    continue;
                }
                let (dir, method, figure, unit) = (c[2], c[3], c[4], c[5]);
                let v: f64 = c[6].parse().context("reference network CSV: value")?;
                if method.contains("internet") {
                    continue;
                }
                let direction = match dir {
                    "download" | "host-to-board" => "host-to-board",
                    "upload" | "board-to-host" => "board-to-host",
                    other => bail!("reference network CSV: direction `{other}`"),
                };
                let (section, v) = match (method, figure, unit) {
                    (m, "system", "percent") if m.contains("CPU") => {
                        (Section::TcpBoardCpuSystem, v)
                    }
                    (m, "softirq", "percent") if m.contains("CPU") => {
                        (Section::TcpBoardCpuSoftirq, v)
                    }
                    (m, _, "Mbit/s") if m.starts_with("iperf") => (Section::Tcp, v),
                    (m, _, "MiB/s") if m.starts_with("wget") => {
                        (Section::Http, v * MIB_S_TO_MBIT_S)
                    }
                    _ => bail!("reference network CSV: cannot place `{line}`"),
                };
                let i = match acc
                    .iter()
                    .position(|a| a.section == section && a.direction == direction)
                {
                    Some(i) => i,
                    None => {
                        acc.push(Slot {
                            section,
                            direction,
                            min: None,
                            max: None,
                            central: None,
                        });
                        acc.len() - 1
                    }
                };
                match figure {
                    "min" => acc[i].min = Some(v),
                    "max" => acc[i].max = Some(v),
                    _ => acc[i].central = Some(v),
                }
            }
            for s in acc {
                let stat = match (s.central, s.min, s.max) {
                    (Some(v), _, _) => Stat::single(v),
                    (None, Some(lo), Some(hi)) => Stat::range(lo, hi),
                    _ => bail!("reference {}: a min without a max", r.name),
                };
                out.push((Key::network(s.section, s.direction, "", 0), stat));
            }
        }
    }
    Ok(out)
}

/// A reference as `--list-references --format json` prints it.
#[derive(Debug, Clone, Serialize)]
pub struct ReferenceInfo {
    pub name: &'static str,
    pub kind: &'static str,
    pub title: &'static str,
    pub measured: &'static str,
    pub method: &'static str,
    pub source: &'static str,
    pub files: &'static [&'static str],
}

/// Every reference with its provenance.
pub fn list() -> Vec<ReferenceInfo> {
    REFERENCES
        .iter()
        .map(|r| ReferenceInfo {
            name: r.name,
            kind: match r.data {
                RefData::Storage { .. } => "storage",
                RefData::Network { .. } => "network",
                RefData::Memory { .. } => "memory",
            },
            title: r.title,
            measured: r.measured,
            method: r.method,
            source: r.source,
            files: r.files,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reference_parses_and_has_figures() {
        for r in REFERENCES {
            let f = figures(r).unwrap();
            assert!(!f.is_empty(), "{}", r.name);
        }
        // 18 block sizes × 4 filesystems × 2 directions.
        assert_eq!(
            figures(find("pi-model-b-usb-hdd").unwrap()).unwrap().len(),
            144
        );
        // The SSD has writes from 4 KiB only: 9 write rows + 18 read rows.
        assert_eq!(
            figures(find("banana-pi-sata-ssd").unwrap()).unwrap().len(),
            27 * 4
        );
    }

    #[test]
    fn network_figures_map_directions_units_and_ranges() {
        let f = figures(find("pi-zero-wh-usb-gadget").unwrap()).unwrap();
        let get = |s: Section, d: &str| {
            f.iter()
                .find(|(k, _)| k.section == s && k.direction == d)
                .map(|(_, v)| v.clone())
                .unwrap()
        };
        assert_eq!(get(Section::Tcp, "board-to-host").median, Some(152.0));
        assert_eq!(get(Section::Tcp, "host-to-board").median, Some(109.0));
        assert_eq!(
            get(Section::TcpBoardCpuSoftirq, "board-to-host").median,
            Some(52.6)
        );
        let f = figures(find("banana-pi-m1-gigabit-ethernet").unwrap()).unwrap();
        let down = &f
            .iter()
            .find(|(k, _)| k.direction == "host-to-board")
            .unwrap()
            .1;
        assert!((down.median.unwrap() - 96.3 * 8.388608).abs() < 1e-9);
        let f = figures(find("wetab-wifi-11n-40mhz").unwrap()).unwrap();
        assert_eq!(f.len(), 1);
        let s = &f[0].1;
        assert_eq!(
            (s.median, s.min, s.max),
            (None, 2.08 * 8.388608, 6.14 * 8.388608)
        );
        // The internet peak is not a LAN figure and is left out.
        let f = figures(find("banana-pi-m1-usb-gigabit-adapter").unwrap()).unwrap();
        assert_eq!(f.len(), 2);
    }

    #[test]
    fn unknown_name_lists_the_known_ones() {
        let e = find("pi-5").unwrap_err().to_string();
        assert!(
            e.contains("pi-model-b-usb-hdd") && e.contains("--list-references"),
            "{e}"
        );
    }

    #[test]
    fn every_listed_file_is_shipped() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("reference");
        for r in REFERENCES {
            for f in r.files {
                assert!(dir.join(f).is_file(), "{f}");
            }
        }
        assert!(PROVENANCE.contains("shared/data/reference"));
    }
}
