//! USB gadget Ethernet through configfs (libcomposite), per
//! Documentation/usb/gadget_configfs.rst and Documentation/ABI/testing/configfs-usb-gadget*.
//!
//! [`layout`] turns a [`GadgetPlan`] into the exact list of configfs operations (pure,
//! unit-tested on the host); [`apply`] and [`tear_down`] are the thin edges that perform
//! them. Configurations: when RNDIS is among the functions it gets configuration 1 alone
//! and the Microsoft OS descriptors point at it, because Windows only uses configuration
//! 1; Linux's `usb_choose_configuration` (drivers/usb/core/generic.c) skips an RNDIS
//! first configuration in favour of the CDC one, which holds NCM and ECM.

use std::io;
use std::path::{Path, PathBuf};

use benchboot_plan::{GadgetFunction, GadgetPlan};
use sha2::{Digest, Sha256};

/// Where configfs is mounted (kernel Documentation/filesystems/configfs.rst).
pub const CONFIGFS_DIR: &str = "/sys/kernel/config";
/// Where configfs keeps gadgets.
pub const GADGETS_DIR: &str = "/sys/kernel/config/usb_gadget";
/// Our gadget's folder name under [`GADGETS_DIR`].
pub const GADGET_NAME: &str = "benchboot";
/// Where the kernel lists USB device controllers.
pub const UDC_DIR: &str = "/sys/class/udc";
/// Instance name of every function (`ncm.usb0`, `ecm.usb0`, ...).
const INSTANCE: &str = "usb0";
/// English (United States), the language id hosts ask for (USB 2.0 §9.6.7, LANGID table).
const LANG: &str = "0x409";
/// Microsoft OS descriptor vendor code and signature ("MSFT100"), and RNDIS's compatible
/// ids (Microsoft OS 1.0 Descriptors Specification; the values Windows' rndis driver
/// matches: RNDIS / 5162001).
const MS_VENDOR_CODE: &str = "0xcd";
const MS_QW_SIGN: &str = "MSFT100";
const RNDIS_COMPATIBLE_ID: &str = "RNDIS";
const RNDIS_SUB_COMPATIBLE_ID: &str = "5162001";

/// One configfs step, relative to the gadget folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    Mkdir(String),
    Write(String, String),
    /// Symlink at `.1` pointing to `.0` (both relative to the gadget folder).
    Link(String, String),
}

/// A function of the gadget with the MAC addresses it was given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionSetup {
    pub function: GadgetFunction,
    /// Board (`dev_addr`) and host (`host_addr`) MACs.
    pub dev_mac: [u8; 6],
    pub host_mac: [u8; 6],
    /// 1-based configuration that holds it.
    pub config: u8,
}

/// The gadget's configfs layout for `functions` (a subset of the plan's, in order): the
/// device's ids and strings ([`device_ops`]), the configurations ([`config_ops`]), each
/// function with its MACs linked into its configuration ([`function_ops`]), and with
/// RNDIS the OS descriptors pointed at configuration 1. The setups list each function's
/// MACs and configuration, in `functions`' order.
pub fn layout(
    plan: &GadgetPlan,
    functions: &[GadgetFunction],
    board_serial: &str,
) -> (Vec<Op>, Vec<FunctionSetup>) {
    let rndis_first = functions.contains(&GadgetFunction::Rndis);
    let configs: u8 = if rndis_first && functions.len() > 1 {
        2
    } else {
        1
    };
    let mut ops = device_ops(plan, board_serial);
    ops.extend(config_ops(rndis_first, configs));
    let mut setups = Vec::new();
    for &f in functions {
        let config = match (rndis_first, f) {
            (true, GadgetFunction::Rndis) | (false, _) => 1,
            (true, _) => 2,
        };
        let setup = FunctionSetup {
            function: f,
            dev_mac: mac_for(board_serial, f, "device"),
            host_mac: mac_for(board_serial, f, "host"),
            config,
        };
        ops.extend(function_ops(&setup));
        setups.push(setup);
    }
    if rndis_first {
        ops.push(Op::Link("configs/c.1".into(), "os_desc/c.1".into()));
    }
    (ops, setups)
}

