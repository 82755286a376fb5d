//! Links the system tests like the init (firmware/build.rs): `tests/system/log_decode.rs`
//! logs through the firmware's defmt logger and decodes with its own ELF, which needs
//! defmt's table (`../firmware/defmt-sections.x`) and a non-PIE link.
#![forbid(unsafe_code)]

fn main() {
    println!("cargo::rerun-if-changed=../firmware/defmt-sections.x");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
        let script = std::path::Path::new(&dir).join("../firmware/defmt-sections.x");
        println!("cargo::rustc-link-arg-tests=-T{}", script.display());
        println!("cargo::rustc-link-arg-tests=-no-pie");
    }
}
