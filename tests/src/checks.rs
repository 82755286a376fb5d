//! Checks every QEMU tier makes of a run: the results document is complete (every
//! storage cell, device reads, random I/O, verification, the census), the card's
//! results partition is consistent, and the timings are printed. Structure only, never
//! speed: emulated figures say nothing about hardware.

use std::path::Path;
use std::time::Instant;

use benchboot_image::layout::{Layout, Role};
use benchboot_plan::Mode;
use benchboot_results::{DeviceReadKind, Direction, RunResults, Severity, StopReason};
use xtask::qemu::Run;

/// The logical block size of the emulated cards (SD and virtio-blk): O_DIRECT below it
/// runs as sync and says so.
const LOGICAL_BLOCK: u64 = 512;

/// Reads and parses the document `benchboot fetch` saved.
///
/// # Panics
/// When the file is missing or is no results document.
pub fn fetched(run: &Run) -> RunResults {
    let text = std::fs::read_to_string(&run.results)
        .unwrap_or_else(|e| panic!("{}: {e}", run.results.display()));
    RunResults::from_json(&text).unwrap_or_else(|e| panic!("{}: {e}", run.results.display()))
}

/// The document names the board, is marked emulated, complete, from the expected
/// `uname -m`, and carries no error event.
///
/// # Panics
/// On the first difference.
pub fn assert_emulated_run_of(r: &RunResults, board: &str, machine: &str) {
    assert_eq!(r.board, board);
    assert!(
        r.emulated && r.plan.emulated,
        "a QEMU run must be marked emulated"
    );
    assert!(r.complete, "incomplete run: {:?}", r.events);
    assert_eq!(r.system.machine, machine);
    let errors: Vec<_> = r
        .events
        .iter()
        .filter(|e| e.severity == Severity::Error)
        .collect();
    assert!(errors.is_empty(), "errors: {errors:?}");
}

/// Every cell of every table (target × mode × block size × direction) with the mode
/// that ran, and each read covering what the write pass put down unless the time cap
/// cut it.
///
/// # Panics
/// On the first missing or inconsistent measurement.
pub fn assert_storage_complete(r: &RunResults) {
    let s = &r.plan.storage;
    assert!(!s.targets.is_empty() && !s.block_sizes.is_empty());
    for t in &s.targets {
        let t = t.label.as_str();
        for &mode in &s.modes {
            for &bs in &s.block_sizes {
                for dir in [Direction::Write, Direction::Read] {
                    let m = r
                        .storage
                        .iter()
                        .find(|m| {
                            m.target == t
                                && m.block_size == bs
                                && m.direction == dir
                                && m.requested_mode == mode
                        })
                        .unwrap_or_else(|| panic!("no {t} {mode:?} {bs} B {dir:?} measurement"));
                    assert!(m.bytes >= bs && m.nanos > 0, "{m:?}");
                    let fell_back = mode == Mode::Direct && bs < LOGICAL_BLOCK;
                    assert_eq!(m.mode, if fell_back { Mode::Sync } else { mode }, "{m:?}");
                    assert_eq!(m.note.is_some(), fell_back, "{m:?}");
                    // From 64 KiB every call is timed (`calls_per_clock_check`); below,
                    // one in a group, so a short capped cell may have none timed.
                    if bs >= 65_536 {
                        let l = m.latency.as_ref().unwrap_or_else(|| panic!("{m:?}"));
                        assert_eq!(l.count, l.calls, "{m:?}");
                    }
                    if let Some(l) = &m.latency {
                        assert_latency(l);
                    }
                }
            }
        }
    }
    for w in r.storage.iter().filter(|m| m.direction == Direction::Write) {
        let rd = r
            .storage
            .iter()
            .find(|m| {
                m.direction == Direction::Read
                    && m.target == w.target
                    && m.block_size == w.block_size
                    && m.requested_mode == w.requested_mode
            })
            .unwrap();
        assert!(rd.bytes <= w.bytes, "{rd:?} read more than {w:?} wrote");
        assert!(
            rd.bytes == w.bytes || rd.stopped_by == StopReason::Time,
            "{rd:?} vs {w:?}"
        );
    }
}

