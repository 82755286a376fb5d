//! The plans an image carries: `plan.json` (hardware default: the plan file given to
//! `cargo xtask image --plan`, `standard` by default), `qemu.json` (a short plan for the
//! emulated smoke tier), `qemu-card.json` (the QEMU link and fixings, storage and tests
//! from the card's `plan.toml`), `faults.json` (fault injection), `watchdog.json` (a hung
//! PID 1 the watchdog must reset) and `powercut.json` (the power-cut test's run). The
//! init picks one by the kernel parameter `benchboot.plan=<name>` (default `plan`).

use anyhow::Result;
use benchboot_board::{Band, Board, QemuDrive, QemuNetwork, QemuWifi, QemuWired};
use benchboot_plan::presets::{preset, preset_file, DEFAULT_PRESET};
use benchboot_plan::resolve::{unavailable_reason, EthernetFacts, UsbEthernetFacts};
use benchboot_plan::wifi::WifiStandIn;
use benchboot_plan::{
    resolve, seed_block_sizes, CardCheckPlan, DeviceReadPlan, EnergyPlan, Fault, Filesystem,
    GadgetPlan, ImageFacts, LongCell, MemoryPlan, Mode, NetTests, NetworkPlan, Plan, PlanSource,
    RandomPlan, ResultsTarget, StoragePlan, StorageTarget, Supervision, Topology, WiredKind,
    WiredPlan, DEFAULT_PLAN, MIB, RESULTS_PORT,
};
use benchboot_plan::{AskedChannel, WifiBand, WifiEntry, WifiFacts, WifiPlan, WifiRole};

use crate::layout::{partition_device, Layout, Role};

/// The guest address QEMU's user-mode network (slirp) expects; host forwards reach it.
pub const QEMU_GUEST_ADDR: [u8; 4] = [10, 0, 2, 15];

/// Where the guest reaches the peer on QEMU's user network: a guest forward
/// (`guestfwd=tcp:10.0.2.100:5202-cmd:...`) connects each connection to `benchboot
/// peer` on the host's loopback (slirp's documented example address for guestfwd).
pub const QEMU_PEER_ADDR: [u8; 4] = [10, 0, 2, 100];

/// The board's HTTP server port in QEMU plans: fixed, so a host forward reaches it.
pub const QEMU_BOARD_HTTP_PORT: u16 = 8081;

/// MACs of the `virtio-pair` NICs (`qemu.wired`): two cables inside QEMU, one QEMU hub
/// each; per cable the board's end, then the host's end (moved into a namespace).
/// 52:54:00 is QEMU's own OUI; the `be` byte keeps them apart from QEMU's defaults.
pub const QEMU_WIRED_MACS: [[&str; 2]; 2] = [
    ["52:54:00:be:00:01", "52:54:00:be:00:02"],
    ["52:54:00:be:00:03", "52:54:00:be:00:04"],
];

