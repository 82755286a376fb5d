//! `cargo xtask bench card`: Debian's f3 (`f3write` then `f3read`, package `f3`) and
//! `benchboot probe --full` on the same devices; prints each tool's average write and
//! read speed (MiB/s = 2^20 B/s), the ratios, and each tool's verdict on fake cards.
//!
//! A benchmark, not a test: it asserts nothing, it reports. Target: benchboot's
//! averages within 5 % of f3's, and the same verdict on every fake.
//!
//! The devices, each made fresh for every pass ([`devices`]):
//! * **genuine**: a loop device with `--direct-io=on` over a file `fallocate`d on this
//!   machine's disk (`--dir`, default `target/bench-card`): the disk's speed;
//! * **paced**: a fake card that holds everything and writes at [`PACED_WRITE`] and
//!   reads at [`PACED_READ`] bytes/s (sleeps per FUSE request set the pace; FUSE's own
//!   cost per request comes on top), so both tools measure a card-like speed;
//! * **fakes** ([`FAKES`]): one that wraps at 16 MiB and claims 256 MiB, one that drops
//!   writes past 64 MiB, one that fails (EIO) past 64 MiB; one pass each.
//!
//! f3 goes through a filesystem and the page cache ([`f3`] for its units and what its
//! averages time): ext4 on the speed devices (extents: the least between f3 and the
//! device), exFAT on the fakes (as such cards are sold; ext4's journal in the middle of
//! the device is lost on them and the filesystem does not mount); `f3write MNT`, then
//! `f3read MNT` on the same mount, as f3's manual shows; on the fakes also `f3read`
//! after an unmount and a mount (the manual's "disconnect and connect back": the
//! device's last close drops its page cache). That second read is the verdict that
//! counts here: exFAT through FUSE writes the loop device buffered, so the same-mount
//! `f3read` reads the device's page cache (its `posix_fadvise(DONTNEED)` drops only the
//! FUSE file's pages) and calls the wrap and drop fakes good; with `blockdev
//! --flushbufs DEV` before it, it finds the loss (checked by hand). A kernel vfat or
//! exFAT writes file data around that cache, as f3 expects. Its
//! averages are its own "Average writing/reading speed" lines; beside them, "f3 wall":
//! the `.h2w` files' bytes over each process's wall time. benchboot writes the raw
//! device in 4 MiB `O_DIRECT` writes after its quick probe; its averages are the
//! whole-card pass's `written_bytes / write_ns` (the writes and the final fsync) and
//! `read_bytes / read_ns` from `--json`. So f3 covers the filesystem's free space (less
//! than the device) and pays for the filesystem, its page cache and an `fdatasync`
//! per chunk (chunks that double from 512 B up to ~1 s of writing); benchboot covers
//! every sector and pays for one fsync.
//!
//! The fakes come from `tests/src/fake_card.rs` through its `fake-card` binary, built
//! here with `cargo build -p benchboot-tests --bin fake-card`: this crate cannot link
//! that module (the tests crate depends on xtask), and a FUSE filesystem inside xtask
//! would put `fuser` into every `cargo xtask` build. Needs root, /dev/fuse, losetup,
//! mkfs.ext4, mkfs.exfat, exfat-fuse and f3
//! (`apt-get install f3 exfatprogs exfat-fuse`).
//!
//! On each fake it also runs `f3probe --destructive --time-ops` and prints what it
//! says, verbatim.

mod devices;
mod f3;
#[cfg(test)]
mod tests;

pub use f3::{parse_read, parse_size, parse_speed, summary_block, Found, Fs};

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use benchboot_probe::ProbeReport;
use benchboot_results::Summary;

use devices::{Device, FakeCard, Genuine};

