//! The memory step: every kernel this CPU has on the first CPU, libc memcpy/memset on
//! each other CPU and on all at once, the latency tables, the clock before and after.
//! Runs the same in PID 1's worker and in `benchboot memory`.

use std::path::Path;
use std::sync::Barrier;

use benchboot_plan::MemoryPlan;
use benchboot_results::memory::{
    BandwidthSample, BandwidthTest, ClockCheck, Cores, CpuFacts, LatencyRow, LatencyTable, MemOp,
    MemoryResults, Pages,
};

use crate::kernels::{self, Buffer, Kernel, DST_OFFSET, FILL_BYTE, SRC_OFFSET};
use crate::latency::{self, Rng};
use crate::timing::{self, Monotonic};
use crate::{cpu, mhz, sizing};

/// What the step produced: the results and the clock around it.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub results: MemoryResults,
    pub clock_checks: Vec<ClockCheck>,
}

/// How long the clock loop's short run lasts, ns: 10 ms (sub-percent timer error).
const CLOCK_LOOP_NS: u64 = 10_000_000;

/// Runs the step of `plan` on this machine (`proc`, `sys`: the /proc and /sys roots).
pub fn run(plan: &MemoryPlan, proc: &Path, sys: &Path) -> Outcome {
    let mut problems = Vec::new();
    let mut skipped = Vec::new();
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
    let features = cpu::features(cpu::hwcap());
    let cpus = cpu::allowed_cpus();
    let first = cpus.first().copied().unwrap_or(0);
    let (llc_bytes, llc_source) = cpu::llc(sys).unwrap_or((
        sizing::ASSUMED_LLC,
        "assumed 1 MiB: the kernel exports no cache sizes".to_owned(),
    ));
    let mem_total = cpu::mem_total(&read(&proc.join("meminfo"))).unwrap_or(512 << 20);
    let sz = buffer_sizes(plan, llc_bytes, mem_total, cpus.len() as u32);
    let (runnable, missing): (Vec<&Kernel>, Vec<&Kernel>) =
        kernels::all().iter().partition(|k| k.runs_on(&features));
    let cpu_facts = CpuFacts {
        arch: std::env::consts::ARCH.to_owned(),
        model: cpu::model(&read(&proc.join("cpuinfo"))),
        cores: cpus.len() as u32,
        features: features.clone(),
        llc_bytes,
        llc_source,
        mem_total_bytes: mem_total,
        kernels: runnable.iter().map(|k| k.id.to_owned()).collect(),
        kernels_skipped: missing
            .iter()
            .map(|k| {
                let f = k.needs.feature().unwrap_or("?");
                format!("{}: no {f} (AT_HWCAP lacks it)", k.id)
            })
            .collect(),
    };

    if let Err(e) = cpu::pin(first) {
        problems.push(format!("{e}: ran unpinned"));
    }
    let mut clock_checks = vec![mhz::measure("before-memory", first, sys, CLOCK_LOOP_NS)];
    let bandwidth = bandwidth(plan, &runnable, &cpus, &sz, &mut problems);
    let latency = latency_tables(
        plan,
        sz.latency_max_bytes,
        first,
        sys,
        &mut skipped,
        &mut problems,
    );
    clock_checks.push(mhz::measure("after-memory", first, sys, CLOCK_LOOP_NS));
    Outcome {
        results: MemoryResults {
            cpu: cpu_facts,
            buffer_bytes: sz.buffer_bytes,
            sizing: sz.why,
            bandwidth,
            latency,
            skipped,
            problems,
        },
        clock_checks,
    }
}

/// The buffer sizes for this machine (last-level cache and memory, bytes; `cores`),
/// or the plan's own buffer size, in whole kernel blocks, for both the one-core and the
/// all-cores buffers.
fn buffer_sizes(plan: &MemoryPlan, llc_bytes: u64, mem_total: u64, cores: u32) -> sizing::Sizing {
    let mut sz = sizing::size(llc_bytes, mem_total, cores, plan.latency_max_bytes);
    if let Some(b) = plan.buffer_bytes {
        let b = b
            .next_multiple_of(kernels::BLOCK as u64)
            .max(kernels::BLOCK as u64);
        sz.why = format!(
            "{} KiB per buffer as asked (the plan's buffer size)",
            b >> 10
        );
        sz.buffer_bytes = b;
        sz.all_cores_buffer_bytes = b;
    }
    sz
}

