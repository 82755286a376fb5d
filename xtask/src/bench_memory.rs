//! `cargo xtask bench memory`: benchboot's memory engine (`benchboot memory`) beside
//! tinymembench, the tool whose figures sbc-bench publishes, on this machine; prints the
//! medians and the ratios.
//!
//! A benchmark, not a test: it asserts nothing, it reports. Target: standard
//! memcpy, standard memset and the latency at 64 MiB (4 KiB pages and huge pages)
//! within 5 % of tinymembench's medians.
//!
//! tinymembench is built here from the source vendored in `xtask/bench/tinymembench`
//! (ssvb/tinymembench a2cf6d7, unchanged) with `driver.c`, which runs tinymembench's own
//! "standard memcpy" / "standard memset" code and buffers and its latency loop for one
//! block size. It is never shipped.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use benchboot_results::memory::{Cores, Pages};
use benchboot_results::{RunResults, Summary};

/// tinymembench's buffers (main.c `SIZE`): 32 MiB each; its latency buffer is twice that.
const BUFFER_MIB: u64 = 32;
/// The latency block compared: tinymembench's largest (2 x `SIZE`).
pub const LATENCY_BYTES: u64 = 64 << 20;

/// One run's figures of either tool: MB/s (10^6 B/s, a copy counted once) and ns per
/// read over the L1 hit.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Figures {
    pub memcpy_mb_s: f64,
    pub memset_mb_s: f64,
    pub latency_base_ns: f64,
    pub latency_huge_ns: f64,
}

/// The driver's output: ` standard memcpy ... :  9291.3 MB/s` (a spread may follow in
/// brackets) and `latency base   67108864 :  198.7 ns / 221.0 ns`.
pub fn parse_tinymembench(out: &str) -> Option<Figures> {
    let mut f = Figures::default();
    let (mut cpy, mut set, mut base, mut huge) = (false, false, false, false);
    for line in out.lines() {
        let value_after_colon = |unit: &str| -> Option<f64> {
            line.split_once(" : ")?
                .1
                .split(unit)
                .next()?
                .trim()
                .parse()
                .ok()
        };
        if line.trim_start().starts_with("standard memcpy") {
            f.memcpy_mb_s = value_after_colon("MB/s")?;
            cpy = true;
        } else if line.trim_start().starts_with("standard memset") {
            f.memset_mb_s = value_after_colon("MB/s")?;
            set = true;
        } else if let Some(rest) = line.strip_prefix("latency ") {
            let ns = value_after_colon("ns")?;
            if rest.starts_with("base") {
                (f.latency_base_ns, base) = (ns, true);
            } else if rest.starts_with("huge") {
                (f.latency_huge_ns, huge) = (ns, true);
            }
        }
    }
    (cpy && set && base && huge).then_some(f)
}

/// benchboot's figures from its results document: the best sample of libc memcpy and
/// memset on one core, and the 64 MiB latency rows over L1.
pub fn benchboot_figures(r: &RunResults) -> Option<Figures> {
    let m = r.memory.as_ref()?;
    let best = |kernel: &str| {
        m.bandwidth
            .iter()
            .find(|t| t.kernel == kernel && matches!(t.cores, Cores::One(_)))
            .and_then(|t| t.best_and_spread())
            .map(|(best, _)| best)
    };
    let latency = |huge: bool| {
        let t = m
            .latency
            .iter()
            .find(|t| matches!(t.pages, Pages::Huge) == huge)?;
        let row = t.rows.iter().find(|r| r.block_bytes == LATENCY_BYTES)?;
        t.extra_ns(row).map(|(single, _)| single)
    };
    Some(Figures {
        memcpy_mb_s: best("libc-memcpy")?,
        memset_mb_s: best("libc-memset")?,
        latency_base_ns: latency(false)?,
        latency_huge_ns: latency(true)?,
    })
}

/// Builds the tinymembench driver into `target/bench/tinymembench` with `cc -O2`, as
/// tinymembench's Makefile does.
pub fn build_tinymembench() -> Result<PathBuf> {
    let src = crate::repo_root().join("xtask/bench/tinymembench");
    let out_dir = crate::target_dir().join("bench");
    std::fs::create_dir_all(&out_dir)?;
    let bin = out_dir.join("tinymembench");
    let status = Command::new("cc")
        .current_dir(&src)
        .args(["-O2", "-Wl,-z,noexecstack", "-o"])
        .arg(&bin)
        .args([
            "driver.c",
            "util.c",
            "asm-opt.c",
            "x86-sse2.S",
            "arm-neon.S",
            "aarch64-asm.S",
            "mips-32.S",
            "-lm",
        ])
        .status()
        .context("running cc (apt-get install gcc)")?;
    if !status.success() {
        bail!("building tinymembench from {} failed", src.display());
    }
    Ok(bin)
}

