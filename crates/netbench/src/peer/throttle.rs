//! At most one log line per interval for things a stranger can repeat at will
//! (connections closed for a bound, WiFi offers refused): the lines in between are not
//! printed but counted, and the next line printed says how many were left out, so a
//! flood cannot fill the terminal and none goes unmentioned.

use std::time::{Duration, Instant};

/// One line per `every` at most (see the module doc).
#[derive(Debug, Clone)]
pub struct Throttle {
    every: Duration,
    last: Option<Instant>,
    left_out: u64,
}

impl Throttle {
    /// A throttle letting one line through per `every`.
    pub fn new(every: Duration) -> Throttle {
        Throttle {
            every,
            last: None,
            left_out: 0,
        }
    }

    /// `line` as it is to be printed at `now`, with the count of lines left out since
    /// the last one printed; `None` when it is left out itself.
    pub fn pass(&mut self, line: &str, now: Instant) -> Option<String> {
        if self
            .last
            .is_some_and(|t| now.saturating_duration_since(t) < self.every)
        {
            self.left_out += 1;
            return None;
        }
        self.last = Some(now);
        Some(match std::mem::take(&mut self.left_out) {
            0 => line.to_owned(),
            n => format!("{line} (and {n} more like it since the last line shown)"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_per_interval_and_the_rest_counted() {
        let mut t = Throttle::new(Duration::from_secs(10));
        let t0 = Instant::now();
        assert_eq!(t.pass("a", t0).as_deref(), Some("a"));
        for i in 1..=1000 {
            assert_eq!(t.pass("b", t0 + Duration::from_millis(i)), None);
        }
        assert_eq!(t.pass("c", t0 + Duration::from_secs(9)), None);
        assert_eq!(
            t.pass("d", t0 + Duration::from_secs(10)).as_deref(),
            Some("d (and 1001 more like it since the last line shown)")
        );
        assert_eq!(
            t.pass("e", t0 + Duration::from_secs(25)).as_deref(),
            Some("e")
        );
    }
}
