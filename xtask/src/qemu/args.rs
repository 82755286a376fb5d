//! QEMU's command line for a board: its machine and boot arguments (the kernel and
//! initramfs taken off the built card, or none when the machine boots its card), the
//! card copy QEMU writes to, the disks, the console and the NIC with its forwards.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use benchboot_board::{Board, Qemu, QemuBoot, QemuDrive, QemuNetwork};

use super::wired::WiredStandIns;
use super::{
    append, build_host_tool, card_image_path, card_stand_in, has_machine, with_console, Options,
};
use crate::dtb::apply_dtb_fixups;
use crate::image::{self, INITRAMFS_FILE, KERNEL_FILE};
use benchboot_image::layout::{self, Role};
use benchboot_plan::RESULTS_PORT;

/// `-kernel`, `-initrd`, `-dtb` and `-append` for `qemu.boot = "kernel"`: the kernel,
/// initramfs and DTB are taken from the built card's boot partition (the DTB with
/// `qemu.dtb-fixups` applied in a QEMU-only copy), the command line from its cmdline.txt.
pub(super) fn kernel_boot_args(
    board: &Board,
    q: &Qemu,
    card: &Path,
    work: &Path,
) -> Result<Vec<String>> {
    let layout = layout::plan(&layout::Spec::default())?;
    let boot = layout
        .part(Role::Boot)
        .context("layout has no boot partition")?;
    let kernel = work.join(KERNEL_FILE);
    let initrd = work.join(INITRAMFS_FILE);
    std::fs::write(&kernel, image::read_fat_file(card, boot, KERNEL_FILE)?)?;
    std::fs::write(&initrd, image::read_fat_file(card, boot, INITRAMFS_FILE)?)?;
    let cmdline = String::from_utf8(image::read_fat_file(card, boot, "cmdline.txt")?)?;
    let mut args: Vec<String> = vec![
        "-kernel".into(),
        kernel.display().to_string(),
        "-initrd".into(),
        initrd.display().to_string(),
        "-append".into(),
        append(&cmdline, &q.append),
    ];
    if let Some(name) = &board.kernel.dtb {
        let card_dtb = image::read_fat_file(card, boot, name)?;
        let path = work.join(name);
        std::fs::write(&path, apply_dtb_fixups(&card_dtb, &q.dtb_fixups)?)?;
        args.extend(["-dtb".into(), path.display().to_string()]);
    }
    Ok(args)
}

/// The board's `[qemu]` section, once the installed QEMU has its machine and the run's
/// extra and USB disks can be attached to it: refused before anything is built.
pub(super) fn qemu_of<'a>(board: &'a Board, opts: &Options) -> Result<&'a Qemu> {
    let Some(q) = &board.qemu else {
        bail!(
            "boards/{}.toml has no [qemu] section: this board cannot boot in QEMU",
            board.name
        );
    };
    if !has_machine(&q.system, &q.machine) {
        bail!(
            "{} has no `{}` machine (or is not installed): boards/{}.toml needs it; \
             `{0} -M help` lists the machines (QEMU 10 from bookworm-backports has bpim2u)",
            q.system,
            q.machine,
            board.name
        );
    }
    if !opts.extra_disks.is_empty() && q.drive != QemuDrive::Virtio {
        bail!(
            "boards/{}.toml: extra disks are attached to virtio machines only (qemu.drive = \"virtio\")",
            board.name
        );
    }
    if !opts.usb_disks.is_empty() && q.machine != "virt" {
        bail!(
            "boards/{}.toml: USB disks are plugged into qemu-xhci, a PCI device: machine `{}` \
             has no PCI bus for it (use a `virt` board)",
            board.name,
            q.machine
        );
    }
    Ok(q)
}

