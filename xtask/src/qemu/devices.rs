//! The guest's devices beyond the card: USB disks on an xHCI controller and the
//! console override of a boot with no console ([`super::Options`]).

use std::path::PathBuf;

/// How a USB disk of [`super::Options::usb_disks`] talks to the guest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UsbTransport {
    /// Bulk-only transport (`-device usb-storage`): the kernel's usb-storage driver.
    BulkOnly,
    /// USB Attached SCSI (`-device usb-uas` with a `scsi-hd` on its bus): the kernel's
    /// uas driver (usb-storage declines UAS devices when uas is built, USB_UAS=m).
    Uas,
}

/// A disk image QEMU presents as a USB disk ([`super::Options::usb_disks`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsbDisk {
    pub image: PathBuf,
    pub transport: UsbTransport,
}

/// `cmdline` with every `console=` parameter replaced by one `console=<name>`, where
/// the first stood (or appended when there was none).
pub fn with_console(cmdline: &str, name: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut placed = false;
    for p in cmdline.split_whitespace() {
        if p.starts_with("console=") {
            if !placed {
                out.push(format!("console={name}"));
                placed = true;
            }
        } else {
            out.push(p.to_owned());
        }
    }
    if !placed {
        out.push(format!("console={name}"));
    }
    out.join(" ")
}

/// QEMU arguments for `disks` ([`super::Options::usb_disks`]): one `qemu-xhci` controller
/// (`xhci`, USB 3: a UAS disk runs at SuperSpeed as in a USB 3 port), then per disk a
/// raw `-drive` and either a `usb-storage` device or a `usb-uas` device with a
/// `scsi-hd` at SCSI id 0, LUN 0 on its bus. Nothing when `disks` is empty.
pub fn usb_disk_args(disks: &[UsbDisk]) -> Vec<String> {
    if disks.is_empty() {
        return Vec::new();
    }
    let mut args = vec!["-device".to_owned(), "qemu-xhci,id=xhci".to_owned()];
    for (i, d) in disks.iter().enumerate() {
        args.extend([
            "-drive".into(),
            format!(
                "if=none,id=usbdisk{i},format=raw,file={}",
                d.image.display()
            ),
        ]);
        match d.transport {
            UsbTransport::BulkOnly => args.extend([
                "-device".into(),
                format!("usb-storage,bus=xhci.0,drive=usbdisk{i}"),
            ]),
            UsbTransport::Uas => args.extend([
                "-device".into(),
                format!("usb-uas,bus=xhci.0,id=uas{i}"),
                "-device".into(),
                format!("scsi-hd,bus=uas{i}.0,scsi-id=0,lun=0,drive=usbdisk{i}"),
            ]),
        }
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn with_console_replaces_every_console_parameter_once() {
        assert_eq!(
            with_console(
                "console=ttyAMA0,115200 loglevel=4 console=tty0 benchboot.plan=qemu",
                "ttyNONE0"
            ),
            "console=ttyNONE0 loglevel=4 benchboot.plan=qemu"
        );
        assert_eq!(
            with_console("loglevel=4", "ttyS1"),
            "loglevel=4 console=ttyS1"
        );
    }

    #[test]
    fn usb_disks_hang_off_one_xhci_as_bulk_only_and_uas_devices() {
        assert!(usb_disk_args(&[]).is_empty(), "no controller without disks");
        let disks = [
            UsbDisk {
                image: "/t/bot.img".into(),
                transport: UsbTransport::BulkOnly,
            },
            UsbDisk {
                image: "/t/uas.img".into(),
                transport: UsbTransport::Uas,
            },
        ];
        assert_eq!(
            usb_disk_args(&disks).join(" "),
            "-device qemu-xhci,id=xhci \
             -drive if=none,id=usbdisk0,format=raw,file=/t/bot.img \
             -device usb-storage,bus=xhci.0,drive=usbdisk0 \
             -drive if=none,id=usbdisk1,format=raw,file=/t/uas.img \
             -device usb-uas,bus=xhci.0,id=uas1 \
             -device scsi-hd,bus=uas1.0,scsi-id=0,lun=0,drive=usbdisk1"
        );
    }
}
