//! The scan both ends of a WiFi link use: the board's client looking for its AP
//! ([`super::client`]) and the QEMU stand-in looking for the board's beacons
//! ([`super::standin`]).

use std::time::{Duration, Instant};

use benchboot_wifi::nl80211::Bss;
use benchboot_wifi::station;

use crate::radio::Radio;

/// How long a scan may take to find the entry's AP (the plan crate's
/// `wifi::SCAN_WAIT_MS`).
pub(super) const SCAN_WAIT: Duration = Duration::from_millis(benchboot_plan::wifi::SCAN_WAIT_MS);

/// Scans `freqs` (all when empty) for `ssid` until a BSS carrying it is seen.
pub(super) fn scan_for(
    radio: &mut Radio,
    ifindex: u32,
    freqs: &[u32],
    ssid: &[u8],
) -> Result<Bss, String> {
    let deadline = Instant::now() + SCAN_WAIT;
    let mut last_err = String::new();
    while Instant::now() < deadline {
        if let Err(e) = radio.trigger_scan(ifindex, freqs, &[ssid]) {
            // EBUSY: a scan is still running.
            last_err = e.to_string();
        }
        std::thread::sleep(Duration::from_millis(1500));
        if let Ok(list) = radio.scan_results(ifindex) {
            if let Some(b) = station::best_bss(list, freqs, ssid) {
                return Ok(b);
            }
        }
    }
    Err(format!(
        "no AP with the SSID in {} s of scanning{}",
        SCAN_WAIT.as_secs(),
        if last_err.is_empty() {
            String::new()
        } else {
            format!(" (last scan: {last_err})")
        }
    ))
}
