//! Tests of the journal: records written, scanned and replayed on an in-memory disk, and
//! cuts after every sector of whole runs that lose at most the step running.
use super::*;

/// Sector of the cut model: a write reaches the card 512 bytes at a time, in order.
const SECTOR: usize = 512;

/// A device in memory that logs every sector it writes, so a test can rebuild the
/// card as it was after any number of them (a cut after sector k).
#[derive(Clone)]
struct Logged {
    bytes: Vec<u8>,
    /// (offset, 512 bytes) per sector written, in order.
    log: Vec<(usize, Vec<u8>)>,
    /// Index into `log` at each sync.
    syncs: Vec<usize>,
}

impl Logged {
    fn new(len: usize) -> Self {
        Logged {
            bytes: vec![0; len],
            log: Vec::new(),
            syncs: Vec::new(),
        }
    }
}

impl Device for Logged {
    fn len(&self) -> u64 {
        self.bytes.len() as u64
    }
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let o = offset as usize;
        buf.copy_from_slice(&self.bytes[o..o + buf.len()]);
        Ok(())
    }
    fn write_at(&mut self, offset: u64, buf: &[u8]) -> io::Result<()> {
        assert_eq!(offset % BLOCK, 0, "unaligned write at {offset}");
        assert_eq!(buf.len() as u64 % BLOCK, 0, "write of {} bytes", buf.len());
        let o = offset as usize;
        self.bytes[o..o + buf.len()].copy_from_slice(buf);
        for (i, s) in buf.chunks(SECTOR).enumerate() {
            self.log.push((o + i * SECTOR, s.to_vec()));
        }
        Ok(())
    }
    fn sync(&mut self) -> io::Result<()> {
        self.syncs.push(self.log.len());
        Ok(())
    }
}

/// The card after the first `k` logged sectors of `log`, from `base`.
fn replay(base: &[u8], log: &[(usize, Vec<u8>)], k: usize) -> Vec<u8> {
    let mut b = base.to_vec();
    for (o, s) in &log[..k] {
        b[*o..*o + s.len()].copy_from_slice(s);
    }
    b
}

/// xorshift64*: reproducible noise for documents and cuts.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A run's documents as PID 1 saves them: one more step each time, figures that do not
/// compress away (so records span several blocks and the ring laps).
fn run_docs(run: &str, steps: usize, seed: u64) -> Vec<Vec<u8>> {
    let mut rng = Rng(seed | 1);
    let mut body = String::new();
    (0..steps)
        .map(|i| {
            for _ in 0..40 {
                body.push_str(&format!("{{\"step\":{i},\"ns\":{}}},", rng.next()));
            }
            format!("{{\"run_id\":\"{run}\",\"storage\":[{body}]}}").into_bytes()
        })
        .collect()
}

fn newest_doc(ring: &[u8]) -> Option<(String, Vec<u8>)> {
    let s = scan(ring);
    let e = s.newest()?;
    Some((e.header.run_id.clone(), document(ring, e).unwrap()))
}

#[test]
fn a_record_round_trips_and_lays_out_as_documented() {
    let doc = br#"{"run_id":"rpi-zero-w-1","storage":[]}"#;
    let rec = encode(7, "rpi-zero-w-1", doc).unwrap();
    assert_eq!(rec.len(), 4096);
    assert_eq!(&rec[..8], b"BBJRNL\0\x01");
    assert_eq!(u16::from_le_bytes([rec[8], rec[9]]), 1);
    // 38 bytes of JSON do not deflate smaller: stored.
    assert_eq!(u16::from_le_bytes([rec[10], rec[11]]), 0);
    assert_eq!(u64::from_le_bytes(rec[16..24].try_into().unwrap()), 7);
    assert_eq!(u32::from_le_bytes(rec[24..28].try_into().unwrap()), 38);
    assert_eq!(rec[36], 12);
    assert_eq!(&rec[37..49], b"rpi-zero-w-1");
    assert_eq!(&rec[128..166], doc);
    assert!(rec[166..].iter().all(|b| *b == 0));
    let s = scan(&rec);
    assert_eq!(s.records.len(), 1);
    assert_eq!(s.records[0].header.seq, 7);
    assert_eq!(document(&rec, &s.records[0]).unwrap(), doc);

    let big = run_docs("r-1", 30, 1).pop().unwrap();
    let rec = encode(1, "r-1", &big).unwrap();
    assert_eq!(u16::from_le_bytes([rec[10], rec[11]]), 1, "deflated");
    assert!(rec.len() < big.len(), "{} vs {}", rec.len(), big.len());
    let s = scan(&rec);
    assert_eq!(document(&rec, &s.records[0]).unwrap(), big);
}

