//! A results document as received, whatever brought it: the board over the network,
//! its card, or a console / LAVA log rebuilt by [`crate::from_log`]. Below `collect`
//! and `from_log`, which both make one; `collect` re-exports it.

use benchboot_results::RunResults;

/// A results document as received.
#[derive(Debug, Clone)]
pub struct Got {
    pub results: RunResults,
    /// The document's text, stored as it came.
    pub text: String,
    /// `HOST:PORT`, or the card path (`/dev/sdb p2 (BBRESULTS)`, `/dev/sdb p4 (results
    /// journal) record 88`, a folder's file).
    pub source: String,
    /// From a card: what it found damaged or older, and which copy it used
    /// ([`benchboot_card::CardRead::notes`]).
    pub notes: Vec<String>,
}
