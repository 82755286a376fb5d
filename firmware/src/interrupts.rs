//! Interrupt counts per source from `/proc/interrupts`, and what each source raised
//! during a step ([`deltas`]); [`crate::health`] takes a snapshot with every health
//! snapshot and records the difference with the step.
//!
//! The format (kernel/irq/proc.c `show_interrupts`, arch `show_ipi_list` /
//! `arch_show_interrupts`): a header naming the online CPUs (`CPU0 CPU1 ...`), then one
//! row per source: `ID:`, one count per CPU (`%10u`), then a description. For a
//! numbered IRQ the description is the chip name, the hardware IRQ number, the trigger
//! (`Edge`/`Level`), an optional `-name` and the action names joined by `, `
//! (` 104:  1733946  1740265  ARMCTRL-level  94 Edge      mmc1`); for a named row
//! (`IPI0:`, `Err:`, x86's `LOC:`) it is free text (`Rescheduling interrupts`) or
//! nothing. `Err:` has a single count, and the Raspberry Pi kernel's `FIQ:` row none.
//!
//! Nothing here panics; reading is the only I/O ([`read`]).

use std::path::Path;

use benchboot_results::{InterruptDelta, Reading};

/// Where the counts are.
pub const PROC_INTERRUPTS: &str = "/proc/interrupts";

/// One row of `/proc/interrupts`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    /// What is left of the colon: `104`, `IPI0`, `Err`.
    pub id: String,
    /// The IRQ's action names (`mmc1`, `dwc_otg, dwc_otg_pcd, dwc_otg_hcd:usb1`) or the
    /// named row's description; empty when there is none.
    pub name: String,
    /// The count of each CPU, in header order.
    pub per_cpu: Vec<u64>,
}

impl Source {
    /// The count over all CPUs.
    pub fn total(&self) -> u64 {
        self.per_cpu.iter().fold(0u64, |a, &c| a.saturating_add(c))
    }

    /// How the source is named in the results: id and name (`104 mmc1`).
    pub fn label(&self) -> String {
        if self.name.is_empty() {
            self.id.clone()
        } else {
            format!("{} {}", self.id, self.name)
        }
    }
}

/// `/proc/interrupts` at one moment.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Counts {
    /// How many CPU columns the header names.
    pub cpus: usize,
    pub sources: Vec<Source>,
}

fn is_count(t: &str) -> bool {
    !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit())
}

/// A hardware IRQ number, possibly with a `-name` glued to it (x86: `2-edge`).
fn is_hwirq(t: &str) -> bool {
    t.split('-').next().is_some_and(is_count)
}

/// The action names of a numbered IRQ's description tokens (chip, hwirq, trigger,
/// `-name`, actions); the whole description when that layout is not recognised.
fn actions(desc: &[&str]) -> String {
    let start = if let Some(k) = desc
        .iter()
        .skip(1)
        .position(|t| *t == "Edge" || *t == "Level")
    {
        k + 2
    } else if let Some(j) = desc.iter().skip(1).position(|t| is_hwirq(t)) {
        j + 2
    } else {
        1
    };
    let rest: Vec<&str> = desc
        .iter()
        .skip(start)
        .skip_while(|t| t.starts_with('-'))
        .copied()
        .collect();
    if rest.is_empty() {
        desc.join(" ")
    } else {
        rest.join(" ")
    }
}

/// Parses the text of `/proc/interrupts`. Rows without a count (the Raspberry Pi's
/// `FIQ:`) are left out.
///
/// # Errors
/// No CPU header, or a row that is not `ID: counts...`.
pub fn parse(text: &str) -> Result<Counts, String> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header = lines.next().ok_or("/proc/interrupts: empty")?;
    let cpus = header
        .split_whitespace()
        .filter(|t| t.starts_with("CPU"))
        .count();
    if cpus == 0 {
        return Err(format!(
            "/proc/interrupts: no CPU header, first line {:?}",
            header.trim()
        ));
    }
    let mut sources = Vec::new();
    for line in lines {
        let Some((id, rest)) = line.split_once(':') else {
            return Err(format!("/proc/interrupts: no `ID:` in {:?}", line.trim()));
        };
        let id = id.trim();
        if id.is_empty() || id.contains(char::is_whitespace) {
            return Err(format!("/proc/interrupts: bad row {:?}", line.trim()));
        }
        let tokens: Vec<&str> = rest.split_whitespace().collect();
        let n = tokens.iter().take(cpus).take_while(|t| is_count(t)).count();
        let per_cpu: Vec<u64> = tokens[..n]
            .iter()
            .map(|t| t.parse::<u64>().unwrap_or(u64::MAX))
            .collect();
        if per_cpu.is_empty() {
            continue;
        }
        let desc = &tokens[n..];
        let name = if is_count(id) {
            actions(desc)
        } else {
            desc.join(" ")
        };
        sources.push(Source {
            id: id.to_owned(),
            name,
            per_cpu,
        });
    }
    Ok(Counts { cpus, sources })
}

