//! What a results document may hold in VALUES, checked before serde builds anything
//! from it: the byte bound ([`crate::MAX_DOCUMENT_BYTES`]) alone lets 64 MiB of `0,`
//! or `{},` become 30 million values (a 288 KiB journal record inflates to that; read
//! as a `serde_json::Value` it took 2.2 GB and 23 s).
//!
//! [`tally`] is a pre-scan that allocates nothing and stops at the budget: one pass
//! over the bytes counting the JSON values and object keys that serde would build, so
//! a hostile document is refused after scanning only as many bytes as its first
//! [`MAX_DOCUMENT_VALUES`] values take. It is no validator: it follows JSON's lexical
//! rules (a string ends at an unescaped `"`; outside strings, `{`, `[` and each run of
//! other non-separator bytes start a value), exactly as serde_json lexes up to its
//! first error, so no document, valid or not, makes serde build more values than
//! [`tally`] counted.
//!
//! [`crate::RunResults::from_json`] runs it first; every other reader of a document's
//! text (the card's journal choice) reads only what it needs into typed structs that
//! ignore the rest (`serde::de::IgnoredAny`: nothing allocated).

/// Most values (and object keys) a results document may hold: 2^21 = 2,097,152.
///
/// The shipped documents (host/tests/data, crates/results/tests/data) hold one value or
/// key per 11 to 16 bytes (pretty-printed): a 170 KiB QEMU run has 12,600. A standard
/// plan on hardware (9 targets × 18 block sizes × 2 modes × 3 repetitions = 972 storage
/// measurements, 324 health snapshots before and after with their interrupt lists, 1,000
/// round trips per link, the network intervals and the memory samples) comes to some
/// 300,000, about 4 MiB: the budget is seven times that.
///
/// What [`crate::RunResults::from_json`] builds at the budget, measured (release build,
/// peak RSS over the text; the shipped `handmade-isolation.json` with one list grown to
/// the budget): round trips `[0,...]` 17 MB, kernel thread names `["",...]` 48 MB
/// (24 bytes per 3-byte value, the densest), censuses 71 MB, events 17 MB, storage
/// measurements 11 MB, health snapshots 22 MB; each under 0.25 s. The same 64 MiB of
/// `0,` read as a `serde_json::Value` (what the reader did before) built 1 GB in 2.8 s;
/// refused by [`tally`] it builds nothing, in 4 ms.
pub const MAX_DOCUMENT_VALUES: u64 = 1 << 21;

/// Most characters of outside text an error message quotes ([`clip`]): a message is
/// one line a person reads, not a copy of the input.
pub const MAX_QUOTED_CHARS: usize = 200;

/// `s` cut to `max` characters, `…` and the count of characters left out appended
/// when it is longer: for error messages that quote their input (serde's `invalid
/// type: string "..."` quotes a whole string, however long).
pub fn clip(s: &str, max: usize) -> std::borrow::Cow<'_, str> {
    match s.char_indices().nth(max) {
        None => std::borrow::Cow::Borrowed(s),
        Some((cut, _)) => {
            let left = s[cut..].chars().count();
            std::borrow::Cow::Owned(format!("{}… ({left} more characters)", &s[..cut]))
        }
    }
}

/// What [`tally`] counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    /// Values and object keys: every `{`, `[`, string and other scalar.
    pub values: u64,
    /// Bytes scanned (the whole text when within the budget).
    pub bytes: u64,
}

/// A document past the value budget: where the scan stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "more than {max} values (JSON values and keys) by byte {at}: a results document \
     holds some hundred thousand; this one is damaged or crafted"
)]
pub struct TooManyValues {
    /// The budget passed.
    pub max: u64,
    /// Byte offset of the value that passed it.
    pub at: u64,
    /// Bytes of the text seen when it was refused (all of it, for [`tally`]).
    pub len: u64,
}

/// Counts the values and keys of the JSON text `text`, stopping at the first past
/// `max` (callers pass [`MAX_DOCUMENT_VALUES`]). Allocates nothing; linear in the
/// bytes scanned; never panics.
///
/// # Errors
/// [`TooManyValues`] at the value `max` + 1.
pub fn tally(text: &[u8], max: u64) -> Result<Tally, TooManyValues> {
    let mut c = Counter::new(max);
    c.feed(text)?;
    Ok(c.tally())
}

/// [`tally`] over a text that arrives in pieces (a journal record as it is inflated:
/// a hostile record is refused before it is decoded whole). Feeding the pieces of a
/// text one after the other counts exactly what [`tally`] counts of the whole.
#[derive(Debug, Clone)]
pub struct Counter {
    max: u64,
    values: u64,
    bytes: u64,
    in_string: bool,
    escaped: bool,
    in_scalar: bool,
}

impl Counter {
    /// A counter that refuses the value `max` + 1.
    pub fn new(max: u64) -> Counter {
        Counter {
            max,
            values: 0,
            bytes: 0,
            in_string: false,
            escaped: false,
            in_scalar: false,
        }
    }

    /// Counts the next piece of the text.
    ///
    /// # Errors
    /// [`TooManyValues`] at the value `max` + 1 (its `at` is the byte offset in the
    /// whole text, its `len` the bytes fed so far); the counter stays refused.
    pub fn feed(&mut self, piece: &[u8]) -> Result<(), TooManyValues> {
        if self.values > self.max {
            return Err(TooManyValues {
                max: self.max,
                at: self.bytes,
                len: self.bytes,
            });
        }
        for (i, &b) in piece.iter().enumerate() {
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_string = false;
                }
                continue;
            }
            let starts = match b {
                b'"' => {
                    self.in_string = true;
                    self.in_scalar = false;
                    true
                }
                b'{' | b'[' => {
                    self.in_scalar = false;
                    true
                }
                b' ' | b'\t' | b'\n' | b'\r' | b',' | b':' | b'}' | b']' => {
                    self.in_scalar = false;
                    false
                }
                _ => !std::mem::replace(&mut self.in_scalar, true),
            };
            if starts {
                self.values += 1;
                if self.values > self.max {
                    self.values = self.max + 1;
                    return Err(TooManyValues {
                        max: self.max,
                        at: self.bytes + i as u64,
                        len: self.bytes + piece.len() as u64,
                    });
                }
            }
        }
        self.bytes += piece.len() as u64;
        Ok(())
    }

    /// What was counted so far.
    pub fn tally(&self) -> Tally {
        Tally {
            values: self.values,
            bytes: self.bytes,
        }
    }
}

#[cfg(test)]
mod tests;
