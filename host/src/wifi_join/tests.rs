//! `--wifi` on fake tools: shell scripts put first on the PATH of a [`System`] record
//! their arguments one invocation per line (`[arg][arg]...`, and what they read on
//! standard input as `<...>` when given a `passwd-file`), so the exact join commands
//! are asserted; the gate ([`offers::admit`]) on given addresses; the offer listener
//! over loopback with datagrams sent here, this host's point-to-point link given as
//! 127.0.0.2/30 (the board at 127.0.0.1); the parsers on captured tool output.
// The fake tools are shell scripts: most tests here are unix-only.
#![cfg_attr(not(unix), allow(unused_imports))]

use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::*;

fn offer(ssid: &str, passphrase: Option<&str>) -> WifiOffer {
    WifiOffer {
        ssid: ssid.as_bytes().to_vec(),
        passphrase: passphrase.map(String::from),
        freq_mhz: 2412,
        width_mhz: 20,
        board: Ipv4Addr::new(10, 58, 0, 1),
    }
}

/// [`offer`] checked as a joiner takes it.
fn valid(ssid: &str, passphrase: Option<&str>) -> ValidOffer {
    ValidOffer::new(&offer(ssid, passphrase)).unwrap()
}

/// A fake `name` in `dir` that records each invocation's arguments in `dir/<name>.log`
/// and prints `list` when asked to list (`-t ...` / `-listallhardwareports`), `said`
/// otherwise, exiting `status`.
#[cfg(unix)]
fn fake_tool(dir: &Path, name: &str, list: &str, said: &str, status: i32) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let log = dir.join(format!("{name}.log"));
    let script = format!(
        "#!/bin/sh\n\
         [ -n \"$BB_PROBE\" ] && exit 0\n\
         for a in \"$@\"; do printf '[%s]' \"$a\" >> '{log}'; done\n\
         case \" $* \" in *' passwd-file '*) while IFS= read -r l; do printf '<%s>' \"$l\" >> '{log}'; done;; esac\n\
         printf '\\n' >> '{log}'\n\
         case \"$1\" in -t|-listallhardwareports) printf '%s' {list}; exit 0;; esac\n\
         printf '%s\\n' {said}\n\
         exit {status}\n",
        log = log.display(),
        list = shell_quote(list),
        said = shell_quote(said),
    );
    let path = dir.join(name);
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    // Another test thread's fork may still hold the file open for writing for a moment
    // (ETXTBSY): run it once, harmlessly, until it starts.
    for _ in 0..100 {
        match std::process::Command::new(&path)
            .env("BB_PROBE", "1")
            .status()
        {
            Ok(_) => break,
            Err(e) if e.raw_os_error() == Some(26) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => panic!("{e}"),
        }
    }
    log
}

#[cfg(unix)]
fn recorded(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(String::from)
        .collect()
}

fn system(dir: &Path) -> System {
    System {
        path: dir.as_os_str().to_owned(),
        sys_class_net: dir.join("sys-class-net"),
    }
}

const NMCLI_DEVICES: &str = "eth0:ethernet\nwlan0:wifi\np2p-dev-wlan0:wifi-p2p\nlo:loopback\n";

#[test]
fn nmcli_terse_lines_unescape_and_the_wifi_device_is_found() {
    assert_eq!(linux::split_terse("a\\:b:wifi"), ["a:b", "wifi"]);
    assert_eq!(linux::split_terse("x\\\\y:ethernet"), ["x\\y", "ethernet"]);
    let d = linux::parse_devices(NMCLI_DEVICES);
    assert_eq!(d.len(), 4);
    assert_eq!(linux::wifi_device(&d), Some("wlan0"));
    let only_p2p = linux::parse_devices("p2p-dev-wlan0:wifi-p2p\n");
    assert_eq!(linux::wifi_device(&only_p2p), None);
}

#[test]
fn join_arguments_for_open_and_wpa2_offers() {
    let args = |steps: Vec<linux::Step>| -> Vec<(String, Option<String>, bool)> {
        steps
            .into_iter()
            .map(|s| (s.args.join(" "), s.input, s.must_succeed))
            .collect()
    };
    assert_eq!(
        args(linux::join_steps("wlan0", &valid("bb-open", None))),
        [(
            "device wifi connect bb-open ifname wlan0".to_owned(),
            None,
            true
        )]
    );
    // WPA2: the passphrase only ever on nmcli's standard input.
    assert_eq!(
        args(linux::join_steps(
            "wlan0",
            &valid("bb-wpa", Some("a b c d e f"))
        )),
        [
            ("connection delete id bb-wpa".to_owned(), None, false),
            (
                "connection add type wifi ifname wlan0 con-name bb-wpa ssid bb-wpa autoconnect \
                 no wifi-sec.key-mgmt wpa-psk wifi-sec.psk-flags 2"
                    .to_owned(),
                None,
                true
            ),
            (
                "connection up id bb-wpa ifname wlan0 passwd-file /dev/stdin".to_owned(),
                Some("802-11-wireless-security.psk:a b c d e f\n".to_owned()),
                true
            ),
        ]
    );
    assert_eq!(
        macos::join_args("en0", &valid("bb-wpa", Some("secret12"))),
        ["-setairportnetwork", "en0", "bb-wpa", "secret12"]
    );
    assert_eq!(
        macos::join_args("en0", &valid("bb-open", None)),
        ["-setairportnetwork", "en0", "bb-open"]
    );
}

