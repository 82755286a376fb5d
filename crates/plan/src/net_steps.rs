//! What PID 1's network steps do for a resolved plan, in order, as data: the gadget's
//! functions (one at a time with retries, or all at once) and, once the radio is
//! known, each WiFi entry's role or the reason it is skipped, then QEMU's WiFi checks.
//!
//! The firmware walks these lists and does the I/O (`firmware/src/network.rs`,
//! `firmware/src/wifi/`); deciding what runs is here, tested without a board.

use benchboot_wifi::nl80211::Wiphy;
use benchboot_wifi::regulatory;

use crate::network::{GadgetFunction, GadgetPlan};
use crate::wifi::{WifiEntry, WifiPlan, WifiRole, WifiSecurity};

/// Tries per gadget function in turn: one retry for the carrier race seen after an
/// RNDIS teardown with dummy_hcd (boards-and-boot.md: 2 of ~24 runs).
pub const GADGET_ATTEMPTS: u32 = 2;

/// One step of the gadget part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GadgetStep {
    /// In turn (QEMU, dummy_hcd): the function at plan index `index` bound, leased,
    /// tested and torn down, tried up to `attempts` times until the host takes a lease.
    InTurn {
        index: usize,
        function: GadgetFunction,
        attempts: u32,
    },
    /// Composite (hardware): every function bound at once, each link leased; the tests
    /// run over the first link a host takes a lease on.
    Composite { functions: Vec<GadgetFunction> },
}

/// The gadget's steps: one [`GadgetStep::InTurn`] per function in plan order when
/// `in_turn`, else one [`GadgetStep::Composite`] of all of them.
pub fn gadget_steps(g: &GadgetPlan) -> Vec<GadgetStep> {
    if g.in_turn {
        g.functions
            .iter()
            .enumerate()
            .map(|(index, &function)| GadgetStep::InTurn {
                index,
                function,
                attempts: GADGET_ATTEMPTS,
            })
            .collect()
    } else {
        vec![GadgetStep::Composite {
            functions: g.functions.clone(),
        }]
    }
}

/// What one WiFi entry does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WifiAction {
    /// Not run, for this reason (the plan's `skip`, else what the regulatory domain
    /// forbids): recorded, the next entry runs.
    Skip(String),
    /// The board joins the entry's AP.
    Client,
    /// The board is the AP, secured so.
    AccessPoint(WifiSecurity),
}

/// A QEMU check after the entries, in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WifiCheckStep {
    /// The board's own AP's beacons seen by the other hwsim radio's scan.
    ApBeacons,
    /// Both radios in one IBSS, TCP round trips across.
    Ibss,
}

/// The WiFi step once the radio is known: every entry in plan order with its action,
/// then the QEMU checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WifiSteps<'a> {
    pub entries: Vec<(&'a WifiEntry, WifiAction)>,
    pub checks: Vec<WifiCheckStep>,
}

/// Whether an AP transmits first on each entry's channel: the board's own (AP role) or
/// the QEMU stand-in's hostapd. Then DFS and no-IR channels are refused too.
pub fn ap_side(w: &WifiPlan) -> bool {
    matches!(w.role, WifiRole::AccessPoint { .. }) || w.stand_in.is_some()
}

/// Why `phy` (read after the plan's country was set) forbids entry `e`'s channel, as
/// results and the console say it (`benchboot_wifi::regulatory::Forbidden::reason`,
/// naming the entry as `5 GHz ch 52 20 MHz` and the plan's country); `None` when it
/// allows it or the entry asks for no channel.
pub fn forbidden(w: &WifiPlan, e: &WifiEntry, phy: &Wiphy) -> Option<String> {
    let asked = e.asked?;
    let c = asked.chandef().ok()?;
    regulatory::forbidden(phy, &c, ap_side(w)).map(|f| f.reason(&asked.describe(), &w.country))
}

/// The WiFi step's plan for radio `phy`: each entry skipped for the plan's `skip`
/// (first) or [`forbidden`], else run in the plan's role; the QEMU checks the stand-in
/// asks for (none without a stand-in).
pub fn wifi_steps<'a>(w: &'a WifiPlan, phy: &Wiphy) -> WifiSteps<'a> {
    let entries = w
        .entries
        .iter()
        .map(|e| {
            let action = match e.skip.clone().or_else(|| forbidden(w, e, phy)) {
                Some(why) => WifiAction::Skip(why),
                None => match &w.role {
                    WifiRole::Client { .. } => WifiAction::Client,
                    WifiRole::AccessPoint { security } => WifiAction::AccessPoint(*security),
                },
            };
            (e, action)
        })
        .collect();
    let checks = w
        .stand_in
        .as_ref()
        .map(|s| {
            [
                (s.ap_beacon_check, WifiCheckStep::ApBeacons),
                (s.ibss_smoke, WifiCheckStep::Ibss),
            ]
            .into_iter()
            .filter(|&(on, _)| on)
            .map(|(_, c)| c)
            .collect()
        })
        .unwrap_or_default();
    WifiSteps { entries, checks }
}

#[cfg(test)]
mod tests;
