//! Linux: NetworkManager's `nmcli` finds the WiFi adapter (`nmcli -t -f DEVICE,TYPE
//! device`: `DEVICE:TYPE` lines, `:` and `\` in a field escaped with `\`) and joins
//! ([`join_steps`]: an open network with `nmcli device wifi connect SSID ifname
//! DEVICE`; a WPA2 one through a profile whose passphrase nmcli reads from its standard
//! input, never from its command line). Without `nmcli` the
//! wireless interfaces are the ones with a `wireless/` folder under `/sys/class/net`,
//! and the commands to type are printed: `iw dev IF connect SSID FREQ` for an open
//! network (iw alone cannot do WPA2), `wpa_supplicant` for WPA2, then a DHCP client.

use std::path::Path;

use anyhow::{bail, Result};

use super::{shell_quote, Joiner, Outcome, System, ValidOffer};

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

/// One `nmcli` run of a join.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub args: Vec<String>,
    /// Written to its standard input (the passphrase file `passwd-file /dev/stdin`
    /// reads); `None`: `/dev/null`.
    pub input: Option<String>,
    /// When false its failure is ignored (deleting a profile that may not exist).
    pub must_succeed: bool,
}

/// Where nmcli reads the passphrase file of `connection up ... passwd-file`: its own
/// standard input (a pipe: nmcli reads any file to its end, `nm_utils_fd_get_contents`).
pub const PASSWD_FILE: &str = "/dev/stdin";

/// The `nmcli` runs that join `offer` on `device`:
///
/// - open: `device wifi connect SSID ifname DEVICE`;
/// - WPA2: `nmcli device wifi connect` takes the passphrase only as an argument
///   (`password P`), which every local user can read in `/proc/PID/cmdline`, so a
///   profile named after the SSID is made without it and activated with it on standard
///   input: `connection delete id SSID` (an older one; may fail), `connection add type
///   wifi ifname DEVICE con-name SSID ssid SSID autoconnect no wifi-sec.key-mgmt
///   wpa-psk wifi-sec.psk-flags 2` (2: not saved, asked at each activation), then
///   `connection up id SSID ifname DEVICE passwd-file /dev/stdin` reading
///   `802-11-wireless-security.psk:PASSPHRASE` (nmcli(1), `connection up`).
pub fn join_steps(device: &str, offer: &ValidOffer) -> Vec<Step> {
    let ssid = offer.ssid();
    let step = |args: &[&str], input: Option<String>, must_succeed: bool| Step {
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        input,
        must_succeed,
    };
    match offer.passphrase() {
        None => vec![step(
            &["device", "wifi", "connect", ssid, "ifname", device],
            None,
            true,
        )],
        Some(p) => vec![
            step(&["connection", "delete", "id", ssid], None, false),
            step(
                &[
                    "connection",
                    "add",
                    "type",
                    "wifi",
                    "ifname",
                    device,
                    "con-name",
                    ssid,
                    "ssid",
                    ssid,
                    "autoconnect",
                    "no",
                    "wifi-sec.key-mgmt",
                    "wpa-psk",
                    "wifi-sec.psk-flags",
                    "2",
                ],
                None,
                true,
            ),
            step(
                &[
                    "connection",
                    "up",
                    "id",
                    ssid,
                    "ifname",
                    device,
                    "passwd-file",
                    PASSWD_FILE,
                ],
                Some(format!("802-11-wireless-security.psk:{p}\n")),
                true,
            ),
        ],
    }
}

/// Runs `nmcli` for each of `steps` in turn, stopping at the first that must succeed
/// and fails; joined with the last one's words.
pub fn join(sys: &System, nmcli: &Path, steps: &[Step]) -> Outcome {
    let mut said = String::new();
    for step in steps {
        let out =
            sys.output_with_input(nmcli, &step.args, step.input.as_deref().map(str::as_bytes));
        match out {
            Ok(out) if out.status.success() => {
                said = String::from_utf8_lossy(&out.stdout).trim().to_owned();
            }
            Ok(_) if !step.must_succeed => {}
            Ok(out) => {
                let err = String::from_utf8_lossy(&out.stderr).trim().to_owned();
                let words = if err.is_empty() {
                    String::from_utf8_lossy(&out.stdout).trim().to_owned()
                } else {
                    err
                };
                return Outcome::Failed(format!(
                    "`nmcli {}` failed ({}): {words}",
                    step.args.join(" "),
                    out.status
                ));
            }
            Err(e) => return Outcome::Failed(format!("cannot run {}: {e}", nmcli.display())),
        }
    }
    Outcome::Joined(said)
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
pub fn by_hand(interface: &str, offer: &ValidOffer) -> String {
    let ssid = offer.ssid();
    let i = shell_quote(interface);
    let s = shell_quote(ssid);
    let mut lines = vec![format!(
        "nmcli is not installed, so join `{ssid}` ({} MHz, {}) by hand:",
        offer.offer().freq_mhz,
        super::security_word(offer.offer())
    )];
    match offer.passphrase() {
        None => lines.push(format!(
            "  sudo iw dev {i} connect {s} {}",
            offer.offer().freq_mhz
        )),
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
