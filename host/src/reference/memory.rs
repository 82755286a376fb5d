//! The memory reference (`memory-sbc-bench.csv`): tinymembench figures from sbc-bench
//! result files, one row per published run with its board, SoC, clock, kernel and
//! userland. Each row becomes an entry of its own in `compare` ([`rows_for`]): the same
//! board gives different figures on different kernels and clocks, so a row is never
//! averaged with another.
//!
//! A figure cell holds a number, optionally followed by the other method it was taken
//! with in parentheses (`181 (lmbench bw_mem bcopy 16mb)`): compared, with that caveat.

use anyhow::{bail, Context as _, Result};
use serde::Deserialize;

use crate::figure::{Key, Stat};

/// The CSV, compiled in.
pub const MEMORY_CSV: &str = include_str!("../../reference/memory-sbc-bench.csv");

/// The block sizes of the latency columns, bytes: 64 MiB and 1 MiB.
pub const LATENCY_BLOCKS: [u64; 2] = [64 << 20, 1 << 20];

/// One published figure and, when it was not taken with tinymembench, how it was.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub value: f64,
    pub other_method: Option<String>,
}

/// One published run: figures in MB/s (10^6 B/s) and ns over L1.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryRow {
    /// The board's name as benchboot spells it (`rpi-zero-w`).
    pub board: String,
    pub soc: String,
    /// As published (`1000`, `1000 (overclocked)`), MHz.
    pub clock_mhz: String,
    pub kernel: String,
    /// `armhf`, `arm64`, ...; empty when the source does not say.
    pub userland: String,
    /// tinymembench's `standard memcpy`, MB/s.
    pub memcpy: Option<Figure>,
    /// tinymembench's `standard memset`, MB/s.
    pub memset: Option<Figure>,
    /// Single random read over L1 at a 64 MiB block, ns.
    pub latency_64mib: Option<Figure>,
    /// Single random read over L1 at a 1 MiB block, ns.
    pub latency_1mib: Option<Figure>,
    pub tool: String,
    pub source: String,
}

#[derive(Deserialize)]
struct RawRow {
    board: String,
    soc: String,
    clock_mhz: String,
    kernel: String,
    userland: String,
    #[serde(rename = "memcpy_MBps")]
    memcpy: String,
    #[serde(rename = "memset_MBps")]
    memset: String,
    #[serde(rename = "latency_64MiB_ns")]
    latency_64mib: String,
    #[serde(rename = "latency_1MiB_ns")]
    latency_1mib: String,
    tool: String,
    source: String,
}

/// `426` → 426; `181 (lmbench bw_mem bcopy 16mb)` → 181 with that method; empty →
/// `None`.
///
/// # Errors
/// A cell that does not start with a number.
pub fn parse_figure(cell: &str) -> Result<Option<Figure>> {
    let cell = cell.trim();
    if cell.is_empty() {
        return Ok(None);
    }
    let (number, rest) = cell.split_once(' ').unwrap_or((cell, ""));
    let value: f64 = number
        .parse()
        .with_context(|| format!("reference memory CSV: `{cell}` does not start with a number"))?;
    let rest = rest
        .trim()
        .trim_start_matches('(')
        .trim_end_matches(')')
        .trim();
    Ok(Some(Figure {
        value,
        other_method: (!rest.is_empty()).then(|| rest.to_owned()),
    }))
}

/// Every row of `csv_text`, in file order.
///
/// # Errors
/// A missing column or a figure that is not a number (a test reads the shipped file).
pub fn parse_rows(csv_text: &str) -> Result<Vec<MemoryRow>> {
    let mut out = Vec::new();
    for (i, raw) in csv::Reader::from_reader(csv_text.as_bytes())
        .deserialize::<RawRow>()
        .enumerate()
    {
        let raw = raw.with_context(|| format!("reference memory CSV: row {}", i + 1))?;
        out.push(MemoryRow {
            memcpy: parse_figure(&raw.memcpy)?,
            memset: parse_figure(&raw.memset)?,
            latency_64mib: parse_figure(&raw.latency_64mib)?,
            latency_1mib: parse_figure(&raw.latency_1mib)?,
            board: raw.board,
            soc: raw.soc,
            clock_mhz: raw.clock_mhz,
            kernel: raw.kernel,
            userland: raw.userland,
            tool: raw.tool,
            source: raw.source,
        });
    }
    if out.is_empty() {
        bail!("reference memory CSV: no rows");
    }
    Ok(out)
}

