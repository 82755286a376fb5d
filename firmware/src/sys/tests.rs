//! Tests of the syscall edge: a forked child's exit, the mailbox size check, the ethtool
//! structs' layout and the ethtool calls against this machine's interfaces.

use super::*;

/// A child whose `body` panics and unwinds (no hook ends it first, as the worker's
/// does) exits with [`PANIC_EXIT`] instead of unwinding into its caller's frames,
/// which in the child are a copy of the parent's (here the test harness's, which the
/// child would go on running and end with status 0).
#[test]
fn a_child_that_panics_exits_and_never_returns_into_its_caller() {
    let pid = spawn_child(|| panic!("the child's own panic")).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let code = loop {
        if let Some(code) = crate::worker::exit_code(pid) {
            break Some(code);
        }
        if std::time::Instant::now() > deadline {
            crate::worker::kill_and_reap(pid);
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    assert_eq!(code, Some(PANIC_EXIT));
}

#[test]
fn vcio_edge_checks_the_size_and_reports_errno() {
    let mut msg = crate::mailbox::encode(crate::mailbox::Property::Throttled);
    let err = vcio_property(Path::new("/nonexistent/vcio"), &mut msg).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::NotFound);
    // A character device without the ioctl: ENOTTY, nothing written.
    let err = vcio_property(Path::new("/dev/null"), &mut msg).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::ENOTTY));
    assert_eq!(
        msg,
        crate::mailbox::encode(crate::mailbox::Property::Throttled)
    );
    // A size word larger than the buffer never reaches the kernel.
    let mut short = [64, 0, 0];
    let err = vcio_property(Path::new("/dev/null"), &mut short).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    assert_eq!(
        IOCTL_MBOX_PROPERTY as u32,
        crate::mailbox::mbox_property_ioctl(std::mem::size_of::<usize>() as u32)
    );
}

#[test]
fn ifreq_refuses_long_names() {
    assert!(ifreq("a-very-long-interface-name").is_err());
    assert!(ifreq("usb0").is_ok());
}

#[test]
fn ethtool_structs_have_the_uapi_layout() {
    use std::mem::{offset_of, size_of};
    assert_eq!(size_of::<EthtoolDrvinfo>(), 196);
    assert_eq!(offset_of!(EthtoolDrvinfo, bus_info), 100);
    assert_eq!(offset_of!(EthtoolDrvinfo, n_priv_flags), 176);
    assert_eq!(size_of::<EthtoolCmd>(), 44);
    assert_eq!(offset_of!(EthtoolCmd, autoneg), 18);
    assert_eq!(offset_of!(EthtoolCmd, lp_advertising), 32);
    assert_eq!(offset_of!(EthtoolLinkSettings, autoneg), 11);
    assert_eq!(offset_of!(EthtoolLinkSettings, link_mode_masks_nwords), 15);
    assert_eq!(offset_of!(EthtoolLinkSettings, reserved), 20);
    assert_eq!(offset_of!(EthtoolLinkSettings, link_mode_masks), 48);
    assert_eq!(c_text(b"veth\0\0\0"), "veth");
    assert_eq!(c_text(b"full"), "full");
}

/// `lo` has no driver, no parent device and no link settings: the kernel answers
/// EOPNOTSUPP to both (net/ethtool/ioctl.c); a missing interface is ENODEV.
#[test]
#[cfg_attr(
    target_arch = "arm",
    ignore = "qemu-user (arm32_units) does not translate SIOCETHTOOL: ENOTTY"
)]
fn ethtool_on_loopback_and_a_missing_interface() {
    let err = ethtool_drvinfo("lo").unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::EOPNOTSUPP), "{err}");
    let err = ethtool_autoneg("lo").unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::EOPNOTSUPP), "{err}");
    let err = ethtool_drvinfo("benchboot-none").unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::ENODEV), "{err}");
    let err = ethtool_autoneg("benchboot-none").unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::ENODEV), "{err}");
    let err = ethtool_drvinfo("a-very-long-interface-name").unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
}

