//! The whole results document through the console, for a board with no host to fetch
//! from (a LAVA farm, a serial cable): zlib-compressed (RFC 1950), base64 (RFC 4648) in
//! lines of [`CHUNK_BYTES`], each with its index and the CRC-32 (IEEE 802.3) of its
//! bytes, between a begin line (sizes and the SHA-256 of the JSON) and an end line:
//!
//! ```text
//! benchboot: document begin run=<id> format=zlib+base64 json-bytes=<n> zlib-bytes=<m> lines=<k> sha256=<hex>
//! benchboot: document 1/<k> <base64> <crc32, 8 hex digits>
//! ...
//! benchboot: document end run=<id>
//! ```
//!
//! [`rebuild`] reads them back out of any log (a LAVA job log's messages, a serial
//! capture with time stamps) and checks every line, the sizes and the hash; every
//! failure names the log line.

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use sha2::{Digest, Sha256};

/// Compressed bytes per chunk line: 96 bytes = 128 base64 characters, a line of about
/// 170 bytes with its prefix, index and CRC.
pub const CHUNK_BYTES: usize = 96;

/// Largest document [`rebuild`] inflates, bytes: a results document of a long hardware
/// plan is a few MiB; more is a corrupt or hostile log.
pub const MAX_JSON_BYTES: usize = 64 << 20;

/// Most JSON [`rebuild`] holds for all the documents of one log together, bytes: four
/// of the largest ([`MAX_JSON_BYTES`]), 256 MiB, as much as the largest log the host
/// reads. A log of many runs of a few MiB each stays far below; a log of thousands of
/// documents that inflate a thousandfold is hostile.
pub const MAX_TOTAL_JSON_BYTES: usize = 4 * MAX_JSON_BYTES;

/// Largest zlib stream of `json_bytes` bytes of input, bytes: miniz's
/// `mz_compressBound` (miniz.c), the larger of 110 % + 128 and 5 bytes per 31 KiB
/// stored block + 128. A begin line announcing more is not from a board.
pub const fn max_zlib_bytes(json_bytes: usize) -> usize {
    // 128 + 110 % (rounded up), then 128 + 5 bytes a 31 KiB block; saturating.
    let a = json_bytes
        .saturating_add(json_bytes.div_ceil(10))
        .saturating_add(128);
    let b = json_bytes
        .saturating_add((json_bytes / (31 * 1024) + 1) * 5)
        .saturating_add(128);
    if a > b {
        a
    } else {
        b
    }
}

/// Longest base64 text of one chunk line, characters: [`CHUNK_BYTES`] encoded (RFC 4648
/// with padding). A longer one is refused before it is decoded.
const MAX_CHUNK_B64: usize = CHUNK_BYTES.div_ceil(3) * 4;

/// The zlib level PID 1 compresses with (miniz_oxide 9: the best of its levels below
/// the slow "uber" 10, which gains under 1 % on these documents).
const LEVEL: u8 = 9;

const FORMAT: &str = "zlib+base64";

/// The protocol lines (without [`crate::PREFIX`]) carrying `json`, the document of run
/// `run_id`.
pub fn encode(run_id: &str, json: &[u8]) -> Vec<String> {
    let z = miniz_oxide::deflate::compress_to_vec_zlib(json, LEVEL);
    let chunks: Vec<&[u8]> = z.chunks(CHUNK_BYTES).collect();
    let k = chunks.len();
    let mut out = Vec::with_capacity(k + 2);
    out.push(format!(
        "document begin run={run_id} format={FORMAT} json-bytes={} zlib-bytes={} lines={k} sha256={}",
        json.len(),
        z.len(),
        hex(&Sha256::digest(json))
    ));
    for (i, c) in chunks.iter().enumerate() {
        out.push(format!(
            "document {}/{k} {} {:08x}",
            i + 1,
            B64.encode(c),
            crc32fast::hash(c)
        ));
    }
    out.push(format!("document end run={run_id}"));
    out
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A document found whole in a log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub run_id: String,
    /// The JSON, exactly as the board served it.
    pub json: Vec<u8>,
    /// Log lines (1-based) of its begin and end lines.
    pub lines: (usize, usize),
}

