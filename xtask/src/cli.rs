//! The command line of `cargo xtask`: one typed subcommand per verb (clap derive), and
//! `bench` with one typed subcommand per benchmark. Only the shapes live here; `main.rs`
//! dispatches each variant to its module. In the library so tests can walk the verbs
//! ([`Cli::command`](clap::CommandFactory::command)).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// `cargo xtask <verb> [flags]`.
#[derive(Debug, Parser)]
#[command(name = "cargo xtask", about = "benchboot build automation")]
pub struct Cli {
    #[command(subcommand)]
    pub verb: Verb,
}

/// The verbs of `cargo xtask`, each with its own flags.
// The doc comments are the `--help` text, which names paths as `target/images/<board>.img`.
#[allow(rustdoc::invalid_html_tags)]
#[derive(Debug, Subcommand)]
pub enum Verb {
    /// Install what the main job (`cargo xtask qemu --board rpi-zero-w`) needs: QEMU,
    /// the image tools, zig, rust-src. `--tests` adds what the tests and benches need.
    Setup {
        /// Print the commands instead of running them.
        #[arg(long)]
        dry_run: bool,
        /// Also install what the tests (`.ci/run`), the benches and `cargo xtask dist`
        /// need: chromium, wine, MinGW, cross compilers, LAVA, fio, iperf3, QEMU 10.
        #[arg(long)]
        tests: bool,
    },
    /// Cross-build the static init for a board (or a bare target) and gate it.
    Firmware {
        /// A board file's name in boards/ (e.g. rpi-zero-w): its target and CPU.
        #[arg(long, conflicts_with = "target")]
        board: Option<String>,
        /// A Rust target triple, built for its baseline CPU.
        #[arg(long)]
        target: Option<String>,
    },
    /// Cross-build the host tool for macOS and Windows (zig as C compiler and linker) and
    /// check each binary is a Mach-O / PE executable of its machine.
    Host {
        /// A target triple (repeat it): aarch64-apple-darwin, x86_64-apple-darwin,
        /// x86_64-pc-windows-gnu, or a static Linux one (x86_64-unknown-linux-musl,
        /// aarch64-unknown-linux-musl). Default: the first three.
        #[arg(long)]
        target: Vec<String>,
    },
    /// Build target/images/<board>.img and its manifest.
    Image {
        /// A board file's name in boards/ (e.g. rpi-zero-w).
        #[arg(long)]
        board: String,
        /// The default plan built in and written onto the card as `plan.toml`: a preset
        /// (`quick`, `standard`, `seeds`) or a plan file.
        #[arg(long, default_value = "standard")]
        plan: String,
    },
    /// Build the image if needed, boot it in QEMU, fetch and print the results.
    Qemu {
        /// A board file's name in boards/ with a `[qemu]` section (e.g. rpi-zero-w).
        #[arg(long)]
        board: String,
        /// Give up after this many seconds.
        #[arg(long, default_value_t = 900)]
        timeout: u64,
        /// Run this plan file (or preset: quick, standard, seeds) instead of the short
        /// QEMU plan: written onto the card copy with `benchboot plan write`, taken by
        /// PID 1 at boot (plan `qemu-card`). Figures stay emulated.
        #[arg(long)]
        card_plan: Option<String>,
        /// `emulated`: record a power trace beside the run from a model of QEMU's CPU
        /// time (idle W + W per busy core), align it with the board's sync patterns and
        /// print the energy per step, EMULATED. A real meter is read by `benchboot power
        /// record` (docs/energy.md).
        #[arg(long, value_parser = ["emulated"])]
        meter: Option<String>,
    },
    /// Benchmarks (not tests): `storage` runs benchboot, dd and fio side by side;
    /// `memory` benchboot's memory engine and tinymembench; `net` benchboot's TCP engine
    /// and iperf3 over loopback, `net-udp` its UDP runs and `iperf3 -u`, `net-http` its
    /// HTTP runs and nginx + curl; `card` `benchboot probe --full` and f3write/f3read.
    Bench {
        #[command(subcommand)]
        what: Bench,
    },
    /// Write a board's LAVA job definitions (flasher, TFTP, qemu routes) and the files
    /// they name into target/images/<board>.lava/ (ARCHITECTURE.md, docs/lava.md).
    Lava {
        /// A board file's name in boards/ (e.g. rpi-3b).
        #[arg(long)]
        board: String,
        /// The image's default plan: a preset (`quick`, `standard`, `seeds`) or a plan
        /// file; the jobs' timeouts come from its estimate.
        #[arg(long, default_value = "standard")]
        plan: String,
        /// The URL the lab serves the written files from (`https://...`, `file:///...`).
        #[arg(long, value_name = "URL")]
        artifacts: String,
        /// Another folder for the jobs and files.
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// A user command of the lab's device dictionary to run after the test, the
        /// board still up (e.g. one that fetches results.json over the lab network).
        #[arg(long, value_name = "NAME")]
        fetch_command: Option<String>,
        /// Write the job files only (no image build, no artefacts, no SHA-256s).
        #[arg(long)]
        jobs_only: bool,
    },
    /// Build what a release carries into target/dist/: the host tool per OS (.tar.gz),
    /// an image per board (.img.xz), GETTING-STARTED.txt and SHA256SUMS, reproducibly
    /// (SOURCE_DATE_EPOCH, or 2024-01-01).
    Dist {
        /// Boards whose image goes in, comma-separated (`none`: no image). Default: every
        /// board file.
        #[arg(long, value_delimiter = ',', value_name = "BOARD,...")]
        boards: Option<Vec<String>>,
        /// Host targets whose tool goes in, comma-separated triples (`none`: no host
        /// tool). Default: Linux x86_64 and aarch64 (musl), macOS aarch64 and x86_64,
        /// Windows x86_64.
        #[arg(long, value_delimiter = ',', value_name = "TRIPLE,...")]
        hosts: Option<Vec<String>>,
        /// Another folder than target/dist.
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
    /// Refresh boards/packages.lock.toml from the Debian mirror's current index.
    Lock,
    /// Check every board file against the pinned packages and print the README's board
    /// table.
    Boards {
        /// Write the table into README.md instead of printing it.
        #[arg(long)]
        write_readme: bool,
    },
}

/// `cargo xtask bench <what>`: each benchmark with the flags it reads.
#[derive(Debug, Subcommand)]
pub enum Bench {
    /// benchboot vs `dd` vs `fio` on the same file: medians and ratios.
    Storage {
        /// Folder on the disk to measure (default target/bench).
        #[arg(long)]
        path: Option<PathBuf>,
        #[command(flatten)]
        runs: Runs,
    },
    /// benchboot's memory engine vs tinymembench (built from xtask/bench/tinymembench).
    Memory {
        #[command(flatten)]
        runs: Runs,
    },
    /// benchboot's TCP engine vs `iperf3` over loopback: throughput and CPU ratios.
    Net {
        #[command(flatten)]
        runs: Runs,
        #[command(flatten)]
        seconds: Seconds,
    },
    /// benchboot's UDP runs vs `iperf3 -u` over loopback: Mbit/s, loss %, CPU per byte.
    NetUdp {
        #[command(flatten)]
        runs: Runs,
        #[command(flatten)]
        seconds: Seconds,
    },
    /// benchboot's HTTP runs both ways vs nginx + `curl -o /dev/null` over loopback.
    NetHttp {
        #[command(flatten)]
        runs: Runs,
    },
    /// `benchboot probe --full` vs f3write/f3read (Debian's f3) on a genuine loop device,
    /// a paced fake card and three fakes: MiB/s, ratios, verdicts (root).
    Card {
        #[command(flatten)]
        runs: Runs,
        /// Folder on the disk to measure, for the genuine device's backing file
        /// (default target/bench-card).
        #[arg(long)]
        dir: Option<PathBuf>,
        /// The genuine device's size, MiB.
        #[arg(long, default_value_t = 1024)]
        size_mib: u64,
    },
}

/// `--runs N` of every benchmark.
#[derive(Debug, Clone, Copy, Args)]
pub struct Runs {
    /// Runs per tool and cell (medians are compared).
    #[arg(long, default_value_t = 3)]
    pub runs: u32,
}

/// `--seconds S` of the loopback network benchmarks.
#[derive(Debug, Clone, Copy, Args)]
pub struct Seconds {
    /// Measured seconds per run, after a 1 s warm-up.
    #[arg(long, default_value_t = 5)]
    pub seconds: u64,
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::{Bench, Cli, Verb};

