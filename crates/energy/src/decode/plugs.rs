//! Smart plugs read over HTTP: the body of one answer to power (W), the plug's energy
//! counter (J) and, where given, voltage (V) and current (A).
//!
//! Sources:
//! - Shelly gen1 `GET /meter/0`: `power` W, `total` watt-minutes (Shelly gen1 API docs,
//!   "/meter/{index}"; geerlingguy/shelly-plug-prometheus reads the same fields).
//! - Shelly gen2+ `GET /rpc/Switch.GetStatus?id=0`: `apower` W, `aenergy.total` Wh,
//!   `voltage` V, `current` A (Shelly gen2 API docs, "Switch", "Status").
//! - Tasmota `GET /cm?cmnd=Status%2010`: `StatusSNS.ENERGY.Power` W, `.Total` kWh,
//!   `.Voltage` V, `.Current` A (Tasmota docs, "JSON Status Responses", "Commands" →
//!   `Status 10`).
//! - NETIO `GET /netio.xml`: per `<Output>` its `<ID>`, `<Load>` W, `<Energy>` Wh,
//!   `<Current>` mA; `<GlobalMeasure><Voltage>` V (NETIO "XML API" protocol description,
//!   wiki.netio-products.com; ThomasKaiser/sbc-bench `sbc-bench.sh` `MonitorNetio` reads
//!   `<Voltage>`, `<Current>` and `<PowerFactor>` from the same file).

use super::DecodeError;

/// The longest answer a plug's status can be, bytes: 64 KiB. A Shelly status is about
/// 1 KiB, Tasmota's `Status 10` under 1 KiB, a NETIO 8-output `netio.xml` about 4 KiB;
/// anything longer is not a plug's answer.
pub const MAX_BODY_BYTES: u64 = 64 * 1024;

/// Which plug answers, and the path its status is read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plug {
    ShellyGen1,
    ShellyGen2,
    Tasmota,
    Netio,
}

impl Plug {
    /// The path to GET on the plug.
    pub fn path(self) -> &'static str {
        match self {
            Plug::ShellyGen1 => "/meter/0",
            Plug::ShellyGen2 => "/rpc/Switch.GetStatus?id=0",
            Plug::Tasmota => "/cm?cmnd=Status%2010",
            Plug::Netio => "/netio.xml",
        }
    }

    /// As `benchboot power list` names it: `shelly-gen1`, `shelly-gen2`, `tasmota`, `netio`.
    pub fn name(self) -> &'static str {
        match self {
            Plug::ShellyGen1 => "shelly-gen1",
            Plug::ShellyGen2 => "shelly-gen2",
            Plug::Tasmota => "tasmota",
            Plug::Netio => "netio",
        }
    }

    /// The smallest step of the power the plug reports, W: Shelly gen1 and Tasmota give
    /// whole or tenth watts as their firmware rounds; this is the step of the JSON
    /// number as sent, not the meter chip's accuracy (HLW8012-class chips resolve about
    /// 1 W at 10 s, docs/energy notes). NETIO `<Load>` is whole watts.
    pub fn resolution_w(self) -> f64 {
        match self {
            Plug::ShellyGen1 | Plug::ShellyGen2 | Plug::Tasmota => 0.1,
            Plug::Netio => 1.0,
        }
    }

    /// Decodes `body` as this plug's answer; `output` is the NETIO output (1-based,
    /// ignored by the others).
    ///
    /// # Errors
    /// As [`shelly_gen1`], [`shelly_gen2`], [`tasmota`], [`netio`].
    pub fn decode(self, body: &[u8], output: u32) -> Result<PlugReading, DecodeError> {
        match self {
            Plug::ShellyGen1 => shelly_gen1(body),
            Plug::ShellyGen2 => shelly_gen2(body),
            Plug::Tasmota => tasmota(body),
            Plug::Netio => netio(body, output),
        }
    }
}

/// One answer's readings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlugReading {
    /// Active power, W.
    pub watts: f64,
    /// The plug's energy counter, J.
    pub counter_j: Option<f64>,
    /// Mains voltage, V.
    pub volts: Option<f64>,
    /// Current, A.
    pub amps: Option<f64>,
}

fn json(body: &[u8], what: &str) -> Result<serde_json::Value, DecodeError> {
    if body.len() as u64 > MAX_BODY_BYTES {
        return Err(DecodeError::new(format!(
            "{what}: the answer is {} bytes, more than a plug's status ({MAX_BODY_BYTES} at \
             most)",
            body.len()
        )));
    }
    serde_json::from_slice(body).map_err(|e| {
        DecodeError::new(format!(
            "{what}: the answer is not JSON ({e}): is the address a {what}?"
        ))
    })
}