/// Why a log does not give a document. Every variant names the log line where it went
/// wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DocumentError {
    #[error(
        "no results document in the log (no `benchboot: document begin` line){}",
        started.as_ref().map(|(run, line)| format!(
            ": run {run} started at line {line}, but the log ends before the board printed \
             its document (cut off, or the image predates the console document)"
        )).unwrap_or_default()
    )]
    None { started: Option<(String, usize)> },
    #[error("line {line}: {why}")]
    BadLine { line: usize, why: String },
    #[error(
        "line {line}: the document of run {run} (begun at line {begin}) stops after {have} \
         of its {want} lines{}",
        if *end { " (its end line came early)" } else { ": the log is cut off there" }
    )]
    Truncated {
        run: String,
        begin: usize,
        line: usize,
        have: usize,
        want: usize,
        end: bool,
    },
    #[error("line {line}: the document of run {run} {why}")]
    Corrupt {
        run: String,
        line: usize,
        why: String,
    },
}

struct Open {
    run: String,
    begin: usize,
    json_bytes: usize,
    zlib_bytes: usize,
    want: usize,
    sha256: String,
    data: Vec<u8>,
    have: usize,
    last_line: usize,
}

fn field<'a>(words: &[&'a str], key: &str) -> Option<&'a str> {
    words
        .iter()
        .find_map(|w| w.strip_prefix(key)?.strip_prefix('='))
}

fn begin(line: usize, rest: &str) -> Result<Open, DocumentError> {
    let words: Vec<&str> = rest.split_whitespace().collect();
    let bad = |why: String| DocumentError::BadLine { line, why };
    // Sizes are read as u64 whatever the reader's usize (the board's is 32 bits), so a
    // hostile size is refused by the same check and with the same words everywhere.
    let num = |key: &str| -> Result<u64, DocumentError> {
        field(&words, key)
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| bad(format!("document begin line without a number `{key}=`")))
    };
    let run = field(&words, "run")
        .ok_or_else(|| bad("document begin line without `run=`".into()))?
        .to_owned();
    match field(&words, "format") {
        Some(FORMAT) => {}
        other => {
            return Err(bad(format!(
                "document format {other:?}: this benchboot reads {FORMAT} (a newer board image?)"
            )))
        }
    }
    let (json_bytes, zlib_bytes, want) = (num("json-bytes")?, num("zlib-bytes")?, num("lines")?);
    // Every size is checked against the format's limits before anything is allocated.
    if json_bytes > MAX_JSON_BYTES as u64 {
        return Err(bad(format!(
            "document begin line with json-bytes={json_bytes}: more than any results \
             document ({MAX_JSON_BYTES} bytes at most); a corrupt or hostile log"
        )));
    }
    // At most MAX_JSON_BYTES: fits any usize.
    let json_bytes = json_bytes as usize;
    let max_zlib = max_zlib_bytes(json_bytes) as u64;
    if zlib_bytes > max_zlib || zlib_bytes.div_ceil(CHUNK_BYTES as u64) != want {
        return Err(bad(format!(
            "document begin line with impossible sizes (json-bytes={json_bytes}, \
             zlib-bytes={zlib_bytes}, lines={want}: {json_bytes} bytes compress to {max_zlib} at \
             most, in lines of {CHUNK_BYTES}); a corrupt or hostile log"
        )));
    }
    // Bounded by max_zlib_bytes(MAX_JSON_BYTES) and that over CHUNK_BYTES: fit any usize.
    let (zlib_bytes, want) = (zlib_bytes as usize, want as usize);
    let sha256 = field(&words, "sha256")
        .filter(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))
        .ok_or_else(|| bad("document begin line without a sha256= of 64 hex digits".into()))?
        .to_ascii_lowercase();
    Ok(Open {
        run,
        begin: line,
        json_bytes,
        zlib_bytes,
        want,
        sha256,
        // Grows with the chunks that arrive, never on the begin line's word alone.
        data: Vec::new(),
        have: 0,
        last_line: line,
    })
}