/// Only an SSID of the plan's shape and a WPA2 passphrase reach a tool: anything else
/// is refused, saying which and the shape, the SSID escaped and the passphrase never
/// shown.
#[test]
fn an_ssid_or_passphrase_a_board_does_not_make_is_refused_before_any_tool() {
    let ok = valid("bb-rpi-4b-ch36-80", Some("0123456789abcdef"));
    assert_eq!(ok.ssid(), "bb-rpi-4b-ch36-80");
    assert_eq!(ok.passphrase(), Some("0123456789abcdef"));
    ValidOffer::new(&offer(&"b".repeat(32), Some(&"~".repeat(63)))).unwrap();
    ValidOffer::new(&offer("bb-x", Some("12345678"))).unwrap();
    let ssid_rule = "is not one a board makes (1 to 32 ASCII letters, digits and '-', not \
                     starting with '-', as bb-<board>-ch<channel>-<width>)";
    for (bad, shown) in [
        ("bb-evil-\u{1b}[2J\u{7}", "`bb-evil-\\u{1b}[2J\\u{7}`"),
        ("bb evil", "`bb evil`"),
        ("bb-évil", "`bb-évil`"),
        ("bb_evil", "`bb_evil`"),
        ("-o", "`-o`"),
    ] {
        let e = ValidOffer::new(&offer(bad, None)).unwrap_err();
        assert!(
            e.contains(&format!("the SSID {shown} {ssid_rule}")),
            "{bad:?}: {e}"
        );
    }
    let long = "b".repeat(33);
    assert!(ValidOffer::new(&offer(&long, None)).is_err());
    let ssid_bytes = WifiOffer {
        ssid: vec![b'b', 0xff],
        ..offer("x", None)
    };
    assert!(ValidOffer::new(&ssid_bytes).is_err());
    for bad in [
        "short",
        &"a".repeat(64),
        "pass\u{1b}word",
        "pässword1",
        "tab\tword",
    ] {
        assert_eq!(
            ValidOffer::new(&offer("bb-x", Some(bad))).unwrap_err(),
            "the passphrase is not a WPA2 one (8 to 63 printable ASCII characters, IEEE \
             802.11i)",
            "{bad:?}"
        );
    }
}

#[cfg(unix)]
#[test]
fn fake_nmcli_is_asked_for_the_exact_join_commands() {
    let dir = tempfile::tempdir().unwrap();
    let log = fake_tool(
        dir.path(),
        "nmcli",
        NMCLI_DEVICES,
        "Device 'wlan0' successfully activated.",
        0,
    );
    let sys = system(dir.path());
    let j = find_adapter(&sys, Os::Linux).unwrap();
    assert_eq!(
        j,
        Joiner::Nmcli {
            nmcli: dir.path().join("nmcli"),
            device: "wlan0".into(),
            sys: sys.clone()
        }
    );
    assert_eq!(j.describe(), "nmcli on wlan0");
    assert_eq!(
        j.join(&valid("bb-rpi-4b-ch1-20", None)),
        Outcome::Joined("Device 'wlan0' successfully activated.".into())
    );
    assert_eq!(
        j.join(&valid("bb-rpi-4b-ch36-80", Some("it's a b"))),
        Outcome::Joined("Device 'wlan0' successfully activated.".into())
    );
    assert_eq!(
        recorded(&log),
        [
            "[-t][-f][DEVICE,TYPE][device]",
            "[device][wifi][connect][bb-rpi-4b-ch1-20][ifname][wlan0]",
            "[connection][delete][id][bb-rpi-4b-ch36-80]",
            "[connection][add][type][wifi][ifname][wlan0][con-name][bb-rpi-4b-ch36-80][ssid]\
             [bb-rpi-4b-ch36-80][autoconnect][no][wifi-sec.key-mgmt][wpa-psk]\
             [wifi-sec.psk-flags][2]",
            "[connection][up][id][bb-rpi-4b-ch36-80][ifname][wlan0][passwd-file][/dev/stdin]\
             <802-11-wireless-security.psk:it's a b>",
        ]
    );
}