impl MemoryRow {
    /// A short id from the source: `3Njz` for `... results/3Njz.txt ...`, else
    /// `row-<n>` (`n` 1-based).
    pub fn id(&self, n: usize) -> String {
        self.source
            .split_whitespace()
            .find_map(|w| w.strip_prefix("results/")?.strip_suffix(".txt"))
            .map_or_else(|| format!("row-{n}"), str::to_owned)
    }

    /// What the run was: SoC, clock, kernel, userland, tool and source.
    pub fn description(&self) -> String {
        format!(
            "{} at {} MHz, kernel {}, {}; {}; {}",
            self.soc,
            self.clock_mhz,
            self.kernel,
            if self.userland.is_empty() {
                "userland not given".to_owned()
            } else {
                format!("{} userland", self.userland)
            },
            self.tool,
            self.source
        )
    }

    /// The row's figures as compare cells, each with its other method when there is one:
    /// memcpy and memset beside libc's on the first CPU, the latency columns beside the
    /// base-pages table's single random read.
    pub fn figures(&self) -> Vec<(Key, Stat, Option<String>)> {
        let cells = [
            (
                Key::memory_bandwidth("libc-memcpy", "standard memcpy", ""),
                &self.memcpy,
            ),
            (
                Key::memory_bandwidth("libc-memset", "standard memset", ""),
                &self.memset,
            ),
            (
                Key::memory_latency("base", "single", LATENCY_BLOCKS[0]),
                &self.latency_64mib,
            ),
            (
                Key::memory_latency("base", "single", LATENCY_BLOCKS[1]),
                &self.latency_1mib,
            ),
        ];
        cells
            .into_iter()
            .filter_map(|(k, f)| {
                let f = f.as_ref()?;
                Some((k, Stat::single(f.value), f.other_method.clone()))
            })
            .collect()
    }
}

/// The rows for any of `boards`, with their 1-based row numbers, in file order.
///
/// # Errors
/// None of `boards` has a row: the message lists the boards that have.
pub fn rows_for(csv_text: &str, boards: &[&str]) -> Result<Vec<(usize, MemoryRow)>> {
    let rows = parse_rows(csv_text)?;
    let mut known: Vec<&str> = Vec::new();
    for r in &rows {
        if !known.contains(&r.board.as_str()) {
            known.push(&r.board);
        }
    }
    let known = known.join(", ");
    let out: Vec<(usize, MemoryRow)> = rows
        .iter()
        .enumerate()
        .filter(|(_, r)| boards.contains(&r.board.as_str()))
        .map(|(i, r)| (i + 1, r.clone()))
        .collect();
    if out.is_empty() {
        bail!(
            "the memory reference has no row for {}; it has rows for {known}",
            boards.join(", ")
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_csv_parses_with_its_other_methods() {
        let rows = parse_rows(MEMORY_CSV).unwrap();
        assert_eq!(rows.len(), 13);
        let zero = &rows[0];
        assert_eq!(
            (
                zero.board.as_str(),
                zero.clock_mhz.as_str(),
                zero.kernel.as_str()
            ),
            ("rpi-zero-w", "1000", "5.10")
        );
        assert_eq!(zero.memcpy.as_ref().unwrap().value, 426.0);
        assert_eq!(zero.latency_64mib.as_ref().unwrap().value, 284.0);
        assert_eq!(zero.id(1), "3Njz");
        assert_eq!(rows[1].latency_64mib, None);
        let bbb = rows.iter().find(|r| r.board == "beaglebone-black").unwrap();
        assert_eq!(
            bbb.memcpy,
            Some(Figure {
                value: 181.0,
                other_method: Some("lmbench bw_mem bcopy 16mb".into())
            })
        );
        assert_eq!(bbb.id(13), "row-13");
        assert!(
            zero.description()
                .contains("BCM2835 at 1000 MHz, kernel 5.10, armhf userland"),
            "{}",
            zero.description()
        );
    }

    #[test]
    fn rows_for_a_board_or_the_boards_there_are() {
        let zero = rows_for(MEMORY_CSV, &["rpi-zero-w"]).unwrap();
        assert_eq!(zero.iter().map(|(n, _)| *n).collect::<Vec<_>>(), [1, 2]);
        let e = rows_for(MEMORY_CSV, &["host"]).unwrap_err().to_string();
        assert!(e.contains("no row for host") && e.contains("rpi-4b"), "{e}");
        assert!(parse_figure("12 MB")
            .unwrap()
            .unwrap()
            .other_method
            .is_some());
        assert!(parse_figure("fast").is_err());
    }
}