/// The card found on `disk` by its image's disk signature (`results.boot_card`),
/// hdparm-style reads of `disk` (cached, then buffered), random I/O at every queue
/// depth in both directions, one clean verification per target, and the disk's
/// identity (1 GiB, 512 B logical blocks).
///
/// # Panics
/// On the first missing or inconsistent record.
pub fn assert_device_steps(r: &RunResults, disk: &str) {
    // PID 1 found the card by its image's disk signature, on the disk measured.
    let card = r
        .boot_card
        .as_ref()
        .expect("results.boot_card: PID 1 looked for the card");
    assert_eq!(card.found.as_deref(), Some(disk), "{card:?}");
    let dev = format!("/dev/{disk}");
    let kinds: Vec<_> = r
        .device_reads
        .iter()
        .map(|d| (d.device.as_str(), d.kind))
        .collect();
    assert_eq!(
        kinds,
        [
            (dev.as_str(), DeviceReadKind::Cached),
            (dev.as_str(), DeviceReadKind::Buffered)
        ]
    );
    assert!(r.device_reads.iter().all(|d| d.bytes > 0 && d.nanos > 0));
    let rp = r.plan.storage.random.as_ref().expect("a random I/O plan");
    assert_eq!(r.random.len(), rp.targets.len() * rp.queue_depths.len() * 2);
    assert!(
        r.random.iter().all(|x| x.ios > 0 && x.nanos > 0),
        "{:?}",
        r.random
    );
    // Random I/O times every op.
    for x in &r.random {
        let l = x.latency.as_ref().unwrap_or_else(|| panic!("{x:?}"));
        assert_eq!((l.count, l.calls), (x.ios, x.ios), "{x:?}");
        assert_latency(l);
    }
    assert_eq!(r.verify.len(), r.plan.storage.targets.len());
    assert!(r
        .verify
        .iter()
        .all(|v| v.first_mismatch.is_none() && v.bytes > 0));
    let id = r
        .devices
        .iter()
        .find(|d| d.name == disk)
        .unwrap_or_else(|| panic!("no identity of {disk}: {:?}", r.devices));
    assert_eq!(
        (id.size_bytes, id.logical_block_size),
        (1 << 30, LOGICAL_BLOCK)
    );
    assert_card_registers(id);
}

/// A latency distribution as PID 1 recorded it: its buckets add up to its count, and
/// p50 ≤ p99 ≤ max within the exact min and max.
///
/// # Panics
/// On the first inconsistency.
pub fn assert_latency(l: &benchboot_results::latency::Latency) {
    assert!(l.count >= 1 && l.count <= l.calls, "{l:?}");
    assert_eq!(l.buckets.iter().map(|b| b.1).sum::<u64>(), l.count, "{l:?}");
    assert!(l.min_ns <= l.max_ns, "{l:?}");
    let (p50, p99) = (l.percentile(0.5), l.percentile(0.99));
    assert!(
        l.min_ns <= p50 && p50 <= p99 && p99 <= l.max_ns,
        "p50 {p50} p99 {p99}: {l:?}"
    );
}

/// An SD disk carries the card's registers as QEMU's SD model (hw/sd/sd.c) sets them:
/// manufacturer 0xaa, OEM "XY", product "QEMU!", a CSD whose capacity is the 1 GiB
/// image, the CID's serial only as a hash; any other disk carries none.
///
/// # Panics
/// On the first difference.
pub fn assert_card_registers(id: &benchboot_results::DeviceIdentity) {
    if !id.name.starts_with("mmcblk") {
        assert!(id.card.is_none(), "{:?}", id.card);
        return;
    }
    let card = id.card.as_ref().expect("the SD card's registers");
    let cid = card
        .cid
        .ok()
        .unwrap_or_else(|| panic!("CID: {:?}", card.cid));
    assert_eq!(
        (
            cid.manufacturer_id,
            cid.oem_id.as_str(),
            cid.product_name.as_str()
        ),
        (0xaa, "XY", "QEMU!"),
        "{cid:?}"
    );
    assert_eq!(card.capacity_bytes(), Some(1 << 30), "{:?}", card.csd);
    assert!(card
        .warnings(id.size_bytes)
        .iter()
        .all(|w| !w.contains("capacity")));
    assert_eq!(cid.serial_sha256.len(), 64);
    let raw = card.raw.cid.as_deref().expect("the raw CID");
    assert_eq!(raw.len(), 32, "{raw}");
    assert!(
        card.raw.csd.is_some() && card.raw.scr.is_some(),
        "{:?}",
        card.raw
    );
}

