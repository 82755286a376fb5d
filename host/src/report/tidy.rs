//! The report as tidy CSV (`--format csv`): one row per raw measurement, raw bytes and
//! nanoseconds next to the derived rates, so a spreadsheet or R/pandas needs no parsing.

use anyhow::{Context as _, Result};
use benchboot_results::counters::{NetDirection, NetTest};
use benchboot_results::figures::{self, Figure};
use benchboot_results::health::conditions_during;
use benchboot_results::network::{mbit_per_s, CpuTimes};

use benchboot_results::{mb_per_s, mib_per_s, HealthScope, RunResults};
use serde::{Deserialize, Serialize};

mod memory;

/// One measurement. Empty cells (`None`, `""`) mean "does not apply to this section".
///
/// Sections: `storage` (one pass: `repetition` 0-based), `device-read` (`direction`
/// cached/buffered), `random` (`direction` read/write, `ios`, `iops`), `tcp` (a whole
/// run), `tcp-interval` (one report interval, `repetition` = interval index),
/// `latency` (one round trip, `repetition` = sample index), `http`, `udp` (one run at
/// an offered load), `wifi` (one WiFi entry in one direction: the `wifi_*` columns, the
/// median of the single-stream TCP intervals in `mib_per_s` / `mbit_per_s` with
/// `min_*` / `max_*` beside them; a skipped entry's reason in `note`), `verify` (`ns` 0,
/// `note` says ok or where it mismatched). Network rows name their link (gadget
/// function, wired link or WiFi entry) in `target`.
///
/// Memory sections ([`memory`]): `memory-sample` (one bandwidth sample: `target` the
/// core set `cpu0` / `all4`, `mode` the kernel id, `direction` copy/fill/read,
/// `repetition` the sample index, `bytes`, `ns`, `mb_per_s` (10^6 B/s), `mib_per_s`;
/// `note` the tinymembench label), `memory-bandwidth` (one kernel on one core set:
/// `mb_per_s` the best sample's, `spread_pct`), `memory-latency` (one block size of one
/// page kind: `target` base/huge, `block_size_bytes`, `reads`, `ns` of the fastest
/// single repeat, `latency_single_ns` / `latency_dual_ns` over L1 and the raw
/// `single_ns_per_read` / `dual_ns_per_read`; the L1 baseline as `direction`
/// `baseline`), `clock` (one clock check: `target` when, `measured_mhz`, `cpufreq_mhz`,
/// `firmware_mhz`, `note` the mismatches).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TidyRow {
    pub run_id: String,
    pub board: String,
    /// True for a QEMU run: never a hardware result.
    pub emulated: bool,
    pub section: String,
    /// Storage/random target label, disk, or network link.
    pub target: String,
    pub filesystem: String,
    /// The mode that ran (storage).
    pub mode: String,
    /// The mode the plan asked for (storage).
    pub requested_mode: String,
    /// write/read, cached/buffered, board-to-host/host-to-board.
    pub direction: String,
    /// Block size, bytes (storage, random); UDP payload per datagram, bytes (udp).
    pub block_size_bytes: Option<u64>,
    pub queue_depth: Option<u32>,
    pub streams: Option<u32>,
    pub repetition: Option<u32>,
    /// Bytes moved inside the timed region.
    pub bytes: Option<u64>,
    /// Operations completed (random I/O).
    pub ios: Option<u64>,
    /// Length of the timed region, ns.
    pub ns: u64,
    /// MiB/s (2^20 B/s).
    pub mib_per_s: Option<f64>,
    /// Mbit/s (10^6 bit/s), network sections.
    pub mbit_per_s: Option<f64>,
    /// MB/s (10^6 B/s), network sections.
    #[serde(default)]
    pub mb_per_s: Option<f64>,
    pub iops: Option<f64>,
    /// Board CPU shares over the span, percent (network sections).
    pub board_cpu_user_pct: Option<f64>,
    pub board_cpu_system_pct: Option<f64>,
    pub board_cpu_irq_pct: Option<f64>,
    pub board_cpu_softirq_pct: Option<f64>,
    pub board_cpu_idle_pct: Option<f64>,
    /// UDP: offered load, Mbit/s (10^6 bit/s) of payload.
    #[serde(default)]
    pub offered_mbit_per_s: Option<f64>,
    /// UDP: datagrams sent, received and lost.
    #[serde(default)]
    pub datagrams_sent: Option<u64>,
    #[serde(default)]
    pub datagrams_received: Option<u64>,
    #[serde(default)]
    pub datagrams_lost: Option<u64>,
    /// UDP: lost / (received + lost) × 100.
    #[serde(default)]
    pub loss_pct: Option<f64>,
    /// UDP: datagrams that arrived after a higher sequence number.
    #[serde(default)]
    pub out_of_order: Option<u64>,
    /// UDP: RFC 3550 interarrival jitter, ms.
    #[serde(default)]
    pub jitter_ms: Option<f64>,
    pub note: String,
    /// Board health flagged during the step that measured this row: conditions joined
    /// by `;` (`under-voltage`, `frequency-capped`, `throttled`, `soft-temp-limit`);
    /// empty when none was flagged or health was not recorded.
    #[serde(default)]
    pub health_flags: String,
    /// WiFi: the spread of the single-stream TCP intervals, MiB/s and Mbit/s.
    #[serde(default)]
    pub min_mib_per_s: Option<f64>,
    #[serde(default)]
    pub max_mib_per_s: Option<f64>,
    #[serde(default)]
    pub min_mbit_per_s: Option<f64>,
    #[serde(default)]
    pub max_mbit_per_s: Option<f64>,
    /// WiFi: the mode as the report prints it (asked → got, MISMATCH).
    #[serde(default)]
    pub wifi_mode: String,
    /// WiFi: the channel measured on (obtained, else asked): band `2.4` / `5`, number,
    /// width and centre frequency (MHz); `wifi_no_ht` for 802.11a/g.
    #[serde(default)]
    pub wifi_band: String,
    #[serde(default)]
    pub wifi_channel: Option<u8>,
    #[serde(default)]
    pub wifi_width_mhz: Option<u32>,
    #[serde(default)]
    pub wifi_center_mhz: Option<u32>,
    #[serde(default)]
    pub wifi_no_ht: Option<bool>,
    /// WiFi: the radio obtained another channel than asked.
    #[serde(default)]
    pub wifi_mismatch: Option<bool>,
    /// WiFi: `open` / `wpa2-psk`.
    #[serde(default)]
    pub wifi_security: String,
    /// WiFi: the PHY rate of this direction (the board's tx or rx), Mbit/s, and in words.
    #[serde(default)]
    pub phy_mbit_per_s: Option<f64>,
    #[serde(default)]
    pub phy_rate: String,
    /// WiFi: the peer station's signal as the board heard it, dBm.
    #[serde(default)]
    pub signal_dbm: Option<i8>,
    /// WiFi: power save on the board's interface before the tests.
    #[serde(default)]
    pub power_save: Option<bool>,
    /// WiFi: the board's transmit retries and failures over the tests; empty when the
    /// driver gives none.
    #[serde(default)]
    pub tx_retries: Option<u32>,
    #[serde(default)]
    pub tx_failed: Option<u32>,
    /// WiFi: other BSSs overlapping the entry's channel.
    #[serde(default)]
    pub neighbours_on_channel: Option<usize>,
    /// Memory bandwidth: the samples' standard deviation as a percentage of the best
    /// sample's MB/s (tinymembench's "(0.3%)").
    #[serde(default)]
    pub spread_pct: Option<f64>,
    /// Memory latency: dependent reads per repeat.
    #[serde(default)]
    pub reads: Option<u64>,
    /// Memory latency: ns per read over the L1 baseline of the fastest repeat, single and
    /// dual (tinymembench's single / dual random read).
    #[serde(default)]
    pub latency_single_ns: Option<f64>,
    #[serde(default)]
    pub latency_dual_ns: Option<f64>,
    /// Memory latency: raw ns per read of the fastest repeat (baseline included).
    #[serde(default)]
    pub single_ns_per_read: Option<f64>,
    #[serde(default)]
    pub dual_ns_per_read: Option<f64>,
    /// Clock: the calibrated loop's figure, cpufreq's and the firmware's, MHz (10^6 Hz).
    #[serde(default)]
    pub measured_mhz: Option<f64>,
    #[serde(default)]
    pub cpufreq_mhz: Option<f64>,
    #[serde(default)]
    pub firmware_mhz: Option<f64>,
    /// `figure` rows: a figure no other section shows ([`super::other_figures`]): its
    /// metric ([`benchboot_results::figures::Metric::name`]), case id, value and units,
    /// and its queue depth or streams; `target`, `mode` (ran), `requested_mode`,
    /// `direction`, `block_size_bytes` and `repetition` from its context.
    #[serde(default)]
    pub metric: String,
    #[serde(default)]
    pub figure: String,
    #[serde(default)]
    pub value: Option<f64>,
    #[serde(default)]
    pub units: String,
    #[serde(default)]
    pub param: Option<u32>,
}