impl Open {
    /// One chunk line: `<i>/<k> <base64> <crc32>`.
    fn chunk(&mut self, line: usize, rest: &str) -> Result<(), DocumentError> {
        let bad = |why: String| DocumentError::BadLine { line, why };
        let mut w = rest.split_whitespace();
        let (Some(pos), Some(b64), Some(crc), None) = (w.next(), w.next(), w.next(), w.next())
        else {
            return Err(bad(
                "document line is not `<i>/<n> <base64> <crc32>`: cut or garbled (serial noise?)"
                    .into(),
            ));
        };
        let (i, k) = pos
            .split_once('/')
            .and_then(|(i, k)| Some((i.parse::<u64>().ok()?, k.parse::<u64>().ok()?)))
            .ok_or_else(|| bad(format!("document line index `{pos}` is not <i>/<n>")))?;
        if b64.len() > MAX_CHUNK_B64 {
            return Err(bad(format!(
                "document line {pos}: {} base64 characters, more than a chunk's \
                 {MAX_CHUNK_B64}: garbled (two lines run together?)",
                b64.len()
            )));
        }
        // Read as u64 (as the begin line's sizes): an index past any usize is refused here
        // as the wrong document, the same on the board as on the host.
        if k != self.want as u64 {
            return Err(bad(format!(
                "document line {i}/{k} does not belong to the document of run {} begun at line \
                 {} ({} lines)",
                self.run, self.begin, self.want
            )));
        }
        if i != self.have as u64 + 1 {
            return Err(bad(format!(
                "document line {i}/{k} where line {}/{k} was due: a line is missing or repeated \
                 (the log dropped it?)",
                self.have + 1
            )));
        }
        let bytes = B64
            .decode(b64)
            .map_err(|e| bad(format!("document line {i}/{k}: bad base64 ({e}): garbled")))?;
        let want_crc = u32::from_str_radix(crc, 16)
            .map_err(|_| bad(format!("document line {i}/{k}: CRC-32 `{crc}` is not hex")))?;
        let got = crc32fast::hash(&bytes);
        if got != want_crc {
            return Err(bad(format!(
                "document line {i}/{k} fails its CRC-32 (line says {want_crc:08x}, its bytes \
                 give {got:08x}): garbled on the way (serial noise, a kernel message in the \
                 middle of the line?)"
            )));
        }
        let full = i < k;
        if (full && bytes.len() != CHUNK_BYTES) || self.data.len() + bytes.len() > self.zlib_bytes {
            return Err(bad(format!(
                "document line {i}/{k} holds {} bytes, not what the begin line announced",
                bytes.len()
            )));
        }
        self.data.extend_from_slice(&bytes);
        // i is have + 1 <= want: fits a usize.
        self.have = i as usize;
        self.last_line = line;
        Ok(())
    }

    fn finish(self, end_line: usize) -> Result<Found, DocumentError> {
        let corrupt = |why: String| DocumentError::Corrupt {
            run: self.run.clone(),
            line: end_line,
            why,
        };
        if self.have != self.want || self.data.len() != self.zlib_bytes {
            return Err(DocumentError::Truncated {
                run: self.run.clone(),
                begin: self.begin,
                line: end_line,
                have: self.have,
                want: self.want,
                end: true,
            });
        }
        // Inflated no further than the size announced (itself at most MAX_JSON_BYTES).
        let json =
            miniz_oxide::inflate::decompress_to_vec_zlib_with_limit(&self.data, self.json_bytes)
                .map_err(|e| match e.status {
                    miniz_oxide::inflate::TINFLStatus::HasMoreOutput => corrupt(format!(
                        "inflates to more than the {} bytes the begin line said",
                        self.json_bytes
                    )),
                    status => corrupt(format!("does not inflate ({status:?})")),
                })?;
        if json.len() != self.json_bytes {
            return Err(corrupt(format!(
                "inflates to {} bytes, the begin line said {}",
                json.len(),
                self.json_bytes
            )));
        }
        let sha = hex(&Sha256::digest(&json));
        if sha != self.sha256 {
            return Err(corrupt(format!(
                "has SHA-256 {sha}, the begin line said {}",
                self.sha256
            )));
        }
        Ok(Found {
            run_id: self.run,
            json,
            lines: (self.begin, end_line),
        })
    }
}

/// Every document in `lines` ((1-based line number, text) of the log, in order; text
/// may carry anything before `benchboot: `), in log order. A document begun again
/// before its end (a reboot in the middle of printing) is dropped for the new one.
///
/// The JSON of all the documents together is at most [`MAX_TOTAL_JSON_BYTES`].
///
/// # Errors
/// The first bad line of a document, a document cut off, documents holding more than
/// [`MAX_TOTAL_JSON_BYTES`] together, or no document at all.
pub fn rebuild<'a>(
    lines: impl IntoIterator<Item = (usize, &'a str)>,
) -> Result<Vec<Found>, DocumentError> {
    rebuild_within(lines, MAX_TOTAL_JSON_BYTES)
}

