//! `cargo xtask lava --board B [--plan P] --artifacts URL`: the LAVA job definitions of a
//! board (Linaro's board-farm engine), written beside its image in
//! `target/images/<board>.lava/` with the files they name.
//!
//! Routes (lava_dispatcher's deploy and boot methods), each a job file:
//! - `<board>-flasher.yaml`, every board with a card loader: `deploy: to: flasher` (the
//!   lab's SD switcher writes the whole image) and `boot: method: minimal` (power on, no
//!   login: PID 1 runs the plan);
//! - `<board>-tftp.yaml`, the boards whose card boots U-Boot (extlinux):
//!   `deploy: to: tftp` (kernel, DTB, the initramfs behind a U-Boot ramdisk header) and
//!   `boot: method: u-boot, commands: ramdisk`; the card must hold benchboot's
//!   partitions already (flashed once);
//! - `<board>-qemu.yaml`, the boards QEMU's `virt` machine boots: LAVA's `qemu` device
//!   type with the kernel, initramfs and card the QEMU tests boot, plan `qemu-lava`.
//!
//! Every job reads the run with two test monitors (`benchboot_console::lava`): the
//! figures as numbers with units, then the verdicts; the whole results document comes
//! through the console before the verdicts, so the job log holds it
//! (`benchboot collect --from-log`). Timeouts come from the plan's estimate. The
//! device types upstream lacks are copied from `boards/lava/` into `device-types/`.

pub mod tools;
pub mod uimage;

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use benchboot_board::{Board, BootConfig};
use benchboot_console::lava::{Monitor, MONITORS};
use benchboot_image::layout::{self, Role};
use benchboot_image::plans::{self, PlanText, QEMU_LAVA};
use benchboot_plan::estimate::{estimate, total_ms};
use benchboot_plan::Plan;
use serde::Serialize;

use crate::image::{self, INITRAMFS_FILE, KERNEL_FILE};

/// What `cargo xtask lava` is asked for.
#[derive(Debug, Clone)]
pub struct Options {
    pub board: Board,
    /// The image's default plan (`--plan`: a preset or a plan file).
    pub plan: PlanText,
    /// Where the lab serves the artefacts from: the jobs name `<artifacts>/<file>`.
    pub artifacts: String,
    /// Where the jobs go (default `target/images/<board>.lava/`).
    pub out: PathBuf,
    /// A user command of the lab's device dictionary (`commands: users:`) to run once
    /// the verdicts are in, with the board still up: e.g. one that fetches
    /// `results.json` where the worker reaches the board's results server.
    pub fetch_command: Option<String>,
    /// Build the image and write the artefacts the jobs name (with their SHA-256 in the
    /// jobs); without, only the job files (what a schema check needs).
    pub artifacts_too: bool,
}

/// What [`run`] wrote.
#[derive(Debug, Clone, Default)]
pub struct Written {
    pub jobs: Vec<PathBuf>,
    pub device_types: Vec<PathBuf>,
    pub artifacts: Vec<PathBuf>,
}

/// Where the jobs of `board` go by default.
pub fn default_out(board: &Board) -> PathBuf {
    crate::target_dir()
        .join("images")
        .join(format!("{}.lava", board.name))
}

/// The LAVA routes a board has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    Flasher,
    Tftp,
    Qemu,
}

impl Route {
    fn name(self) -> &'static str {
        match self {
            Route::Flasher => "flasher",
            Route::Tftp => "tftp",
            Route::Qemu => "qemu",
        }
    }
}

/// The routes of `board`: flasher for a card with a loader, TFTP also where that
/// loader is U-Boot (extlinux), `qemu` for QEMU's `virt` machine.
pub fn routes(board: &Board) -> Vec<Route> {
    let mut r = Vec::new();
    if let Some(l) = &board.loader {
        r.push(Route::Flasher);
        if l.config == BootConfig::Extlinux {
            r.push(Route::Tftp);
        }
    }
    if board.qemu.as_ref().is_some_and(|q| q.machine == "virt") {
        r.push(Route::Qemu);
    }
    r
}

