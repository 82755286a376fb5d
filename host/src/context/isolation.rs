//! The context's isolation proof: the census verdict over the run in words.

use benchboot_results::RunResults;

/// The census verdict over the run in words; `None` without a census.
pub(super) fn isolation_summary(r: &RunResults) -> Option<String> {
    let iso = r.isolation();
    if iso.censuses == 0 {
        return None;
    }
    let at = if iso.censuses == 1 {
        "at the 1 census".to_owned()
    } else {
        format!("at all {} censuses", iso.censuses)
    };
    let threads = match iso.kernel_threads {
        Some((lo, hi)) if lo != hi => format!("; {lo}–{hi} kernel threads"),
        Some((n, _)) => format!("; {n} kernel threads"),
        None => String::new(),
    };
    if !iso.isolated {
        let who: Vec<String> = iso
            .foreign
            .iter()
            .map(|(at, p)| format!("{} {} (parent {}) at {at}", p.pid, p.comm, p.ppid))
            .collect();
        return Some(format!(
            "NOT ISOLATED: foreign user-space process(es) {}{threads}",
            who.join(", ")
        ));
    }
    let who = if iso.max_workers == 0 {
        "PID 1 only in user space".to_owned()
    } else {
        format!(
            "PID 1 + its own workers only (up to {} at once) in user space",
            iso.max_workers
        )
    };
    Some(format!("{who} {at}{threads}"))
}