/// Every interface of this machine with a driver bound to its device (on the
/// development VM: eth0, virtio_net): the ioctl names the same driver as sysfs, and
/// its link settings answer. Skipped, saying so, where no interface has a driver.
#[test]
#[cfg_attr(
    target_arch = "arm",
    ignore = "qemu-user (arm32_units) does not translate SIOCETHTOOL: ENOTTY"
)]
fn ethtool_names_the_sysfs_driver_of_real_nics() {
    let mut tested = Vec::new();
    for entry in std::fs::read_dir("/sys/class/net").unwrap().flatten() {
        let ifname = entry.file_name().to_string_lossy().into_owned();
        let Ok(link) = std::fs::read_link(entry.path().join("device/driver")) else {
            continue;
        };
        let sysfs_driver = link.file_name().unwrap().to_string_lossy().into_owned();
        let (driver, version, fw, bus) = ethtool_drvinfo(&ifname).unwrap();
        println!(
            "{ifname}: sysfs {sysfs_driver}, ethtool {driver} {version:?} fw {fw:?} bus {bus:?}"
        );
        assert_eq!(driver, sysfs_driver, "{ifname}");
        match ethtool_autoneg(&ifname) {
            Ok(a) => println!("{ifname}: autoneg {a}"),
            Err(e) => assert_eq!(e.raw_os_error(), Some(libc::EOPNOTSUPP), "{ifname}: {e}"),
        }
        tested.push(ifname);
    }
    if tested.is_empty() {
        // CI's machines have a NIC: a skip there would hide a test that never ran.
        assert!(
            std::env::var_os("CI").is_none(),
            "CI: no interface in /sys/class/net has a device/driver link"
        );
        println!("skipped: no interface in /sys/class/net has a device/driver link");
    }
}

/// A veth pair in a network namespace of its own (one test thread unshares it; the
/// pair dies with the namespace when the thread ends, nothing is left in the
/// machine's namespace): veth answers GDRVINFO itself (driver `veth`) and reports
/// autonegotiation off (drivers/net/veth.c). Skipped, saying so, without `ip` or the
/// right to unshare; under `CI` that fails instead.
#[test]
#[cfg_attr(
    target_arch = "arm",
    ignore = "qemu-user (arm32_units) does not translate SIOCETHTOOL: ENOTTY"
)]
fn ethtool_on_a_veth_pair_in_a_namespace_of_its_own() {
    let outcome = std::thread::spawn(|| -> Result<(), String> {
        unshare_netns().map_err(|e| format!("unshare(CLONE_NEWNET): {e}"))?;
        let ip = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"]
            .into_iter()
            .find(|p| Path::new(p).exists())
            .ok_or("no ip(8)")?;
        for args in [
            &[
                "link", "add", "bbveth0", "type", "veth", "peer", "name", "bbveth1",
            ][..],
            &["link", "set", "bbveth0", "up"],
            &["link", "set", "bbveth1", "up"],
        ] {
            let out = std::process::Command::new(ip)
                .args(args)
                .output()
                .map_err(|e| format!("{ip}: {e}"))?;
            if !out.status.success() {
                return Err(format!(
                    "ip {args:?}: {}",
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
        }
        let (driver, version, _, bus) = ethtool_drvinfo("bbveth0").unwrap();
        println!("bbveth0: driver {driver} version {version:?} bus {bus:?}");
        assert_eq!(driver, "veth");
        assert!(!ethtool_autoneg("bbveth0").unwrap());
        // veth reports 10000 Mbit/s full duplex (DUPLEX_FULL = 1), autoneg off: the
        // fields around autoneg read right through both requests.
        let ls = link_settings("bbveth0").unwrap();
        assert_eq!((ls.speed, ls.duplex, ls.autoneg), (10_000, 1, 0));
        assert!(ls.link_mode_masks_nwords > 0);
        let cmd = legacy_settings("bbveth0").unwrap();
        assert_eq!(
            (cmd.speed, cmd.speed_hi, cmd.duplex, cmd.autoneg),
            (10_000, 0, 1, 0)
        );
        assert_eq!(
            ethtool_drvinfo("lo").unwrap_err().raw_os_error(),
            Some(libc::EOPNOTSUPP)
        );
        Ok(())
    })
    .join()
    .unwrap();
    if let Err(why) = outcome {
        // `cargo xtask setup` installs iproute2 and CI runs as root: no skip there.
        assert!(std::env::var_os("CI").is_none(), "CI: {why}");
        println!("skipped: {why}");
    }
}
