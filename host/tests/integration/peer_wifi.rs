//! `benchboot peer --wifi`, the built binary on a fake `nmcli` put first on its PATH
//! (a shell script recording each invocation's arguments as `[arg][arg]...` lines):
//! a host without a WiFi device is told so and the command exits 1 before it waits for
//! anything; a host with one refuses an offer from an address without a session on
//! its peer, and joins the offer of a board holding one with the exact nmcli command,
//! while the peer serves. Loopback only.
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
         printf '\\n' >> '{}'\n\
         [ \"$1\" = -t ] && {{ printf '{devices}'; exit 0; }}\n\
         echo \"Device wlan0 successfully activated.\"\n",
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
            "--wifi-offers",
            "127.0.0.1:0",
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

#[test]
fn only_the_offer_of_a_board_with_a_session_is_joined_with_nmcli_while_the_peer_serves() {
    let dir = tempfile::tempdir().unwrap();
    let log = fake_nmcli(dir.path(), "eth0:ethernet\\nwlan0:wifi\\n");
    let mut child = Command::new(env!("CARGO_BIN_EXE_benchboot"))
        .args([
            "peer",
            "--wifi",
            "--listen",
            "127.0.0.1:0",
            "--wifi-offers",
            "127.0.0.1:0",
        ])
        .env("PATH", path_with(dir.path()))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = mpsc::channel::<String>();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut seen = Vec::new();
    let mut next = |what: &str| -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(l) if l.contains(what) => {
                    seen.push(l.clone());
                    return l;
                }
                Ok(l) => seen.push(l),
                Err(_) => panic!("no `{what}` on stderr: {seen:#?}"),
            }
        }
    };
    let warning = next("warning: --listen 127.0.0.1:0 serves that address only");
    assert!(warning.contains("use --listen 0.0.0.0:0"), "{warning}");
    let line = next("listening for WiFi offers on UDP 127.0.0.1:");
    assert!(line.ends_with("joining with nmcli on wlan0"), "{line}");
    let port: u16 = line
        .split("127.0.0.1:")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|p| p.parse().ok())
        .unwrap();
    let listening = next("benchboot peer: listening on 127.0.0.1:");
    let peer: SocketAddr = listening
        .split(' ')
        .nth(4)
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("{listening}"));
    let offer = WifiOffer {
        ssid: b"bb-rpi-zero-w-ch1-20".to_vec(),
        passphrase: Some("a b c d e f".into()),
        freq_mhz: 2412,
        width_mhz: 20,
        board: Ipv4Addr::new(10, 58, 0, 1),
    };
    let to = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    // No board holds a session from this address yet: a stranger's offer.
    sock.send_to(offer.encode().as_bytes(), to).unwrap();
    let refused = next("refused the WiFi offer from 127.0.0.1:");
    assert!(
        refused.ends_with(
            "no board holds a session with this peer from 127.0.0.1 (a board offers its AP \
             over the results link while it holds one)"
        ),
        "{refused}"
    );
    // The board holds one over its results link, naming itself, and offers again.
    let stat = dir.path().join("stat");
    std::fs::write(&stat, "cpu  1 0 1 1 0 0 0 0 0 0\n").unwrap();
    let session = benchboot_netbench::driver::Session::connect_as(
        peer,
        Duration::from_secs(10),
        &stat,
        Some("rpi-zero-w"),
    )
    .unwrap();
    next("opened by board rpi-zero-w");
    sock.send_to(offer.encode().as_bytes(), to).unwrap();
    let joined = next("joined `bb-rpi-zero-w-ch1-20`");
    session.close();
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(
        joined,
        "benchboot peer: joined `bb-rpi-zero-w-ch1-20` (Device wlan0 successfully \
         activated.); the board's tests come in over it"
    );
    assert_eq!(
        std::fs::read_to_string(log).unwrap(),
        "[-t][-f][DEVICE,TYPE][device]\n\
         [device][wifi][connect][bb-rpi-zero-w-ch1-20][password][a b c d e f][ifname][wlan0]\n"
    );
}