/// QEMU's boot arguments (`-kernel`, `-append`, ... or none when the machine boots its
/// card), the QEMU-only card a card boot needs, and the plan the run names.
pub(super) fn boot_args<'o>(
    board: &Board,
    q: &Qemu,
    opts: &'o Options,
    built: &image::Built,
    work: &Path,
) -> Result<(Vec<String>, Option<image::Built>, &'o str)> {
    let (mut boot_args, qemu_card) = match q.boot {
        QemuBoot::Kernel => (kernel_boot_args(board, q, &built.image, work)?, None),
        // The machine's boot ROM runs the loader of a QEMU-only copy of the card.
        QemuBoot::Card => {
            if opts.plan != "qemu" {
                bail!(
                    "boards/{}.toml boots from its card (qemu.boot = \"card\"), whose \
                     extlinux.conf names the qemu plan: plan `{}` needs qemu.boot = \"kernel\"",
                    board.name,
                    opts.plan
                );
            }
            let stand_in = card_stand_in(board)?;
            // Built like any card, so it passes the same boot check (image::run_to).
            let card = image::run_to(&stand_in, &card_image_path(board))?;
            (Vec::new(), Some(card))
        }
    };
    let plan = if opts.card_plan.is_some() {
        "qemu-card"
    } else {
        opts.plan.as_str()
    };
    if plan != "qemu" {
        // The last benchboot.plan= on the command line wins (benchboot_plan::plan_name).
        if let Some(a) = boot_args.iter_mut().skip_while(|a| *a != "-append").nth(1) {
            a.push_str(&format!(" benchboot.plan={plan}"));
        }
    }
    if let Some(name) = &opts.console {
        if q.network == QemuNetwork::None {
            bail!(
                "boards/{}.toml has no QEMU network (qemu.network = \"none\"): a boot with \
                 console={name} prints nothing, so nothing would say when to read the card",
                board.name
            );
        }
        match boot_args.iter_mut().skip_while(|a| *a != "-append").nth(1) {
            // panic=1: should PID 1 die (nothing to serve), the kernel restarts after
            // 1 s, which -no-reboot turns into QEMU's exit: the harness stops at once
            // instead of fetching until the timeout.
            Some(a) => *a = format!("{} panic=1", with_console(a, name)),
            None => bail!(
                "boards/{}.toml boots from its card (qemu.boot = \"card\"), whose \
                 extlinux.conf holds the command line: console={name} needs qemu.boot = \"kernel\"",
                board.name
            ),
        }
    }
    Ok((boot_args, qemu_card, plan))
}

/// The card QEMU writes to: `--card`, else a copy of `card` in `work` (the built images
/// stay pristine), with the `--card-plan` file written onto it.
pub(super) fn card_copy(opts: &Options, work: &Path, card: &image::Built) -> Result<PathBuf> {
    let sd = match &opts.card {
        Some(card) => card.clone(),
        None => {
            let sd = work.join("sd.img");
            std::fs::copy(&card.image, &sd)?;
            sd
        }
    };
    if let Some(file) = &opts.card_plan {
        let status = Command::new(build_host_tool(false)?)
            .args(["plan", "write", "--card"])
            .arg(&sd)
            .arg(file)
            .status()?;
        if !status.success() {
            bail!("--card-plan {file}: `benchboot plan write` refused it (above)");
        }
    }
    Ok(sd)
}

/// QEMU's command line: machine, boot arguments, the card (and `extra` disks), the
/// console on stdio, the emulated NIC with the results port forwarded from
/// 127.0.0.1:`port`, the board's own.
pub(super) fn qemu_args(
    q: &Qemu,
    boot_args: Vec<String>,
    sd: &Path,
    extra: &[PathBuf],
    port: u16,
    wired: &WiredStandIns,
) -> Vec<String> {
    let mut args: Vec<String> = vec!["-M".into(), q.machine.clone()];
    args.extend(boot_args);
    args.extend([
        "-display".into(),
        "none".into(),
        "-monitor".into(),
        "none".into(),
        "-no-reboot".into(),
    ]);
    match q.drive {
        QemuDrive::Sd => args.extend([
            "-drive".into(),
            format!("if=sd,format=raw,file={}", sd.display()),
        ]),
        QemuDrive::Virtio => {
            // virt's virtio-mmio transports are probed in reverse order of creation (seen
            // here, QEMU 10.0.2: the last virtio-blk-device of the command line is vda):
            // the extra disks first, last first, so the card is vda and they follow.
            for (i, disk) in extra.iter().enumerate().rev() {
                args.extend([
                    "-drive".into(),
                    format!("if=none,id=extra{i},format=raw,file={}", disk.display()),
                    "-device".into(),
                    format!("virtio-blk-device,drive=extra{i}"),
                ]);
            }
            args.extend([
                "-drive".into(),
                format!("if=none,id=card,format=raw,file={}", sd.display()),
                "-device".into(),
                "virtio-blk-device,drive=card".into(),
            ]);
        }
    }
    for i in 0..=q.console_serial_index {
        args.push("-serial".into());
        args.push(
            if i == q.console_serial_index {
                "stdio"
            } else {
                "null"
            }
            .into(),
        );
    }
    let device = match q.network {
        QemuNetwork::UsbNet => Some("usb-net,netdev=n0"),
        QemuNetwork::VirtioNet => Some("virtio-net-device,netdev=n0"),
        QemuNetwork::None => None,
    };
    // Before the results NIC: virt probes virtio-mmio devices last first, so the results
    // NIC stays eth0.
    args.extend(wired.nics.iter().cloned());
    if let Some(device) = device {
        args.extend([
            "-device".into(),
            device.into(),
            "-netdev".into(),
            format!(
                "user,id=n0,restrict=on,hostfwd=tcp:127.0.0.1:{port}-:{RESULTS_PORT}{}",
                wired.user_net
            ),
        ]);
    }
    args.extend(q.args.iter().cloned());
    args
}