    fn parse(args: &[&str]) -> Verb {
        Cli::try_parse_from(std::iter::once("xtask").chain(args.iter().copied()))
            .unwrap_or_else(|e| panic!("{args:?}: {e}"))
            .verb
    }

    #[test]
    fn bench_takes_typed_subcommands_with_their_flags() {
        let Verb::Bench {
            what: Bench::Storage { path, runs },
        } = parse(&["bench", "storage", "--path", "/mnt/bb", "--runs", "5"])
        else {
            panic!("not bench storage")
        };
        assert_eq!((path.unwrap().to_str(), runs.runs), (Some("/mnt/bb"), 5));
        let Verb::Bench {
            what: Bench::NetUdp { runs, seconds },
        } = parse(&["bench", "net-udp", "--seconds", "2"])
        else {
            panic!("not bench net-udp")
        };
        assert_eq!((runs.runs, seconds.seconds), (3, 2));
        assert!(matches!(
            parse(&["bench", "net-http"]),
            Verb::Bench {
                what: Bench::NetHttp { runs } } if runs.runs == 3
        ));
        // A bench that does not exist is refused by the parser, not by hand.
        assert!(Cli::try_parse_from(["xtask", "bench", "disk"]).is_err());
        assert!(Cli::try_parse_from(["xtask", "bench"]).is_err());
    }