/// Three census snapshots (before storage, after storage, after network), each with
/// PID 1 alone in user space among the kernel's threads.
///
/// # Panics
/// When another user-space process ran.
pub fn assert_census_only_pid1(r: &RunResults) {
    assert_eq!(r.census.len(), 3, "{:?}", r.census);
    for c in &r.census {
        assert!(c.only_pid1(), "census {}: {:?}", c.at, c.user_processes);
        assert!(c.kernel_threads > 0);
    }
}

/// The console protocol of a run (`benchboot_console`): the start line; every figure
/// of the document as a `case=` line with the value and units it printed, and no other;
/// the verdict block equal to the document's verdicts; the whole document in its
/// checksummed chunks, rebuilt byte for byte equal to the card's `results.json`; the
/// ready line. Returns the console text.
///
/// # Panics
/// On the first difference.
pub fn assert_console_protocol(run: &Run, r: &RunResults) -> String {
    use benchboot_console::{document, figures, lines, verdicts};
    let bytes = std::fs::read(&run.console_log).unwrap();
    let console = String::from_utf8_lossy(&bytes).into_owned();
    assert!(
        console.contains(&format!("benchboot: start run={}", r.run_id)),
        "{console}"
    );
    assert!(console.contains(xtask::qemu::READY_MARKER), "{console}");
    let texts: Vec<&str> = console.lines().filter_map(lines::protocol_text).collect();
    let mut printed: Vec<(String, f64, String)> = texts
        .iter()
        .filter_map(|t| lines::parse_figure(t))
        .map(|f| (f.id, f.value, f.units))
        .collect();
    let mut want: Vec<(String, f64, String)> = figures::all(r)
        .iter()
        .filter_map(lines::figure)
        .map(|l| lines::parse_figure(&l).unwrap())
        .map(|f| (f.id, f.value, f.units))
        .collect();
    printed.sort_by(|a, b| a.0.cmp(&b.0));
    want.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        printed.len(),
        want.len(),
        "figures on the console vs the document"
    );
    for (p, w) in printed.iter().zip(&want) {
        assert_eq!(p, w, "figure line vs the document");
    }
    let end = lines::figures_end(&r.run_id, want.len());
    assert!(texts.contains(&end.as_str()), "no `{end}`");
    let shown: Vec<&str> = texts
        .iter()
        .copied()
        .skip_while(|t| *t != lines::verdicts_begin(&r.run_id))
        .skip(1)
        .take_while(|t| !t.starts_with("verdicts end "))
        .collect();
    let expected: Vec<String> = verdicts::all(r).iter().map(lines::verdict).collect();
    assert_eq!(shown, expected, "the verdict block");
    let numbered = console.lines().enumerate().map(|(i, l)| (i + 1, l));
    let found = document::rebuild(numbered).unwrap_or_else(|e| panic!("console document: {e}"));
    let layout = benchboot_image::layout::plan(&benchboot_image::layout::Spec::default()).unwrap();
    let on_card = xtask::image::read_fat_file(
        &run.sd_card,
        layout.part(Role::Results).unwrap(),
        "results.json",
    )
    .unwrap();
    match found.as_slice() {
        [d] => {
            assert_eq!(d.run_id, r.run_id);
            assert!(
                d.json == on_card,
                "the console's document differs from the card's"
            );
        }
        other => panic!("{} documents on the console", other.len()),
    }
    console
}

/// The results as fetched: by `benchboot fetch` alone when the well-known forward
/// (127.0.0.1:18080) was free, else by the address QEMU was given; either way the
/// board served this run, and the card's results partition holds the same document.
///
/// # Panics
/// When the fetched and the card's documents differ.
pub fn assert_fetched_matches_card(run: &Run, r: &RunResults, layout: &Layout) {
    assert!(run.fetched, "the results were not fetched over the network");
    let on_card = card_results(&run.sd_card, layout);
    assert_eq!(on_card.run_id, r.run_id);
    assert_eq!(on_card.storage, r.storage);
}

