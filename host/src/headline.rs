//! The headline of a run: what a person reads in ten seconds, before any table. Built
//! once ([`headline`]) from the run's figures ([`benchboot_results::figures::figures`])
//! and the few facts they do not carry (the plan's targets, the card's registers, the
//! card check, the energy report), then printed as the first block of every report
//! ([`Headline::block`]: terminal, Markdown, HTML) and read by the runs page's columns
//! ([`crate::runs_page::headlines`]).
//!
//! In order, only what the run has: the verdict in words (EMULATED first for a QEMU
//! run, complete or not, failures); sequential write and read on the card; 4 KiB random
//! IOPS with the A1 verdict; TCP each way per link; memcpy and memory latency; the
//! card's identity and the card check; energy when a power trace is attached. Under
//! QEMU every figure is marked EMULATED, A1 has no verdict and latency is not given
//! (TCG has no caches).
//!
//! Where a figure could come from several places the rules pick one and the line names
//! it: the card's targets first (the boot card's partitions), ext4 before raw before the
//! others in the plan's order, the first that has the figure.

use benchboot_energy::StepEnergy;
use benchboot_plan::{Filesystem, StorageTarget};
use benchboot_results::figures::{figures, Figure, Metric};
use benchboot_results::{
    a1_verdict, A1Outcome, A1Verdict, DeviceIdentity, RunResults, Severity, Summary,
};
use benchboot_sdcard::AppClass;

use crate::context::EMULATED_NOTICE;
use crate::doc::facts::{Fact, Facts};
use crate::doc::Block;
use crate::power::energy::{sig, Energy};
use crate::units::{block_size_label, grouped, size_label};

/// Sequential write and read on one target at one block size: MiB/s, medians of the
/// repetitions.
#[derive(Debug, Clone, PartialEq)]
pub struct Sequential {
    /// The plan's label of the target (`ext4`).
    pub target: String,
    /// Its block device (`/dev/mmcblk0p7`).
    pub device: String,
    /// Whether the target is on the boot card.
    pub on_card: bool,
    /// The largest block size the plan ran on the target, bytes.
    pub block_size: u64,
    /// `direct` when that cell ran in direct mode, else `sync`.
    pub mode: String,
    /// MiB/s (1 MiB = 1,048,576 bytes), medians; `None`: not measured.
    pub write: Option<f64>,
    pub read: Option<f64>,
    /// Repetitions behind the medians (the larger of the two directions').
    pub repetitions: usize,
}

/// 4 KiB random I/O on one target at its lowest queue depth: IOPS, medians.
#[derive(Debug, Clone, PartialEq)]
pub struct Random {
    pub target: String,
    pub on_card: bool,
    pub queue_depth: u32,
    /// IOPS, medians of the repetitions; `None`: not measured.
    pub read: Option<f64>,
    pub write: Option<f64>,
    /// The A1 verdict on the target ([`a1_verdict`]; `None`: a deciding figure missing).
    pub a1: Option<A1Verdict>,
    /// The class the card claims in its SD Status register.
    pub claim: Option<AppClass>,
}

/// One link's best TCP run each way: (Mbit/s, streams).
#[derive(Debug, Clone, PartialEq)]
pub struct LinkTcp {
    /// The link as the runs name it (`ncm`, `eth`, `wifi-ch36-80`).
    pub link: String,
    /// What it is: `USB gadget`, `wired`, `USB Ethernet adapter`, `WiFi`, or "".
    pub kind: String,
    pub board_to_host: Option<(f64, u32)>,
    pub host_to_board: Option<(f64, u32)>,
}

/// libc memcpy: (MB/s, core set) on one core and on all cores.
#[derive(Debug, Clone, PartialEq)]
pub struct Memcpy {
    pub one: Option<(f64, String)>,
    pub all: Option<(f64, String)>,
}

/// Memory latency at the largest block of the latency table.
#[derive(Debug, Clone, PartialEq)]
pub enum Latency {
    /// Single random reads over L1, ns, at `block_size` bytes on `pages` (`base`,
    /// `huge`) pages; the last-level cache the engine assumed or read, bytes.
    Measured {
        ns: f64,
        block_size: u64,
        pages: String,
        llc_bytes: Option<u64>,
    },
    /// A QEMU run: its latency table is TCG's, which has no caches.
    NotUnderQemu,
}

/// Why a QEMU run's latency has no figure.
pub const NO_LATENCY_UNDER_QEMU: &str = "not measurable under QEMU";

