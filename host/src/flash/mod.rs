//! `benchboot flash IMAGE --device DEV`: writes an image to a card, safely, and reads it
//! back to prove it.
//!
//! Plan first ([`plan`]: refuses any device the rules of [`crate::devices`] refuse,
//! with every reason), then [`execute`]: unmount the card's own partitions (Windows:
//! lock and dismount its volumes, [`os::unmount_all`]), write with
//! [`io::write_image`] (the first 1 MiB last), fsync, read back with the cache bypassed
//! and compare SHA-256 ([`io::verify_image`]). A regular file as `--device` takes the
//! same path, which is how the tests run it; [`execute_with`] lets them put a double
//! with a raw disk's rules in between.

pub mod io;
pub mod os;

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};

use crate::devices::{human_bytes, Device, Limits};
use crate::target_disk::{confirm_erase, Refused};
use io::{VerifyReport, WriteOptions, WriteReport, CHUNK, HEAD};

/// The command line of `benchboot flash`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    pub image: PathBuf,
    /// A whole disk (`/dev/sdb`, `/dev/mmcblk0`, `/dev/disk4`) or a regular file.
    pub device: PathBuf,
    /// Print the plan, write nothing.
    pub dry_run: bool,
    /// Read back and compare SHA-256 (on by default).
    pub verify: bool,
    /// Leave all-zero chunks out even when the target is not known blank.
    pub skip_zeros: bool,
    /// Lift the size limit of a sane card.
    pub allow_large: bool,
    /// Do not ask; required without a terminal.
    pub yes: bool,
}

/// `benchboot flash` as clap parses it.
#[derive(Debug, Clone, clap::Args)]
pub struct FlashArgs {
    /// The image to write (`target/images/<board>.img`).
    pub image: PathBuf,
    /// The whole card (`/dev/sdb`, `/dev/mmcblk0`, `/dev/disk4`; Windows
    /// `\\.\PhysicalDrive2`, or `E:`: the disk holding that volume) or a regular file.
    #[arg(long)]
    pub device: PathBuf,
    #[command(flatten)]
    pub flags: WriteFlags,
    /// `--probe`: the card is probed for fake capacity before writing (crate::probe).
    #[command(flatten)]
    pub probe: crate::probe::FlashProbeFlags,
}

/// How to write a card, as `benchboot flash` and `benchboot field-test` take it.
#[derive(Debug, Clone, clap::Args)]
pub struct WriteFlags {
    /// Print what would be done (device, size, unmounts, chunks); write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Do not read the card back to compare SHA-256.
    #[arg(long)]
    pub no_verify: bool,
    /// Leave all-zero chunks out although the card is not known blank (faster; the
    /// card's old data stays there, verification will say so).
    #[arg(long)]
    pub skip_zeros: bool,
    /// Write a disk larger than a sane card (256 GiB).
    #[arg(long)]
    pub allow_large: bool,
    /// Do not ask for confirmation (required without a terminal).
    #[arg(long, short = 'y')]
    pub yes: bool,
}

impl WriteFlags {
    /// The write of `image` to `device` these flags ask for.
    pub fn options(&self, image: PathBuf, device: PathBuf) -> Options {
        Options {
            image,
            device,
            dry_run: self.dry_run,
            verify: !self.no_verify,
            skip_zeros: self.skip_zeros,
            allow_large: self.allow_large,
            yes: self.yes,
        }
    }
}

impl From<&FlashArgs> for Options {
    fn from(a: &FlashArgs) -> Options {
        a.flags.options(a.image.clone(), a.device.clone())
    }
}

/// The rules applied for writing: the card's own mount points to unmount (deepest
/// first), or every reason not to write it.
///
/// # Errors
/// [`Refused`] with every reason of [`Device::verdict`].
pub fn check_device(device: &Device, limits: &Limits) -> Result<Vec<PathBuf>, Refused> {
    let verdict = device.verdict(limits);
    if verdict.writable() {
        Ok(verdict.unmount)
    } else {
        Err(Refused {
            device: device.describe(),
            refusals: verdict.refusals,
            command: crate::devices::Use::Flash,
        })
    }
}

