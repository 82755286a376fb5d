//! Bandwidth samples: tinymembench's loop (ssvb/tinymembench main.c,
//! `bandwidth_bench_helper`): one untimed pass, then the kernel runs 1, 2, 4, ... more
//! times until the sample has lasted the least sample time; bytes over the whole time.

use benchboot_results::memory::BandwidthSample;

/// A source of monotonic ns ([`crate::now_ns`] on a machine, a mock in tests).
pub trait Clock {
    fn now_ns(&mut self) -> u64;
}

/// CLOCK_MONOTONIC.
pub struct Monotonic;

impl Clock for Monotonic {
    fn now_ns(&mut self) -> u64 {
        crate::now_ns()
    }
}

/// One sample of `pass` (one pass over the buffers, `bytes_per_pass` bytes): the pass
/// runs once untimed (caches, TLB and page tables as in the timed passes), then in
/// batches of 1, 2, 4, ... passes until at least `min_ns` have gone by.
pub fn sample(
    clock: &mut impl Clock,
    min_ns: u64,
    bytes_per_pass: u64,
    mut pass: impl FnMut(),
) -> BandwidthSample {
    pass();
    let start = clock.now_ns();
    let mut passes = 0u64;
    let mut batch = 1u64;
    let end = loop {
        for _ in 0..batch {
            pass();
        }
        passes += batch;
        batch = batch.saturating_mul(2);
        let now = clock.now_ns();
        if now.saturating_sub(start) >= min_ns {
            break now;
        }
    };
    BandwidthSample {
        bytes: passes.saturating_mul(bytes_per_pass),
        ns: end.saturating_sub(start).max(1),
    }
}

/// The passes one sample of `pass_ns` per pass takes to reach `min_ns` under
/// [`sample`]'s doubling: what the all-cores run gives every thread, so each does the
/// work the single-core sample did.
pub fn passes_for(min_ns: u64, pass_ns: u64) -> u64 {
    let pass_ns = pass_ns.max(1);
    let mut passes = 0u64;
    let mut batch = 1u64;
    while passes.saturating_mul(pass_ns) < min_ns {
        passes += batch;
        batch = batch.saturating_mul(2);
    }
    passes.max(1)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::cell::Cell;
    use std::rc::Rc;

    /// A clock that moves only when the code under test does work.
    #[derive(Clone, Default)]
    pub struct MockClock(pub Rc<Cell<u64>>);

    impl MockClock {
        pub fn advance(&self, ns: u64) {
            self.0.set(self.0.get() + ns);
        }
    }

    impl Clock for MockClock {
        fn now_ns(&mut self) -> u64 {
            self.0.get()
        }
    }

    #[test]
    fn a_sample_doubles_the_batch_until_the_least_time_and_counts_every_timed_pass() {
        let clock = MockClock::default();
        let calls = Cell::new(0u64);
        // 30 ns per pass, 500 ns at least: batches 1+2+4+8 = 15 passes = 450 ns < 500,
        // then 16 more: 31 passes, 930 ns. Plus the untimed first pass.
        let s = sample(&mut clock.clone(), 500, 64, || {
            calls.set(calls.get() + 1);
            clock.advance(30);
        });
        assert_eq!(calls.get(), 32);
        assert_eq!(
            s,
            BandwidthSample {
                bytes: 31 * 64,
                ns: 930
            }
        );
        assert_eq!(passes_for(500, 30), 31, "the same count as the sample ran");
        assert_eq!(passes_for(500, 1000), 1);
        assert_eq!(passes_for(0, 0), 1);
    }

    #[test]
    fn a_pass_slower_than_the_least_time_is_one_pass() {
        let clock = MockClock::default();
        let s = sample(&mut clock.clone(), 100, 1 << 20, || clock.advance(250));
        assert_eq!(
            s,
            BandwidthSample {
                bytes: 1 << 20,
                ns: 250
            }
        );
        assert!((s.mb_per_s() - (1u64 << 20) as f64 * 1e3 / 250.0).abs() < 1e-6);
    }
}