#[test]
fn bad_run_ids_and_huge_documents_are_refused() {
    for id in ["", "a b", "x\u{1b}[2J", "é", &"a".repeat(65), "a/b"] {
        assert!(
            matches!(encode(1, id, b"{}"), Err(Error::RunId(_))),
            "{id:?}"
        );
    }
    let huge = vec![b' '; MAX_DOCUMENT_BYTES as usize + 1];
    assert!(matches!(
        encode(1, "r", &huge),
        Err(Error::DocumentTooLarge(_))
    ));
}

#[test]
fn appends_walk_the_ring_and_wrap_before_the_newest() {
    let mut w = Writer::open(Logged::new(16 * BLOCK as usize)).unwrap().0;
    assert_eq!(w.max_record(), 5 * BLOCK);
    let docs = run_docs("r-1", 60, 2);
    let mut last_end = 0;
    let mut laps = 0;
    let mut appended = 0;
    for d in &docs {
        match w.append("r-1", d) {
            Ok(a) => {
                appended += 1;
                // Never over the newest: either right after it, or at 0 with room.
                if a.wrapped {
                    laps += 1;
                    assert_eq!(a.offset, 0);
                } else {
                    assert_eq!(a.offset, last_end);
                }
                last_end = a.offset + a.bytes;
            }
            Err(Error::TooLarge { record, max, .. }) => {
                assert!(record > max);
                break;
            }
            Err(e) => panic!("{e}"),
        }
    }
    assert!(laps >= 3, "{laps} laps");
    let dev = w.into_inner();
    // No block is written by every save: the first block, for one, once per lap.
    let first = dev.log.iter().filter(|(o, _)| *o == 0).count();
    assert!(first <= laps + 1, "block 0 written {first} times");
    // One sync per save, after all of its sectors.
    assert_eq!(dev.syncs.len(), appended);
}

#[test]
fn a_document_larger_than_a_third_of_the_ring_is_refused_and_nothing_written() {
    let (mut w, ..) = Writer::open(Logged::new(6 * BLOCK as usize)).unwrap();
    let mut rng = Rng(5);
    let doc: Vec<u8> = (0..3 * BLOCK).map(|_| rng.next() as u8).collect();
    let err = w.append("r-1", &doc).unwrap_err();
    assert!(
        err.to_string()
            .contains("at most 8192 (a third of its 24576 bytes)"),
        "{err}"
    );
    assert!(w.into_inner().log.is_empty());
}

#[test]
fn reopening_continues_after_the_newest_with_the_next_sequence() {
    let (mut w, s, _) = Writer::open(Logged::new(32 * BLOCK as usize)).unwrap();
    assert!(s.records.is_empty());
    w.append("r-1", b"{\"a\":1}").unwrap();
    let b = w.append("r-1", b"{\"a\":2}").unwrap();
    let (mut w, s, ring) = Writer::open(w.into_inner()).unwrap();
    assert_eq!(s.records.len(), 2);
    assert_eq!(newest_doc(&ring).unwrap().1, b"{\"a\":2}");
    let c = w.append("r-2", b"{\"b\":1}").unwrap();
    assert_eq!((c.offset, c.seq), (b.offset + b.bytes, 3));
    let (_, s, ring) = Writer::open(w.into_inner()).unwrap();
    let runs: Vec<(&str, u64)> = s
        .newest_per_run()
        .iter()
        .map(|e| (e.header.run_id.as_str(), e.header.seq))
        .collect();
    assert_eq!(runs, [("r-2", 3), ("r-1", 2)]);
    assert_eq!(
        newest_doc(&ring).unwrap(),
        ("r-2".into(), b"{\"b\":1}".to_vec())
    );
}

