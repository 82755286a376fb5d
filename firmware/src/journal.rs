//! PID 1's end of the results journal (crates/journal): the card's journal partition
//! (p4, the plan's `results.journal`) opened once with `O_DIRECT`, and every save
//! appended there (one write of whole 4 KiB blocks, then `fdatasync`) before the FAT
//! copy is written. A journal that cannot be opened or written costs the journal copy,
//! never the run: each failure is an event, the FAT copy goes on.

use std::fs::File;
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use benchboot_journal::{Appended, Device, Writer};
use benchboot_plan::Plan;
use benchboot_results::{RunResults, Severity};
use benchboot_storage::Bounce;

use crate::wait::wait_for;

/// The journal partition, opened `O_DIRECT` (no page cache between a save and the
/// card), I/O through one aligned buffer.
pub struct Partition {
    file: File,
    len: u64,
    bounce: Bounce,
}

impl Partition {
    /// Opens `path` read-write with `O_DIRECT`; its length by seeking to its end.
    ///
    /// # Errors
    /// open(2)'s, lseek(2)'s.
    pub fn open(path: &Path) -> std::io::Result<Partition> {
        let mut file = benchboot_storage::os::open_direct(
            std::fs::OpenOptions::new().read(true).write(true),
            path,
        )?;
        let len = std::io::Seek::seek(&mut file, std::io::SeekFrom::End(0))?;
        Ok(Partition {
            file,
            len,
            bounce: Bounce::default(),
        })
    }
}

impl Device for Partition {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        self.bounce.read_at(&self.file, offset, buf)
    }

    fn write_at(&mut self, offset: u64, buf: &[u8]) -> std::io::Result<()> {
        self.bounce.write_at(&self.file, offset, buf)
    }

    fn sync(&mut self) -> std::io::Result<()> {
        self.file.sync_data()
    }
}

struct State {
    writer: Writer<Partition>,
    /// The newest record's document as the boot found it (the previous run's last
    /// save, when its FAT copy lags), until [`take_newest`].
    newest: Option<Vec<u8>>,
    /// The last append's error, so a journal that keeps failing is one event, not one
    /// per save.
    last_error: Option<String>,
}

static JOURNAL: Mutex<Option<State>> = Mutex::new(None);

/// Opens the plan's journal (waiting for its device as for the results partition) and
/// records what it holds as the `journal` event: records, runs, the newest, torn ones.
/// No journal in the plan: nothing (an image built without one). Failures are an
/// Error event `journal.open`; saves then go to the FAT copy only.
pub fn open(plan: &Plan, results: &mut RunResults) {
    let Some(path) = plan.results.journal.as_deref() else {
        return;
    };
    let dev = Path::new(path);
    if !wait_for(dev, Duration::from_millis(plan.storage.device_wait_ms)) {
        results.event(
            "journal.open",
            Severity::Error,
            format!("{path} never appeared: saves go to the FAT copy only"),
        );
        return;
    }
    let opened = Partition::open(dev).and_then(Writer::open);
    match opened {
        Ok((writer, scan, ring)) => {
            let runs = scan.newest_per_run();
            let newest = scan.newest().map_or("none".into(), |e| {
                format!("{} (sequence {})", e.header.run_id, e.header.seq)
            });
            results.event(
                "journal",
                Severity::Info,
                format!(
                    "{path}: {} bytes, {} record(s) of {} run(s), newest {newest}; {} torn \
                     record(s) skipped",
                    scan.ring_len,
                    scan.records.len(),
                    runs.len(),
                    scan.torn.len()
                ),
            );
            let newest = scan
                .newest()
                .and_then(|e| benchboot_journal::document(&ring, e).ok());
            if let Ok(mut g) = JOURNAL.lock() {
                *g = Some(State {
                    writer,
                    newest,
                    last_error: None,
                });
            }
        }
        Err(e) => results.event(
            "journal.open",
            Severity::Error,
            format!("{path}: {e}: saves go to the FAT copy only"),
        ),
    }
}

/// The journal's newest document as this boot found it (once; `None` after, or with no
/// journal).
pub fn take_newest() -> Option<Vec<u8>> {
    JOURNAL.try_lock().ok()?.as_mut()?.newest.take()
}

/// The previous run's last save, from its FAT copy (`results.json` as this boot found
/// it) and the journal's newest record: the journal's when it is the same run saved no
/// earlier (its `written_ns`: PID 1 appends to the journal first, so it is never behind
/// unless an append failed), or when the FAT copy is missing or no results document;
/// else the FAT copy (also when the journal's newest is another run: the FAT copy is
/// then a run whose journal failed). Pure.
pub fn previous_document(fat: Option<Vec<u8>>, journal: Option<Vec<u8>>) -> Option<Vec<u8>> {
    let parse = |d: &[u8]| {
        std::str::from_utf8(d)
            .ok()
            .and_then(|t| RunResults::from_json(t).ok())
    };
    match (fat, journal) {
        (None, j) => j,
        (f, None) => f,
        (Some(f), Some(j)) => match (parse(&f), parse(&j)) {
            (None, Some(_)) => Some(j),
            (Some(fr), Some(jr))
                if fr.run_id == jr.run_id && jr.system.written_ns >= fr.system.written_ns =>
            {
                Some(j)
            }
            _ => Some(f),
        },
    }
}

