//! The WPA2-Personal pairwise master key, and the SSID hash results record.
//!
//! IEEE 802.11-2020 §J.4.1 ("RSNA password-to-PSK mapping"): the PSK (= PMK for WPA2-PSK,
//! §12.7.1.3) is `PBKDF2(HMAC-SHA1, passphrase, ssid, 4096, 256 bits)` (RFC 8018 §5.2),
//! where the passphrase is 8..=63 characters, each of ASCII code 32..=126. A 256-bit PSK may
//! also be given directly as 64 hex digits (as `wpa_passphrase`'s output, hostapd.conf's
//! `wpa_psk` and wpa_supplicant.conf's unquoted `psk` take it).

use sha2::{Digest, Sha256};

/// PBKDF2 iterations of §J.4.1.
const ITERATIONS: u32 = 4096;

/// Why a passphrase cannot make a WPA2 key. The messages state the rule, never the secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PskError {
    #[error(
        "the WPA2 passphrase has {len} characters; it must have 8 to 63 printable ASCII \
         characters (IEEE 802.11-2020 §J.4.1), or be a 64-hex-digit PSK"
    )]
    Length { len: usize },
    #[error(
        "character {position} of the WPA2 passphrase is not printable ASCII; a passphrase is \
         8 to 63 characters of ASCII codes 32 to 126 (IEEE 802.11-2020 §J.4.1)"
    )]
    NotPrintableAscii { position: usize },
    #[error(
        "the 64-character WPA2 key is not 64 hex digits (a passphrase has at most 63 \
         characters; 64 characters are a raw PSK in hex)"
    )]
    NotHex,
}

/// What a passphrase argument is: a passphrase to hash, or a raw PSK already.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Secret<'a> {
    /// 8..=63 printable ASCII characters.
    Passphrase(&'a str),
    /// 64 hex digits: the 256-bit PSK itself.
    Hex([u8; 32]),
}

/// Checks a passphrase (or 64-hex-digit PSK) against §J.4.1 without hashing it (a plan
/// is checked before any SSID is known).
///
/// # Errors
/// The rule it breaks ([`PskError`]).
pub fn check(passphrase: &str) -> Result<(), PskError> {
    classify(passphrase).map(|_| ())
}

/// Checks a passphrase (or 64-hex-digit PSK) against §J.4.1 without hashing it.
pub(crate) fn classify(passphrase: &str) -> Result<Secret<'_>, PskError> {
    if let Some(position) = passphrase.chars().position(|c| !matches!(c, ' '..='~')) {
        return Err(PskError::NotPrintableAscii {
            position: position + 1,
        });
    }
    match passphrase.len() {
        8..=63 => Ok(Secret::Passphrase(passphrase)),
        64 => parse_hex(passphrase.as_bytes())
            .map(Secret::Hex)
            .ok_or(PskError::NotHex),
        len => Err(PskError::Length { len }),
    }
}

/// The 32-byte PMK of a WPA2-PSK network (IEEE 802.11-2020 §J.4.1): PBKDF2-HMAC-SHA1 of the
/// passphrase, salted with the SSID (its raw bytes, 0..=32), 4096 iterations; or the key
/// itself when `passphrase` is 64 hex digits.
pub fn pmk(passphrase: &str, ssid: &[u8]) -> Result<[u8; 32], PskError> {
    match classify(passphrase)? {
        Secret::Hex(key) => Ok(key),
        Secret::Passphrase(p) => {
            let mut key = [0u8; 32];
            pbkdf2::pbkdf2_hmac::<sha1::Sha1>(p.as_bytes(), ssid, ITERATIONS, &mut key);
            Ok(key)
        }
    }
}

/// What results record of a user's SSID: the first 16 hex digits (64 bits) of its SHA-256
/// (FIPS 180-4), lower case. Enough to tell two networks apart, not to read the name.
pub fn ssid_hash(ssid: &[u8]) -> String {
    Sha256::digest(ssid)[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn parse_hex(digits: &[u8]) -> Option<[u8; 32]> {
    let mut key = [0u8; 32];
    for (out, pair) in key.iter_mut().zip(digits.chunks_exact(2)) {
        let hi = char::from(pair[0]).to_digit(16)?;
        let lo = char::from(pair[1]).to_digit(16)?;
        *out = (hi * 16 + lo) as u8;
    }
    Some(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> [u8; 32] {
        parse_hex(s.as_bytes()).unwrap()
    }

    /// The three test vectors of IEEE 802.11-2020 §J.4.2 (unchanged since 802.11i-2004 H.4).
    #[test]
    fn ieee_test_vectors() {
        assert_eq!(
            pmk("password", b"IEEE").unwrap(),
            hex("f42c6fc52df0ebef9ebb4b90b38a5f902e83fe1b135a70e23aed762e9710a12e")
        );
        assert_eq!(
            pmk("ThisIsAPassword", b"ThisIsASSID").unwrap(),
            hex("0dc0d6eb90555ed6419756b9a15ec3e3209b63df707dd508d14581f8982721af")
        );
        assert_eq!(
            pmk(&"a".repeat(32), "Z".repeat(32).as_bytes()).unwrap(),
            hex("becb93866bb8c3832cb777c2f559807c8c59afcb6eae734885001300a981cc62")
        );
    }

    #[test]
    fn a_hex_psk_is_the_key_itself() {
        let k = "f42c6fc52df0ebef9ebb4b90b38a5f902e83fe1b135a70e23aed762e9710a12e";
        assert_eq!(pmk(k, b"whatever").unwrap(), hex(k));
        assert_eq!(pmk(&k.to_uppercase(), b"x").unwrap(), hex(k));
        let not_hex = format!("{}g", &k[..63]);
        assert_eq!(pmk(&not_hex, b"x"), Err(PskError::NotHex));
    }

    #[test]
    fn bad_passphrases_are_refused_with_the_rule() {
        assert_eq!(pmk("1234567", b"x"), Err(PskError::Length { len: 7 }));
        assert_eq!(pmk("", b"x"), Err(PskError::Length { len: 0 }));
        assert!(pmk("12345678", b"x").is_ok());
        assert!(pmk(&"p".repeat(63), b"x").is_ok());
        assert_eq!(
            pmk(&"p".repeat(65), b"x"),
            Err(PskError::Length { len: 65 })
        );
        assert_eq!(
            pmk("pässwort1", b"x"),
            Err(PskError::NotPrintableAscii { position: 2 })
        );
        assert_eq!(
            pmk("tab\there!", b"x"),
            Err(PskError::NotPrintableAscii { position: 4 })
        );
        let msg = pmk("short", b"x").unwrap_err().to_string();
        assert!(msg.contains("8 to 63 printable ASCII"), "{msg}");
        assert!(!msg.contains("short"), "the secret stays out: {msg}");
    }

    #[test]
    fn ssid_hash_is_the_start_of_sha256() {
        // SHA-256("abc") = ba7816bf8f01cfea414140de5dae2223... (FIPS 180-4 example).
        assert_eq!(ssid_hash(b"abc"), "ba7816bf8f01cfea");
        assert_eq!(ssid_hash(b"").len(), 16);
    }
}
