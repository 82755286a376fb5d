//! What `benchboot devices` prints: a table with every reason for each refused device
//! ([`to_table`]), or a JSON array ([`to_json`]). A disk's vendor and model come from
//! the device itself (a USB stick's SCSI INQUIRY), its mount points from volume labels
//! and a card's registers from the card: all printed escaped
//! ([`benchboot_results::text`]).

use std::path::PathBuf;

use benchboot_results::text::{escape, escape_json, escape_lines};
use serde::Serialize;

use super::disk::{human_bytes, Device, Transport};
use super::rules::{Limits, Verdict};

#[derive(Serialize)]
struct RefusalJson {
    reason: &'static str,
    message: String,
}

#[derive(Serialize)]
struct DeviceJson<'a> {
    #[serde(flatten)]
    device: &'a Device,
    writable: bool,
    refusals: Vec<RefusalJson>,
    unmount: &'a [PathBuf],
}

/// `benchboot devices --json`: the candidates with their verdicts, as a JSON array.
pub fn to_json(devices: &[Device], limits: &Limits) -> String {
    let verdicts: Vec<Verdict> = devices.iter().map(|d| d.verdict(limits)).collect();
    let rows: Vec<DeviceJson> = devices
        .iter()
        .zip(&verdicts)
        .map(|(device, v)| DeviceJson {
            device,
            writable: v.writable(),
            refusals: v
                .refusals
                .iter()
                .map(|r| RefusalJson {
                    reason: r.code(),
                    message: r.to_string(),
                })
                .collect(),
            unmount: &v.unmount,
        })
        .collect();
    escape_json(&serde_json::to_string_pretty(&rows).expect("devices serialise")).into_owned()
}

/// `benchboot devices`: a table, then every reason for each refused device.
pub fn to_table(devices: &[Device], limits: &Limits) -> String {
    use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    t.set_header([
        "device",
        "size",
        "transport",
        "model",
        "removable",
        "mounted at",
        "flash",
    ]);
    let mut notes = String::new();
    for d in devices {
        let v = d.verdict(limits);
        let model = [d.vendor.as_deref(), d.model.as_deref()]
            .into_iter()
            .flatten();
        let mounts: Vec<String> = d
            .mounts
            .iter()
            .map(|m| m.mount_point.display().to_string())
            .collect();
        t.add_row([
            escape(&d.path.display().to_string()).into_owned(),
            human_bytes(d.size_bytes),
            d.transport.to_string(),
            escape(&model.collect::<Vec<_>>().join(" ")).into_owned(),
            match (d.removable, d.transport) {
                (true, _) => "yes",
                (false, Transport::Mmc) => "yes (mmc)",
                (false, _) => "no",
            }
            .to_string(),
            escape_lines(&mounts.join("\n")).into_owned(),
            if v.writable() { "ok" } else { "refused" }.to_string(),
        ]);
        if let Some(card) = &d.card {
            notes.push_str(&format!(
                "{}: the card's registers: {card} (is it what it claims? benchboot probe {})\n",
                d.path.display(),
                d.path.display()
            ));
        }
        for r in &v.refusals {
            notes.push_str(&format!("{}: {r}\n", d.path.display()));
        }
    }
    if devices.is_empty() {
        return "no disks found\n".into();
    }
    format!("{t}\n{}", escape_lines(&notes))
}

#[cfg(test)]
mod tests {
    use super::super::disk::Mount;
    use super::*;

    /// A USB stick whose INQUIRY strings and volume label carry escape sequences.
    fn hostile() -> Device {
        Device {
            name: "sdb".into(),
            path: "/dev/sdb".into(),
            dev: Some("8:16".into()),
            size_bytes: 16 << 30,
            logical_block_size: 512,
            removable: true,
            read_only: false,
            transport: Transport::Usb,
            model: Some("Stick\u{1b}[2J\u{9b}1m".into()),
            vendor: Some("ACME\u{202e}".into()),
            partitions: Vec::new(),
            holders: Vec::new(),
            backing_file: None,
            mounts: vec![Mount {
                device: "sdb1".into(),
                mount_point: "/media/me/\u{1b}]0;x\u{7}".into(),
                fstype: "vfat".into(),
                through: None,
                spans: Vec::new(),
            }],
            swaps: Vec::new(),
            system: Vec::new(),
            card: None,
        }
    }

    #[test]
    fn what_a_device_says_about_itself_is_printed_escaped() {
        let d = [hostile()];
        let limits = Limits::new(false);
        let clean = |s: &str| {
            !s.chars()
                .any(|c| c != '\n' && benchboot_results::text::needs_escape(c))
        };
        let table = to_table(&d, &limits);
        assert!(clean(&table), "{table}");
        assert!(
            table.contains(r"ACME\u{202e} Stick\u{1b}[2J\u{9b}1m"),
            "{table}"
        );
        assert!(table.contains(r"/media/me/\u{1b}]0;x\u{7}"), "{table}");
        let json = to_json(&d, &limits);
        assert!(clean(&json), "{json}");
        assert!(json.contains(r"Stick\u001b[2J\u009b1m"), "{json}");
        let line = d[0].describe();
        assert_eq!(
            line,
            r"/dev/sdb (ACME\u{202e} Stick\u{1b}[2J\u{9b}1m, usb, 16 GiB)"
        );
    }
}