fn write(path: &str, value: impl Into<String>) -> Op {
    Op::Write(path.to_owned(), value.into())
}

/// The device's descriptor fields and its English strings (the serial number hashed:
/// [`usb_serial`]).
fn device_ops(plan: &GadgetPlan, board_serial: &str) -> Vec<Op> {
    vec![
        write("idVendor", format!("{:#06x}", plan.vendor_id)),
        write("idProduct", format!("{:#06x}", plan.product_id)),
        write("bcdDevice", "0x0100"),
        write("bcdUSB", "0x0200"),
        // Miscellaneous / Common / Interface Association: a composite device whose
        // functions are described by IADs (USB IAD ECN; Windows needs it for RNDIS).
        write("bDeviceClass", "0xef"),
        write("bDeviceSubClass", "0x02"),
        write("bDeviceProtocol", "0x01"),
        Op::Mkdir(format!("strings/{LANG}")),
        write(
            &format!("strings/{LANG}/serialnumber"),
            usb_serial(board_serial),
        ),
        write(
            &format!("strings/{LANG}/manufacturer"),
            plan.manufacturer.clone(),
        ),
        write(&format!("strings/{LANG}/product"), plan.product.clone()),
    ]
}

/// Configurations 1..=`configs`, each named and drawing up to 250 mA; with
/// `rndis_first`, configuration 1 is RNDIS's.
fn config_ops(rndis_first: bool, configs: u8) -> Vec<Op> {
    let mut ops = Vec::new();
    for c in 1..=configs {
        let name = if rndis_first && c == 1 {
            "RNDIS"
        } else {
            "CDC NCM/ECM"
        };
        ops.push(Op::Mkdir(format!("configs/c.{c}")));
        ops.push(Op::Mkdir(format!("configs/c.{c}/strings/{LANG}")));
        ops.push(write(
            &format!("configs/c.{c}/strings/{LANG}/configuration"),
            name,
        ));
        // 250 mA: a bus-powered Pi Zero draws up to this on the OTG port.
        ops.push(write(&format!("configs/c.{c}/MaxPower"), "250"));
    }
    ops
}

/// One function's folder, its MACs (`dev_addr`, `host_addr`), RNDIS's Microsoft OS
/// descriptors, and its link into its configuration.
fn function_ops(s: &FunctionSetup) -> Vec<Op> {
    let t = s.function.configfs_type();
    let dir = format!("functions/{t}.{INSTANCE}");
    let mut ops = vec![
        Op::Mkdir(dir.clone()),
        write(&format!("{dir}/dev_addr"), mac_text(&s.dev_mac)),
        write(&format!("{dir}/host_addr"), mac_text(&s.host_mac)),
    ];
    if s.function == GadgetFunction::Rndis {
        let iface = format!("{dir}/os_desc/interface.rndis");
        ops.extend([
            write("os_desc/use", "1"),
            write("os_desc/b_vendor_code", MS_VENDOR_CODE),
            write("os_desc/qw_sign", MS_QW_SIGN),
            write(&format!("{iface}/compatible_id"), RNDIS_COMPATIBLE_ID),
            write(
                &format!("{iface}/sub_compatible_id"),
                RNDIS_SUB_COMPATIBLE_ID,
            ),
        ]);
    }
    ops.push(Op::Link(
        dir,
        format!("configs/c.{}/{t}.{INSTANCE}", s.config),
    ));
    ops
}

