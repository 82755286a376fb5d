//! `benchboot collect --from-log FILE` and `--from-lava URL|FILE`: a run rebuilt from a
//! board's console, for a board no host can fetch from (a LAVA farm, a serial cable).
//! PID 1 prints the whole results document in checksummed chunks
//! (`benchboot_console::document`); every chunk, the sizes and the SHA-256 are checked
//! before anything is stored, and what LAVA stored of the run (its figures and
//! verdicts) is checked against the document (`benchboot_console::lava::check`).

use std::path::Path;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use benchboot_console::document::{self, Found};
use benchboot_console::lava::{self, Checked, LavaResult};
use benchboot_results::text::escape;
use benchboot_results::RunResults;

use crate::console_log::{self, ConsoleLog};
use crate::got::Got;

/// Largest log read, bytes: a LAVA job log of a long plan is a few MiB.
pub const MAX_LOG_BYTES: u64 = 256 << 20;

/// A run rebuilt from a log, with what LAVA stored checked against it.
#[derive(Debug, Clone)]
pub struct FromLog {
    pub got: Got,
    /// `None`: the log holds no LAVA results (a plain capture).
    pub lava: Option<Checked>,
}

/// Rebuilds the run from the log file `path` (a serial capture or a LAVA job log);
/// `run` picks one run of several.
///
/// # Errors
/// The file unreadable or too big, no document, a bad line (named), several runs and no
/// `run`, or a document this benchboot cannot read.
pub fn from_log(path: &Path, run: Option<&str>) -> Result<FromLog> {
    let file = path.display().to_string();
    let text = read_log(path)?;
    let log = console_log::parse(&file, &text)?;
    let lava = log.lava.clone();
    rebuild(&file, &log, run, lava.as_deref())
}

