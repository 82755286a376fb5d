//! `cargo xtask bench storage`: benchboot's storage engine, `dd` and `fio` on the same
//! file of the same disk, same block sizes and modes; prints the medians and the ratios.
//!
//! A benchmark, not a test: it asserts nothing, it reports. Targets (issue 3): benchboot
//! at 0.98 x the reference or better for blocks of 4 KiB and up, and a per-call cost at
//! 8 B within 10 % of dd's.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use benchboot_plan::Mode;
use benchboot_results::{mib_per_s, Direction, RunResults, Summary};

/// Block sizes the bench compares (8 B for per-call overhead, then 4 KiB and up).
pub const BLOCK_SIZES: [u64; 5] = [8, 4096, 65536, 1 << 20, 4 << 20];

/// Bytes per cell: 8 MiB at 8 B (a million calls), else `big`.
fn cell_bytes(bs: u64, big: u64) -> u64 {
    if bs < 4096 {
        8 << 20
    } else {
        big
    }
}

/// Parses GNU dd's last stderr line, e.g.
/// `134217728 bytes (134 MB, 128 MiB) copied, 0.152 s, 882 MB/s` → (bytes, seconds).
pub fn parse_dd(stderr: &str) -> Option<(u64, f64)> {
    let line = stderr.lines().rev().find(|l| l.contains(" copied, "))?;
    let bytes = line.split_whitespace().next()?.parse().ok()?;
    let secs = line
        .split(" copied, ")
        .nth(1)?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some((bytes, secs))
}

/// From fio's `--output-format=json`: bytes and runtime (ms) of the first job's
/// `read` or `write` section.
pub fn parse_fio(json: &str, dir: Direction) -> Option<(u64, u64)> {
    let v: serde_json::Value = serde_json::from_str(json).ok()?;
    let sec = &v["jobs"][0][match dir {
        Direction::Write => "write",
        Direction::Read => "read",
    }];
    Some((sec["io_bytes"].as_u64()?, sec["runtime"].as_u64()?))
}