/// The plan every image of `board` starts from (`emulated`: the QEMU tier's).
pub fn base(board: &Board, layout: &Layout, modules: Vec<String>, emulated: bool) -> Plan {
    let targets = layout
        .parts
        .iter()
        .filter_map(|p| match p.role {
            Role::Test(fs) => Some(StorageTarget {
                label: fs.name().to_owned(),
                device: partition_device(&board.disk, p.number),
                filesystem: fs,
                optional: false,
            }),
            _ => None,
        })
        .collect();
    let results = layout.part(Role::Results).map(|p| p.number).unwrap_or(2);
    Plan {
        board: board.name.clone(),
        emulated,
        modules,
        results: ResultsTarget {
            device: partition_device(&board.disk, results),
            file: "results.json".into(),
            journal: layout
                .part(Role::Journal)
                .map(|p| partition_device(&board.disk, p.number)),
        },
        storage: StoragePlan {
            targets,
            block_sizes: seed_block_sizes(),
            modes: vec![Mode::Sync, Mode::Direct],
            byte_cap: 64 * MIB,
            time_cap_ms: 10_000,
            repetitions: 3,
            device_wait_ms: 15_000,
            // hdparm's own sizes: 2 MiB chunks, 2 s of -T, 3 s of -t (hdparm(8)).
            device_reads: Some(DeviceReadPlan {
                disks: vec![format!("/dev/{}", board.disk)],
                chunk_bytes: 2 * MIB,
                cached_ms: 2_000,
                buffered_ms: 3_000,
            }),
            random: Some(RandomPlan {
                targets: vec![
                    Filesystem::Raw.name().into(),
                    Filesystem::Ext4.name().into(),
                ],
                block_size: 4096,
                region_bytes: 64 * MIB,
                duration_ms: 10_000,
                queue_depths: vec![1, 4],
            }),
            verify: true,
            governor: Some("performance".into()),
            long_cell: None,
        },
        network: hardware_network(board),
        memory: Some(if emulated {
            MemoryPlan::QEMU
        } else {
            MemoryPlan::HARDWARE
        }),
        card_check: None,
        energy: if emulated {
            EnergyPlan::QEMU
        } else {
            EnergyPlan::HARDWARE
        },
        supervision: Supervision::default(),
        faults: Vec::new(),
        commands: Vec::new(),
        card_plan: false,
        source: PlanSource::default(),
    }
}

/// A plan file as given to `cargo xtask image --plan` and written onto the card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanText {
    /// The name errors and results use: `plans/standard.toml`, or the path given.
    pub file: String,
    pub text: String,
}

impl PlanText {
    /// The default, the `standard` preset.
    pub fn standard() -> PlanText {
        PlanText::preset(DEFAULT_PRESET).unwrap_or_else(|| PlanText {
            file: preset_file(DEFAULT_PRESET),
            text: String::new(),
        })
    }

    /// Preset `name` (`quick`, `standard`, `seeds`).
    pub fn preset(name: &str) -> Option<PlanText> {
        preset(name).map(|t| PlanText {
            file: preset_file(name),
            text: t.to_owned(),
        })
    }

    /// A preset's name, or a path to a plan file (`cargo xtask image --plan ARG`,
    /// `benchboot plan check ARG`).
    ///
    /// # Errors
    /// When `arg` is no preset and no file that can be read, or a file that is not
    /// UTF-8 ([`benchboot_plan::NotUtf8`]: says what it looks like; a UTF-8 byte-order
    /// mark is dropped).
    pub fn from_arg(arg: &str) -> Result<PlanText> {
        if let Some(p) = PlanText::preset(arg) {
            return Ok(p);
        }
        let bytes = benchboot_plan::file::read_bounded(std::path::Path::new(arg)).map_err(|e| {
            if matches!(
                e.kind(),
                std::io::ErrorKind::FileTooLarge | std::io::ErrorKind::InvalidInput
            ) {
                // Past the size bound, or no regular file: the message names the file
                // and what it is.
                anyhow::Error::new(e)
            } else {
                anyhow::Error::new(e).context(format!(
                    "{arg}: neither a preset (quick, standard, seeds) nor a file that can be read"
                ))
            }
        })?;
        let text = benchboot_plan::file::decode_text(arg, &bytes)?;
        Ok(PlanText {
            file: arg.to_owned(),
            text,
        })
    }
}

/// What the image knows that a plan file does not: the card's test partitions, the boot
/// disk and the board's disk buses. The init reads it from
/// [`benchboot_plan::IMAGE_FACTS_PATH`] to resolve a plan file on the card.
pub fn image_facts(board: &Board, layout: &Layout) -> ImageFacts {
    let p = base(board, layout, Vec::new(), false);
    ImageFacts {
        board: board.name.clone(),
        card: p.storage.targets,
        boot_disk: board.disk.clone(),
        disk_signature: crate::layout::disk_signature(&board.name, layout),
        buses: board.extra_storage.iter().map(|e| e.bus).collect(),
        ethernet: image_facts_ethernet(board),
        usb_ethernet: image_facts_usb_ethernet(board),
        wifi: image_facts_wifi(board),
    }
}