fn run_tinymembench(bin: &Path) -> Result<Figures> {
    let out = Command::new(bin)
        .arg(LATENCY_BYTES.to_string())
        .output()
        .with_context(|| format!("running {}", bin.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    parse_tinymembench(&text).with_context(|| format!("unexpected tinymembench output:\n{text}"))
}

fn run_benchboot(host: &Path, json: &Path) -> Result<Figures> {
    let out = Command::new(host)
        .args([
            "memory",
            "--buffer-mib",
            &BUFFER_MIB.to_string(),
            "--no-per-core",
            "--latency-max-mib",
            &(LATENCY_BYTES >> 20).to_string(),
            "--out",
        ])
        .arg(json)
        .output()
        .context("running benchboot memory")?;
    if !out.status.success() {
        bail!(
            "benchboot memory failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let r = RunResults::from_json(&std::fs::read_to_string(json)?)?;
    benchboot_figures(&r).context("benchboot's document lacks libc memcpy/memset or 64 MiB latency")
}

/// Reads one figure of a run.
type Figure = fn(&Figures) -> f64;

fn median(v: &[f64]) -> f64 {
    Summary::of(v).map_or(0.0, |s| s.median)
}

pub fn memory(runs: u32) -> Result<()> {
    let tmb = build_tinymembench()?;
    let host = crate::qemu::build_host_tool(true)?;
    let json = crate::target_dir()
        .join("bench")
        .join("benchboot-memory.json");
    println!(
        "bench memory: {runs} runs per tool after one warm-up run, interleaved (order \
         alternating), medians; benchboot memory --buffer-mib {BUFFER_MIB} --no-per-core \
         against tinymembench a2cf6d7 (its own memcpy/memset and latency code)"
    );
    let (mut bb, mut tm) = (Vec::new(), Vec::new());
    for run_no in 0..=runs {
        let (b, t) = if run_no % 2 == 0 {
            let b = run_benchboot(&host, &json)?;
            (b, run_tinymembench(&tmb)?)
        } else {
            let t = run_tinymembench(&tmb)?;
            (run_benchboot(&host, &json)?, t)
        };
        println!(
            "run {run_no}{}: benchboot {b:?}",
            if run_no == 0 { " (warm-up)" } else { "" }
        );
        println!("run {run_no}: tinymembench {t:?}");
        if run_no > 0 {
            bb.push(b);
            tm.push(t);
        }
    }
    println!(
        "{:<31} {:>12} {:>12} {:>8}  {:>11}  {:>12}",
        "figure", "benchboot", "tinymembench", "bb/tmb", "bb/tmb runs", "bb<tmb sign"
    );
    let rows: [(&str, Figure); 4] = [
        ("standard memcpy, MB/s", |f| f.memcpy_mb_s),
        ("standard memset, MB/s", |f| f.memset_mb_s),
        ("latency 64 MiB 4 KiB pages, ns", |f| f.latency_base_ns),
        ("latency 64 MiB huge pages, ns", |f| f.latency_huge_ns),
    ];
    for (name, get) in rows {
        let bv: Vec<f64> = bb.iter().map(get).collect();
        let tv: Vec<f64> = tm.iter().map(get).collect();
        let (b, t) = (median(&bv), median(&tv));
        println!(
            "{name:<31} {b:>12.1} {t:>12.1} {:>8.3}  {:>11}  {:>12}",
            b / t,
            crate::bench::ratio_range(&bv, &tv),
            crate::bench::sign_text(&bv, &tv)
        );
    }
    println!(
        "sign: in how many runs benchboot's figure was the lower, and the sign test's \
         two-sided p; p < 0.05 is a gap of method, not of this machine's noise"
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_driver_output() {
        let out = " standard memcpy                                      :   9291.3 MB/s (0.4%)\n \
                   standard memset                                      :  26131.0 MB/s\n\
                   latency base   67108864 :  201.3 ns          /   230.1 ns \n\
                   latency huge   67108864 :  158.3 ns          /   170.0 ns \n";
        assert_eq!(
            parse_tinymembench(out),
            Some(Figures {
                memcpy_mb_s: 9291.3,
                memset_mb_s: 26131.0,
                latency_base_ns: 201.3,
                latency_huge_ns: 158.3,
            })
        );
        assert_eq!(parse_tinymembench(" standard memcpy : 1 MB/s\n"), None);
    }
}