/// The card the run's targets are on, from its own registers where it has them.
#[derive(Debug, Clone, PartialEq)]
pub struct CardIdentity {
    /// Kernel name of the disk (`mmcblk0`, `vda`).
    pub disk: String,
    /// Manufacturer by the CID (`SanDisk`), else `None`.
    pub manufacturer: Option<String>,
    /// Product name by the CID (`SN64G`), else the kernel's model.
    pub name: Option<String>,
    /// Size by the CSD, else the block device's, bytes.
    pub size_bytes: Option<u64>,
    /// Whether the size is the CSD's.
    pub size_by_csd: bool,
    /// The classes the card claims (`C10 U3 V30 A2`), "" when none.
    pub classes: String,
    /// The card check's verdict in words (`genuine`, `FAKE: holds about 8.0 GiB`), `None`:
    /// no card check ran.
    pub check: Option<String>,
}

impl CardIdentity {
    /// `SanDisk SN64G, 59.5 GiB`: manufacturer, name, size, as far as known; the disk's
    /// name when nothing else is.
    pub fn short(&self) -> String {
        let who: Vec<&str> = [self.manufacturer.as_deref(), self.name.as_deref()]
            .into_iter()
            .flatten()
            .collect();
        let mut s = if who.is_empty() {
            self.disk.clone()
        } else {
            who.join(" ")
        };
        if let Some(b) = self.size_bytes {
            s.push_str(&format!(", {}", gib(b)));
        }
        s
    }
}

/// The run's energy: (value, ±) of the run's joules and the idle watts.
#[derive(Debug, Clone, PartialEq)]
pub struct EnergyFigures {
    pub run_j: Option<(f64, f64)>,
    /// The run's span the joules cover, s.
    pub run_s: Option<f64>,
    pub idle_w: Option<(f64, f64)>,
    /// The trace is the emulated meter's or the run is QEMU's.
    pub emulated: bool,
    /// Why there are no figures (the trace could not be aligned).
    pub why_not: Option<String>,
}

/// A run's headline (module docs). `None` and empty fields: the run has no such figure.
#[derive(Debug, Clone, PartialEq)]
pub struct Headline {
    pub emulated: bool,
    pub complete: bool,
    /// Error events of the run (a failed step, a worker's fault).
    pub failures: usize,
    /// The card's plan file was refused: nothing was measured.
    pub plan_refused: bool,
    pub sequential: Option<Sequential>,
    pub random: Option<Random>,
    pub tcp: Vec<LinkTcp>,
    pub memcpy: Option<Memcpy>,
    pub latency: Option<Latency>,
    pub card: Option<CardIdentity>,
    pub energy: Option<EnergyFigures>,
}

/// `59.5 GiB`.
fn gib(bytes: u64) -> String {
    let g = bytes as f64 / f64::from(1u32 << 30);
    if g >= 1.0 {
        format!("{g:.1} GiB")
    } else {
        size_label(bytes)
    }
}

fn median<'a>(fs: impl Iterator<Item = &'a Figure>) -> (Option<f64>, usize) {
    let v: Vec<f64> = fs.map(|f| f.value).collect();
    (Summary::of(&v).map(|s| s.median), v.len())
}

/// The kernel name of the disk the run's card is: the boot card PID 1 found (else the
/// one the image named), else the first disk with SD registers.
pub fn card_disk(r: &RunResults) -> Option<String> {
    if let Some(b) = &r.boot_card {
        return Some(b.found.clone().unwrap_or_else(|| b.nominal.clone()));
    }
    r.devices
        .iter()
        .find(|d| d.card.is_some())
        .map(|d| d.name.clone())
}

/// Whether `device` (`/dev/mmcblk0p7`) is `disk` (`mmcblk0`) or one of its partitions.
fn on_disk(device: &str, disk: &str) -> bool {
    let Some(rest) = device
        .strip_prefix("/dev/")
        .and_then(|d| d.strip_prefix(disk))
    else {
        return false;
    };
    let rest = rest.strip_prefix('p').unwrap_or(rest);
    rest.chars().all(|c| c.is_ascii_digit())
}

/// The plan's targets in the order the headline tries them: on the card first, ext4
/// before raw before the rest, each group in the plan's order.
pub fn preferred_targets(r: &RunResults) -> Vec<(&StorageTarget, bool)> {
    let disk = card_disk(r);
    let mut ts: Vec<(&StorageTarget, bool)> = r
        .plan
        .storage
        .targets
        .iter()
        .map(|t| (t, disk.as_deref().is_some_and(|d| on_disk(&t.device, d))))
        .collect();
    let rank = |t: &StorageTarget| match t.filesystem {
        Filesystem::Ext4 => 0,
        Filesystem::Raw => 1,
        _ => 2,
    };
    // A stable sort keeps the plan's order within a group.
    ts.sort_by_key(|(t, on_card)| (!on_card, rank(t)));
    ts
}

