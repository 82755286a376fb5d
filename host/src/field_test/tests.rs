//! [`run_steps`] driven by a fake [`Steps`]: the order of the steps, the messages, and
//! that a refused card, a refused flash plan or a missing confirmation stop before
//! anything is written. Devices come from the flash tests' fake sysfs trees.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{anyhow, Result};
use benchboot_board::Board;
use benchboot_results::RunResults;

use super::*;
use crate::devices::{self, Device, Limits};
use crate::flash::io::{VerifyReport, WriteOptions, WriteReport};
use crate::store::Store;

const RESULTS: &str = include_str!("../../tests/data/rpi-zero-w-qemu.json");

fn board(name: &str) -> Board {
    benchboot_board::load(&benchboot_board::boards_dir(), name).expect("shipped board file")
}

fn fixture_device(tree: &str, name: &str) -> Device {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/sysfs")
        .join(tree);
    devices::scan_linux(&root)
        .expect("fixture scans")
        .into_iter()
        .find(|d| d.name == name)
        .expect("device in fixture")
}

/// The fake card: `desktop/sdb` (a 29.7 GiB card in a USB reader), or a refusal.
fn destination(tree: &str, name: &str) -> Result<Destination> {
    let device = fixture_device(tree, name);
    let unmount = flash::check_device(&device, &Limits::new(false))?;
    Ok(Destination {
        path: device.path.clone(),
        target: Target::Disk {
            device: Box::new(device),
            unmount,
        },
        align: 512,
    })
}

#[derive(Default)]
struct Fake {
    calls: Vec<&'static str>,
    said: String,
    /// The card `check_card` and `plan_flash` see: (tree, name) of a fixture device.
    card: Option<(&'static str, &'static str)>,
    /// `plan_flash` sees this device instead (the card changed after the check).
    card_at_flash: Option<(&'static str, &'static str)>,
    refuse_confirm: bool,
    peer_fails: bool,
    wait_fails: bool,
    store: Option<tempfile::TempDir>,
    peer_at: Option<SocketAddr>,
}

impl Fake {
    fn new() -> Fake {
        Fake {
            card: Some(("desktop", "sdb")),
            ..Fake::default()
        }
    }
}

impl Steps for Fake {
    fn check_card(&mut self) -> Result<Destination> {
        self.calls.push("check_card");
        let (tree, name) = self.card.expect("a card");
        destination(tree, name)
    }

    fn build(&mut self, board: &Board) -> Result<PathBuf> {
        self.calls.push("build");
        Ok(PathBuf::from(format!(
            "/src/target/images/{}.img",
            board.name
        )))
    }

    fn plan_flash(&mut self, image: &Path) -> Result<flash::Plan> {
        self.calls.push("plan_flash");
        let (tree, name) = self.card_at_flash.or(self.card).expect("a card");
        let d = destination(tree, name)?;
        Ok(flash::Plan {
            image: image.to_owned(),
            image_bytes: 1 << 30,
            path: d.path,
            target: d.target,
            align: d.align,
            write: WriteOptions::default(),
            verify: true,
        })
    }

    fn confirm(&mut self, _: &flash::Plan) -> Result<()> {
        self.calls.push("confirm");
        if self.refuse_confirm {
            return Err(anyhow!("not confirmed: nothing written"));
        }
        Ok(())
    }

    fn write(&mut self, plan: &flash::Plan) -> Result<flash::Outcome> {
        self.calls.push("write");
        Ok(flash::Outcome {
            write: WriteReport {
                bytes_written: plan.image_bytes,
                bytes_skipped: 0,
                chunks_written: 257,
                chunks_skipped: 0,
            },
            verify: Some(VerifyReport {
                bytes: plan.image_bytes,
                sha256: "ab".repeat(32),
            }),
            direct: true,
            write_seconds: 64.0,
            verify_seconds: 32.0,
        })
    }

    fn start_peer(&mut self, listen: SocketAddr) -> Result<SocketAddr> {
        self.calls.push("start_peer");
        self.peer_at = Some(listen);
        if self.peer_fails {
            return Err(anyhow!("Address already in use (os error 98)"));
        }
        Ok(listen)
    }