/// The operations that undo [`layout`]'s, in the order configfs accepts: links first,
/// then configuration strings and configurations, functions, gadget strings.
pub fn teardown_ops(ops: &[Op]) -> Vec<Op> {
    let mut undo: Vec<Op> = ops
        .iter()
        .filter(|o| matches!(o, Op::Link(..)))
        .cloned()
        .collect();
    let mut dirs: Vec<&String> = ops
        .iter()
        .filter_map(|o| match o {
            Op::Mkdir(d) => Some(d),
            _ => None,
        })
        .collect();
    // Children before parents: deeper paths first, then configurations before functions.
    dirs.sort_by_key(|d| {
        (
            std::cmp::Reverse(d.matches('/').count()),
            !d.starts_with("configs"),
        )
    });
    undo.extend(dirs.into_iter().map(|d| Op::Mkdir(d.clone())));
    undo
}

/// A locally administered unicast MAC derived from the board serial, the function and
/// the end (`device`/`host`), so a host sees the same adapter every boot (IEEE 802
/// §8.2.2: bit 1 of the first octet set = local, bit 0 clear = unicast).
pub fn mac_for(board_serial: &str, f: GadgetFunction, end: &str) -> [u8; 6] {
    let digest = Sha256::new()
        .chain_update(b"benchboot-mac\0")
        .chain_update(board_serial.as_bytes())
        .chain_update([0])
        .chain_update(f.configfs_type())
        .chain_update([0])
        .chain_update(end)
        .finalize();
    let mut mac = [0u8; 6];
    mac.copy_from_slice(&digest[..6]);
    mac[0] = (mac[0] & 0xfc) | 0x02;
    mac
}

/// `aa:bb:cc:dd:ee:ff`.
pub fn mac_text(mac: &[u8; 6]) -> String {
    mac.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// The USB serial-number string: a hash of the board serial, never the serial itself.
pub fn usb_serial(board_serial: &str) -> String {
    let digest = Sha256::digest(board_serial.as_bytes());
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// The board's serial: the device tree's `serial-number` (Raspberry Pi firmware sets it)
/// or `/proc/cpuinfo`'s `Serial`; empty when neither exists (QEMU virt).
pub fn board_serial() -> String {
    if let Ok(s) = std::fs::read_to_string("/sys/firmware/devicetree/base/serial-number") {
        let s = s.trim_end_matches(['\0', '\n']).trim();
        if !s.is_empty() {
            return s.to_owned();
        }
    }
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    cpuinfo_serial(&cpuinfo).unwrap_or_default().to_owned()
}

/// The `Serial : ...` value of a /proc/cpuinfo text.
pub fn cpuinfo_serial(cpuinfo: &str) -> Option<&str> {
    cpuinfo.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == "Serial")
            .then(|| v.trim())
            .filter(|v| !v.is_empty())
    })
}

/// The UDC to bind: the plan's, or the first listed in [`UDC_DIR`] (sorted).
pub fn find_udc(wanted: Option<&str>, udc_dir: &Path) -> io::Result<String> {
    let mut names: Vec<String> = std::fs::read_dir(udc_dir)?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    match wanted {
        Some(w) if names.iter().any(|n| n == w) => Ok(w.to_owned()),
        Some(w) => Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("UDC {w} not in {} (have: {names:?})", udc_dir.display()),
        )),
        None => names.into_iter().next().ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!("no UDC in {}", udc_dir.display()),
            )
        }),
    }
}

/// The gadget folder.
pub fn gadget_dir() -> PathBuf {
    Path::new(GADGETS_DIR).join(GADGET_NAME)
}

/// Creates the gadget folder and performs `ops` in it. Stops at the first failure with
/// the path in the error.
pub fn apply(root: &Path, ops: &[Op]) -> io::Result<()> {
    let at = |p: &str, e: io::Error| io::Error::new(e.kind(), format!("{p}: {e}"));
    std::fs::create_dir_all(root).map_err(|e| at(&root.display().to_string(), e))?;
    for op in ops {
        match op {
            Op::Mkdir(d) => std::fs::create_dir_all(root.join(d)).map_err(|e| at(d, e))?,
            Op::Write(p, v) => std::fs::write(root.join(p), v).map_err(|e| at(p, e))?,
            Op::Link(target, link) => {
                std::os::unix::fs::symlink(root.join(target), root.join(link))
                    .map_err(|e| at(link, e))?
            }
        }
    }
    Ok(())
}

