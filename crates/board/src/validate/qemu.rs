//! [`Check::qemu`]: a board file's `[qemu]` section, one function per key that has a
//! choice to check.

use super::Check;
use crate::shared::Loader;
use crate::{BoardError, Qemu, QemuBoot, QemuDrive, QemuNetwork, QemuWifi, QemuWired, RawQemu};

impl Check<'_> {
    /// `[qemu]`: a known network and drive, `boot = "card"` only with a loader (the
    /// board's, `loader`, or the QEMU copy's), the dummy_hcd gadget only with a
    /// `[gadget]`, a stand-in DTB only in place of a `kernel.dtb`, `wifi = "hwsim"` only
    /// with mac80211_hwsim among the modules and a kernel of the stand-in AP's
    /// architecture (`kernel_arch`).
    pub(super) fn qemu(
        &self,
        q: RawQemu,
        loader: Option<&Loader>,
        has_gadget: bool,
        has_dtb: bool,
        kernel_arch: &str,
    ) -> Result<Qemu, BoardError> {
        let network = self.qemu_network(&q.network)?;
        let drive = self.qemu_drive(q.drive.as_deref())?;
        let boot = self.qemu_boot(q.boot.as_deref(), loader.is_some() || q.loader.is_some())?;
        let gadget_dummy_hcd = self.qemu_gadget(q.gadget.as_deref(), has_gadget)?;
        let wired = self.qemu_wired(q.wired.as_deref(), network)?;
        let modules = self.expand("qemu.modules", &q.modules)?;
        let wifi = self.qemu_wifi(q.wifi.as_deref(), &modules, kernel_arch)?;
        let qloader = self.loader("qemu.loader", q.loader.as_deref())?;
        if q.dtb.is_some() && !has_dtb {
            return Err(self.bad(
                "qemu.dtb",
                "replaces `kernel.dtb`, which this board does not name",
            ));
        }
        Ok(Qemu {
            system: q.system,
            machine: q.machine,
            console_serial_index: q.console_serial_index,
            append: q.append,
            args: q.args,
            network,
            modules,
            dtb_fixups: self.dtb_fixups(q.dtb_fixups, "qemu.dtb-fixups")?,
            drive,
            boot,
            loader: qloader,
            dtb: q.dtb,
            gadget_dummy_hcd,
            wired,
            wifi,
        })
    }

    /// `network`: `usb-net`, `virtio-net` or `none`.
    fn qemu_network(&self, network: &str) -> Result<QemuNetwork, BoardError> {
        match network {
            "usb-net" => Ok(QemuNetwork::UsbNet),
            "virtio-net" => Ok(QemuNetwork::VirtioNet),
            "none" => Ok(QemuNetwork::None),
            other => Err(self.bad(
                "qemu.network",
                format!("`{other}` is not supported; use `usb-net`, `virtio-net` or `none`"),
            )),
        }
    }

    /// `drive`: `sd` (the default) or `virtio`.
    fn qemu_drive(&self, drive: Option<&str>) -> Result<QemuDrive, BoardError> {
        match drive {
            None | Some("sd") => Ok(QemuDrive::Sd),
            Some("virtio") => Ok(QemuDrive::Virtio),
            Some(other) => Err(self.bad(
                "qemu.drive",
                format!("`{other}` is not supported; use `sd` or `virtio`"),
            )),
        }
    }

    /// `boot`: `kernel` (the default), or `card` when there is a boot loader
    /// (`has_loader`).
    fn qemu_boot(&self, boot: Option<&str>, has_loader: bool) -> Result<QemuBoot, BoardError> {
        match boot {
            None | Some("kernel") => Ok(QemuBoot::Kernel),
            Some("card") if has_loader => Ok(QemuBoot::Card),
            Some("card") => Err(self.bad(
                "qemu.boot",
                "`card` needs a boot loader (boot.loader or qemu.loader)",
            )),
            Some(other) => Err(self.bad(
                "qemu.boot",
                format!("`{other}` is not supported; use `kernel` or `card`"),
            )),
        }
    }

    /// `gadget`: `dummy-hcd`, only with a `[gadget]` to test (`has_gadget`); whether it
    /// is on.
    fn qemu_gadget(&self, gadget: Option<&str>, has_gadget: bool) -> Result<bool, BoardError> {
        match gadget {
            None => Ok(false),
            Some("dummy-hcd") if has_gadget => Ok(true),
            Some("dummy-hcd") => Err(self.bad("qemu.gadget", "needs a [gadget] section to test")),
            Some(other) => Err(self.bad(
                "qemu.gadget",
                format!("`{other}` is not supported; use `dummy-hcd` or leave it out"),
            )),
        }
    }

    /// `wired`: `usb-net-lan` over a usb-net `network`, `virtio-pair` over virtio-net.
    fn qemu_wired(
        &self,
        wired: Option<&str>,
        network: QemuNetwork,
    ) -> Result<QemuWired, BoardError> {
        match wired {
            None => Ok(QemuWired::None),
            Some("usb-net-lan") if network == QemuNetwork::UsbNet => Ok(QemuWired::UsbNetLan),
            Some("virtio-pair") if network == QemuNetwork::VirtioNet => Ok(QemuWired::VirtioPair),
            Some(w @ ("usb-net-lan" | "virtio-pair")) => Err(self.bad(
                "qemu.wired",
                format!(
                    "`{w}` needs qemu.network = \"{}\"",
                    if w == "usb-net-lan" {
                        "usb-net"
                    } else {
                        "virtio-net"
                    }
                ),
            )),
            Some(other) => Err(self.bad(
                "qemu.wired",
                format!(
                    "`{other}` is not supported; use `usb-net-lan`, `virtio-pair` or leave it out"
                ),
            )),
        }
    }

    /// `wifi`: `hwsim`, only with mac80211_hwsim among `modules` and a kernel of the
    /// stand-in AP's architecture (`kernel_arch`).
    fn qemu_wifi(
        &self,
        wifi: Option<&str>,
        modules: &[String],
        kernel_arch: &str,
    ) -> Result<QemuWifi, BoardError> {
        match wifi {
            None => Ok(QemuWifi::None),
            Some("hwsim") => {
                if !modules.iter().any(|m| m == "mac80211_hwsim") {
                    return Err(self.bad(
                        "qemu.wifi",
                        "`hwsim` needs mac80211_hwsim among qemu.modules: add `@wifi-hwsim`",
                    ));
                }
                let ap = &self.shared.radio.hwsim_ap;
                if ap.arch != kernel_arch {
                    return Err(self.bad(
                        "qemu.wifi",
                        format!(
                            "`hwsim`'s stand-in AP ({}, boards/{}) is {}, this board's kernel \
                             {kernel_arch}: it could not run",
                            ap.package,
                            crate::SHARED_FILE,
                            ap.arch
                        ),
                    ));
                }
                Ok(QemuWifi::Hwsim)
            }
            Some(other) => Err(self.bad(
                "qemu.wifi",
                format!("`{other}` is not supported; use `hwsim` or leave it out"),
            )),
        }
    }
}