impl TidyRow {
    fn new(r: &RunResults, section: &str, target: &str) -> TidyRow {
        TidyRow {
            run_id: r.run_id.clone(),
            board: r.board.clone(),
            emulated: r.emulated,
            section: section.into(),
            target: target.into(),
            filesystem: String::new(),
            mode: String::new(),
            requested_mode: String::new(),
            direction: String::new(),
            block_size_bytes: None,
            queue_depth: None,
            streams: None,
            repetition: None,
            bytes: None,
            ios: None,
            ns: 0,
            mib_per_s: None,
            mbit_per_s: None,
            mb_per_s: None,
            iops: None,
            board_cpu_user_pct: None,
            board_cpu_system_pct: None,
            board_cpu_irq_pct: None,
            board_cpu_softirq_pct: None,
            board_cpu_idle_pct: None,
            offered_mbit_per_s: None,
            datagrams_sent: None,
            datagrams_received: None,
            datagrams_lost: None,
            loss_pct: None,
            out_of_order: None,
            jitter_ms: None,
            note: String::new(),
            health_flags: String::new(),
            min_mib_per_s: None,
            max_mib_per_s: None,
            min_mbit_per_s: None,
            max_mbit_per_s: None,
            wifi_mode: String::new(),
            wifi_band: String::new(),
            wifi_channel: None,
            wifi_width_mhz: None,
            wifi_center_mhz: None,
            wifi_no_ht: None,
            wifi_mismatch: None,
            wifi_security: String::new(),
            phy_mbit_per_s: None,
            phy_rate: String::new(),
            signal_dbm: None,
            power_save: None,
            tx_retries: None,
            tx_failed: None,
            neighbours_on_channel: None,
            spread_pct: None,
            reads: None,
            latency_single_ns: None,
            latency_dual_ns: None,
            single_ns_per_read: None,
            dual_ns_per_read: None,
            measured_mhz: None,
            cpufreq_mhz: None,
            firmware_mhz: None,
            metric: String::new(),
            figure: String::new(),
            value: None,
            units: String::new(),
            param: None,
        }
    }

