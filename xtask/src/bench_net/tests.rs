//! Unit tests of the parsers of `bench net`, `net-udp` and `net-http`: `/proc` fields,
//! iperf3's JSON, curl's write-out.

use super::*;

#[test]
fn proc_times_count_fields_after_the_name() {
    // proc(5): pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt
    // majflt cmajflt utime stime cutime cstime ...
    let stat = "4242 (my (odd) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 150 25 7 3 20 0 1 0";
    assert_eq!(parse_proc_times(stat, false), Some(175));
    assert_eq!(parse_proc_times(stat, true), Some(10));
    assert_eq!(parse_proc_times("garbage", false), None);
}

#[test]
fn iperf3_udp_json_receiver_figures() {
    // iperf3 3.12 -u -J (trimmed): sum_received is the server's receive side.
    let j = r#"{"end":{"sum":{"bits_per_second":9.0e8},"sum_sent":{"bits_per_second":9.08e8,"bytes":227186856,"lost_percent":0},
        "sum_received":{"bits_per_second":3.49e8,"bytes":87370872,"lost_percent":73.01}}}"#;
    assert_eq!(
        parse_iperf3_udp(j),
        Some(UdpFigures {
            bits_per_second: 3.49e8,
            bytes: 87370872.0,
            lost_percent: 73.01
        })
    );
    assert_eq!(parse_iperf3_udp(r#"{"end":{}}"#), None);
}

#[test]
fn busy_jiffies_leave_idle_iowait_and_steal_out() {
    let stat = "cpu  10 20 30 1000 50 6 7 8 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n";
    assert_eq!(parse_busy_jiffies(stat), Some(10 + 20 + 30 + 6 + 7));
    assert_eq!(parse_busy_jiffies("cpu  1 2 3 4\n"), None);
    assert_eq!(parse_busy_jiffies("intr 1\n"), None);
}

#[test]
fn curl_write_out() {
    assert_eq!(
        parse_curl("1073741824 0.412345"),
        Some((1073741824.0, 0.412345))
    );
    assert_eq!(parse_curl("x"), None);
}

#[test]
fn iperf3_json_receiver_rate() {
    let j = r#"{"start":{},"end":{"sum_sent":{"bits_per_second":2.0e10},"sum_received":{"bits_per_second":1.95e10}}}"#;
    assert_eq!(parse_iperf3(j), Some(1.95e10));
    assert_eq!(parse_iperf3(r#"{"error":"unable to connect"}"#), None);
}