/// The property the journal exists for, checked at every sector of every write of
/// three runs over a ring that laps several times: after a cut, the newest record is
/// exactly the last save that completed (or the one in flight, when all its sectors
/// made it), and a reboot that carries on from there ends with every save present.
#[test]
fn a_cut_after_any_sector_loses_at_most_the_save_in_flight() {
    const RING: usize = 24 * BLOCK as usize;
    // Three boots of a run each, written uncut: the log every cut replays a prefix of.
    let runs: Vec<(String, Vec<Vec<u8>>)> = (1..=3)
        .map(|r| {
            (
                format!("qemu-virt-arm64-{r}"),
                run_docs(&format!("r{r}"), 25, r),
            )
        })
        .collect();
    let mut dev = Logged::new(RING);
    // After each save: (sectors logged so far, run, document).
    let mut saves: Vec<(usize, usize, usize)> = Vec::new();
    for (r, (id, docs)) in runs.iter().enumerate() {
        let mut w = Writer::open(dev).unwrap().0;
        for (i, d) in docs.iter().enumerate() {
            w.append(id, d).unwrap();
            saves.push((w.dev.log.len(), r, i));
        }
        dev = w.into_inner();
    }
    let log = dev.log.clone();
    let zero = vec![0u8; RING];
    let mut cuts = 0;
    let mut resumed = 0;
    for k in 0..=log.len() {
        let card = replay(&zero, &log, k);
        let done = saves.iter().rev().find(|(n, ..)| *n <= k).copied();
        // The save in flight can be whole before its last sector: its padding's zeros
        // may already be on the card.
        let in_flight = saves.iter().find(|(n, ..)| *n > k).copied();
        let got = newest_doc(&card);
        let is = |s: Option<(usize, usize, usize)>| match (s, &got) {
            (None, None) => true,
            (Some((_, r, i)), Some((id, doc))) => *id == runs[r].0 && *doc == runs[r].1[i],
            _ => false,
        };
        let now = if is(done) {
            done
        } else if in_flight.is_some() && is(in_flight) {
            in_flight
        } else {
            panic!(
                "cut after sector {k}: {:?} is neither the last save nor the one in flight",
                got.map(|g| g.0)
            )
        };
        cuts += 1;
        // Every 7th cut: reboot and finish the interrupted run from its last save.
        if k % 7 == 0 {
            let (r, next) = match now {
                None => (0, 0),
                Some((_, r, i)) => (r, i + 1),
            };
            let mut d = Logged::new(RING);
            d.bytes = card;
            let mut w = Writer::open(d).unwrap().0;
            for doc in &runs[r].1[next..] {
                w.append(&runs[r].0, doc).unwrap();
            }
            let d = w.into_inner();
            assert_eq!(
                newest_doc(&d.bytes).unwrap().1,
                *runs[r].1.last().unwrap(),
                "resumed after sector {k}"
            );
            resumed += 1;
        }
    }
    assert!(cuts > 1000, "{cuts} cuts");
    eprintln!("{cuts} cuts, {resumed} resumed runs, {} saves", saves.len());
}

/// A cut can also leave the sectors of the write in flight in any subset (a card's
/// controller need not program them in order) and one of them garbage.
#[test]
fn a_cut_that_keeps_any_subset_of_the_write_in_flight_is_skipped() {
    const RING: usize = 20 * BLOCK as usize;
    let docs = run_docs("r1", 30, 9);
    let mut rng = Rng(77);
    let mut w = Writer::open(Logged::new(RING)).unwrap().0;
    let mut cuts = 0;
    for (i, d) in docs.iter().enumerate() {
        let before = w.dev.bytes.clone();
        let from = w.dev.log.len();
        if w.append("r-1", d).is_err() {
            break;
        }
        let sectors = w.dev.log[from..].to_vec();
        for _ in 0..40 {
            let mut card = before.clone();
            let keep: Vec<bool> = sectors.iter().map(|_| rng.below(2) == 0).collect();
            if keep.iter().all(|k| *k) {
                continue;
            }
            for ((o, s), k) in sectors.iter().zip(&keep) {
                if *k {
                    card[*o..*o + s.len()].copy_from_slice(s);
                }
            }
            // One sector of the write in flight left as garbage.
            let (o, _) = sectors[rng.below(sectors.len() as u64) as usize];
            for b in &mut card[o..o + SECTOR] {
                *b = rng.next() as u8;
            }
            let got = newest_doc(&card).map(|d| d.1);
            let before = if i == 0 { None } else { Some(&docs[i - 1]) };
            // Whole despite the cut only when every sector it needs made it intact.
            assert!(
                got.as_ref() == before || got.as_ref() == Some(d),
                "save {i}: a document that was never saved"
            );
            cuts += 1;
        }
    }
    assert!(cuts > 1000, "{cuts}");
}