#[cfg(unix)]
#[test]
fn a_failing_nmcli_is_a_failure_with_its_words() {
    let dir = tempfile::tempdir().unwrap();
    fake_tool(
        dir.path(),
        "nmcli",
        NMCLI_DEVICES,
        "Error: No network with SSID 'bb-x' found.",
        10,
    );
    let j = find_adapter(&system(dir.path()), Os::Linux).unwrap();
    assert_eq!(
        j.join(&valid("bb-x", None)),
        Outcome::Failed(
            "`nmcli device wifi connect bb-x ifname wlan0` failed (exit status: 10): Error: No \
             network with SSID 'bb-x' found."
                .into()
        )
    );
    // A WPA2 join stops at the first step that must succeed; the delete of a profile
    // that is not there is not one.
    assert_eq!(
        j.join(&valid("bb-x", Some("secret12"))),
        Outcome::Failed(
            "`nmcli connection add type wifi ifname wlan0 con-name bb-x ssid bb-x autoconnect \
             no wifi-sec.key-mgmt wpa-psk wifi-sec.psk-flags 2` failed (exit status: 10): \
             Error: No network with SSID 'bb-x' found."
                .into()
        )
    );
}

#[cfg(unix)]
#[test]
fn no_wifi_device_is_an_error_naming_what_was_looked_for() {
    let dir = tempfile::tempdir().unwrap();
    fake_tool(dir.path(), "nmcli", "eth0:ethernet\nlo:loopback\n", "", 0);
    let e = find_adapter(&system(dir.path()), Os::Linux)
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "no WiFi adapter: `nmcli -t -f DEVICE,TYPE device` lists no device of type wifi (it \
         lists: eth0 (ethernet), lo (loopback)). Plug in a WiFi adapter (or turn the radio \
         on: `nmcli radio wifi on`) and run `benchboot peer --wifi` again; or join the \
         board's network by hand and run `benchboot peer`"
    );
}

#[test]
fn without_nmcli_the_wireless_interface_gets_the_commands_to_type() {
    let dir = tempfile::tempdir().unwrap();
    let sys = system(dir.path());
    // No nmcli, no wireless interface.
    let e = find_adapter(&sys, Os::Linux).unwrap_err().to_string();
    assert_eq!(
        e,
        format!(
            "no WiFi adapter: nmcli is not on PATH, and no interface under {} has a \
             wireless/ folder. Plug in a WiFi adapter (or turn the radio on: `nmcli radio \
             wifi on`) and run `benchboot peer --wifi` again; or join the board's network \
             by hand and run `benchboot peer`",
            sys.sys_class_net.display()
        )
    );
    std::fs::create_dir_all(sys.sys_class_net.join("eth0")).unwrap();
    std::fs::create_dir_all(sys.sys_class_net.join("wlp2s0/wireless")).unwrap();
    let j = find_adapter(&sys, Os::Linux).unwrap();
    assert_eq!(
        j,
        Joiner::Iw {
            interface: "wlp2s0".into()
        }
    );
    assert_eq!(
        j.join(&valid("bb-open", None)),
        Outcome::ByHand(
            "nmcli is not installed, so join `bb-open` (2412 MHz, open) by hand:\n  \
             sudo iw dev wlp2s0 connect bb-open 2412\n  \
             sudo dhclient wlp2s0   (or: sudo dhcpcd wlp2s0); this peer keeps serving"
                .into()
        )
    );
    assert_eq!(
        j.join(&valid("bb-wpa", Some("it's a pass"))),
        Outcome::ByHand(
            "nmcli is not installed, so join `bb-wpa` (2412 MHz, WPA2) by hand:\n  \
             wpa_passphrase bb-wpa 'it'\\''s a pass' > /tmp/benchboot-wifi.conf\n  \
             sudo wpa_supplicant -B -i wlp2s0 -c /tmp/benchboot-wifi.conf\n  \
             sudo dhclient wlp2s0   (or: sudo dhcpcd wlp2s0); this peer keeps serving"
                .into()
        )
    );
}

/// `networksetup -listallhardwareports` of a MacBook (Wi-Fi on en0).
const PORTS: &str =
    "\nHardware Port: Ethernet\nDevice: en1\nEthernet Address: a8:20:66:00:00:01\n\n\
Hardware Port: Wi-Fi\nDevice: en0\nEthernet Address: 8c:85:90:00:00:02\n\n\
Hardware Port: Thunderbolt Bridge\nDevice: bridge0\nEthernet Address: N/A\n\n\
VLAN Configurations\n===================\n";