    fn health(mut self, r: &RunResults, scope: HealthScope) -> TidyRow {
        self.health_flags = conditions_during(&r.health, &scope)
            .iter()
            .map(|c| c.name())
            .collect::<Vec<_>>()
            .join(";");
        self
    }

    fn cpu(mut self, t: &CpuTimes) -> TidyRow {
        if let Some(c) = t.share() {
            self.board_cpu_user_pct = Some(c.user);
            self.board_cpu_system_pct = Some(c.system);
            self.board_cpu_irq_pct = Some(c.irq);
            self.board_cpu_softirq_pct = Some(c.softirq);
            self.board_cpu_idle_pct = Some(c.idle + c.iowait);
        }
        self
    }

    fn rate(mut self, bytes: u64, ns: u64, mbit: bool) -> TidyRow {
        self.bytes = Some(bytes);
        self.ns = ns;
        self.mib_per_s = Some(mib_per_s(bytes, ns));
        if mbit {
            self.mbit_per_s = Some(mbit_per_s(bytes, ns));
            self.mb_per_s = Some(mb_per_s(bytes, ns));
        }
        self
    }
}

/// `board-to-host` / `host-to-board`, as the results document spells them.
pub fn net_dir_name(d: NetDirection) -> &'static str {
    d.name()
}