/// On hardware the results link is the gadget (every function of the board file, DHCP
/// for the host) and the network tests run against `benchboot peer` on the host. Boards
/// without a gadget serve results on their Ethernet interface at 10.55.0.1/30 (the host
/// takes 10.55.0.2/30); every board also writes them to the card's results partition.
fn hardware_network(board: &Board) -> NetworkPlan {
    let gadget = board.gadget.as_ref().map(|g| GadgetPlan {
        functions: g.functions.clone(),
        ..GadgetPlan::default_for(&board.name)
    });
    let (interface, address) = match &gadget {
        Some(_) => (String::new(), [0; 4]),
        None => (
            board
                .ethernet
                .as_ref()
                .map_or_else(|| "eth0".to_owned(), |e| e.interface.clone()),
            [10, 55, 0, 1],
        ),
    };
    // No gadget: the results link is the board's Ethernet on a cable to the host. It is
    // also the measured link, direct topology on the same /30 (the board's DHCP server
    // leases the host 10.55.0.2, the address the static interface expects).
    let wired: Vec<WiredPlan> = match (&gadget, &board.ethernet) {
        (None, Some(_)) => {
            let facts = image_facts_ethernet(board);
            vec![WiredPlan {
                name: "eth".into(),
                kind: WiredKind::Builtin,
                drivers: facts
                    .as_ref()
                    .map(|e| e.drivers.clone())
                    .unwrap_or_default(),
                mac: None,
                topology: Topology::Direct {
                    subnet: [10, 55, 0, 0],
                    lease_secs: 3600,
                },
                link_wait_ms: 120_000,
                rated_mbit: facts.and_then(|e| e.rated_mbit),
                host_in_namespace: None,
                unavailable: None,
            }]
        }
        _ => Vec::new(),
    };
    NetworkPlan {
        interface,
        address,
        prefix_len: 30,
        port: RESULTS_PORT,
        interface_wait_ms: 10_000,
        tests: (gadget.is_some() || !wired.is_empty()).then(NetTests::hardware),
        gadget,
        wired,
        wifi: None,
    }
}

/// The hardware default: plan file `file` (by default `plans/standard.toml`: the seeds'
/// 18 block sizes in sync and direct mode on ext2, ext3, ext4, vfat and the raw
/// partition, 64 MiB or 10 s per cell and direction, 3 repetitions; hdparm-style reads;
/// random 4 KiB IOPS; verification) on the board's fixings. PID 1 takes the card's
/// `plan.toml` over it.
///
/// # Errors
/// The plan file's error, naming file, line and key.
pub fn hardware(
    board: &Board,
    layout: &Layout,
    modules: Vec<String>,
    file: &PlanText,
) -> Result<Plan> {
    let mut b = base(board, layout, modules, false);
    b.card_plan = true;
    Ok(resolve(
        &file.file,
        &file.text,
        &b,
        &image_facts(board, layout),
    )?)
}

