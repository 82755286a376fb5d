//! The shared board pieces parser: `Shared::from_toml`, then its look-ups.
#![no_main]

use std::path::Path;

use benchboot_board::Shared;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(shared) = Shared::from_toml(Path::new("boards/shared.toml"), text) else {
        return;
    };
    for name in shared.kernels.keys() {
        assert!(shared.kernel(name).is_ok());
    }
    for name in shared.loaders.keys() {
        assert!(shared.loader(name).is_ok());
    }
    let _ = shared.kernel("no-such-kernel");
    let _ = shared.loader("no-such-loader");
    for name in shared.module_sets.keys() {
        let _ = shared.expand_modules(&[format!("@{name}"), "ext4".to_owned()]);
    }
    let _ = shared.expand_modules(&["@no-such-set".to_owned()]);
});