/// Writes the jobs (and, with [`Options::artifacts_too`], the artefacts) of one board.
///
/// # Errors
/// A board with no route, a plan file refused (file, line, key), an image that does not
/// build, or a file that cannot be written.
pub fn run(opts: &Options) -> Result<Written> {
    let board = &opts.board;
    let routes = routes(board);
    if routes.is_empty() {
        bail!(
            "boards/{}.toml: no LAVA route (no card loader, no QEMU virt machine)",
            board.name
        );
    }
    let layout = layout::plan(&layout::Spec::default())?;
    let hardware = plans::hardware(board, &layout, Vec::new(), &opts.plan)?;
    let mut w = Written::default();
    let mut files = Files::default();
    if opts.artifacts_too {
        files = artifacts(opts, &routes, &mut w)?;
    }
    let base = opts.artifacts.trim_end_matches('/');
    for &route in &routes {
        let job = match route {
            Route::Flasher => flasher_job(board, &hardware, base, &files),
            Route::Tftp => tftp_job(board, &hardware, base, &files)?,
            Route::Qemu => {
                let lava = plans::qemu_lava(board, &layout, Vec::new());
                qemu_job(board, &lava, base, &files)?
            }
        };
        let job = with_command(job, opts.fetch_command.as_deref());
        let path = opts
            .out
            .join(format!("{}-{}.yaml", board.name, route.name()));
        let text = format!(
            "# benchboot: LAVA job for {} ({} route), written by `cargo xtask lava`.\n{}",
            board.description,
            route.name(),
            yaml_serde::to_string(&job).context("writing the job as YAML")?
        );
        write_readable(&path, text.as_bytes())?;
        w.jobs.push(path);
    }
    if let Some(t) = &board.lava.template {
        let path = opts
            .out
            .join("device-types")
            .join(format!("{}.jinja2", board.lava.device_type));
        write_readable(
            &path,
            &std::fs::read(t).with_context(|| t.display().to_string())?,
        )?;
        w.device_types.push(path);
    }
    Ok(w)
}

/// The artefacts' names (in the output folder) and SHA-256s.
#[derive(Debug, Clone, Default)]
struct Files {
    sha256: std::collections::BTreeMap<String, String>,
}

impl Files {
    fn url(&self, base: &str, name: &str) -> Url {
        Url {
            url: format!("{base}/{name}"),
            sha256sum: self.sha256.get(name).cloned(),
            ..Url::default()
        }
    }
}

/// File names of a board's artefacts.
fn card_name(b: &Board) -> String {
    format!("{}.img", b.name)
}
fn kernel_name(b: &Board) -> String {
    format!("{}-{KERNEL_FILE}", b.name)
}
fn initrd_name(b: &Board) -> String {
    format!("{}-{INITRAMFS_FILE}", b.name)
}
fn uinitrd_name(b: &Board) -> String {
    format!("{}-initrd.uimg", b.name)
}
fn dtb_name(b: &Board) -> Option<String> {
    b.kernel.dtb.as_ref().map(|d| format!("{}-{d}", b.name))
}