/// The QEMU smoke plan: the hardware plan's whole structure (every block size, mode,
/// target and step) with small caps (256 KiB or 250 ms per cell, one repetition, 300 ms
/// device reads and random runs over 4 MiB); results link over QEMU's user network; no
/// watchdog.
pub fn qemu(board: &Board, layout: &Layout, modules: Vec<String>) -> Plan {
    let mut p = base(board, layout, modules, true);
    let s = &mut p.storage;
    s.byte_cap = 256 * 1024;
    s.time_cap_ms = 250;
    s.repetitions = 1;
    if let Some(d) = &mut s.device_reads {
        (d.cached_ms, d.buffered_ms) = (300, 300);
    }
    if let Some(r) = &mut s.random {
        (r.region_bytes, r.duration_ms) = (4 * MIB, 300);
    }
    p.network = qemu_network(board, p.network.gadget.take());
    // No watchdog under TCG: emulated time is no measure of a hang, and a QEMU machine
    // that models the SoC's watchdog would reset a slow but healthy guest. The watchdog
    // plan arms it on purpose.
    p.supervision.watchdog_timeout_s = 0;
    // The full-card check over the unpartitioned space (438 MiB of the 1 GiB image), where
    // the disk is virtio-blk: fast enough under TCG, and the same probe code an SD card
    // runs (the SD machines' emulated card moves ~2 MB/s). The whole-card pass too: it
    // writes and reads back the 438 MiB once.
    if board
        .qemu
        .as_ref()
        .is_some_and(|q| q.drive == QemuDrive::Virtio)
    {
        p.card_check = Some(CardCheckPlan {
            full: true,
            ..CardCheckPlan::QEMU
        });
    }
    p
}

/// The `qemu` plan's one long cell on a virtio disk (qemu-virt-arm64): ext4, O_DIRECT,
/// 4 KiB, up to 3 s or 32 MiB, so a QEMU report draws a storage timeline (the report
/// draws one for a pass of 2 s or more; the other cells stop at 250 ms). 4 KiB direct
/// writes moved 4.5 MiB/s there under TCG (a 256 KiB cell, 2026-12-07), so the write
/// runs its 3 s (a timeline point every 250 ms) well within ext4's 96 MiB partition,
/// and the read of what it wrote takes up to about as long. SD machines move ~2 MB/s:
/// left out there, as are the plans built on `qemu` (the short plan, the card, fault
/// and power-cut plans).
pub fn with_long_cell(board: &Board, mut p: Plan) -> Plan {
    let virtio = board
        .qemu
        .as_ref()
        .is_some_and(|q| q.drive == QemuDrive::Virtio);
    let cell = LongCell {
        target: "ext4".into(),
        mode: Mode::Direct,
        block_size: 4096,
        byte_cap: 32 * MIB,
        time_cap_ms: 3_000,
    };
    if virtio && p.storage.long_cell_fits(&cell) {
        p.storage.long_cell = Some(cell);
    }
    p
}

/// Every plan of an image, by the name `benchboot.plan=` picks it with: the hardware
/// plan (`hw_modules`) and the QEMU ones (`qemu_modules`: the board's and its QEMU
/// machine's).
///
/// # Errors
/// The plan file's error, naming file, line and key.
pub fn all(
    board: &Board,
    layout: &Layout,
    hw_modules: Vec<String>,
    qemu_modules: Vec<String>,
    file: &PlanText,
) -> Result<Vec<(&'static str, Plan)>> {
    Ok(vec![
        (DEFAULT_PLAN, hardware(board, layout, hw_modules, file)?),
        (
            "qemu",
            with_long_cell(board, qemu(board, layout, qemu_modules.clone())),
        ),
        (QEMU_SHORT, qemu_short(board, layout, qemu_modules.clone())),
        (QEMU_LAVA, qemu_lava(board, layout, qemu_modules.clone())),
        ("qemu-card", qemu_card(board, layout, qemu_modules.clone())),
        ("faults", faults(board, layout, qemu_modules.clone())),
        ("watchdog", watchdog(board, layout, qemu_modules.clone())),
        ("powercut", powercut(board, layout, qemu_modules)),
    ])
}

/// Name of the short QEMU plan ([`qemu_short`]).
pub const QEMU_SHORT: &str = "qemu-short";