    #[test]
    fn documented_command_lines_parse() {
        // README and .ci/run call xtask so.
        for line in [
            "setup",
            "setup --tests",
            "dist",
            "dist --boards rpi-zero-w,rpi-3b --hosts x86_64-unknown-linux-musl --out /tmp/d",
            "dist --boards none --hosts none",
            "image --board rpi-zero-w",
            "image --board rpi-zero-w --plan quick",
            "qemu --board rpi-zero-w",
            "qemu --board qemu-virt-arm64 --card-plan quick --timeout 1200",
            "firmware --board rpi-zero-w",
            "firmware --target armv7-unknown-linux-musleabihf",
            "host --target x86_64-pc-windows-gnu",
            "lock",
            "boards --write-readme",
            "lava --board rpi-3b --artifacts https://lab.example/benchboot",
            "bench storage --runs 3",
            "bench storage --path /mnt/bb --runs 5",
            "bench memory --runs 9",
            "bench net",
            "bench net-udp",
            "bench net-http",
            "bench card --runs 5",
            "bench card --dir /mnt/disk --size-mib 2048",
        ] {
            let args: Vec<&str> = line.split(' ').collect();
            parse(&args);
        }
        let Verb::Qemu {
            timeout,
            card_plan,
            meter,
            ..
        } = parse(&["qemu", "--board", "rpi-3b"])
        else {
            panic!("not qemu")
        };
        assert_eq!((timeout, card_plan, meter), (900, None, None));
        let Verb::Qemu { meter, .. } = parse(&["qemu", "--board", "x", "--meter", "emulated"])
        else {
            panic!("not qemu")
        };
        assert_eq!(meter.as_deref(), Some("emulated"));
        let Verb::Dist { boards, hosts, out } =
            parse(&["dist", "--boards", "rpi-zero-w,rpi-3b", "--hosts", "none"])
        else {
            panic!("not dist")
        };
        assert_eq!(boards.unwrap(), ["rpi-zero-w", "rpi-3b"]);
        assert_eq!((hosts.unwrap(), out), (vec!["none".to_string()], None));
        assert!(matches!(
            parse(&["setup", "--tests"]),
            Verb::Setup {
                tests: true,
                dry_run: false
            }
        ));
    }
}