/// Runs a command, after `sync(1)` so no other tool's dirty pages are written back
/// inside its timed region.
fn run(cmd: &mut Command) -> Result<std::process::Output> {
    Command::new("sync").status().context("running sync")?;
    let out = cmd.output().with_context(|| format!("running {cmd:?}"))?;
    if !out.status.success() {
        bail!("{cmd:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    Ok(out)
}

/// MiB/s of one dd pass.
fn dd(file: &Path, bs: u64, bytes: u64, mode: Mode, dir: Direction) -> Result<f64> {
    let count = (bytes / bs).to_string();
    let bs_arg = format!("bs={bs}");
    let mut c = Command::new("dd");
    match dir {
        Direction::Write => {
            c.args([
                "if=/dev/zero",
                &format!("of={}", file.display()),
                &bs_arg,
                &format!("count={count}"),
                "conv=fsync",
            ]);
            if mode == Mode::Direct {
                c.arg("oflag=direct");
            }
        }
        Direction::Read => {
            // GNU dd: iflag=nocache with count=0 drops the file's pages (dd(1)).
            run(Command::new("dd").args([
                &format!("if={}", file.display()),
                "iflag=nocache",
                "count=0",
            ]))?;
            c.args([&format!("if={}", file.display()), "of=/dev/null", &bs_arg]);
            if mode == Mode::Direct {
                c.arg("iflag=direct");
            }
        }
    }
    let out = run(&mut c)?;
    let (b, s) = parse_dd(&String::from_utf8_lossy(&out.stderr)).context("unexpected dd output")?;
    Ok(b as f64 / (1 << 20) as f64 / s)
}

/// MiB/s of one fio pass (psync, one job; `end_fsync` on writes; reads invalidate the
/// file's cache first, fio's default).
fn fio(file: &Path, bs: u64, bytes: u64, mode: Mode, dir: Direction) -> Result<f64> {
    let rw = match dir {
        Direction::Write => "write",
        Direction::Read => "read",
    };
    let out = run(Command::new("fio").args([
        "--name=bench",
        &format!("--filename={}", file.display()),
        &format!("--rw={rw}"),
        &format!("--bs={bs}"),
        &format!("--size={bytes}"),
        "--ioengine=psync",
        &format!("--direct={}", u8::from(mode == Mode::Direct)),
        "--end_fsync=1",
        "--invalidate=1",
        "--output-format=json",
    ]))?;
    let (b, ms) =
        parse_fio(&String::from_utf8_lossy(&out.stdout), dir).context("unexpected fio output")?;
    Ok(mib_per_s(b, ms.max(1) * 1_000_000))
}

/// One benchboot write + read pass at `bs`: (direction, MiB/s) pairs.
fn benchboot(
    host: &Path,
    dir: &Path,
    bs: u64,
    mode: Mode,
    bytes: u64,
) -> Result<Vec<(Direction, f64)>> {
    let json = dir.join("benchboot.json");
    run(Command::new(host).args([
        "storage",
        "--path",
        &dir.display().to_string(),
        "--block-sizes",
        &bs.to_string(),
        "--modes",
        mode.name(),
        "--byte-cap-mib",
        &(bytes >> 20).to_string(),
        "--time-cap-s",
        "600",
        "--repetitions",
        "1",
        "--random-s",
        "0",
        "--out",
        &json.display().to_string(),
    ]))?;
    let r = RunResults::from_json(&std::fs::read_to_string(&json)?)?;
    Ok(r.storage
        .iter()
        .map(|m| (m.direction, mib_per_s(m.bytes, m.nanos)))
        .collect())
}

fn median(v: &[f64]) -> f64 {
    Summary::of(v).map_or(0.0, |s| s.median)
}

pub fn storage(dir: Option<PathBuf>, runs: u32) -> Result<()> {
    let dir = dir.unwrap_or_else(|| crate::target_dir().join("bench"));
    std::fs::create_dir_all(&dir)?;
    let file = dir.join("reference.dat");
    let host = crate::qemu::build_host_tool(true)?;
    let big: u64 = 256 << 20;
    println!(
        "bench: {runs} runs per tool and cell after one warm-up run, interleaved, median; dir {}",
        dir.display()
    );
    println!(
        "{:>7} {:>6} {:>5} {:>11} {:>11} {:>11} {:>8} {:>8}",
        "block", "mode", "dir", "benchboot", "dd", "fio", "bb/dd", "bb/fio"
    );
    for mode in [Mode::Sync, Mode::Direct] {
        for bs in BLOCK_SIZES {
            if mode == Mode::Direct && bs < 4096 {
                continue; // O_DIRECT impossible below the logical block size
            }
            let bytes = cell_bytes(bs, big);
            // Interleave the tools run by run so drifts of a shared disk hit all three.
            let mut bb = [Vec::new(), Vec::new()];
            let mut dds = [Vec::new(), Vec::new()];
            let mut fios = [Vec::new(), Vec::new()];
            // Run 0 is an untimed warm-up of every tool (allocator, journal and cache
            // state after the previous cell), as fio's own ramp_time does.
            for run_no in 0..=runs {
                let keep = run_no > 0;
                for r in benchboot(&host, &dir, bs, mode, bytes)? {
                    if keep {
                        bb[usize::from(r.0 == Direction::Read)].push(r.1);
                    }
                }
                for (k, d) in [Direction::Write, Direction::Read].into_iter().enumerate() {
                    if d == Direction::Read {
                        dd(&file, bs.max(4096), bytes, Mode::Sync, Direction::Write)?;
                        // the file to read
                    }
                    let (x, f) = (
                        dd(&file, bs, bytes, mode, d)?,
                        fio(&file, bs, bytes, mode, d)?,
                    );
                    if keep {
                        dds[k].push(x);
                        fios[k].push(f);
                    }
                }
            }
            for (k, d) in [Direction::Write, Direction::Read].into_iter().enumerate() {
                let (bb, dds, fios) = (&bb[k], &dds[k], &fios[k]);
                let (b, x, f) = (median(bb), median(dds), median(fios));
                println!(
                    "{:>7} {:>6} {:>5} {:>11.2} {:>11.2} {:>11.2} {:>8.3} {:>8.3}",
                    bs,
                    mode.name(),
                    if d == Direction::Write {
                        "write"
                    } else {
                        "read"
                    },
                    b,
                    x,
                    f,
                    b / x,
                    b / f
                );
                if bs == 8 {
                    // Per-call cost: ns per 8-byte call.
                    let ns = |mibs: f64| 8.0 / (mibs * (1 << 20) as f64) * 1e9;
                    println!(
                        "        per 8 B block: benchboot {:.0} ns, dd {:.0} ns ({:+.1} %; dd's write block also costs a read(2) of /dev/zero)",
                        ns(b),
                        ns(x),
                        (ns(b) / ns(x) - 1.0) * 100.0
                    );
                }
            }
        }
    }
    let _ = std::fs::remove_file(&file);
    println!("MiB/s = 2^20 bytes/s. Writes include fsync (dd conv=fsync, fio end_fsync=1); reads start with the file's pages dropped.");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_gnu_dd() {
        let err = "16384+0 records in\n16384+0 records out\n134217728 bytes (134 MB, 128 MiB) copied, 0.152023 s, 883 MB/s\n";
        assert_eq!(parse_dd(err), Some((134_217_728, 0.152023)));
        assert_eq!(parse_dd("dd: error"), None);
    }

    #[test]
    fn parses_fio_json() {
        let j = r#"{"jobs":[{"read":{"io_bytes":0,"runtime":0},"write":{"io_bytes":1048576,"runtime":250}}]}"#;
        assert_eq!(parse_fio(j, Direction::Write), Some((1_048_576, 250)));
        assert_eq!(parse_fio("{}", Direction::Read), None);
    }
}