/// Binds the gadget to `udc` (the host then enumerates it).
pub fn bind(root: &Path, udc: &str) -> io::Result<()> {
    std::fs::write(root.join("UDC"), udc)
}

/// The board-side interface name the kernel gave a bound function (`usb0`, ...).
pub fn ifname(root: &Path, f: GadgetFunction) -> io::Result<String> {
    let p = root
        .join("functions")
        .join(format!("{}.{INSTANCE}", f.configfs_type()))
        .join("ifname");
    Ok(std::fs::read_to_string(p)?.trim().to_owned())
}

/// Unbinds and removes the gadget; best effort, every step is tried.
pub fn tear_down(root: &Path, ops: &[Op]) -> io::Result<()> {
    let mut first_err = None;
    let mut note = |r: io::Result<()>| {
        if let Err(e) = r {
            first_err.get_or_insert(e);
        }
    };
    if root.join("UDC").exists() {
        note(std::fs::write(root.join("UDC"), "\n"));
    }
    for op in teardown_ops(ops) {
        match op {
            Op::Link(_, link) => note(std::fs::remove_file(root.join(link))),
            Op::Mkdir(d) => note(std::fs::remove_dir(root.join(d))),
            Op::Write(..) => {}
        }
    }
    note(std::fs::remove_dir(root));
    first_err.map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> GadgetPlan {
        GadgetPlan::default_for("rpi-zero-w")
    }

    #[test]
    fn macs_are_local_unicast_stable_and_distinct() {
        let a = mac_for("00000000abcd1234", GadgetFunction::Ncm, "device");
        assert_eq!(
            a,
            mac_for("00000000abcd1234", GadgetFunction::Ncm, "device")
        );
        assert_eq!(a[0] & 0x03, 0x02, "{}", mac_text(&a));
        let others = [
            mac_for("00000000abcd1234", GadgetFunction::Ncm, "host"),
            mac_for("00000000abcd1234", GadgetFunction::Ecm, "device"),
            mac_for("00000000abcd1235", GadgetFunction::Ncm, "device"),
        ];
        assert!(others.iter().all(|m| *m != a));
        assert_eq!(mac_text(&[0x02, 0, 0xab, 1, 2, 0xff]), "02:00:ab:01:02:ff");
    }

    #[test]
    fn serial_string_is_hashed() {
        let s = usb_serial("00000000abcd1234");
        assert_eq!(s.len(), 16);
        assert!(!s.contains("abcd1234"));
        let cpuinfo = "processor\t: 0\nHardware\t: BCM2835\nSerial\t\t: 00000000abcd1234\n";
        assert_eq!(cpuinfo_serial(cpuinfo), Some("00000000abcd1234"));
        assert_eq!(cpuinfo_serial("processor : 0\n"), None);
    }

    #[test]
    fn rndis_alone_in_configuration_1_with_os_descriptors() {
        let (ops, setups) = layout(&plan(), &plan().functions, "s");
        let configs: Vec<_> = setups.iter().map(|s| (s.function, s.config)).collect();
        assert_eq!(
            configs,
            [
                (GadgetFunction::Ncm, 2),
                (GadgetFunction::Ecm, 2),
                (GadgetFunction::Rndis, 1)
            ]
        );
        assert!(ops.contains(&Op::Link(
            "functions/ncm.usb0".into(),
            "configs/c.2/ncm.usb0".into()
        )));
        assert!(ops.contains(&Op::Link(
            "functions/rndis.usb0".into(),
            "configs/c.1/rndis.usb0".into()
        )));
        assert_eq!(
            ops.last(),
            Some(&Op::Link("configs/c.1".into(), "os_desc/c.1".into()))
        );
        assert!(ops.contains(&Op::Write("idVendor".into(), "0x1d6b".into())));
        assert!(ops.contains(&Op::Write("idProduct".into(), "0x0104".into())));
        assert!(ops.contains(&Op::Write(
            "strings/0x409/product".into(),
            "benchboot rpi-zero-w".into()
        )));
        assert!(ops.contains(&Op::Write(
            "functions/rndis.usb0/os_desc/interface.rndis/compatible_id".into(),
            "RNDIS".into()
        )));
        let dev = mac_text(&setups[0].dev_mac);
        assert!(ops.contains(&Op::Write("functions/ncm.usb0/dev_addr".into(), dev)));
    }

    #[test]
    fn one_function_one_configuration() {
        let (ops, setups) = layout(&plan(), &[GadgetFunction::Ecm], "s");
        assert_eq!(setups.len(), 1);
        assert_eq!(setups[0].config, 1);
        assert!(ops.contains(&Op::Mkdir("configs/c.1".into())));
        assert!(!ops.contains(&Op::Mkdir("configs/c.2".into())));
        assert!(!ops
            .iter()
            .any(|o| matches!(o, Op::Write(p, _) if p.starts_with("os_desc"))));
    }

    #[test]
    fn teardown_unlinks_then_removes_children_first() {
        let (ops, _) = layout(&plan(), &plan().functions, "s");
        let undo = teardown_ops(&ops);
        let links = undo
            .iter()
            .take_while(|o| matches!(o, Op::Link(..)))
            .count();
        assert_eq!(links, 4, "3 function links + os_desc: {undo:?}");
        let dirs: Vec<_> = undo
            .iter()
            .filter_map(|o| match o {
                Op::Mkdir(d) => Some(d.as_str()),
                _ => None,
            })
            .collect();
        let pos = |d: &str| dirs.iter().position(|x| *x == d).unwrap();
        assert!(pos("configs/c.1/strings/0x409") < pos("configs/c.1"));
        assert!(pos("configs/c.2") < pos("functions/ncm.usb0"));
        assert!(pos("strings/0x409") > pos("configs/c.2/strings/0x409"));
    }

    #[test]
    fn apply_and_tear_down_on_a_plain_folder() {
        // A plain folder stands in for configfs: the same paths get created and removed.
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("g");
        let (ops, _) = layout(&plan(), &[GadgetFunction::Ncm], "s");
        apply(&root, &ops).unwrap();
        assert_eq!(
            std::fs::read_to_string(root.join("functions/ncm.usb0/host_addr")).unwrap(),
            mac_text(&mac_for("s", GadgetFunction::Ncm, "host"))
        );
        assert!(root.join("configs/c.1/ncm.usb0").is_symlink());
        // configfs removes attribute files itself; a plain folder needs them gone first.
        for op in &ops {
            if let Op::Write(p, _) = op {
                std::fs::remove_file(root.join(p)).unwrap();
            }
        }
        // configfs makes configs/, functions/, strings/ (and each configuration's
        // strings/) itself and drops them with the gadget; in a plain folder they stay
        // behind, so only what we made is checked.
        assert!(tear_down(&root, &ops).is_err());
        assert!(!root.join("configs/c.1/ncm.usb0").is_symlink());
        assert!(!root.join("functions/ncm.usb0").exists());
        assert!(!root.join("strings/0x409").exists());
        assert!(!root.join("configs/c.1/strings/0x409").exists());
    }

    #[test]
    fn udc_choice() {
        let dir = tempfile::tempdir().unwrap();
        assert!(find_udc(None, dir.path()).is_err());
        std::fs::create_dir(dir.path().join("dummy_udc.1")).unwrap();
        std::fs::create_dir(dir.path().join("dummy_udc.0")).unwrap();
        assert_eq!(find_udc(None, dir.path()).unwrap(), "dummy_udc.0");
        assert_eq!(
            find_udc(Some("dummy_udc.1"), dir.path()).unwrap(),
            "dummy_udc.1"
        );
        let err = find_udc(Some("20980000.usb"), dir.path()).unwrap_err();
        assert!(err.to_string().contains("20980000.usb"), "{err}");
    }
}
