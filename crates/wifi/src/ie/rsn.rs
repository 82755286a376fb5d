//! The RSN element (IEEE 802.11-2020 §9.4.2.24): its cipher and AKM suite selectors and
//! the reading of its body into [`Rsn`].

/// Cipher suite 00-0F-AC:2, TKIP (IEEE 802.11-2020 §9.4.2.24.2), as nl80211's
/// `WLAN_CIPHER_SUITE_TKIP` writes it: OUI in the top three octets, suite type in the last.
pub const CIPHER_TKIP: u32 = 0x000F_AC02;
/// Cipher suite 00-0F-AC:4, CCMP-128 (§9.4.2.24.2); `WLAN_CIPHER_SUITE_CCMP`.
pub const CIPHER_CCMP: u32 = 0x000F_AC04;
/// AKM suite 00-0F-AC:1, IEEE 802.1X (§9.4.2.24.3); the RSN element's default.
pub const AKM_8021X: u32 = 0x000F_AC01;
/// AKM suite 00-0F-AC:2, PSK (WPA2-Personal, §9.4.2.24.3); `WLAN_AKM_SUITE_PSK`.
pub const AKM_PSK: u32 = 0x000F_AC02;
/// AKM suite 00-0F-AC:8, SAE (WPA3-Personal, §9.4.2.24.3); `WLAN_AKM_SUITE_SAE`.
pub const AKM_SAE: u32 = 0x000F_AC08;

/// The cipher and key-management suites of an RSN element (IEEE 802.11-2020
/// §9.4.2.24.1-3), each as a 32-bit OUI:type (for example [`CIPHER_CCMP`], [`AKM_PSK`]);
/// fields the element leaves out take the §9.4.2.24.1 defaults (CCMP-128, 802.1X).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rsn {
    pub pairwise: Vec<u32>,
    pub akm: Vec<u32>,
    pub group: u32,
}

impl Rsn {
    /// Whether a WPA2-Personal station (PSK, CCMP) can join: the AKM list has PSK, the
    /// pairwise list CCMP.
    pub fn wpa2_psk_ccmp(&self) -> bool {
        self.akm.contains(&AKM_PSK) && self.pairwise.contains(&CIPHER_CCMP)
    }
}

/// The RSN element body (§9.4.2.24.1): version 1, group suite, pairwise
/// count + suites, AKM count + suites, then capabilities and PMKIDs (not read).
pub(super) fn parse_rsn(body: &[u8]) -> Option<Rsn> {
    let [1, 0, rest @ ..] = body else {
        return None;
    };
    let (group, rest) = match rest.split_first_chunk::<4>() {
        Some((suite, rest)) => (u32::from_be_bytes(*suite), rest),
        None => (CIPHER_CCMP, rest),
    };
    let (pairwise, rest) = suite_list(rest, CIPHER_CCMP);
    let (akm, _) = match rest {
        Some(rest) => suite_list(rest, AKM_8021X),
        None => (vec![AKM_8021X], None),
    };
    Some(Rsn {
        pairwise,
        akm,
        group,
    })
}

/// A suite count (u16 LE) and that many 4-octet suites, and what follows them: `default`
/// alone when the count is absent; as many whole suites as there are when the list is cut
/// short. No rest in either case: the fields after are absent too.
fn suite_list(bytes: &[u8], default: u32) -> (Vec<u32>, Option<&[u8]>) {
    let Some((count, mut rest)) = bytes.split_first_chunk::<2>() else {
        return (vec![default], None);
    };
    let mut suites = Vec::new();
    for _ in 0..u16::from_le_bytes(*count) {
        let Some((suite, after)) = rest.split_first_chunk::<4>() else {
            return (suites, None);
        };
        suites.push(u32::from_be_bytes(*suite));
        rest = after;
    }
    (suites, Some(rest))
}