    fn wait(&mut self, _: &Board, timeout: Duration) -> Result<String> {
        self.calls.push("wait");
        if self.wait_fails {
            return Err(anyhow!(
                "no board answered at 10.55.0.1:8080 within {}",
                span(timeout)
            ));
        }
        Ok("10.55.0.1:8080".into())
    }

    fn collect(&mut self, addr: &str) -> Result<Collected> {
        self.calls.push("collect");
        let dir = self
            .store
            .get_or_insert_with(|| tempfile::tempdir().unwrap());
        let mut store = Store::open(dir.path())?;
        let results = RunResults::from_json(RESULTS)?;
        let stored = store.put(&results, RESULTS, addr, 1_700_000_000)?;
        Ok(Collected {
            results,
            outcome: stored.outcome,
            row: stored.row,
            beside: stored.beside,
            db: store.db_path(),
            earlier: Vec::new(),
            lava: None,
            card: Vec::new(),
        })
    }

    fn say(&mut self, text: &str) {
        self.said.push_str(text);
        if !text.ends_with('\n') {
            self.said.push('\n');
        }
    }
}

fn field_test(board_name: &str) -> FieldTest {
    FieldTest {
        board: board(board_name),
        device: PathBuf::from("/dev/sdb"),
        image: None,
        dry_run: false,
        timeout: Duration::from_secs(DEFAULT_TIMEOUT_S),
        peer: Some(SocketAddr::from(([0, 0, 0, 0], 5202))),
        wired: Vec::new(),
    }
}

/// Asserts that `needles` occur in `hay` in this order, each after the previous one.
fn in_order(hay: &str, needles: &[&str]) {
    let mut at = 0;
    for n in needles {
        match hay[at..].find(n) {
            Some(i) => at += i + n.len(),
            None => panic!("`{n}` not found after byte {at} of:\n{hay}"),
        }
    }
}

#[test]
fn a_gadget_board_goes_build_flash_instruct_wait_collect_report() {
    let ft = field_test("rpi-zero-w");
    let mut fake = Fake::new();
    let c = run_steps(&ft, &mut fake).unwrap().expect("collected");
    assert_eq!(
        fake.calls,
        [
            "check_card",
            "build",
            "plan_flash",
            "confirm",
            "write",
            "start_peer",
            "wait",
            "collect"
        ]
    );
    assert_eq!(fake.peer_at, Some(SocketAddr::from(([0, 0, 0, 0], 5202))));
    assert_eq!(c.results.run_id, "rpi-zero-w-a0111b486424");
    let said = &fake.said;
    in_order(
        said,
        &[
            "field test of rpi-zero-w (Raspberry Pi Zero W) with the card /dev/sdb\n",
            "[1/7] card: /dev/sdb (Generic STORAGE DEVICE, usb, 29.7 GiB) may be written",
            "[2/7] build: cargo xtask image --board rpi-zero-w\n",
            "[2/7] built /src/target/images/rpi-zero-w.img\n",
            "[3/7] flash\n",
            "image    /src/target/images/rpi-zero-w.img (1 GiB, 1073741824 bytes)\n",
            "target   /dev/sdb (Generic STORAGE DEVICE, usb, 29.7 GiB)\n",
            "wrote    1 GiB in 64.0 s (16.0 MiB/s, O_DIRECT)",
            "verified 1 GiB read back in 32.0 s (32.0 MiB/s): SHA-256 abab",
            "done: /dev/sdb can be removed\n",
            "[4/7] plug in\n",
            "  1. Take the card out of this computer (/dev/sdb) and put it in the Raspberry Pi \
             Zero W's SD slot",
            "  2. Optional: serial console, to watch it: ttyS1 at 115200 baud, 8N1, \
             3.3 V TTL on header pin 8 (GPIO14, TXD), pin 10 (GPIO15, RXD), pin 6 (GND)",
            "  3. Connect the Raspberry Pi Zero W to this computer by its USB device port: the \
             micro-USB port marked USB, not the one marked PWR IN",
            "as a USB network adapter (NCM, ECM, RNDIS), leases this computer 10.55.0.2 by DHCP",
            "against the benchboot peer this command runs on 0.0.0.0:5202",
            "serves its results at 10.55.0.1:8080.\n",
            "results partition (BBRESULTS)",
            "  sudo benchboot collect --from-card /dev/sdb\n",
            "[5/7] wait: for rpi-zero-w on its USB gadget link (up to 3 h;",
            "[5/7] found the board at 10.55.0.1:8080\n",
            "[6/7] collect\n",
            // The fixture is a QEMU run: the collect warning says so.
            "warning: run rpi-zero-w-a0111b486424 is emulated (QEMU)",
            "collected rpi-zero-w-a0111b486424 (board rpi-zero-w, kernel 6.1.0-50-rpi, \
             complete,",
            "from 10.55.0.1:8080\n",
            "[7/7] report\n",
            "benchboot report: run rpi-zero-w-a0111b486424 on rpi-zero-w",
            "more: benchboot report rpi-zero-w-a0111b486424 --format markdown",
        ],
    );
    assert!(!said.contains("warning: the board that answered"), "{said}");
    assert!(!said.contains("dry run"), "{said}");
}