fn sequential(r: &RunResults, all: &[Figure]) -> Option<Sequential> {
    preferred_targets(r).into_iter().find_map(|(t, on_card)| {
        let of_target = || {
            all.iter()
                .filter(move |f| f.metric == Metric::Storage && f.context.target == t.label)
        };
        let block_size = of_target().map(|f| f.context.block_size).max()?;
        let at_block = || of_target().filter(move |f| f.context.block_size == block_size);
        let mode = if at_block().any(|f| f.context.mode == "direct") {
            "direct"
        } else {
            "sync"
        };
        let dir = |d: &'static str| {
            median(at_block().filter(move |f| f.context.mode == mode && f.context.direction == d))
        };
        let ((write, nw), (read, nr)) = (dir("write"), dir("read"));
        Some(Sequential {
            target: t.label.clone(),
            device: t.device.clone(),
            on_card,
            block_size,
            mode: mode.to_owned(),
            write,
            read,
            repetitions: nw.max(nr),
        })
    })
}

fn random(r: &RunResults, all: &[Figure], disk: Option<&DeviceIdentity>) -> Option<Random> {
    preferred_targets(r).into_iter().find_map(|(t, on_card)| {
        let of_target = || {
            all.iter().filter(move |f| {
                f.metric == Metric::Random
                    && f.context.target == t.label
                    && f.context.block_size == 4096
            })
        };
        let queue_depth = of_target().map(|f| f.context.param).min()?;
        let op = |d: &'static str| {
            median(
                of_target()
                    .filter(move |f| f.context.param == queue_depth && f.context.direction == d),
            )
            .0
        };
        Some(Random {
            target: t.label.clone(),
            on_card,
            queue_depth,
            read: op("read"),
            write: op("write"),
            a1: a1_verdict(r, &t.label),
            claim: on_card
                .then(|| disk.and_then(|d| d.card.as_ref()?.app_class()))
                .flatten(),
        })
    })
}

/// What a link is, by where the document lists it.
fn link_kind(r: &RunResults, link: &str) -> String {
    let n = &r.network;
    if n.links.iter().any(|l| l.function == link) {
        "USB gadget".into()
    } else if let Some(w) = n.wired.iter().find(|w| w.name == link) {
        match w.kind.as_str() {
            "usb-adapter" => "USB Ethernet adapter".into(),
            _ => "wired".into(),
        }
    } else if n.wifi.entries.iter().any(|e| e.link == link) {
        "WiFi".into()
    } else {
        String::new()
    }
}

fn tcp(r: &RunResults, all: &[Figure]) -> Vec<LinkTcp> {
    let mut out: Vec<LinkTcp> = Vec::new();
    for f in all.iter().filter(|f| f.metric == Metric::Tcp) {
        let c = &f.context;
        let i = match out.iter().position(|l| l.link == c.target) {
            Some(i) => i,
            None => {
                out.push(LinkTcp {
                    link: c.target.clone(),
                    kind: link_kind(r, &c.target),
                    board_to_host: None,
                    host_to_board: None,
                });
                out.len() - 1
            }
        };
        let slot = match c.direction.as_str() {
            "board-to-host" => &mut out[i].board_to_host,
            _ => &mut out[i].host_to_board,
        };
        if slot.is_none_or(|(v, _)| f.value > v) {
            *slot = Some((f.value, c.param));
        }
    }
    out
}

fn memcpy(all: &[Figure]) -> Option<Memcpy> {
    let find = |prefix: &str| {
        all.iter()
            .find(|f| {
                f.metric == Metric::MemoryBandwidth
                    && f.context.mode == "libc-memcpy"
                    && f.context.target.starts_with(prefix)
            })
            .map(|f| (f.value, f.context.target.clone()))
    };
    let m = Memcpy {
        one: find("cpu"),
        all: find("all"),
    };
    (m.one.is_some() || m.all.is_some()).then_some(m)
}

