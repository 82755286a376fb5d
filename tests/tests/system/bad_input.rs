//! Bad input, one table: every parser that reads outside input (board files, the shared
//! board file, plans, results documents, DHCP packets, HTTP request heads) refuses each
//! case with an error that names the file and field (or, for the results server, the
//! right status), and never panics. The same parsers are fuzzed in `fuzz/`.
//!
//! Adding a case is one line in [`CASES`]: what it is, the input (an edit of a valid
//! one), and the fragments the error must contain.

use std::net::Ipv4Addr;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use benchboot_board::{Board, Shared};
use benchboot_dhcp::codec::{option, HEADER_LEN, MIN_LEN};
use benchboot_dhcp::{Message, MessageType};
use benchboot_netbench::http::head as http;
use benchboot_plan::Plan;
use benchboot_results::{RunResults, SystemInfo};

/// One bad input, as an edit of a valid one.
enum Input {
    /// `boards/<board>.toml` as shipped, edited.
    BoardFile(&'static str, fn(String) -> String),
    /// `boards/shared.toml` as shipped, edited.
    SharedFile(fn(String) -> String),
    /// The example plan with the JSON value at a pointer replaced (`""`: the whole plan).
    PlanJson(&'static str, &'static str),
    /// A plan file (`my-plan.toml`) for a board, as `benchboot plan check` and PID 1 read it.
    PlanFile(&'static str, &'static str),
    /// A plan file's WiFi section: accepted (the rest of the plan runs), and what PID 1
    /// will record as WiFi errors and skipped entries is the "error" checked.
    WifiPlanFile(&'static str, &'static str),
    /// A valid results document with the JSON value at a pointer replaced.
    ResultsJson(&'static str, &'static str),
    /// A valid results document's text, edited.
    ResultsText(fn(String) -> String),
    /// A valid DHCPDISCOVER's bytes, edited.
    DhcpBytes(fn(Vec<u8>) -> Vec<u8>),
    /// A request head as the results server reads it.
    HttpHead(fn() -> Vec<u8>),
}

use Input::*;

/// (what, input, fragments the error must contain).
type Case = (&'static str, Input, &'static [&'static str]);

#[rustfmt::skip]
const CASES: &[Case] = &[
    // --- Board files -----------------------------------------------------------------
    ("board: unknown field", BoardFile("rpi-zero-w", |t| t.replace("[target]", "colour = \"red\"\n[target]")), &["boards/rpi-zero-w.toml", "unknown field `colour`"]),
    ("board: missing field", BoardFile("rpi-zero-w", |t| drop_line(&t, "cpu = ")), &["boards/rpi-zero-w.toml", "missing field `cpu`"]),
    ("board: name differs from the file", BoardFile("rpi-zero-w", |t| t.replace("name = \"rpi-zero-w\"", "name = \"rpi-zero\"")), &["boards/rpi-zero-w.toml", "field `name`", "`rpi-zero`"]),
    ("board: wrong target triple", BoardFile("rpi-zero-w", |t| set_value(&t, "triple", "\"x86_64-unknown-linux-gnu\"")), &["boards/rpi-zero-w.toml", "field `target.triple`", "x86_64-unknown-linux-gnu"]),
    ("board: unknown kernel flavour", BoardFile("rpi-zero-w", |t| set_value(&t, "flavour", "\"rpi5\"")), &["boards/rpi-zero-w.toml", "field `kernel.flavour`", "no kernel flavour `rpi5`"]),
    ("board: flavour of another architecture", BoardFile("rpi-zero-w", |t| set_value(&t, "flavour", "\"arm64\"")), &["boards/rpi-zero-w.toml", "field `kernel.flavour`", "cannot run"]),
    ("board: unknown module set", BoardFile("rpi-zero-w", |t| t.replace("load = [\"@filesystems\", \"@health-rpi\"]", "load = [\"@nosuchset\"]")), &["boards/rpi-zero-w.toml", "field `modules.load`", "no module set `nosuchset`"]),
    ("board: module with .ko", BoardFile("rpi-zero-w", |t| t.replace("load = [\"@filesystems\", \"@health-rpi\"]", "load = [\"ext4.ko\"]")), &["boards/rpi-zero-w.toml", "field `modules.load`", "ext4.ko"]),
    ("board: DTB fix-up with a relative node", BoardFile("rpi-zero-w", |t| t.replacen("node = \"/soc/usb@7e980000\"", "node = \"soc/usb\"", 1)), &["boards/rpi-zero-w.toml", "field `kernel.dtb-fixups`", "absolute node path"]),
    ("board: DTB fix-up both sets and deletes", BoardFile("rpi-zero-w", |t| t.replacen("value = \"peripheral\"", "value = \"peripheral\"\ndelete-node = true", 1)), &["boards/rpi-zero-w.toml", "field `kernel.dtb-fixups`", "one of the three"]),
    ("board: DTB name is a path", BoardFile("rpi-zero-w", |t| set_value(&t, "dtb", "\"../bcm2835-rpi-zero-w.dtb\"")), &["boards/rpi-zero-w.toml", "field `kernel.dtb`"]),
    ("board: config-txt on a U-Boot board", BoardFile("beaglebone-black", |t| t.replace("[boot]", "[boot]\nconfig-txt = [\"enable_uart=1\"]")), &["boards/beaglebone-black.toml", "field `boot.config-txt`", "config.txt"]),
    ("board: config-txt sets the kernel", BoardFile("rpi-zero-w", |t| set_value(&t, "config-txt", "[\"kernel=zImage\"]")), &["boards/rpi-zero-w.toml", "field `boot.config-txt`", "kernel=zImage"]),
    ("board: console in the command line", BoardFile("rpi-zero-w", |t| set_value(&t, "cmdline", "\"console=ttyAMA0 rootwait\"")), &["boards/rpi-zero-w.toml", "field `boot.cmdline`"]),
    ("board: unknown boot loader", BoardFile("rpi-zero-w", |t| set_value(&t, "loader", "\"grub\"")), &["boards/rpi-zero-w.toml", "field `boot.loader`", "no boot loader `grub`"]),
    ("board: unknown gadget function", BoardFile("rpi-zero-w", |t| set_value(&t, "functions", "[\"ncm\", \"mass-storage\"]")), &["boards/rpi-zero-w.toml", "field `gadget.functions`", "mass-storage"]),
    ("board: unknown QEMU network", BoardFile("rpi-zero-w", |t| set_value(&t, "network", "\"tap\"")), &["boards/rpi-zero-w.toml", "field `qemu.network`", "tap"]),
    ("board: not TOML", BoardFile("rpi-zero-w", |t| t.replace("[target]", "[target")), &["boards/rpi-zero-w.toml", "TOML parse error"]),
    ("board: wrong type", BoardFile("rpi-zero-w", |t| set_value(&t, "console-serial-index", "\"one\"")), &["boards/rpi-zero-w.toml", "console-serial-index", "invalid type"]),
    // --- The shared board file -------------------------------------------------------
    ("shared: kernel release not in the package", SharedFile(|t| t.replacen("release = \"6.1.0-50-rpi\"", "release = \"6.1.0-49-rpi\"", 1)), &["boards/shared.toml", "field `kernels.release`", "6.1.0-49-rpi"]),
    ("shared: loader file with a path", SharedFile(|t| t.replacen("files = [\"MLO\"", "files = [\"../MLO\"", 1)), &["boards/shared.toml", "field `loaders.files`", "../MLO"]),
    ("shared: unknown loader config", SharedFile(|t| t.replacen("config = \"extlinux\"", "config = \"grub\"", 1)), &["boards/shared.toml", "unknown variant `grub`"]),
    ("shared: bad module name in a set", SharedFile(|t| t.replacen("filesystems = [\"crc32c_generic\"", "filesystems = [\"kernel/fs/ext4.ko\"", 1)), &["boards/shared.toml", "field `module-sets`", "ext4.ko"]),
    // --- Plans -------------------------------------------------------------------------
    ("plan: block size 0", PlanJson("/storage/block_sizes", "[4096, 0]"), &["plan", "field `storage.block_sizes`", "0 is outside"]),
    ("plan: block size above 64 MiB", PlanJson("/storage/block_sizes", "[134217728]"), &["field `storage.block_sizes`", "134217728"]),
    ("plan: no block sizes", PlanJson("/storage/block_sizes", "[]"), &["field `storage.block_sizes`"]),
    ("plan: zero repetitions", PlanJson("/storage/repetitions", "0"), &["field `storage.repetitions`", "at least 1"]),
    ("plan: zero byte cap", PlanJson("/storage/byte_cap", "0"), &["field `storage.byte_cap`"]),
    ("plan: duplicate labels", PlanJson("/storage/targets", r#"[{"label":"a","device":"/dev/sda1","filesystem":"ext4"},{"label":"a","device":"/dev/sda2","filesystem":"vfat"}]"#), &["field `storage.targets[1].label`", "unique", "`a` is used twice"]),
    ("plan: target device not under /dev", PlanJson("/storage/targets/0/device", "\"/tmp/disk\""), &["field `storage.targets[0].device`", "/tmp/disk"]),
    ("plan: random target not a label", PlanJson("/storage/random/targets", "[\"nvme\"]"), &["field `storage.random.targets`", "`nvme`"]),
    ("plan: queue depth 0", PlanJson("/storage/random/queue_depths", "[0]"), &["field `storage.random.queue_depths`"]),
    ("plan: results file with a path", PlanJson("/results/file", "\"../results.json\""), &["field `results.file`"]),
    ("plan: prefix length 33", PlanJson("/network/prefix_len", "33"), &["field `network.prefix_len`"]),
    ("plan: unknown field", PlanJson("/storage/colour", "\"red\""), &["plan: unknown field `storage.colour`"]),
    ("plan: wrong type", PlanJson("/storage/repetitions", "\"three\""), &["plan: not valid JSON", "invalid type", "line"]),
    ("plan: not JSON", PlanJson("", "\"{\\\"board\\\":\""), &["plan: not valid JSON"]),
    // --- Plan files ---------------------------------------------------------------------
    ("plan file: unknown key", PlanFile("rpi-zero-w", "extends = \"quick\"\n[storage]\nrepetitons = 2\n"), &["my-plan.toml:3: storage", "unknown field `repetitons`", "expected one of"]),
    ("plan file: wrong type", PlanFile("rpi-zero-w", "[storage]\nrepetitions = \"three\"\n"), &["my-plan.toml:2: storage.repetitions", "invalid type"]),
    ("plan file: zero block size", PlanFile("rpi-zero-w", "[storage]\nblock-sizes = [\"4 KiB\", 0]\n"), &["my-plan.toml:2: storage.block-sizes[1]", "block size 0 B"]),
    ("plan file: a decimal unit", PlanFile("rpi-zero-w", "[storage]\nbyte-cap = \"64 MB\"\n"), &["my-plan.toml:2: storage.byte-cap", "write \"64 MiB\""]),
    ("plan file: a duration without its unit", PlanFile("rpi-zero-w", "[storage]\ntime-cap = 10\n"), &["my-plan.toml:2: storage.time-cap", "\"10 s\""]),
    ("plan file: a label with /", PlanFile("rpi-zero-w", "[[storage.disk]]\nlabel = \"usb/ext4\"\ndevice = \"LABEL=BBEXT4\"\nfilesystem = \"ext4\"\n"), &["my-plan.toml:2: storage.disk[0].label", "'/'", "letters, digits"]),
    ("plan file: a SATA target on a Pi", PlanFile("rpi-2b", "[[storage.disk]]\nlabel = \"ssd\"\nwhole-disk = \"sata\"\ndestroy = true\n"), &["my-plan.toml:3: storage.disk[0].whole-disk", "board rpi-2b has no sata bus (its disk buses: usb)"]),
    ("plan file: a raw whole disk without destroy", PlanFile("bananapi-m1", "[[storage.disk]]\nlabel = \"ssd\"\nwhole-disk = \"sata\"\n"), &["my-plan.toml:3: storage.disk[0].whole-disk", "add `destroy = true`"]),
    ("plan file: the boot disk raw", PlanFile("rpi-2b", "[[storage.disk]]\nlabel = \"card\"\ndevice = \"/dev/mmcblk0\"\nfilesystem = \"raw\"\ndestroy = true\n"), &["my-plan.toml:3: storage.disk[0].device", "boots from", "never overwrites"]),
    ("plan file: the boot disk raw by another spelling", PlanFile("rpi-2b", "[[storage.disk]]\nlabel = \"card\"\ndevice = \"/dev/../dev//mmcblk0/\"\nfilesystem = \"raw\"\ndestroy = true\n"), &["my-plan.toml:3: storage.disk[0].device", "(that is /dev/mmcblk0)", "boots from", "BUS=usb"]),
    ("plan file: the results partition by label", PlanFile("rpi-2b", "[[storage.disk]]\nlabel = \"res\"\ndevice = \"LABEL=BBRESULTS\"\nfilesystem = \"vfat\"\n"), &["my-plan.toml:3: storage.disk[0].device", "results partition", "storage.card"]),
    ("plan file: a by-id link", PlanFile("rpi-2b", "[[storage.disk]]\nlabel = \"usb\"\ndevice = \"/dev/disk/by-id/usb-X-0:0\"\nfilesystem = \"raw\"\ndestroy = true\n"), &["my-plan.toml:3: storage.disk[0].device", "no udev", "kernel name"]),
    ("plan file: two targets on one partition", PlanFile("rpi-2b", "[[storage.disk]]\nlabel = \"a\"\ndevice = \"/dev/sda1\"\nfilesystem = \"ext4\"\n[[storage.disk]]\nlabel = \"b\"\ndevice = \"/dev/./sda1\"\nfilesystem = \"ext4\"\n"), &["my-plan.toml:7: storage.disk[1].device", "target `a` (/dev/sda1)", "keep one"]),
    ("plan file: no such preset", PlanFile("rpi-zero-w", "extends = \"fast\"\n"), &["my-plan.toml:1: extends", "`fast` is not a preset"]),
    ("plan file: a wired link of no kind", PlanFile("rpi-3b", "[[network.wired]]\nlink = \"usb\"\n"), &["my-plan.toml:2: network.wired", "unknown variant `usb`", "usb-adapter"]),
    ("plan file: a wired link's MAC that is none", PlanFile("rpi-3b", "[[network.wired]]\nlink = \"builtin\"\nmac = \"b8:27:eb\"\n"), &["my-plan.toml:3: network.wired[0].mac", "six hex bytes"]),
    ("plan file: a peer on a direct cable", PlanFile("rpi-3b", "[[network.wired]]\nlink = \"builtin\"\npeer = \"10.55.0.2\"\n"), &["my-plan.toml:3: network.wired[0].peer", "topology = \"lan\""]),
    ("plan file: a UDP rate in bytes", PlanFile("rpi-3b", "[network]\nudp-bitrate = \"10 MB/s\"\n"), &["my-plan.toml:2: network.udp-bitrate", "Mbit/s"]),
    ("plan file: a memory latency block that is no power of two", PlanFile("rpi-zero-w", "[memory]\nlatency-max = \"48 MiB\"\n"), &["my-plan.toml:2: memory.latency-max", "not a power of two from 1 KiB"]),
    ("plan file: a memory sample without its unit", PlanFile("rpi-zero-w", "[memory]\nsample = 500\n"), &["my-plan.toml:2: memory.sample", "\"500 ms\""]),
    ("plan file: a WiFi role of no kind", PlanFile("rpi-zero-w", "[network.wifi]\nrole = \"mesh\"\n"), &["my-plan.toml:2: network.wifi.role", "\"ap\"", "\"client\""]),
    ("plan file: a WiFi channel the radio lacks", WifiPlanFile("rpi-zero-w", "[network.wifi]\nchannels = [{ band = \"2.4\", channel = 6, width = 20 }, { band = \"5\", channel = 36, width = 40 }]\n"), &["wifi-ch36-40 skipped", "has no 5 GHz radio (bands: 2.4 GHz)"]),
    ("plan file: a WiFi country that is not one", WifiPlanFile("rpi-zero-w", "[network.wifi]\ncountry = \"XY\"\n"), &["network.wifi.country", "`XY` is not a country code", "ISO 3166-1 alpha-2"]),
    ("plan file: a WPA2 passphrase under 8 characters", WifiPlanFile("rpi-3b", "[network.wifi]\nrole = \"client\"\nssid = \"home\"\npassphrase = \"abc123\"\n"), &["network.wifi.passphrase", "has 6 characters", "8 to 63"]),
    ("plan file: not TOML", PlanFile("rpi-zero-w", "[storage\n"), &["my-plan.toml:1", "invalid table header"]),
    // --- Results documents ---------------------------------------------------------
    ("results: truncated JSON", ResultsText(|t| t[..t.len() / 2].to_owned()), &["results: not JSON", "EOF"]),
    ("results: empty", ResultsText(|_| String::new()), &["results: not JSON"]),
    ("results: future major version", ResultsJson("/schema_version/major", "2"), &["schema version 2.x is not supported", "update benchboot"]),
    ("results: major version as text", ResultsJson("/schema_version/major", "\"1\""), &["`schema_version.major` is \"1\", not a whole number"]),
    ("results: no version", ResultsJson("/schema_version", "null"), &["no `schema_version.major`"]),
    ("results: wrong type of a list", ResultsJson("/storage", "\"many\""), &["does not match", "invalid type", "line"]),
    ("results: negative byte count", ResultsJson("/system/mem_total_bytes", "-1"), &["does not match", "invalid value", "line"]),
    ("results: missing field", ResultsJson("/run_id", "null"), &["does not match", "run_id"]),
    ("results: block size 0", ResultsJson("/storage/0/block_size", "0"), &["storage[0].block_size: 0 bytes", "damaged"]),
    ("results: a timed region of 0 ns", ResultsJson("/storage/0/nanos", "0"), &["storage[0].nanos: 0 ns for", "cannot be empty"]),
    ("results: a plan that is not a plan", ResultsJson("/plan/storage/modes", "[\"mmap\"]"), &["does not match", "unknown variant `mmap`"]),
    // --- DHCP packets --------------------------------------------------------------
    ("dhcp: empty", DhcpBytes(|_| Vec::new()), &["0 bytes is shorter than the 240-byte"]),
    ("dhcp: short (header only)", DhcpBytes(|b| b[..HEADER_LEN].to_vec()), &["236 bytes is shorter"]),
    ("dhcp: bad magic cookie", DhcpBytes(|mut b| { b[HEADER_LEN] = 0; b }), &["magic cookie", "99.130.83.99"]),
    ("dhcp: bad op", DhcpBytes(|mut b| { b[0] = 3; b }), &["op 3"]),
    ("dhcp: hlen above 16", DhcpBytes(|mut b| { b[2] = 17; b }), &["hlen 17"]),
    ("dhcp: option overruns the packet", DhcpBytes(|mut b| { b.truncate(MIN_LEN); b.extend([option::HOST_NAME, 200, b'x']); b }), &["option 12 at byte 240 runs past the end"]),
    ("dhcp: option length byte missing", DhcpBytes(|mut b| { b.truncate(MIN_LEN); b.push(option::HOST_NAME); b }), &["option 12", "runs past the end"]),
    ("dhcp: no end option", DhcpBytes(|mut b| { b.truncate(MIN_LEN); b.extend([option::MESSAGE_TYPE, 1, 1]); b }), &["without the end option"]),
    ("dhcp: message type of 2 bytes", DhcpBytes(|mut b| { b.truncate(MIN_LEN); b.extend([option::MESSAGE_TYPE, 2, 1, 1, option::END]); b }), &["option 53 is 2 bytes long, it must be 1"]),
    ("dhcp: message type 9", DhcpBytes(|mut b| { b.truncate(MIN_LEN); b.extend([option::MESSAGE_TYPE, 1, 9, option::END]); b }), &["message type 9"]),
    ("dhcp: option overload", DhcpBytes(|mut b| { b.truncate(MIN_LEN); b.extend([option::OVERLOAD, 1, 3, option::END]); b }), &["overload"]),
    // --- HTTP request heads to the results server ----------------------------------------
    ("http: oversized request line", HttpHead(|| format!("GET /{} HTTP/1.1\r\n\r\n", "a".repeat(http::MAX_LINE)).into_bytes()), &["HTTP/1.0 414 "]),
    ("http: no CRLF CRLF within the bound", HttpHead(|| format!("GET / HTTP/1.1\r\n{}", format!("X-A: {}\r\n", "b".repeat(1100)).repeat(8)).into_bytes()), &["HTTP/1.0 431 "]),
    ("http: no CRLF CRLF before the end", HttpHead(|| b"GET /results.json HTTP/1.1\r\nHost: x\r\n".to_vec()), &["HTTP/1.0 400 "]),
    ("http: header flood", HttpHead(|| format!("GET / HTTP/1.1\r\n{}\r\n", "X: y\r\n".repeat(http::MAX_HEADERS + 1)).into_bytes()), &["HTTP/1.0 431 "]),
    ("http: oversized header line", HttpHead(|| format!("GET / HTTP/1.1\r\nCookie: {}\r\n\r\n", "c".repeat(http::MAX_LINE)).into_bytes()), &["HTTP/1.0 431 "]),
    ("http: POST", HttpHead(|| b"POST /results.json HTTP/1.1\r\nContent-Length: 0\r\n\r\n".to_vec()), &["HTTP/1.0 405 ", "Allow: GET"]),
    ("http: PUT", HttpHead(|| b"PUT /results.json HTTP/1.1\r\n\r\n".to_vec()), &["HTTP/1.0 405 "]),
    ("http: path traversal", HttpHead(|| b"GET /../../etc/passwd HTTP/1.1\r\n\r\n".to_vec()), &["HTTP/1.0 400 "]),
    ("http: encoded path traversal", HttpHead(|| b"GET /%2e%2e/%2E%2E/etc/shadow HTTP/1.1\r\n\r\n".to_vec()), &["HTTP/1.0 400 "]),
    ("http: other path", HttpHead(|| b"GET /etc/passwd HTTP/1.1\r\n\r\n".to_vec()), &["HTTP/1.0 404 "]),
    ("http: HTTP/0.9 request line", HttpHead(|| b"GET /results.json\r\n\r\n".to_vec()), &["HTTP/1.0 400 "]),
    ("http: binary garbage", HttpHead(|| vec![0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, b'\r', b'\n', b'\r', b'\n']), &["HTTP/1.0 400 "]),
    ("http: header without a colon", HttpHead(|| b"GET /results.json HTTP/1.1\r\nHost x\r\n\r\n".to_vec()), &["HTTP/1.0 400 "]),
];

/// The valid results the server would send in every HTTP case (never for a refusal).
const BODY: &str = "{\"the\":\"results\"}";

fn shipped(file: &str) -> String {
    let path = benchboot_board::boards_dir().join(file);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `text` without the first line that starts with `prefix`.
fn drop_line(text: &str, prefix: &str) -> String {
    let mut dropped = false;
    let out: String = text
        .lines()
        .filter(|l| {
            let drop = !dropped && l.starts_with(prefix);
            dropped |= drop;
            !drop
        })
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(dropped, "no `{prefix}` line to drop");
    out
}

/// `text` with the value of the first `key = ...` line replaced by `value`.
fn set_value(text: &str, key: &str, value: &str) -> String {
    let prefix = format!("{key} = ");
    let mut done = false;
    let out: String = text
        .lines()
        .map(|l| {
            if !done && l.starts_with(&prefix) {
                done = true;
                format!("{prefix}{value}\n")
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    assert!(done, "no `{key} = ` line to edit");
    out
}

/// The JSON `base` with the value at `pointer` replaced by `value` (parsed as JSON;
/// `null` removes the field; a missing last key is added). `""` replaces the whole.
fn edit_json(base: &str, pointer: &str, value: &str) -> String {
    let new: serde_json::Value = serde_json::from_str(value).expect("case value is JSON");
    if pointer.is_empty() {
        return new.as_str().map_or_else(|| new.to_string(), str::to_owned);
    }
    let mut doc: serde_json::Value = serde_json::from_str(base).expect("base is JSON");
    let (parent, key) = pointer.rsplit_once('/').expect("pointer starts with /");
    let parent = doc.pointer_mut(parent).expect("case pointer exists");
    match parent {
        serde_json::Value::Object(m) if new.is_null() => {
            m.remove(key);
        }
        serde_json::Value::Object(m) => {
            m.insert(key.to_owned(), new);
        }
        serde_json::Value::Array(a) => a[key.parse::<usize>().expect("index")] = new,
        _ => panic!("`{pointer}` is not in an object or array"),
    }
    doc.to_string()
}

fn valid_results() -> String {
    let mut r = RunResults::new(
        "rpi-zero-w-1".into(),
        Plan::example(),
        SystemInfo::default(),
    );
    r.event(
        "mount.ext4",
        benchboot_results::Severity::Warning,
        "example",
    );
    let mode = benchboot_plan::Mode::Sync;
    r.storage.push(benchboot_results::StorageMeasurement {
        target: "ext4".into(),
        filesystem: benchboot_plan::Filesystem::Ext4,
        block_size: 4096,
        direction: benchboot_results::Direction::Write,
        mode,
        requested_mode: mode,
        note: None,
        repetition: 0,
        bytes: 1 << 20,
        nanos: 50_000_000,
        stopped_by: benchboot_results::StopReason::Bytes,
        begin_ns: None,
        latency: None,
        timeline: Vec::new(),
    });
    r.to_json()
}

fn valid_discover() -> Vec<u8> {
    let mut chaddr = [0; 16];
    chaddr[..6].copy_from_slice(&[0x02, 0, 0, 0, 0, 1]);
    let mut m = Message {
        xid: 7,
        chaddr,
        ..Message::default()
    };
    m.options.message_type = Some(MessageType::Discover);
    m.options.requested_ip = Some(Ipv4Addr::new(10, 55, 0, 2));
    m.encode()
}

/// Runs one case: `Ok` with what was accepted, or `Err` with the error text (for HTTP:
/// the whole response, `Err` unless it is a 200).
/// The hardware plan of `board`'s image with `text` as its plan file `my-plan.toml`, as
/// `benchboot plan check` and PID 1 resolve it.
fn hardware_plan(board: &str, text: &str) -> anyhow::Result<Plan> {
    let board =
        benchboot_board::load(&benchboot_board::boards_dir(), board).expect("shipped board file");
    let layout = benchboot_image::layout::plan(&Default::default()).expect("layout");
    let file = benchboot_image::plans::PlanText {
        file: "my-plan.toml".into(),
        text: text.to_owned(),
    };
    benchboot_image::plans::hardware(&board, &layout, Vec::new(), &file)
}

fn run(input: &Input, shared: &Shared) -> Result<String, String> {
    match input {
        BoardFile(board, edit) => {
            let file = format!("{board}.toml");
            let text = edit(shipped(&file));
            Board::from_toml(&Path::new("boards").join(&file), &text, shared)
                .map(|b| b.name)
                .map_err(|e| e.to_string())
        }
        SharedFile(edit) => {
            let text = edit(shipped("shared.toml"));
            Shared::from_toml(Path::new("boards/shared.toml"), &text)
                .map(|s| format!("{} kernels", s.kernels.len()))
                .map_err(|e| e.to_string())
        }
        PlanJson(pointer, value) => {
            let base = serde_json::to_string(&Plan::example()).expect("plan serialises");
            Plan::from_json(&edit_json(&base, pointer, value))
                .map(|p| p.board)
                .map_err(|e| e.to_string())
        }
        PlanFile(board, text) => hardware_plan(board, text)
            .map(|p| p.board)
            .map_err(|e| e.to_string()),
        WifiPlanFile(board, text) => {
            let plan =
                hardware_plan(board, text).map_err(|e| format!("refused, not recorded: {e}"))?;
            let w = plan.network.wifi.expect("a WiFi step");
            let mut told: Vec<String> = w.problems.clone();
            told.extend(
                w.entries
                    .iter()
                    .filter_map(|e| e.skip.as_ref().map(|s| format!("{} skipped: {s}", e.name))),
            );
            // The rest of the plan still runs: storage and the other entries.
            assert!(!plan.storage.targets.is_empty());
            if told.is_empty() {
                Ok(plan.board)
            } else {
                Err(told.join("; "))
            }
        }
        ResultsJson(pointer, value) => {
            RunResults::from_json(&edit_json(&valid_results(), pointer, value))
                .map(|r| r.run_id)
                .map_err(|e| e.to_string())
        }
        ResultsText(edit) => RunResults::from_json(&edit(valid_results()))
            .map(|r| r.run_id)
            .map_err(|e| e.to_string()),
        DhcpBytes(edit) => Message::parse(&edit(valid_discover()))
            .map(|m| format!("{m:?}"))
            .map_err(|e| e.to_string()),
        HttpHead(head) => {
            let response = http::respond(&head(), BODY);
            if response.starts_with("HTTP/1.0 200 ") {
                Ok(response)
            } else {
                assert!(
                    !response.contains(BODY),
                    "a refusal carried the results: {response}"
                );
                Err(response)
            }
        }
    }
}

#[test]
fn bad_input_is_refused_with_a_clear_error() {
    let shared = Shared::load(&benchboot_board::boards_dir()).expect("boards/shared.toml loads");
    let mut failures = Vec::new();
    for (what, input, expected) in CASES {
        match catch_unwind(AssertUnwindSafe(|| run(input, &shared))) {
            Err(_) => failures.push(format!("{what}: panicked")),
            Ok(Ok(accepted)) => failures.push(format!("{what}: accepted ({accepted:.80})")),
            Ok(Err(message)) => {
                println!("{what}:\n    {}", message.lines().next().unwrap_or(""));
                let missing: Vec<_> = expected.iter().filter(|f| !message.contains(*f)).collect();
                if !missing.is_empty() {
                    failures.push(format!("{what}: error lacks {missing:?}:\n    {message}"));
                }
            }
        }
    }
    assert!(CASES.len() >= 20);
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n")
    );
}

/// The unedited inputs are valid: each case fails because of its edit alone.
#[test]
fn the_inputs_the_cases_edit_are_valid() {
    let shared = Shared::load(&benchboot_board::boards_dir()).expect("boards/shared.toml loads");
    let keep = |t: String| t;
    for input in [
        BoardFile("rpi-zero-w", keep),
        BoardFile("beaglebone-black", keep),
        SharedFile(keep),
        PlanJson("/board", "\"rpi-zero-w\""),
        PlanFile(
            "rpi-2b",
            "[[storage.disk]]\nlabel = \"usb\"\nwhole-disk = \"usb\"\ndestroy = true\n",
        ),
        PlanFile(
            "bananapi-m1",
            "[[storage.disk]]\nlabel = \"ssd\"\nwhole-disk = \"sata\"\ndestroy = true\n",
        ),
        WifiPlanFile(
            "rpi-4b",
            "[network.wifi]\ncountry = \"DE\"\nchannels = [{ band = \"5\", channel = 36, width = 80 }]\n",
        ),
        ResultsText(keep),
        DhcpBytes(|b| b),
        HttpHead(|| b"GET /results.json HTTP/1.1\r\nHost: 10.55.0.1\r\n\r\n".to_vec()),
    ] {
        if let Err(e) = run(&input, &shared) {
            panic!("a base input is refused: {e}");
        }
    }
}
