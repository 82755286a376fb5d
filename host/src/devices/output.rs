//! What `benchboot devices` prints: a table with every reason for each refused device
//! ([`to_table`]), or a JSON array ([`to_json`]).

use std::path::PathBuf;

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
    serde_json::to_string_pretty(&rows).expect("devices serialise")
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
            d.path.display().to_string(),
            human_bytes(d.size_bytes),
            d.transport.to_string(),
            model.collect::<Vec<_>>().join(" "),
            match (d.removable, d.transport) {
                (true, _) => "yes",
                (false, Transport::Mmc) => "yes (mmc)",
                (false, _) => "no",
            }
            .to_string(),
            mounts.join("\n"),
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
    format!("{t}\n{notes}")
}
