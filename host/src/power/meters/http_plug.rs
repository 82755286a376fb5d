//! Smart plugs read over HTTP: Shelly gen1 and gen2, Tasmota, NETIO. One GET per reading
//! through the host's bounded GET (`crate::http_get`), decoded by
//! `benchboot_energy::decode::plugs`.

use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use benchboot_energy::decode::plugs::{self, Plug, PlugReading};
use benchboot_energy::Sample;

use crate::http_get;
use crate::power::Meter;

/// The time between two GETs, s: one a second, what the plugs update at (Shelly and
/// Tasmota refresh their power about once a second; sbc-bench polls NETIO every 0.8 s).
pub const PERIOD_S: f64 = 1.0;
/// Connect and whole-answer timeout of one GET.
pub const TIMEOUT: Duration = Duration::from_secs(2);

/// A plug read over HTTP.
pub struct HttpPlug {
    plug: Plug,
    base: String,
    url: String,
    output: u32,
    last: Option<PlugReading>,
    last_get: Option<Instant>,
}

impl HttpPlug {
    /// The plug at `address` (`http://10.0.0.5`, `https://...`, or a bare host, which
    /// gets `http://`); for NETIO a `#N` suffix picks output N (1 unless given).
    ///
    /// # Errors
    /// A NETIO output that is not a number from 1, or an address with a path, query or
    /// whitespace (give the plug's address alone).
    pub fn new(plug: Plug, address: &str) -> Result<HttpPlug> {
        let (addr, output) = match (plug, address.rsplit_once('#')) {
            (Plug::Netio, Some((a, n))) => match n.parse::<u32>() {
                Ok(n) if n >= 1 => (a, n),
                _ => bail!(
                    "netio:{address}: the output after # must be a number from 1, e.g. \
                     netio:http://10.0.0.5#2"
                ),
            },
            (_, Some(_)) => bail!(
                "{}:{address}: only a NETIO has outputs to pick with #",
                plug.name()
            ),
            (_, None) => (address, 1),
        };
        let base = if addr.starts_with("http://") || addr.starts_with("https://") {
            addr.trim_end_matches('/').to_owned()
        } else {
            format!("http://{}", addr.trim_end_matches('/'))
        };
        let after_scheme = base.split_once("://").map_or("", |(_, r)| r);
        if after_scheme.is_empty() || after_scheme.contains(['/', '?', ' ', '\t', '\n', '\r']) {
            bail!(
                "{}:{address}: give the plug's address alone (http://HOST or http://HOST:PORT); \
                 benchboot adds {}",
                plug.name(),
                plug.path()
            );
        }
        Ok(HttpPlug {
            plug,
            url: format!("{base}{}", plug.path()),
            base,
            output,
            last: None,
            last_get: None,
        })
    }

    /// One GET and its decoding.
    fn get(&mut self) -> Result<PlugReading> {
        self.last_get = Some(Instant::now());
        let body = http_get::get(&http_get::Get {
            url: &self.url,
            shown: &self.url,
            timeout: TIMEOUT,
            at: None,
            token: None,
            max_bytes: plugs::MAX_BODY_BYTES,
            what: "a plug's status",
            hint: ": is the plug on and on this network?",
        })?;
        let r = self
            .plug
            .decode(&body, self.output)
            .map_err(|e| anyhow::anyhow!("GET {}: {e}", self.url))?;
        self.last = Some(r);
        Ok(r)
    }
}

impl Meter for HttpPlug {
    fn name(&self) -> String {
        match self.plug {
            Plug::Netio => format!("netio {}#{}", self.base, self.output),
            p => format!("{} {}", p.name(), self.base),
        }
    }

    fn resolution_w(&self) -> f64 {
        self.plug.resolution_w()
    }

    fn period_s(&self) -> f64 {
        PERIOD_S
    }

    fn read(&mut self, origin: Instant) -> Result<Vec<Sample>> {
        if let Some(at) = self.last_get {
            let next = at + Duration::from_secs_f64(PERIOD_S);
            if let Some(wait) = next.checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
        }
        let asked = Instant::now();
        let r = self.get()?;
        // Stamped halfway between asking and the answer.
        let t = (asked.saturating_duration_since(origin).as_secs_f64()
            + Instant::now()
                .saturating_duration_since(origin)
                .as_secs_f64())
            / 2.0;
        Ok(vec![Sample {
            t_s: t,
            watts: r.watts,
            volts: r.volts,
            amps: r.amps,
        }])
    }

