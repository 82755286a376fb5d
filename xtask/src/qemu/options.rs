//! How `cargo xtask qemu` boots a board: the plan, the card, more QEMU arguments and
//! disks, the console, the emulated meter.

use std::path::PathBuf;
use std::time::Duration;

use super::UsbDisk;

/// How [`super::run_with`] and [`super::cut`] boot a board.
#[derive(Debug, Clone)]
pub struct Options {
    /// Give up when the awaited line has not come by then (from QEMU start).
    pub timeout: Duration,
    /// The plan PID 1 runs (`benchboot.plan=<name>`, a plan of the initramfs: `qemu`,
    /// `faults`, `powercut`; [`benchboot_image::plans`]).
    pub plan: String,
    /// Boot this card as it is (a card an earlier boot wrote to: the reboot after a
    /// cut) instead of a fresh copy of the built image.
    pub card: Option<PathBuf>,
    /// More QEMU arguments, after the board's (e.g. a watchdog device).
    pub extra_args: Vec<String>,
    /// Disk images attached besides the card (virtio machines: `virtio-blk-device`s,
    /// `/dev/vdb`, `/dev/vdc`... in this order; the card stays `/dev/vda`).
    pub extra_disks: Vec<PathBuf>,
    /// A plan file (or preset name) written onto the card before the boot with
    /// `benchboot plan write`; the boot then runs plan `qemu-card`, which takes it.
    pub card_plan: Option<String>,
    /// Disk images plugged into QEMU's xHCI as USB disks, in this order on its ports
    /// ([`UsbDisk`]; `virt` machines only: qemu-xhci is a PCI device). The guest sees
    /// them as `/dev/sdX` once xhci-pci, the transport and sd_mod are loaded, in an order
    /// of the kernel's: a plan names them by filesystem label.
    pub usb_disks: Vec<UsbDisk>,
    /// Replaces every `console=` of the kernel command line with `console=<name>` (e.g.
    /// `ttyNONE0`, a tty no kernel has: PID 1 then starts with no console and fds 0-2
    /// on /dev/null). Nothing comes on the serial port, so the ready line is not awaited
    /// there: the results are fetched over QEMU's network as soon as the board serves
    /// them ([`super::run_with`]); `panic=1` is added, so a PID 1 that dies ends QEMU at once.
    /// `qemu.boot = "kernel"` boards with a network only.
    pub console: Option<String>,
    /// Run the emulated meter ([`super::meter`]) beside QEMU: a power trace that follows
    /// QEMU's CPU time, the console's mark lines stamped on arrival, aligned and
    /// integrated by `benchboot power show` after the run.
    pub meter: bool,
}

impl Options {
    /// The QEMU plan on a fresh copy of the image.
    pub fn new(timeout: Duration) -> Options {
        Options {
            timeout,
            plan: "qemu".into(),
            card: None,
            extra_args: Vec::new(),
            extra_disks: Vec::new(),
            card_plan: None,
            usb_disks: Vec::new(),
            console: None,
            meter: false,
        }
    }

    /// The main job's options (`cargo xtask qemu --board NAME`): the short QEMU plan
    /// ([`benchboot_image::plans::qemu_short`]: every cell kind, 5 block sizes instead
    /// of 18) where QEMU boots the kernel itself; `qemu.boot = "card"` boards keep the
    /// `qemu` plan their card's extlinux.conf names.
    pub fn main_job(board: &benchboot_board::Board, timeout: Duration) -> Options {
        let mut o = Options::new(timeout);
        if board
            .qemu
            .as_ref()
            .is_none_or(|q| q.boot == benchboot_board::QemuBoot::Kernel)
        {
            o.plan = benchboot_image::plans::QEMU_SHORT.into();
        }
        o
    }
}