/// The QEMU plan over 5 block sizes ([`QEMU_SHORT_BLOCK_SIZES`]: 256 B, 512 B, 4 KiB,
/// 64 KiB, 1 MiB) instead of 18, every other step as the QEMU plan has it (targets,
/// modes, device reads, random I/O, verification, memory, links). The 18 sizes walk one
/// loop with one parameter; these 5 walk each of its paths: below the 512 B logical
/// block (O_DIRECT impossible: the cell runs sync and says so), at it, the 4 KiB page,
/// and large blocks. The QEMU tiers and the main job (`cargo xtask qemu`) boot it, so
/// each board's kernel, drivers, memory kernels and links are checked in a fraction of
/// the time (the raspi0 smoke test boots it too, as the main job), while qemu-virt-arm64
/// runs the whole `qemu` plan.
pub fn qemu_short(board: &Board, layout: &Layout, modules: Vec<String>) -> Plan {
    let mut p = qemu(board, layout, modules);
    p.storage.block_sizes = QEMU_SHORT_BLOCK_SIZES.to_vec();
    p
}

/// The block sizes of [`qemu_short`], bytes: 256 B is below every card's 512 B logical
/// block size (`/sys/block/<dev>/queue/logical_block_size`), so its direct-mode cell takes
/// the sync fallback; then one size per regime as [`SHORT_BLOCK_SIZES`].
pub const QEMU_SHORT_BLOCK_SIZES: [u64; 5] = [256, 512, 4096, 64 * 1024, MIB];

/// Name of the plan a LAVA `qemu` job boots ([`qemu_lava`]).
pub const QEMU_LAVA: &str = "qemu-lava";

/// The plan of the `qemu` job `cargo xtask lava` writes: the short QEMU plan without the
/// wired links and the WiFi entries. LAVA's qemu device type gives the guest one NIC
/// (the wired stand-ins need four more on QEMU hubs, created before the results NIC,
/// which LAVA's command line cannot order), and the job is about the farm's path
/// (monitors, numbers with units, the document on the console): storage, memory, the
/// clock and the gadget's three functions over dummy_hcd (all inside the guest) stay.
pub fn qemu_lava(board: &Board, layout: &Layout, modules: Vec<String>) -> Plan {
    let mut p = qemu_short(board, layout, modules);
    p.network.wired.clear();
    p.network.wifi = None;
    if p.network.gadget.is_none() {
        p.network.tests = None;
    }
    p
}

/// The block sizes of the short QEMU plans (power cuts, tiers): one per regime, from
/// below the 4 KiB page (O_DIRECT falls back) to 1 MiB.
const SHORT_BLOCK_SIZES: [u64; 4] = [512, 4096, 64 * 1024, MIB];

/// The QEMU plan that takes the card's `plan.toml`: QEMU's link, modules and
/// supervision; storage and network tests as the card's plan file says (the QEMU plan's
/// own when the card has none). The plan-file test boots it.
pub fn qemu_card(board: &Board, layout: &Layout, modules: Vec<String>) -> Plan {
    let mut p = qemu(board, layout, modules);
    p.card_plan = true;
    // The card's plan names its own wired links and WiFi; QEMU's stand-ins are the QEMU
    // plan's.
    p.network.wired.clear();
    p.network.wifi = None;
    if p.network.gadget.is_none() {
        p.network.tests = None;
    }
    p
}

/// The QEMU plan for tests of supervision and persistence (faults, watchdog, power
/// cuts): no memory step, no full-card check and no energy marks, which these boots would repeat to no
/// purpose (the QEMU plan's own boots check both) and in which a power cut would land
/// instead of among the saved storage steps.
fn qemu_storage_only(board: &Board, layout: &Layout, modules: Vec<String>) -> Plan {
    let mut p = qemu(board, layout, modules);
    p.memory = None;
    p.card_check = None;
    // The watchdog plan's 7 s stall limit and the cuts' timing are the runs' own.
    p.energy = EnergyPlan::OFF;
    p
}

