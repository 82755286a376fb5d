//! The bound every reader of a [`crate::Trace`] keeps: its lists are read element by
//! element and refused past [`crate::MAX_SAMPLES`], so a hostile or damaged trace file
//! never makes a reader build more than that (whatever the file's size allows).

use std::fmt;
use std::marker::PhantomData;

use serde::de::{Deserialize, Deserializer, Error, SeqAccess, Visitor};

use crate::MAX_SAMPLES;

/// A list of at most [`MAX_SAMPLES`] elements; more is an error naming the bound.
///
/// # Errors
/// The deserializer's, or `more than 4194304 entries`.
pub fn at_most_max_samples<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    d.deserialize_seq(Bounded(PhantomData))
}

struct Bounded<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for Bounded<T> {
    type Value = Vec<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a list of at most {MAX_SAMPLES} entries")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
        // The hint is the input's claim: trusted only up to a small start.
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(x) = seq.next_element()? {
            if out.len() == MAX_SAMPLES {
                return Err(A::Error::custom(format_args!(
                    "more than {MAX_SAMPLES} entries (the most a trace holds, \
                     benchboot_energy::MAX_SAMPLES): split the recording"
                )));
            }
            out.push(x);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use crate::{Sample, Trace, MAX_SAMPLES};

    fn trace_json(samples: usize) -> String {
        let mut s = String::from(
            r#"{"meter":"m","clock":"host","emulated":false,"resolution_w":0.01,"period_s":0.01,"samples":["#,
        );
        for i in 0..samples {
            if i > 0 {
                s.push(',');
            }
            s.push_str(&format!(r#"{{"t_s":{i},"watts":1}}"#));
        }
        s.push_str("]}");
        s
    }

    #[test]
    fn a_trace_of_max_samples_reads_and_one_more_is_refused() {
        let t: Trace = serde_json::from_str(&trace_json(MAX_SAMPLES)).unwrap();
        assert_eq!(t.samples.len(), MAX_SAMPLES);
        assert_eq!(t.samples[7], Sample::watts(7.0, 1.0));
        let e = serde_json::from_str::<Trace>(&trace_json(MAX_SAMPLES + 1)).unwrap_err();
        assert!(
            e.to_string().starts_with("more than 4194304 entries"),
            "{e}"
        );
    }

    #[test]
    fn console_lines_are_bounded_too() {
        let mut s = trace_json(1);
        s.truncate(s.len() - 1);
        s.push_str(r#","console":["#);
        for i in 0..=MAX_SAMPLES {
            if i > 0 {
                s.push(',');
            }
            s.push_str("[1,2]");
        }
        s.push_str("]}");
        let e = serde_json::from_str::<Trace>(&s).unwrap_err();
        assert!(
            e.to_string().starts_with("more than 4194304 entries"),
            "{e}"
        );
    }
}