#[test]
fn a_refused_card_stops_before_the_build() {
    let ft = field_test("rpi-zero-w");
    let mut fake = Fake {
        card: Some(("desktop", "nvme0n1")),
        ..Fake::new()
    };
    let err = format!("{:#}", run_steps(&ft, &mut fake).unwrap_err());
    assert_eq!(fake.calls, ["check_card"]);
    assert!(
        err.starts_with(
            "refusing to write /dev/nvme0n1 (Samsung SSD 970 EVO Plus 500GB, nvme, 476.9 GiB):"
        ),
        "{err}"
    );
    assert!(err.contains("not removable (nvme)"), "{err}");
    assert!(
        err.contains("holds the running system (/ on nvme0n1p2"),
        "{err}"
    );
    assert!(!fake.said.contains("[1/7]"), "{}", fake.said);
}

#[test]
fn a_refused_flash_plan_writes_nothing() {
    // The card passed the first check, then became the read-only one.
    let ft = field_test("rpi-zero-w");
    let mut fake = Fake {
        card_at_flash: Some(("desktop", "sdd")),
        ..Fake::new()
    };
    let err = format!("{:#}", run_steps(&ft, &mut fake).unwrap_err());
    assert_eq!(fake.calls, ["check_card", "build", "plan_flash"]);
    assert!(err.starts_with("refusing to write /dev/sdd"), "{err}");
    assert!(err.contains("lock switch"), "{err}");
    assert!(!fake.said.contains("[4/7]"), "{}", fake.said);
}

#[test]
fn no_confirmation_writes_nothing() {
    let ft = field_test("rpi-zero-w");
    let mut fake = Fake {
        refuse_confirm: true,
        ..Fake::new()
    };
    let err = format!("{:#}", run_steps(&ft, &mut fake).unwrap_err());
    assert_eq!(fake.calls, ["check_card", "build", "plan_flash", "confirm"]);
    assert_eq!(err, "not confirmed: nothing written");
    // The plan was shown before asking.
    assert!(fake.said.contains("target   /dev/sdb"), "{}", fake.said);
}

#[test]
fn a_dry_run_builds_and_plans_but_writes_and_waits_for_nothing() {
    let ft = FieldTest {
        dry_run: true,
        ..field_test("beaglebone-black")
    };
    let mut fake = Fake::new();
    assert!(run_steps(&ft, &mut fake).unwrap().is_none());
    assert_eq!(fake.calls, ["check_card", "build", "plan_flash"]);
    in_order(
        &fake.said,
        &[
            "[3/7] flash\n",
            "target   /dev/sdb",
            "dry run: nothing written, nothing waited for\n",
            "[4/7] plug in (after a real run)\n",
            "ttyO0 at 115200 baud, 8N1, 3.3 V TTL on the 6-pin J1 header: pin 1 GND, pin 4 \
             RXD, pin 5 TXD",
            "by its USB device port: the mini-USB port (USB0; it can power the board too)",
        ],
    );
}

#[test]
fn an_image_given_is_not_built() {
    let ft = FieldTest {
        image: Some(PathBuf::from("/tmp/card.img")),
        ..field_test("rpi-4b")
    };
    let mut fake = Fake::new();
    run_steps(&ft, &mut fake).unwrap();
    assert!(!fake.calls.contains(&"build"), "{:?}", fake.calls);
    in_order(
        &fake.said,
        &[
            "[2/7] build: skipped, flashing /tmp/card.img (--image)\n",
            "image    /tmp/card.img (1 GiB",
            "by its USB device port: the USB-C port, which is also its power input",
        ],
    );
}

