//! The results journal as the host reads it from a card: `benchboot_journal::scan` of
//! the ring's bytes, every record decoded (`document`, and in pieces,
//! `document_pieces`), then the card's reader over a disk whose p4 is the ring
//! (`benchboot_card::journal`: `read`, `newest`, `runs`, `identity`, `steps`, `pick`).
#![no_main]

use std::io::Cursor;
use std::path::Path;

use benchboot_card::journal::{self, RecordError, MAX_RUNS};
use benchboot_card::Partition;
use benchboot_journal::{document, document_pieces, scan, BLOCK, PIECE};
use benchboot_results::budget::{tally, MAX_DOCUMENT_VALUES};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|ring: &[u8]| {
    let s = scan(ring);
    assert_eq!(s.ring_len, ring.len() as u64 / BLOCK * BLOCK);
    let mut end = 0;
    for e in &s.records {
        // Records lie at block boundaries, inside the ring, one after the other.
        assert_eq!(e.offset % BLOCK, 0);
        assert!(e.offset >= end && e.end() <= s.ring_len, "{e:?}");
        end = e.end();
        // In pieces as whole; no piece past the buffer, no more than the header says.
        let mut got = Vec::new();
        let given = document_pieces(ring, e, |p| {
            assert!(p.len() <= PIECE);
            got.extend_from_slice(p);
            true
        });
        match (document(ring, e), given) {
            (Ok(doc), Ok(n)) => {
                assert_eq!(doc, got);
                assert_eq!(n, doc.len() as u64);
            }
            (Ok(doc), Err(err)) => panic!("whole {} bytes, pieces: {err}", doc.len()),
            (Err(_), _) => assert!(got.len() as u64 <= u64::from(e.header.raw_len)),
        }
    }
    // The card's reader, the ring as p4 at 1 KiB.
    let mut disk = vec![0u8; 1024];
    disk.extend_from_slice(ring);
    let p4 = Partition {
        number: 4,
        mbr_type: 0xda,
        offset: 1024,
        len: ring.len() as u64,
    };
    let j = journal::read(&mut Cursor::new(&disk), &[p4], Path::new("card.img"))
        .expect("reads from memory")
        .expect("p4 of type 0xda");
    assert_eq!(j.scan, s);
    if let Some((seq, text)) = j.newest() {
        assert_eq!(Some(seq), s.newest().map(|e| e.header.seq));
        match text {
            Ok(t) => {
                // A text given out is within the budget, of the run its header names.
                tally(t.as_bytes(), MAX_DOCUMENT_VALUES).expect("within the budget");
                let _ = journal::steps(&t);
                if let Some((id, _)) = journal::identity(&t) {
                    assert_eq!(
                        Some(id.as_str()),
                        s.newest().map(|e| e.header.run_id.as_str())
                    );
                }
                let _ = journal::pick(&t, "{}", &s);
            }
            Err(e) => assert!(e.to_string().len() < 400, "{e}"),
        }
    }
    let runs = j.runs();
    assert_eq!(runs.len(), s.newest_per_run().len());
    for (i, (_, _, text)) in runs.iter().enumerate() {
        if i >= MAX_RUNS {
            assert!(matches!(text, Err(RecordError::TooManyRuns)));
        }
    }
});
