//! The document of a run on this machine rather than a board (`benchboot storage`,
//! `memory`, `probe --full`): its plan ([`host_plan`], board
//! [`crate::context::HOST_BOARD`]) and its system part ([`system_info`]).

use benchboot_plan::{MemoryPlan, NetworkPlan, Plan, ResultsTarget, StoragePlan, Supervision};
use benchboot_results::SystemInfo;

use crate::context::HOST_BOARD;

/// A storage plan that measures nothing: the plan of a host run of another step
/// (`benchboot memory`, `benchboot probe --full`).
pub fn no_storage() -> StoragePlan {
    StoragePlan {
        targets: Vec::new(),
        block_sizes: Vec::new(),
        modes: Vec::new(),
        byte_cap: 0,
        time_cap_ms: 0,
        repetitions: 0,
        device_wait_ms: 0,
        device_reads: None,
        random: None,
        verify: false,
        governor: None,
        long_cell: None,
    }
}

/// The plan of a run on this machine ([`HOST_BOARD`], not emulated, no network, no
/// modules): `storage` and `memory` as the command ran them (`benchboot storage`,
/// `benchboot memory`).
pub fn host_plan(storage: StoragePlan, memory: Option<MemoryPlan>) -> Plan {
    Plan {
        board: HOST_BOARD.into(),
        emulated: false,
        modules: vec![],
        results: ResultsTarget {
            device: "/dev/null".into(),
            file: "results.json".into(),
            journal: None,
        },
        storage,
        network: NetworkPlan {
            interface: "lo".into(),
            address: [127, 0, 0, 1],
            prefix_len: 8,
            port: 1,
            interface_wait_ms: 0,
            gadget: None,
            tests: None,
            wired: Vec::new(),
            wifi: None,
        },
        memory,
        card_check: None,
        energy: benchboot_plan::EnergyPlan::OFF,
        supervision: Supervision::default(),
        faults: Vec::new(),
        commands: Vec::new(),
        card_plan: false,
        source: benchboot_plan::PlanSource::default(),
    }
}

/// What this machine's system says of itself: `uname` and `/proc/meminfo` on Linux and
/// macOS (the board's own code, [`benchboot_storage::system::system_info`]); on Windows
/// the OS family and CPU architecture only (`windows`, `x86_64`).
pub fn system_info() -> SystemInfo {
    #[cfg(unix)]
    return benchboot_storage::system::system_info(0);
    #[cfg(not(unix))]
    SystemInfo {
        kernel_release: std::env::consts::OS.into(),
        machine: std::env::consts::ARCH.into(),
        ..SystemInfo::default()
    }
}
