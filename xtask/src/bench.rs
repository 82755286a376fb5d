//! `cargo xtask bench storage`: benchboot's storage engine, `dd` and `fio` on the same
//! disk, same block sizes and modes; prints the medians and the ratios.
//!
//! A benchmark, not a test: it asserts nothing, it reports. Targets: benchboot
//! at 0.98 x the reference or better for blocks of 4 KiB and up, and a per-call cost at
//! 8 B within 10 % of dd's.
//!
//! Every timed pass starts from the same state ([`steps`]): no bench file left by an
//! earlier pass (each tool creates its file and allocates its blocks inside its timed
//! region; nobody overwrites blocks another tool allocated, nobody gets a preallocated
//! file), nothing dirty (`sync`), and the page cache the earlier files held freed just
//! before the pass. The tool order rotates run by run. Without this, dd (`O_TRUNC` of
//! its own file) and fio (`invalidate=1` of its own file) each wrote into page-cache
//! memory freed a moment before, while benchboot wrote a new file beside the cached
//! reference file and took its 1 MiB folios from long-free memory; on a VM whose
//! balloon reports free memory to the hypervisor (virtio-balloon free page reporting)
//! that memory has to be faulted back in inside the timed write: 0.2 x dd.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use benchboot_plan::Mode;
use benchboot_results::{mib_per_s, Direction, RunResults, Summary};

/// Block sizes the bench compares (8 B for per-call overhead, then 4 KiB and up).
pub const BLOCK_SIZES: [u64; 5] = [8, 4096, 65536, 1 << 20, 4 << 20];

/// The file dd and fio write and read.
const REFERENCE_FILE: &str = "reference.dat";
/// The file benchboot's sweep writes and reads (`benchboot_storage::sweep::BENCH_FILE`).
const BENCHBOOT_FILE: &str = "benchboot.dat";

/// A tool under comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    Benchboot,
    Dd,
    Fio,
}

/// What the harness does, in order, in one run of one cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Remove every bench file, then `sync(1)`: the next pass creates its file, nothing
    /// is dirty, and the page cache the earlier files held is freed now, for every tool
    /// alike.
    Fresh,
    /// dd writes the reference file that the next read pass reads (untimed).
    Prepare,
    /// A timed pass. benchboot's write pass is followed, in the same process and after
    /// dropping its file's pages, by its read pass.
    Timed(Tool, Direction),
}

/// The steps of run `run_no` of a cell: every write pass starts from [`Step::Fresh`],
/// every dd/fio read pass from a fresh, freshly written reference file; the tool order
/// rotates by one each run so no tool always follows the same one.
pub fn steps(run_no: u32) -> Vec<Step> {
    let mut tools = [Tool::Benchboot, Tool::Dd, Tool::Fio];
    let n = tools.len();
    tools.rotate_left(run_no as usize % n);
    let mut out = Vec::new();
    for tool in tools {
        out.extend([Step::Fresh, Step::Timed(tool, Direction::Write)]);
        if tool != Tool::Benchboot {
            out.extend([
                Step::Fresh,
                Step::Prepare,
                Step::Timed(tool, Direction::Read),
            ]);
        }
    }
    out
}

/// [`Step::Fresh`]: removes the bench files in `dir`, then `sync(1)`.
fn fresh(dir: &Path) -> Result<()> {
    for name in [REFERENCE_FILE, BENCHBOOT_FILE] {
        let path = dir.join(name);
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(e).with_context(|| format!("removing {}", path.display()));
            }
            _ => {}
        }
    }
    Command::new("sync").status().context("running sync")?;
    Ok(())
}

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
    Ok(benchboot_results::summary::mib_per_s(b, (s * 1e9) as u64))
}

/// MiB/s of one fio pass (psync, one job; `end_fsync` on writes; reads invalidate the
/// file's cache first, fio's default). `fallocate=none`: like dd and benchboot, fio
/// allocates blocks as it writes (its default lays a new file out with `fallocate(2)`
/// before the timed region).
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
        "--fallocate=none",
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

/// The stamps' cost per 4 MiB block from the optimised bench
/// `crates/storage/benches/stamp.rs` (xtask itself is unoptimised): ns (alone, stamped,
/// plain) as it prints them.
fn stamp_cost_ns() -> Result<(u64, u64, u64)> {
    let out = run(Command::new(env!("CARGO"))
        .current_dir(crate::repo_root())
        .args(["bench", "-q", "-p", "benchboot-storage", "--bench", "stamp"]))?;
    let text = String::from_utf8_lossy(&out.stdout);
    parse_stamp(&text).with_context(|| format!("unexpected stamp bench output: {text}"))
}

