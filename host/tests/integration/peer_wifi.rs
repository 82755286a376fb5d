//! `benchboot peer --wifi`, the built binary on a fake `nmcli` put first on its PATH
//! (a shell script recording each invocation's arguments as `[arg][arg]...` lines, and
//! what it read on standard input as `<...>`): a host without a WiFi device is told so
//! and the command exits 1 before it waits for anything; a stranger who opens a session
//! naming a board and offers that board's SSID from an address that is not the other
//! end of a point-to-point link of the host is refused, and nmcli never asked; the
//! board at the other end of such a link (given with the hidden
//! `--wifi-host-addresses`: loopback has none) holding a session over it is joined with
//! the exact nmcli commands, its passphrase on nmcli's standard input, never on its
//! command line, while the peer serves. Loopback only.
#![cfg(target_os = "linux")]

use std::io::{BufRead, BufReader};
use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use benchboot_netbench::wifi_offer::WifiOffer;

/// A fake `nmcli` in `dir` that lists `devices` for `-t -f DEVICE,TYPE device` and
/// says it joined otherwise; returns its log.
fn fake_nmcli(dir: &Path, devices: &str) -> PathBuf {
    let log = dir.join("nmcli.log");
    let script = format!(
        "#!/bin/sh\n\
         [ -n \"$BB_PROBE\" ] && exit 0\n\
         for a in \"$@\"; do printf '[%s]' \"$a\" >> '{}'; done\n\
         case \" $* \" in *' passwd-file '*) while IFS= read -r l; do printf '<%s>' \"$l\" >> '{}'; done;; esac\n\
         printf '\\n' >> '{}'\n\
         [ \"$1\" = -t ] && {{ printf '{devices}'; exit 0; }}\n\
         echo \"Device wlan0 successfully activated.\"\n",
        log.display(),
        log.display(),
        log.display()
    );
    let path = dir.join("nmcli");
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    crate::wait_until_executable(Command::new(&path).env("BB_PROBE", "1"));
    log
}

fn path_with(dir: &Path) -> String {
    format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

#[test]
fn no_wifi_adapter_is_an_error_before_waiting_for_offers() {
    let dir = tempfile::tempdir().unwrap();
    let log = fake_nmcli(dir.path(), "eth0:ethernet\\nlo:loopback\\n");
    let mut child = Command::new(env!("CARGO_BIN_EXE_benchboot"))
        .args([
            "peer",
            "--wifi",
            "--listen",
            "127.0.0.1:0",
            "--wifi-offer-port",
            "0",
        ])
        .env("PATH", path_with(dir.path()))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("benchboot peer --wifi waited instead of failing");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr,
        "error: no WiFi adapter: `nmcli -t -f DEVICE,TYPE device` lists no device of type \
         wifi (it lists: eth0 (ethernet), lo (loopback)). Plug in a WiFi adapter (or turn \
         the radio on: `nmcli radio wifi on`) and run `benchboot peer --wifi` again; or \
         join the board's network by hand and run `benchboot peer`\n"
    );
    assert_eq!(
        std::fs::read_to_string(log).unwrap(),
        "[-t][-f][DEVICE,TYPE][device]\n"
    );
}

/// A running `benchboot peer --wifi` with `args` on a fake nmcli listing a WiFi
/// device: the child, its stderr lines as they come, and nmcli's log.
struct Running {
    child: std::process::Child,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl Running {
    fn start(args: &[&str]) -> Running {
        let dir = tempfile::tempdir().unwrap();
        let log = fake_nmcli(dir.path(), "eth0:ethernet\\nwlan0:wifi\\n");
        let mut child = Command::new(env!("CARGO_BIN_EXE_benchboot"))
            .args(["peer", "--wifi"])
            .args(args)
            .env("PATH", path_with(dir.path()))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, lines) = mpsc::channel::<String>();
        let stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        Running {
            child,
            lines,
            seen: Vec::new(),
            log,
            _dir: dir,
        }
    }

    /// The next stderr line holding `what` (a bound on a hang: 20 s).
    fn next(&mut self, what: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) if l.contains(what) => {
                    self.seen.push(l.clone());
                    return l;
                }
                Ok(l) => self.seen.push(l),
                Err(_) => panic!("no `{what}` on stderr: {:#?}", self.seen),
            }
        }
    }

    /// The offer port and the peer's address, from the first lines.
    fn addresses(&mut self, ip: &str) -> (SocketAddr, SocketAddr) {
        let line = self.next(&format!("listening for WiFi offers on UDP {ip}:"));
        assert!(line.ends_with("joining with nmcli on wlan0"), "{line}");
        let offers: SocketAddr = line
            .split(' ')
            .nth(8)
            .and_then(|a| a.parse().ok())
            .unwrap_or_else(|| panic!("{line}"));
        let listening = self.next(&format!("benchboot peer: listening on {ip}:"));
        let peer: SocketAddr = listening
            .split(' ')
            .nth(4)
            .and_then(|a| a.parse().ok())
            .unwrap_or_else(|| panic!("{listening}"));
        (offers, peer)
    }

    fn stop(mut self) -> String {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
        std::fs::read_to_string(&self.log).unwrap()
    }
}