/// Every measurement of `r` as a tidy row, in the document's order (memory first, as
/// PID 1 runs it), then every figure no section shows ([`figure_rows`]).
pub fn rows(r: &RunResults) -> Vec<TidyRow> {
    let mut out = memory::memory_rows(r);
    out.extend(storage_rows(r));
    out.extend(device_read_rows(r));
    out.extend(random_rows(r));
    out.extend(tcp_rows(r));
    out.extend(latency_rows(r));
    out.extend(http_rows(r));
    out.extend(udp_rows(r));
    out.extend(wifi_rows(r));
    out.extend(verify_rows(r));
    out.extend(figure_rows(r, &super::other_figures::of_run(r)));
    out
}

/// One `figure` row per figure of `figures` (section docs of [`TidyRow`]).
pub fn figure_rows(r: &RunResults, figures: &[Figure]) -> Vec<TidyRow> {
    figures
        .iter()
        .map(|f| {
            let c = &f.context;
            let mut row = TidyRow::new(r, "figure", &c.target);
            row.mode = c.mode_ran.clone();
            row.requested_mode = c.mode.clone();
            row.direction = c.direction.clone();
            row.block_size_bytes = (c.block_size > 0).then_some(c.block_size);
            row.param = (c.param > 0).then_some(c.param);
            row.repetition = c.repetition;
            row.metric = f.metric.name().into();
            row.figure = f.id.clone();
            row.value = Some(f.value);
            row.units = f.units.clone();
            row
        })
        .collect()
}

fn storage_rows(r: &RunResults) -> Vec<TidyRow> {
    r.storage
        .iter()
        .map(|m| {
            let f = figures::storage(m);
            let c = f.context;
            let scope = HealthScope::Storage {
                target: m.target.clone(),
                mode: m.requested_mode,
                block_size: m.block_size,
            };
            let mut row = TidyRow::new(r, "storage", &c.target)
                .rate(m.bytes, m.nanos, false)
                .health(r, scope);
            row.mib_per_s = Some(f.value);
            row.filesystem = m.filesystem.name().into();
            row.mode = c.mode_ran;
            row.requested_mode = c.mode;
            row.direction = c.direction;
            row.block_size_bytes = Some(c.block_size);
            row.repetition = c.repetition;
            row.note = m.note.clone().unwrap_or_default();
            row
        })
        .collect()
}

fn device_read_rows(r: &RunResults) -> Vec<TidyRow> {
    r.device_reads
        .iter()
        .map(|d| {
            let f = figures::device_read(d);
            let scope = HealthScope::DeviceRead {
                device: d.device.clone(),
            };
            let mut row = TidyRow::new(r, "device-read", &f.context.target)
                .rate(d.bytes, d.nanos, false)
                .health(r, scope);
            row.mib_per_s = Some(f.value);
            row.direction = f.context.direction;
            row
        })
        .collect()
}