/// What [`append`] did.
pub enum Saved {
    /// No journal open.
    Absent,
    Written(Appended),
    /// The append failed; `new` when this error differs from the last one (record it).
    Failed {
        error: String,
        new: bool,
    },
}

/// Appends `json`, the document of run `run_id`, as the journal's newest record.
/// `try_lock`: PID 1's panic hook saves too, and a panic inside an append holds the
/// lock (panic = "abort": nothing unwinds); that save goes to the FAT copy only.
pub fn append(run_id: &str, json: &[u8]) -> Saved {
    let Ok(mut g) = JOURNAL.try_lock() else {
        return Saved::Absent;
    };
    let Some(state) = g.as_mut() else {
        return Saved::Absent;
    };
    match state.writer.append(run_id, json) {
        Ok(a) => {
            state.last_error = None;
            Saved::Written(a)
        }
        Err(e) => {
            let error = e.to_string();
            let new = state.last_error.as_deref() != Some(error.as_str());
            state.last_error = Some(error.clone());
            Saved::Failed { error, new }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_loop::Loop;

    fn doc(run: &str, written_ns: u64) -> Vec<u8> {
        let mut r = RunResults::new(
            run.into(),
            Plan::example(),
            benchboot_results::SystemInfo::default(),
        );
        r.system.written_ns = written_ns;
        r.to_json().into_bytes()
    }

    #[test]
    fn the_previous_run_is_the_newer_copy() {
        let (a1, a2, b1) = (doc("r-a", 1), doc("r-a", 2), doc("r-b", 9));
        let pick =
            |f: Option<&Vec<u8>>, j: Option<&Vec<u8>>| previous_document(f.cloned(), j.cloned());
        // A cut between the journal's append and its FAT copy: the journal's.
        assert_eq!(pick(Some(&a1), Some(&a2)), Some(a2.clone()));
        // The journal failed later in the run: the FAT copy.
        assert_eq!(pick(Some(&a2), Some(&a1)), Some(a2.clone()));
        // The FAT copy gone or damaged: the journal's.
        assert_eq!(pick(None, Some(&a1)), Some(a1.clone()));
        assert_eq!(pick(Some(&b"\0\0".to_vec()), Some(&a1)), Some(a1.clone()));
        // Another run in the journal: the FAT copy is a run the journal never saw.
        assert_eq!(pick(Some(&a1), Some(&b1)), Some(a1.clone()));
        assert_eq!(pick(Some(&a1), None), Some(a1.clone()));
        assert_eq!(pick(None, None), None);
    }

    /// The journal over a real block device (a loop device: `O_DIRECT` and `fdatasync`
    /// as on the card): appends, reopens after the newest, reads back every document.
    #[test]
    fn saves_on_a_block_device_read_back_after_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("p4.img");
        std::fs::File::create(&file)
            .unwrap()
            .set_len(4 << 20)
            .unwrap();
        let dev = Loop::attach(&file);
        let (mut w, scan, _) = Writer::open(Partition::open(&dev.0).unwrap()).unwrap();
        assert_eq!((scan.ring_len, scan.records.len()), (4 << 20, 0));
        // A document larger than the bounce buffer's first size takes a bigger one.
        let big: Vec<u8> = (0..300_000u32).flat_map(|i| i.to_le_bytes()).collect();
        let docs = [b"{\"step\":1}".to_vec(), big, b"{\"step\":3}".to_vec()];
        for d in &docs {
            w.append("rpi-zero-w-0a1b", d).unwrap();
        }
        drop(w);
        let (mut w, scan, ring) = Writer::open(Partition::open(&dev.0).unwrap()).unwrap();
        assert_eq!(scan.records.len(), 3);
        for (e, d) in scan.records.iter().zip(&docs) {
            assert_eq!(benchboot_journal::document(&ring, e).unwrap(), *d);
        }
        let a = w.append("rpi-zero-w-0a1b", b"{\"step\":4}").unwrap();
        assert_eq!((a.offset, a.seq), (scan.records[2].end(), 4));
        // What the card holds, read past the page cache: the file under the loop device.
        let bytes = std::fs::read(&file).unwrap();
        let s = benchboot_journal::scan(&bytes);
        let newest = s.newest().unwrap();
        assert_eq!(
            benchboot_journal::document(&bytes, newest).unwrap(),
            b"{\"step\":4}"
        );
    }
}
