//! One "not run" line per section a run lacks, with the reason its document gives: not in
//! the plan, or the first fault or error/warning event of the section's steps, or the run
//! stopping early. Nothing is guessed: without a reason the line says the document
//! records none.

use benchboot_results::{RunResults, Severity};

/// A section of the report: its name, whether the plan asked for it, whether the
/// document holds its results, and the step id prefixes of its faults and events.
struct Section {
    name: &'static str,
    planned: bool,
    ran: bool,
    steps: &'static [&'static str],
}

/// `not run: <section>: <reason>`, one per section of the plan's steps the document has
/// no results for, in the order PID 1 runs them (memory, storage, random I/O, the card
/// check, the USB gadget, wired and WiFi network).
pub fn not_run_lines(r: &RunResults) -> Vec<String> {
    let p = &r.plan;
    let n = &r.network;
    let gadget = p.network.gadget.as_ref();
    let sections = [
        Section {
            name: "memory",
            planned: p.memory.is_some(),
            ran: r.memory.is_some(),
            steps: &["memory"],
        },
        Section {
            name: "storage",
            planned: !p.storage.targets.is_empty(),
            ran: !r.storage.is_empty(),
            steps: &["storage", "mount"],
        },
        Section {
            name: "random I/O",
            planned: p.storage.random.is_some(),
            ran: !r.random.is_empty(),
            steps: &["random"],
        },
        Section {
            name: "card check",
            planned: p.card_check.is_some(),
            ran: r.card_check.is_some(),
            steps: &["card-check"],
        },
        Section {
            name: "network over the USB gadget",
            planned: gadget.is_some(),
            ran: gadget.is_some_and(|g| {
                n.throughput
                    .iter()
                    .any(|t| g.functions.iter().any(|f| f.configfs_type() == t.link))
            }),
            steps: &["gadget", "network.gadget"],
        },
        Section {
            name: "wired network",
            planned: !p.network.wired.is_empty(),
            ran: !n.wired.is_empty(),
            steps: &["network.wired"],
        },
        Section {
            name: "WiFi",
            planned: p.network.wifi.is_some(),
            ran: !n.wifi.entries.is_empty() || !n.wifi.checks.is_empty(),
            steps: &["network.wifi", "wifi"],
        },
    ];
    sections
        .iter()
        .filter(|s| !s.ran)
        .map(|s| format!("not run: {}: {}", s.name, reason(r, s)))
        .collect()
}

/// Why `s` has no results, from the document.
fn reason(r: &RunResults, s: &Section) -> String {
    if !s.planned {
        return "not in the plan".into();
    }
    let ours = |step: &str| {
        s.steps
            .iter()
            .any(|p| step == *p || step.starts_with(&format!("{p}.")))
    };
    if let Some(f) = r.faults.iter().find(|f| ours(&f.step)) {
        return format!("{}: {}", f.step, f.failure);
    }
    for severity in [Severity::Error, Severity::Warning] {
        if let Some(e) = r
            .events
            .iter()
            .find(|e| e.severity == severity && ours(&e.step))
        {
            return format!("{}: {}", e.step, e.message);
        }
    }
    if r.complete {
        "in the plan, but the document records no result and no reason".into()
    } else {
        "the run stopped before it (the document is partial)".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(path: &str) -> RunResults {
        RunResults::from_json(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    /// The Zero W under QEMU (schema 1.1): its plan has no memory step, card check or
    /// network test; the QEMU virt run ran every section it planned.
    #[test]
    fn each_missing_section_is_named_once_with_the_documents_reason() {
        let zero = run("tests/data/rpi-zero-w-qemu.json");
        let lines = not_run_lines(&zero);
        assert_eq!(
            lines,
            [
                "not run: memory: not in the plan",
                "not run: card check: not in the plan",
                "not run: network over the USB gadget: not in the plan",
                "not run: wired network: not in the plan",
                "not run: WiFi: not in the plan",
            ]
        );
        let mut virt = run("tests/data/qemu-virt-arm64-1.13.json");
        assert_eq!(not_run_lines(&virt), Vec::<String>::new());
        // The memory step planned, its results gone, an error event on it: that is why.
        virt.memory = None;
        virt.events.push(benchboot_results::Event {
            step: "memory".into(),
            severity: Severity::Error,
            message: "worker killed".into(),
        });
        assert_eq!(
            not_run_lines(&virt),
            ["not run: memory: memory: worker killed"]
        );
        virt.events.pop();
        virt.complete = false;
        assert_eq!(
            not_run_lines(&virt),
            ["not run: memory: the run stopped before it (the document is partial)"]
        );
    }
}