#[test]
fn headers_that_lie_are_refused() {
    let rec = encode(3, "r-1", b"{\"x\":1}").unwrap();
    let bad = |i: usize, v: u8| {
        let mut r = rec.clone();
        r[i] = v;
        // Re-seal the header so only the field's own check can refuse it.
        let crc = crc32fast::hash(&r[..124]);
        r[124..128].copy_from_slice(&crc.to_le_bytes());
        scan(&r)
    };
    assert_eq!(bad(0, b'X').records.len(), 0, "magic");
    assert_eq!(bad(8, 2).records.len(), 0, "version");
    assert_eq!(bad(10, 7).records.len(), 0, "encoding");
    assert_eq!(bad(36, 0).records.len(), 0, "empty run id");
    assert_eq!(bad(36, 65).records.len(), 0, "run id too long");
    assert_eq!(bad(37, 0x1b).records.len(), 0, "control in run id");
    assert_eq!(bad(23, 0x80).records.len(), 0, "sequence past 2^62");
    // Stored, yet a length that differs from the document's.
    assert_eq!(bad(28, 99).records.len(), 0, "stored length mismatch");
    // The payload's checksum: the record is torn.
    let mut r = rec.clone();
    r[130] ^= 1;
    let s = scan(&r);
    assert_eq!((s.records.len(), s.torn.as_slice()), (0, &[0u64][..]));
    // Claims a payload past the ring's end.
    let mut r = rec.clone();
    r[24..28].copy_from_slice(&100_000u32.to_le_bytes());
    r[28..32].copy_from_slice(&100_000u32.to_le_bytes());
    let crc = crc32fast::hash(&r[..124]);
    r[124..128].copy_from_slice(&crc.to_le_bytes());
    assert_eq!(scan(&r).torn, [0]);
}

#[test]
fn a_ring_of_lying_headers_costs_bounded_work() {
    // Every block claims a payload as long as the rest of the ring, and fails it.
    const N: usize = 256;
    let mut ring = vec![0u8; N * BLOCK as usize];
    for b in 0..N {
        let left = ((N - b) * BLOCK as usize - HEADER_LEN) as u32;
        let h = Header {
            seq: 1,
            encoding: Encoding::Deflate,
            stored_len: left,
            raw_len: 1,
            payload_crc: 0xdead_beef,
            run_id: "r".into(),
        };
        let at = b * BLOCK as usize;
        ring[at..at + HEADER_LEN].copy_from_slice(&header_bytes(&h));
    }
    let s = scan(&ring);
    assert!(s.gave_up);
    assert!(s.records.is_empty());
    assert!(s.torn.len() < N, "{}", s.torn.len());
}

#[test]
fn a_checksummed_record_that_does_not_decode_is_an_error_not_a_panic() {
    let mut rec = encode(1, "r-1", &run_docs("r", 10, 3).pop().unwrap()).unwrap();
    // Garbage payload, checksums made to hold.
    let n = u32::from_le_bytes(rec[24..28].try_into().unwrap()) as usize;
    for b in &mut rec[HEADER_LEN..HEADER_LEN + n] {
        *b = 0xff;
    }
    let crc = crc32fast::hash(&rec[HEADER_LEN..HEADER_LEN + n]);
    rec[32..36].copy_from_slice(&crc.to_le_bytes());
    let hcrc = crc32fast::hash(&rec[..124]);
    rec[124..128].copy_from_slice(&hcrc.to_le_bytes());
    let s = scan(&rec);
    let err = document(&rec, &s.records[0]).unwrap_err().to_string();
    assert!(
        err.starts_with("journal record 1 at byte 0: deflate"),
        "{err}"
    );
}

/// 10^6 mutated rings through [`scan`] and [`document`]: no panic, and no record is
/// ever read whose bytes differ from one that was written.
#[test]
fn the_reader_survives_a_million_mutated_rings() {
    let docs = run_docs("f", 6, 11);
    let mut w = Writer::open(Logged::new(12 * BLOCK as usize)).unwrap().0;
    for d in &docs {
        w.append("f-1", d).unwrap();
    }
    let ring = w.into_inner().bytes;
    let mut rng = Rng(0x5eed);
    let mut work = ring.clone();
    // Offsets changed since the last reset: only records over them need decoding.
    let mut touched: Vec<usize> = Vec::new();
    let mut found = 0u64;
    for i in 0..1_000_000u32 {
        // A handful of byte flips, mostly in headers, some anywhere; reset now and then.
        if i % 64 == 0 {
            work.copy_from_slice(&ring);
            touched.clear();
        }
        for _ in 0..=rng.below(3) {
            let at = if rng.below(4) == 0 {
                rng.below(work.len() as u64)
            } else {
                rng.below(12) * BLOCK + rng.below(HEADER_LEN as u64)
            } as usize;
            work[at] = rng.next() as u8;
            touched.push(at);
        }
        let s = scan(&work);
        for e in &s.records {
            let span = e.offset as usize..e.end() as usize;
            if !touched.iter().any(|t| span.contains(t)) {
                continue;
            }
            if let Ok(d) = document(&work, e) {
                assert!(docs.contains(&d), "iteration {i}: a document never written");
                found += 1;
            }
        }
    }
    assert!(found > 50_000, "{found}");
}

