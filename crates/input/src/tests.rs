//! The reader over real files, a FIFO, `/dev/zero` and a folder.

use super::*;

#[test]
fn a_file_within_the_cap_is_read_whole() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("plan.toml");
    std::fs::write(&f, b"name = \"x\"\n").unwrap();
    assert_eq!(read(&f, "a plan file", 11).unwrap(), b"name = \"x\"\n");
    assert_eq!(read_text(&f, "a plan file", 64).unwrap(), "name = \"x\"\n");
}

#[test]
fn a_file_over_the_cap_is_refused_by_its_size() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("big.toml");
    std::fs::write(&f, vec![b'#'; 2 << 20]).unwrap();
    let e = read(&f, "a plan file", 1 << 20).unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::FileTooLarge);
    assert_eq!(
        e.to_string(),
        format!(
            "{}: 2 MiB is more than a plan file has (1 MiB at most): check that it is a \
             plan file",
            f.display()
        )
    );
}

#[cfg(unix)]
#[test]
fn a_character_device_is_refused_before_a_byte_is_read() {
    for accept in [Accept::File, Accept::FileOrDisk] {
        let e = open(Path::new("/dev/zero"), "a defmt log", accept).unwrap_err();
        assert_eq!(
            e.to_string(),
            "/dev/zero: a character device, not a regular file: a defmt log is read only \
             from a file (a device or a pipe may never end); save it to a file and give that"
        );
    }
    let e = read(Path::new("/dev/zero"), "a defmt log", 1 << 20).unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
}

/// A FIFO with no writer: opening it for reading blocked for ever (`std::fs::read`).
#[cfg(unix)]
#[test]
fn a_fifo_without_a_writer_is_refused_without_waiting() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("frames");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let e = read(&fifo, "a defmt log", 1 << 20).unwrap_err();
    assert!(
        e.to_string()
            .ends_with("frames: a FIFO (named pipe), not a regular file: a defmt log is read only from a file (a device or a pipe may never end); save it to a file and give that"),
        "{e}"
    );
    assert!(open(&fifo, "a card", Accept::FileOrDisk).is_err());
}

#[test]
fn a_folder_is_refused_as_one() {
    let dir = tempfile::tempdir().unwrap();
    let e = read(dir.path(), "a plan file", 1 << 20).unwrap_err();
    assert!(matches!(
        e,
        InputError::NotAFile {
            kind: "a folder",
            ..
        }
    ));
}

#[test]
fn a_missing_file_is_an_open_error_naming_it() {
    let e = read(Path::new("/no/such/plan.toml"), "a plan file", 1).unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::NotFound);
    assert!(
        e.to_string().starts_with("reading /no/such/plan.toml: "),
        "{e}"
    );
    // The OS's words are in the message once: no `source` for a chain printer (anyhow's
    // `{:#}`) to print a second time.
    assert!(std::error::Error::source(&e).is_none());
}

#[test]
fn text_that_is_not_utf8_names_the_byte() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("cp1252.toml");
    std::fs::write(&f, b"ab\x96").unwrap();
    let e = read_text(&f, "a plan file", 64).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "reading {}: not UTF-8 text (byte 2 of the file): is it a plan file?",
            f.display()
        )
    );
}

#[test]
fn sizes_are_named_in_their_unit() {
    assert_eq!(size_text(16 << 30), "16 GiB");
    assert_eq!(size_text(64 << 20), "64 MiB");
    assert_eq!(size_text(256 << 10), "256 KiB");
    assert_eq!(size_text(1000), "1000 bytes");
    assert_eq!(size_text((1 << 20) + 1), "1048577 bytes");
}

#[test]
fn the_oss_words_come_without_its_number() {
    let gone = std::fs::File::open("/nonexistent/benchboot").unwrap_err();
    assert!(gone.to_string().ends_with(" (os error 2)"), "{gone}");
    assert_eq!(os_words(&gone), "no such file or directory");
    #[cfg(unix)]
    assert_eq!(
        os_words(&io::Error::from_raw_os_error(libc::ELOOP)),
        "too many levels of symbolic links"
    );
    // Not the OS's: as it is.
    let own = io::Error::new(io::ErrorKind::InvalidData, "Not UTF-8 text");
    assert_eq!(os_words(&own), "Not UTF-8 text");
}
