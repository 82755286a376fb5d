//! The whole-card pass's report in words and its averages: what `benchboot probe --full`
//! and PID 1's card check print.

use super::*;

impl FullReport {
    /// Average write speed, MiB/s, over the writes and the final flush.
    pub fn write_mib_s(&self) -> f64 {
        mib_s(self.written_bytes, self.write_ns)
    }

    /// Average read speed, MiB/s.
    pub fn read_mib_s(&self) -> f64 {
        mib_s(self.read_bytes, self.read_ns)
    }

    /// The sustained write speed, MiB/s: the median interval of the write profile from
    /// its last fall to the end (the card's speed once its fast cache is full, whatever
    /// it did later), or of the whole profile when it has no fall; 0 without a profile.
    pub fn sustained_write_mib_s(&self) -> f64 {
        let from = self.falls.last().map_or(0, |f| f.at);
        let mut v: Vec<f64> = self
            .write_profile
            .iter()
            .filter(|i| i.offset >= from)
            .map(Interval::mib_s)
            .collect();
        analysis::median(&mut v)
    }

    /// The verdict of what was read back: I/O errors; a wrap-around fake of the
    /// aliases' period; a fake holding up to the first bad sector; genuine when every
    /// sector of the region was read back holding its data. `None`: the pass stopped
    /// (Ctrl-C, a time limit) before reading the whole region back and found nothing
    /// bad in what it covered.
    pub fn verdict(&self) -> Option<Verdict> {
        if let Some(r) = self.bad.iter().find(|r| r.found.is_io_error()) {
            return Some(Verdict::IoErrors { first_at: r.start });
        }
        match (self.wraps_at, self.first_bad) {
            (Some(m), _) => Some(Verdict::Fake { real_bytes: m }),
            (None, Some(h)) => Some(Verdict::Fake { real_bytes: h }),
            (None, None) if self.stopped.is_some() => None,
            (None, None) => Some(Verdict::Genuine),
        }
    }

    /// Fall `f` (the `first` of the pass, or a later one) in terms of what the device
    /// was written since benchboot opened it: "the fast cache ends after 64.0 MiB
    /// written (36.0 MiB by the quick probe, 28.0 MiB into the full pass)"; `None` when
    /// the device was not counted ([`Fall::written_at`]). What was written before the
    /// pass is the quick probe's in `benchboot probe --full` and PID 1's card check,
    /// the only callers that count.
    pub fn cache_words(&self, f: &Fall, first: bool) -> Option<String> {
        let at = f.written_at?;
        let before = self.before.map_or(0, |b| b.written_bytes);
        let what = if first {
            "the fast cache ends after"
        } else {
            "falls again after"
        };
        Some(format!(
            "{what} {} written ({} by the quick probe, {} into the full pass)",
            human(at),
            human(before),
            human(at.saturating_sub(before))
        ))
    }

    /// How long the device was idle of writes before each phase, in words: "idle
    /// 0.00 s from opening the card to the quick probe's first write (before that:
    /// unknown), 0.40 s from the quick probe's last write to the full pass"; `None`
    /// when the device was not counted.
    pub fn idle_words(&self) -> Option<String> {
        let b = self.before?;
        let s = |ns: u64| format!("{:.2} s", ns as f64 / 1e9);
        let first = match b.first_write_after_open_ns {
            Some(ns) => format!(
                "{} from opening the card to the quick probe's first write (before that: \
                 unknown), ",
                s(ns)
            ),
            None => String::new(),
        };
        let pass = if b.since_open {
            format!(
                "{} from opening the card to the full pass (nothing written before it; \
                 before that: unknown)",
                s(b.idle_ns)
            )
        } else {
            format!(
                "{} from the quick probe's last write to the full pass",
                s(b.idle_ns)
            )
        };
        Some(format!("idle {first}{pass}"))
    }

    /// What an idle pause gives back, in words: the [`IdleCheck`]'s figure when it ran
    /// ("after 60.00 s idle 32.0 MiB came back fast (> 10.0 MiB/s), then the speed
    /// fell"), else what the data says (not measured; the idle time before the pass,
    /// which the cache found includes); `None` without a fall.
    pub fn idle_check_words(&self) -> Option<String> {
        self.falls.first()?;
        let s = |ns: u64| format!("{:.2} s", ns as f64 / 1e9);
        let Some(c) = &self.idle_check else {
            let idle = self
                .before
                .map(|b| {
                    format!(
                        " the pass began {} after the last write before it, and",
                        s(b.idle_ns)
                    )
                })
                .unwrap_or_default();
            return Some(format!(
                "what an idle pause gives back was not measured:{idle} the cache found \
                 is what the card had then; a longer pause may give back more \
                 (benchboot probe --full --idle-check S measures it)"
            ));
        };
        let got = format!(
            "after {} idle {}{} came back fast (> {:.1} MiB/s)",
            s(c.idle_ns),
            if c.fell { "" } else { "at least " },
            human(c.fast_bytes),
            c.threshold_mib_s
        );
        Some(match (&c.stopped, c.fell) {
            (Some(why), _) => format!("{got}; the check stopped: {why}"),
            (None, true) => format!(
                "{got}, then the speed fell ({} written again)",
                human(c.written_bytes)
            ),
            (None, false) => format!(
                "{got} and the speed held for all {} written again (twice the cache found)",
                human(c.written_bytes)
            ),
        })
    }

    /// One line: the verdict, what was covered and the average speeds.
    pub fn summary(&self) -> String {
        let v = match self.verdict() {
            None => "stopped before the end, nothing bad in what it covered".to_string(),
            Some(Verdict::Genuine) => "every sector held its data".to_string(),
            Some(Verdict::Fake { real_bytes }) if self.wraps_at.is_some() => {
                format!("a wrap-around fake of {}", human_offset(real_bytes))
            }
            Some(Verdict::Fake { real_bytes }) => format!(
                "FAKE: {} bad from {}",
                human(self.bad_bytes),
                human_offset(real_bytes)
            ),
            Some(Verdict::IoErrors { first_at }) => {
                format!("I/O ERRORS from {}", human_offset(first_at))
            }
        };
        let stopped = self
            .stopped
            .as_ref()
            .map(|s| format!("; stopped: {s}"))
            .unwrap_or_default();
        format!(
            "full pass: {v}; wrote {} at {:.1} MiB/s, read {} at {:.1} MiB/s{stopped}",
            human(self.written_bytes),
            self.write_mib_s(),
            human(self.read_bytes),
            self.read_mib_s()
        )
    }
}
