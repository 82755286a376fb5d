//! LAVA's own tools, to check the jobs `cargo xtask lava` writes: Debian bookworm's
//! `lava-common`, `lava-dispatcher`, `lava-dispatcher-host` and `lava-server` (pinned
//! below), unpacked by `cargo xtask setup --tests` into `target/lava/root` (`apt-get download` +
//! `dpkg -x`: a full install would pull in systemd-sysv and libguestfs), run with
//! Debian's `/usr/bin/python3` and its python3-* packages (setup's apt list), plus an
//! empty `guestfs` module (imported at the top of lava_dispatcher/utils/filesystem.py,
//! used only by guest-filesystem deploys).
//!
//! - [`schema_job`]: `lava-schema.py job --strict`;
//! - [`schema_device`]: `lava-schema.py device` (renders a device dictionary with
//!   lava-server's device-type templates and ours, checks the result);
//! - [`render_device`]: the device dictionary as lava-server renders it for a job (its
//!   `context` applied), the YAML `lava-run` takes;
//! - [`lava_run`]: `lava-run` (`--validate`: build the pipeline and check the worker's
//!   tools and files; without: run the job), its log as JSON lines on stderr.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use anyhow::{bail, Context, Result};

/// Debian's LAVA packages and their version (bookworm main).
pub const PACKAGES: &[&str] = &[
    "lava-common",
    "lava-dispatcher",
    "lava-dispatcher-host",
    "lava-server",
];
pub const VERSION: &str = "2023.01-2";

/// Debian's python, whose dist-packages hold the python3-* packages LAVA imports.
pub const PYTHON: &str = "/usr/bin/python3";

/// Where setup unpacks the packages.
pub fn root() -> PathBuf {
    crate::target_dir().join("lava").join("root")
}

/// lava-server's device-type templates.
pub fn device_types() -> PathBuf {
    root().join("usr/share/lava-server/device-types")
}

/// Why LAVA's tools cannot run here, if they cannot.
pub fn missing() -> Option<String> {
    if !Path::new(PYTHON).exists() {
        return Some(format!("{PYTHON} (Debian's python3) is not installed"));
    }
    let run = root().join("usr/bin/lava-run");
    (!run.exists()).then(|| format!("LAVA is not unpacked ({} is missing)", run.display()))
}

fn stub_dir() -> PathBuf {
    crate::target_dir().join("lava").join("stub")
}

/// Unpacks the pinned packages into [`root`] unless there already.
///
/// # Errors
/// apt-get or dpkg failing (the message names the command).
pub fn unpack(dry_run: bool) -> Result<()> {
    let stub = stub_dir().join("guestfs.py");
    if !dry_run {
        crate::write_atomically(
            &stub,
            b"# benchboot: stands in for python3-guestfs, which lava_dispatcher imports at the\n\
              # top of utils/filesystem.py and needs for guest-filesystem deploys only.\n",
        )?;
    }
    if root().join("usr/bin/lava-run").exists() {
        return Ok(());
    }
    let debs = crate::target_dir().join("lava").join("debs");
    eprintln!("setup: LAVA {VERSION} into {}", root().display());
    if dry_run {
        return Ok(());
    }
    std::fs::create_dir_all(&debs)?;
    let wanted: Vec<String> = PACKAGES.iter().map(|p| format!("{p}={VERSION}")).collect();
    let st = Command::new("apt-get")
        .arg("download")
        .args(&wanted)
        .current_dir(&debs)
        .status()
        .context("running apt-get download")?;
    if !st.success() {
        bail!(
            "`apt-get download {}` failed ({st}): is Debian bookworm's main in the apt sources?",
            wanted.join(" ")
        );
    }
    for entry in std::fs::read_dir(&debs)? {
        let deb = entry?.path();
        if deb.extension().is_some_and(|e| e == "deb") {
            let st = Command::new("dpkg")
                .arg("-x")
                .arg(&deb)
                .arg(root())
                .status()?;
            if !st.success() {
                bail!(
                    "`dpkg -x {} {}` failed ({st})",
                    deb.display(),
                    root().display()
                );
            }
        }
    }
    Ok(())
}

