//! The host controller's bus state, from debugfs `mmcN/ios` (Linux
//! drivers/mmc/core/debugfs.c, mmc_ios_show).

use serde::{Deserialize, Serialize};

/// The parsed `ios` text. Each line is `name:\t<number> (<text>)`, except
/// `clock` / `actual clock` (`<n> Hz`); `actual clock` only appears when the driver
/// reports one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ios {
    /// `clock`: the clock the core asked for, Hz.
    pub clock_hz: u64,
    /// `actual clock`: what the controller's divider gives, Hz.
    #[serde(default)]
    pub actual_clock_hz: Option<u64>,
    /// `vdd` text, e.g. "3.3 ~ 3.4 V".
    #[serde(default)]
    pub vdd: Option<String>,
    /// `bus mode` text, e.g. "push-pull".
    #[serde(default)]
    pub bus_mode: Option<String>,
    /// `power mode` text: "off", "up", "on", "undefined".
    #[serde(default)]
    pub power_mode: Option<String>,
    /// `bus width` in bits (1, 4, 8).
    pub bus_width_bits: u8,
    /// `timing spec` code (MMC_TIMING_*, e.g. 2 sd high-speed, 6 sd uhs SDR104).
    pub timing_code: u32,
    /// `timing spec` text, e.g. "sd high-speed", "sd uhs SDR104", "mmc HS200".
    pub timing: String,
    /// `signal voltage` text, e.g. "3.30 V", "1.80 V".
    #[serde(default)]
    pub signal_voltage: Option<String>,
    /// `driver type` text, e.g. "driver type B".
    #[serde(default)]
    pub driver_type: Option<String>,
}

impl Ios {
    /// The clock the bus really runs at (`actual clock` if given, else `clock`), Hz.
    pub fn effective_clock_hz(&self) -> u64 {
        self.actual_clock_hz.unwrap_or(self.clock_hz)
    }

    /// True for double-data-rate timings (DDR50, DDR52, HS400).
    pub fn is_ddr(&self) -> bool {
        self.timing.contains("DDR") || self.timing.contains("HS400")
    }

    /// A short bus-mode label: "SDR, sd high-speed, 4-bit" / "DDR, sd uhs DDR50, 4-bit".
    pub fn label(&self) -> String {
        let rate = if self.is_ddr() { "DDR" } else { "SDR" };
        format!("{rate}, {}, {}-bit", self.timing, self.bus_width_bits)
    }

    /// For summaries: "sd uhs SDR104 4-bit at 198 MHz" (MHz rounded from the
    /// effective clock).
    pub fn summary(&self) -> String {
        format!(
            "{} {}-bit at {} MHz",
            self.timing,
            self.bus_width_bits,
            (self.effective_clock_hz() + 500_000) / 1_000_000
        )
    }
}

pub(crate) fn parse(text: &str) -> Result<Ios, String> {
    let mut clock = None;
    let mut actual = None;
    let mut width = None;
    let mut timing = None;
    let mut ios = Ios {
        clock_hz: 0,
        actual_clock_hz: None,
        vdd: None,
        bus_mode: None,
        power_mode: None,
        bus_width_bits: 0,
        timing_code: 0,
        timing: String::new(),
        signal_voltage: None,
        driver_type: None,
    };
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match key.trim() {
            "clock" => clock = hz(value),
            "actual clock" => actual = hz(value),
            "vdd" => ios.vdd = paren(value).map(|(_, t)| t),
            "bus mode" => ios.bus_mode = paren(value).map(|(_, t)| t),
            "power mode" => ios.power_mode = paren(value).map(|(_, t)| t),
            "bus width" => {
                width = paren(value)
                    .and_then(|(_, t)| t.trim_end_matches("bits").trim().parse::<u8>().ok())
            }
            "timing spec" => timing = paren(value),
            "signal voltage" => ios.signal_voltage = paren(value).map(|(_, t)| t),
            "driver type" => ios.driver_type = paren(value).map(|(_, t)| t),
            _ => {}
        }
    }
    let missing =
        |what: &str| format!("ios: no readable `{what}` line (debugfs.c mmc_ios_show format)");
    ios.clock_hz = clock.ok_or_else(|| missing("clock"))?;
    ios.actual_clock_hz = actual;
    ios.bus_width_bits = width.ok_or_else(|| missing("bus width"))?;
    let (code, text) = timing.ok_or_else(|| missing("timing spec"))?;
    ios.timing_code = code;
    ios.timing = text;
    Ok(ios)
}

fn hz(v: &str) -> Option<u64> {
    v.strip_suffix("Hz")?.trim().parse().ok()
}

/// `2 (sd high-speed)` -> (2, "sd high-speed").
fn paren(v: &str) -> Option<(u32, String)> {
    let (num, rest) = v.split_once('(')?;
    let text = rest.strip_suffix(')')?;
    Some((num.trim().parse().ok()?, text.to_string()))
}
