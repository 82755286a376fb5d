//! The init's log end to end on this machine: frames encoded by the firmware's defmt
//! logger (firmware/src/log.rs) in this very test binary, decoded by `benchboot log`'s
//! decoder with the test binary's own ELF as the table, as the host decodes a board's
//! `log.defmt` with `<board>.init.elf`. build.rs links this binary with defmt's table
//! (Linux only: the table is an ELF section). It lives in the tests crate so that the
//! host crate needs neither the firmware nor defmt to build its tests.
#![cfg(target_os = "linux")]

use benchboot::log::{decode, format_line};
use benchboot_firmware::log::{capture, snapshot, stats, CAPACITY};

fn own_elf() -> Vec<u8> {
    std::fs::read(std::env::current_exe().unwrap()).unwrap()
}

#[test]
fn firmware_frames_decode_to_the_exact_messages() {
    let (frames, dropped) = capture(4096, || {
        defmt::info!("plan loaded: {=str}", "rpi-zero-w");
        defmt::debug!("block size {=u32} B: write {=u64} ns", 4096, 123_456_789);
        defmt::warn!("target {=str} skipped: {=str}", "LABEL=bench", "not found");
        defmt::error!("temperature {=f32} C, throttled {=bool}", 61.5, true);
    });
    assert_eq!(dropped, 0);
    let d = decode(&own_elf(), &frames).unwrap();
    assert_eq!((d.malformed, d.trailing_bytes), (0, 0));
    let got: Vec<(&str, &str)> = d
        .lines
        .iter()
        .map(|l| (l.level.as_str(), l.message.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("info", "plan loaded: rpi-zero-w"),
            ("debug", "block size 4096 B: write 123456789 ns"),
            ("warn", "target LABEL=bench skipped: not found"),
            ("error", "temperature 61.5 C, throttled true"),
        ]
    );
    // Timestamps: seconds since boot with µs, in order.
    let ts: Vec<f64> = d
        .lines
        .iter()
        .map(|l| l.timestamp.parse().unwrap())
        .collect();
    assert!(ts[0] > 0.0 && ts.windows(2).all(|w| w[0] <= w[1]), "{ts:?}");
    assert!(d.lines[0].timestamp.split('.').nth(1).unwrap().len() == 6);
    assert!(format_line(&d.lines[2]).ends_with(" WARN  target LABEL=bench skipped: not found"));
    // Cheap: the longest of these frames, string arguments included, stays small.
    let longest = frames[1..]
        .split(|&b| b == 0)
        .map(<[u8]>::len)
        .max()
        .unwrap();
    assert!(longest <= 40, "{longest} bytes");
}

#[test]
fn a_cut_file_and_foreign_bytes_are_reported_not_fatal() {
    let (frames, _) = capture(4096, || {
        defmt::info!("first");
        defmt::info!("second {=u32}", 2);
    });
    let elf = own_elf();
    // Cut inside the second frame: the first still decodes, the rest is reported.
    let cut = &frames[..frames.len() - 2];
    let d = decode(&elf, cut).unwrap();
    assert_eq!(d.lines.len(), 1);
    assert_eq!(d.lines[0].message, "first");
    assert!(d.trailing_bytes > 0);
    // Bytes that are no frame of this build: counted, and decoding goes on after them.
    let mut mixed = vec![0x00, 0xff, 0x00];
    mixed.extend_from_slice(&frames);
    let d = decode(&elf, &mixed).unwrap();
    assert_eq!(d.malformed, 1);
    assert_eq!(d.lines.len(), 2);
}

#[test]
fn the_stripped_init_is_refused_with_what_to_give_instead() {
    let err = decode(b"\x7fELF but not really", &[0]).unwrap_err();
    assert!(format!("{err:#}").contains("defmt table"), "{err:#}");
}

#[test]
fn a_full_shared_log_keeps_its_beginning_and_says_how_much_was_dropped() {
    // The only test here that logs into the shared buffer (the others capture).
    defmt::info!("run starts");
    let mut n = 0u32;
    while stats().dropped < 3 {
        defmt::debug!("filler {=u32}", n);
        n += 1;
        assert!(n < 1_000_000, "the log never filled");
    }
    let s = stats();
    assert!(s.bytes <= CAPACITY && s.bytes > CAPACITY - 64, "{s:?}");
    let d = decode(&own_elf(), &snapshot()).unwrap();
    assert_eq!((d.malformed, d.trailing_bytes), (0, 0));
    assert_eq!(d.lines[0].message, "run starts");
    assert_eq!(d.lines[1].message, "filler 0");
    assert_eq!(d.lines.len() as u32, s.frames + 1);
    let last = d.lines.last().unwrap();
    assert_eq!(last.level, "warn");
    assert_eq!(
        last.message,
        format!("log: 3 frames dropped (buffer of {CAPACITY} bytes full, or busy)")
    );
}
