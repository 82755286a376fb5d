//! Every command that writes a disk or a file the user names judges it by identity
//! (`host/src/identity.rs`), on real kernel objects: a card image attached to a loop
//! device with its first partition mounted, a symlink and a second device node to
//! that disk, its partition by path and by a label-style link, the image file itself
//! and a hard link to it, a loop device over a file on the card, a removed backing
//! file, a swap file, a file attached after flash's plan, files of proc and sysfs, and
//! the layers of an overlay a loop device reads through (mounted with `overlay`).
//! Each case was accepted (or refused for another reason) before the lookup went by
//! identity. The last test keeps the invariant: every open for writing in `host/src`
//! is listed with the function its path comes from, which looks the path up.
//!
//! The loop-device tests need root, losetup, partx, mkfs.ext4 and mount(8): under CI
//! (`CI=true`, which runs as root) they fail without them; elsewhere they print
//! `SKIPPED` and pass. Mounts and loop devices go on drop, also on panic.

use std::path::{Path, PathBuf};
use std::process::Command;

use benchboot::identity::{self, What};
use benchboot::plan::write;
use benchboot::prepare_disk::{self, PrepareDiskArgs};
use benchboot::{flash, probe};
use benchboot_image::plans::PlanText;

use crate::plan_write::{card, card_plan};

const OLD_PLAN: &str = "# the old plan\n";

/// The loop-device tests one at a time: each lookup scans every loop device of the
/// machine, so a test's half-made loop (attached, its file just removed) would be one
/// more reason in another test's refusal.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// This machine can run a loop-device test: the guard that keeps the others waiting
/// while it runs; otherwise `None` (fails under CI and prints `SKIPPED` elsewhere: the
/// rule of `tests/src/needs.rs`).
fn can_run(test: &str) -> Option<std::sync::MutexGuard<'static, ()>> {
    let tools = [
        "losetup",
        "partx",
        "mkfs.ext4",
        "mount",
        "umount",
        "mkswap",
        "swapon",
    ];
    let mut missing: Vec<String> = tools
        .into_iter()
        .filter(|t| prepare_disk::find_tool(t).is_none())
        .map(str::to_owned)
        .collect();
    if !rustix::process::geteuid().is_root() {
        missing.push("root".into());
    }
    if missing.is_empty() {
        return Some(
            SERIAL
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
    }
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
    let what = format!("needs {}", missing.join(", "));
    assert!(
        !ci,
        "{test}: {what}; under CI (CI=true) this fails instead of skipping: run the tests \
         as root with util-linux and e2fsprogs installed"
    );
    eprintln!("SKIPPED {test}: {what}");
    None
}