/// A finite number at `path` (keys from the root), or an error naming the path.
fn number(v: &serde_json::Value, path: &[&str], what: &str) -> Result<f64, DecodeError> {
    let mut at = v;
    for (i, k) in path.iter().enumerate() {
        at = at.get(k).ok_or_else(|| {
            DecodeError::new(format!(
                "{what}: the answer has no `{}`: is this a {what} with a power meter?",
                path[..=i].join(".")
            ))
        })?;
    }
    let n = at.as_f64().filter(|n| n.is_finite()).ok_or_else(|| {
        DecodeError::new(format!(
            "{what}: `{}` is {at}, not a number{}",
            path.join("."),
            if at.is_array() {
                " (a meter with several channels: benchboot reads one-channel plugs)"
            } else {
                ""
            }
        ))
    })?;
    Ok(n)
}

fn optional(v: &serde_json::Value, path: &[&str], what: &str) -> Result<Option<f64>, DecodeError> {
    let mut at = v;
    for k in path {
        match at.get(k) {
            Some(x) => at = x,
            None => return Ok(None),
        }
    }
    if at.is_null() {
        return Ok(None);
    }
    number(v, path, what).map(Some)
}

fn watts_ok(w: f64, field: &str, what: &str) -> Result<f64, DecodeError> {
    if w < 0.0 {
        return Err(DecodeError::new(format!(
            "{what}: `{field}` is {w} W, negative: the plug measures power fed back; put the \
             board on the plug's output"
        )));
    }
    Ok(w)
}

/// Shelly gen1 `/meter/0`: `power` W; `total` watt-minutes → J (× 60).
///
/// # Errors
/// Not JSON, `power` missing or not a number, negative power.
pub fn shelly_gen1(body: &[u8]) -> Result<PlugReading, DecodeError> {
    const WHAT: &str = "Shelly gen1 plug";
    let v = json(body, WHAT)?;
    Ok(PlugReading {
        watts: watts_ok(number(&v, &["power"], WHAT)?, "power", WHAT)?,
        counter_j: optional(&v, &["total"], WHAT)?.map(|wmin| wmin * 60.0),
        volts: None,
        amps: None,
    })
}

/// Shelly gen2+ `Switch.GetStatus`: `apower` W; `aenergy.total` Wh → J (× 3600);
/// `voltage` V; `current` A.
///
/// # Errors
/// Not JSON, `apower` missing or not a number, negative power.
pub fn shelly_gen2(body: &[u8]) -> Result<PlugReading, DecodeError> {
    const WHAT: &str = "Shelly gen2 plug";
    let v = json(body, WHAT)?;
    Ok(PlugReading {
        watts: watts_ok(number(&v, &["apower"], WHAT)?, "apower", WHAT)?,
        counter_j: optional(&v, &["aenergy", "total"], WHAT)?.map(|wh| wh * 3600.0),
        volts: optional(&v, &["voltage"], WHAT)?,
        amps: optional(&v, &["current"], WHAT)?,
    })
}

/// Tasmota `Status 10`: `StatusSNS.ENERGY.Power` W; `.Total` kWh → J (× 3.6e6);
/// `.Voltage` V; `.Current` A.
///
/// # Errors
/// Not JSON, no `StatusSNS.ENERGY.Power` (a device without an energy sensor), a power
/// that is an array (a multi-channel meter), negative power.
pub fn tasmota(body: &[u8]) -> Result<PlugReading, DecodeError> {
    const WHAT: &str = "Tasmota plug";
    let v = json(body, WHAT)?;
    let e = ["StatusSNS", "ENERGY"];
    let p = |k: &'static str| [e[0], e[1], k];
    Ok(PlugReading {
        watts: watts_ok(number(&v, &p("Power"), WHAT)?, "Power", WHAT)?,
        counter_j: optional(&v, &p("Total"), WHAT)?.map(|kwh| kwh * 3.6e6),
        volts: optional(&v, &p("Voltage"), WHAT)?,
        amps: optional(&v, &p("Current"), WHAT)?,
    })
}

/// The text between `<name>` and `</name>` in `s`, the first such.
fn tag<'a>(s: &'a str, name: &str) -> Option<&'a str> {
    let open = format!("<{name}>");
    let close = format!("</{name}>");
    let start = s.find(&open)? + open.len();
    let len = s[start..].find(&close)?;
    Some(s[start..start + len].trim())
}

fn xml_number(s: &str, name: &str, output: u32) -> Result<Option<f64>, DecodeError> {
    match tag(s, name) {
        None => Ok(None),
        Some(t) => t
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .map(Some)
            .ok_or_else(|| {
                DecodeError::new(format!(
                    "NETIO: output {output}'s <{name}> is `{}`, not a number",
                    t.chars().take(40).collect::<String>()
                ))
            }),
    }
}