#[test]
fn an_ethernet_board_gets_dhcp_the_host_address_command_and_a_peer() {
    let ft = FieldTest {
        wired: vec!["enp3s0".into()],
        ..field_test("rpi-1b")
    };
    let mut fake = Fake::new();
    run_steps(&ft, &mut fake).unwrap();
    assert_eq!(
        fake.calls,
        [
            "check_card",
            "build",
            "plan_flash",
            "confirm",
            "write",
            "start_peer",
            "wait",
            "collect"
        ]
    );
    in_order(
        &fake.said,
        &[
            "ttyAMA0 at 115200 baud, 8N1, 3.3 V TTL on header pin 8 (GPIO14, TXD)",
            "  3. Connect the Raspberry Pi 1 Model B (rev 2)'s Ethernet port to this computer \
             with a cable, directly, and power the board from its own supply. The board is \
             10.55.0.1/30 and leases this computer 10.55.0.2 by DHCP (no router, no DNS).",
            "If this computer's end does not ask for DHCP, give it 10.55.0.2/30 (IFACE: the one \
             the cable is in; wired interfaces here: enp3s0):\n",
            "       sudo ip addr add 10.55.0.2/30 dev IFACE\n",
            "`sudo nmcli device set IFACE managed no`",
            "brings up eth0 at 10.55.0.1/30, measures its Ethernet link against the benchboot \
             peer this command runs on",
            "and serves its results at 10.55.0.1:8080",
            "[5/7] wait: for rpi-1b on its Ethernet link (eth0)",
            // The fixture says rpi-zero-w: another board answered.
            "warning: the board that answered says it is `rpi-zero-w`, not `rpi-1b`",
        ],
    );
    assert!(!fake.said.contains("no DHCP"), "{}", fake.said);
}

#[test]
fn several_wired_interfaces_are_listed_for_the_person_to_pick() {
    let b = board("rpi-2b");
    let card = Card::Disk(PathBuf::from("/dev/mmcblk0"));
    let text = instructions(
        &b,
        &card,
        &Peer::NotNeeded,
        &["eno1".into(), "enp4s0".into()],
    );
    assert!(
        text.contains(
            "give it 10.55.0.2/30 (IFACE: the one the cable is in; wired \
             interfaces here: eno1, enp4s0):\n       sudo ip addr add 10.55.0.2/30 dev IFACE\n"
        ),
        "{text}"
    );
    assert!(
        text.ends_with("  sudo benchboot collect --from-card /dev/mmcblk0\n"),
        "{text}"
    );
}

#[test]
fn a_timeout_names_what_to_check() {
    let ft = field_test("rpi-zero-w");
    let mut fake = Fake {
        wait_fails: true,
        ..Fake::new()
    };
    let err = format!("{:#}", run_steps(&ft, &mut fake).unwrap_err());
    assert_eq!(
        fake.calls,
        [
            "check_card",
            "build",
            "plan_flash",
            "confirm",
            "write",
            "start_peer",
            "wait"
        ]
    );
    in_order(
        &err,
        &[
            "no board answered at 10.55.0.1:8080 within 3 h\n",
            "what to check:\n",
            "its serial console (ttyS1, 115200 baud) shows its progress",
            "the cable is in the board's USB device port (the micro-USB port marked USB",
            "holds 10.55.0.2 on it (`ip -br addr`)",
            "wait longer with --timeout SECONDS",
            "`sudo benchboot collect --from-card /dev/sdb`",
        ],
    );
}

#[test]
fn a_peer_that_cannot_listen_is_a_warning() {
    let ft = field_test("rpi-zero-2-w");
    let mut fake = Fake {
        peer_fails: true,
        ..Fake::new()
    };
    run_steps(&ft, &mut fake).unwrap();
    in_order(
        &fake.said,
        &[
            "warning: the host end of the network tests could not listen on 0.0.0.0:5202 \
             (Address already in use (os error 98)); if a `benchboot peer` runs there already",
            "tries to measure the link against a benchboot peer on 0.0.0.0:5202, which this \
             command could not start",
        ],
    );
    let ft = FieldTest {
        peer: None,
        ..field_test("rpi-zero-2-w")
    };
    let mut fake = Fake::new();
    run_steps(&ft, &mut fake).unwrap();
    assert!(!fake.calls.contains(&"start_peer"));
    assert!(fake
        .said
        .contains("against `benchboot peer`, which you run (--no-peer)"));
}