fn latency(r: &RunResults, all: &[Figure]) -> Option<Latency> {
    let rows = || all.iter().filter(|f| f.metric == Metric::MemoryLatency);
    rows().next()?;
    if r.emulated {
        return Some(Latency::NotUnderQemu);
    }
    let f = ["base", "huge"].into_iter().find_map(|pages| {
        rows()
            .filter(|f| f.context.mode == pages)
            .max_by_key(|f| f.context.block_size)
    })?;
    Some(Latency::Measured {
        ns: f.value,
        block_size: f.context.block_size,
        pages: f.context.mode.clone(),
        llc_bytes: r.memory.as_ref().map(|m| m.cpu.llc_bytes),
    })
}

/// The card check's verdict in a few words.
fn check_words(r: &RunResults) -> Option<String> {
    use benchboot_probe::{human, Verdict};
    let rep = &r.card_check.as_ref()?.report;
    let mut s = match &rep.verdict {
        Verdict::Genuine => "genuine".to_owned(),
        Verdict::Fake { real_bytes } => format!(
            "FAKE: claims {}, holds about {}",
            human(rep.claimed_bytes),
            human(*real_bytes)
        ),
        Verdict::IoErrors { first_at } => format!("I/O ERRORS from {}", human(*first_at)),
    };
    if rep.aborted.is_some() {
        s.push_str(", stopped early");
    }
    Some(s)
}

fn card(r: &RunResults) -> Option<CardIdentity> {
    let disk = card_disk(r).or_else(|| r.devices.first().map(|d| d.name.clone()))?;
    let dev = r.devices.iter().find(|d| d.name == disk);
    let c = dev.and_then(|d| d.card.as_ref());
    let cid = c.and_then(|c| c.cid.ok());
    let csd_size = c.and_then(|c| c.capacity_bytes());
    Some(CardIdentity {
        manufacturer: c.and_then(|c| c.manufacturer()).map(|m| m.name.to_owned()),
        name: cid
            .map(|c| c.product_name.clone())
            .or_else(|| dev.and_then(|d| d.model.clone())),
        size_bytes: csd_size.or_else(|| dev.map(|d| d.size_bytes).filter(|&b| b > 0)),
        size_by_csd: csd_size.is_some(),
        classes: c
            .and_then(|c| c.ssr.ok())
            .map(|s| s.classes_label())
            .unwrap_or_default(),
        check: check_words(r),
        disk,
    })
}

fn energy_figures(e: &Energy) -> EnergyFigures {
    let mut out = EnergyFigures {
        run_j: None,
        run_s: None,
        idle_w: None,
        emulated: e.emulated,
        why_not: None,
    };
    match &e.report {
        Ok(rep) => {
            out.idle_w = rep.idle_w.as_ref().map(|f| (f.value, f.plus_minus));
            if let Some(StepEnergy {
                figure: Ok(f),
                seconds,
                ..
            }) = &rep.run
            {
                out.run_j = Some((f.energy_j, f.uncertainty_j));
                out.run_s = Some(*seconds);
            }
        }
        Err(why) => out.why_not = Some(why.clone()),
    }
    out
}

/// The headline of `r`, with the energy of `energy` (its power trace) when given. One
/// walk of the document's figures ([`figures`]).
pub fn headline(r: &RunResults, energy: Option<&Energy>) -> Headline {
    let all = figures(r);
    let disk = card_disk(r);
    let dev = disk
        .as_deref()
        .and_then(|d| r.devices.iter().find(|x| x.name == d));
    Headline {
        emulated: r.emulated,
        complete: r.complete,
        failures: r
            .events
            .iter()
            .filter(|e| e.severity == Severity::Error)
            .count(),
        plan_refused: r.plan_error.is_some(),
        sequential: sequential(r, &all),
        random: random(r, &all, dev),
        tcp: tcp(r, &all),
        memcpy: memcpy(&all),
        latency: latency(r, &all),
        card: card(r),
        energy: energy.map(energy_figures),
    }
}

/// MiB/s, Mbit/s and the like: three significant digits, `—` for none.
fn num(v: Option<f64>) -> String {
    v.map_or("—".into(), sig)
}

/// IOPS and MB/s: whole, with thousands separators.
fn whole(v: Option<f64>) -> String {
    v.map_or("—".into(), |v| grouped(v.round().max(0.0) as u64))
}

/// `x ± u` with the decimals `u` warrants.
fn pm((x, u): (f64, f64)) -> String {
    crate::power::energy::with_pm(x, u)
}

/// " on the card" for a target on the card, else "".
fn where_(on_card: bool, card: Option<&CardIdentity>) -> &'static str {
    if on_card && card.is_some() {
        " on the card"
    } else {
        ""
    }
}