/// `stamp 4MiB: alone_ns=25929 stamped_ns=335490 plain_ns=310383` -> the three numbers.
pub fn parse_stamp(out: &str) -> Option<(u64, u64, u64)> {
    let line = out.lines().find_map(|l| l.strip_prefix("stamp 4MiB: "))?;
    let mut v = line
        .split_whitespace()
        .map(|kv| kv.split_once('=')?.1.parse().ok());
    Some((v.next()??, v.next()??, v.next()??))
}

/// The guest's free page reporting (virtio-balloon, `page_reporting_order`), when the
/// kernel has it: memory freed for a while goes back to the host, and a write whose
/// page cache lands on it faults it back inside the timed region (any tool: 0.2 x).
pub(crate) fn page_reporting() -> Option<String> {
    let order =
        std::fs::read_to_string("/sys/module/page_reporting/parameters/page_reporting_order")
            .ok()?;
    let order: u32 = order.trim().parse().ok()?;
    Some(if order > 10 {
        format!("free page reporting stopped (page_reporting_order {order})")
    } else {
        format!(
            "free page reporting ON (page_reporting_order {order}): a pass may fault its page \
             cache back from the host; `echo 11 > /sys/module/page_reporting/parameters/\
             page_reporting_order` and touching the free memory once steadies the figures"
        )
    })
}