#[test]
fn emulated_boards_are_refused_before_anything() {
    for name in ["qemu-virt-arm64", "qemu-virt-armv7"] {
        let ft = field_test(name);
        let mut fake = Fake::new();
        let err = run_steps(&ft, &mut fake).unwrap_err().to_string();
        assert!(fake.calls.is_empty(), "{name}: {:?}", fake.calls);
        assert!(
            err.contains(&format!("`cargo xtask qemu --board {name}`")),
            "{err}"
        );
    }
}

#[test]
fn every_hardware_board_has_truthful_instructions() {
    let dir = benchboot_board::boards_dir();
    let card = Card::Disk(PathBuf::from("/dev/sdb"));
    let mut hardware = Vec::new();
    for name in benchboot_board::list(&dir).unwrap() {
        let b = board(&name);
        if check_board(&b).is_err() {
            continue;
        }
        hardware.push(name.clone());
        let text = instructions(&b, &card, &Peer::Started(default_peer()), &[]);
        let Console { device, baud } = console(&b);
        assert_eq!(baud, Some(115_200), "{name}");
        assert!(
            text.contains(&format!("{device} at 115200 baud")),
            "{name}: {text}"
        );
        assert!(console_pins(&b).is_some(), "{name}: no console pins");
        if b.gadget.is_some() {
            assert!(usb_device_port(&b).is_some(), "{name}: no port wording");
            assert!(
                text.contains("leases this computer 10.55.0.2 by DHCP"),
                "{text}"
            );
        } else {
            assert!(
                text.contains("sudo ip addr add 10.55.0.2/30 dev IFACE"),
                "{text}"
            );
        }
    }
    assert_eq!(
        hardware,
        [
            "bananapi-m1",
            "beaglebone-black",
            "rpi-1b",
            "rpi-2b",
            "rpi-3b",
            "rpi-4b",
            "rpi-zero-2-w",
            "rpi-zero-w"
        ]
    );
    let bpi = instructions(&board("bananapi-m1"), &card, &Peer::External, &[]);
    assert!(bpi.contains("the mini-USB OTG port (power the board from its own supply)"));
    assert!(bpi.contains("the 3-pin UART0 debug header (TX, RX, GND)"));
    // The person at the bench: the BBB boots its eMMC unless S2 is held at power-on,
    // and a Pi 4 B / Zero 2 W powered by this computer's port needs the current said.
    let bbb = board("beaglebone-black");
    let text = instructions(&bbb, &card, &Peer::External, &[]);
    assert!(text.contains("\n  4. Hold the S2 button"), "{text}");
    assert!(what_to_check(&bbb, &card).contains("Hold the S2 button"));
    assert!(!bpi.contains("S2"));
    let pi4 = instructions(&board("rpi-4b"), &card, &Peer::External, &[]);
    assert!(pi4.contains("a Pi 4 B needs 3 A"), "{pi4}");
    let z2 = instructions(&board("rpi-zero-2-w"), &card, &Peer::External, &[]);
    assert!(z2.contains("5 V 2.5 A supply"), "{z2}");
}

#[test]
fn a_file_as_card_is_a_rehearsal() {
    let b = board("rpi-zero-w");
    let text = instructions(
        &b,
        &Card::File(PathBuf::from("/tmp/card.img")),
        &Peer::NotNeeded,
        &[],
    );
    assert!(
        text.starts_with(
            "  1. /tmp/card.img is a regular file, not a card: nothing boots from it (a \
             rehearsal).\n"
        ),
        "{text}"
    );
    assert!(
        text.ends_with("  benchboot collect --from-card /tmp/card.img\n"),
        "{text}"
    );
}

#[test]
fn the_qemu_forward_is_never_taken_for_the_board() {
    let usb = [crate::discover::UsbLink {
        name: "usb0".to_owned(),
        ifindex: 7,
    }];
    let labels = |env: Option<&str>| -> Vec<String> {
        crate::discover::candidates(env, &usb)
            .unwrap()
            .into_iter()
            .map(|c| c.label)
            .collect()
    };
    assert_eq!(
        labels(None),
        [
            "10.55.0.1:8080",
            "10.55.0.5:8080",
            "10.55.0.9:8080",
            "[fe80::1%usb0]:8080"
        ]
    );
    // ...unless $BENCHBOOT_BOARD names it.
    assert_eq!(labels(Some("127.0.0.1:18080"))[0], "127.0.0.1:18080");
    assert_eq!(labels(Some("127.0.0.1:18080")).len(), 5);
}