fn read_log(path: &Path) -> Result<String> {
    let bytes = read_at_most(path, MAX_LOG_BYTES)?;
    // A serial capture carries stray non-UTF-8 bytes (line noise at power-on).
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The bytes of the log file `path`, at most `limit`, through the one reader of named
/// files: a device or a pipe (`--from-log /dev/ttyUSB0`, `/dev/zero`, a FIFO) is
/// refused unread (it may never end), a larger file by its size.
fn read_at_most(path: &Path, limit: u64) -> Result<Vec<u8>> {
    Ok(benchboot_input::read(
        path,
        "a console log of a run",
        limit,
    )?)
}

/// The document of `log` (`run`, or the only one), with `lava` checked against it.
fn rebuild(
    source: &str,
    log: &ConsoleLog,
    run: Option<&str>,
    lava: Option<&[LavaResult]>,
) -> Result<FromLog> {
    let found = document::rebuild(log.lines.iter().map(|(n, l)| (*n, l.as_str())))
        .with_context(|| source.to_owned())?;
    let doc = pick(source, found, run)?;
    let text = String::from_utf8(doc.json)
        .with_context(|| format!("{source}: the document of run {} is not UTF-8", doc.run_id))?;
    let results = RunResults::from_json(&text).with_context(|| {
        format!(
            "{source}: lines {}-{}: the document of run {}",
            doc.lines.0, doc.lines.1, doc.run_id
        )
    })?;
    // The begin line names the run the chunks belong to; the document must be that run,
    // or a log could store (and replace) another run than the one picked with --run.
    if results.run_id != doc.run_id {
        bail!(
            "{source}: lines {}-{}: the begin line says run {} but its document is run {}: \
             the log is damaged or not PID 1's; nothing was stored",
            doc.lines.0,
            doc.lines.1,
            escape(&doc.run_id),
            escape(&results.run_id)
        );
    }
    let checked = lava.map(|l| lava::check(&results, l));
    Ok(FromLog {
        got: Got {
            results,
            text,
            source: format!("{source} lines {}-{}", doc.lines.0, doc.lines.1),
            notes: Vec::new(),
        },
        lava: checked,
    })
}

/// The one document to store: `run`'s, or the only one.
fn pick(source: &str, found: Vec<Found>, run: Option<&str>) -> Result<Found> {
    let list = || {
        found
            .iter()
            .map(|f| format!("{} (lines {}-{})", f.run_id, f.lines.0, f.lines.1))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match run {
        Some(id) => {
            let names = list();
            found
                .into_iter()
                .find(|f| f.run_id == id)
                .with_context(|| format!("{source}: no run {id} in the log; it holds {names}"))
        }
        None if found.len() == 1 => Ok(found.into_iter().next().unwrap_or_else(|| unreachable!())),
        None => bail!(
            "{source}: {} runs in one log: {}; pick one with --run ID",
            found.len(),
            list()
        ),
    }
}

/// `--from-lava`: a LAVA job's URL (`https://lava.example/scheduler/job/123`, or any
/// `.../api/v0.2/jobs/123/...`) or a downloaded job log. From a server: the log
/// (`/api/v0.2/jobs/<id>/logs/`) and the results in LAVA's YAML export
/// (`/api/v0.2/jobs/<id>/yaml/`; `/tests/` is the same list as paged JSON), with
/// `token` as `Authorization: Token <token>` when the job is not public.
///
/// # Errors
/// As [`from_log`]; a URL that names no job; the server's refusal or silence.
pub fn from_lava(
    src: &str,
    run: Option<&str>,
    token: Option<&str>,
    timeout: Duration,
) -> Result<FromLog> {
    if !(src.starts_with("http://") || src.starts_with("https://")) {
        let f = from_log(Path::new(src), run)?;
        if f.lava.is_none() {
            bail!(
                "{src}: no LAVA job log (its lines are no `{{\"dt\": ..., \"lvl\": ...}}` \
                 records): for a plain console capture use --from-log"
            );
        }
        return Ok(f);
    }
    let (base, id) = job_url(src)?;
    let get = |path: &str| -> Result<String> {
        let url = format!("{base}/api/v0.2/jobs/{id}/{path}/");
        // No redirect followed, the answer refused past the bound (never cut silently).
        let bytes = crate::http_get::get(&crate::http_get::Get {
            url: &url,
            shown: &url,
            timeout,
            at: None,
            token,
            max_bytes: MAX_LOG_BYTES,
            what: "a benchboot run's job log",
            hint: ": is the server's address right?",
        })
        .map_err(|e| {
            let s = format!("{e:#}");
            if [" 401 ", " 403 ", " 404 "].iter().any(|c| s.contains(c)) {
                anyhow::anyhow!(
                    "{s}: is the job id right, and the job public (else give --token, a LAVA \
                     API token of a user who can see it)?"
                )
            } else {
                e
            }
        })?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    };
    let log_text = get("logs")?;
    let source = format!("{base}/scheduler/job/{id}");
    let log = console_log::parse(&source, &log_text)?;
    let export = get("yaml")?;
    let results = console_log::parse_results_export(&format!("{source} (yaml)"), &export)?;
    rebuild(&source, &log, run, Some(&results))
}

/// The server's base URL and the job id in a LAVA job URL.
fn job_url(url: &str) -> Result<(String, u64)> {
    let bad = || {
        anyhow::anyhow!(
            "{url}: not a LAVA job URL; give https://HOST/scheduler/job/ID or \
             https://HOST/api/v0.2/jobs/ID/"
        )
    };
    for marker in ["/scheduler/job/", "/api/v0.2/jobs/"] {
        if let Some((base, rest)) = url.split_once(marker) {
            let id = rest
                .split(['/', '?', '#'])
                .next()
                .and_then(|s| s.parse().ok())
                .ok_or_else(bad)?;
            return Ok((base.trim_end_matches('/').to_owned(), id));
        }
    }
    Err(bad())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_urls() {
        assert_eq!(
            job_url("https://lava.example/scheduler/job/123").unwrap(),
            ("https://lava.example".to_owned(), 123)
        );
        assert_eq!(
            job_url("http://127.0.0.1:8000/lava/api/v0.2/jobs/7/logs/?start=0").unwrap(),
            ("http://127.0.0.1:8000/lava".to_owned(), 7)
        );
        let e = job_url("https://lava.example/results/123")
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a LAVA job URL"), "{e}");
        assert!(job_url("https://lava.example/scheduler/job/x1").is_err());
    }

    /// `collect --from-log` on a log whose begin line announces absurd sizes: it
    /// aborted (exit 134, an allocation of 10^12 bytes; exit 101, capacity overflow).
    #[test]
    fn a_hostile_begin_line_is_an_error_naming_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let sha = "0".repeat(64);
        for (zlib, lines) in [
            ("18446744073709551615", "192153584101141163"),
            ("1000000000000", "10416666667"),
        ] {
            let path = dir.path().join("hostile.log");
            std::fs::write(
                &path,
                format!(
                    "[ 0.1] booting\n[ 9.9] benchboot: document begin run=x \
                     format=zlib+base64 json-bytes=10 zlib-bytes={zlib} lines={lines} \
                     sha256={sha}\n"
                ),
            )
            .unwrap();
            let e = format!("{:#}", from_log(&path, None).unwrap_err());
            assert_eq!(
                e,
                format!(
                    "{}: line 2: document begin line with impossible sizes (json-bytes=10, \
                     zlib-bytes={zlib}, lines={lines}: 10 bytes compress to 143 at most, in \
                     lines of 96); a corrupt or hostile log",
                    path.display()
                )
            );
        }
    }

    /// A device has no size: it was read whole (`--from-log /dev/zero` never ended),
    /// then 256 MiB of it; a FIFO with no writer waited for ever. Both are refused
    /// unread. (Unix only: Windows has no such device; the size check below runs
    /// everywhere.)
    #[cfg(unix)]
    #[test]
    fn a_log_without_a_size_is_refused_unread() {
        let e = format!(
            "{:#}",
            read_at_most(Path::new("/dev/zero"), 1 << 20).unwrap_err()
        );
        assert_eq!(
            e,
            "/dev/zero: a character device, not a regular file: a console log of a run is \
             read only from a file (a device or a pipe may never end); save it to a file and \
             give that"
        );
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("console.log");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        let e = format!("{:#}", from_log(&fifo, None).unwrap_err());
        assert!(
            e.contains("console.log: a FIFO (named pipe), not a regular file"),
            "{e}"
        );
    }

    #[test]
    fn a_log_over_the_bound_is_refused_by_its_size() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("two-mib.log");
        std::fs::write(&f, vec![b'x'; 2 << 20]).unwrap();
        let e = format!("{:#}", read_at_most(&f, 1 << 20).unwrap_err());
        assert!(e.ends_with(": 2 MiB is more than a console log of a run has (1 MiB at most): check that it is a console log of a run"), "{e}");
        assert_eq!(read_at_most(&f, 2 << 20).unwrap().len(), 2 << 20);
    }
}
