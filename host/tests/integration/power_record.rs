//! `benchboot power record` through the binary: a Shelly gen2 plug served on 127.0.0.1
//! (a local `TcpListener`, canned bodies whose power rises by 1 W per answer), recorded
//! for a few seconds; the trace file holds the plug's readings on the host's clock and
//! its energy counter.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::process::Command;

use benchboot_energy::{Clock, Trace};

#[test]
fn a_plug_is_recorded_into_a_trace_file() {
    let server = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = server.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for (n, conn) in server.incoming().enumerate() {
            let Ok(mut conn) = conn else { continue };
            let mut reader = BufReader::new(conn.try_clone().unwrap());
            let mut request = String::new();
            let _ = reader.read_line(&mut request);
            assert!(
                request.starts_with("GET /rpc/Switch.GetStatus?id=0 "),
                "{request}"
            );
            let body = format!(
                r#"{{"id":0,"output":true,"apower":{}.5,"voltage":230.1,"current":0.02,"aenergy":{{"total":{}.0}}}}"#,
                2 + n,
                10 + n
            );
            let _ = write!(
                conn,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("plug.json");
    let got = Command::new(env!("CARGO_BIN_EXE_benchboot"))
        .args(["power", "record", "--meter"])
        .arg(format!("shelly2:http://127.0.0.1:{port}"))
        .arg("--out")
        .arg(&out)
        .args(["--for", "3.5", "--position", "wall"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&got.stdout);
    assert!(
        got.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&got.stderr)
    );
    let trace: Trace = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(trace.clock, Clock::Host);
    assert!(!trace.emulated);
    // About one answer a second for 3.5 s: each a watt above the one before.
    let n = trace.samples.len();
    assert!((3..=5).contains(&n), "{n} samples: {:?}", trace.samples);
    for pair in trace.samples.windows(2) {
        assert!(pair[1].t_s > pair[0].t_s);
        assert_eq!(pair[1].watts - pair[0].watts, 1.0, "{:?}", trace.samples);
    }
    assert_eq!(trace.samples[0].watts % 1.0, 0.5);
    // The counter in Wh, as J: it advanced 1 Wh per answer.
    let (a, b) = trace.counter_j.expect("the plug's energy counter");
    assert!(b > a && (b - a) % 3600.0 == 0.0, "{a} {b}");
    assert!(
        trace.position.as_deref().unwrap().contains("wall"),
        "{:?}",
        trace.position
    );
}