/// NETIO `netio.xml`: output `output` (its `<ID>`, 1-based): `<Load>` W, `<Energy>` Wh →
/// J (× 3600), `<Current>` mA → A; `<GlobalMeasure><Voltage>` V.
///
/// # Errors
/// Over [`MAX_BODY_BYTES`], not UTF-8, no `<Output>` with that `<ID>` (the message lists
/// the IDs there are), no `<Load>` (a NETIO without metering), a field not a number.
pub fn netio(body: &[u8], output: u32) -> Result<PlugReading, DecodeError> {
    if body.len() as u64 > MAX_BODY_BYTES {
        return Err(DecodeError::new(format!(
            "NETIO: netio.xml is {} bytes, more than a NETIO's status ({MAX_BODY_BYTES} at most)",
            body.len()
        )));
    }
    let s = std::str::from_utf8(body)
        .map_err(|_| DecodeError::new("NETIO: netio.xml is not UTF-8 text: is this a NETIO?"))?;
    let mut ids = Vec::new();
    let mut rest = s;
    while let Some(start) = rest.find("<Output>") {
        let after = &rest[start + "<Output>".len()..];
        let end = after.find("</Output>").unwrap_or(after.len());
        let block = &after[..end];
        rest = &after[end..];
        let id = tag(block, "ID").and_then(|t| t.parse::<u32>().ok());
        if let Some(id) = id {
            ids.push(id);
        }
        if id != Some(output) {
            continue;
        }
        let Some(load) = xml_number(block, "Load", output)? else {
            return Err(DecodeError::new(format!(
                "NETIO: output {output} has no <Load>: this NETIO model does not meter its \
                 outputs (NETIO 4All, PowerBOX 3Px, PowerPDU 4C do)"
            )));
        };
        let load = watts_ok(load, "Load", "NETIO")?;
        let global = tag(s, "GlobalMeasure").unwrap_or("");
        return Ok(PlugReading {
            watts: load,
            counter_j: xml_number(block, "Energy", output)?.map(|wh| wh * 3600.0),
            volts: xml_number(global, "Voltage", output)?,
            amps: xml_number(block, "Current", output)?.map(|ma| ma / 1000.0),
        });
    }
    if ids.is_empty() {
        return Err(DecodeError::new(
            "NETIO: netio.xml has no <Output> with an <ID>: is the XML API enabled (M2M API \
             Protocols → XML API, read-only) and is this a NETIO?",
        ));
    }
    Err(DecodeError::new(format!(
        "NETIO: no output {output}; this one has output(s) {}: give one as netio:http://ADDRESS#N",
        ids.iter()
            .take(64)
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::noise::Noise;

    // The example status of a Shelly Plug S (gen1 API docs, "/meter/{index}").
    const SHELLY1: &str =
        r#"{"power":0,"overpower":0,"is_valid":true,"timestamp":0,"counters":[0,0,0],"total":0}"#;

    #[test]
    fn shelly_gen1_watts_and_watt_minutes() {
        let r = shelly_gen1(SHELLY1.as_bytes()).unwrap();
        assert_eq!((r.watts, r.counter_j), (0.0, Some(0.0)));
        let body = br#"{"power":4.37,"overpower":0,"is_valid":true,"timestamp":1700000000,"counters":[4.2,4.4,4.1],"total":1234}"#;
        let r = shelly_gen1(body).unwrap();
        assert_eq!(r.watts, 4.37);
        assert_eq!(r.counter_j, Some(1234.0 * 60.0));
        let e = shelly_gen1(br#"{"ison":true}"#).unwrap_err().to_string();
        assert!(e.contains("no `power`"), "{e}");
        let e = shelly_gen1(b"<html>").unwrap_err().to_string();
        assert!(e.contains("not JSON"), "{e}");
    }

    // Shape of the gen2 docs' Switch.GetStatus example (Shelly Plus Plug S).
    const SHELLY2: &str = r#"{"id":0,"source":"init","output":true,"apower":5.2,"voltage":229.8,"current":0.041,"aenergy":{"total":12.345,"by_minute":[86.1,87.0,85.9],"minute_ts":1700000000},"temperature":{"tC":40.5,"tF":104.8}}"#;

    #[test]
    fn shelly_gen2_watts_and_watt_hours() {
        let r = shelly_gen2(SHELLY2.as_bytes()).unwrap();
        assert_eq!(r.watts, 5.2);
        assert!((r.counter_j.unwrap() - 12.345 * 3600.0).abs() < 1e-9);
        assert_eq!((r.volts, r.amps), (Some(229.8), Some(0.041)));
        let e = shelly_gen2(br#"{"id":0,"output":true}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("no `apower`"), "{e}");
        let e = shelly_gen2(br#"{"apower":-3.0}"#).unwrap_err().to_string();
        assert!(e.contains("negative"), "{e}");
    }

    // The shape of Tasmota's documented Status 10 answer on a Sonoff POW.
    const TASMOTA: &str = r#"{"StatusSNS":{"Time":"2024-01-01T12:00:00","ENERGY":{"TotalStartTime":"2023-01-01T00:00:00","Total":0.520,"Yesterday":0.100,"Today":0.320,"Power":27,"ApparentPower":29,"ReactivePower":10,"Factor":0.94,"Voltage":234,"Current":0.122}}}"#;

    #[test]
    fn tasmota_watts_and_kilowatt_hours() {
        let r = tasmota(TASMOTA.as_bytes()).unwrap();
        assert_eq!(r.watts, 27.0);
        assert!((r.counter_j.unwrap() - 0.52 * 3.6e6).abs() < 1e-6);
        assert_eq!((r.volts, r.amps), (Some(234.0), Some(0.122)));
        let e = tasmota(br#"{"StatusSNS":{"Time":"x","Switch1":"OFF"}}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("no `StatusSNS.ENERGY`"), "{e}");
        let e = tasmota(br#"{"StatusSNS":{"ENERGY":{"Power":[3,4]}}}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("several channels"), "{e}");
    }

    // The structure of the NETIO XML API's netio.xml (two outputs shown).
    const NETIO: &str = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\r\n<set>\r\n<Agent><Model>4All</Model><NumOutputs>4</NumOutputs></Agent>\r\n<GlobalMeasure>\r\n<Voltage>230.4</Voltage>\r\n<Frequency>50.0</Frequency>\r\n<TotalCurrent>190</TotalCurrent>\r\n<TotalLoad>31</TotalLoad>\r\n</GlobalMeasure>\r\n<Outputs>\r\n<Output>\r\n<ID>1</ID>\r\n<Name>output_1</Name>\r\n<State>1</State>\r\n<Current>25</Current>\r\n<PowerFactor>0.55</PowerFactor>\r\n<Load>3</Load>\r\n<Energy>120</Energy>\r\n</Output>\r\n<Output>\r\n<ID>2</ID>\r\n<Name>sbc</Name>\r\n<State>1</State>\r\n<Current>165</Current>\r\n<PowerFactor>0.73</PowerFactor>\r\n<Load>28</Load>\r\n<Energy>4567</Energy>\r\n</Output>\r\n</Outputs>\r\n</set>\r\n";

    #[test]
    fn netio_one_output_watts_and_watt_hours() {
        let r = netio(NETIO.as_bytes(), 2).unwrap();
        assert_eq!(r.watts, 28.0);
        assert_eq!(r.counter_j, Some(4567.0 * 3600.0));
        assert_eq!(r.volts, Some(230.4));
        assert!((r.amps.unwrap() - 0.165).abs() < 1e-12);
        assert_eq!(netio(NETIO.as_bytes(), 1).unwrap().watts, 3.0);
        let e = netio(NETIO.as_bytes(), 5).unwrap_err().to_string();
        assert!(
            e.contains("no output 5; this one has output(s) 1, 2"),
            "{e}"
        );
        let e = netio(
            b"<set><Outputs><Output><ID>1</ID><State>1</State></Output></Outputs></set>",
            1,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("no <Load>"), "{e}");
        let e = netio(b"<html>login</html>", 1).unwrap_err().to_string();
        assert!(e.contains("is the XML API enabled"), "{e}");
        assert_eq!(Plug::Netio.decode(NETIO.as_bytes(), 1).unwrap().watts, 3.0);
    }

    #[test]
    fn hostile_bodies_never_panic_and_big_ones_are_refused() {
        let big = vec![b' '; MAX_BODY_BYTES as usize + 1];
        for p in [
            Plug::ShellyGen1,
            Plug::ShellyGen2,
            Plug::Tasmota,
            Plug::Netio,
        ] {
            assert!(p.decode(&big, 1).is_err());
        }
        let mut n = Noise(7);
        let seeds = [SHELLY1, SHELLY2, TASMOTA, NETIO];
        for _ in 0..500 {
            let seed = seeds[(n.next() % 4) as usize].as_bytes();
            let cut = (n.next() as usize) % (seed.len() + 1);
            let mut b = seed[..cut].to_vec();
            if n.next().is_multiple_of(2) && !b.is_empty() {
                let i = (n.next() as usize) % b.len();
                b[i] = n.next() as u8;
            }
            let k = (n.next() % 8) as usize;
            b.extend(n.bytes(k));
            for p in [
                Plug::ShellyGen1,
                Plug::ShellyGen2,
                Plug::Tasmota,
                Plug::Netio,
            ] {
                let _ = p.decode(&b, 2);
            }
        }
        // Deep nesting stays within serde_json's recursion limit (an error, no overflow).
        let deep = "[".repeat(10_000);
        assert!(shelly_gen2(deep.as_bytes()).is_err());
    }
}
