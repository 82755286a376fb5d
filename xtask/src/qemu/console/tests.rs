//! The terminal filter on an excerpt of a real console (`fixtures/console-armv7-excerpt.log`:
//! 97 lines of qemu-virt-armv7's `cargo xtask qemu` console, its document's first three
//! and last chunks, and three stray bytes before its first line as the Zero W's UART
//! gives them).

use super::*;

const EXCERPT: &[u8] = include_bytes!("../fixtures/console-armv7-excerpt.log");

/// The excerpt's lines as the reader thread makes them (lossy UTF-8, line ends cut).
fn lines() -> Vec<String> {
    EXCERPT
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| String::from_utf8_lossy(l).trim_end_matches('\r').to_owned())
        .collect()
}

#[test]
fn a_real_console_shows_steps_progress_and_verdicts_and_keeps_the_rest_off() {
    let mut f = Filter::default();
    let all = lines();
    assert_eq!(all.len(), 97);
    let shown: Vec<String> = all.iter().filter_map(|l| f.line(l)).collect();
    let run = "qemu-virt-armv7-96e0f192f70a";
    let head: Vec<&str> = shown.iter().take(19).map(String::as_str).collect();
    assert_eq!(
        head,
        [
            &format!("  | benchboot: start run={run} board=qemu-virt-armv7") as &str,
            "  | benchboot: emulated run (QEMU): figures are not hardware results",
            "  | benchboot: plan: built in, no plan file (a test plan, or a host run) (built in)",
            "  | benchboot: census before-storage: 1 user-space process(es), 50 kernel threads, isolated",
            "  | benchboot: memory: bandwidth and latency (tinymembench's method)",
            "  ~ measuring memory (figure 1)",
            "  ~ measuring storage (figure 19)",
            "  ~ measuring device-read (figure 23)",
            "  ~ measuring random (figure 25)",
            "  | benchboot: card-check: fake-capacity probe of /dev/vda bytes 630194176..1073741824 (unpartitioned)",
            "  | benchboot: card-check: genuine: 1.0 GiB claimed, all 1057 stamped blocks read back (probed 601.0 MiB..1.0 GiB)",
            "  | benchboot: card-check: full pass: every sector held its data; wrote 423.0 MiB at 315.3 MiB/s, read 423.0 MiB at 409.6 MiB/s",
            "  ~ measuring card (figure 27)",
            "  | benchboot: census after-storage: 1 user-space process(es), 55 kernel threads, isolated",
            &format!("  | benchboot: end run={run} measurements=80 errors=0"),
            "  | benchboot: census after-network: 1 user-space process(es), 55 kernel threads, isolated",
            &format!("  | benchboot: figures end run={run} count=133"),
            "  | benchboot: verdict=run.complete result=pass",
            "  | benchboot: verdict=run.isolated result=pass",
        ]
    );
    let tail: Vec<&str> = shown.iter().skip(19).map(String::as_str).collect();
    assert_eq!(tail.len(), 14 + 2, "{tail:#?}");
    assert!(tail[..14]
        .iter()
        .all(|l| l.starts_with("  | benchboot: verdict=")));
    assert_eq!(
        tail[13],
        "  | benchboot: verdict=clock.before-network result=skip why=emulated: no clock to compare"
    );
    assert_eq!(
        tail[14],
        format!("  | benchboot: verdicts end run={run} pass=12 fail=0 skip=4")
    );
    assert_eq!(
        tail[15],
        "  | benchboot: ready serving http://10.0.2.15:8080/results.json (read-only)"
    );
    // Nothing of the document, the marks, the figures' own lines or the kernel's
    // warnings reaches the terminal.
    for l in &shown {
        assert!(!l.contains("document"), "{l}");
        assert!(!l.contains("case="), "{l}");
        assert!(!l.contains(" t_ns="), "{l}");
        assert!(!l.contains("clock-frequency"), "{l}");
        assert!(
            !l.chars().any(|c| c.is_control() || c == '\u{fffd}'),
            "{l:?}"
        );
    }
    let hidden = |k: &str| f.tally.hidden.get(k).copied().unwrap_or(0);
    assert_eq!(f.tally.lines, 97);
    assert_eq!(f.tally.shown, 35);
    assert_eq!(hidden("document"), 6, "begin, 4 chunks, end");
    assert_eq!(
        hidden("boot"),
        3,
        "the kernel's warnings, the first behind stray bytes"
    );
    assert_eq!(
        hidden("figure"),
        31 - 5,
        "31 figure lines, 5 stand behind progress lines"
    );
    assert_eq!(hidden("mark"), 16);
    assert_eq!(hidden("saved"), 10);
    assert_eq!(hidden("verdicts begin"), 1);
    assert_eq!(
        f.tally.summary(),
        "97 lines, 35 on the terminal; kept off it: 26 figure, 16 mark, 10 saved, \
         6 document, 3 boot, 1 verdicts begin"
    );
}

#[test]
fn stray_bytes_and_escapes_are_taken_out_and_boot_milestones_pass() {
    assert_eq!(
        printable("\u{0}\u{fffd}\u{fffd}benchboot: start run=x\r"),
        "benchboot: start run=x"
    );
    assert_eq!(
        printable("\u{1b}[1;31mKernel panic\u{1b}[0m\tx\u{7}"),
        "Kernel panic x"
    );
    let mut f = Filter::default();
    let shown: Vec<Option<String>> = [
        "\u{0}\u{fffd}benchboot: start run=r board=b",
        "[    2.1] Kernel panic - not syncing: Attempted to kill init!",
        "U-Boot SPL 2023.01 (Jan 01 2023 - 00:00:00 +0000)",
        "[    0.9] brcmfmac: brcmf_sdio_htclk: HT Avail timeout",
        "Warning: unable to open an initial console.",
        "benchboot: qemu stand-in hostapd: wlan1: AP-ENABLED ",
        "\u{fffd}\u{fffd}",
        "benchboot: case=storage.ext2.sync.bs8.r0.write value=0.143 units=MiB/s",
        "benchboot: case=clock.before-network.measured value=1.0 units=MHz",
        "benchboot: case=storage.ext3.sync.bs8.r0.write value=0.143 units=MiB/s",
        "benchboot: case=network.ncm.tcp.tx value=10.0 units=Mbit/s",
    ]
    .iter()
    .map(|l| f.line(l))
    .collect();
    assert_eq!(
        shown,
        [
            Some("  | benchboot: start run=r board=b".to_string()),
            Some("  | [    2.1] Kernel panic - not syncing: Attempted to kill init!".into()),
            Some("  | U-Boot SPL 2023.01 (Jan 01 2023 - 00:00:00 +0000)".into()),
            None,
            Some("  | Warning: unable to open an initial console.".into()),
            None,
            None,
            Some("  ~ measuring storage (figure 1)".into()),
            None,
            None,
            Some("  ~ measuring network (figure 4)".into()),
        ]
    );
    assert_eq!(f.tally.hidden.get("blank"), Some(&1));
    assert_eq!(f.tally.hidden.get("hostapd"), Some(&1));
}