/// The fault-injection plan: a worker that segfaults, one that panics, one that hangs
/// past a 5 s worker limit, then a tiny storage sweep (ext4, 4 KiB and 64 KiB, sync),
/// then PID 1 panics before serving. No network tests.
pub fn faults(board: &Board, layout: &Layout, modules: Vec<String>) -> Plan {
    let mut p = qemu_storage_only(board, layout, modules);
    let s = &mut p.storage;
    s.targets.retain(|t| t.filesystem == Filesystem::Ext4);
    s.block_sizes = vec![4096, 64 * 1024];
    s.modes = vec![Mode::Sync];
    (s.device_reads, s.random, s.verify) = (None, None, false);
    p.network.gadget = None;
    p.network.tests = None;
    p.network.wired.clear();
    p.network.wifi = None;
    p.supervision.worker_limit_ms = 5_000;
    p.faults = vec![Fault::Segfault, Fault::Panic, Fault::Hang, Fault::Pid1Panic];
    p
}

/// The watchdog plan: the fault plan's tiny sweep, a 5 s watchdog timeout and 2 s
/// worker limit (a 7 s stall limit), then PID 1's main sequence stops
/// ([`Fault::Pid1Hang`]): the watchdog must reset the board.
pub fn watchdog(board: &Board, layout: &Layout, modules: Vec<String>) -> Plan {
    let mut p = faults(board, layout, modules);
    p.supervision.worker_limit_ms = 2_000;
    p.supervision.watchdog_timeout_s = 5;
    p.faults = vec![Fault::Pid1Hang];
    p
}

/// The power-cut plan: the QEMU plan's storage steps (every target, both modes, device
/// reads, random I/O, verification) over 4 block sizes (512 B, 4 KiB, 64 KiB, 1 MiB),
/// so a boot is short and a cut lands among many persisted steps; no network tests.
pub fn powercut(board: &Board, layout: &Layout, modules: Vec<String>) -> Plan {
    let mut p = qemu_storage_only(board, layout, modules);
    p.storage.block_sizes = SHORT_BLOCK_SIZES.to_vec();
    p.network.gadget = None;
    p.network.tests = None;
    p.network.wired.clear();
    p.network.wifi = None;
    p
}

/// In QEMU the results link is QEMU's emulated NIC on its user network (the host
/// forwards a port to it). The gadget runs only where the board file asks for the
/// dummy_hcd test: one function at a time, the host side in a namespace of the guest,
/// with short tests (emulated figures, never hardware results).
fn qemu_network(board: &Board, gadget: Option<GadgetPlan>) -> NetworkPlan {
    let q = board.qemu.as_ref();
    // No emulated NIC: no link (and no wait for one); the harness reads the card.
    let interface = match q.map(|q| q.network) {
        Some(QemuNetwork::VirtioNet) => "eth0",
        Some(QemuNetwork::None) => "",
        // usb-net: cdc_ether names it `eth0` under QEMU 10, since QEMU reports its MAC
        // with first byte 0x40 (not locally administered, so usbnet picks `eth%d`, not
        // `usb%d`). The raspi machines model no other NIC.
        _ => "eth0",
    };
    let gadget = gadget
        .filter(|_| q.is_some_and(|q| q.gadget_dummy_hcd))
        .map(|g| GadgetPlan {
            in_turn: true,
            host_in_namespace: true,
            udc: Some("dummy_udc.0".into()),
            link_wait_ms: 30_000,
            ..g
        });
    let wired = qemu_wired(board);
    let usb_net_lan = q.is_some_and(|q| q.wired == QemuWired::UsbNetLan);
    let hwsim = q.is_some_and(|q| q.wifi == QemuWifi::Hwsim);
    let tests = (gadget.is_some() || !wired.is_empty() || hwsim).then(|| NetTests {
        peer_wait_ms: 20_000,
        duration_ms: 2_000,
        interval_ms: 500,
        omit_ms: 500,
        streams: vec![1, 2],
        latency_samples: 200,
        // QEMU's user network moves a few MiB/s for an emulated guest; its full-speed
        // usb-net ~60 kB/s (1 MiB: ~17 s each way).
        http_bytes: if usb_net_lan { MIB } else { 16 * MIB },
        board_http_port: QEMU_BOARD_HTTP_PORT,
        // slirp forwards TCP only (guestfwd): no UDP out of the user network.
        udp_bitrate: if usb_net_lan { 0 } else { 20_000_000 },
        ..NetTests::hardware()
    });
    NetworkPlan {
        interface: interface.into(),
        address: QEMU_GUEST_ADDR,
        prefix_len: 24,
        port: RESULTS_PORT,
        interface_wait_ms: 20_000,
        wifi: qemu_wifi(board, tests.as_ref()),
        gadget,
        tests,
        wired,
    }
}

