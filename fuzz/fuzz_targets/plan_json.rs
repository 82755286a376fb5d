//! The plan parser: `Plan::from_json` (serde, then `validate`), as PID 1 reads it.
#![no_main]

use benchboot_plan::{plan_name, Plan};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // The kernel command line picks the plan: any text gives some name.
    let _ = plan_name(text);
    let Ok(plan) = Plan::from_json(text) else {
        return;
    };
    for t in &plan.storage.targets {
        let _ = t.device_ref().to_string();
    }
    if let Some(g) = &plan.network.gadget {
        for i in 0..g.functions.len() {
            let _ = g.link_addresses(i);
        }
    }
    // A valid plan written out is read back the same.
    let json = serde_json::to_string(&plan).expect("a plan serialises");
    assert_eq!(Plan::from_json(&json).as_ref(), Ok(&plan));
});
