//! Tests of the card's journal reader: a document's identity and steps, the newer of
//! the journal's record and the FAT copy, the journal partition found and read bounded.
use super::*;
use benchboot_journal::{encode, Writer};

fn doc(run: &str, written_ns: u64, steps: usize) -> String {
    let storage: Vec<serde_json::Value> =
        (0..steps).map(|i| serde_json::json!({ "i": i })).collect();
    serde_json::json!({
        "run_id": run,
        "system": { "written_ns": written_ns },
        "storage": storage,
        "random": [ {}, {} ],
    })
    .to_string()
}

fn ring_of(records: &[(&str, String)]) -> Vec<u8> {
    let mut ring = Vec::new();
    for (i, (run, text)) in records.iter().enumerate() {
        ring.extend(encode(i as u64 + 1, run, text.as_bytes()).unwrap());
    }
    ring
}

#[test]
fn identity_and_steps_read_a_document() {
    let d = doc("rpi-4b-1", 99, 3);
    assert_eq!(identity(&d), Some(("rpi-4b-1".into(), 99)));
    assert_eq!(steps(&d), 5);
    assert_eq!(identity("{\"run_id\": 7}"), None);
    assert_eq!(identity("not json"), None);
    assert_eq!(steps("[1,2]"), 0);
}

#[test]
fn the_newer_copy_is_picked() {
    let a1 = doc("r-a", 10, 1);
    let a2 = doc("r-a", 20, 2);
    let b1 = doc("r-b", 5, 1);
    let scan_a = scan(&ring_of(&[("r-a", a1.clone()), ("r-a", a2.clone())]));
    // Same run: the later save, whichever copy holds it; equal texts read the FAT copy.
    assert_eq!(
        pick(&a2, &a1, &scan_a),
        Pick::Journal,
        "FAT one save behind"
    );
    assert_eq!(pick(&a1, &a2, &scan_a), Pick::Fat, "journal failed later");
    assert_eq!(pick(&a2, &a2, &scan_a), Pick::Fat);
    // Another run in the FAT copy: older when the journal has its records too...
    let scan_ab = scan(&ring_of(&[("r-a", a1.clone()), ("r-b", b1.clone())]));
    assert_eq!(pick(&b1, &a1, &scan_ab), Pick::Journal);
    // ...a run the journal never saw (its journal could not be opened) otherwise.
    let scan_b = scan(&ring_of(&[("r-b", b1.clone())]));
    assert_eq!(pick(&b1, &a1, &scan_b), Pick::Fat);
    // A FAT copy that is no document loses; a journal record that is none too.
    assert_eq!(pick(&a2, "\0\0garbage", &scan_a), Pick::Journal);
    assert_eq!(pick("{\"x\":1}", &a1, &scan_a), Pick::Fat);
}

