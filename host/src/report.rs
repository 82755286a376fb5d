//! `benchboot report RUN`: one run's tables (the seeds' storage tables, device reads,
//! IOPS + A1, network), context and warnings, as terminal tables, Markdown, tidy CSV
//! or JSON, and plots; with a power trace, the energy of each step
//! ([`crate::power::energy`]). A QEMU run is marked EMULATED in every one of them.

pub mod other_figures;
pub mod summary;
pub mod tidy;

use std::path::{Path, PathBuf};

use anyhow::{bail, Context as _, Result};
use benchboot_results::RunResults;

use crate::power::energy::Energy;
use crate::render::document_full;
use crate::results_file::load_path;

/// Output format of `report` and `compare`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    /// Terminal tables.
    #[default]
    Table,
    /// GitHub-flavoured Markdown.
    Markdown,
    /// Tidy CSV (report: one row per measurement; compare: per figure and entry).
    Csv,
    /// The summaries as JSON, for scripts.
    Json,
    /// One self-contained HTML page, plots inline as SVG (`-o FILE`; see
    /// [`crate::html`]).
    Html,
}

/// `benchboot report` arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct ReportArgs {
    /// The run: a results JSON file (as saved by `benchboot fetch` or
    /// `benchboot storage --out`), or a run id (or its start) from `benchboot runs`.
    pub run: String,
    /// The results store folder. Default: $BENCHBOOT_STORE, else
    /// $XDG_DATA_HOME/benchboot, else ~/.local/share/benchboot.
    #[arg(long, value_name = "DIR")]
    pub store: Option<PathBuf>,
    /// The power trace recorded during the run (JSON, as `benchboot power record` writes
    /// it): adds the energy section. Default: the trace `benchboot power import` stored
    /// with the run, else the board's own sensor's samples, if any.
    #[arg(long, value_name = "TRACE.json")]
    pub power: Option<PathBuf>,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// How `report` and `compare` print, and where they draw plots.
#[derive(Debug, Clone, clap::Args)]
pub struct OutputArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Same as `--format json`.
    #[arg(long)]
    pub json: bool,
    /// Also draw plots (PNG and SVG) into this folder (created if missing).
    #[arg(long, value_name = "DIR")]
    pub plots: Option<PathBuf>,
    /// Write the output to FILE (whole or not at all: a temp file renamed over it)
    /// instead of printing it.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub out: Option<PathBuf>,
}

impl OutputArgs {
    /// `--json` wins over `--format`.
    pub fn format(&self) -> Format {
        if self.json {
            Format::Json
        } else {
            self.format
        }
    }

    /// Prints `text` ([`crate::out`]: JSON through `escape_json`, the rest escaped line
    /// by line), or with `-o FILE` writes it there whole ([`crate::atomic_file`]),
    /// naming the file on stderr.
    ///
    /// # Errors
    /// `-o` names a folder or something not a regular file
    /// ([`crate::atomic_file::check_output`]), or the file cannot be written.
    pub fn emit(&self, text: &str) -> Result<()> {
        match &self.out {
            None if self.format() == Format::Json => crate::out::json(text),
            None => crate::out::text(crate::out::Stream::Out, text),
            Some(path) => {
                crate::atomic_file::check_output(path)?;
                crate::atomic_file::write(path, text)?;
                crate::errln!("wrote {}", path.display());
            }
        }
        Ok(())
    }
}

/// Where the results of `run` are: a results JSON file path, or a run id (or a unique
/// prefix of one) in the local results store `store` (`--store DIR`; `None`: the
/// default, [`crate::store::default_dir`]). The one place a run argument is resolved
/// ([`crate::store::resolve`]).
///
/// # Errors
/// `run` is a folder, or neither a file nor a stored run (the message says what to pass).
pub fn resolve_run_in(run: &str, store: Option<&Path>) -> Result<PathBuf> {
    let path = PathBuf::from(run);
    if path.is_dir() {
        bail!(
            "`{run}` is a folder: pass one results JSON file (e.g. {}) or a run id from \
             `benchboot runs`",
            path.join("<name>.json").display()
        );
    }
    crate::store::resolve(run, store).with_context(|| {
        format!(
            "no results file or stored run `{run}`: pass the path of a results JSON (as saved \
             by `benchboot fetch`) or a run id listed by `benchboot runs`"
        )
    })
}