fn random_rows(r: &RunResults) -> Vec<TidyRow> {
    r.random
        .iter()
        .map(|x| {
            let f = figures::random(x);
            let c = f.context;
            let scope = HealthScope::Random {
                target: x.target.clone(),
                op: x.op,
                queue_depth: x.queue_depth,
            };
            let mut row = TidyRow::new(r, "random", &c.target).health(r, scope);
            row.direction = c.direction;
            row.mode = c.mode;
            row.block_size_bytes = Some(c.block_size);
            row.queue_depth = Some(c.param);
            row.ios = Some(x.ios);
            row.bytes = Some(x.ios * x.block_size);
            row.ns = x.nanos;
            row.mib_per_s = Some(mib_per_s(x.ios * x.block_size, x.nanos));
            row.iops = Some(f.value);
            row
        })
        .collect()
}

/// Per TCP run its row, then one row per interval.
fn tcp_rows(r: &RunResults) -> Vec<TidyRow> {
    let mut out = Vec::new();
    for t in &r.network.throughput {
        let scope = HealthScope::Network {
            link: t.link.clone(),
            test: NetTest::of_throughput(t),
        };
        let f = figures::tcp(t);
        let mut row = TidyRow::new(r, "tcp", &f.context.target)
            .rate(t.bytes, t.nanos, true)
            .cpu(&t.board_cpu)
            .health(r, scope.clone());
        row.mbit_per_s = Some(f.value);
        row.direction = f.context.direction.clone();
        row.streams = Some(t.streams);
        out.push(row);
        for (i, iv) in t.intervals.iter().enumerate() {
            let mut row = TidyRow::new(r, "tcp-interval", &t.link)
                .rate(iv.bytes, iv.end_ns.saturating_sub(iv.start_ns), true)
                .cpu(&iv.board_cpu)
                .health(r, scope.clone());
            row.direction = net_dir_name(t.direction).into();
            row.streams = Some(t.streams);
            row.repetition = Some(i as u32);
            out.push(row);
        }
    }
    out
}

/// One row per round trip.
fn latency_rows(r: &RunResults) -> Vec<TidyRow> {
    let mut out = Vec::new();
    for l in &r.network.latency {
        let scope = HealthScope::Network {
            link: l.link.clone(),
            test: NetTest::Latency,
        };
        for (i, &ns) in l.rtt_ns.iter().enumerate() {
            let mut row = TidyRow::new(r, "latency", &l.link).health(r, scope.clone());
            row.repetition = Some(i as u32);
            row.ns = ns;
            out.push(row);
        }
    }
    out
}

fn http_rows(r: &RunResults) -> Vec<TidyRow> {
    r.network
        .http
        .iter()
        .map(|h| {
            let scope = HealthScope::Network {
                link: h.link.clone(),
                test: NetTest::of_http(h),
            };
            let f = figures::http(h);
            let mut row = TidyRow::new(r, "http", &f.context.target)
                .rate(h.bytes, h.nanos, true)
                .cpu(&h.board_cpu)
                .health(r, scope);
            row.mbit_per_s = Some(f.value);
            row.direction = f.context.direction;
            row
        })
        .collect()
}

fn udp_rows(r: &RunResults) -> Vec<TidyRow> {
    r.network
        .udp
        .iter()
        .map(|u| {
            let scope = HealthScope::Network {
                link: u.link.clone(),
                test: NetTest::of_udp(u),
            };
            let f = figures::udp(u);
            let mut row = TidyRow::new(r, "udp", &f.context.target)
                .rate(u.bytes, u.nanos, true)
                .cpu(&u.board_cpu)
                .health(r, scope);
            row.mbit_per_s = Some(f.value);
            row.direction = f.context.direction;
            row.offered_mbit_per_s = Some(u.target_bitrate as f64 / 1e6);
            row.datagrams_sent = Some(u.sent);
            row.datagrams_received = Some(u.received);
            row.datagrams_lost = Some(u.lost);
            row.loss_pct = u.loss_pct();
            row.out_of_order = Some(u.out_of_order);
            row.jitter_ms = Some(u.jitter_ns as f64 / 1e6);
            row.block_size_bytes = Some(u64::from(u.datagram_bytes));
            row
        })
        .collect()
}

