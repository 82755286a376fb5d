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
    let num = |key: &str| -> Result<usize, DocumentError> {
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
    if json_bytes > MAX_JSON_BYTES || zlib_bytes.div_ceil(CHUNK_BYTES) != want {
        return Err(bad(format!(
            "document begin line with impossible sizes (json-bytes={json_bytes}, \
             zlib-bytes={zlib_bytes}, lines={want})"
        )));
    }
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
        data: Vec::with_capacity(zlib_bytes),
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
            .and_then(|(i, k)| Some((i.parse::<usize>().ok()?, k.parse::<usize>().ok()?)))
            .ok_or_else(|| bad(format!("document line index `{pos}` is not <i>/<n>")))?;
        if k != self.want {
            return Err(bad(format!(
                "document line {i}/{k} does not belong to the document of run {} begun at line \
                 {} ({} lines)",
                self.run, self.begin, self.want
            )));
        }
        if i != self.have + 1 {
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
        self.have = i;
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
        let json =
            miniz_oxide::inflate::decompress_to_vec_zlib_with_limit(&self.data, MAX_JSON_BYTES)
                .map_err(|e| corrupt(format!("does not inflate ({:?})", e.status)))?;
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
/// # Errors
/// The first bad line of a document, a document cut off, or no document at all.
pub fn rebuild<'a>(
    lines: impl IntoIterator<Item = (usize, &'a str)>,
) -> Result<Vec<Found>, DocumentError> {
    let mut found = Vec::new();
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
            open = Some(begin(n, b)?);
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
            found.push(o.finish(n)?);
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
}
