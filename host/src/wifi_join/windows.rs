//! Windows (and any other OS): joining is not supported yet. Each offer is printed with
//! what to do by hand; the peer keeps serving on every interface, so once the person
//! has joined, the board's tests reach it.

use super::{security_word, Os, ValidOffer};

/// What the person is told for one offer.
pub fn by_hand(os: Os, valid: &ValidOffer) -> String {
    let (ssid, offer) = (valid.ssid(), valid.offer());
    let os = match os {
        Os::Windows => "Windows",
        Os::Linux => "Linux",
        Os::Macos => "macOS",
        Os::Other => "this OS",
    };
    let key = match &offer.passphrase {
        Some(p) => format!(", passphrase `{p}`"),
        None => String::new(),
    };
    format!(
        "joining WiFi is not supported yet on {os}: join `{ssid}` ({}, {} MHz{key}) by \
         hand, then run `benchboot peer` (this one keeps serving on every interface, so \
         joining is enough)",
        security_word(offer),
        offer.freq_mhz
    )
}