/// The board's Ethernet as [`ImageFacts`] carry it.
fn image_facts_ethernet(board: &Board) -> Option<EthernetFacts> {
    board.ethernet.as_ref().map(|e| EthernetFacts {
        drivers: e.drivers.clone(),
        rated_mbit: Some(e.rated_mbit),
    })
}

/// The board's radio as [`ImageFacts`] carry it.
fn image_facts_wifi(board: &Board) -> Option<WifiFacts> {
    board.wifi().map(|w| WifiFacts {
        chip: w.chip.clone(),
        bands: w.bands.iter().map(|b| plan_band(*b)).collect(),
        widths_mhz: w.widths_mhz.clone(),
        firmware_missing: w.firmware_missing.clone(),
    })
}

fn plan_band(b: Band) -> WifiBand {
    match b {
        Band::Ghz2 => WifiBand::Ghz2,
        Band::Ghz5 => WifiBand::Ghz5,
    }
}

/// Where the QEMU-only stand-in AP sits in the initramfs (board shared.toml
/// `radio.hwsim-ap`: Debian's hostapd with its libraries and loader).
pub const QEMU_HOSTAPD: &str = "/usr/sbin/hostapd";

/// The QEMU plan's WiFi (board file `qemu.wifi = "hwsim"`): mac80211_hwsim's two radios,
/// the board as client of a stand-in AP per entry (hostapd on the second radio, in a
/// namespace) on 2.4 GHz ch 1 at 20 MHz, 5 GHz ch 36 at 40 and at 80 MHz; two entries
/// the regulatory domain (DE) refuses (ch 52: DFS; ch 14: not a DE channel), skipped
/// with the reason; then the AP-beacon and IBSS checks. Short tests: one stream each
/// way after the 3 s warm-up, 50 round trips.
fn qemu_wifi(board: &Board, tests: Option<&NetTests>) -> Option<WifiPlan> {
    let hwsim = board
        .qemu
        .as_ref()
        .is_some_and(|q| q.wifi == QemuWifi::Hwsim);
    let tests = tests?;
    if !hwsim {
        return None;
    }
    let entry = |band, channel, width_mhz| {
        let asked = AskedChannel {
            band,
            channel,
            width_mhz,
        };
        WifiEntry {
            name: asked.link_name(),
            ssid: Some(format!("bb-qemu-ch{channel}-{width_mhz}")),
            asked: Some(asked),
            skip: None,
        }
    };
    Some(WifiPlan {
        country: "DE".into(),
        role: WifiRole::Client {
            ssid: "bb-qemu-stand-in".into(),
            passphrase: None,
            peer: None,
        },
        entries: vec![
            entry(WifiBand::Ghz2, 1, 20),
            entry(WifiBand::Ghz5, 36, 40),
            entry(WifiBand::Ghz5, 36, 80),
            entry(WifiBand::Ghz5, 52, 20),
            entry(WifiBand::Ghz2, 14, 20),
        ],
        connect_wait_ms: 20_000,
        warmup_ms: benchboot_plan::wifi::MIN_WARMUP_MS,
        problems: Vec::new(),
        stand_in: Some(WifiStandIn {
            hostapd: QEMU_HOSTAPD.into(),
            ap_beacon_check: true,
            ibss_smoke: true,
        }),
        tests: Some(NetTests {
            duration_ms: 2_000,
            interval_ms: 500,
            streams: vec![1],
            latency_samples: 50,
            http_bytes: 0,
            udp_bitrate: 0,
            ..tests.clone()
        }),
        chip: Some("mac80211_hwsim".into()),
        firmware_missing: None,
    })
}

