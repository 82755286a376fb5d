//! macOS: `networksetup -listallhardwareports` names the Wi-Fi device (blocks of
//! `Hardware Port: Wi-Fi` / `Device: en0` / `Ethernet Address: ...`; `AirPort` on old
//! releases) and `networksetup -setairportnetwork DEVICE SSID [PASSWORD]` joins. That
//! command exits 0 even when it failed and says so on stdout (`Could not find network
//! X.`, `Failed to join network X.`, `Error: ...`): those words count as failure.

use std::path::Path;

use anyhow::{bail, Result};

use super::{Joiner, Outcome, System, ValidOffer};

/// The arguments that list the hardware ports.
pub const LIST_ARGS: [&str; 1] = ["-listallhardwareports"];

/// `(hardware port, device)` of every block of `networksetup -listallhardwareports`.
pub fn parse_ports(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut port: Option<String> = None;
    for line in text.lines() {
        if let Some(p) = line.strip_prefix("Hardware Port:") {
            port = Some(p.trim().to_owned());
        } else if let Some(d) = line.strip_prefix("Device:") {
            if let Some(p) = port.take() {
                out.push((p, d.trim().to_owned()));
            }
        }
    }
    out
}

/// The device of the first `Wi-Fi` (or `AirPort`) port.
pub fn wifi_device(ports: &[(String, String)]) -> Option<&str> {
    ports
        .iter()
        .find(|(p, _)| p == "Wi-Fi" || p == "AirPort")
        .map(|(_, d)| d.as_str())
}

/// `-setairportnetwork DEVICE SSID [PASSWORD]`. `networksetup` takes the password
/// only as an argument (it has no form that reads it from standard input or a file),
/// so on macOS the passphrase is on the command line for the seconds the command runs,
/// readable by local users (`ps`); it is the board's own for that one test and opens
/// only the board's AP.
pub fn join_args(device: &str, offer: &ValidOffer) -> Vec<String> {
    let mut a = vec![
        "-setairportnetwork".to_owned(),
        device.to_owned(),
        offer.ssid().to_owned(),
    ];
    a.extend(offer.passphrase().map(str::to_owned));
    a
}

/// Whether `networksetup`'s words say it failed (it exits 0 regardless).
pub fn says_failed(stdout: &str) -> bool {
    ["Could not", "Failed", "Error"]
        .iter()
        .any(|w| stdout.contains(w))
}

/// Runs `networksetup` with `args`.
pub fn join(sys: &System, program: &Path, args: &[String]) -> Outcome {
    match sys.output(program, args) {
        Ok(out) => {
            let said = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout).trim(),
                String::from_utf8_lossy(&out.stderr).trim()
            );
            if out.status.success() && !says_failed(&said) {
                Outcome::Joined(said)
            } else {
                Outcome::Failed(format!("networksetup {}: {said}", out.status))
            }
        }
        Err(e) => Outcome::Failed(format!("cannot run {}: {e}", program.display())),
    }
}

/// How this Mac joins: `networksetup` on its Wi-Fi device.
///
/// # Errors
/// No `networksetup`, or no Wi-Fi port among the hardware ports (named), with the fix.
pub fn find(sys: &System) -> Result<Joiner> {
    let fix = "Turn Wi-Fi on (or plug in an adapter) and run `benchboot peer --wifi` again; \
               or join the board's network by hand and run `benchboot peer`";
    let Some(program) = sys.find("networksetup") else {
        bail!("no WiFi adapter found: networksetup is not on PATH (it is in /usr/sbin). {fix}");
    };
    let args: Vec<String> = LIST_ARGS.map(String::from).to_vec();
    let out = sys.output(&program, &args).map_err(|e| {
        anyhow::anyhow!(
            "no WiFi adapter found: cannot run {}: {e}",
            program.display()
        )
    })?;
    let ports = parse_ports(&String::from_utf8_lossy(&out.stdout));
    match wifi_device(&ports) {
        Some(d) => Ok(Joiner::Networksetup {
            program,
            device: d.to_owned(),
            sys: sys.clone(),
        }),
        None => {
            let listed: Vec<String> = ports.iter().map(|(p, d)| format!("{p} ({d})")).collect();
            bail!(
                "no WiFi adapter: `networksetup -listallhardwareports` lists no Wi-Fi port \
                 (it lists: {}). {fix}",
                if listed.is_empty() {
                    "nothing".to_owned()
                } else {
                    listed.join(", ")
                }
            )
        }
    }
}
