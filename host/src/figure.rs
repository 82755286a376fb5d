//! The compare model: what one figure is across runs and references ([`Key`], its
//! [`Section`] and unit) and one entry's values in one cell ([`Stat`]). Below both
//! [`crate::compare`], which lines entries up by these, and [`crate::reference`], whose
//! published figures are stated in them.

use benchboot_results::figures::{Figure, Metric};
use benchboot_results::network::NetworkResults;
use benchboot_results::Summary;
use serde::{Deserialize, Serialize};

/// Which table a figure belongs to; the unit follows from it ([`Section::unit`]).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "kebab-case")]
pub enum Section {
    #[default]
    /// Sequential throughput by block size, MiB/s.
    Storage,
    /// `hdparm -T`/`-t`-style reads, MiB/s.
    DeviceRead,
    /// Random I/O, IOPS.
    Random,
    /// TCP throughput, Mbit/s.
    Tcp,
    /// The board's system CPU share during a TCP run, percent.
    TcpBoardCpuSystem,
    /// The board's softirq CPU share during a TCP run, percent.
    TcpBoardCpuSoftirq,
    /// HTTP GET of an object in RAM, Mbit/s.
    Http,
    /// Memory bandwidth of one kernel on one core set, MB/s (10^6 B/s): the best sample
    /// (tinymembench's figure).
    MemoryBandwidth,
    /// Memory latency at one block size, ns per read over the L1 baseline: the fastest
    /// repeat (tinymembench's figure).
    MemoryLatency,
    /// The whole-card pass (`benchboot probe --full`, `[card-check] full`): average
    /// write and read over the card and the sustained write speed, MiB/s.
    Card,
    /// Any other figure the results crate's model has and compares
    /// ([`Metric::compared`]): a plan command's, or a metric added to the model, lined
    /// up by its metric, units and context with no code of compare's own
    /// ([`Key::figure`]).
    Figure,
}

impl Section {
    /// "MiB/s", "IOPS", "Mbit/s", "%", "MB/s" or "ns"; "" for [`Section::Figure`],
    /// whose key carries its figure's units ([`Key::unit`]).
    pub fn unit(self) -> &'static str {
        match self {
            Section::Storage | Section::DeviceRead | Section::Card => "MiB/s",
            Section::Random => "IOPS",
            Section::Tcp | Section::Http => "Mbit/s",
            Section::TcpBoardCpuSystem | Section::TcpBoardCpuSoftirq => "%",
            Section::MemoryBandwidth => "MB/s",
            Section::MemoryLatency => "ns",
            Section::Figure => "",
        }
    }

    /// Decimals shown for this unit.
    pub fn decimals(self) -> usize {
        match self {
            Section::Storage | Section::DeviceRead | Section::Card => 2,
            Section::Random => 0,
            _ => 1,
        }
    }
}

/// What one figure is, across runs: section, storage mode asked (`random`: `direct`),
/// direction (write/read, cached/buffered, board-to-host/host-to-board), target (label,
/// disk or link; empty for a reference figure that holds for any link), block size
/// (0 when none) and queue depth or stream count (0 when none). Memory figures use
/// `mode` for the kernel id or page kind, `direction` for the test's label or the
/// chain, `target` for the core set ([`Key::memory_bandwidth`], [`Key::memory_latency`]).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default)]
pub struct Key {
    pub section: Section,
    pub mode: String,
    pub direction: String,
    pub target: String,
    pub block_size_bytes: u64,
    pub param: u32,
    /// [`Section::Figure`]: the figure's metric ([`Metric::name`]); else empty.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub metric: String,
    /// [`Section::Figure`]: the figure's units; else empty (the section's unit).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub units: String,
}

impl Key {
    /// A storage cell.
    pub fn storage(mode: &str, direction: &str, target: &str, block_size: u64) -> Key {
        Key {
            section: Section::Storage,
            mode: mode.into(),
            direction: direction.into(),
            target: target.into(),
            block_size_bytes: block_size,
            param: 0,
            ..Key::default()
        }
    }

    /// A network figure (`param`: streams, 0 when none).
    pub fn network(section: Section, direction: &str, target: &str, param: u32) -> Key {
        Key {
            section,
            mode: String::new(),
            direction: direction.into(),
            target: target.into(),
            block_size_bytes: 0,
            param,
            ..Key::default()
        }
    }