/// The `results.json` on a card's results partition.
///
/// # Panics
/// When it is missing or no results document.
pub fn card_results(sd_card: &Path, layout: &Layout) -> RunResults {
    let card =
        xtask::image::read_fat_file(sd_card, layout.part(Role::Results).unwrap(), "results.json")
            .unwrap();
    RunResults::from_json(&String::from_utf8(card).unwrap()).unwrap()
}

/// `fsck.vfat -n` of the results partition QEMU wrote finds nothing but the dirty bit
/// (PID 1 still had it mounted when QEMU was stopped without a power-off).
///
/// # Panics
/// On any other finding.
pub fn assert_results_partition_clean(sd_card: &Path, layout: &Layout) {
    let p2 = crate::extract_partition(sd_card, layout.part(Role::Results).unwrap()).unwrap();
    let fsck = crate::run_tool("fsck.vfat", &["-n"], p2.path()).unwrap();
    let problems: Vec<&str> = fsck
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with("fsck.fat"))
        .filter(|l| !l.contains("irty bit") && !l.starts_with("Leaving filesystem"))
        .filter(|l| !l.contains(" files, "))
        .collect();
    assert!(problems.is_empty(), "{fsck}");
}

/// Prints a tier's timings: QEMU start to PID 1, to the ready line, and the whole test
/// (image build included) since `started`.
pub fn report_timings(tier: &str, run: &Run, started: Instant) {
    eprintln!(
        "{tier}: init {:.1} s, ready {:.1} s after QEMU started; whole test {:.1} s",
        run.boot_to_init.as_secs_f64(),
        run.boot_to_ready.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
}

/// The memory step ran every kernel the CPU has and only those (`kernels`, in order),
/// each with samples of bytes and ns > 0; `per_core` more core sets (libc memcpy and
/// memset on each other CPU and on all); a latency table per page kind in `pages`
/// (`base`, `huge`) over 1 KiB .. 64 MiB, single and dual chain timed; the clock checked
/// before and after the step and before storage and network.
///
/// # Panics
/// On the first missing piece.
pub fn assert_memory(r: &RunResults, kernels: &[&str], cpus: u32, pages: &[&str]) {
    use benchboot_results::memory::{Cores, Pages};
    let m = r.memory.as_ref().expect("no memory results");
    assert!(m.problems.is_empty(), "memory problems: {:?}", m.problems);
    assert_eq!(
        m.cpu.kernels, kernels,
        "kernels run (skipped: {:?})",
        m.cpu.kernels_skipped
    );
    assert_eq!(m.cpu.cores, cpus);
    let mut sets = vec![];
    for t in &m.bandwidth {
        assert!(!t.samples.is_empty(), "{}: no samples", t.kernel);
        for s in &t.samples {
            assert!(
                s.bytes >= m.buffer_bytes && s.ns > 0,
                "{} {:?}: {s:?}",
                t.kernel,
                t.cores
            );
        }
        sets.push((t.kernel.as_str(), t.cores));
    }
    let mut want: Vec<(&str, Cores)> = kernels.iter().map(|k| (*k, Cores::One(0))).collect();
    if cpus > 1 {
        for c in 1..cpus {
            want.push(("libc-memcpy", Cores::One(c)));
            want.push(("libc-memset", Cores::One(c)));
        }
        want.push(("libc-memcpy", Cores::All(cpus)));
        want.push(("libc-memset", Cores::All(cpus)));
    }
    assert_eq!(sets, want, "bandwidth tests by kernel and core set");
    let kinds: Vec<&str> = m
        .latency
        .iter()
        .map(|t| match t.pages {
            Pages::Base(_) => "base",
            Pages::Huge => "huge",
        })
        .collect();
    assert_eq!(kinds, pages, "latency tables (skipped: {:?})", m.skipped);
    for t in &m.latency {
        let blocks: Vec<u64> = t.rows.iter().map(|r| r.block_bytes).collect();
        let want: Vec<u64> = (10..=26).map(|b| 1u64 << b).collect();
        assert_eq!(blocks, want, "latency blocks 1 KiB .. 64 MiB");
        assert!(t.baseline_ns.iter().all(|&n| n > 0));
        // Each loop its own baseline (schema 1.12), one per repeat; reads in 16s.
        assert_eq!(t.baseline_dual_ns.len(), t.baseline_ns.len());
        assert!(t.baseline_dual_ns.iter().all(|&n| n > 0));
        assert!(t.reads > 0 && t.reads % 16 == 0, "{} reads", t.reads);
        for row in &t.rows {
            assert!(
                !row.single_ns.is_empty()
                    && row.single_ns.iter().chain(&row.dual_ns).all(|&n| n > 0),
                "{row:?}"
            );
        }
    }
    let at: Vec<&str> = r.clock_checks.iter().map(|c| c.at.as_str()).collect();
    assert_eq!(
        at,
        [
            "before-memory",
            "after-memory",
            "before-storage",
            "before-network"
        ]
    );
    // The loops ran, each for its count. Their difference is no clock under TCG: the
    // host runs the translated add chains, and a host core that folds add-immediate at
    // rename (Intel's newer ones) runs several a cycle, so the long loop can even finish
    // first and the figure comes out 0, "not measured" (seen in the raspi4b tier on an
    // Intel Xeon VM: 805 M adds in 42 ms against 268 M in 71 ms).
    assert!(
        r.clock_checks.iter().all(|c| c.short_ns > 0
            && c.long_ns > 0
            && c.long_ops == 3 * c.short_ops
            && c.short_ops > 0),
        "{:?}",
        r.clock_checks
    );
}

/// The full-card check of a virtio disk (the QEMU plan runs it where the disk is
/// virtio-blk): over the space past the last partition of the 1 GiB image, every
/// stamped block read back, verdict genuine, the card line on the console.
///
/// # Panics
/// On the first difference.
pub fn assert_card_check_genuine(r: &RunResults, console: &str) {
    let c = r.card_check.as_ref().expect("a card check");
    assert_eq!(c.device, "/dev/vda");
    let rep = &c.report;
    assert_eq!(rep.claimed_bytes, 1 << 30, "{rep:?}");
    let last_part_end = benchboot_image::layout::plan(&benchboot_image::layout::Spec::default())
        .unwrap()
        .parts
        .iter()
        .map(|p| p.offset_bytes() + p.size_bytes())
        .max()
        .unwrap();
    assert_eq!(
        rep.region,
        (last_part_end.next_multiple_of(1 << 20), 1 << 30),
        "{rep:?}"
    );
    assert_eq!(rep.verdict, benchboot_probe::Verdict::Genuine, "{rep:?}");
    assert!(rep.bad.is_empty() && rep.first_bad.is_none(), "{rep:?}");
    // One pass: every sample read back once, written with the cache-flush window.
    assert!(rep.samples >= 1000 && rep.passes == 1, "{rep:?}");
    assert_eq!(rep.blocks_read, rep.samples, "{rep:?}");
    assert!(rep.blocks_written > rep.samples, "{rep:?}");
    assert!(
        rep.highest_good
            .is_some_and(|g| g >= (1 << 30) - rep.resolution_bytes),
        "{rep:?}"
    );
    assert!(
        console.contains("benchboot: verdict=card.check result=pass"),
        "{console}"
    );
    // The whole-card pass the virt plans ask for: every sector of the region written and
    // read back holding its data, in a profile of 100 intervals or more.
    let f = rep
        .full
        .as_ref()
        .expect("the whole-card pass (full = true)");
    let span = rep.region.1 - rep.region.0;
    assert_eq!(f.region, rep.region);
    assert_eq!(
        (f.written_bytes, f.read_bytes, f.good_bytes, f.bad_bytes),
        (span, span, span, 0),
        "{f:?}"
    );
    assert_eq!(f.stopped, None);
    assert!(f.write_profile.len() >= 100, "{f:?}");
    assert_eq!(f.read_profile.len(), f.write_profile.len());
    assert!(f
        .write_latency
        .is_some_and(|l| l.count > 0 && l.max_ns >= l.p50_ns));
    assert!(
        console.contains("card-check: full pass: every sector held its data"),
        "{console}"
    );
    assert!(
        console.contains("benchboot: verdict=card.full result=pass"),
        "{console}"
    );
}