/// The paced device's claimed (and real) size, bytes.
pub const PACED_BYTES: u64 = 256 << 20;
/// The paced device's write speed, bytes/s (40 MiB/s).
pub const PACED_WRITE: u64 = 40 << 20;
/// The paced device's read speed, bytes/s (80 MiB/s).
pub const PACED_READ: u64 = 80 << 20;
/// What every fake claims, bytes.
pub const FAKE_BYTES: u64 = 256 << 20;
/// The fakes: a name and the `fake-card` model (sizes in bytes).
pub const FAKES: [(&str, &str); 3] = [
    ("wraps at 16 MiB", "wrap=16777216"),
    ("drops writes past 64 MiB", "drop=67108864"),
    ("EIO past 64 MiB", "eio=67108864"),
];

const MIB: f64 = (1u64 << 20) as f64;

/// One `benchboot probe --full` pass: exit success, the JSON report, its output.
struct BbPass {
    ok: bool,
    report: ProbeReport,
    text: String,
}

impl BbPass {
    /// Average write and read speed of the whole-card pass, MiB/s.
    fn speeds(&self) -> Option<(f64, f64)> {
        let f = self.report.full.as_ref()?;
        Some((f.write_mib_s(), f.read_mib_s()))
    }

    /// The quick probe's first line, the whole-card pass's summary and the error line.
    fn verdict(&self) -> String {
        let mut v: Vec<&str> = self.text.lines().take(1).collect();
        v.extend(
            self.text
                .lines()
                .filter(|l| l.starts_with("full pass:") || l.starts_with("Error:")),
        );
        format!(
            "exit {}: {}",
            if self.ok { "0" } else { "non-zero" },
            v.join(" | ")
        )
    }
}

fn benchboot(host: &Path, dev: &Path, json: &Path) -> Result<BbPass> {
    let _ = std::fs::remove_file(json);
    let o = Command::new(host)
        .arg("probe")
        .arg(dev)
        .args(["--yes", "--allow-virtual", "--full", "--json"])
        .arg(json)
        .output()
        .context("running benchboot probe")?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let json_text = std::fs::read_to_string(json)
        .with_context(|| format!("benchboot probe wrote no JSON:\n{text}"))?;
    let report = serde_json::from_str(&json_text).context("benchboot probe's JSON")?;
    Ok(BbPass {
        ok: o.status.success(),
        report,
        text,
    })
}

/// Builds `fake-card` (debug, as the system tests build their crate).
fn build_fake_card() -> Result<PathBuf> {
    let st = Command::new(env!("CARGO"))
        .current_dir(crate::repo_root())
        .args([
            "build",
            "--quiet",
            "-p",
            "benchboot-tests",
            "--bin",
            "fake-card",
        ])
        .status()
        .context("running cargo build")?;
    if !st.success() {
        bail!("building fake-card (cargo build -p benchboot-tests --bin fake-card) failed");
    }
    Ok(crate::target_dir().join("debug").join("fake-card"))
}

/// Root, and every tool the bench runs.
fn check_machine() -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    if std::fs::metadata("/proc/self")?.uid() != 0 {
        bail!("bench card needs root (loop devices, mounts, FUSE)");
    }
    if !Path::new("/dev/fuse").exists() {
        bail!("bench card needs /dev/fuse (modprobe fuse)");
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = |t: &str| {
        std::env::split_paths(&path)
            .chain(["/usr/sbin".into(), "/sbin".into()])
            .any(|d| d.join(t).exists())
    };
    let missing: Vec<&str> = [
        "f3write",
        "f3read",
        "f3probe",
        "mkfs.ext4",
        "mkfs.vfat",
        "losetup",
        "fallocate",
        "findmnt",
    ]
    .into_iter()
    .filter(|t| !found(t))
    .collect();
    if !missing.is_empty() {
        bail!(
            "missing {}: apt-get install f3 e2fsprogs exfatprogs exfat-fuse util-linux",
            missing.join(", ")
        );
    }
    Ok(())
}

