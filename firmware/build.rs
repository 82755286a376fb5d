//! Links every Linux binary of this crate (the init, the tests) with defmt's table for
//! the init's log (`src/log.rs`): `defmt-sections.x` adds the `.defmt` section to the
//! default layout. `-no-pie`: a defmt string index is the address of a symbol in that
//! (unloaded) section, which a position-independent executable would relocate. The
//! static musl init is non-PIE already; this makes the host's test binaries match.
#![forbid(unsafe_code)]

fn main() {
    println!("cargo::rerun-if-changed=defmt-sections.x");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
        let script = std::path::Path::new(&dir).join("defmt-sections.x");
        println!("cargo::rustc-link-arg=-T{}", script.display());
        println!("cargo::rustc-link-arg=-no-pie");
    }
}
