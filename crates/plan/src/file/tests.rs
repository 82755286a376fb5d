//! Tests of the plan file reader: strict TOML, every key optional, errors naming file,
//! line and key, the counts' ranges.
use super::*;

fn err(text: &str) -> PlanFileError {
    PlanFile::parse("my.toml", text).unwrap_err()
}

#[test]
fn a_file_names_only_what_it_changes() {
    let f = PlanFile::parse(
        "my.toml",
        "extends = \"quick\"\n[storage]\nblock-sizes = [512, \"4 KiB\"]\ntime-cap = \"2 s\"\n",
    )
    .unwrap();
    assert_eq!(f.extends.as_ref().unwrap().get_ref(), "quick");
    let s = f.storage.unwrap();
    assert_eq!(s.block_sizes, Some(vec![BlockSize(512), BlockSize(4096)]));
    assert_eq!(s.time_cap, Some(Millis(2000)));
    assert!(s.card.is_none() && f.network.is_none());
}

#[test]
fn errors_name_file_line_and_key() {
    let e = err("[storage]\nrepetitions = 1\ncolour = \"red\"\n");
    assert_eq!((e.file.as_str(), e.line), ("my.toml", Some(3)));
    assert!(e.message.contains("unknown field `colour`"), "{e}");
    assert!(e.to_string().starts_with("my.toml:3: storage"), "{e}");

    let e = err("[storage]\n\nblock-sizes = [4096, 0]\n");
    assert_eq!(e.line, Some(3));
    assert_eq!(e.key, "storage.block-sizes[1]");
    assert!(e.message.contains("block size 0 B"), "{e}");

    let e = err("[storage]\nrepetitions = \"three\"\n");
    assert_eq!((e.line, e.key.as_str()), (Some(2), "storage.repetitions"));

    let e = err("[[storage.disk]]\nlabel = \"usb/ext4\"\ndevice = \"LABEL=X\"\n");
    assert_eq!(e.line, Some(2));
    assert!(e.key.starts_with("storage.disk[0].label"), "{}", e.key);
    assert!(e.message.contains("'/'"), "{e}");

    let e = err("[storage]\ntime-cap = 10\n");
    assert!(e.message.contains("\"10 s\""), "{e}");
    let e = err("[storage]\nbyte-cap = \"64 MB\"\n");
    assert!(e.message.contains("\"64 MiB\""), "{e}");
    assert_eq!(e.key, "storage.byte-cap", "a Spanned value's key");
}

#[test]
fn only_utf8_is_read_and_its_byte_order_mark_is_dropped() {
    let text = "[storage]\nrepetitions = 2\n";
    assert_eq!(decode_text("p.toml", text.as_bytes()).unwrap(), text);
    let bom = [UTF8_BOM, text.as_bytes()].concat();
    assert_eq!(decode_text("p.toml", &bom).unwrap(), text);
    let parsed = PlanFile::parse("p.toml", &decode_text("p.toml", &bom).unwrap()).unwrap();
    assert_eq!(parsed.storage.unwrap().repetitions, Some(Count(2)));

    let le: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
    let be: Vec<u8> = text.encode_utf16().flat_map(u16::to_be_bytes).collect();
    let cases: [(Vec<u8>, &str); 5] = [
        (
            [&[0xFF, 0xFE][..], &le].concat(),
            "looks like UTF-16 (little-endian, with a byte-order mark)",
        ),
        (
            [&[0xFE, 0xFF][..], &be].concat(),
            "looks like UTF-16 (big-endian, with a byte-order mark)",
        ),
        (
            le.clone(),
            "looks like UTF-16 (little-endian, without a byte-order mark)",
        ),
        (
            be.clone(),
            "looks like UTF-16 (big-endian, without a byte-order mark)",
        ),
        // cp1252: "description = \"Pi \x96 USB\"" (0x96 is an en dash there).
        (
            b"[storage]\ndescription = \"Pi \x96 USB\"\n".to_vec(),
            "byte 0x96 at offset 28, line 2: cp1252 or another 8-bit encoding?",
        ),
    ];
    for (bytes, detail) in cases {
        assert_eq!(
            decode_text("p.toml", &bytes).unwrap_err().to_string(),
            format!("p.toml is not UTF-8 ({detail}): save it as UTF-8")
        );
    }
}

#[test]
fn a_plan_file_past_1_mib_is_refused_unread() {
    let dir = std::env::temp_dir().join(format!("bb-plan-big-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ok = dir.join("ok.toml");
    std::fs::write(&ok, vec![b'#'; MAX_PLAN_FILE_BYTES as usize]).unwrap();
    let big = dir.join("big.toml");
    // 16 GiB, sparse: read whole it would not fit in this test's memory.
    std::fs::File::create(&big)
        .unwrap()
        .set_len(16 << 30)
        .unwrap();
    let got = (read_bounded(&ok).map(|b| b.len()), read_bounded(&big));
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(got.0.unwrap(), 1 << 20);
    let e = got.1.unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::FileTooLarge);
    assert_eq!(
        e.to_string(),
        format!(
            "{}: 16 GiB is more than a plan file has (1 MiB at most): check that it is a \
             plan file",
            big.display()
        )
    );
}

/// `plan check /dev/zero` read 1 MiB of zeros, then said the file "is 0 bytes".
#[cfg(unix)]
#[test]
fn a_device_is_refused_as_one_unread() {
    let e = read_bounded(std::path::Path::new("/dev/zero")).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
    assert_eq!(
        e.to_string(),
        "/dev/zero: a character device, not a regular file: a plan file is read only \
         from a file (a device or a pipe may never end); save it to a file and give that"
    );
}

#[test]
fn names_are_restricted() {
    assert_eq!(name_problem("usb-ext4_2"), None);
    assert!(name_problem("").is_some());
    assert!(name_problem("a b").unwrap().contains("' '"));
    assert!(name_problem("-x").unwrap().contains("start"));
    assert!(name_problem("é").is_some());
    assert!(name_problem(&"x".repeat(33)).unwrap().contains("33 bytes"));
}

#[test]
fn child_keys_win_and_lists_replace() {
    let parent = PlanFile::parse(
        "p",
        "[storage]\nrepetitions = 3\nmodes = [\"sync\", \"direct\"]\n[storage.random]\nduration = \"10 s\"\nregion = \"64 MiB\"\n",
    )
    .unwrap();
    let child = PlanFile::parse(
        "c",
        "[storage]\nmodes = [\"direct\"]\n[storage.random]\nduration = \"1 s\"\n",
    )
    .unwrap();
    let s = child.over(parent).storage.unwrap();
    assert_eq!(s.modes, Some(vec![Mode::Direct]));
    assert_eq!(s.repetitions, Some(Count(3)));
    let r = s.random.unwrap();
    assert_eq!(r.duration, Some(Millis(1000)));
    assert_eq!(r.region.unwrap().into_inner(), Bytes(64 << 20));
}

/// Found by the `plan_toml` fuzz target: a NUL (or an escape) in a comment gave an
/// error with no message at all (`my.toml:2: (file): `).
#[test]
fn a_control_character_in_a_comment_is_named() {
    for (text, code) in [
        ("[storage]\n# the cap\u{0}\nrepetitions = 1\n", "0000"),
        ("[storage]\n# \u{1b}[2J\n", "001B"),
    ] {
        assert_eq!(
            err(text).to_string(),
            format!(
                "my.toml:2: character U+{code} (a control character) is not \
                 allowed in a TOML file, comments included: delete it, or save the file \
                 again as plain text"
            )
        );
    }
}