    fn counter_j(&mut self) -> Option<f64> {
        self.last.and_then(|r| r.counter_j)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::TcpListener;
    use std::sync::{Arc, Mutex};

    /// Serves `body` with status 200 to every connection on 127.0.0.1; records the
    /// request lines.
    fn serve(body: &'static str) -> (String, Arc<Mutex<Vec<String>>>) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap().to_string();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s2 = Arc::clone(&seen);
        std::thread::spawn(move || {
            for s in l.incoming().flatten() {
                let mut s = s;
                let mut buf = [0u8; 4096];
                let n = s.read(&mut buf).unwrap_or(0);
                let req = String::from_utf8_lossy(&buf[..n]);
                s2.lock()
                    .unwrap()
                    .push(req.lines().next().unwrap_or("").to_owned());
                let _ = write!(
                    s,
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        (addr, seen)
    }

    #[test]
    fn each_plug_is_read_over_http() {
        let cases: [(Plug, &str, &'static str, f64, Option<f64>); 4] = [
            (
                Plug::ShellyGen1,
                "",
                r#"{"power":4.37,"is_valid":true,"total":1234}"#,
                4.37,
                Some(1234.0 * 60.0),
            ),
            (
                Plug::ShellyGen2,
                "",
                r#"{"id":0,"apower":5.2,"voltage":229.8,"current":0.041,"aenergy":{"total":12.5}}"#,
                5.2,
                Some(12.5 * 3600.0),
            ),
            (
                Plug::Tasmota,
                "",
                r#"{"StatusSNS":{"ENERGY":{"Total":0.5,"Power":27,"Voltage":234,"Current":0.122}}}"#,
                27.0,
                Some(0.5 * 3.6e6),
            ),
            (
                Plug::Netio,
                "#2",
                "<set><GlobalMeasure><Voltage>230.0</Voltage></GlobalMeasure><Outputs><Output><ID>1</ID><Load>3</Load><Energy>1</Energy></Output><Output><ID>2</ID><Current>120</Current><Load>28</Load><Energy>40</Energy></Output></Outputs></set>",
                28.0,
                Some(40.0 * 3600.0),
            ),
        ];
        for (plug, suffix, body, watts, counter) in cases {
            let (addr, seen) = serve(body);
            let mut m = HttpPlug::new(plug, &format!("http://{addr}/{suffix}")).unwrap();
            let origin = Instant::now();
            let s = m.read(origin).unwrap();
            assert_eq!(s.len(), 1);
            assert_eq!(s[0].watts, watts, "{plug:?}");
            assert!(s[0].t_s >= 0.0 && s[0].t_s < 2.0);
            assert_eq!(m.counter_j(), counter, "{plug:?}");
            let line = seen.lock().unwrap()[0].clone();
            assert_eq!(line, format!("GET {} HTTP/1.1", plug.path()), "{plug:?}");
        }
    }

    #[test]
    fn names_addresses_and_refusals() {
        let m = HttpPlug::new(Plug::ShellyGen2, "10.0.0.5").unwrap();
        assert_eq!(m.name(), "shelly-gen2 http://10.0.0.5");
        assert_eq!(m.url, "http://10.0.0.5/rpc/Switch.GetStatus?id=0");
        let m = HttpPlug::new(Plug::Netio, "http://pdu.local:8080#3").unwrap();
        assert_eq!(m.name(), "netio http://pdu.local:8080#3");
        assert_eq!(m.url, "http://pdu.local:8080/netio.xml");
        let e = HttpPlug::new(Plug::Netio, "http://x#0")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("a number from 1"), "{e}");
        let e = HttpPlug::new(Plug::Tasmota, "http://x#2")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("only a NETIO"), "{e}");
        let e = HttpPlug::new(Plug::ShellyGen1, "http://x/meter/0")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("address alone"), "{e}");
        // A plug that answers something else: the decoder's words, with the URL.
        let (addr, _) = serve("<html>router login</html>");
        let mut m = HttpPlug::new(Plug::ShellyGen1, &addr).unwrap();
        let e = format!("{:#}", m.read(Instant::now()).unwrap_err());
        assert!(
            e.contains(&format!(
                "GET http://{addr}/meter/0: Shelly gen1 plug: the answer is not JSON"
            )),
            "{e}"
        );
    }
}