/// Builds the image and writes what the routes name into the output folder.
fn artifacts(opts: &Options, routes: &[Route], w: &mut Written) -> Result<Files> {
    let b = &opts.board;
    let built = image::run_with(b, &image::image_path(b), &opts.plan)?;
    let layout = layout::plan(&layout::Spec::default())?;
    let boot = layout
        .part(Role::Boot)
        .context("layout has no boot partition")?;
    let mut files = Files::default();
    let mut put = |name: String, bytes: &[u8], w: &mut Written| -> Result<()> {
        use sha2::Digest;
        let path = opts.out.join(&name);
        write_readable(&path, bytes)?;
        files.sha256.insert(name, hex(&sha2::Sha256::digest(bytes)));
        w.artifacts.push(path);
        Ok(())
    };
    let kernel = image::read_fat_file(&built.image, boot, KERNEL_FILE)?;
    let initrd = image::read_fat_file(&built.image, boot, INITRAMFS_FILE)?;
    if routes.contains(&Route::Tftp) || routes.contains(&Route::Qemu) {
        put(kernel_name(b), &kernel, w)?;
    }
    if routes.contains(&Route::Qemu) {
        put(initrd_name(b), &initrd, w)?;
    }
    if routes.contains(&Route::Tftp) {
        let time = u32::try_from(crate::reproducible::source_date_epoch()?).unwrap_or(u32::MAX);
        let arch = match b.kernel.arch.as_str() {
            "arm64" => uimage::Arch::Arm64,
            _ => uimage::Arch::Arm,
        };
        let name = format!("benchboot {}", b.name);
        put(
            uinitrd_name(b),
            &uimage::ramdisk(&initrd, &name, arch, time),
            w,
        )?;
        if let (Some(dtb), Some(out)) = (&b.kernel.dtb, dtb_name(b)) {
            put(out, &image::read_fat_file(&built.image, boot, dtb)?, w)?;
        }
    }
    if routes.contains(&Route::Flasher) || routes.contains(&Route::Qemu) {
        // The card (1 GiB): copied and hashed as a stream, not held in memory.
        let path = opts.out.join(card_name(b));
        let sha = copy_hashed(&built.image, &path)?;
        files.sha256.insert(card_name(b), sha);
        w.artifacts.push(path);
    }
    Ok(files)
}

/// Writes `path` atomically, readable by everyone (a lab's web server serves it).
fn write_readable(path: &std::path::Path, bytes: &[u8]) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    crate::write_atomically(path, bytes)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644))?;
    Ok(())
}