/// What `--device` names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A regular file. `blank`: it is about to be created, or is empty, so it reads as
    /// zeros and all-zero chunks need not be written.
    File { exists: bool, blank: bool },
    /// A whole disk that passed the rules, and the mount points to unmount first.
    Disk {
        device: Box<Device>,
        unmount: Vec<PathBuf>,
    },
}

/// Everything [`execute`] will do; [`Plan::describe`] prints it for `--dry-run`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub image: PathBuf,
    /// Image size in bytes.
    pub image_bytes: u64,
    /// What is opened and written: the file, `/dev/sdb`, or macOS's raw `/dev/rdisk4`.
    pub path: PathBuf,
    pub target: Target,
    /// Alignment of `O_DIRECT` I/O in bytes (the logical block size; 4096 for files).
    pub align: usize,
    pub write: WriteOptions,
    pub verify: bool,
}

/// Refuses a file that is not a partitioned disk image: it must hold at least one
/// 512-byte sector ending in the MBR boot signature 0x55 0xAA (bytes 510-511; also
/// present in the protective MBR of a GPT disk).
///
/// # Errors
/// Unreadable, shorter than a sector, or no signature (with what the file seems to be
/// and how to get an image).
pub fn check_disk_image(image: &Path) -> Result<()> {
    use std::io::Read;
    let mut sector = [0u8; 512];
    let mut f = std::fs::File::open(image)
        .with_context(|| format!("image {}: not readable", image.display()))?;
    let n = f
        .read(&mut sector)
        .with_context(|| format!("image {}: not readable", image.display()))?;
    if n < 512 || sector[510..512] != [0x55, 0xaa] {
        bail!(
            "image {}: not a disk image (no MBR boot signature 0x55AA at byte 510); \
             build one with `cargo xtask image --board rpi-zero-w`",
            image.display()
        );
    }
    Ok(())
}

/// Works out the plan for `opts`, refusing what must not be written. `root` is where
/// sysfs and proc are (`/`; a fake tree in tests).
///
/// # Errors
/// A missing or unreadable image, an image larger than the device, a `--device` that
/// is neither a regular file nor a whole disk, a device the rules refuse ([`Refused`]).
pub fn plan(opts: &Options, root: &Path) -> Result<Plan> {
    let image_meta = std::fs::metadata(&opts.image).with_context(|| {
        format!(
            "image {}: not readable; build one with `cargo xtask image --board rpi-zero-w`",
            opts.image.display()
        )
    })?;
    if !image_meta.is_file() {
        bail!("image {}: not a regular file", opts.image.display());
    }
    let image_bytes = image_meta.len();
    if image_bytes == 0 {
        bail!("image {}: empty", opts.image.display());
    }
    check_disk_image(&opts.image)?;
    let Destination {
        path,
        target,
        align,
    } = check_destination(&opts.device, opts.allow_large, root)?;
    match &target {
        Target::File { exists: true, .. } => {
            if os::same_file(&opts.device, &opts.image) {
                bail!(
                    "--device {} is the image itself; name the card",
                    opts.device.display()
                );
            }
        }
        Target::File { exists: false, .. } => {}
        Target::Disk { device, .. } => {
            if image_bytes > device.size_bytes {
                bail!(
                    "{}: the image ({}) is larger than the card ({}); use a larger card",
                    device.describe(),
                    human_bytes(image_bytes),
                    human_bytes(device.size_bytes)
                );
            }
        }
    }
    let blank = matches!(target, Target::File { blank: true, .. });
    Ok(Plan {
        image: opts.image.clone(),
        image_bytes,
        path,
        target,
        align,
        write: WriteOptions {
            skip_zeros: opts.skip_zeros || blank,
            known_blank: blank,
        },
        verify: opts.verify,
    })
}

/// What `--device` is, once the rules have accepted it (see [`check_destination`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Destination {
    /// What is opened and written: the file, `/dev/sdb`, or macOS's raw `/dev/rdisk4`.
    pub path: PathBuf,
    pub target: Target,
    /// Alignment of `O_DIRECT` I/O in bytes (the logical block size; 4096 for files).
    pub align: usize,
}