#[test]
fn networksetup_ports_and_its_failure_words() {
    let p = macos::parse_ports(PORTS);
    assert_eq!(
        p,
        [
            ("Ethernet".to_owned(), "en1".to_owned()),
            ("Wi-Fi".to_owned(), "en0".to_owned()),
            ("Thunderbolt Bridge".to_owned(), "bridge0".to_owned()),
        ]
    );
    assert_eq!(macos::wifi_device(&p), Some("en0"));
    assert!(macos::says_failed("Could not find network bb-x."));
    assert!(macos::says_failed("Failed to join network bb-x."));
    assert!(!macos::says_failed(""));
}

#[cfg(unix)]
#[test]
fn fake_networksetup_joins_on_the_wifi_port_and_its_absence_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let log = fake_tool(dir.path(), "networksetup", PORTS, "", 0);
    let sys = system(dir.path());
    let j = find_adapter(&sys, Os::Macos).unwrap();
    assert_eq!(j.describe(), "networksetup on en0");
    assert_eq!(
        j.join(&valid("bb-rpi", Some("secret12"))),
        Outcome::Joined(String::new())
    );
    assert_eq!(
        recorded(&log),
        [
            "[-listallhardwareports]",
            "[-setairportnetwork][en0][bb-rpi][secret12]"
        ]
    );
    let dir = tempfile::tempdir().unwrap();
    fake_tool(
        dir.path(),
        "networksetup",
        "Hardware Port: Ethernet\nDevice: en1\n",
        "",
        0,
    );
    let e = find_adapter(&system(dir.path()), Os::Macos)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with(
            "no WiFi adapter: `networksetup -listallhardwareports` lists no Wi-Fi port (it \
             lists: Ethernet (en1)). Turn Wi-Fi on"
        ),
        "{e}"
    );
}

#[test]
fn windows_says_it_is_not_supported_yet_and_what_to_do() {
    let j = find_adapter(&system(Path::new("/nonexistent")), Os::Windows).unwrap();
    assert_eq!(
        j.join(&valid("bb-rpi-4b-ch1-20", Some("secret12"))),
        Outcome::ByHand(
            "joining WiFi is not supported yet on Windows: join `bb-rpi-4b-ch1-20` (WPA2, \
             2412 MHz, passphrase `secret12`) by hand, then run `benchboot peer` (this one \
             keeps serving on every interface, so joining is enough)"
                .into()
        )
    );
}

#[test]
fn the_tracker_acts_once_per_new_ssid_and_retries_failures_later() {
    let mut t = offers::Tracker::default();
    let now = Instant::now();
    assert!(t.should_join(b"a", now));
    t.record(b"a", &Outcome::Joined(String::new()), now);
    assert!(!t.should_join(b"a", now + Duration::from_secs(60)));
    assert!(t.should_join(b"b", now));
    t.record(b"b", &Outcome::Failed("x".into()), now);
    assert!(!t.should_join(b"b", now + Duration::from_secs(14)));
    assert!(t.should_join(b"b", now + offers::RETRY_AFTER));
    t.record(b"b", &Outcome::Joined(String::new()), now);
    // The board went back to `a` (a new run): joined again.
    assert!(t.should_join(b"a", now));
}

#[test]
fn shell_words_are_quoted_only_when_needed() {
    assert_eq!(shell_quote("wlan0"), "wlan0");
    assert_eq!(shell_quote("bb wpa"), "'bb wpa'");
    assert_eq!(shell_quote("it's"), "'it'\\''s'");
    assert_eq!(shell_quote(""), "''");
}

/// This host's point-to-point link in the listener tests: 127.0.0.2/30, the board at
/// its other end, 127.0.0.1 (where a connection to 127.0.0.2 comes from).
const LINK: &str = "127.0.0.2/30";

fn host(addrs: &[&str]) -> Vec<crate::point_to_point::HostAddr> {
    addrs.iter().map(|a| a.parse().unwrap()).collect()
}

/// A peer on 127.0.0.2, this host's end of [`LINK`] (its registry shared, as `peer
/// --wifi` shares it), and a live session on it from 127.0.0.1 that declared `board`,
/// as a board offering its AP holds one over its results link.
#[cfg(unix)]
fn live_session(
    board: &str,
) -> (
    benchboot_netbench::peer::Registry,
    benchboot_netbench::driver::Session,
) {
    use benchboot_netbench::{driver, peer};
    let l = std::net::TcpListener::bind("127.0.0.2:0").unwrap();
    let addr = l.local_addr().unwrap();
    let registry = peer::Registry::new();
    let r = registry.clone();
    std::thread::spawn(move || {
        peer::serve_with_registry(
            l,
            Path::new("/proc/stat"),
            &peer::PeerOptions::default(),
            r,
            |_| {},
        )
    });
    let s = driver::Session::connect_as(
        addr,
        Duration::from_secs(10),
        Path::new("/proc/stat"),
        Some(board),
    )
    .unwrap();
    (registry, s)
}