impl Headline {
    /// The verdict in words: EMULATED first for a QEMU run, then complete or not and the
    /// failures.
    pub fn verdict(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.emulated {
            out.push(EMULATED_NOTICE.to_owned());
        }
        let run = if self.plan_refused {
            "PLAN REFUSED: nothing was measured (below)".to_owned()
        } else if self.complete {
            "complete: every step of the plan ran".to_owned()
        } else {
            "INCOMPLETE: not every step of the plan ran".to_owned()
        };
        let failures = match self.failures {
            0 => "no failures".to_owned(),
            1 => "1 failure (see Warnings)".to_owned(),
            n => format!("{n} failures (see Warnings)"),
        };
        out.push(format!("Run {run}; {failures}."));
        out
    }

    /// The figure lines (label, figure, note), in the module's order.
    pub fn facts(&self) -> Vec<Fact> {
        let mut out = Vec::new();
        out.extend(self.sequential.as_ref().map(|s| self.sequential_fact(s)));
        out.extend(self.random.as_ref().map(|x| self.random_fact(x)));
        out.extend(self.tcp_facts());
        out.extend(self.memcpy.as_ref().map(|m| self.memcpy_fact(m)));
        out.extend(self.latency_fact());
        out.extend(self.card.as_ref().map(|c| self.card_fact(c)));
        out.extend(self.energy.as_ref().map(|e| self.energy_fact(e)));
        out
    }

    /// One figure line, marked EMULATED with the run.
    fn fact(&self, label: String, figure: String, note: String) -> Fact {
        Fact {
            label,
            figure,
            note,
            emulated: self.emulated,
        }
    }

    /// Sequential write / read, MiB/s, at the largest block size.
    fn sequential_fact(&self, s: &Sequential) -> Fact {
        self.fact(
            "seq. write / read".into(),
            format!("{} / {} MiB/s", num(s.write), num(s.read)),
            format!(
                "{}{}, {} blocks (largest run), {}, {}",
                s.target,
                where_(s.on_card, self.card.as_ref()),
                block_size_label(s.block_size),
                s.mode,
                match s.repetitions {
                    1 => "one repetition".to_owned(),
                    n => format!("median of {n}"),
                }
            ),
        )
    }

    /// 4 KiB random read / write IOPS with the A1 verdict in words.
    fn random_fact(&self, x: &Random) -> Fact {
        // The one rule of every output (`A1Verdict::outcome`): never judged under QEMU.
        let a1 = match x.a1.as_ref().map(|v| (v, v.outcome(self.emulated))) {
            Some((_, A1Outcome::Emulated)) => "no A1 verdict under QEMU".to_owned(),
            Some((_, A1Outcome::Pass)) => "meets A1".to_owned(),
            Some((v, A1Outcome::Fail)) => format!("below A1 ({})", a1_shortfall(v)),
            None if self.emulated => "no A1 verdict under QEMU".to_owned(),
            None => "no A1 verdict (a deciding figure is missing)".to_owned(),
        };
        let claim = match x.claim {
            Some(c) if !self.emulated => format!(", the card claims {c:?}"),
            _ => String::new(),
        };
        self.fact(
            "4 KiB random r / w".into(),
            format!("{} / {} IOPS", whole(x.read), whole(x.write)),
            format!(
                "read / write, {}{}, QD{}; {a1}{claim}",
                x.target,
                where_(x.on_card, self.card.as_ref()),
                x.queue_depth
            ),
        )
    }

    /// TCP each way per link, Mbit/s, the directions' order said on the first line.
    fn tcp_facts(&self) -> Vec<Fact> {
        self.tcp
            .iter()
            .enumerate()
            .map(|(i, l)| {
                // The directions' order is said once, on the first link's line.
                let note = match (i, l.kind.as_str()) {
                    (0, "") => "board→host / host→board, best run".to_owned(),
                    (0, kind) => format!("{kind}: board→host / host→board, best run"),
                    (_, kind) => kind.to_owned(),
                };
                self.fact(
                    format!("TCP {}", l.link),
                    format!(
                        "{} / {} Mbit/s",
                        num(l.board_to_host.map(|x| x.0)),
                        num(l.host_to_board.map(|x| x.0))
                    ),
                    note,
                )
            })
            .collect()
    }

