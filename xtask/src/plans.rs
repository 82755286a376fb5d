//! The plans an image carries: `plan.json` (hardware default) and `qemu.json` (a short
//! plan for the emulated smoke tier). The init picks one by the kernel parameter
//! `benchboot.plan=<name>` (default `plan`).

use benchboot_board::Board;
use benchboot_plan::{
    seed_block_sizes, NetworkPlan, Plan, ResultsTarget, StoragePlan, StorageTarget, MIB,
};

use crate::layout::{partition_device, Layout, Role};

/// TCP port of the board's read-only results server.
pub const RESULTS_PORT: u16 = 8080;
/// The guest address QEMU's user-mode network (slirp) expects; host forwards reach it.
pub const QEMU_GUEST_ADDR: [u8; 4] = [10, 0, 2, 15];

fn base(board: &Board, layout: &Layout, modules: Vec<String>, emulated: bool) -> Plan {
    let targets = layout
        .parts
        .iter()
        .filter_map(|p| match p.role {
            Role::Test(fs) => Some(StorageTarget {
                label: fs.name().to_owned(),
                device: partition_device(&board.disk, p.number),
                filesystem: fs,
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
        },
        storage: StoragePlan {
            targets,
            block_sizes: seed_block_sizes(),
            byte_cap: 64 * MIB,
            time_cap_ms: 60_000,
            repetitions: 3,
            device_wait_ms: 15_000,
        },
        network: NetworkPlan {
            interface: "usb0".into(),
            address: [10, 55, 0, 1],
            prefix_len: 30,
            port: RESULTS_PORT,
            interface_wait_ms: 10_000,
        },
    }
}

/// The hardware default: the seeds' 18 block sizes, 64 MiB or 60 s per size and
/// direction (the 96 MiB test partitions bound the byte cap), 3 repetitions.
pub fn hardware(board: &Board, layout: &Layout, modules: Vec<String>) -> Plan {
    base(board, layout, modules, false)
}

/// The QEMU smoke plan: 5 block sizes (8 B, 512 B, 4 KiB, 64 KiB, 1 MiB), 2 MiB or 1.5 s
/// each, one repetition; results link over QEMU's user network.
pub fn qemu(board: &Board, layout: &Layout, modules: Vec<String>) -> Plan {
    let mut p = base(board, layout, modules, true);
    p.storage.block_sizes = vec![8, 512, 4096, 64 * 1024, MIB];
    p.storage.byte_cap = 2 * MIB;
    p.storage.time_cap_ms = 1_500;
    p.storage.repetitions = 1;
    p.network.address = QEMU_GUEST_ADDR;
    p.network.prefix_len = 24;
    p.network.interface_wait_ms = 20_000;
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::{plan, Spec};
    use benchboot_plan::Filesystem;

    #[test]
    fn qemu_plan_targets_every_test_partition() {
        let board = crate::load_board("rpi-zero-w").unwrap();
        let layout = plan(&Spec::default()).unwrap();
        let p = qemu(&board, &layout, vec!["ext4".into()]);
        p.validate().unwrap();
        assert!(p.emulated);
        let t: Vec<_> = p
            .storage
            .targets
            .iter()
            .map(|t| (t.device.as_str(), t.filesystem))
            .collect();
        assert_eq!(
            t,
            [
                ("/dev/mmcblk0p5", Filesystem::Ext2),
                ("/dev/mmcblk0p6", Filesystem::Ext3),
                ("/dev/mmcblk0p7", Filesystem::Ext4),
                ("/dev/mmcblk0p8", Filesystem::Vfat)
            ]
        );
        assert_eq!(p.results.device, "/dev/mmcblk0p2");
        let h = hardware(&board, &layout, vec![]);
        h.validate().unwrap();
        assert!(!h.emulated);
        assert_eq!(h.storage.block_sizes.len(), 18);
        // The byte cap must fit on a test partition.
        assert!(h.storage.byte_cap < layout.parts[2].size_bytes());
    }
}