    /// A memory bandwidth test: `kernel` id (`libc-memcpy`), its tinymembench `label`
    /// (`standard memcpy`) and the core set (`CPU 0`, `all 4 cores`; empty: the first
    /// CPU, as a reference states it).
    pub fn memory_bandwidth(kernel: &str, label: &str, cores: &str) -> Key {
        Key {
            section: Section::MemoryBandwidth,
            mode: kernel.into(),
            direction: label.into(),
            target: cores.into(),
            block_size_bytes: 0,
            param: 0,
            ..Key::default()
        }
    }

    /// A memory latency row: `pages` `base` / `huge`, `chain` `single` / `dual`, the
    /// block size in bytes.
    pub fn memory_latency(pages: &str, chain: &str, block_size: u64) -> Key {
        Key {
            section: Section::MemoryLatency,
            mode: pages.into(),
            direction: chain.into(),
            target: String::new(),
            block_size_bytes: block_size,
            param: 0,
            ..Key::default()
        }
    }

    /// The row of a run's figure `f` ([`benchboot_results::figures`]): storage by mode
    /// asked, direction, target and block size (every repetition in one row), device
    /// reads by disk and kind, random I/O by operation, target, block size and queue
    /// depth, TCP (and the board's system and softirq CPU shares) by direction, link and
    /// streams, HTTP by direction and link, the whole-card pass's speeds by direction
    /// (target `card`), any other metric the model compares by [`Key::figure`]. `None`
    /// for the figures the model does not compare ([`Metric::compared`]: round trips,
    /// UDP, verification, the card's real size, clock, WiFi) and for memory (compared on
    /// every sample: [`crate::compare::memory::run_figures`]).
    pub fn of(f: &Figure) -> Option<Key> {
        let c = &f.context;
        let section = match f.metric {
            _ if !f.metric.compared() => return None,
            Metric::Storage => {
                return Some(Key::storage(&c.mode, &c.direction, &c.target, c.block_size))
            }
            Metric::DeviceRead => Section::DeviceRead,
            Metric::Random => {
                return Some(Key {
                    section: Section::Random,
                    mode: c.mode.clone(),
                    direction: c.direction.clone(),
                    target: c.target.clone(),
                    block_size_bytes: c.block_size,
                    param: c.param,
                    ..Key::default()
                })
            }
            Metric::Tcp => Section::Tcp,
            Metric::TcpBoardCpuSystem => Section::TcpBoardCpuSystem,
            Metric::TcpBoardCpuSoftirq => Section::TcpBoardCpuSoftirq,
            Metric::Http => Section::Http,
            // Every card in one row per figure, whatever its device's name: a card
            // probed here and the same card checked in a board line up.
            Metric::CardSpeed => return Some(Key::network(Section::Card, &c.direction, "card", 0)),
            Metric::MemoryBandwidth | Metric::MemoryLatency => return None,
            _ => return Some(Key::figure(f)),
        };
        Some(Key::network(section, &c.direction, &c.target, c.param))
    }

    /// The row of a figure compare has no section of its own for ([`Section::Figure`]):
    /// its metric, units and context (target, mode, direction, block size, queue depth
    /// or streams); every repetition in one row.
    pub fn figure(f: &Figure) -> Key {
        let c = &f.context;
        Key {
            section: Section::Figure,
            mode: c.mode.clone(),
            direction: c.direction.clone(),
            target: c.target.clone(),
            block_size_bytes: c.block_size,
            param: c.param,
            metric: f.metric.name().into(),
            units: f.units.clone(),
        }
    }

    /// The unit of the row: its section's, or a [`Section::Figure`]'s own units.
    pub fn unit(&self) -> String {
        match self.section {
            Section::Figure => self.units.clone(),
            s => s.unit().into(),
        }
    }

    /// The same figure for any link (how a reference states it): no target, no
    /// stream count.
    pub fn any_link(&self) -> Key {
        Key {
            target: String::new(),
            param: 0,
            ..self.clone()
        }
    }
}

/// The figures of one entry in one cell, in the unit of the row's section
/// ([`Section::unit`]): every repetition, or (references) a single published figure or
/// only a min–max range. The central figure (`median`) is the median of the
/// repetitions, except in the memory sections: there it is tinymembench's, the best
/// sample or fastest repeat ([`Stat::best_of`]), as the report and the references give.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stat {
    /// Number of values (0 for a range without its values).
    pub n: usize,
    pub values: Vec<f64>,
    /// `None` for a range-only figure.
    pub median: Option<f64>,
    pub min: f64,
    pub max: f64,
}

impl Stat {
    /// Median and min–max of `values`; `None` when empty.
    pub fn of(values: &[f64]) -> Option<Stat> {
        Summary::of(values).map(|s| Stat {
            n: s.count,
            values: values.to_vec(),
            median: Some(s.median),
            min: s.min,
            max: s.max,
        })
    }