/// The rules of [`plan`] that concern the device alone, so they can run before an
/// image exists. `device` is looked up by identity ([`crate::identity::lookup`] on
/// Linux and macOS: device numbers and inode, never the spelling): a whole disk of
/// this machine that [`check_device`] accepts under the size limit (`allow_large`
/// lifts it), or a regular file (existing, or new in an existing folder) that is on
/// none of the kernel's own filesystems and that nothing holds (a loop device's
/// backing file, a swap file). `root` is where sysfs and proc are (`/`; a fake tree in
/// tests). [`plan`] applies the same rules again, plus those that need the image
/// (larger than the card, the image itself as `--device`).
///
/// # Errors
/// No such device, a partition instead of the whole disk (named with its disk and
/// mounts), a device this machine does not list, a file of the kernel or in use, a
/// folder, a character device, or a disk the rules refuse ([`Refused`], with every
/// reason).
#[cfg_attr(windows, allow(unused_variables))]
pub fn check_destination(device: &Path, allow_large: bool, root: &Path) -> Result<Destination> {
    let limits = Limits::new(allow_large);
    #[cfg(unix)]
    return unix_destination(&crate::identity::lookup(device, root)?, &limits);
    #[cfg(windows)]
    windows_destination(device, &limits)
}

/// [`check_destination`] on what the identity lookup found.
#[cfg(unix)]
fn unix_destination(found: &crate::identity::Found, limits: &Limits) -> Result<Destination> {
    use crate::identity::What;
    let dev = &found.given;
    let file = |exists: bool, blank: bool| Destination {
        path: dev.clone(),
        target: Target::File { exists, blank },
        align: 4096,
    };
    match &found.what {
        What::New { fs, .. } if fs.kernel_own().is_some() => bail!(
            "{}: no such device; `benchboot devices` lists the cards this machine sees",
            dev.display()
        ),
        What::Nowhere { folder } => bail!(
            "--device {}: no such file, and its folder {} does not exist to create \
             it in: give a card (`benchboot devices`) or a file in an existing folder",
            dev.display(),
            folder.display()
        ),
        What::New { .. } => Ok(file(false, true)),
        What::File { .. } => {
            found.refuse_kernel_files(
                "--device ",
                "name the card (`benchboot devices`) or an image file",
            )?;
            found.refuse_in_use("--device ")?;
            let len = std::fs::metadata(dev)
                .with_context(|| format!("--device {}", dev.display()))?
                .len();
            Ok(file(true, len == 0))
        }
        What::Folder { .. } => bail!(
            "--device {}: a folder, not a block device or regular file; name the whole \
             card (`benchboot devices`) or an image file",
            dev.display()
        ),
        _ => disk_destination(crate::target_disk::disk_of("--device ", found)?, limits),
    }
}

/// [`check_destination`] on Windows: a disk or volume name, else a regular file.
#[cfg(windows)]
fn windows_destination(dev: &Path, limits: &Limits) -> Result<Destination> {
    if let Some(disk) = crate::target_disk::find_windows_disk(
        "--device ",
        &dev.to_string_lossy(),
        &crate::devices::scan_system()?,
    )? {
        return disk_destination(disk, limits);
    }
    let (path, target, align) = match std::fs::metadata(dev) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let s = dev.to_string_lossy();
            if [r"\\.\", r"\\?\", "//./"].iter().any(|p| s.starts_with(p)) {
                bail!(
                    "{}: no such device; `benchboot devices` lists the cards this machine sees",
                    dev.display()
                );
            }
            let parent = dev.parent().filter(|p| !p.as_os_str().is_empty());
            if let Some(parent) = parent.filter(|p| !p.is_dir()) {
                bail!(
                    "--device {}: no such file, and its folder {} does not exist to create \
                     it in: give a card (`benchboot devices`) or a file in an existing folder",
                    dev.display(),
                    parent.display()
                );
            }
            let target = Target::File {
                exists: false,
                blank: true,
            };
            (dev.to_owned(), target, 4096)
        }
        Err(e) => return Err(e).with_context(|| format!("--device {}", dev.display())),
        Ok(meta) if meta.is_file() => {
            let target = Target::File {
                exists: true,
                blank: meta.len() == 0,
            };
            (dev.to_owned(), target, 4096)
        }
        Ok(_) => bail!(
            "--device {}: neither a disk nor a regular file; name the card \
             (\\\\.\\PhysicalDriveN or its drive letter, see `benchboot devices`) or an image \
             file",
            dev.display()
        ),
    };
    Ok(Destination {
        path,
        target,
        align,
    })
}

