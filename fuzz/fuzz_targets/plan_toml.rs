//! The plan file reader as `benchboot plan check` runs it: `resolve::load` (strict
//! TOML over every preset it extends), then `resolve` on an image's facts (a Pi Zero W
//! card, as `crates/plan`'s own tests use) over the plan PID 1 starts from.
//! Checks: every error names the file and, when it gives a line, one inside the file;
//! a resolved plan is valid and reads back equal from the JSON PID 1 is given.
#![no_main]

use benchboot_plan::resolve::{load, resolve, ImageFacts};
use benchboot_plan::Plan;
use libfuzzer_sys::fuzz_target;

const FILE: &str = "my-plan.toml";

fn image() -> ImageFacts {
    ImageFacts::example()
}

fuzz_target!(|data: &[u8]| {
    // `plan check` refuses a file that is not UTF-8 before parsing it.
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let lines = text.split('\n').count();
    let named = |e: &benchboot_plan::PlanFileError| {
        // The shipped presets parse: every error is the user's file's.
        assert_eq!(e.file, FILE, "{e}");
        if let Some(l) = e.line {
            assert!((1..=lines).contains(&l), "{e} ({lines} lines)");
        }
        assert!(!e.key.is_empty() && !e.message.is_empty(), "{e:?}");
    };
    if let Err(e) = load(FILE, text) {
        named(&e);
        return;
    }
    let mut base = Plan::example();
    base.emulated = false;
    match resolve(FILE, text, &base, &image()) {
        Err(e) => named(&e),
        Ok(plan) => {
            assert_eq!(plan.validate(), Ok(()));
            let json = serde_json::to_string(&plan).expect("a plan serialises");
            assert_eq!(Plan::from_json(&json).as_ref(), Ok(&plan));
        }
    }
});