/// Copies `from` to `to` (through a temporary file and a rename, mode 0644) and returns
/// its SHA-256, hex.
fn copy_hashed(from: &std::path::Path, to: &std::path::Path) -> Result<String> {
    use sha2::Digest;
    use std::io::{Read, Write};
    use std::os::unix::fs::PermissionsExt;
    let dir = to.parent().unwrap_or(std::path::Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut src = std::fs::File::open(from).with_context(|| from.display().to_string())?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    let mut hash = sha2::Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = src.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hash.update(&buf[..n]);
        tmp.write_all(&buf[..n])?;
    }
    tmp.as_file().sync_all()?;
    tmp.persist(to)
        .with_context(|| format!("writing {}", to.display()))?;
    std::fs::set_permissions(to, std::fs::Permissions::from_mode(0o644))?;
    Ok(hex(&hash.finalize()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

// ---- the job, as LAVA's schema (lava_common/schemas) spells it ----

#[derive(Debug, Clone, Serialize)]
pub struct Job {
    pub device_type: String,
    pub job_name: String,
    pub timeouts: Timeouts,
    pub priority: &'static str,
    pub visibility: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<Context_>,
    pub actions: Vec<Action>,
}

#[derive(Debug, Clone, Copy, Serialize)]
pub struct Timeouts {
    pub job: Minutes,
    pub action: Minutes,
    pub connection: Minutes,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Minutes {
    pub minutes: u64,
}

fn min(minutes: u64) -> Minutes {
    Minutes { minutes }
}

/// The job `context` of a `qemu` job (lava-server device-types/qemu.jinja2 reads it).
#[derive(Debug, Clone, Serialize)]
pub struct Context_ {
    pub arch: String,
    pub machine: String,
    pub cpu: String,
    pub memory: u64,
    /// No LAVA guest filesystem: the run needs no overlay.
    pub guestfs_interface: &'static str,
    pub extra_options: Vec<String>,
}

/// One action: a one-key mapping (`- deploy: {...}`), as LAVA writes them (an enum's
/// YAML tag would not do: `!deploy`).
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Action {
    Deploy { deploy: Box<Deploy> },
    Boot { boot: Boot },
    Test { test: Test },
    Command { command: Command },
}

#[derive(Debug, Clone, Serialize)]
pub struct Deploy {
    pub to: &'static str,
    pub timeout: Minutes,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub images: Option<std::collections::BTreeMap<&'static str, Url>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel: Option<Url>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dtb: Option<Url>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ramdisk: Option<Url>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Url {
    pub url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha256sum: Option<String>,
    /// Kernel: `zimage` (ARM zImage) or `image` (arm64 Image).
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<&'static str>,
    /// Ramdisk: already behind a U-Boot header.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub header: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub install_modules: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub install_overlay: Option<bool>,
    /// qemu images: how the file goes on QEMU's command line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image_arg: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Boot {
    pub method: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commands: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub media: Option<&'static str>,
    pub timeout: Minutes,
}

#[derive(Debug, Clone, Serialize)]
pub struct Test {
    pub timeout: Minutes,
    pub monitors: Vec<MonitorYaml>,
}

#[derive(Debug, Clone, Serialize)]
pub struct MonitorYaml {
    pub name: &'static str,
    pub start: &'static str,
    pub end: &'static str,
    pub pattern: &'static str,
}

impl From<&Monitor> for MonitorYaml {
    fn from(m: &Monitor) -> MonitorYaml {
        MonitorYaml {
            name: m.name,
            start: m.start,
            end: m.end,
            pattern: m.pattern,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Command {
    pub name: String,
    pub timeout: Minutes,
}

/// Minutes a deploy may take: download plus writing a 1 GiB card at ~10 MB/s.
const DEPLOY_MIN: u64 = 20;
/// Minutes from power on to PID 1's start line.
const BOOT_MIN: u64 = 5;
/// Minutes for what the estimate leaves out: the closing blocks (the document at 115200
/// baud: ~100 KiB of lines, ~10 s for a hardware plan; minutes for a slow console), the
/// results link, a board slower than the estimate's figures.
const SLACK_MIN: u64 = 10;

/// The test action's minutes for `plan`: its estimate x 1.5 plus [`SLACK_MIN`].
pub fn test_minutes(plan: &Plan) -> u64 {
    (total_ms(&estimate(plan)) * 3 / 2).div_ceil(60_000) + SLACK_MIN
}

fn test_action(plan: &Plan, scale: u64) -> Test {
    Test {
        timeout: min(test_minutes(plan) * scale),
        monitors: MONITORS.iter().map(MonitorYaml::from).collect(),
    }
}

fn job(board: &Board, route: Route, test: &Test, deploy: Deploy, boot: Boot) -> Job {
    let total = deploy.timeout.minutes + boot.timeout.minutes + test.timeout.minutes + SLACK_MIN;
    let action = min(deploy.timeout.minutes.max(boot.timeout.minutes));
    Job {
        device_type: board.lava.device_type.clone(),
        job_name: format!("benchboot {} ({} route)", board.name, route.name()),
        timeouts: Timeouts {
            job: min(total),
            action,
            connection: min(2),
        },
        priority: "medium",
        visibility: "public",
        context: None,
        actions: vec![
            Action::Deploy {
                deploy: Box::new(deploy),
            },
            Action::Boot { boot },
            Action::Test { test: test.clone() },
        ],
    }
}

fn flasher_job(board: &Board, plan: &Plan, base: &str, files: &Files) -> Job {
    let images = [("image", files.url(base, &card_name(board)))].into();
    job(
        board,
        Route::Flasher,
        &test_action(plan, 1),
        Deploy {
            to: "flasher",
            timeout: min(DEPLOY_MIN),
            images: Some(images),
            kernel: None,
            dtb: None,
            ramdisk: None,
        },
        Boot {
            method: "minimal",
            commands: None,
            media: None,
            timeout: min(BOOT_MIN),
        },
    )
}

fn tftp_job(board: &Board, plan: &Plan, base: &str, files: &Files) -> Result<Job> {
    let dtb = dtb_name(board).with_context(|| {
        format!(
            "boards/{}.toml: the TFTP route needs kernel.dtb (U-Boot hands it to the kernel)",
            board.name
        )
    })?;
    Ok(job(
        board,
        Route::Tftp,
        &test_action(plan, 1),
        Deploy {
            to: "tftp",
            timeout: min(DEPLOY_MIN),
            images: None,
            kernel: Some(Url {
                kind: Some(if board.kernel.arch == "arm64" {
                    "image"
                } else {
                    "zimage"
                }),
                ..files.url(base, &kernel_name(board))
            }),
            dtb: Some(files.url(base, &dtb)),
            ramdisk: Some(Url {
                header: Some("u-boot"),
                install_modules: Some(false),
                install_overlay: Some(false),
                ..files.url(base, &uinitrd_name(board))
            }),
        },
        Boot {
            method: "u-boot",
            commands: Some("ramdisk"),
            media: None,
            timeout: min(BOOT_MIN),
        },
    ))
}

/// `-cpu`, `-m` and `-smp` of the board's QEMU arguments.
fn qemu_arg<'a>(args: &'a [String], flag: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| a == flag)
        .and_then(|i| args.get(i + 1))
        .map(String::as_str)
}

fn qemu_job(board: &Board, plan: &Plan, base: &str, files: &Files) -> Result<Job> {
    let q = board.qemu.as_ref().context("no [qemu] section")?;
    let arch = match board.kernel.arch.as_str() {
        "arm64" => "arm64",
        "armhf" | "armel" => "arm",
        other => bail!("boards/{}.toml: no LAVA qemu arch for {other}", board.name),
    };
    let cpu = qemu_arg(&q.args, "-cpu").unwrap_or("cortex-a53");
    let memory: u64 = qemu_arg(&q.args, "-m")
        .and_then(|m| m.parse().ok())
        .unwrap_or(1024);
    let mut extra = Vec::new();
    if let Some(smp) = qemu_arg(&q.args, "-smp") {
        extra.push(format!("-smp {smp}"));
    }
    // The card's command line, the QEMU additions, then the plan (the last
    // `benchboot.plan=` wins): as the QEMU tests boot it.
    let cmdline = format!(
        "{} {} benchboot.plan={QEMU_LAVA}",
        board.boot.cmdline, q.append
    );
    extra.push(format!(
        "-append \"{}\"",
        cmdline.split_whitespace().collect::<Vec<_>>().join(" ")
    ));
    let img = |name: String, arg: &str| Url {
        image_arg: Some(arg.to_owned()),
        ..files.url(base, &name)
    };
    let images = [
        ("kernel", img(kernel_name(board), "-kernel {kernel}")),
        ("ramdisk", img(initrd_name(board), "-initrd {ramdisk}")),
        (
            "card",
            img(
                card_name(board),
                "-drive if=none,id=card,format=raw,file={card} -device virtio-blk-device,drive=card",
            ),
        ),
    ]
    .into();
    // Emulated: everything takes longer than the estimate says.
    let mut j = job(
        board,
        Route::Qemu,
        &test_action(plan, 2),
        Deploy {
            to: "tmpfs",
            timeout: min(5),
            images: Some(images),
            kernel: None,
            dtb: None,
            ramdisk: None,
        },
        Boot {
            method: "qemu",
            commands: None,
            media: Some("tmpfs"),
            timeout: min(BOOT_MIN),
        },
    );
    j.context = Some(Context_ {
        arch: arch.into(),
        machine: q.machine.clone(),
        cpu: cpu.into(),
        memory,
        guestfs_interface: "none",
        extra_options: extra,
    });
    Ok(j)
}

/// `job` with the lab's user command `name` after the test (the board still up).
fn with_command(mut job: Job, name: Option<&str>) -> Job {
    if let Some(name) = name {
        job.actions.push(Action::Command {
            command: Command {
                name: name.to_owned(),
                timeout: min(5),
            },
        });
        job.timeouts.job.minutes += 5;
    }
    job
}

/// The file names of every job `cargo xtask lava` writes for `board`, without writing.
pub fn job_files(board: &Board) -> Vec<String> {
    routes(board)
        .iter()
        .map(|r| format!("{}-{}.yaml", board.name, r.name()))
        .collect()
}

#[cfg(test)]
mod tests;