fn python() -> Command {
    let mut c = Command::new(PYTHON);
    let path = format!(
        "{}:{}",
        root().join("usr/lib/python3/dist-packages").display(),
        stub_dir().display()
    );
    c.env("PYTHONPATH", path)
        .env("PYTHONDONTWRITEBYTECODE", "1");
    c
}

fn ok(what: &str, out: Output) -> Result<Output> {
    if !out.status.success() {
        bail!(
            "{what}: {}\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(out)
}

/// `lava-schema.py job --strict job`.
///
/// # Errors
/// The schema's refusal, with its message.
pub fn schema_job(job: &Path) -> Result<()> {
    let out = python()
        .arg(root().join("usr/share/lava-common/lava-schema.py"))
        .args(["job", "--strict"])
        .arg(job)
        .output()?;
    // lava-schema prints `* <file>` per file and its complaints after it; the exit status
    // is what counts.
    ok(
        &format!("lava-schema.py job --strict {}", job.display()),
        out,
    )
    .map(drop)
}

/// `lava-schema.py device --path <templates>... dict` (rendered with `templates`, then
/// lava-server's own).
///
/// # Errors
/// A template that does not render or a result the device schema refuses.
pub fn schema_device(dict: &Path, templates: &[PathBuf]) -> Result<()> {
    let mut c = python();
    c.arg(root().join("usr/share/lava-common/lava-schema.py"))
        .arg("device");
    for t in templates.iter().cloned().chain([device_types()]) {
        c.arg("--path").arg(t);
    }
    let out = c.arg(dict).output()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    // 2023.01's lava-schema exits 0 and prints the error under the file name.
    if text.lines().count() > 1 {
        bail!("lava-schema.py device {}: {text}", dict.display());
    }
    ok(&format!("lava-schema.py device {}", dict.display()), out).map(drop)
}

/// lava-server's rendering of a device dictionary (lava_server's sandboxed jinja2,
/// `trim_blocks`), with the job's `context`.
const RENDER: &str = r#"
import sys, yaml
from jinja2 import FileSystemLoader
from jinja2.sandbox import SandboxedEnvironment
dict_dir, name, job, out = sys.argv[1:5]
paths = [dict_dir] + sys.argv[5:]
env = SandboxedEnvironment(loader=FileSystemLoader(paths), autoescape=False, trim_blocks=True)
ctx = yaml.safe_load(open(job)).get("context") or {}
text = env.get_template(name).render(**ctx)
yaml.safe_load(text)
open(out, "w").write(text)
"#;

/// Renders device dictionary `dict` for `job` into `out` (device YAML), with
/// `templates` then lava-server's own.
///
/// # Errors
/// Rendering or YAML errors (python's message).
pub fn render_device(dict: &Path, job: &Path, templates: &[PathBuf], out: &Path) -> Result<()> {
    let mut c = python();
    c.arg("-c")
        .arg(RENDER)
        .arg(dict.parent().unwrap_or(Path::new(".")))
        .arg(dict.file_name().context("a device dictionary file")?)
        .arg(job)
        .arg(out);
    for t in templates.iter().cloned().chain([device_types()]) {
        c.arg(t);
    }
    ok(&format!("rendering {}", dict.display()), c.output()?).map(drop)
}

/// `lava-run --job-id <id> --output-dir <out> --device <device> [--validate] <job>`.
/// Returns its output (the log, JSON lines, on stderr: no server to send it to),
/// whatever its exit status.
///
/// # Errors
/// It cannot be started.
pub fn lava_run(job: &Path, device: &Path, out: &Path, id: u32, validate: bool) -> Result<Output> {
    let mut c = python();
    c.arg(root().join("usr/bin/lava-run"))
        .args(["--job-id", &id.to_string(), "--output-dir"])
        .arg(out)
        .arg("--device")
        .arg(device);
    if validate {
        c.arg("--validate");
    }
    Ok(c.arg(job).output()?)
}