/// The bandwidth tests: every `runnable` kernel on the first of `cpus` (each pass
/// checked), then, when the plan asks and there are more CPUs, libc memcpy/memset on
/// each other CPU and on all at once; the calling thread is pinned back to the first.
fn bandwidth(
    plan: &MemoryPlan,
    runnable: &[&Kernel],
    cpus: &[u32],
    sz: &sizing::Sizing,
    problems: &mut Vec<String>,
) -> Vec<BandwidthTest> {
    let first = cpus.first().copied().unwrap_or(0);
    let min_ns = plan.sample_ms * 1_000_000;
    let bytes = sz.buffer_bytes as usize;
    let mut bandwidth = Vec::new();
    let mut src = Buffer::new(bytes, SRC_OFFSET);
    src.stamp(0x5eed);
    let mut dst = Buffer::new(bytes, DST_OFFSET);
    dst.stamp(0xd57);
    for k in runnable {
        let t = one_core(k, first, &src, &mut dst, min_ns, plan.samples);
        if let Some(p) = check_pass(k, &src, &dst) {
            problems.push(p);
        }
        bandwidth.push(t);
    }
    if !(plan.per_core && cpus.len() > 1) {
        return bandwidth;
    }
    let libc: Vec<&Kernel> = runnable
        .iter()
        .copied()
        .filter(|k| k.id.starts_with("libc-"))
        .collect();
    for &c in &cpus[1..] {
        if let Err(e) = cpu::pin(c) {
            problems.push(format!("{e}: CPU {c} not measured"));
            continue;
        }
        for k in &libc {
            bandwidth.push(one_core(k, c, &src, &mut dst, min_ns, plan.samples));
        }
    }
    drop((src, dst));
    for k in &libc {
        let passes = all_cores_passes(&bandwidth, k, bytes, min_ns);
        let per = sz.all_cores_buffer_bytes as usize;
        let t = all_cores(k, cpus, per, passes, plan.samples, problems);
        bandwidth.push(t);
    }
    let _ = cpu::pin(first);
    bandwidth
}

/// Passes per all-cores sample of kernel `k` to last `min_ns`: from its first one-core
/// sample over `bytes` in `bandwidth` (else one pass of `min_ns`).
fn all_cores_passes(bandwidth: &[BandwidthTest], k: &Kernel, bytes: usize, min_ns: u64) -> u64 {
    let single = bandwidth.iter().find(|t| t.kernel == k.id);
    let pass_ns = single
        .and_then(|t| t.samples.first())
        .map(|s| s.ns.saturating_mul(bytes as u64) / s.bytes.max(1))
        .unwrap_or(min_ns);
    timing::passes_for(min_ns, pass_ns)
}

/// The latency tables on the `first` CPU up to `max_bytes`: base pages, and huge pages
/// when the plan asks and the kernel has them (else why not, in `skipped`).
fn latency_tables(
    plan: &MemoryPlan,
    max_bytes: u64,
    first: u32,
    sys: &Path,
    skipped: &mut Vec<String>,
    problems: &mut Vec<String>,
) -> Vec<LatencyTable> {
    let mut latency = Vec::new();
    let mut kinds = vec![Pages::Base(rustix::param::page_size() as u64)];
    if plan.huge_pages {
        match cpu::thp_available(sys) {
            Ok(()) => kinds.push(Pages::Huge),
            Err(why) => skipped.push(format!("latency with huge pages: {why}")),
        }
    }
    for pages in kinds {
        match latency_table(plan, max_bytes, pages, first) {
            Ok(t) => latency.push(t),
            Err(e) => problems.push(e),
        }
    }
    latency
}

fn one_core(
    k: &Kernel,
    cpu: u32,
    src: &Buffer,
    dst: &mut Buffer,
    min_ns: u64,
    samples: u32,
) -> BandwidthTest {
    let bytes = src.bytes().len() as u64;
    let samples = (0..samples.max(1))
        .map(|_| {
            timing::sample(&mut Monotonic, min_ns, bytes, || {
                std::hint::black_box(k.run(dst.bytes_mut(), src.bytes()));
            })
        })
        .collect();
    BandwidthTest {
        kernel: k.id.to_owned(),
        label: k.label.to_owned(),
        op: k.op,
        cores: Cores::One(cpu),
        samples,
    }
}

/// The trap checks after a kernel's passes: a copy's destination equals its source (no
/// skipped or repeated part, the source pointer advanced), a fill left its byte
/// everywhere. `Some(problem)` when not.
fn check_pass(k: &Kernel, src: &Buffer, dst: &Buffer) -> Option<String> {
    let (d, s) = (dst.bytes(), src.bytes());
    let bad = match k.op {
        MemOp::Copy => d.iter().zip(s).position(|(a, b)| a != b),
        MemOp::Fill => d.iter().position(|&b| b != FILL_BYTE),
        MemOp::Read => None,
    }?;
    Some(format!(
        "{}: byte {bad} of the destination is wrong after the passes: its figures are not \
         of a {:?}",
        k.id, k.op
    ))
}