fn run(tool: &str, args: &[&str]) -> String {
    let path = prepare_disk::find_tool(tool).unwrap_or_else(|| tool.into());
    let out = Command::new(path).args(args).output().unwrap();
    assert!(out.status.success(), "{tool} {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Loop devices attached and filesystems mounted by a test, undone on drop (mounts
/// first, the newest first).
#[derive(Default)]
struct Kernel {
    mounts: Vec<PathBuf>,
    loops: Vec<PathBuf>,
    swaps: Vec<PathBuf>,
}

impl Kernel {
    /// Attaches `file` to a free loop device; with `parts`, its partitions appear as
    /// `<dev>p1`.. (the kernel's scan, else partx's).
    fn attach(&mut self, file: &Path, parts: bool) -> PathBuf {
        let mut args = vec!["--find", "--show"];
        if parts {
            args.push("--partscan");
        }
        args.push(s(file));
        let dev = PathBuf::from(run("losetup", &args));
        self.loops.push(dev.clone());
        if parts {
            let p1 = PathBuf::from(format!("{}p1", dev.display()));
            if !p1.exists() {
                run("partx", &["--add", s(&dev)]);
            }
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
            while !p1.exists() {
                assert!(
                    std::time::Instant::now() < deadline,
                    "{} never appeared",
                    p1.display()
                );
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }
        dev
    }

    /// Attaches `file` read-only (`losetup -r`): through an overlay, nothing is copied
    /// up.
    fn attach_read_only(&mut self, file: &Path) -> PathBuf {
        let dev = PathBuf::from(run(
            "losetup",
            &["--find", "--show", "--read-only", s(file)],
        ));
        self.loops.push(dev.clone());
        dev
    }

    /// Mounts an overlay of `lower` under `upper` at `at` (`options` besides the
    /// layers), `mount` run in `cwd`: relative layer names are relative to it.
    fn overlay(&mut self, cwd: &Path, layers: [&str; 3], options: &str, at: &Path) {
        std::fs::create_dir_all(at).unwrap();
        let [lower, upper, work] = layers;
        let opts = format!("lowerdir={lower},upperdir={upper},workdir={work}{options}");
        let tool = prepare_disk::find_tool("mount").unwrap();
        let out = Command::new(tool)
            .current_dir(cwd)
            .args(["-t", "overlay", "overlay", "-o", &opts, s(at)])
            .output()
            .unwrap();
        assert!(out.status.success(), "mount overlay {opts}: {out:?}");
        self.mounts.push(at.to_owned());
    }

    fn mount(&mut self, dev: &Path, at: &Path) {
        std::fs::create_dir_all(at).unwrap();
        run("mount", &[s(dev), s(at)]);
        self.mounts.push(at.to_owned());
    }

    /// Detaches loop device `dev` (before its overlay is unmounted: it holds a file
    /// there).
    fn detach(&mut self, dev: &Path) {
        run("losetup", &["-d", s(dev)]);
        self.loops.retain(|l| l != dev);
    }

    fn umount(&mut self, at: &Path) {
        run("umount", &[s(at)]);
        self.mounts.retain(|m| m != at);
    }
}

impl Drop for Kernel {
    fn drop(&mut self) {
        for f in &self.swaps {
            let _ = Command::new("swapoff").arg(f).status();
        }
        for m in self.mounts.iter().rev() {
            let ok = Command::new("umount")
                .arg(m)
                .status()
                .is_ok_and(|s| s.success());
            if !ok {
                let _ = Command::new("umount").arg("-l").arg(m).status();
            }
        }
        for l in self.loops.iter().rev() {
            let _ = Command::new("losetup").arg("-d").arg(l).status();
        }
    }
}

/// A benchboot card image (p1 `BOOT`, p2 the FAT `BBRESULTS` with image.json and an
/// old plan) attached to a loop device, p1 made ext4 and mounted at `boot`.
struct Card {
    kernel: Kernel,
    image: PathBuf,
    dev: PathBuf,
    p1: PathBuf,
    p2: PathBuf,
    boot: PathBuf,
    dir: tempfile::TempDir,
}

impl Card {
    fn new() -> Card {
        let dir = tempfile::tempdir().unwrap();
        let image = card(dir.path(), "qemu-virt-arm64");
        let mut kernel = Kernel::default();
        let dev = kernel.attach(&image, true);
        let p1 = PathBuf::from(format!("{}p1", dev.display()));
        let p2 = PathBuf::from(format!("{}p2", dev.display()));
        run("mkfs.ext4", &["-q", "-F", "-L", "BOOT", s(&p1)]);
        let boot = dir.path().join("media/BOOT");
        kernel.mount(&p1, &boot);
        Card {
            kernel,
            image,
            dev,
            p1,
            p2,
            boot,
            dir,
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The disk as `benchboot devices` describes it.
    fn described(&self) -> String {
        format!("{} (virtual, 24 MiB)", self.dev.display())
    }
}

fn quick() -> PlanText {
    PlanText::from_arg("quick").unwrap()
}

fn err(r: anyhow::Result<impl std::fmt::Debug>) -> String {
    format!("{:#}", r.expect_err("refused"))
}

#[test]
fn plan_write_refuses_a_link_to_a_mounted_card() {
    let Some(_serial) = can_run("plan_write_refuses_a_link_to_a_mounted_card") else {
        return;
    };
    let c = Card::new();
    // As /dev/disk/by-id/usb-... is: another name of /dev/loopN.
    let link = c.path("usb-Generic_STORAGE_DEVICE-0:0");
    std::os::unix::fs::symlink(&c.dev, &link).unwrap();
    let e = err(write(&link, &quick()));
    assert_eq!(
        e,
        format!(
            "--card {} is {}: {} is mounted at {}: give that folder as --card (the results \
             partition, BBRESULTS), or unmount the card first",
            link.display(),
            c.described(),
            c.p1.display(),
            c.boot.display()
        )
    );
    assert_eq!(
        card_plan(&c.image),
        OLD_PLAN,
        "nothing written behind the mount"
    );
}

#[test]
fn plan_write_refuses_a_second_node_of_a_mounted_card() {
    let Some(_serial) = can_run("plan_write_refuses_a_second_node_of_a_mounted_card") else {
        return;
    };
    let c = Card::new();
    // mknod: the same major:minor under another name, in another folder.
    let node = c.path("card-node");
    let rdev = {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(&c.dev).unwrap().rdev()
    };
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &node,
        rustix::fs::FileType::BlockDevice,
        rustix::fs::Mode::from_raw_mode(0o600),
        rdev,
    )
    .unwrap();
    let e = err(write(&node, &quick()));
    assert!(
        e.starts_with(&format!(
            "--card {} is {}: {} is mounted at {}",
            node.display(),
            c.described(),
            c.p1.display(),
            c.boot.display()
        )),
        "{e}"
    );
    assert_eq!(card_plan(&c.image), OLD_PLAN);
}

#[test]
fn plan_write_names_a_partition_its_disk_and_its_mount() {
    let Some(_serial) = can_run("plan_write_names_a_partition_its_disk_and_its_mount") else {
        return;
    };
    let c = Card::new();
    // The partition's own node, mounted.
    let e = err(write(&c.p1, &quick()));
    assert_eq!(
        e,
        format!(
            "--card {p1} is partition 1 of {disk}, mounted at {boot}: give that folder as \
             --card: --card {boot}",
            p1 = c.p1.display(),
            disk = c.described(),
            boot = c.boot.display()
        )
    );
    // As /dev/disk/by-label/BOOT names it.
    let by_label = c.path("by-label");
    std::fs::create_dir(&by_label).unwrap();
    std::os::unix::fs::symlink(&c.p1, by_label.join("BOOT")).unwrap();
    let e = err(write(&by_label.join("BOOT"), &quick()));
    assert_eq!(
        e,
        format!(
            "--card {link} is {p1}, partition 1 of {disk}, mounted at {boot}: give that \
             folder as --card: --card {boot}",
            link = by_label.join("BOOT").display(),
            p1 = c.p1.display(),
            disk = c.described(),
            boot = c.boot.display()
        )
    );
    // The results partition, not mounted: the whole card is what plan write takes.
    let e = err(write(&c.p2, &quick()));
    assert!(
        e.starts_with(&format!(
            "--card {} is partition 2 of {}: name the whole card, --card {}",
            c.p2.display(),
            c.described(),
            c.dev.display()
        )),
        "{e}"
    );
    assert_eq!(card_plan(&c.image), OLD_PLAN);
}

#[test]
fn a_file_backing_a_mounted_loop_device_is_refused_by_every_command() {
    let Some(_serial) = can_run("a_file_backing_a_mounted_loop_device_is_refused_by_every_command")
    else {
        return;
    };
    let c = Card::new();
    // The image file under its own name and under a hard link: one file, one identity.
    let alias = c.path("alias.img");
    std::fs::hard_link(&c.image, &alias).unwrap();
    for file in [&c.image, &alias] {
        let why = format!(
            "it is the backing file of loop device {dev}, mounted at {boot}: writing it would \
             destroy that filesystem; unmount it and detach {dev} first (`umount {boot}`, \
             `losetup -d {dev}`)",
            dev = c.dev.display(),
            boot = c.boot.display()
        );
        let e = err(flash::check_destination(file, false, Path::new("/")));
        assert_eq!(
            e,
            format!("refusing to write --device {}:\n  - {why}", file.display())
        );
        let args = PrepareDiskArgs {
            device: file.clone(),
            dry_run: true,
            allow_large: false,
            yes: true,
        };
        let e = err(prepare_disk::plan(&args, Path::new("/")));
        assert_eq!(
            e,
            format!("refusing to write {}:\n  - {why}", file.display())
        );
        let e = err(write(file, &quick()));
        assert_eq!(
            e,
            format!("refusing to write --card {}:\n  - {why}", file.display())
        );
    }
    assert_eq!(card_plan(&c.image), OLD_PLAN);
}

#[test]
fn a_loop_device_over_a_file_on_the_card_holds_it() {
    let Some(_serial) = can_run("a_loop_device_over_a_file_on_the_card_holds_it") else {
        return;
    };
    let mut c = Card::new();
    let inner = c.boot.join("inner.img");
    std::fs::File::create(&inner)
        .unwrap()
        .set_len(8 << 20)
        .unwrap();
    run("mkfs.ext4", &["-q", "-F", s(&inner)]);
    let loop2 = c.kernel.attach(&inner, false);
    let name2 = loop2.file_name().unwrap().to_str().unwrap().to_owned();
    let p1 = c.p1.file_name().unwrap().to_str().unwrap().to_owned();
    let at = c.path("inner");
    c.kernel.mount(&loop2, &at);
    // probe (virtual allowed): the card's /media/BOOT cannot be unmounted under it.
    let e = err(probe::check_card(&c.dev, false, true, Path::new("/")));
    let mounted = format!(
        "{} is mounted through {name2}, which sits on {p1}: unmount it and detach {name2} \
         (`losetup -d {}`) first",
        at.display(),
        loop2.display()
    );
    assert!(e.contains(&mounted), "{e}");
    // flash and prepare-disk say it too, beside the virtual disk.
    let e = err(flash::check_destination(&c.dev, false, Path::new("/")));
    assert!(e.contains(&mounted), "{e}");
    let args = PrepareDiskArgs {
        device: c.dev.clone(),
        dry_run: true,
        allow_large: false,
        yes: true,
    };
    assert!(err(prepare_disk::plan(&args, Path::new("/"))).contains(&mounted));
    // Attached but not mounted: it still holds the file, so the card's filesystem.
    c.kernel.umount(&at);
    let e = err(probe::check_card(&c.dev, false, true, Path::new("/")));
    assert!(
        e.contains(&format!(
            "{name2} is a loop device over {}, a file on {p1}: detach {name2} (`losetup -d {}`) \
             first",
            inner.display(),
            loop2.display()
        )),
        "{e}"
    );
}

#[test]
fn a_removed_backing_file_is_still_known_by_its_inode() {
    let Some(_serial) = can_run("a_removed_backing_file_is_still_known_by_its_inode") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("first.img");
    let second = dir.path().join("second.img");
    std::fs::File::create(&first)
        .unwrap()
        .set_len(4 << 20)
        .unwrap();
    std::fs::hard_link(&first, &second).unwrap();
    let mut kernel = Kernel::default();
    let dev = kernel.attach(&first, false);
    std::fs::remove_file(&first).unwrap();
    // The kernel names it `.../first.img (deleted)`; second.img is the same inode.
    let e = err(flash::check_destination(&second, false, Path::new("/")));
    assert_eq!(
        e,
        format!(
            "refusing to write --device {second}:\n  - it is the backing file of loop device \
             {dev}: writing it would change that disk under whoever uses it; detach it first \
             (`losetup -d {dev}`)",
            second = second.display(),
            dev = dev.display()
        )
    );
    // Another file of the same folder is not it.
    let other = dir.path().join("other.img");
    std::fs::write(&other, b"").unwrap();
    flash::check_destination(&other, false, Path::new("/")).unwrap();
}

#[test]
fn a_file_attached_while_the_question_waits_is_not_written() {
    let Some(_serial) = can_run("a_file_attached_while_the_question_waits_is_not_written") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let image = dir.path().join("image.img");
    std::fs::write(&image, crate::image_noise(2 << 20, 7)).unwrap();
    let target = dir.path().join("card.img");
    std::fs::write(&target, vec![0x5a; 4 << 20]).unwrap();
    let opts = flash::Options {
        image,
        device: target.clone(),
        dry_run: false,
        verify: true,
        skip_zeros: false,
        allow_large: false,
        yes: true,
    };
    let plan = flash::plan(&opts, Path::new("/")).unwrap();
    // Between the plan (and its question) and the write, the file is attached.
    let mut kernel = Kernel::default();
    let dev = kernel.attach(&target, false);
    let e = err(flash::execute(&plan, &mut |_, _, _| {}));
    assert!(
        e.starts_with(&format!(
            "refusing to write --device {}:\n  - it is the backing file of loop device {}",
            target.display(),
            dev.display()
        )),
        "{e}"
    );
    assert!(
        std::fs::read(&target).unwrap().iter().all(|&b| b == 0x5a),
        "not a byte written"
    );
}

#[test]
fn an_active_swap_file_is_refused() {
    let Some(_serial) = can_run("an_active_swap_file_is_refused") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let swap = dir.path().join("swapfile");
    std::fs::write(&swap, vec![0u8; 4 << 20]).unwrap();
    std::fs::set_permissions(&swap, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    run("mkswap", &[s(&swap)]);
    let mut kernel = Kernel::default();
    run("swapon", &[s(&swap)]);
    kernel.swaps.push(swap.clone());
    let alias = dir.path().join("card.img");
    std::fs::hard_link(&swap, &alias).unwrap();
    for file in [&swap, &alias] {
        let e = err(flash::check_destination(file, false, Path::new("/")));
        assert_eq!(
            e,
            format!(
                "refusing to write --device {f}:\n  - it is an active swap file: writing it \
                 would corrupt what is swapped out; `swapoff {f}` first, or name another file",
                f = file.display()
            )
        );
    }
}

/// An overlay's folders under `dir`: `lower` (with a card image in `sub/card.img`),
/// `upper`, `work`, and `merged`, where nothing is mounted yet.
fn overlay_folders(dir: &Path) -> PathBuf {
    for d in ["lower/sub", "upper", "work", "merged"] {
        std::fs::create_dir_all(dir.join(d)).unwrap();
    }
    let image = card(dir, "qemu-virt-arm64");
    let lower = dir.join("lower/sub/card.img");
    std::fs::rename(image, &lower).unwrap();
    lower
}

#[test]
fn a_layer_of_an_overlay_a_loop_device_reads_is_refused() {
    let Some(_serial) = can_run("a_layer_of_an_overlay_a_loop_device_reads_is_refused") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().canonicalize().unwrap();
    let lower = overlay_folders(&dir);
    let merged = dir.join("merged");
    let mut kernel = Kernel::default();
    let abs = |d: &str| dir.join(d).to_str().unwrap().to_owned();
    // redirect_dir: a folder of a lower layer can be renamed through the overlay.
    kernel.overlay(
        &dir,
        [&abs("lower"), &abs("upper"), &abs("work")],
        ",redirect_dir=on",
        &merged,
    );
    // Read-only: the loop device reads the lower layer's file, nothing is copied up; the
    // loop device and the lower file stat with the same inode, on other devices.
    let through = merged.join("sub/card.img");
    let dev = kernel.attach_read_only(&through);
    let why = |backing: &Path| {
        format!(
            "through the overlay mounted at {merged}, it is the backing file of loop device \
             {dev} ({backing}): writing it would change that disk under whoever uses it; \
             detach it first (`losetup -d {dev}`)",
            merged = merged.display(),
            dev = dev.display(),
            backing = backing.display()
        )
    };
    let e = err(flash::check_destination(&lower, false, Path::new("/")));
    assert_eq!(
        e,
        format!(
            "refusing to write --device {}:\n  - {}",
            lower.display(),
            why(&through)
        )
    );
    let e = err(write(&lower, &quick()));
    assert_eq!(
        e,
        format!(
            "refusing to write --card {}:\n  - {}",
            lower.display(),
            why(&through)
        )
    );
    // A hard link to the lower file, in a folder outside the overlay: the same inode.
    let alias = dir.join("alias.img");
    std::fs::hard_link(&lower, &alias).unwrap();
    let e = err(flash::check_destination(&alias, false, Path::new("/")));
    assert!(e.ends_with(&why(&through)), "{e}");
    kernel.detach(&dev);

    // A renamed folder: the loop device's name for the file is nowhere in the lower
    // layer, where the file is found by its inode.
    std::fs::rename(merged.join("sub"), merged.join("moved")).unwrap();
    let renamed = merged.join("moved/card.img");
    let dev = kernel.attach_read_only(&renamed);
    assert!(!dir.join("lower/moved").exists());
    let e = err(flash::check_destination(&lower, false, Path::new("/")));
    assert!(
        e.contains(&format!(
            "through the overlay mounted at {}, it is the backing file of loop device {} ({})",
            merged.display(),
            dev.display(),
            renamed.display()
        )),
        "{e}"
    );
    kernel.detach(&dev);

    // The other way: a file only in the upper layer, attached there; a write to it
    // through the overlay reaches that file.
    let upper = dir.join("upper/up.img");
    std::fs::write(&upper, vec![0x5a; 1 << 20]).unwrap();
    let dev = kernel.attach_read_only(&upper);
    let e = err(flash::check_destination(
        &merged.join("up.img"),
        false,
        Path::new("/"),
    ));
    assert_eq!(
        e,
        format!(
            "refusing to write --device {}:\n  - through the overlay mounted at {}, it is the \
             backing file of loop device {dev} ({}): writing it would change that disk under \
             whoever uses it; detach it first (`losetup -d {dev}`)",
            merged.join("up.img").display(),
            merged.display(),
            upper.display(),
            dev = dev.display()
        )
    );
    kernel.detach(&dev);
    // A file of the lower layer no loop device reads is written as ever.
    let other = dir.join("lower/other.img");
    std::fs::write(&other, b"").unwrap();
    flash::check_destination(&other, false, Path::new("/")).unwrap();
    assert_eq!(card_plan(&lower), OLD_PLAN);
}

#[test]
fn an_overlay_with_relative_layers_is_judged_by_inode() {
    let Some(_serial) = can_run("an_overlay_with_relative_layers_is_judged_by_inode") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().canonicalize().unwrap();
    let lower = overlay_folders(&dir);
    let merged = dir.join("merged");
    let mut kernel = Kernel::default();
    // As `mount -o lowerdir=lower,...` in `dir` names them: the kernel shows the names
    // as given, relative to a folder it does not say.
    kernel.overlay(&dir, ["lower", "upper", "work"], "", &merged);
    let through = merged.join("sub/card.img");
    let dev = kernel.attach_read_only(&through);
    let e = err(flash::check_destination(&lower, false, Path::new("/")));
    assert_eq!(
        e,
        format!(
            "refusing to write --device {lower}:\n  - loop device {dev} reads {through} on the \
             overlay mounted at {merged}, whose layers are named relative to where it was \
             mounted (upper, lower), so they cannot be found: this file has the same inode \
             number and may be that file in a layer; detach it first (`losetup -d {dev}`), or \
             mount the overlay with absolute layer paths",
            lower = lower.display(),
            dev = dev.display(),
            through = through.display(),
            merged = merged.display()
        )
    );
    let args = PrepareDiskArgs {
        device: lower.clone(),
        dry_run: true,
        allow_large: false,
        yes: true,
    };
    assert!(err(prepare_disk::plan(&args, Path::new("/"))).contains("may be that file in a layer"));
    // Another file of the lower layer has another inode.
    let other = dir.join("lower/other.img");
    std::fs::write(&other, b"").unwrap();
    flash::check_destination(&other, false, Path::new("/")).unwrap();
    assert_eq!(card_plan(&lower), OLD_PLAN);
    kernel.detach(&dev);
}

#[test]
fn probe_points_a_loop_device_at_allow_virtual() {
    let Some(_serial) = can_run("probe_points_a_loop_device_at_allow_virtual") else {
        return;
    };
    let c = Card::new();
    let e = err(probe::check_card(&c.dev, false, false, Path::new("/")));
    assert!(
        e.contains(&format!(
            "a loop device over {}, not a card; pass --allow-virtual to probe it anyway",
            c.image.display()
        )),
        "{e}"
    );
    assert!(!e.contains("--device"), "{e}");
}

#[test]
fn the_kernels_own_files_are_refused_by_statfs_magic() {
    // proc and sysfs: regular files as stat(2) says, never a card or an image.
    for (file, fs) in [
        (
            "/proc/self/status",
            "proc, the kernel's process information, statfs magic 0x9fa0",
        ),
        (
            "/sys/kernel/uevent_seqnum",
            "sysfs, the kernel's device tree, statfs magic 0x62656572",
        ),
    ] {
        let e = err(flash::check_destination(
            Path::new(file),
            false,
            Path::new("/"),
        ));
        assert_eq!(
            e,
            format!(
                "--device {file} is on {fs}: the kernel's own files, never written; name the \
                 card (`benchboot devices`) or an image file"
            )
        );
        let args = PrepareDiskArgs {
            device: file.into(),
            dry_run: true,
            allow_large: false,
            yes: true,
        };
        let e = err(prepare_disk::plan(&args, Path::new("/")));
        assert!(e.starts_with(&format!("{file} is on {fs}")), "{e}");
        let e = err(write(Path::new(file), &quick()));
        assert!(e.starts_with(&format!("--card {file} is on {fs}")), "{e}");
    }
    // A folder of sysfs as the card's results folder.
    let e = err(write(Path::new("/sys/kernel"), &quick()));
    assert!(
        e.starts_with("--card /sys/kernel is on sysfs, the kernel's device tree"),
        "{e}"
    );
    // A file about to be created in /dev (devtmpfs, tmpfs's magic): no such device.
    let found = identity::lookup(Path::new("/dev/benchboot-none"), Path::new("/")).unwrap();
    match &found.what {
        What::New { fs, .. } => assert_eq!(fs.kernel_own(), Some("devtmpfs, the device nodes")),
        w => panic!("{w:?}"),
    }
}

/// A gate: the file and function whose answer is the path an open takes.
type Gate = (&'static str, &'static str);

/// Every place `host/src` opens something for writing (outside its tests), with the
/// function whose answer is the path it opens; `None` for the files a command makes
/// itself. A gate must go through the identity lookup (Windows: its own disk names).
const WRITE_OPENS: &[(&str, &str, Option<Gate>)] = &[
    // flash and field-test: the card or image file of flash::plan.
    (
        "flash/io.rs",
        "open_with(",
        Some(("flash/mod.rs", "check_destination")),
    ),
    (
        "flash/io.rs",
        ".write(true)",
        Some(("flash/mod.rs", "check_destination")),
    ),
    (
        "flash/mod.rs",
        "File::create_new(&plan.path)",
        Some(("flash/mod.rs", "check_destination")),
    ),
    (
        "flash/mod.rs",
        ".write(true).open(&plan.path)",
        Some(("flash/mod.rs", "check_destination")),
    ),
    (
        "flash/os.rs",
        "open_unbuffered(&plan.path",
        Some(("flash/mod.rs", "windows_destination")),
    ),
    // probe and flash --probe: the card of probe::check_card (flash's, checked above).
    (
        "probe/disk.rs",
        "open_with(",
        Some(("probe.rs", "lookup_card")),
    ),
    (
        "probe/disk.rs",
        ".write(true)",
        Some(("probe.rs", "lookup_card")),
    ),
    (
        "probe/disk.rs",
        "open_unbuffered(path, true)",
        Some(("probe.rs", "check_card")),
    ),
    (
        "probe/disk.rs",
        "open_unbuffered(&path, true)",
        Some(("probe.rs", "check_card")),
    ),
    // prepare-disk: the disk or file of its plan.
    (
        "prepare_disk.rs",
        ".write(true)",
        Some(("prepare_disk.rs", "plan")),
    ),
    // plan write --card: the card or image file, after check_card.
    (
        "plan.rs",
        "OpenOptions::new()",
        Some(("plan.rs", "check_card")),
    ),
    // Read-only: collect --from-card on Windows.
    ("collect.rs", "open_unbuffered(path, false)", None),
    // Files a command makes itself: a temp file beside -o's, renamed over it; the
    // store's rebuilt index; a plot's SVG in the plot folder.
    ("atomic_file.rs", "File::create(&tmp)", None),
    ("store/recover.rs", "File::create(&tmp)", None),
    // The store's lock file (opened without following a link planted there).
    ("store/lock.rs", ".write(true)", None),
    ("plot.rs", "std::fs::write(&svg", None),
];

/// What opens a file for writing (or creates one).
const OPENS: &[&str] = &[
    "OpenOptions::new()",
    ".write(true)",
    ".append(true)",
    "File::create",
    "create_new",
    "open_with(",
    "open_unbuffered(",
    "fs::write(",
];

/// The non-test `.rs` files under `dir`, with their text up to an inline test module.
fn sources(dir: &Path, base: &Path, out: &mut Vec<(String, String)>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_str().unwrap().to_owned();
        if p.is_dir() {
            if name != "tests" {
                sources(&p, base, out);
            }
        } else if name.ends_with(".rs") && name != "tests.rs" {
            let text = std::fs::read_to_string(&p).unwrap();
            let text = match test_module(&text) {
                Some(i) => text[..i].to_owned(),
                None => text,
            };
            let rel = p
                .strip_prefix(base)
                .unwrap()
                .to_str()
                .unwrap()
                .replace('\\', "/");
            out.push((rel, text));
        }
    }
}

/// Where the inline test module starts: a `mod tests {` line under a `#[cfg(...)]` line
/// that names `test` (`#[cfg(test)]`, `#[cfg(all(test, unix))]`).
fn test_module(text: &str) -> Option<usize> {
    let mut at = 0;
    let mut last = "";
    for line in text.split_inclusive('\n') {
        if line.starts_with("mod tests {") && last.starts_with("#[cfg(") && last.contains("test") {
            return Some(at - last.len());
        }
        at += line.len();
        last = line;
    }
    None
}

/// The text of top-level or impl function `name` in `text`, to its closing brace.
fn body<'a>(text: &'a str, name: &str) -> &'a str {
    let start = text
        .find(&format!("fn {name}("))
        .unwrap_or_else(|| panic!("no fn {name}"));
    let rest = &text[start..];
    let end = rest
        .find("\n}\n")
        .or_else(|| rest.find("\n    }\n"))
        .unwrap_or(rest.len());
    &rest[..end]
}

#[test]
fn no_write_path_opens_a_target_without_the_identity_lookup() {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&base, &base, &mut files);
    let text_of = |f: &str| {
        &files
            .iter()
            .find(|(n, _)| n == f)
            .unwrap_or_else(|| panic!("host/src/{f} is gone"))
            .1
    };
    let mut unlisted = Vec::new();
    let mut used = vec![false; WRITE_OPENS.len()];
    for (file, text) in &files {
        for (n, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("//") || !OPENS.iter().any(|o| line.contains(o)) {
                continue;
            }
            // An open spread over lines: the call and its options.
            let near: String = text.lines().skip(n).take(3).collect();
            match WRITE_OPENS
                .iter()
                .position(|(f, needle, _)| f == file && near.contains(needle))
            {
                Some(i) => used[i] = true,
                None => unlisted.push(format!("host/src/{file}:{}: {}", n + 1, line.trim())),
            }
        }
    }
    assert!(
        unlisted.is_empty(),
        "opened for writing without a gate listed in WRITE_OPENS (look the path up with \
         benchboot::identity::lookup first, and list it):\n{}",
        unlisted.join("\n")
    );
    for ((file, needle, gate), used) in WRITE_OPENS.iter().zip(used) {
        assert!(used, "stale WRITE_OPENS entry: {file} {needle}");
        if let Some((gate_file, gate_fn)) = gate {
            let b = body(text_of(gate_file), gate_fn);
            assert!(
                b.contains("identity::lookup") || b.contains("find_windows_disk"),
                "{gate_file} {gate_fn} (the gate of {file}'s {needle}) does not look the path \
                 up by identity"
            );
        }
    }
    // plan write opens the card in CardTarget::open, for writing after check_card.
    let open = body(text_of("plan.rs"), "open");
    assert!(
        open.find("check_card(").unwrap() < open.find(".write(write)").unwrap(),
        "{open}"
    );
    // storage --path writes test files into a folder it looked up.
    assert!(body(text_of("storage.rs"), "run").contains("identity::lookup"));
}