/// Reads and parses `path` (normally [`PROC_INTERRUPTS`]).
///
/// # Errors
/// The file does not read or does not parse (the message names the file).
pub fn read(path: &Path) -> Result<Counts, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse(&text)
}

/// What each source raised between `before` and `after`, summed over the CPUs: only
/// sources whose count went up, most first (then by name). Sources are matched by id;
/// one that appeared meanwhile counts from zero. A count that went down (a CPU taken
/// offline, or a 32-bit per-CPU counter that wrapped) gives no figure rather than a
/// wrong one.
pub fn deltas(before: &Counts, after: &Counts) -> Vec<InterruptDelta> {
    let mut out: Vec<InterruptDelta> = after
        .sources
        .iter()
        .filter_map(|a| {
            let was = before
                .sources
                .iter()
                .find(|b| b.id == a.id)
                .map_or(0, Source::total);
            let count = a.total().checked_sub(was)?;
            (count > 0).then(|| InterruptDelta {
                source: a.label(),
                count,
            })
        })
        .collect();
    out.sort_by(|x, y| y.count.cmp(&x.count).then_with(|| x.source.cmp(&y.source)));
    out
}

/// The step's record from two snapshots: the deltas, or why there are none.
pub fn reading(
    before: &Result<Counts, String>,
    after: &Result<Counts, String>,
) -> Reading<Vec<InterruptDelta>> {
    match (before, after) {
        (Ok(b), Ok(a)) => Reading::ok(deltas(b, a), PROC_INTERRUPTS),
        (Err(e), _) | (_, Err(e)) => Reading::unavailable(e.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Raspberry Pi 3 Model B+ (4 CPUs, Raspberry Pi OS arm64 kernel), captured with
    /// `cat /proc/interrupts` and published in a public note on the BCM2837's interrupt
    /// controller (github, "深入interrupt"): spaces in action names, several actions on
    /// one IRQ, arm64's IPI rows and `Err:`.
    const RPI3: &str = "           CPU0       CPU1       CPU2       CPU3       
  2:     107189     110558     113604     113174  ARMCTRL-level   1 Edge      3f00b880.mailbox
  3:         18         18         14         21  ARMCTRL-level   2 Edge      VCHIQ doorbell
 51:  792383976  793672817  791913292  792162162  ARMCTRL-level  41 Edge      dwc_otg_sim-fiq
 52:          0          0          0          0  ARMCTRL-level  42 Edge      vc4
 53:          0          0          0          0  ARMCTRL-level  43 Edge      3f004000.txp
 60:      29640      29651      29667      29713  ARMCTRL-level  50 Edge      DMA IRQ
 62:      51926      52114      51816      50851  ARMCTRL-level  52 Edge      DMA IRQ
 63:          0          0          0          0  ARMCTRL-level  53 Edge      DMA IRQ
 71:         10          8          9          8  ARMCTRL-level  61 Edge      ttyS0
 74:   98197172  100443173   99321480  101939170  ARMCTRL-level  64 Edge      dwc_otg, dwc_otg_pcd, dwc_otg_hcd:usb1
 75:          0          0          1          0  ARMCTRL-level  65 Edge      vc4 hvs
 82:          0          0          0          0  ARMCTRL-level  72 Edge      vc4 hdmi cec
 84:          0          0          0          0  ARMCTRL-level  74 Edge      vc4 crtc
 87:          0          0          0          0  ARMCTRL-level  77 Edge      vc4 crtc
 88:          0          0          0          0  ARMCTRL-level  78 Edge      vc4 crtc
 95:          0          0          0          0  ARMCTRL-level  85 Edge      3f805000.i2c
 98:      49431      50092      50171      49729  ARMCTRL-level  88 Edge      mmc0
 99:       2005       2014       2064       2047  ARMCTRL-level  89 Edge      uart-pl011
104:    1733946    1740265    1739472    1738600  ARMCTRL-level  94 Edge      mmc1
180:   14600180   23629592   16062972   14829076  bcm2836-timer   1 Edge      arch_timer
181:          0          0          0          0  bcm2836-timer   3 Edge      kvm guest vtimer
183:          0          0          0          0  bcm2836-pmu   9 Edge      arm-pmu
184:          0          0          0          0  lan78xx-irqs  17 Edge      usb-001:006:01
185:          7         11         15          9  pinctrl-bcm2835  25 Edge      enter_button
IPI0:      5598       9670       9844       9784       Rescheduling interrupts
IPI1:   9309097    3482670    7519637    9247127       Function call interrupts
IPI2:         0          0          0          0       CPU stop interrupts
IPI3:         0          0          0          0       CPU stop (for crash dump) interrupts
IPI4:         0          0          0          0       Timer broadcast interrupts
IPI5:    392008    1720717     438997     442554       IRQ work interrupts
IPI6:         0          0          0          0       CPU wake-up interrupts
Err:          0
";

    /// A QEMU `virt` arm64 guest with 2 CPUs (GICv2 printed as `GIC-0`, virtio-net on
    /// MSI, the PL061 GPIO controller as a chip), from a public IRQ debugging note.
    const QEMU_VIRT: &str = "           CPU0       CPU1
 11:        261        256 GIC-0  27 Level     arch_timer
 13:         16          0 GIC-0  33 Level     uart-pl011
 16:          0          0       MSI 16384 Edge      virtio0-config
 17:          0          0       MSI 16385 Edge      virtio0-input.0
 18:          0          0       MSI 16386 Edge      virtio0-output.0
 19:          0          0 GIC-0  34 Level     rtc-pl031
 20:        119          0 GIC-0  37 Level     mmc0
 21:          0          0 GIC-0  23 Level     arm-pmu
 22:          0          0 9030000.pl061   3 Edge      GPIO Key Poweroff
IPI0:        27         30       Rescheduling interrupts
IPI1:       201        266       Function call interrupts
IPI2:         0          0       CPU stop interrupts
IPI3:         0          0       CPU stop (for crash dump) interrupts
IPI4:         0          0       Timer broadcast interrupts
IPI5:         0          0       IRQ work interrupts
IPI6:         0          0       CPU wake-up interrupts
Err:          0
";

    /// A single-CPU 32-bit ARM guest (QEMU vexpress-a9, Linux 6.x, arch/arm's IPI rows),
    /// quoted in a linux-kernel patch ("ARM: smp: Fix missing backtrace IPI statics").
    const QEMU_VEXPRESS: &str = "           CPU0
 24:          6 GIC-0  34 Level     timer
 25:        455 GIC-0  29 Level     twd
 26:         42 GIC-0  75 Edge      virtio0
 32:          0 GIC-0  41 Level     mmci-pl18x (cmd)
 39:         15 GIC-0  37 Level     uart-pl011
IPI0:          0  CPU wakeup interrupts
IPI2:          0  Rescheduling interrupts
Err:          0
";

    /// A Raspberry Pi 1 (Linux 3.x, no interrupt domain: no hwirq, no trigger) with the
    /// FIQ row that has no count, from a public bug report (bosun-monitor/bosun#647).
    const RPI1_OLD: &str = "           CPU0       
  3:     119269   ARMCTRL  BCM2708 Timer Tick
 32:     132561   ARMCTRL  dwc_otg, dwc_otg_pcd, dwc_otg_hcd:usb1
 75:          1   ARMCTRL
 84:      31039   ARMCTRL  mmc0
FIQ:              usb_fiq
Err:          0
";

    fn find<'a>(c: &'a Counts, id: &str) -> &'a Source {
        c.sources.iter().find(|s| s.id == id).unwrap()
    }

    #[test]
    fn raspberry_pi_3_four_cpus_with_ipi_and_err_rows() {
        let c = parse(RPI3).unwrap();
        assert_eq!(c.cpus, 4);
        assert_eq!(c.sources.len(), 32);
        let mmc1 = find(&c, "104");
        assert_eq!(mmc1.per_cpu, [1733946, 1740265, 1739472, 1738600]);
        assert_eq!(mmc1.total(), 6_952_283);
        assert_eq!(mmc1.label(), "104 mmc1");
        assert_eq!(find(&c, "3").label(), "3 VCHIQ doorbell");
        assert_eq!(
            find(&c, "74").label(),
            "74 dwc_otg, dwc_otg_pcd, dwc_otg_hcd:usb1"
        );
        assert_eq!(find(&c, "180").label(), "180 arch_timer");
        assert_eq!(find(&c, "181").label(), "181 kvm guest vtimer");
        assert_eq!(find(&c, "185").label(), "185 enter_button");
        assert_eq!(find(&c, "IPI1").label(), "IPI1 Function call interrupts");
        assert_eq!(
            find(&c, "IPI3").label(),
            "IPI3 CPU stop (for crash dump) interrupts"
        );
        assert_eq!(find(&c, "IPI5").total(), 392008 + 1720717 + 438997 + 442554);
        let err = find(&c, "Err");
        assert_eq!(
            (err.per_cpu.as_slice(), err.label().as_str()),
            (&[0][..], "Err")
        );
    }

    #[test]
    fn qemu_virt_guest_two_cpus() {
        let c = parse(QEMU_VIRT).unwrap();
        assert_eq!(c.cpus, 2);
        assert_eq!(c.sources.len(), 17);
        assert_eq!(find(&c, "11").label(), "11 arch_timer");
        assert_eq!(find(&c, "11").total(), 517);
        assert_eq!(find(&c, "17").label(), "17 virtio0-input.0");
        // A chip name starting with a digit, an action with spaces.
        assert_eq!(find(&c, "22").label(), "22 GPIO Key Poweroff");
        assert_eq!(find(&c, "IPI0").label(), "IPI0 Rescheduling interrupts");
        assert_eq!(find(&c, "Err").per_cpu, [0]);
    }

    #[test]
    fn single_cpu_and_old_kernels() {
        let c = parse(QEMU_VEXPRESS).unwrap();
        assert_eq!(c.cpus, 1);
        assert_eq!(find(&c, "32").label(), "32 mmci-pl18x (cmd)");
        assert_eq!(find(&c, "IPI2").label(), "IPI2 Rescheduling interrupts");
        let c = parse(RPI1_OLD).unwrap();
        assert_eq!(find(&c, "3").label(), "3 BCM2708 Timer Tick");
        assert_eq!(
            find(&c, "32").label(),
            "32 dwc_otg, dwc_otg_pcd, dwc_otg_hcd:usb1"
        );
        // No action: the description stands in.
        assert_eq!(find(&c, "75").label(), "75 ARMCTRL");
        assert!(c.sources.iter().all(|s| s.id != "FIQ"), "no count, no row");
        assert_eq!(find(&c, "Err").total(), 0);
    }

    #[test]
    fn x86_rows_parse_too() {
        // The host's own format (tests run there): hwirq glued to `-edge`.
        let text = "            CPU0       CPU1
   0:         13          0   IO-APIC   2-edge      timer
  25:          7          0  IR-PCI-MSI 81920-edge      PCIe PME, aerdrv, pciehp
 NMI:          0          0   Non-maskable interrupts
 ERR:          0
";
        let c = parse(text).unwrap();
        assert_eq!(find(&c, "0").label(), "0 timer");
        assert_eq!(find(&c, "25").label(), "25 PCIe PME, aerdrv, pciehp");
        assert_eq!(find(&c, "NMI").label(), "NMI Non-maskable interrupts");
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(parse("").is_err());
        assert!(parse("hello\n").unwrap_err().contains("no CPU header"));
        assert!(parse("  CPU0\nno colon here\n").is_err());
        assert!(parse("  CPU0\n : 5\n").is_err());
        // Counts beyond u64 saturate instead of failing.
        let c = parse("  CPU0\n 1: 99999999999999999999999 x 1 Edge y\n").unwrap();
        assert_eq!(c.sources[0].total(), u64::MAX);
        // More counts than CPUs: the extra ones are description.
        let c = parse("  CPU0\n 1: 5 6 chip 3 Edge dev\n").unwrap();
        assert_eq!(c.sources[0].per_cpu, [5]);
    }

    #[test]
    fn deltas_keep_what_changed_most_first() {
        let before = parse(QEMU_VIRT).unwrap();
        let mut after = before.clone();
        let mut bump = |id: &str, cpu: usize, by: u64| {
            let s = after.sources.iter_mut().find(|s| s.id == id).unwrap();
            s.per_cpu[cpu] += by;
        };
        bump("11", 0, 500);
        bump("11", 1, 480);
        bump("20", 0, 12_345);
        bump("IPI0", 1, 3);
        after.sources.push(Source {
            id: "40".into(),
            name: "dwc2_hsotg:usb1".into(),
            per_cpu: vec![2, 0],
        });
        let d = deltas(&before, &after);
        let got: Vec<(&str, u64)> = d.iter().map(|d| (d.source.as_str(), d.count)).collect();
        assert_eq!(
            got,
            [
                ("20 mmc0", 12_345),
                ("11 arch_timer", 980),
                ("IPI0 Rescheduling interrupts", 3),
                ("40 dwc2_hsotg:usb1", 2),
            ]
        );
        assert!(deltas(&before, &before).is_empty());
        // A count that went down gives no figure.
        assert!(deltas(&after, &before).is_empty());
    }

    #[test]
    fn reading_says_why_when_a_snapshot_failed() {
        let ok = parse(QEMU_VIRT);
        let bad: Result<Counts, String> = Err("/proc/interrupts: No such file".into());
        assert_eq!(reading(&ok, &ok), Reading::ok(vec![], PROC_INTERRUPTS));
        assert_eq!(
            reading(&ok, &bad),
            Reading::unavailable("/proc/interrupts: No such file")
        );
        assert!(read(Path::new("/nonexistent/interrupts"))
            .unwrap_err()
            .contains("/nonexistent/interrupts"));
    }
}