fn first_line_of(path: &str, key: &str) -> String {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .map(|v| v.trim_start_matches([' ', '\t', ':']).trim().to_string())
        .unwrap_or_default()
}

/// `SOURCE FSTYPE` of the filesystem holding `dir` (`findmnt`).
fn filesystem_of(dir: &Path) -> String {
    Command::new("findmnt")
        .args(["-n", "-o", "SOURCE,FSTYPE", "--target"])
        .arg(dir)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

/// Each tool's averages over the runs, MiB/s: f3's own, f3's files over its processes'
/// wall time, benchboot's.
#[derive(Default)]
struct Speeds {
    f3_write: Vec<f64>,
    f3_read: Vec<f64>,
    f3_wall_write: Vec<f64>,
    f3_wall_read: Vec<f64>,
    bb_write: Vec<f64>,
    bb_read: Vec<f64>,
}

fn median(v: &[f64]) -> f64 {
    Summary::of(v).map_or(f64::NAN, |s| s.median)
}

/// `median (lowest-highest)`.
fn spread(v: &[f64]) -> String {
    Summary::of(v).map_or_else(
        || "-".into(),
        |s| format!("{:.1} ({:.1}-{:.1})", s.median, s.min, s.max),
    )
}

/// Makes a fresh device.
type Make<'a> = &'a dyn Fn() -> Result<Box<dyn Device>>;

/// One timed pass of each tool on fresh devices that `make` gives, f3 first or second;
/// with each pass's wall time, s (f3's with mkfs, benchboot's with its quick probe).
fn speed_run(
    make: Make,
    f3_first: bool,
    host: &Path,
    work: &Path,
) -> Result<(f3::Pass, f64, BbPass, f64)> {
    let f3_pass = || -> Result<(f3::Pass, f64)> {
        let dev = make()?;
        let t = Instant::now();
        let p = f3::pass(dev.path(), &work.join("mnt"), Fs::Ext4, false)?;
        Ok((p, t.elapsed().as_secs_f64()))
    };
    let bb_pass = || -> Result<(BbPass, f64)> {
        let dev = make()?;
        let t = Instant::now();
        let p = benchboot(host, dev.path(), &work.join("probe.json"))?;
        Ok((p, t.elapsed().as_secs_f64()))
    };
    let ((f, fs), (b, bs)) = if f3_first {
        let f = f3_pass()?;
        (f, bb_pass()?)
    } else {
        let b = bb_pass()?;
        (f3_pass()?, b)
    };
    Ok((f, fs, b, bs))
}

/// f3read's findings in one line.
fn f3_verdict(found: Option<&Found>) -> String {
    match found {
        None => "no f3read summary".into(),
        Some(x) if x.good() => format!("GOOD: {} sectors OK, none lost", x.ok),
        Some(x) => format!(
            "BAD: {} sectors OK, {} lost ({} corrupted, {} changed, {} overwritten){}{}",
            x.ok,
            x.lost,
            x.corrupted,
            x.changed,
            x.overwritten,
            if x.io_errors {
                ", not all read (I/O errors)"
            } else {
                ""
            },
            if x.missing_files {
                ", files missing"
            } else {
                ""
            }
        ),
    }
}

fn print_header(runs: u32, work: &Path, size: u64, fake_bin: &Path, host: &Path) -> Result<()> {
    println!(
        "bench card: {runs} runs per tool and device after one warm-up run, interleaved \
         (order alternating), medians; f3 {} (Debian), benchboot {} (release)",
        f3::version()?,
        env!("CARGO_PKG_VERSION")
    );
    println!(
        "machine: {}, {} CPUs, Linux {}, load average {}; {} holds the genuine device's \
         file ({})",
        first_line_of("/proc/cpuinfo", "model name"),
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        first_line_of("/proc/sys/kernel/osrelease", ""),
        crate::bench::load_average(),
        work.display(),
        filesystem_of(work)
    );
    if let Some(r) = crate::bench::page_reporting() {
        println!("memory: {r}");
    }
    println!("commands, each pass on a fresh device:");
    println!("  genuine: fallocate -l {size} FILE; losetup --find --show --direct-io=on FILE");
    println!(
        "  paced / fakes: {} SIZE MODEL (a loop device over a FUSE file; \
         paced={PACED_WRITE},{PACED_READ})",
        fake_bin.display()
    );
    println!(
        "  f3: {} DEV; mount DEV MNT; f3write MNT; f3read MNT; umount MNT (the fakes: \
         mkfs.exfat DEV; mount -t exfat-fuse DEV MNT; ...; then mount, f3read MNT, umount \
         once more)",
        Fs::Ext4.mkfs().join(" ")
    );
    println!(
        "  benchboot: {} probe DEV --yes --allow-virtual --full --json FILE",
        host.display()
    );
    Ok(())
}

/// `cargo xtask bench card --runs N [--dir DIR] [--size-mib M]`.
pub fn card(runs: u32, dir: Option<PathBuf>, size_mib: u64) -> Result<()> {
    check_machine()?;
    let work = dir.unwrap_or_else(|| crate::target_dir().join("bench-card"));
    std::fs::create_dir_all(&work)?;
    let host = crate::qemu::build_host_tool(true)?;
    let fake_bin = build_fake_card()?;
    let size = size_mib << 20;
    print_header(runs, &work, size, &fake_bin, &host)?;
    let genuine_file = work.join("genuine.img");
    let make_genuine =
        || -> Result<Box<dyn Device>> { Ok(Box::new(Genuine::new(&genuine_file, size)?)) };
    let paced = format!("paced={PACED_WRITE},{PACED_READ}");
    let make_paced = || -> Result<Box<dyn Device>> {
        Ok(Box::new(FakeCard::new(&fake_bin, PACED_BYTES, &paced)?))
    };
    let devices: [(String, Make); 2] = [
        (format!("genuine {size_mib} MiB"), &make_genuine),
        (
            format!(
                "paced {} MiB, {}/{} MiB/s",
                PACED_BYTES >> 20,
                PACED_WRITE >> 20,
                PACED_READ >> 20
            ),
            &make_paced,
        ),
    ];
    let mut speeds: Vec<Speeds> = devices.iter().map(|_| Speeds::default()).collect();
    for run_no in 0..=runs {
        for ((name, make), s) in devices.iter().zip(&mut speeds) {
            let (f, f_s, b, b_s) = speed_run(*make, run_no % 2 == 0, &host, &work)?;
            let mib = |v: Option<f64>| v.map_or(f64::NAN, |x| x / MIB);
            let (fw, fr) = (mib(f.write_b_s), mib(f.read_b_s));
            let file_mib = f.file_bytes as f64 / MIB;
            let (fww, fwr) = (file_mib / f.write_wall_s, file_mib / f.read_wall_s);
            let (bw, br) = b.speeds().unwrap_or((f64::NAN, f64::NAN));
            let bb_bytes = b.report.full.as_ref().map_or(0, |x| x.written_bytes);
            println!(
                "run {run_no}{} {name}: f3 write {fw:.1} read {fr:.1} MiB/s, wall {fww:.1} / \
                 {fwr:.1} MiB/s ({file_mib:.1} MiB; {f_s:.1} s with mkfs), {}{}; benchboot \
                 write {bw:.1} read {br:.1} MiB/s ({:.1} MiB; {b_s:.1} s with the quick \
                 probe), exit {}",
                if run_no == 0 { " (warm-up)" } else { "" },
                f3_verdict(f.found.as_ref()),
                if f.failures.is_empty() {
                    String::new()
                } else {
                    format!(" {:?}", f.failures)
                },
                bb_bytes as f64 / MIB,
                if b.ok { "0" } else { "non-zero" }
            );
            if run_no > 0 {
                s.f3_write.push(fw);
                s.f3_read.push(fr);
                s.f3_wall_write.push(fww);
                s.f3_wall_read.push(fwr);
                s.bb_write.push(bw);
                s.bb_read.push(br);
            }
        }
    }
    println!(
        "\n{:<27} {:<5} {:>22} {:>22} {:>22} {:>6} {:>9} {:>10} {:>8}",
        "device",
        "dir",
        "f3 MiB/s med (range)",
        "f3 wall",
        "benchboot",
        "bb/f3",
        "runs",
        "bb<f3",
        "bb/wall"
    );
    for ((name, _), s) in devices.iter().zip(&speeds) {
        for (dir, f, w, b) in [
            ("write", &s.f3_write, &s.f3_wall_write, &s.bb_write),
            ("read", &s.f3_read, &s.f3_wall_read, &s.bb_read),
        ] {
            println!(
                "{name:<27} {dir:<5} {:>22} {:>22} {:>22} {:>6.3} {:>9} {:>10} {:>8.3}",
                spread(f),
                spread(w),
                spread(b),
                median(b) / median(f),
                crate::bench::ratio_range(b, f),
                crate::bench::sign_text(b, f),
                median(b) / median(w)
            );
        }
    }
    println!(
        "MiB/s = 2^20 B/s (f3's \"MB/s\" is MiB/s: it divides by 1024). f3: its own \
         averages; f3 wall: the .h2w files' bytes over f3write's / f3read's process wall \
         time; bb/f3: ratio of the medians; runs: lowest-highest of the run-by-run bb/f3 \
         ratios; bb<f3: in how many runs benchboot's figure was the lower, and the sign \
         test's two-sided p; bb/wall: benchboot's median over f3 wall's"
    );
    fakes(&fake_bin, &host, &work)?;
    println!("\nload average at the end {}", crate::bench::load_average());
    Ok(())
}

/// Each fake once with each tool, then `f3probe` on each.
fn fakes(fake_bin: &Path, host: &Path, work: &Path) -> Result<()> {
    println!("\nfakes (claim {} MiB; one pass each):", FAKE_BYTES >> 20);
    for (name, model) in FAKES {
        let card = FakeCard::new(fake_bin, FAKE_BYTES, model)?;
        let f = f3::pass(card.path(), &work.join("mnt"), Fs::Exfat, true)?;
        drop(card);
        let card = FakeCard::new(fake_bin, FAKE_BYTES, model)?;
        let b = benchboot(host, card.path(), &work.join("probe.json"))?;
        drop(card);
        println!("- {name} ({model}):");
        for l in f.write_out.lines().filter(|l| {
            l.starts_with("Free space")
                || l.starts_with("Creating")
                || l.contains("failure")
                || l.starts_with("Average")
        }) {
            println!("    f3write: {l}");
        }
        println!(
            "  f3read on the same mount: {}{}",
            f3_verdict(f.found.as_ref()),
            if f.failures.is_empty() {
                String::new()
            } else {
                format!(" {:?}", f.failures)
            }
        );
        for l in summary_block(&f.read_out).lines() {
            println!("    f3read: {l}");
        }
        match &f.after_remount {
            Some(Ok(x)) => println!("  f3read after a remount: {}", f3_verdict(Some(x))),
            Some(Err(e)) => println!("  f3read after a remount: did not run: {e}"),
            None => {}
        }
        println!("  benchboot: {}", b.verdict());
    }

    for (name, model) in FAKES {
        let card = FakeCard::new(fake_bin, FAKE_BYTES, model)?;
        let (code, text) = f3::probe(card.path())?;
        drop(card);
        println!(
            "\nf3probe --destructive --time-ops DEV on the fake that {name} ({model}, claims \
             {} MiB), exit {}:",
            FAKE_BYTES >> 20,
            code.map_or("none (killed)".into(), |c| c.to_string())
        );
        println!("{}", text.trim_end());
    }
    Ok(())
}