#[test]
fn the_last_sequence_number_is_refused_not_written_invisibly() {
    let mut d = Logged::new(8 * BLOCK as usize);
    let rec = encode(MAX_SEQ, "r-1", b"{}").unwrap();
    d.bytes[..rec.len()].copy_from_slice(&rec);
    let (mut w, s, _) = Writer::open(d).unwrap();
    assert_eq!(s.newest().unwrap().header.seq, MAX_SEQ);
    let err = w.append("r-1", b"{\"a\":1}").unwrap_err();
    assert!(
        matches!(err, Error::SequenceExhausted(n) if n == MAX_SEQ),
        "{err}"
    );
    assert!(w.into_inner().log.is_empty());
}

#[test]
fn many_runs_are_grouped_in_linear_time_and_ties_go_to_the_later_record() {
    // 4,096 one-block records, each its own run: grouped at once, newest first.
    let mut ring = Vec::new();
    for i in 0..4096u64 {
        ring.extend(encode(i + 1, &format!("r-{i}"), b"{}").unwrap());
    }
    let s = scan(&ring);
    let runs = s.newest_per_run();
    assert_eq!(runs.len(), 4096);
    assert_eq!(runs[0].header.run_id, "r-4095");
    // Two records of one run with one sequence number: the later, as newest().
    let mut ring = encode(5, "r-a", b"{\"x\":1}").unwrap();
    ring.extend(encode(5, "r-a", b"{\"x\":2}").unwrap());
    let s = scan(&ring);
    assert_eq!(s.newest().unwrap().offset, BLOCK);
    assert_eq!(s.newest_per_run()[0].offset, BLOCK);
}

/// Pieces in order are the document; a reader that stops early gets no more; a
/// header claiming fewer bytes than the payload inflates to is corrupt before the
/// excess is given.
#[test]
fn a_document_is_given_in_pieces_and_no_further_than_its_header_says() {
    let doc: Vec<u8> = (0..300_000u32)
        .flat_map(|i| format!("{},", i % 977).into_bytes())
        .collect();
    for (data, encoding) in [
        (doc.clone(), Encoding::Deflate),
        (b"{}".to_vec(), Encoding::Stored),
    ] {
        let ring = encode(1, "r-1", &data).unwrap();
        let e = scan(&ring).newest().unwrap().clone();
        assert_eq!(e.header.encoding, encoding);
        let mut got = Vec::new();
        let mut pieces = 0;
        let n = document_pieces(&ring, &e, |p| {
            assert!(p.len() <= PIECE);
            pieces += 1;
            got.extend_from_slice(p);
            true
        })
        .unwrap();
        assert_eq!((n, &got), (data.len() as u64, &data));
        assert_eq!(got, document(&ring, &e).unwrap());
        if encoding == Encoding::Deflate {
            assert!(pieces >= data.len() / PIECE, "{pieces}");
            let mut calls = 0;
            let n = document_pieces(&ring, &e, |_| {
                calls += 1;
                calls < 2
            })
            .unwrap();
            assert_eq!((calls, n), (2, 2 * PIECE as u64));
        }
    }
    // The same payload under a header that says 1,000 bytes.
    let ring = encode(1, "r-1", &doc).unwrap();
    let mut h = parse_header(&ring).unwrap();
    h.raw_len = 1000;
    let mut lying = ring.clone();
    lying[..HEADER_LEN].copy_from_slice(&header_bytes(&h));
    let e = scan(&lying).newest().unwrap().clone();
    let mut given = 0;
    let err = document_pieces(&lying, &e, |p| {
        given += p.len();
        true
    })
    .unwrap_err();
    assert_eq!(given, 0);
    assert_eq!(
        err.to_string(),
        "journal record 1 at byte 0: decodes to more than the 1000 bytes the header says"
    );
}