/// The destination of a whole disk, once the rules accept it.
///
/// # Errors
/// [`Refused`], with every reason.
fn disk_destination(device: Device, limits: &Limits) -> Result<Destination> {
    let unmount = check_device(&device, limits)?;
    let align = device.logical_block_size.clamp(512, CHUNK as u64) as usize;
    let path = os::raw_node(&device.path);
    Ok(Destination {
        path,
        target: Target::Disk {
            device: Box::new(device),
            unmount,
        },
        align,
    })
}

impl Plan {
    /// The plan in words: image, target, what is unmounted, the chunks, verification.
    pub fn describe(&self) -> String {
        let body_chunks = io::chunk_order(self.image_bytes).len().saturating_sub(1);
        let head = self.image_bytes.min(HEAD);
        let mut s = format!(
            "image    {} ({}, {} bytes)\n",
            self.image.display(),
            human_bytes(self.image_bytes),
            self.image_bytes
        );
        match &self.target {
            Target::File { exists, blank } => {
                let what = match (exists, blank) {
                    (false, _) => "new regular file",
                    (true, true) => "empty regular file",
                    (true, false) => "regular file, overwritten in place",
                };
                s += &format!("target   {} ({what})\n", self.path.display());
            }
            Target::Disk { device, unmount } => {
                s += &format!("target   {}\n", device.describe());
                let list: Vec<String> = unmount.iter().map(|p| p.display().to_string()).collect();
                if cfg!(windows) {
                    s += &format!(
                        "lock     {} volume(s), then dismount them{}\n",
                        device.partitions.len(),
                        if list.is_empty() {
                            String::new()
                        } else {
                            format!(" ({})", list.join(", "))
                        }
                    );
                } else {
                    s += &format!(
                        "unmount  {}\n",
                        if list.is_empty() {
                            "nothing is mounted".to_string()
                        } else {
                            list.join(", ")
                        }
                    );
                }
            }
        }
        if !self.write.known_blank {
            s += &format!(
                "write    1. {} of zeros at byte 0 (the old partition table goes first)\n",
                human_bytes(head)
            );
        }
        s += &format!(
            "write    {}{body_chunks} chunk(s) of up to {} from byte {head} on, {} aligned to {} B; \
             all-zero chunks {}\n",
            if self.write.known_blank { "1. " } else { "2. " },
            human_bytes(CHUNK as u64),
            if cfg!(windows) {
                "FILE_FLAG_NO_BUFFERING | FILE_FLAG_WRITE_THROUGH"
            } else {
                "O_DIRECT"
            },
            self.align,
            if self.write.skip_zeros { "skipped" } else { "written" },
        );
        s += &format!(
            "write    {}{sync}, then the first {} (MBR, partition table) last, {sync}\n",
            if self.write.known_blank { "2. " } else { "3. " },
            human_bytes(head),
            sync = if cfg!(windows) {
                "FlushFileBuffers"
            } else {
                "fsync"
            },
        );
        s += &if self.verify {
            format!(
                "verify   read {} back with the {} bypassed, compare SHA-256\n",
                human_bytes(self.image_bytes),
                if cfg!(windows) {
                    "system cache"
                } else {
                    "page cache"
                }
            )
        } else {
            "verify   skipped (--no-verify)\n".to_string()
        };
        s
    }
}

/// The two long phases, for progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Write,
    Verify,
}

/// What [`execute`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub write: WriteReport,
    /// `None` with `--no-verify`.
    pub verify: Option<VerifyReport>,
    /// Aligned writes went with `O_DIRECT`.
    pub direct: bool,
    /// Seconds spent writing (with the fsyncs) and verifying.
    pub write_seconds: f64,
    pub verify_seconds: f64,
}

/// Carries out `plan`: unmount (Windows: lock and dismount), open (`O_EXCL` on a disk;
/// [`os::open_target`]), write, verify. `progress` gets (phase, bytes done, bytes in the
/// phase).
///
/// # Errors
/// Unmount, open, write and verification failures, each naming the target and the fix.
pub fn execute(plan: &Plan, progress: &mut dyn FnMut(Phase, u64, u64)) -> Result<Outcome> {
    execute_with(plan, &mut os::open_target, progress)
}