#[test]
fn source_tree_image_path_and_spans() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let deep = root.join("host/src");
    std::fs::create_dir_all(&deep).unwrap();
    assert_eq!(source_tree_from(&deep), None);
    std::fs::create_dir_all(root.join("xtask")).unwrap();
    std::fs::create_dir_all(root.join("boards")).unwrap();
    for f in ["Cargo.toml", "xtask/Cargo.toml", "boards/shared.toml"] {
        std::fs::write(root.join(f), "").unwrap();
    }
    assert_eq!(source_tree_from(&deep).as_deref(), Some(root));
    // This crate's own tree is one.
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    assert_eq!(source_tree_from(here).as_deref(), here.parent());

    let tree = Path::new("/src/benchboot");
    let rpi_4b =
        benchboot_results::name::SafeName::new(benchboot_results::name::NameKind::Board, "rpi-4b")
            .unwrap();
    assert_eq!(
        image_path(tree, &rpi_4b, None),
        Path::new("/src/benchboot/target/images/rpi-4b.img")
    );
    assert_eq!(
        image_path(tree, &rpi_4b, Some("/cache/t".as_ref())),
        Path::new("/cache/t/images/rpi-4b.img")
    );
    assert_eq!(
        image_path(tree, &rpi_4b, Some("out".as_ref())),
        Path::new("/src/benchboot/out/images/rpi-4b.img")
    );

    assert_eq!(span(Duration::from_secs(45)), "45 s");
    assert_eq!(span(Duration::from_secs(5400)), "90 min");
    assert_eq!(span(Duration::from_secs(10_800)), "3 h");
    assert_eq!(span(Duration::from_secs(9000)), "2 h 30 min");
}

#[test]
fn wired_interfaces_leave_out_wireless_virtual_and_gadget_links() {
    let dir = tempfile::tempdir().unwrap();
    let net = dir.path().join("net");
    let drivers = dir.path().join("drivers");
    for (name, driver, wireless) in [
        ("enp3s0", Some("r8169"), false),
        ("wlp2s0", Some("iwlwifi"), true),
        ("usb0", Some("cdc_ncm"), false),
        ("lo", None, false),
        ("docker0", None, false),
    ] {
        let d = net.join(name);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("ifindex"), "3\n").unwrap();
        if let Some(driver) = driver {
            std::fs::create_dir_all(d.join("device")).unwrap();
            std::fs::create_dir_all(drivers.join(driver)).unwrap();
            std::os::unix::fs::symlink(drivers.join(driver), d.join("device/driver")).unwrap();
        }
        if wireless {
            std::fs::create_dir_all(d.join("wireless")).unwrap();
        }
    }
    assert_eq!(wired_interfaces(&net), ["enp3s0"]);
}

#[test]
fn console_speeds_parse() {
    let mut b = board("rpi-zero-w");
    let at = |device, baud| Console { device, baud };
    assert_eq!(console(&b), at("ttyS1", Some(115_200)));
    b.boot.console = "ttyS0,1500000n8".into();
    assert_eq!(console(&b), at("ttyS0", Some(1_500_000)));
    b.boot.console = "ttyAMA0".into();
    assert_eq!(console(&b), at("ttyAMA0", None));
}

#[test]
fn the_instructions_say_where_the_power_meter_goes_and_what_it_measures() {
    let card = Card::Disk(PathBuf::from("/dev/sdb"));
    let text = instructions(&board("rpi-4b"), &card, &Peer::External, &[]);
    assert!(
        text.contains(
            "Energy (optional): put a power meter between the supply and the board's power \
             input (a USB-C or micro-USB meter in the board's power cable); a meter between \
             the supply and the board's power input (a USB meter in the board's cable) \
             measures the board alone. A plug at the wall works too, but a meter at the wall \
             measures the board and its supply's losses too"
        ),
        "{text}"
    );
    assert!(
        text.contains("  benchboot power import RUN trace.json\n"),
        "{text}"
    );
}