    /// Every value with `best` as the central figure (the memory sections' best sample
    /// or fastest repeat); `None` when empty.
    pub fn best_of(values: &[f64], best: f64) -> Option<Stat> {
        let s = Summary::of(values)?;
        Some(Stat {
            n: s.count,
            values: values.to_vec(),
            median: Some(best),
            min: s.min,
            max: s.max,
        })
    }

    /// One figure.
    pub fn single(v: f64) -> Stat {
        Stat {
            n: 1,
            values: vec![v],
            median: Some(v),
            min: v,
            max: v,
        }
    }

    /// Only a min and a max are known.
    pub fn range(lo: f64, hi: f64) -> Stat {
        Stat {
            n: 0,
            values: Vec::new(),
            median: None,
            min: lo,
            max: hi,
        }
    }
}

/// What kind of link a run's network figure was measured over: what a network
/// reference is matched against ([`crate::reference::RefLink::matches`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkClass {
    /// A USB gadget function (`ncm`, `ecm`, `rndis`).
    Gadget,
    /// A wired link: `kind` `builtin` or `usb-adapter`, with the driver bound to it.
    Wired {
        kind: String,
        driver: Option<String>,
    },
    /// A WiFi entry, by the channel its figures were measured on (obtained, else
    /// asked): its width (MHz), whether it ran without HT (802.11a/g), and the radio.
    Wifi {
        width_mhz: u32,
        no_ht: bool,
        /// The board file's chip name (`CYW43438`), else the driver, when known.
        radio: Option<String>,
    },
    /// A link the document does not describe.
    Other,
}

impl LinkClass {
    /// The class of `link` in `n`: a wired link by its record, a WiFi entry by its
    /// record, a gadget link by its function name.
    pub fn of(n: &NetworkResults, link: &str) -> LinkClass {
        if let Some(e) = n.wifi.entries.iter().find(|e| e.link == link) {
            let c = e.obtained.as_ref().or(e.asked.as_ref());
            let radio = n
                .wifi
                .radio
                .as_ref()
                .and_then(|r| r.chip.clone().or_else(|| r.driver.clone()));
            return LinkClass::Wifi {
                width_mhz: c.map_or(0, |c| c.width_mhz),
                no_ht: c.is_some_and(|c| c.no_ht),
                radio,
            };
        }
        if let Some(w) = n.wired.iter().find(|w| w.name == link) {
            return LinkClass::Wired {
                kind: w.kind.clone(),
                driver: w.facts.driver.clone(),
            };
        }
        let gadget = matches!(link, "ncm" | "ecm" | "rndis")
            || n.links
                .iter()
                .any(|l| l.function == link && l.function != "static");
        if gadget {
            LinkClass::Gadget
        } else {
            LinkClass::Other
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchboot_results::figures::Context;

    fn fig(metric: Metric, context: Context) -> Figure {
        Figure {
            metric,
            id: String::new(),
            value: 1.0,
            units: String::new(),
            context,
        }
    }

    /// Each repetition of a storage cell lands in the cell's row (the repetition and the
    /// mode that ran are not part of it); a round trip has no row.
    #[test]
    fn a_figure_names_its_compare_row() {
        let storage = Context {
            target: "ext4".into(),
            mode: "direct".into(),
            mode_ran: "sync".into(),
            direction: "read".into(),
            block_size: 4096,
            repetition: Some(3),
            ..Context::default()
        };
        assert_eq!(
            Key::of(&fig(Metric::Storage, storage)),
            Some(Key::storage("direct", "read", "ext4", 4096))
        );
        let tcp = Context {
            target: "ncm".into(),
            direction: "board-to-host".into(),
            param: 4,
            ..Context::default()
        };
        assert_eq!(
            Key::of(&fig(Metric::TcpBoardCpuSoftirq, tcp)),
            Some(Key::network(
                Section::TcpBoardCpuSoftirq,
                "board-to-host",
                "ncm",
                4
            ))
        );
        assert_eq!(Key::of(&fig(Metric::RoundTrip, Context::default())), None);
        // A metric with no section of compare's own is compared as a figure.
        let cmd = Context {
            target: "sysbench".into(),
            mode: "events".into(),
            ..Context::default()
        };
        let k = Key::of(&fig(Metric::Command, cmd)).unwrap();
        assert_eq!((k.section, k.metric.as_str()), (Section::Figure, "command"));
    }
}