/// [`resolve_run_in`] the default store.
///
/// # Errors
/// As [`resolve_run_in`].
pub fn resolve_run(run: &str) -> Result<PathBuf> {
    resolve_run_in(run, None)
}

/// [`resolve_run_in`] then [`load_path`].
///
/// # Errors
/// As those two.
pub fn load_run_in(run: &str, store: Option<&Path>) -> Result<(PathBuf, RunResults)> {
    let path = resolve_run_in(run, store)?;
    let r = load_path(&path)?;
    Ok((path, r))
}

/// [`load_run_in`] the default store.
///
/// # Errors
/// As [`load_run_in`].
pub fn load_run(run: &str) -> Result<(PathBuf, RunResults)> {
    load_run_in(run, None)
}

/// `r` in `format`.
pub fn render(r: &RunResults, format: Format) -> Result<String> {
    render_with(r, None, format)
}

/// `r` in `format`, with the energy section of `energy` in the tables, Markdown and the
/// HTML page (with its plot); CSV and JSON leave it out.
pub fn render_with(r: &RunResults, energy: Option<&Energy>, format: Format) -> Result<String> {
    Ok(match format {
        Format::Table => document_full(r, energy, &[]).text(),
        Format::Markdown => document_full(r, energy, &[]).markdown(),
        Format::Csv => tidy::to_csv(&tidy::rows(r))?,
        Format::Json => {
            let s = serde_json::to_string_pretty(&summary::summary(r))?;
            // C1 and bidi characters as JSON escapes: the same values, safe to print.
            benchboot_results::text::escape_json(&s).into_owned() + "\n"
        }
        Format::Html => {
            let mut figures = crate::plot::report_figures(r);
            if let Some(e) = energy {
                // Health over time with the power trace on the same time axis.
                figures.retain(|f| f.section != crate::chart::FigureSection::Health);
                figures.extend(crate::plot::health::health_figure(r, Some(e)));
            }
            figures.extend(energy.and_then(|e| crate::plot::power::energy_figure(e, r)));
            crate::html::page(&document_full(r, energy, &figures))?
        }
    })
}

/// Runs `benchboot report`: prints the report; plots go to `--plots` (their paths on
/// stderr, so stdout stays parseable).
pub fn run(args: &ReportArgs) -> Result<()> {
    let (path, r) = load_run_in(&args.run, args.store.as_deref())?;
    let energy = Energy::find(&path, args.power.as_deref(), &r)?;
    let energy = energy.as_ref();
    let text = match (args.output.format(), &args.output.out) {
        // On a terminal the tables fit its width (long cells wrapped).
        (Format::Table, None) => {
            document_full(&r, energy, &[]).text_width(crate::doc::terminal_width())
        }
        (format, _) => render_with(&r, energy, format)?,
    };
    args.output.emit(&text)?;
    if let Some(dir) = &args.output.plots {
        let mut files = crate::plot::report_plots(&r, dir)?;
        let power = energy.and_then(|e| crate::plot::power::energy_figure(e, &r));
        files.extend(crate::plot::write_figures(dir, &Vec::from_iter(power))?);
        for f in files {
            crate::errln!("plot {}", f.display());
        }
        if r.emulated && r.memory.as_ref().is_some_and(|m| !m.latency.is_empty()) {
            crate::errln!("no memory latency plot: {}", crate::plot::memory::NO_PLOT);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `benchboot report /dev/zero` read for ever (a device has no end), then 64 MiB
    /// of it; a FIFO with no writer waited for ever: both are refused unread. (Unix
    /// only: Windows has no such device.)
    #[cfg(unix)]
    #[test]
    fn a_document_without_an_end_is_refused() {
        let e = format!("{:#}", load_path(Path::new("/dev/zero")).unwrap_err());
        assert_eq!(
            e,
            "/dev/zero: a character device, not a regular file: a results document is read \
             only from a file (a device or a pipe may never end); save it to a file and give \
             that"
        );
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("results.json");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        let e = format!("{:#}", load_path(&fifo).unwrap_err());
        assert!(
            e.contains(": a FIFO (named pipe), not a regular file: "),
            "{e}"
        );
    }
}