/// A running offer listener: its socket's address, the stop flag, the lines it
/// printed, and its thread.
#[cfg(unix)]
type Listener = (
    SocketAddr,
    Arc<AtomicBool>,
    Arc<Mutex<Vec<String>>>,
    std::thread::JoinHandle<std::io::Result<()>>,
);

/// The listener on `joiner` on 127.0.0.2, with the peer's `registry` and this host's
/// [`LINK`].
#[cfg(unix)]
fn listener(joiner: Joiner, registry: benchboot_netbench::peer::Registry) -> Listener {
    let sock = offers::bind("127.0.0.2:0".parse().unwrap()).unwrap();
    let to: SocketAddr = sock.local_addr().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let lines = Arc::new(Mutex::new(Vec::<String>::new()));
    let server = {
        let (stop, lines) = (stop.clone(), lines.clone());
        std::thread::spawn(move || {
            let links = offers::HostLinks::Given(host(&[LINK]));
            offers::serve(&sock, &joiner, &registry, &links, &stop, &|l| {
                lines.lock().unwrap().push(l.to_owned())
            })
        })
    };
    (to, stop, lines, server)
}

/// Waits (a bound on a hang, not a timing target) until `lines` holds `n` lines.
#[cfg(unix)]
fn wait_for_lines(lines: &Mutex<Vec<String>>, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while lines.lock().unwrap().len() < n {
        assert!(Instant::now() < deadline, "{:?}", lines.lock().unwrap());
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn name(b: &str) -> Option<benchboot_results::name::SafeName> {
    Some(
        benchboot_results::name::SafeName::new(benchboot_results::name::NameKind::Board, b)
            .unwrap(),
    )
}

/// A live session that named `board` and came in on this host's `local` address.
fn live(board: Option<&str>, local: &str) -> benchboot_netbench::peer::LiveSession {
    benchboot_netbench::peer::LiveSession {
        board: board.and_then(name),
        local: local.parse().unwrap(),
    }
}

/// The gate on given addresses: this host has a LAN address, loopback and the gadget
/// link's 10.55.0.2/30 (the board at 10.55.0.1). Only the board at the other end of
/// the /30, holding a session that came in on 10.55.0.2 and named the board the SSID
/// carries, is let in.
#[test]
fn an_offer_is_let_in_only_from_the_board_on_a_point_to_point_link_of_this_host() {
    let hosts = host(&["127.0.0.1/8", "192.168.1.20/24", "10.55.0.2/30"]);
    let ip = |s: &str| s.parse::<std::net::IpAddr>().unwrap();
    let o = offer("bb-rpi-4b-ch1-20", Some("0123456789abcdef"));
    // The right one.
    let a = offers::admit(
        &o,
        ip("10.55.0.1"),
        &[live(Some("rpi-4b"), "10.55.0.2")],
        &hosts,
    )
    .unwrap();
    assert_eq!(
        (a.board.as_str(), a.link.to_string(), a.offer.ssid()),
        ("rpi-4b", "10.55.0.2/30".to_owned(), "bb-rpi-4b-ch1-20")
    );
    // One of two boards behind the address is enough; an IPv4-mapped sender and local
    // address are their IPv4 ones.
    let both = [
        live(None, "10.55.0.2"),
        live(Some("rpi-zero-w"), "10.55.0.2"),
        live(Some("rpi-4b"), "::ffff:10.55.0.2"),
    ];
    assert!(offers::admit(&o, ip("::ffff:10.55.0.1"), &both, &hosts).is_ok());
    // A stranger's session from a LAN address, naming the board: anyone can be there.
    let lan = offers::admit(
        &o,
        ip("192.168.1.66"),
        &[live(Some("rpi-4b"), "192.168.1.20")],
        &hosts,
    )
    .unwrap_err();
    assert_eq!(
        lan,
        "192.168.1.66 is not the other end of a point-to-point link of this host (a /30 or \
         /31 this host holds an address in, as the gadget link's or a direct cable's), the \
         only place where no one but the board can be; if it is your board on a LAN, join \
         `bb-rpi-4b-ch1-20` (WPA2, passphrase `0123456789abcdef`) by hand: this peer keeps \
         serving"
    );
    // From loopback (another local user), naming the board.
    let lo = offers::admit(
        &o,
        ip("127.0.0.3"),
        &[live(Some("rpi-4b"), "127.0.0.1")],
        &hosts,
    )
    .unwrap_err();
    assert!(
        lo.starts_with("127.0.0.3 is not the other end of a point-to-point link"),
        "{lo}"
    );
    // From the /30's broadcast address: no host's.
    assert!(offers::admit(
        &o,
        ip("10.55.0.3"),
        &[live(Some("rpi-4b"), "10.55.0.2")],
        &hosts
    )
    .is_err());
    // From the right /30, naming another board.
    assert_eq!(
        offers::admit(
            &o,
            ip("10.55.0.1"),
            &[live(Some("rpi-zero-w"), "10.55.0.2")],
            &hosts
        )
        .unwrap_err(),
        "the SSID is not one of the board's own (bb-rpi-zero-w-...) that holds the session \
         from 10.55.0.1"
    );
    assert!(offers::admit(
        &o,
        ip("10.55.0.1"),
        &[live(Some("rpi-4"), "10.55.0.2")],
        &hosts
    )
    .is_err());
    // From the right /30, the session come in on another address of this host.
    assert_eq!(
        offers::admit(
            &o,
            ip("10.55.0.1"),
            &[live(Some("rpi-4b"), "192.168.1.20")],
            &hosts
        )
        .unwrap_err(),
        "the sessions from 10.55.0.1 came in on 192.168.1.20, not on this host's end of the \
         link from 10.55.0.1 (10.55.0.2): run `benchboot peer` on every interface (the \
         default) or with --listen 10.55.0.2:PORT"
    );
    // No session; a session that named no board.
    assert_eq!(
        offers::admit(&o, ip("10.55.0.1"), &[], &hosts).unwrap_err(),
        "no board holds a session with this peer from 10.55.0.1 (a board offers its AP \
         over the results link while it holds one)"
    );
    assert_eq!(
        offers::admit(&o, ip("10.55.0.1"), &[live(None, "10.55.0.2")], &hosts).unwrap_err(),
        "the session from 10.55.0.1 did not say which board it is: run the benchboot that \
         matches the image"
    );
    // The board's own session and link, an SSID of its prefix holding controls.
    let evil = offer("bb-rpi-4b-\u{1b}[2J\u{7}", None);
    assert!(offers::admit(
        &evil,
        ip("10.55.0.1"),
        &[live(Some("rpi-4b"), "10.55.0.2")],
        &hosts
    )
    .unwrap_err()
    .starts_with("the SSID `bb-rpi-4b-\\u{1b}[2J\\u{7}` is not one a board makes"));
    // A direct cable's /31 works the same.
    let p31 = host(&["10.57.0.0/31"]);
    assert!(offers::admit(
        &o,
        ip("10.57.0.1"),
        &[live(Some("rpi-4b"), "10.57.0.0")],
        &p31
    )
    .is_ok());
}

/// Strangers' offers: from an address that is not the other end of this host's link
/// (127.0.0.3, though its SSID carries the board's prefix), and the board's session
/// offering an SSID not its own; each refused with one escaped line saying why, a flood
/// of them with one line, and nmcli never asked. Then the board's own offer is joined.
#[cfg(unix)]
#[test]
fn strangers_offers_are_refused_with_one_escaped_line_and_never_joined() {
    let dir = tempfile::tempdir().unwrap();
    let log = fake_tool(dir.path(), "nmcli", NMCLI_DEVICES, "ok", 0);
    let joiner = find_adapter(&system(dir.path()), Os::Linux).unwrap();
    let (registry, session) = live_session("rpi-4b");
    let (to, stop, lines, server) = listener(joiner, registry);
    let stranger = UdpSocket::bind("127.0.0.3:0").unwrap();
    let board = UdpSocket::bind("127.0.0.1:0").unwrap();
    let evil = offer("bb-rpi-4b-\u{1b}[2J\u{1b}]0;x\u{7}", None).encode();
    for _ in 0..50 {
        stranger.send_to(evil.as_bytes(), to).unwrap();
    }
    wait_for_lines(&lines, 1);
    // Not the board's own SSID, though from its address: refused too (and left out of
    // the log: within the same 10 s as the first refusal).
    board
        .send_to(offer("home", Some("secret12")).encode().as_bytes(), to)
        .unwrap();
    board
        .send_to(offer("bb-rpi-4b-ch6-20", None).encode().as_bytes(), to)
        .unwrap();
    wait_for_lines(&lines, 3);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    server.join().unwrap().unwrap();
    session.close();
    assert_eq!(
        recorded(&log),
        [
            "[-t][-f][DEVICE,TYPE][device]",
            "[device][wifi][connect][bb-rpi-4b-ch6-20][ifname][wlan0]",
        ]
    );
    let lines = lines.lock().unwrap();
    assert_eq!(
        lines[0],
        format!(
            "refused the WiFi offer from {} of `bb-rpi-4b-\\u{{1b}}[2J\\u{{1b}}]0;x\\u{{7}}` \
             (open, 2412 MHz, 20 MHz wide, board 10.58.0.1): the SSID \
             `bb-rpi-4b-\\u{{1b}}[2J\\u{{1b}}]0;x\\u{{7}}` is not one a board makes (1 to 32 \
             ASCII letters, digits and '-', not starting with '-', as \
             bb-<board>-ch<channel>-<width>)",
            stranger.local_addr().unwrap()
        )
    );
    assert!(
        lines[1].starts_with("WiFi offer from 127.0.0.1:"),
        "{lines:?}"
    );
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert!(
        lines.iter().all(|l| !l.chars().any(char::is_control)),
        "{lines:?}"
    );
}

/// A stranger at 127.0.0.3 with a session of its own naming the board, offering an
/// SSID of the board's shape: refused (it is not the other end of this host's link),
/// nmcli never asked; the board's offer then is joined.
#[cfg(unix)]
#[test]
fn a_strangers_own_session_does_not_let_its_offer_in() {
    let dir = tempfile::tempdir().unwrap();
    let log = fake_tool(dir.path(), "nmcli", NMCLI_DEVICES, "ok", 0);
    let joiner = find_adapter(&system(dir.path()), Os::Linux).unwrap();
    let (registry, session) = live_session("rpi-4b");
    let peer = std::net::TcpListener::bind("127.0.0.2:0").unwrap();
    let at = peer.local_addr().unwrap();
    {
        let r = registry.clone();
        std::thread::spawn(move || {
            benchboot_netbench::peer::serve_with_registry(
                peer,
                Path::new("/proc/stat"),
                &benchboot_netbench::peer::PeerOptions::default(),
                r,
                |_| {},
            )
        });
    }
    let stranger_ip = Ipv4Addr::new(127, 0, 0, 3);
    let mut theirs = {
        let s = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        s.bind(&SocketAddr::from((stranger_ip, 0)).into()).unwrap();
        s.connect(&at.into()).unwrap();
        std::net::TcpStream::from(s)
    };
    std::io::Write::write_all(
        &mut theirs,
        b"{\"Hello\":{\"version\":1,\"board\":\"rpi-4b\"}}\n",
    )
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while registry.sessions_at(stranger_ip.into()).is_empty() {
        assert!(
            Instant::now() < deadline,
            "the stranger's session never opened"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let (to, stop, lines, server) = listener(joiner, registry);
    let stranger = UdpSocket::bind((stranger_ip, 0)).unwrap();
    stranger
        .send_to(
            offer("bb-rpi-4b-ch1-20", Some("password123"))
                .encode()
                .as_bytes(),
            to,
        )
        .unwrap();
    wait_for_lines(&lines, 1);
    UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .send_to(offer("bb-rpi-4b-ch6-20", None).encode().as_bytes(), to)
        .unwrap();
    wait_for_lines(&lines, 3);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    server.join().unwrap().unwrap();
    session.close();
    drop(theirs);
    let lines = lines.lock().unwrap();
    assert!(
        lines[0].ends_with(
            "127.0.0.3 is not the other end of a point-to-point link of this host (a /30 or \
             /31 this host holds an address in, as the gadget link's or a direct cable's), \
             the only place where no one but the board can be; if it is your board on a \
             LAN, join `bb-rpi-4b-ch1-20` (WPA2, passphrase `password123`) by hand: this \
             peer keeps serving"
        ),
        "{lines:?}"
    );
    assert_eq!(
        recorded(&log),
        [
            "[-t][-f][DEVICE,TYPE][device]",
            "[device][wifi][connect][bb-rpi-4b-ch6-20][ifname][wlan0]",
        ]
    );
}

/// The board's own offer, and a tool whose words carry control characters: every line
/// about it (the offer, a failed join with the tool's words, the commands to type by
/// hand) is printed escaped.
#[cfg(unix)]
#[test]
fn every_line_about_an_offer_prints_the_tools_words_escaped() {
    let ssid = "bb-rpi-4b-ch1-20";
    let dir = tempfile::tempdir().unwrap();
    fake_tool(
        dir.path(),
        "nmcli",
        NMCLI_DEVICES,
        "Error: \u{1b}[2J\u{202e}no network.",
        10,
    );
    let (registry, session) = live_session("rpi-4b");
    let failing = find_adapter(&system(dir.path()), Os::Linux).unwrap();
    let by_hand = Joiner::Iw {
        interface: "wlan0".into(),
    };
    let board = UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut printed = Vec::new();
    for joiner in [failing, by_hand] {
        let (to, stop, lines, server) = listener(joiner, registry.clone());
        board
            .send_to(offer(ssid, Some("pass word")).encode().as_bytes(), to)
            .unwrap();
        wait_for_lines(&lines, 2);
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        server.join().unwrap().unwrap();
        printed.extend(lines.lock().unwrap().clone());
    }
    session.close();
    assert_eq!(
        printed[1],
        format!(
            "could not join `{ssid}`: `nmcli connection add type wifi ifname wlan0 con-name \
             {ssid} ssid {ssid} autoconnect no wifi-sec.key-mgmt wpa-psk wifi-sec.psk-flags \
             2` failed (exit status: 10): Error: \\u{{1b}}[2J\\u{{202e}}no network.; trying \
             again in 15 s if it is still offered"
        )
    );
    assert!(
        printed[3].starts_with(&format!("nmcli is not installed, so join `{ssid}` (2412")),
        "{printed:?}"
    );
    assert!(printed[3].contains("'pass word'"), "{printed:?}");
    for l in &printed {
        assert!(
            !l.chars()
                .any(|c| c != '\n' && benchboot_results::text::needs_escape(c)),
            "{l:?}"
        );
    }
}

/// The listener over loopback: an open offer, the same again (ignored: already
/// joined), junk, then a WPA2 offer, all from the board at the other end of this
/// host's link holding a live session over it: nmcli is asked exactly for the two
/// joins, the passphrase on its standard input.
#[cfg(unix)]
#[test]
fn offers_sent_over_loopback_are_joined_once_each() {
    let dir = tempfile::tempdir().unwrap();
    let log = fake_tool(dir.path(), "nmcli", NMCLI_DEVICES, "ok", 0);
    let joiner = find_adapter(&system(dir.path()), Os::Linux).unwrap();
    let (registry, session) = live_session("rpi-4b");
    let (to, stop, lines, server) = listener(joiner, registry);
    let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let open = offer("bb-rpi-4b-ch1-20", None).encode();
    let wpa = WifiOffer {
        freq_mhz: 5180,
        width_mhz: 80,
        ..offer("bb-rpi-4b-ch36-80", Some("a b c d e f"))
    }
    .encode();
    let wait_for = |n: usize| {
        let deadline = Instant::now() + Duration::from_secs(20);
        while recorded(&log).len() < n {
            assert!(Instant::now() < deadline, "{:?}", recorded(&log));
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    tx.send_to(open.as_bytes(), to).unwrap();
    wait_for(2);
    tx.send_to(open.as_bytes(), to).unwrap();
    tx.send_to(b"benchboot-peer 1 port=5202\n", to).unwrap();
    tx.send_to(wpa.as_bytes(), to).unwrap();
    wait_for(5);
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    server.join().unwrap().unwrap();
    session.close();
    assert_eq!(
        recorded(&log),
        [
            "[-t][-f][DEVICE,TYPE][device]",
            "[device][wifi][connect][bb-rpi-4b-ch1-20][ifname][wlan0]",
            "[connection][delete][id][bb-rpi-4b-ch36-80]",
            "[connection][add][type][wifi][ifname][wlan0][con-name][bb-rpi-4b-ch36-80][ssid]\
             [bb-rpi-4b-ch36-80][autoconnect][no][wifi-sec.key-mgmt][wpa-psk]\
             [wifi-sec.psk-flags][2]",
            "[connection][up][id][bb-rpi-4b-ch36-80][ifname][wlan0][passwd-file][/dev/stdin]\
             <802-11-wireless-security.psk:a b c d e f>",
        ]
    );
    let lines = lines.lock().unwrap();
    let from = tx.local_addr().unwrap();
    assert_eq!(
        lines[0],
        format!(
            "WiFi offer from {from} (board rpi-4b, over this host's 127.0.0.2/30): \
             `bb-rpi-4b-ch1-20` (open, 2412 MHz, 20 MHz wide, board 10.58.0.1); joining \
             with nmcli on wlan0"
        )
    );
    assert_eq!(
        lines[1],
        "joined `bb-rpi-4b-ch1-20` (ok); the board's tests come in over it"
    );
    assert!(lines[2].contains("`bb-rpi-4b-ch36-80` (WPA2, 5180 MHz, 80 MHz wide"));
    assert_eq!(lines.len(), 4, "{lines:?}");
}