/// The board's USB adapter port as [`ImageFacts`] carry it.
fn image_facts_usb_ethernet(board: &Board) -> Option<UsbEthernetFacts> {
    board.usb_ethernet.as_ref().map(|u| UsbEthernetFacts {
        drivers: u.drivers.clone(),
    })
}

/// The QEMU plan's wired links (board file `qemu.wired`).
fn qemu_wired(board: &Board) -> Vec<WiredPlan> {
    match board.qemu.as_ref().map(|q| q.wired) {
        Some(QemuWired::UsbNetLan) => vec![WiredPlan {
            name: "usb-eth".into(),
            kind: WiredKind::UsbAdapter,
            // QEMU's usb-net is a CDC Ethernet device; cdc_ether binds it.
            drivers: vec!["cdc_ether".into()],
            mac: None,
            topology: Topology::Lan {
                peer: Some(QEMU_PEER_ADDR),
            },
            link_wait_ms: 20_000,
            rated_mbit: None,
            host_in_namespace: None,
            unavailable: None,
        }],
        Some(QemuWired::VirtioPair) => {
            let facts = ImageFacts {
                board: board.name.clone(),
                card: Vec::new(),
                boot_disk: board.disk.clone(),
                disk_signature: 0,
                buses: Vec::new(),
                ethernet: image_facts_ethernet(board),
                usb_ethernet: image_facts_usb_ethernet(board),
                wifi: None,
            };
            // Two links that cannot run first (bad input the rest of the plan survives):
            // an adapter the board has no port for, an interface that never appears.
            let absent = [
                WiredPlan {
                    name: "absent-usb".into(),
                    kind: WiredKind::UsbAdapter,
                    drivers: vec!["r8152".into()],
                    mac: None,
                    topology: Topology::Lan { peer: None },
                    link_wait_ms: 2_000,
                    rated_mbit: None,
                    host_in_namespace: None,
                    unavailable: unavailable_reason(WiredKind::UsbAdapter, &board.name, &facts),
                },
                WiredPlan {
                    name: "absent-nic".into(),
                    kind: WiredKind::Builtin,
                    drivers: vec!["r8152".into()],
                    mac: None,
                    topology: Topology::Lan { peer: None },
                    link_wait_ms: 2_000,
                    rated_mbit: Some(1000),
                    host_in_namespace: None,
                    unavailable: None,
                },
            ];
            absent.into_iter().chain(virtio_pair_links()).collect()
        }
        _ => Vec::new(),
    }
}

/// The two `virtio-pair` cables' links: direct on the first, LAN on the second.
fn virtio_pair_links() -> impl Iterator<Item = WiredPlan> {
    [("direct", 0usize), ("lan", 1)]
        .into_iter()
        .map(|(name, cable)| WiredPlan {
            name: format!("virtio-{name}"),
            kind: WiredKind::Builtin,
            drivers: vec!["virtio_net".into()],
            mac: Some(QEMU_WIRED_MACS[cable][0].into()),
            topology: if cable == 0 {
                Topology::Direct {
                    subnet: benchboot_plan::resolve::WIRED_SUBNET,
                    lease_secs: 3600,
                }
            } else {
                // No peer address: the board finds the stand-in LAN's announcement.
                Topology::Lan { peer: None }
            },
            link_wait_ms: 20_000,
            rated_mbit: None,
            host_in_namespace: Some(QEMU_WIRED_MACS[cable][1].into()),
            unavailable: None,
        })
}

#[cfg(test)]
mod tests;
