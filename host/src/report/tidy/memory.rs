//! The memory step and the clock checks as tidy rows: every bandwidth sample (raw bytes
//! and ns beside MB/s), each test's best and spread, each latency row and the L1
//! baseline, each clock check. Sections and columns: [`super::TidyRow`].

use benchboot_results::memory::MemOp;
use benchboot_results::{mib_per_s, HealthScope, RunResults};

use super::TidyRow;
use crate::render::memory::{cores_id, fastest_per_read_ns, pages_id};

/// `copy`, `fill`, `read`.
pub fn op_name(op: MemOp) -> &'static str {
    match op {
        MemOp::Copy => "copy",
        MemOp::Fill => "fill",
        MemOp::Read => "read",
    }
}

/// The memory and clock rows of `r`, in the document's order.
pub fn memory_rows(r: &RunResults) -> Vec<TidyRow> {
    let mut out = Vec::new();
    if let Some(m) = &r.memory {
        for t in &m.bandwidth {
            let row = |section: &str| {
                let mut row =
                    TidyRow::new(r, section, &cores_id(t.cores)).health(r, HealthScope::Memory);
                row.mode = t.kernel.clone();
                row.direction = op_name(t.op).into();
                row.note = t.label.clone();
                row
            };
            for (i, s) in t.samples.iter().enumerate() {
                let mut x = row("memory-sample");
                x.repetition = Some(i as u32);
                x.bytes = Some(s.bytes);
                x.ns = s.ns;
                x.mb_per_s = Some(s.mb_per_s());
                x.mib_per_s = Some(mib_per_s(s.bytes, s.ns));
                out.push(x);
            }
            let mut x = row("memory-bandwidth");
            if let Some((best, spread)) = t.best_and_spread() {
                x.mb_per_s = Some(best);
                x.spread_pct = Some(spread);
            }
            out.push(x);
        }
        for t in &m.latency {
            let row = || {
                let mut row = TidyRow::new(r, "memory-latency", pages_id(t.pages))
                    .health(r, HealthScope::Memory);
                row.reads = Some(t.reads);
                row.note = format!("CPU {}", t.core);
                row
            };
            let mut base = row();
            base.direction = "baseline".into();
            base.block_size_bytes = Some(2);
            base.ns = t.baseline_ns.iter().copied().min().unwrap_or(0);
            base.single_ns_per_read = t.baseline_per_read();
            base.note = format!(
                "CPU {}: L1 baseline, the same loop over 2 bytes, subtracted from every row",
                t.core
            );
            out.push(base);
            for lr in &t.rows {
                let mut x = row();
                x.block_size_bytes = Some(lr.block_bytes);
                x.ns = lr.single_ns.iter().copied().min().unwrap_or(0);
                // QEMU's TCG models no caches: no latency over L1 to give.
                if let Some((single, dual)) = t.extra_ns(lr).filter(|_| !r.emulated) {
                    x.latency_single_ns = Some(single);
                    x.latency_dual_ns = Some(dual);
                }
                x.single_ns_per_read = fastest_per_read_ns(&lr.single_ns, t.reads);
                x.dual_ns_per_read = fastest_per_read_ns(&lr.dual_ns, t.reads);
                out.push(x);
            }
        }
    }
    for c in &r.clock_checks {
        let mut x = TidyRow::new(r, "clock", &c.at);
        x.measured_mhz = Some(benchboot_results::figures::clock(c).value);
        x.cpufreq_mhz = c.cpufreq_khz.map(|k| k as f64 / 1e3);
        x.firmware_mhz = c.firmware_hz.map(|h| h as f64 / 1e6);
        x.note = c.mismatches().join("; ");
        out.push(x);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::{from_csv, rows, to_csv};
    use crate::render::memory::tests::memory_run;

    #[test]
    fn memory_rows_keep_samples_best_spread_latency_and_clock() {
        let r = memory_run();
        let all = rows(&r);
        let mem: Vec<_> = all
            .iter()
            .filter(|x| x.section.starts_with("memory-") || x.section == "clock")
            .collect();
        // 3 + 1 + 2 samples, 3 tests, 2 + 1 latency rows with 2 baselines, 2 clocks.
        assert_eq!(mem.len(), 6 + 3 + 5 + 2);
        let samples: Vec<_> = mem
            .iter()
            .filter(|x| x.section == "memory-sample" && x.mode == "libc-memcpy")
            .collect();
        assert_eq!(samples.len(), 3);
        assert_eq!(
            (samples[0].target.as_str(), samples[0].direction.as_str()),
            ("cpu0", "copy")
        );
        assert_eq!(
            (samples[1].bytes, samples[1].ns),
            (Some(360_000), 1_000_000)
        );
        assert_eq!(samples[1].mb_per_s, Some(360.0));
        assert!((samples[1].mib_per_s.unwrap() - 360_000.0 / 1.048_576 / 1e3).abs() < 1e-9);
        let best = mem
            .iter()
            .find(|x| x.section == "memory-bandwidth" && x.mode == "libc-memcpy")
            .unwrap();
        assert_eq!(best.mb_per_s, Some(400.0));
        assert!((best.spread_pct.unwrap() - 10.0).abs() < 1e-9);
        assert_eq!(best.note, "standard memcpy");
        let lat = mem
            .iter()
            .find(|x| {
                x.section == "memory-latency"
                    && x.target == "base"
                    && x.block_size_bytes == Some(64 << 20)
            })
            .unwrap();
        assert_eq!(
            (lat.latency_single_ns, lat.latency_dual_ns),
            (Some(284.0), Some(146.0))
        );
        assert_eq!(
            (
                lat.single_ns_per_read,
                lat.dual_ns_per_read,
                lat.reads,
                lat.ns
            ),
            (Some(288.0), Some(150.0), Some(1000), 288_000)
        );
        let base = mem
            .iter()
            .find(|x| x.section == "memory-latency" && x.direction == "baseline")
            .unwrap();
        assert_eq!(base.single_ns_per_read, Some(4.0));
        let clock = mem.iter().find(|x| x.section == "clock").unwrap();
        assert_eq!(
            (
                clock.target.as_str(),
                clock.measured_mhz,
                clock.cpufreq_mhz,
                clock.firmware_mhz
            ),
            ("before-memory", Some(700.0), Some(1000.0), Some(699.0))
        );
        assert!(clock
            .note
            .contains("cpufreq says 1000 MHz, measured 700 MHz"));
        let text = to_csv(&all).unwrap();
        assert_eq!(from_csv(&text).unwrap(), all);
        assert!(text.lines().next().unwrap().ends_with(
            ",spread_pct,reads,latency_single_ns,latency_dual_ns,single_ns_per_read,\
             dual_ns_per_read,measured_mhz,cpufreq_mhz,firmware_mhz,metric,figure,value,units,\
             param"
        ));
    }
}
