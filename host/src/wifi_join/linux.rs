//! Linux: NetworkManager's `nmcli` finds the WiFi adapter (`nmcli -t -f DEVICE,TYPE
//! device`: `DEVICE:TYPE` lines, `:` and `\` in a field escaped with `\`) and joins
//! (`nmcli device wifi connect SSID [password P] ifname DEVICE`). Without `nmcli` the
//! wireless interfaces are the ones with a `wireless/` folder under `/sys/class/net`,
//! and the commands to type are printed: `iw dev IF connect SSID FREQ` for an open
//! network (iw alone cannot do WPA2), `wpa_supplicant` for WPA2, then a DHCP client.

use std::path::Path;

use anyhow::{bail, Result};
use benchboot_netbench::wifi_offer::WifiOffer;

use super::{shell_quote, Joiner, Outcome, System};

/// The arguments that list the devices.
pub const LIST_ARGS: [&str; 4] = ["-t", "-f", "DEVICE,TYPE", "device"];

/// What the person is told when the host has no WiFi adapter (after what was looked
/// for).
const FIX: &str = "Plug in a WiFi adapter (or turn the radio on: `nmcli radio wifi on`) and \
     run `benchboot peer --wifi` again; or join the board's network by hand and run \
     `benchboot peer`";

/// Splits one `nmcli -t` line into its fields (`\:` is a colon inside a field, `\\` a
/// backslash).
pub fn split_terse(line: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => field.extend(chars.next()),
            ':' => fields.push(std::mem::take(&mut field)),
            c => field.push(c),
        }
    }
    fields.push(field);
    fields
}

/// `(device, type)` of every line of `nmcli -t -f DEVICE,TYPE device`.
pub fn parse_devices(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| {
            let f = split_terse(l);
            match f.as_slice() {
                [d, t] => Some((d.clone(), t.clone())),
                _ => None,
            }
        })
        .collect()
}

/// The first device of type `wifi` (not `wifi-p2p`).
pub fn wifi_device(devices: &[(String, String)]) -> Option<&str> {
    devices
        .iter()
        .find(|(_, t)| t == "wifi")
        .map(|(d, _)| d.as_str())
}

/// The join command's arguments: `device wifi connect SSID [password P] ifname DEVICE`.
pub fn connect_args(device: &str, ssid: &str, offer: &WifiOffer) -> Vec<String> {
    let mut a: Vec<String> = ["device", "wifi", "connect", ssid]
        .map(String::from)
        .to_vec();
    if let Some(p) = &offer.passphrase {
        a.extend(["password".to_owned(), p.clone()]);
    }
    a.extend(["ifname".to_owned(), device.to_owned()]);
    a
}

/// Runs `nmcli` with `args`.
pub fn join(sys: &System, nmcli: &Path, args: &[String]) -> Outcome {
    match sys.output(nmcli, args) {
        Ok(out) if out.status.success() => {
            Outcome::Joined(String::from_utf8_lossy(&out.stdout).trim().to_owned())
        }
        Ok(out) => {
            let err = String::from_utf8_lossy(&out.stderr).trim().to_owned();
            let said = if err.is_empty() {
                String::from_utf8_lossy(&out.stdout).trim().to_owned()
            } else {
                err
            };
            Outcome::Failed(format!("nmcli {}: {said}", out.status))
        }
        Err(e) => Outcome::Failed(format!("cannot run {}: {e}", nmcli.display())),
    }
}

/// The interfaces under `sys_class_net` with a `wireless/` folder (or a `phy80211`
/// link), sorted.
pub fn wireless_interfaces(sys_class_net: &Path) -> Vec<String> {
    let Ok(dir) = std::fs::read_dir(sys_class_net) else {
        return Vec::new();
    };
    let mut v: Vec<String> = dir
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("wireless").is_dir() || e.path().join("phy80211").exists())
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    v.sort();
    v
}

/// How this Linux host joins: `nmcli` on its first WiFi device; without `nmcli` (or
/// when NetworkManager does not answer), the commands for the first wireless interface.
///
/// # Errors
/// No WiFi device: what `nmcli` listed, or that neither `nmcli` nor a wireless
/// interface was found, with the fix.
pub fn find(sys: &System) -> Result<Joiner> {
    let fallback = |why: String| -> Result<Joiner> {
        match wireless_interfaces(&sys.sys_class_net).into_iter().next() {
            Some(interface) => Ok(Joiner::Iw { interface }),
            None => bail!(
                "no WiFi adapter: {why}, and no interface under {} has a wireless/ folder. {FIX}",
                sys.sys_class_net.display()
            ),
        }
    };
    let Some(nmcli) = sys.find("nmcli") else {
        return fallback("nmcli is not on PATH".into());
    };
    let args: Vec<String> = LIST_ARGS.map(String::from).to_vec();
    let out = match sys.output(&nmcli, &args) {
        Ok(o) if o.status.success() => o,
        Ok(o) => {
            return fallback(format!(
                "`nmcli {}` failed ({}: {})",
                LIST_ARGS.join(" "),
                o.status,
                String::from_utf8_lossy(&o.stderr).trim()
            ))
        }
        Err(e) => return fallback(format!("cannot run {}: {e}", nmcli.display())),
    };
    let devices = parse_devices(&String::from_utf8_lossy(&out.stdout));
    match wifi_device(&devices) {
        Some(d) => Ok(Joiner::Nmcli {
            nmcli,
            device: d.to_owned(),
            sys: sys.clone(),
        }),
        None => {
            let listed: Vec<String> = devices.iter().map(|(d, t)| format!("{d} ({t})")).collect();
            bail!(
                "no WiFi adapter: `nmcli {}` lists no device of type wifi (it lists: {}). {FIX}",
                LIST_ARGS.join(" "),
                if listed.is_empty() {
                    "nothing".to_owned()
                } else {
                    listed.join(", ")
                }
            )
        }
    }
}

/// The commands to join by hand without NetworkManager: `iw` for an open network, a
/// `wpa_supplicant` for WPA2 (iw cannot do the handshake), then a DHCP lease (the
/// board's AP leases the host `.2`).
pub fn by_hand(interface: &str, ssid: &str, offer: &WifiOffer) -> String {
    let i = shell_quote(interface);
    let s = shell_quote(ssid);
    let mut lines = vec![format!(
        "nmcli is not installed, so join `{ssid}` ({} MHz, {}) by hand:",
        offer.freq_mhz,
        super::security_word(offer)
    )];
    match &offer.passphrase {
        None => lines.push(format!("  sudo iw dev {i} connect {s} {}", offer.freq_mhz)),
        Some(p) => {
            lines.push(format!(
                "  wpa_passphrase {s} {} > /tmp/benchboot-wifi.conf",
                shell_quote(p)
            ));
            lines.push(format!(
                "  sudo wpa_supplicant -B -i {i} -c /tmp/benchboot-wifi.conf"
            ));
        }
    }
    lines.push(format!(
        "  sudo dhclient {i}   (or: sudo dhcpcd {i}); this peer keeps serving"
    ));
    lines.join("\n")
}