/// One all-cores thread's (start, end) ns per sample, and why it ran unpinned, if so.
type ThreadRun = (Vec<(u64, u64)>, Option<String>);

/// One thread per CPU, each pinned with its own buffers; each sample starts them
/// together (a barrier) and runs `passes` passes on each.
fn all_cores(
    k: &Kernel,
    cpus: &[u32],
    bytes: usize,
    passes: u64,
    samples: u32,
    problems: &mut Vec<String>,
) -> BandwidthTest {
    let samples = samples.max(1);
    let barrier = Barrier::new(cpus.len());
    let spans: Vec<ThreadRun> = std::thread::scope(|s| {
        let handles: Vec<_> = cpus
            .iter()
            .map(|&c| {
                let barrier = &barrier;
                s.spawn(move || {
                    let pinned = cpu::pin(c).err().map(|e| e.to_string());
                    let mut src = Buffer::new(bytes, SRC_OFFSET);
                    src.stamp(u64::from(c));
                    let mut dst = Buffer::new(bytes, DST_OFFSET);
                    dst.stamp(!u64::from(c));
                    k.run(dst.bytes_mut(), src.bytes());
                    let mut out = Vec::new();
                    for _ in 0..samples {
                        barrier.wait();
                        let t0 = crate::now_ns();
                        for _ in 0..passes {
                            std::hint::black_box(k.run(dst.bytes_mut(), src.bytes()));
                        }
                        out.push((t0, crate::now_ns()));
                    }
                    (out, pinned)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| (Vec::new(), Some("thread panicked".into())))
            })
            .collect()
    });
    for (_, p) in &spans {
        if let Some(p) = p {
            problems.push(format!("{} on all cores: {p}", k.id));
        }
    }
    let threads = spans
        .iter()
        .filter(|(s, _)| s.len() == samples as usize)
        .count() as u64;
    let samples = (0..samples as usize)
        .filter_map(|i| {
            let t0 = spans
                .iter()
                .filter_map(|(s, _)| s.get(i))
                .map(|x| x.0)
                .min()?;
            let t1 = spans
                .iter()
                .filter_map(|(s, _)| s.get(i))
                .map(|x| x.1)
                .max()?;
            Some(BandwidthSample {
                bytes: threads * passes * bytes as u64,
                ns: t1.saturating_sub(t0).max(1),
            })
        })
        .collect();
    BandwidthTest {
        kernel: k.id.to_owned(),
        label: k.label.to_owned(),
        op: k.op,
        cores: Cores::All(cpus.len() as u32),
        samples,
    }
}

/// The latency table over blocks 1 KiB .. `max` on CPU `core` (this thread, pinned),
/// as tinymembench's `latency_bench`: one zeroed buffer of `max` bytes, 2 MiB-aligned
/// (tinymembench: 4 MiB, posix_memalign), advised before its pages are first written;
/// the baselines over its first 2 bytes; each row's repeats at random offsets aligned to
/// the block's size.
fn latency_table(
    plan: &MemoryPlan,
    max: u64,
    pages: Pages,
    core: u32,
) -> Result<LatencyTable, String> {
    const HUGE: usize = 2 << 20;
    let len = max as usize;
    let mut storage: Vec<u8> = Vec::with_capacity(len + HUGE);
    let skip = storage.as_ptr().align_offset(HUGE);
    advise(
        &mut storage.spare_capacity_mut()[skip..skip + len],
        pages == Pages::Huge,
    )?;
    // Written, not just allocated: an untouched page reads as the shared zero page.
    storage.resize(len + HUGE, 0);
    let buf = std::hint::black_box(&storage[skip..skip + len]);
    let mut rng = Rng::new(0x1a7e_5eed ^ u64::from(core));
    let reads = (plan.latency_reads.max(16) / 16) * 16;
    let repeats = plan.latency_repeats.max(1);
    let time = |f: &mut dyn FnMut()| {
        let t0 = crate::now_ns();
        f();
        crate::now_ns().saturating_sub(t0).max(1)
    };
    let mut baseline_ns = Vec::new();
    let mut baseline_dual_ns = Vec::new();
    for _ in 0..repeats {
        baseline_ns.push(time(&mut || {
            latency::random_read(buf, reads, 1);
        }));
        baseline_dual_ns.push(time(&mut || {
            latency::random_dual_read(buf, reads, 1);
        }));
    }
    let mut rows = Vec::new();
    let mut nbits = 10;
    while 1u64 << nbits <= max {
        let block = 1usize << nbits;
        let mut row = LatencyRow {
            block_bytes: block as u64,
            single_ns: Vec::new(),
            dual_ns: Vec::new(),
        };
        for _ in 0..repeats {
            let at = rng.below(len / block) * block;
            let sub = &buf[at..at + block];
            row.single_ns.push(time(&mut || {
                latency::random_read(sub, reads, nbits);
            }));
            row.dual_ns.push(time(&mut || {
                latency::random_dual_read(sub, reads, nbits);
            }));
        }
        rows.push(row);
        nbits += 1;
    }
    Ok(LatencyTable {
        pages,
        core,
        reads,
        baseline_ns,
        baseline_dual_ns,
        rows,
    })
}

/// `madvise(MADV_HUGEPAGE)` (or `MADV_NOHUGEPAGE` for the base-page table, as
/// tinymembench: with THP `always` the kernel would otherwise use huge pages anyway) over
/// the buffer, before its pages are first touched.
fn advise(buf: &mut [std::mem::MaybeUninit<u8>], huge: bool) -> Result<(), String> {
    #[cfg(not(target_os = "linux"))]
    {
        // Base pages are all there is; huge pages are Linux's THP.
        let _ = buf;
        if huge {
            Err("latency with huge pages not run: transparent huge pages are Linux's".into())
        } else {
            Ok(())
        }
    }
    #[cfg(target_os = "linux")]
    {
        match (crate::sys::advise_huge_pages(buf, huge), huge) {
            (Ok(()), _) => Ok(()),
            (Err(e), true) => Err(format!(
                "latency with huge pages not run: madvise(MADV_HUGEPAGE): {e}"
            )),
            // A kernel without THP refuses NOHUGEPAGE: base pages are all it has.
            (Err(_), false) => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tiny plan on this machine: every kernel ran with bytes and ns, the latency
    /// table covers 1 KiB .. the largest block with a repeat each, the clock was read
    /// twice. (The figures themselves belong to benchmarks.)
    #[test]
    fn a_short_run_measures_every_kernel_and_every_block() {
        let plan = MemoryPlan {
            sample_ms: 1,
            samples: 2,
            latency_max_bytes: 64 << 10,
            latency_reads: 2000,
            latency_repeats: 2,
            huge_pages: false,
            per_core: true,
            time_limit_ms: 60_000,
            buffer_bytes: Some(1 << 20),
        };
        let o = run(&plan, Path::new("/proc"), Path::new("/sys"));
        let r = &o.results;
        assert!(r.problems.is_empty(), "{:?}", r.problems);
        assert_eq!(
            r.cpu.kernels.len(),
            kernels::all()
                .iter()
                .filter(|k| k.runs_on(&r.cpu.features))
                .count()
        );
        let one: Vec<_> = r
            .bandwidth
            .iter()
            .filter(|t| matches!(t.cores, Cores::One(c) if c == cpu::allowed_cpus()[0]))
            .collect();
        assert_eq!(one.len(), r.cpu.kernels.len());
        for t in &r.bandwidth {
            assert_eq!(t.samples.len(), 2, "{}", t.kernel);
            assert!(t.samples.iter().all(|s| s.bytes > 0 && s.ns > 0), "{t:?}");
        }
        if r.cpu.cores > 1 {
            assert!(r
                .bandwidth
                .iter()
                .any(|t| t.cores == Cores::All(r.cpu.cores)));
        }
        let lat = &r.latency[0];
        let blocks: Vec<u64> = lat.rows.iter().map(|r| r.block_bytes).collect();
        assert_eq!(
            blocks,
            [
                1 << 10,
                2 << 10,
                4 << 10,
                8 << 10,
                16 << 10,
                32 << 10,
                64 << 10
            ]
        );
        assert!(lat
            .rows
            .iter()
            .all(|r| r.single_ns.len() == 2 && r.dual_ns.len() == 2));
        assert_eq!(o.clock_checks.len(), 2);
        assert_eq!(o.clock_checks[0].at, "before-memory");
    }

    #[test]
    fn a_wrong_copy_or_fill_is_a_problem_naming_the_byte() {
        let mut src = Buffer::new(4096, 0);
        src.stamp(1);
        let mut dst = Buffer::new(4096, 64);
        let memcpy = kernels::all()
            .iter()
            .find(|k| k.id == "libc-memcpy")
            .unwrap();
        memcpy.run(dst.bytes_mut(), src.bytes());
        assert_eq!(check_pass(memcpy, &src, &dst), None);
        dst.bytes_mut()[777] ^= 1;
        let p = check_pass(memcpy, &src, &dst).unwrap();
        assert!(p.contains("byte 777"), "{p}");
        let memset = kernels::all()
            .iter()
            .find(|k| k.id == "libc-memset")
            .unwrap();
        memset.run(dst.bytes_mut(), &[]);
        assert_eq!(check_pass(memset, &src, &dst), None);
        dst.bytes_mut()[0] = 0;
        assert!(check_pass(memset, &src, &dst).unwrap().contains("byte 0"));
    }
}