#[test]
fn the_journal_partition_is_found_by_number_and_type_and_read_bounded() {
    // A 1 MiB "disk": p4 of type 0xda at 512 KiB holding two records.
    let mut disk = vec![0u8; 1 << 20];
    let ring = ring_of(&[("r-a", doc("r-a", 1, 1)), ("r-a", doc("r-a", 2, 2))]);
    disk[512 << 10..(512 << 10) + ring.len()].copy_from_slice(&ring);
    let p4 = Partition {
        number: 4,
        mbr_type: 0xda,
        offset: 512 << 10,
        len: 512 << 10,
    };
    let path = Path::new("/dev/sdz");
    let j = read(&mut std::io::Cursor::new(&disk), &[p4], path)
        .unwrap()
        .unwrap();
    assert_eq!(j.place, "/dev/sdz p4 (results journal)");
    assert_eq!(j.scan.records.len(), 2);
    let (seq, text) = j.newest().unwrap();
    assert_eq!((seq, text.unwrap()), (2, doc("r-a", 2, 2)));
    // Another type, or another number: no journal.
    for other in [
        Partition {
            mbr_type: 0x83,
            ..p4
        },
        Partition { number: 3, ..p4 },
    ] {
        let none = read(&mut std::io::Cursor::new(&disk), &[other], path).unwrap();
        assert!(none.is_none());
    }
    // An MBR that claims far more than the disk: read to the disk's end, no more.
    let huge = Partition {
        len: u64::MAX / 2,
        ..p4
    };
    let j = read(&mut std::io::Cursor::new(&disk), &[huge], path)
        .unwrap()
        .unwrap();
    assert_eq!(j.scan.ring_len, 512 << 10);
    // A writer over the same bytes agrees with the reader.
    struct Mem(Vec<u8>);
    impl benchboot_journal::Device for Mem {
        fn len(&self) -> u64 {
            self.0.len() as u64
        }
        fn read_at(&mut self, o: u64, b: &mut [u8]) -> io::Result<()> {
            b.copy_from_slice(&self.0[o as usize..o as usize + b.len()]);
            Ok(())
        }
        fn write_at(&mut self, o: u64, b: &[u8]) -> io::Result<()> {
            self.0[o as usize..o as usize + b.len()].copy_from_slice(b);
            Ok(())
        }
        fn sync(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let (mut w, s, _) = Writer::open(Mem(disk[512 << 10..].to_vec())).unwrap();
    assert_eq!(s.records.len(), 2);
    assert_eq!(w.append("r-b", b"{}").unwrap().seq, 3);
}

fn journal_of(records: &[(&str, String)]) -> Journal {
    let ring = ring_of(records);
    Journal {
        place: "card p4 (results journal)".into(),
        scan: scan(&ring),
        ring,
    }
}

#[test]
fn a_record_whose_document_names_another_run_is_refused() {
    let j = journal_of(&[("r-a", doc("r-b", 1, 1))]);
    let (_, text) = j.newest().unwrap();
    let e = text.unwrap_err();
    assert!(
        matches!(&e, RecordError::OtherRun { record, document } if record == "r-a" && document == "r-b"),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        "the record of run r-a holds a document of run r-b"
    );
}

#[test]
fn runs_are_decoded_within_their_limits() {
    // 40 runs: the 32 newest are decoded, the rest say why not.
    let records: Vec<(String, String)> = (0..40)
        .map(|i| (format!("r-{i}"), doc(&format!("r-{i}"), 1, 1)))
        .collect();
    let refs: Vec<(&str, String)> = records
        .iter()
        .map(|(r, d)| (r.as_str(), d.clone()))
        .collect();
    let runs = journal_of(&refs).runs();
    assert_eq!(runs.len(), 40);
    assert_eq!(runs[0].0, "r-39");
    assert!(runs[..MAX_RUNS].iter().all(|r| r.2.is_ok()));
    assert!(runs[MAX_RUNS..]
        .iter()
        .all(|r| matches!(r.2, Err(RecordError::TooManyRuns))));
    assert_eq!(
        RecordError::TooManyRuns.to_string(),
        "the journal holds more than 32 runs (damaged or crafted); the 32 newest are read"
    );
    // Earlier runs whose documents pass 64 MiB in all: decoding stops there (a
    // deflated record of whitespace claims 20 MiB each).
    let big = |run: &str| {
        let mut d = doc(run, 1, 1);
        d.push_str(&" ".repeat(20 << 20));
        d
    };
    let runs = journal_of(&[
        ("e-1", big("e-1")),
        ("e-2", big("e-2")),
        ("e-3", big("e-3")),
        ("e-4", big("e-4")),
        ("now", big("now")),
    ])
    .runs();
    let ok: Vec<bool> = runs.iter().map(|r| r.2.is_ok()).collect();
    // The newest run always; then three earlier ones (60 MiB), not the fourth.
    assert_eq!(ok, [true, true, true, true, false]);
    assert!(matches!(runs[4].2, Err(RecordError::EarlierRunsTooLarge)));
    assert_eq!(
        RecordError::EarlierRunsTooLarge.to_string(),
        "the earlier runs' documents pass 64 MiB in all"
    );
}

#[test]
fn the_journal_takes_every_document_a_reader_takes() {
    assert_eq!(
        u64::from(benchboot_journal::MAX_DOCUMENT_BYTES),
        benchboot_results::MAX_DOCUMENT_BYTES
    );
}

/// A ring in memory, for the journal's own [`Writer`].
struct Mem(Vec<u8>);

impl benchboot_journal::Device for Mem {
    fn len(&self) -> u64 {
        self.0.len() as u64
    }
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        buf.copy_from_slice(&self.0[offset as usize..offset as usize + buf.len()]);
        Ok(())
    }
    fn write_at(&mut self, offset: u64, buf: &[u8]) -> std::io::Result<()> {
        self.0[offset as usize..offset as usize + buf.len()].copy_from_slice(buf);
        Ok(())
    }
    fn sync(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A record of some 290 KiB that inflates to 64 MiB of JSON (`[0,0,...]`, 33 million
/// values): read whole and parsed as a `serde_json::Value` it took 2.2 GB and 23 s.
/// Now it is refused while it is decoded: the value budget runs out after 2^21
/// values, 4 MiB into the text, and nothing but one 64 KiB piece was held decoded.
#[test]
fn a_record_that_inflates_to_millions_of_values_is_refused_while_decoded() {
    let max = benchboot_results::MAX_DOCUMENT_BYTES as usize;
    let mut doc = Vec::with_capacity(max);
    doc.extend_from_slice(b"[0");
    doc.resize(max - 1, 0);
    for pair in doc[2..].chunks_exact_mut(2) {
        pair.copy_from_slice(b",0");
    }
    doc[max - 2] = b']';
    doc.truncate(max - 1);
    let (mut w, _, _) = Writer::open(Mem(vec![0u8; 16 << 20])).unwrap();
    let put = w.append("r-1", &doc).unwrap();
    assert!(put.bytes < 320 << 10, "{} bytes", put.bytes);
    drop(doc);
    let mut disk = vec![0u8; 1 << 20];
    disk.extend_from_slice(&w.into_inner().0);
    let p4 = Partition {
        number: 4,
        mbr_type: 0xda,
        offset: 1 << 20,
        len: 16 << 20,
    };
    let j = read(
        &mut std::io::Cursor::new(&disk),
        &[p4],
        Path::new("card.img"),
    )
    .unwrap()
    .unwrap();
    let (seq, text) = j.newest().unwrap();
    assert_eq!(seq, 1);
    let Err(RecordError::TooManyValues(t)) = text else {
        panic!("{:?}", text.map(|t| t.len()))
    };
    let values = benchboot_results::budget::MAX_DOCUMENT_VALUES;
    // `[` and `0` are values 1 and 2; value k + 1 is the `0` at byte 2k - 1.
    assert_eq!((t.max, t.at), (values, 2 * values - 1));
    // Decoding stopped with the piece that held that byte.
    assert!(
        t.len > t.at && t.len <= t.at + benchboot_journal::PIECE as u64,
        "{t:?}"
    );
    assert_eq!(
        text_of(&j),
        "more than 2097152 values (JSON values and keys) by byte 4194303: a results \
         document holds some hundred thousand; this one is damaged or crafted"
    );
    let runs = j.runs();
    assert!(matches!(runs[0].2, Err(RecordError::TooManyValues(_))));
}

fn text_of(j: &Journal) -> String {
    j.newest().unwrap().1.unwrap_err().to_string()
}

/// What [`identity`] and [`steps`] read without building the document: the fields of
/// another type read as absent, as through `serde_json::Value`.
#[test]
fn identity_and_steps_skip_what_they_do_not_read() {
    let d = r#"{"run_id": "r-1", "x": [[{"a": 1}], "s"], "system": {"a": [1], "written_ns": 7},
                "storage": [{}, 1, "x", [2]], "random": {"a": 1}, "verify": 3}"#;
    assert_eq!(identity(d), Some(("r-1".into(), 7)));
    assert_eq!(steps(d), 4);
    assert_eq!(
        identity(r#"{"run_id": "r", "system": {"written_ns": "7"}}"#),
        Some(("r".into(), 0))
    );
    assert_eq!(identity(r#"{"run_id": "r", "system": {}}"#), None);
    assert_eq!(identity(r#"{"run_id": "r", "system": 5}"#), None);
    assert_eq!(
        identity(r#"{"run_id": ["r"], "system": {"written_ns": 1}}"#),
        None
    );
    assert_eq!(
        identity(r#"{"run_id": "r\"1", "system": {"written_ns": 1}}"#),
        Some(("r\"1".into(), 1))
    );
    assert_eq!(steps(r#"{"storage": 5, "device_reads": [1, 2]}"#), 2);
}