fn verify_rows(r: &RunResults) -> Vec<TidyRow> {
    r.verify
        .iter()
        .map(|v| {
            let scope = HealthScope::Verify {
                target: v.target.clone(),
            };
            let mut row = TidyRow::new(r, "verify", &v.target).health(r, scope);
            row.bytes = Some(v.bytes);
            row.note = match v.first_mismatch {
                None => "ok".into(),
                Some(at) => format!("mismatch at byte {at}"),
            };
            row
        })
        .collect()
}

/// One `wifi` row per WiFi entry and direction ([`crate::render::wifi::wifi_rows`]).
fn wifi_rows(r: &RunResults) -> Vec<TidyRow> {
    use crate::render::wifi as w;
    w::wifi_rows(&r.network)
        .into_iter()
        .map(|row| {
            let e = row.entry;
            let mut t = TidyRow::new(r, "wifi", &e.link);
            t.direction = row.direction.map_or("", net_dir_name).into();
            t.streams = row.direction.map(|_| 1);
            if let Some(s) = row.spread {
                t.mib_per_s = Some(s.mib.median);
                t.min_mib_per_s = Some(s.mib.min);
                t.max_mib_per_s = Some(s.mib.max);
                t.mbit_per_s = Some(s.mbit.median);
                t.min_mbit_per_s = Some(s.mbit.min);
                t.max_mbit_per_s = Some(s.mbit.max);
            }
            t.wifi_mode = w::mode_cell(e);
            if let Some(c) = w::measured_channel(e) {
                t.wifi_band = c.band.name().into();
                t.wifi_channel = Some(c.channel);
                t.wifi_width_mhz = Some(c.width_mhz);
                t.wifi_center_mhz = Some(c.center1_mhz);
                t.wifi_no_ht = Some(c.no_ht);
            }
            t.wifi_mismatch = Some(w::channel_mismatch(e));
            t.wifi_security = e.security.clone();
            t.note = match (&e.skipped, row.direction) {
                (Some(why), _) => format!("skipped: {why}"),
                (None, None) => "no single-stream TCP run".into(),
                (None, Some(_)) => String::new(),
            };
            if e.skipped.is_some() {
                return t;
            }
            let station = w::station(e);
            let phy = station.and_then(|s| match row.direction {
                Some(NetDirection::BoardToHost) => s.tx_bitrate.as_ref(),
                Some(NetDirection::HostToBoard) => s.rx_bitrate.as_ref(),
                None => None,
            });
            t.phy_mbit_per_s = phy.and_then(|b| b.mbit());
            t.phy_rate = phy.map(w::bitrate_label).unwrap_or_default();
            t.signal_dbm = station.and_then(|s| s.signal_dbm.or(s.signal_avg_dbm));
            t.power_save = e.power_save;
            let retries = w::retries(e);
            t.tx_retries = retries.retries;
            t.tx_failed = retries.failed;
            t.neighbours_on_channel = Some(w::on_channel(e).len());
            t
        })
        .collect()
}

/// Tidy rows as CSV with a header line; control characters in cells written as
/// `\u{1b}` ([`benchboot_results::text::escape`]).
pub fn to_csv(rows: &[TidyRow]) -> Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for row in rows {
        w.serialize(row).context("writing a CSV row")?;
    }
    let bytes = w.into_inner().context("finishing the CSV")?;
    let csv = String::from_utf8(bytes).context("CSV is not UTF-8")?;
    // Board names, run ids and labels from the document: no control characters reach a
    // terminal or a spreadsheet (written as `\u{1b}`, benchboot_results::text::escape).
    Ok(benchboot_results::text::escape_lines(&csv).into_owned())
}

/// Reads CSV written by [`to_csv`] back.
pub fn from_csv(text: &str) -> Result<Vec<TidyRow>> {
    csv::Reader::from_reader(text.as_bytes())
        .deserialize()
        .collect::<Result<Vec<TidyRow>, _>>()
        .context("reading benchboot report CSV")
}