    /// memcpy on one core and on all, MB/s.
    fn memcpy_fact(&self, m: &Memcpy) -> Fact {
        let set = |s: &str| match s.strip_prefix("all") {
            Some(n) => format!("all {n} cores"),
            None => format!("one core ({s})"),
        };
        // What the run has of one core and all cores, in that order.
        let (values, sets): (Vec<String>, Vec<String>) = [&m.one, &m.all]
            .into_iter()
            .flatten()
            .map(|(v, s)| (whole(Some(*v)), set(s)))
            .unzip();
        self.fact(
            "memcpy".into(),
            format!("{} MB/s", values.join(" / ")),
            format!("libc, {}, best sample", sets.join(" / ")),
        )
    }

    /// Memory latency past the last-level cache, ns (none under QEMU).
    fn latency_fact(&self) -> Option<Fact> {
        match &self.latency {
            Some(Latency::Measured {
                ns,
                block_size,
                pages,
                llc_bytes,
            }) => {
                let llc = llc_bytes.filter(|&l| l > 0).map_or(String::new(), |l| {
                    format!(" ({}x the {} LLC)", block_size / l, size_label(l))
                });
                let pages = if pages == "huge" { "huge" } else { "4 KiB" };
                Some(self.fact(
                    "memory latency".into(),
                    format!("{} ns", sig(*ns)),
                    format!(
                        "{} block{llc}, {pages} pages, a random read over L1",
                        block_size_label(*block_size)
                    ),
                ))
            }
            Some(Latency::NotUnderQemu) => Some(self.fact(
                "memory latency".into(),
                "—".into(),
                format!("{NO_LATENCY_UNDER_QEMU}: TCG has no caches"),
            )),
            None => None,
        }
    }

    /// The card by its registers, with the card check's verdict.
    fn card_fact(&self, c: &CardIdentity) -> Fact {
        let figure = c.short();
        let mut note = Vec::new();
        if !figure.starts_with(&c.disk) {
            note.push(c.disk.clone());
        }
        if c.size_by_csd {
            note.push("size by its CSD".into());
        } else if c.manufacturer.is_none() {
            note.push("no card registers".into());
        }
        if !c.classes.is_empty() {
            note.push(format!("claims {}", c.classes));
        }
        note.push(match &c.check {
            Some(v) => format!("card check: {v}"),
            None => "no card check in this run".into(),
        });
        self.fact("card".into(), figure, note.join("; "))
    }

    /// The run's energy, J, and the idle board's power, W.
    fn energy_fact(&self, e: &EnergyFigures) -> Fact {
        let mut f = self.fact(
            "energy".into(),
            e.run_j.map_or("—".into(), |j| format!("{} J", pm(j))),
            match (&e.why_not, e.run_s, e.idle_w) {
                (Some(why), _, _) => format!("no figures: {why}"),
                (None, s, idle) => format!(
                    "the run{}; idle {}",
                    s.map_or(String::new(), |s| format!(" ({s:.0} s, sync to sync)")),
                    idle.map_or("—".into(), |w| format!("{} W", pm(w)))
                ),
            },
        );
        f.emulated = e.emulated;
        f
    }

    /// The headline as the report's first block: the verdict as its lead (an alert for a
    /// QEMU, incomplete or refused run), then [`Headline::facts`].
    pub fn block(&self) -> Block {
        Block::Facts(Facts {
            lead: self.verdict(),
            alert: self.emulated || !self.complete || self.plan_refused,
            rows: self.facts(),
        })
    }
}

/// Which A1 floors a verdict missed, in words.
fn a1_shortfall(v: &A1Verdict) -> String {
    use benchboot_results::a1::{A1_RANDOM_READ_IOPS, A1_RANDOM_WRITE_IOPS, A1_SEQ_WRITE_BPS};
    let mut out = Vec::new();
    if v.random_read_iops < A1_RANDOM_READ_IOPS {
        out.push(format!(
            "read {} < 1,500 IOPS",
            whole(Some(v.random_read_iops))
        ));
    }
    if v.random_write_iops < A1_RANDOM_WRITE_IOPS {
        out.push(format!(
            "write {} < 500 IOPS",
            whole(Some(v.random_write_iops))
        ));
    }
    if v.seq_write_bps < A1_SEQ_WRITE_BPS {
        out.push(format!(
            "seq. write {} < 10,000 KB/s",
            whole(Some(v.seq_write_bps / 1000.0))
        ));
    }
    out.join(", ")
}

/// [`headline`]'s block: what every report opens with.
pub fn block(r: &RunResults, energy: Option<&Energy>) -> Block {
    headline(r, energy).block()
}

#[cfg(test)]
#[path = "headline/tests.rs"]
mod tests;