/// What opens the target of a plan: (plan, exclusive) to the open target.
pub type Opener<'a> = dyn FnMut(&Plan, bool) -> std::io::Result<Box<dyn io::Target>> + 'a;

/// [`execute`] with the target opened by `open` (tests put a double with a raw disk's
/// rules between the engine and the file: host/tests/integration/flash_raw.rs).
///
/// # Errors
/// As [`execute`].
pub fn execute_with(
    plan: &Plan,
    open: &mut Opener<'_>,
    progress: &mut dyn FnMut(Phase, u64, u64),
) -> Result<Outcome> {
    let target = plan.path.display();
    // Windows: the volumes stay locked until the card is written and verified.
    let mut _held = None;
    let exclusive = match &plan.target {
        Target::Disk { device, unmount } => {
            _held = Some(os::unmount_all(device, unmount)?);
            true
        }
        Target::File { exists, blank } => {
            // Judged again as it is now: the question may have waited a long time.
            #[cfg(unix)]
            if *exists {
                let now = crate::identity::lookup(&plan.path, Path::new("/"))?;
                now.refuse_kernel_files("--device ", "name the card or an image file")?;
                now.refuse_in_use("--device ")?;
            }
            if !exists {
                File::create_new(&plan.path).with_context(|| format!("creating {target}"))?;
            }
            if *blank {
                let f = std::fs::OpenOptions::new().write(true).open(&plan.path)?;
                f.set_len(plan.image_bytes)
                    .with_context(|| format!("sizing {target}"))?;
            }
            false
        }
    };
    let mut disk = open(plan, exclusive).map_err(|e| os::open_error(&plan.path, e))?;
    let image =
        File::open(&plan.image).with_context(|| format!("opening {}", plan.image.display()))?;
    let len = plan.image_bytes;

    let t0 = Instant::now();
    let write = io::write_image(
        &image,
        len,
        &mut *disk,
        plan.align,
        plan.write,
        &mut |done| progress(Phase::Write, done, len),
    )
    .with_context(|| {
        format!(
            "writing {target} failed; its first 1 MiB is blank, so it will not boot \
             half-written: check the card and reader, then flash again"
        )
    })?;
    let write_seconds = t0.elapsed().as_secs_f64();

    let t1 = Instant::now();
    let verify = if plan.verify {
        let report = io::verify_image(&image, len, &mut *disk, plan.align, &mut |done| {
            progress(Phase::Verify, done, len)
        })
        .with_context(|| format!("{target}"))?;
        Some(report)
    } else {
        None
    };
    let direct = disk.is_direct();
    if let Err(e) = disk.finish() {
        // The card is written and verified: Windows reads its new layout when plugged again.
        crate::errln!(
            "warning: telling the system the card's layout changed failed ({e}): unplug it \
             and plug it in again to see its new volumes"
        );
    }
    drop(disk);
    #[cfg(target_os = "macos")]
    if let Target::Disk { device, .. } = &plan.target {
        os::eject(device);
    }
    Ok(Outcome {
        write,
        verify,
        direct,
        write_seconds,
        verify_seconds: t1.elapsed().as_secs_f64(),
    })
}

/// Asks on the terminal before erasing (the answer must be `yes`), unless `yes`.
///
/// # Errors
/// Not confirmed, or no terminal on stdin to ask on (then `--yes` is required); in
/// both cases nothing has been written.
pub fn confirm(plan: &Plan, yes: bool) -> Result<()> {
    if yes {
        return Ok(());
    }
    let what = match &plan.target {
        Target::Disk { device, .. } => device.describe(),
        Target::File { .. } => plan.path.display().to_string(),
    };
    confirm_erase(&what, &format!("write {}", plan.image.display()), yes)
}