/// [`rebuild`], holding at most `max_total` bytes of JSON.
fn rebuild_within<'a>(
    lines: impl IntoIterator<Item = (usize, &'a str)>,
    max_total: usize,
) -> Result<Vec<Found>, DocumentError> {
    let mut found: Vec<Found> = Vec::new();
    let mut held = 0usize;
    let mut open: Option<Open> = None;
    let mut started: Option<(String, usize)> = None;
    for (n, line) in lines {
        let Some(text) = crate::lines::protocol_text(line) else {
            continue;
        };
        if let Some(rest) = text.strip_prefix("start ") {
            if let Some(run) = field(&rest.split_whitespace().collect::<Vec<_>>(), "run") {
                started = Some((run.to_owned(), n));
            }
            continue;
        }
        let Some(rest) = text.strip_prefix("document ") else {
            continue;
        };
        if let Some(b) = rest.strip_prefix("begin ") {
            let o = begin(n, b)?;
            if held + o.json_bytes > max_total {
                return Err(DocumentError::BadLine {
                    line: n,
                    why: format!(
                        "document begin line with json-bytes={}: with the {} documents \
                         before it ({held} bytes) more than one log holds ({max_total} \
                         bytes); a corrupt or hostile log",
                        o.json_bytes,
                        found.len()
                    ),
                });
            }
            open = Some(o);
        } else if let Some(e) = rest.strip_prefix("end ") {
            let Some(o) = open.take() else {
                return Err(DocumentError::BadLine {
                    line: n,
                    why: "document end line without its begin line".into(),
                });
            };
            let words: Vec<&str> = e.split_whitespace().collect();
            if field(&words, "run") != Some(o.run.as_str()) {
                return Err(DocumentError::BadLine {
                    line: n,
                    why: format!(
                        "document end line of another run than the one begun at line {} ({})",
                        o.begin, o.run
                    ),
                });
            }
            let f = o.finish(n)?;
            held += f.json.len();
            found.push(f);
        } else if let Some(o) = open.as_mut() {
            o.chunk(n, rest)?;
        } else {
            return Err(DocumentError::BadLine {
                line: n,
                why: "document line outside a document (its begin line is missing)".into(),
            });
        }
    }
    if let Some(o) = open {
        return Err(DocumentError::Truncated {
            run: o.run,
            begin: o.begin,
            line: o.last_line,
            have: o.have,
            want: o.want,
            end: false,
        });
    }
    if found.is_empty() {
        return Err(DocumentError::None { started });
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = include_str!("../../../host/tests/data/qemu-virt-arm64-qemu.json");

    /// The log lines of `lines`, as a capture shows them (a time stamp before each).
    fn log(lines: &[String]) -> Vec<String> {
        lines
            .iter()
            .enumerate()
            .map(|(i, l)| format!("[{:>8.3}] benchboot: {l}\r", i as f64 * 0.01))
            .collect()
    }

    fn numbered(log: &[String]) -> impl Iterator<Item = (usize, &str)> {
        log.iter().enumerate().map(|(i, l)| (i + 1, l.as_str()))
    }

    #[test]
    fn round_trip_is_byte_identical_and_small() {
        let lines = encode("virt-1", DOC.as_bytes());
        let k = lines.len() - 2;
        assert!(lines[0].starts_with(&format!(
            "document begin run=virt-1 format=zlib+base64 json-bytes={} ",
            DOC.len()
        )));
        // Short lines: with `benchboot: ` and CR LF, a chunk line is under 175 bytes.
        assert!(
            lines[1..].iter().all(|l| l.len() <= 160),
            "{}",
            lines[1].len()
        );
        assert!(lines[0].len() <= 200, "{}", lines[0]);
        // The QEMU document compresses ~8x: a few hundred lines.
        assert!(
            k * CHUNK_BYTES < DOC.len() / 5,
            "{k} lines for {} bytes",
            DOC.len()
        );
        let mut l = log(&lines);
        l.insert(
            0,
            "[    0.000] benchboot: start run=virt-1 board=qemu-virt-arm64\r".into(),
        );
        l.insert(
            5,
            "[    0.500] usb 1-1: a kernel line between two chunks".into(),
        );
        let found = rebuild(numbered(&l)).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].run_id, "virt-1");
        assert_eq!(found[0].json, DOC.as_bytes());
        assert_eq!(found[0].lines, (2, l.len()));
    }

    #[test]
    fn a_bad_crc_names_its_line() {
        let lines = encode("r", DOC.as_bytes());
        let mut l = log(&lines);
        // One base64 character changed on the way.
        let i = l[3].find(" document 3/").unwrap() + 20;
        let mut b = l[3].clone().into_bytes();
        b[i] = if b[i] == b'A' { b'B' } else { b'A' };
        l[3] = String::from_utf8(b).unwrap();
        let e = rebuild(numbered(&l)).unwrap_err();
        assert!(matches!(e, DocumentError::BadLine { line: 4, .. }), "{e}");
        assert!(e.to_string().contains("CRC-32"), "{e}");
    }

    #[test]
    fn a_cut_log_says_how_far_it_got() {
        let lines = encode("r", DOC.as_bytes());
        let mut l = log(&lines);
        l.truncate(10);
        let e = rebuild(numbered(&l)).unwrap_err();
        assert_eq!(
            e,
            DocumentError::Truncated {
                run: "r".into(),
                begin: 1,
                line: 10,
                have: 9,
                want: lines.len() - 2,
                end: false
            }
        );
        assert!(
            e.to_string().starts_with(
                "line 10: the document of run r (begun at line 1) stops after 9 of its"
            ),
            "{e}"
        );
    }

    #[test]
    fn a_missing_line_and_a_stray_line() {
        let lines = encode("r", DOC.as_bytes());
        let mut l = log(&lines);
        l.remove(5);
        let e = rebuild(numbered(&l)).unwrap_err();
        assert!(e.to_string().starts_with("line 6: document line 6/"), "{e}");
        assert!(e.to_string().contains("where line 5/"), "{e}");
        let e = rebuild([(7, "benchboot: document 1/3 AAAA 00000000")]).unwrap_err();
        assert!(e.to_string().contains("outside a document"), "{e}");
    }

    #[test]
    fn no_document_says_whether_a_run_started() {
        let e = rebuild([(1, "hello"), (2, "benchboot: start run=r9 board=b")]).unwrap_err();
        assert!(e.to_string().contains("run r9 started at line 2"), "{e}");
        let e = rebuild([(1, "hello")]).unwrap_err();
        assert_eq!(e, DocumentError::None { started: None });
    }

    #[test]
    fn two_runs_are_two_documents_and_a_restarted_one_counts_once() {
        let a = encode("a", b"{\"x\":1}");
        let b = encode("b", DOC.as_bytes());
        let mut l = log(&b[..3]); // b begun, then the board reset
        l.extend(log(&a));
        l.extend(log(&b));
        let found = rebuild(numbered(&l)).unwrap();
        let ids: Vec<&str> = found.iter().map(|f| f.run_id.as_str()).collect();
        assert_eq!(ids, ["a", "b"]);
    }

    #[test]
    fn sizes_and_hash_are_checked() {
        let mut lines = encode("r", b"{}");
        lines[0] = lines[0].replace("json-bytes=2", "json-bytes=3");
        let e = rebuild(numbered(&log(&lines))).unwrap_err();
        assert!(
            e.to_string()
                .contains("inflates to 2 bytes, the begin line said 3"),
            "{e}"
        );
        let mut lines = encode("r", b"{}");
        let at = lines[0].find("sha256=").unwrap() + "sha256=".len();
        let flipped = if &lines[0][at..=at] == "0" { "1" } else { "0" };
        lines[0].replace_range(at..=at, flipped);
        let e = rebuild(numbered(&log(&lines))).unwrap_err();
        assert!(e.to_string().contains("has SHA-256"), "{e}");
    }

    const SHA: &str = "0000000000000000000000000000000000000000000000000000000000000000";

    fn begin_line(json: &str, zlib: &str, lines: &str) -> String {
        format!(
            "[ 1.0] benchboot: document begin run=r format=zlib+base64 json-bytes={json} \
             zlib-bytes={zlib} lines={lines} sha256={SHA}"
        )
    }

    /// A hostile begin line used to abort the host (`zlib-bytes` taken as a capacity:
    /// capacity overflow, or an allocation of a terabyte); every size is bounded first.
    #[test]
    fn absurd_begin_sizes_are_refused_before_allocating() {
        let cases = [
            // 2^64 - 1 bytes in 2^64 / 96 lines: the numbers agree with each other.
            (
                begin_line("10", "18446744073709551615", "192153584101141163"),
                "line 3: document begin line with impossible sizes (json-bytes=10, \
                 zlib-bytes=18446744073709551615, lines=192153584101141163: 10 bytes \
                 compress to 143 at most, in lines of 96); a corrupt or hostile log",
            ),
            (
                begin_line("67108864", "1000000000000", "10416666667"),
                "line 3: document begin line with impossible sizes (json-bytes=67108864, \
                 zlib-bytes=1000000000000, lines=10416666667: 67108864 bytes compress to \
                 73819879 at most, in lines of 96); a corrupt or hostile log",
            ),
            (
                begin_line("18446744073709551615", "96", "1"),
                "line 3: document begin line with json-bytes=18446744073709551615: more \
                 than any results document (67108864 bytes at most); a corrupt or hostile log",
            ),
            (
                begin_line("10", "96", "18446744073709551615"),
                "line 3: document begin line with impossible sizes (json-bytes=10, \
                 zlib-bytes=96, lines=18446744073709551615: 10 bytes compress to 143 at \
                 most, in lines of 96); a corrupt or hostile log",
            ),
            (
                begin_line("10", "184467440737095516150", "1"),
                "line 3: document begin line without a number `zlib-bytes=`",
            ),
        ];
        for (line, want) in cases {
            let e = rebuild([(1, "boot"), (2, "x"), (3, line.as_str())]).unwrap_err();
            assert_eq!(e.to_string(), want);
        }
        // The bound is the compressor's own: a real document's stream stays within it.
        let lines = encode("r", DOC.as_bytes());
        assert_eq!(
            rebuild(numbered(&log(&lines))).unwrap()[0].json,
            DOC.as_bytes()
        );
        assert_eq!(max_zlib_bytes(0), 133);
        assert_eq!(max_zlib_bytes(usize::MAX), usize::MAX);
    }

    #[test]
    fn a_huge_or_absurd_chunk_line_is_refused_before_decoding() {
        let lines = encode("r", DOC.as_bytes());
        let mut l = log(&lines);
        l[2] = format!(
            "benchboot: document 2/{} {} 00000000",
            lines.len() - 2,
            "QUFB".repeat(1 << 20)
        );
        let e = rebuild(numbered(&l)).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "line 3: document line 2/{}: 4194304 base64 characters, more than a chunk's \
                 128: garbled (two lines run together?)",
                lines.len() - 2
            )
        );
        l[2] = "benchboot: document 18446744073709551615/18446744073709551615 AAAA 00000000".into();
        let e = rebuild(numbered(&l)).unwrap_err().to_string();
        assert!(e.starts_with("line 3: document line 18446744073709551615/18446744073709551615 does not belong to the document of run r begun at line 1"), "{e}");
        l[2] = "benchboot: document 2/99999999999999999999999 AAAA 00000000".into();
        let e = rebuild(numbered(&l)).unwrap_err().to_string();
        assert_eq!(
            e,
            "line 3: document line index `2/99999999999999999999999` is not <i>/<n>"
        );
    }

    /// A begin line that understates the JSON: inflating stops at its word.
    #[test]
    fn inflating_stops_at_the_announced_size() {
        // 10,008 bytes that deflate to a few dozen: within the bound of 1,000.
        let json = format!("{{\"x\":\"{}\"}}", "a".repeat(10_000));
        let mut lines = encode("r", json.as_bytes());
        lines[0] = lines[0].replace("json-bytes=10008", "json-bytes=1000");
        let e = rebuild(numbered(&log(&lines))).unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "line {}: the document of run r inflates to more than the 1000 bytes the \
                 begin line said",
                lines.len()
            )
        );
    }

    #[test]
    fn the_documents_of_one_log_are_bounded_together() {
        let a = encode("a", DOC.as_bytes());
        let b = encode("b", DOC.as_bytes());
        let mut l = log(&a);
        l.extend(log(&b));
        assert_eq!(
            rebuild_within(numbered(&l), 2 * DOC.len()).unwrap().len(),
            2
        );
        let e = rebuild_within(numbered(&l), 2 * DOC.len() - 1).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "line {}: document begin line with json-bytes={n}: with the 1 documents \
                 before it ({n} bytes) more than one log holds ({} bytes); a corrupt or \
                 hostile log",
                a.len() + 1,
                2 * DOC.len() - 1,
                n = DOC.len()
            )
        );
        assert_eq!(MAX_TOTAL_JSON_BYTES, 256 << 20);
    }
}
