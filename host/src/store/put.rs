//! Storing one run ([`Store::put`]): under the store's lock, which copy stays (the same
//! run: complete beats partial, then the later write; another run with that id: both),
//! the document written, then its row.

use anyhow::{anyhow, Context, Result};
use benchboot_results::name::SafeName;
use benchboot_results::RunResults;
use rusqlite::TransactionBehavior;

use super::rows::{self, insert, row_of};
use super::same_run::{self, MAX_SAME_ID};
use super::{lock, recover, run_file_name, Mode, Outcome, RunRow, Store, Stored};

/// Where a new document goes, and what it does to the stored ones.
enum Plan {
    /// The stored copy of the same run stays.
    Keep(Box<RunRow>),
    /// Written under this name: the same run's, or a free one.
    Write(SafeName, Outcome),
}

impl Store {
    /// Stores a run: its JSON `text` saved atomically (temp file, fsync, rename) as
    /// `<store>/runs/<name>.json`, then its row, under the store's lock ([`lock`]).
    ///
    /// A stored document with the same run id is replaced only by a copy of the same run
    /// ([`same_run::RunIdentity::differences`]: same board, boot card and start) that ranks higher:
    /// complete beats partial, then a later `system.written_ns` (the board writes the
    /// file again after each step) beats an earlier one. A document of another run with
    /// that id is kept beside it as `<run id>.<n>` ([`Outcome::KeptBoth`]), and so is
    /// one whose plain name is taken by a file the index does not list: nothing in
    /// `runs/` is overwritten but the same run's copy. `collected_at` is unix time in
    /// seconds; `source` is where the document came from.
    ///
    /// # Errors
    /// A run id that cannot be a file name ([`super::StoreError::BadRunId`]); another
    /// benchboot holds the lock past [`lock::LOCK_WAIT`]; [`MAX_SAME_ID`] documents
    /// with this run id are stored already; I/O and database errors (with the path).
    /// Each says whether the document was stored: when only its row failed, the
    /// document is in `runs/` and `benchboot runs --reindex` indexes it.
    pub fn put(
        &mut self,
        results: &RunResults,
        text: &str,
        source: &str,
        collected_at: i64,
    ) -> Result<Stored> {
        let id = &results.run_id;
        let name = run_file_name(id)?;
        let not_stored = || format!("run {id} was not stored");
        let locked = lock::acquire(&self.dir, lock::Holder::Store).with_context(not_stored)?;
        // Under the lock, the database as it is now: a reindex that ran since this
        // store was opened replaced the file an older connection still points to.
        let fresh = Self::connect(&self.dir, Mode::Write).with_context(not_stored)?;
        self.conn = fresh.conn;
        self.notes.extend(fresh.notes);
        let db = self.db_path();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| recover::read_only_sqlite(&self.dir, e))
            .with_context(|| format!("locking {}", db.display()))?;
        let new = row_of(&self.dir, &name, results, source, collected_at);
        let mut beside = Vec::new();
        let plan = plan(&tx, &self.dir, &new, name, &mut beside).with_context(not_stored)?;
        let (name, outcome) = match plan {
            Plan::Keep(stored) => {
                return Ok(Stored {
                    outcome: Outcome::KeptStored,
                    row: *stored,
                    beside,
                })
            }
            Plan::Write(name, outcome) => (name, outcome),
        };
        let row = row_of(&self.dir, &name, results, source, collected_at);
        crate::atomic_file::write(&row.json_path, text).with_context(not_stored)?;
        // The document is in place: from here on, say so.
        insert(&tx, &row).and_then(|_| tx.commit()).map_err(|e| {
            anyhow!(
                "run {id}: its document was stored as {}, but the index {} was not \
                     updated ({e}): `benchboot runs --reindex --store {}` indexes it",
                row.json_path.display(),
                db.display(),
                self.dir.display()
            )
        })?;
        locked.release();
        Ok(Stored {
            outcome,
            row,
            beside,
        })
    }
}

/// What to do with `new` (named by its run id, `name`): the stored rows with its run
/// id are compared with it; `beside` gets a line for each document kept beside it.
fn plan(
    conn: &rusqlite::Connection,
    dir: &std::path::Path,
    new: &RunRow,
    name: SafeName,
    beside: &mut Vec<String>,
) -> Result<Plan> {
    let stored = rows::with_run_id(conn, dir, &new.run_id, MAX_SAME_ID)?;
    let me = new.identity();
    for s in &stored {
        let differ = me.differences(&s.identity());
        if differ.is_empty() {
            beside.clear();
            let ranks_higher = (s.complete, s.written_ns) > (new.complete, new.written_ns);
            if ranks_higher {
                return Ok(Plan::Keep(Box::new(s.clone())));
            }
            let same = run_file_name(&s.stored_as)?;
            return Ok(Plan::Write(same, Outcome::Updated));
        }
        beside.push(format!("{}: {}", s.stored_as, differ.join(", ")));
    }
    let taken = |n: &SafeName| -> Result<bool> {
        let file = n.path_in(&dir.join(super::RUNS_DIR), "json");
        Ok(rows::has_name(conn, n.as_str())? || std::fs::symlink_metadata(file).is_ok())
    };
    if !taken(&name)? {
        return Ok(Plan::Write(name, Outcome::Inserted));
    }
    if stored.iter().all(|s| s.stored_as != name.as_str()) {
        beside.push(format!(
            "{}: a file the index does not list (`benchboot runs --reindex` lists it)",
            rows::shown_in(dir, &name.path_in(&dir.join(super::RUNS_DIR), "json")).display()
        ));
    }
    for n in 2..=MAX_SAME_ID {
        let copy = same_run::copy_name(&new.run_id, n).map_err(|e| {
            anyhow!("another run with this id is stored, and no second name can be made: {e}")
        })?;
        if !taken(&copy)? {
            return Ok(Plan::Write(copy, Outcome::KeptBoth));
        }
    }
    Err(anyhow!(
        "{MAX_SAME_ID} documents with this run id are stored already ({}): a run id holds \
         the board's boot id, so these are copies or forgeries; remove those you do not want \
         from {} and run `benchboot runs --reindex`",
        beside.join("; "),
        dir.join(super::RUNS_DIR).display()
    ))
}
