//! The context as a two-column table.

use super::interrupts::interrupt_words;
use super::Context;
use crate::doc::Grid;

const NOT_RECORDED: &str = "not recorded";

/// The context as a two-column table.
pub fn context_grid(c: &Context) -> Grid {
    let mut g = Grid::new(vec!["context".into(), "value".into()]);
    g.left_columns = 2;
    let opt = |v: Option<String>| v.unwrap_or_else(|| NOT_RECORDED.into());
    let rows: Vec<(&str, String)> = vec![
        ("board", c.board.clone()),
        ("run", c.run_id.clone()),
        (
            "hardware",
            if c.emulated {
                "EMULATED (QEMU), not a hardware result".into()
            } else if c.host_run {
                format!("this computer ({}), not a board", c.host_command)
            } else {
                "real board".into()
            },
        ),
        ("kernel", c.kernel_release.clone()),
        ("machine", c.machine.clone()),
        ("memory", format!("{} MiB", c.mem_total_bytes >> 20)),
        (
            "cpufreq governor",
            match (&c.governor, &c.governor_asked) {
                (Some(g), _) => g.clone(),
                (None, Some(asked)) => format!("none (no cpufreq; the plan asked for {asked})"),
                (None, None) => "none (no cpufreq)".into(),
            },
        ),
        (
            "CPU clock",
            opt(c.cpu_clock_hz.map(|lo| {
                let mhz = |hz: u64| format!("{:.0}", hz as f64 / 1e6);
                let hi = c.cpu_clock_max_hz.unwrap_or(lo);
                let range = if hi == lo {
                    mhz(lo)
                } else {
                    format!("{}–{}", mhz(lo), mhz(hi))
                };
                let source = c
                    .cpu_clock_source
                    .as_deref()
                    .map_or(String::new(), |s| format!(" ({s})"));
                format!("{range} MHz{source}")
            })),
        ),
        (
            "temperature",
            opt(c.temperature_millicelsius.map(|hi| {
                let deg = |m: i64| format!("{:.1}", m as f64 / 1000.0);
                match c.temperature_min_millicelsius {
                    Some(lo) if lo != hi => format!("{}–{} °C", deg(lo), deg(hi)),
                    _ => format!("{} °C", deg(hi)),
                }
            })),
        ),
        ("throttling / under-voltage", opt(c.throttled.clone())),
        ("isolation", opt(c.isolation.clone())),
    ];
    let mut rows: Vec<(String, String)> =
        rows.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
    // Which health facts are real (and from where) and which unknown (and why), after
    // the throttle summary.
    let at = rows
        .iter()
        .position(|(k, _)| k == "isolation")
        .unwrap_or(rows.len());
    rows.splice(at..at, c.health_facts.iter().cloned());
    if c.interrupts.is_empty() {
        rows.push((
            "interrupts".into(),
            match &c.interrupts_unavailable {
                Some(why) => format!("not readable ({why})"),
                None => NOT_RECORDED.into(),
            },
        ));
    }
    for card in &c.cards {
        rows.push(("card (its registers)".into(), card.clone()));
    }
    if let Some(card) = &c.boot_card {
        rows.push(("boot card".into(), card.clone()));
    }
    if let Some(boot) = &c.boot {
        rows.push(("boot time by stage".into(), boot.clone()));
    }
    if let Some(check) = &c.card_check {
        rows.push(("card check".into(), check.clone()));
    }
    for g in &c.interrupts {
        rows.push((format!("interrupts during {}", g.group), interrupt_words(g)));
    }
    rows.push(("kernel command line".into(), opt(c.kernel_cmdline.clone())));
    rows.push((
        "modules".into(),
        opt(c.modules.as_ref().map(|m| {
            if m.is_empty() {
                "none loaded".into()
            } else {
                format!("{} loaded: {}", m.len(), m.join(", "))
            }
        })),
    ));
    let tail: Vec<(&str, String)> = vec![
        ("results schema", c.schema_version.clone()),
        ("run length", run_length(c)),
        (
            "complete",
            if c.complete {
                "yes".into()
            } else {
                "NO: not every step ran".into()
            },
        ),
    ];
    rows.extend(tail.into_iter().map(|(k, v)| (k.to_owned(), v)));
    for (k, v) in rows {
        g.push(vec![k, v]);
    }
    g
}

/// The run's length in words: from PID 1's start on a board; a host run
/// (`benchboot storage` or `benchboot memory`) says so and which command, timed from the
/// command's start when recorded.
pub fn run_length(c: &Context) -> String {
    match (c.host_run, c.run_seconds > 0.0) {
        (false, _) => format!("{:.1} s from PID 1 start", c.run_seconds),
        (true, true) => format!(
            "{:.1} s, a host run ({}), not timed from PID 1 start",
            c.run_seconds, c.host_command
        ),
        (true, false) => format!(
            "not recorded: a host run ({}), no PID 1 start",
            c.host_command
        ),
    }
}