/// The 1, 5 and 15 minute load averages (`/proc/loadavg`).
pub(crate) fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The lowest and highest of the run-by-run ratios `a[i] / b[i]` (the tools ran
/// interleaved, so run `i` of each saw the same state of the disk): `0.81-1.22`. A cell
/// whose range spans 1 is a tie this machine cannot split.
pub fn ratio_range(a: &[f64], b: &[f64]) -> String {
    let ratios: Vec<f64> = a.iter().zip(b).map(|(x, y)| x / y).collect();
    Summary::of(&ratios).map_or_else(|| "-".into(), |s| format!("{:.2}-{:.2}", s.min, s.max))
}

fn median(v: &[f64]) -> f64 {
    Summary::of(v).map_or(0.0, |s| s.median)
}

/// The paired sign test of `a` against `b` (run `i` of each met the same machine
/// state): how many of the `n` untied pairs have `a[i] < b[i]`, and the exact two-sided
/// binomial p of that count under "neither tool is faster" (p = 0.5 per pair; Conover,
/// *Practical Nonparametric Statistics*, 3rd ed., 3.4). A gap that keeps its sign in 8
/// of 9 runs gives p = 0.039: a difference of method; 7 of 9 (p = 0.18) is noise this
/// many runs cannot split.
pub fn sign_test(a: &[f64], b: &[f64]) -> (usize, usize, f64) {
    let pairs: Vec<(f64, f64)> = a
        .iter()
        .zip(b)
        .map(|(x, y)| (*x, *y))
        .filter(|(x, y)| x != y)
        .collect();
    let n = pairs.len();
    let below = pairs.iter().filter(|(x, y)| x < y).count();
    let k = below.min(n - below);
    // P(X <= k) for X ~ Binomial(n, 1/2), doubled, at most 1.
    let mut c = 1.0f64; // C(n, 0)
    let mut tail = 0.0;
    for i in 0..=k {
        if i > 0 {
            c = c * (n + 1 - i) as f64 / i as f64;
        }
        tail += c;
    }
    let p = (2.0 * tail / 2f64.powi(n as i32)).min(1.0);
    (below, n, p)
}

/// [`sign_test`] as a column: `2/9 p=0.18` (benchboot below the other tool in 2 of 9
/// runs); `-` without pairs.
pub fn sign_text(a: &[f64], b: &[f64]) -> String {
    match sign_test(a, b) {
        (_, 0, _) => "-".into(),
        (below, n, p) => format!("{below}/{n} p={p:.2}"),
    }
}

pub fn storage(dir: Option<PathBuf>, runs: u32) -> Result<()> {
    let dir = dir.unwrap_or_else(|| crate::target_dir().join("bench"));
    std::fs::create_dir_all(&dir)?;
    let file = dir.join(REFERENCE_FILE);
    let host = crate::qemu::build_host_tool(true)?;
    let big: u64 = 256 << 20;
    print_storage_preamble(&dir, runs)?;
    for mode in [Mode::Sync, Mode::Direct] {
        for bs in BLOCK_SIZES {
            if mode == Mode::Direct && bs < 4096 {
                continue; // O_DIRECT impossible below the logical block size
            }
            let cell = storage_cell(&host, &dir, &file, bs, mode, cell_bytes(bs, big), runs)?;
            print_storage_cell(bs, mode, &cell);
        }
    }
    fresh(&dir)?;
    println!(
        "load average at the end {} (other processes on the CPUs make the small direct \
         cells wander)",
        load_average()
    );
    println!("MiB/s = 2^20 bytes/s. Writes include fsync (dd conv=fsync, fio end_fsync=1); reads start with the file's pages dropped.");
    println!(
        "sign: in how many runs benchboot was the slower, and the sign test's two-sided p; \
         p < 0.05 is a gap of method, not of this machine's noise"
    );
    Ok(())
}

/// One cell's timed runs, MiB/s per run: `[write, read]` of benchboot, dd and fio.
struct StorageCell {
    bb: [Vec<f64>; 2],
    dd: [Vec<f64>; 2],
    fio: [Vec<f64>; 2],
}

/// The storage bench's header: method, machine, the stamps' cost, the table's columns.
fn print_storage_preamble(dir: &Path, runs: u32) -> Result<()> {
    println!(
        "bench: {runs} runs per tool and cell after one warm-up run, interleaved (order rotating), \
         every pass from no file and nothing dirty, median; dir {}",
        dir.display()
    );
    println!(
        "machine: {} CPUs, Linux {}, load average {}",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .unwrap_or_default()
            .trim(),
        load_average()
    );
    if let Some(r) = page_reporting() {
        println!("memory: {r}");
    }
    let (alone, stamped, plain) = stamp_cost_ns()?;
    let block_ns = 4.0 / 2000.0 * 1e9;
    println!(
        "stamps (16 B per 512 B sector, inside benchboot's timed write loop; cargo bench -p \
         benchboot-storage --bench stamp, medians): {:.1} us per 4 MiB block alone; a loop \
         copying each block into a 64 MiB ring takes {:.1} us per block stamped, {:.1} us \
         plain: +{:.1} us, {:.2} % of a 4 MiB block's time at 2000 MiB/s",
        alone as f64 / 1e3,
        stamped as f64 / 1e3,
        plain as f64 / 1e3,
        stamped.saturating_sub(plain) as f64 / 1e3,
        stamped.saturating_sub(plain) as f64 / block_ns * 100.0
    );
    println!(
        "{:>7} {:>6} {:>5} {:>11} {:>11} {:>11} {:>8} {:>8}  {:>11} {:>11}  {:>12} {:>12}",
        "block",
        "mode",
        "dir",
        "benchboot",
        "dd",
        "fio",
        "bb/dd",
        "bb/fio",
        "bb/dd runs",
        "bb/fio runs",
        "bb<dd sign",
        "bb<fio sign"
    );
    Ok(())
}

/// Runs one cell (block size `bs` bytes, `mode`, `bytes` per pass) `runs` times after an
/// untimed warm-up, the three tools interleaved run by run so drifts of a shared disk
/// hit all three.
fn storage_cell(
    host: &Path,
    dir: &Path,
    file: &Path,
    bs: u64,
    mode: Mode,
    bytes: u64,
    runs: u32,
) -> Result<StorageCell> {
    let mut cell = StorageCell {
        bb: [Vec::new(), Vec::new()],
        dd: [Vec::new(), Vec::new()],
        fio: [Vec::new(), Vec::new()],
    };
    let k = |d: Direction| usize::from(d == Direction::Read);
    // Run 0 is an untimed warm-up of every tool (allocator, journal and cache state
    // after the previous cell), as fio's own ramp_time does.
    for run_no in 0..=runs {
        let keep = run_no > 0;
        for step in steps(run_no) {
            match step {
                Step::Fresh => fresh(dir)?,
                Step::Prepare => {
                    dd(file, bs.max(4096), bytes, Mode::Sync, Direction::Write)?;
                }
                Step::Timed(Tool::Benchboot, _) => {
                    for (d, v) in benchboot(host, dir, bs, mode, bytes)? {
                        if keep {
                            cell.bb[k(d)].push(v);
                        }
                    }
                }
                Step::Timed(Tool::Dd, d) => {
                    let v = dd(file, bs, bytes, mode, d)?;
                    if keep {
                        cell.dd[k(d)].push(v);
                    }
                }
                Step::Timed(Tool::Fio, d) => {
                    let v = fio(file, bs, bytes, mode, d)?;
                    if keep {
                        cell.fio[k(d)].push(v);
                    }
                }
            }
        }
    }
    Ok(cell)
}

/// One cell's two rows (write, read): medians, ratios, their range over runs and the
/// sign test; at 8 B also the per-call cost in ns.
fn print_storage_cell(bs: u64, mode: Mode, cell: &StorageCell) {
    for (k, d) in [Direction::Write, Direction::Read].into_iter().enumerate() {
        let (bb, dds, fios) = (&cell.bb[k], &cell.dd[k], &cell.fio[k]);
        let (b, x, f) = (median(bb), median(dds), median(fios));
        println!(
            "{:>7} {:>6} {:>5} {:>11.2} {:>11.2} {:>11.2} {:>8.3} {:>8.3}  {:>11} {:>11}  {:>12} {:>12}",
            bs,
            mode.name(),
            if d == Direction::Write { "write" } else { "read" },
            b,
            x,
            f,
            b / x,
            b / f,
            ratio_range(bb, dds),
            ratio_range(bb, fios),
            sign_text(bb, dds),
            sign_text(bb, fios)
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
    fn every_pass_starts_fresh_and_the_order_rotates() {
        for run_no in 0..6 {
            let s = steps(run_no);
            let timed: Vec<_> = s
                .iter()
                .enumerate()
                .filter_map(|(i, st)| match st {
                    Step::Timed(t, d) => Some((i, *t, *d)),
                    _ => None,
                })
                .collect();
            assert_eq!(timed.len(), 5, "{s:?}"); // benchboot (write + read), dd and fio x 2
            for (i, tool, dir) in timed {
                // A write pass right after Fresh: no file of an earlier pass, nothing
                // dirty, its cache freed; a read pass reads a file written just before.
                let before = match dir {
                    Direction::Write => &s[i - 1..i],
                    Direction::Read => &s[i - 2..i],
                };
                let want: &[Step] = match dir {
                    Direction::Write => &[Step::Fresh],
                    Direction::Read => &[Step::Fresh, Step::Prepare],
                };
                assert_eq!(before, want, "{tool:?} {dir:?} in run {run_no}: {s:?}");
            }
        }
        let first = |r| match steps(r)[1] {
            Step::Timed(t, _) => t,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            [first(0), first(1), first(2), first(3)],
            [Tool::Benchboot, Tool::Dd, Tool::Fio, Tool::Benchboot]
        );
    }

    /// Exact binomial tails: 9 of 9 one way is 2/512, 8 of 9 is 20/512, 7 of 9 is
    /// 92/512; ties are left out; a balanced split is p = 1.
    #[test]
    fn the_sign_test_counts_pairs_and_gives_exact_p() {
        let a = [1.0; 9];
        let below = [2.0; 9];
        let (k, n, p) = sign_test(&a, &below);
        assert_eq!((k, n), (9, 9));
        assert!((p - 2.0 / 512.0).abs() < 1e-12, "{p}");
        let mut b = below;
        b[0] = 0.5;
        let (k, _, p) = sign_test(&a, &b);
        assert_eq!(k, 8);
        assert!((p - 20.0 / 512.0).abs() < 1e-12, "{p}");
        b[1] = 0.5;
        assert!((sign_test(&a, &b).2 - 92.0 / 512.0).abs() < 1e-12);
        b[2] = 1.0; // a tie
        assert_eq!(sign_test(&a, &b).1, 8);
        assert_eq!(sign_test(&[1.0, 2.0], &[2.0, 1.0]).2, 1.0);
        assert_eq!(sign_text(&[], &[]), "-");
        assert_eq!(sign_text(&a, &b), "6/8 p=0.29");
    }

    #[test]
    fn the_ratio_range_pairs_runs() {
        assert_eq!(
            ratio_range(&[90.0, 120.0, 100.0], &[100.0, 100.0, 80.0]),
            "0.90-1.25"
        );
        assert_eq!(ratio_range(&[], &[]), "-");
    }

    #[test]
    fn parses_the_stamp_bench() {
        let out = "stamp 4MiB: alone_ns=25929 stamped_ns=335490 plain_ns=310383\n";
        assert_eq!(parse_stamp(out), Some((25929, 335490, 310383)));
        assert_eq!(
            parse_stamp("stamp 4MiB: alone_ns=1 stamped_ns=x plain_ns=3"),
            None
        );
        assert_eq!(parse_stamp(""), None);
    }

    #[test]
    fn parses_fio_json() {
        let j = r#"{"jobs":[{"read":{"io_bytes":0,"runtime":0},"write":{"io_bytes":1048576,"runtime":250}}]}"#;
        assert_eq!(parse_fio(j, Direction::Write), Some((1_048_576, 250)));
        assert_eq!(parse_fio("{}", Direction::Read), None);
    }
}