/// `benchboot flash`: plan, print it, confirm, write with a progress bar (bytes,
/// MiB/s, ETA), verify, print what was done.
///
/// # Errors
/// See [`plan`], [`confirm`] and [`execute`].
pub fn run(opts: &Options) -> Result<()> {
    let plan = plan(opts, Path::new("/"))?;
    crate::out!("{}", plan.describe());
    if opts.dry_run {
        crate::outln!("dry run: nothing written");
        return Ok(());
    }
    confirm(&plan, opts.yes)?;
    let outcome = execute_with_progress(&plan)?;
    crate::out!("{}", done_lines(&plan, &outcome));
    Ok(())
}

/// `benchboot flash` as given on the command line: [`run`], with the `--probe` step
/// (after confirming, before writing: unmount, probe the card, refuse a fake one).
///
/// # Errors
/// See [`run`] and [`crate::probe::before_flash`].
pub fn run_args(args: &FlashArgs) -> Result<()> {
    if !args.probe.probe {
        return run(&args.into());
    }
    let opts: Options = args.into();
    let plan = plan(&opts, Path::new("/"))?;
    crate::out!("{}", plan.describe());
    if opts.dry_run {
        crate::outln!("dry run: nothing written (the card would be probed first)");
        return Ok(());
    }
    confirm(&plan, opts.yes)?;
    match &plan.target {
        Target::Disk { device, unmount } => {
            // Released before the write takes them again (a second lock of the same
            // volume would fail on Windows).
            let _held = os::unmount_all(device, unmount)?;
            crate::probe::before_flash(
                &plan.path,
                device.logical_block_size,
                plan.image_bytes,
                &args.probe,
            )?;
        }
        Target::File { .. } => crate::errln!(
            "--probe: {} is a file: nothing to probe",
            plan.path.display()
        ),
    }
    let outcome = execute_with_progress(&plan)?;
    crate::out!("{}", done_lines(&plan, &outcome));
    Ok(())
}

/// [`execute`] with a progress bar on stderr (bytes, MiB/s, ETA; drawn only on a
/// terminal).
///
/// # Errors
/// As [`execute`].
pub fn execute_with_progress(plan: &Plan) -> Result<Outcome> {
    use indicatif::{ProgressBar, ProgressStyle};
    let bar = ProgressBar::new(plan.image_bytes);
    bar.set_style(
        ProgressStyle::with_template(
            "{msg:6} [{bar:32}] {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} ETA {eta}",
        )
        .expect("progress template")
        .progress_chars("=> "),
    );
    let mut current = None;
    let outcome = execute(plan, &mut |phase, done, total| {
        if current != Some(phase) {
            current = Some(phase);
            bar.reset();
            bar.set_length(total);
            bar.set_message(match phase {
                Phase::Write => "write",
                Phase::Verify => "verify",
            });
        }
        bar.set_position(done);
    });
    bar.finish_and_clear();
    outcome
}

/// What was done, as `benchboot flash` prints it: bytes written (MiB/s, O_DIRECT or
/// buffered), zero chunks skipped, the verified SHA-256, and that a card can be removed.
pub fn done_lines(plan: &Plan, outcome: &Outcome) -> String {
    let mib_s = |bytes: u64, s: f64| benchboot_results::summary::mib_per_s(bytes, (s * 1e9) as u64);
    let mut s = format!(
        "wrote    {} in {:.1} s ({:.1} MiB/s, {}); {} of all-zero chunks skipped\n",
        human_bytes(outcome.write.bytes_written),
        outcome.write_seconds,
        mib_s(outcome.write.bytes_written, outcome.write_seconds),
        if outcome.direct && cfg!(target_os = "macos") {
            "F_NOCACHE on the raw node"
        } else if outcome.direct && cfg!(windows) {
            "unbuffered, write-through"
        } else if outcome.direct {
            "O_DIRECT"
        } else {
            "buffered + fsync"
        },
        human_bytes(outcome.write.bytes_skipped),
    );
    s += &match &outcome.verify {
        Some(v) => format!(
            "verified {} read back in {:.1} s ({:.1} MiB/s): SHA-256 {} matches the image\n",
            human_bytes(v.bytes),
            outcome.verify_seconds,
            mib_s(v.bytes, outcome.verify_seconds),
            v.sha256
        ),
        None => "not verified (--no-verify)\n".to_string(),
    };
    if let Target::Disk { device, .. } = &plan.target {
        s += &format!("done: {} can be removed\n", device.path.display());
    }
    s
}