/// A stranger at 127.0.0.3 (loopback, as a host on the LAN would be: not the other
/// end of a point-to-point link of this host) opens a session naming a board `evil`,
/// then offers that board's SSID with a passphrase: refused with one line saying why
/// and what to do, and nmcli is never asked to join. The offer socket listens on the
/// --listen address, not on every interface. This host's addresses are read from the
/// system here (loopback is a /8).
#[test]
fn a_strangers_session_and_offer_never_make_the_host_join() {
    let mut peer = Running::start(&["--listen", "127.0.0.1:0", "--wifi-offer-port", "0"]);
    let (offers, at) = peer.addresses("127.0.0.1");
    assert_eq!(
        offers.ip(),
        Ipv4Addr::LOCALHOST,
        "offers bound to every interface"
    );
    let stranger = Ipv4Addr::new(127, 0, 0, 3);
    let session = {
        let s = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        s.bind(&SocketAddr::from((stranger, 0)).into()).unwrap();
        s.connect(&at.into()).unwrap();
        let mut s: std::net::TcpStream = s.into();
        std::io::Write::write_all(&mut s, b"{\"Hello\":{\"version\":1,\"board\":\"evil\"}}\n")
            .unwrap();
        s
    };
    peer.next("opened by board evil");
    let evil = WifiOffer {
        ssid: b"bb-evil-free".to_vec(),
        passphrase: Some("password123".into()),
        freq_mhz: 2412,
        width_mhz: 20,
        board: Ipv4Addr::new(10, 58, 0, 1),
    };
    let sock = UdpSocket::bind((stranger, 0)).unwrap();
    for _ in 0..3 {
        sock.send_to(evil.encode().as_bytes(), offers).unwrap();
    }
    let refused = peer.next("refused the WiFi offer from 127.0.0.3:");
    assert!(
        refused.ends_with(
            "127.0.0.3 is not the other end of a point-to-point link of this host (a /30 or \
             /31 this host holds an address in, as the gadget link's or a direct cable's), \
             the only place where no one but the board can be; if it is your board on a \
             LAN, join `bb-evil-free` (WPA2, passphrase `password123`) by hand: this peer \
             keeps serving"
        ),
        "{refused}"
    );
    drop(session);
    peer.next("ended after");
    assert_eq!(peer.stop(), "[-t][-f][DEVICE,TYPE][device]\n");
}

/// The board at 127.0.0.1, the other end of this host's 127.0.0.2/30 (given: loopback
/// has no point-to-point link), is refused before it holds a session, then joined once
/// it holds one over that link naming itself: the WPA2 passphrase reaches nmcli on its
/// standard input only.
#[test]
fn the_offer_of_the_board_over_its_point_to_point_link_is_joined_while_the_peer_serves() {
    let mut peer = Running::start(&[
        "--listen",
        "127.0.0.2:0",
        "--wifi-offer-port",
        "0",
        "--wifi-host-addresses",
        "127.0.0.2/30",
    ]);
    let warning = peer.next("warning: --listen 127.0.0.2:0 serves that address only");
    assert!(warning.contains("use --listen 0.0.0.0:0"), "{warning}");
    let (to, at) = peer.addresses("127.0.0.2");
    let offer = WifiOffer {
        ssid: b"bb-rpi-zero-w-ch1-20".to_vec(),
        passphrase: Some("a b c d e f".into()),
        freq_mhz: 2412,
        width_mhz: 20,
        board: Ipv4Addr::new(10, 58, 0, 1),
    };
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    // No board holds a session from this address yet.
    sock.send_to(offer.encode().as_bytes(), to).unwrap();
    let refused = peer.next("refused the WiFi offer from 127.0.0.1:");
    assert!(
        refused.ends_with(
            "no board holds a session with this peer from 127.0.0.1 (a board offers its AP \
             over the results link while it holds one)"
        ),
        "{refused}"
    );
    // The board holds one over its link (127.0.0.1 to 127.0.0.2), naming itself.
    let dir = tempfile::tempdir().unwrap();
    let stat = dir.path().join("stat");
    std::fs::write(&stat, "cpu  1 0 1 1 0 0 0 0 0 0\n").unwrap();
    let session = benchboot_netbench::driver::Session::connect_as(
        at,
        Duration::from_secs(10),
        &stat,
        Some("rpi-zero-w"),
    )
    .unwrap();
    peer.next("opened by board rpi-zero-w");
    sock.send_to(offer.encode().as_bytes(), to).unwrap();
    let offered = peer.next("WiFi offer from 127.0.0.1:");
    assert!(
        offered.contains("(board rpi-zero-w, over this host's 127.0.0.2/30)"),
        "{offered}"
    );
    let joined = peer.next("joined `bb-rpi-zero-w-ch1-20`");
    session.close();
    assert_eq!(
        joined,
        "benchboot peer: joined `bb-rpi-zero-w-ch1-20` (Device wlan0 successfully \
         activated.); the board's tests come in over it"
    );
    assert_eq!(
        peer.stop(),
        "[-t][-f][DEVICE,TYPE][device]\n\
         [connection][delete][id][bb-rpi-zero-w-ch1-20]\n\
         [connection][add][type][wifi][ifname][wlan0][con-name][bb-rpi-zero-w-ch1-20]\
         [ssid][bb-rpi-zero-w-ch1-20][autoconnect][no][wifi-sec.key-mgmt][wpa-psk]\
         [wifi-sec.psk-flags][2]\n\
         [connection][up][id][bb-rpi-zero-w-ch1-20][ifname][wlan0][passwd-file]\
         [/dev/stdin]<802-11-wireless-security.psk:a b c d e f>\n"
    );
}
