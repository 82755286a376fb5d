//! What every WiFi entry shares, below the roles ([`super::client`], [`super::ap`]) and
//! the step's order ([`super`]): the entry's context ([`Ctx`]), how results record a
//! channel, and the end of an entry ([`measure`]: power save off, the station around
//! the tests).

use std::net::Ipv4Addr;

use benchboot_plan::{NetTests, Plan, WifiPlan};
use benchboot_results::wifi::{BandName, Bitrate, StationInfo, WifiChannel, WifiEntryResult};
use benchboot_results::{RunResults, Severity};
use benchboot_wifi::channel::{Band, Chandef, Width};
use benchboot_wifi::nl80211::{Interface, RateInfo, Station, Wiphy};
use benchboot_wifi::{rate, regulatory};

use crate::netkit::tests_with_counters;
use crate::radio::Radio;

/// What one entry of the WiFi step works with: the plan, the board's radio (its wiphy
/// and interface as read after the country was set), the tests (the plan's, with the
/// WiFi warm-up) and the results the entry writes into.
pub(super) struct Ctx<'a> {
    pub plan: &'a Plan,
    pub w: &'a WifiPlan,
    pub radio: &'a mut Radio,
    pub phy: &'a Wiphy,
    pub iface: &'a Interface,
    pub tests: &'a NetTests,
    pub results: &'a mut RunResults,
}

/// A chandef as results record it.
pub(super) fn channel_record(c: &Chandef) -> WifiChannel {
    WifiChannel {
        band: match c.band() {
            Some(Band::Ghz5) => BandName::Ghz5,
            _ => BandName::Ghz2,
        },
        channel: c.channel().unwrap_or(0),
        freq_mhz: c.control_mhz,
        width_mhz: c.width.mhz(),
        center1_mhz: c.center1_mhz,
        no_ht: c.width == Width::NoHt20,
    }
}

/// The primary channel's flags, as results list them.
pub(super) fn channel_flags(phy: &Wiphy, mhz: u32) -> Vec<String> {
    regulatory::channel_flags(phy, mhz)
        .into_iter()
        .map(str::to_owned)
        .collect()
}

/// Power save off and read back, the station before and after, the tests against
/// `peer`: the end of a client entry and of an AP entry alike.
pub(super) fn measure(cx: &mut Ctx, peer: Ipv4Addr, r: &mut WifiEntryResult) {
    let Ctx {
        radio,
        iface,
        tests,
        results,
        ..
    } = cx;
    let _ = radio.set_power_save(iface.ifindex, false);
    r.power_save = radio.power_save(iface.ifindex).ok().flatten();
    if r.power_save == Some(true) {
        let msg = format!(
            "{}: power save is still on: the figures include its sleep",
            r.link
        );
        results.event(format!("network.wifi.{}", r.link), Severity::Warning, msg);
    }
    let first = |radio: &mut Radio| {
        radio
            .stations(iface.ifindex)
            .ok()
            .and_then(|s| s.into_iter().next())
    };
    // The idle phase with the link up, before the station is read and the tests run.
    crate::energy::idle_on_link(&iface.name, results);
    let before = first(radio);
    if let Some(s) = &before {
        r.absent = s.absent().iter().map(|a| (*a).to_owned()).collect();
    }
    r.station_before = before.as_ref().map(station_info);
    let board = r.board_address.unwrap_or([0; 4]);
    r.counters = tests_with_counters(&r.link, &iface.name, board, peer, tests, results);
    r.station_after = first(radio).as_ref().map(station_info);
}

/// A station as results record it.
fn station_info(s: &Station) -> StationInfo {
    StationInfo {
        signal_dbm: s.signal_dbm,
        signal_avg_dbm: s.signal_avg_dbm,
        chain_signal_dbm: s.chain_signal_dbm.clone(),
        tx_bitrate: s.tx_bitrate.as_ref().map(bitrate),
        rx_bitrate: s.rx_bitrate.as_ref().map(bitrate),
        tx_retries: s.tx_retries,
        tx_failed: s.tx_failed,
        tx_packets: s.tx_packets,
        rx_packets: s.rx_packets,
        tx_bytes: s.tx_bytes,
        rx_bytes: s.rx_bytes,
        beacon_loss: s.beacon_loss,
        expected_throughput_kbps: s.expected_throughput_kbps,
    }
}

/// A rate as results record it ([`rate::classify`]).
fn bitrate(b: &RateInfo) -> Bitrate {
    let r = rate::classify(b);
    Bitrate {
        bitrate_100kbps: b.bitrate_100kbps,
        mcs: r.mcs,
        kind: r.kind.name().into(),
        nss: r.nss,
        width_mhz: Some(b.width_mhz),
        short_gi: b.short_gi,
    }
}
