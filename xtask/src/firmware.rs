//! `cargo xtask firmware`: cross-builds the static musl init and gates every build.
//!
//! Gates (toolchain.md): statically linked (no `PT_INTERP`/`PT_DYNAMIC`), the ELF machine
//! of the target, for ARMv6 `Tag_CPU_arch: v6*` and no NEON (`readelf -A`), and a run
//! under qemu-user on the board's CPU model.

use std::path::{Path, PathBuf};

use anyhow::{bail, ensure, Context, Result};
use benchboot_board::{Arch, Board, TARGETS};
use xshell::{cmd, Shell};

use crate::toolchain::{self, Available, Route};

/// Name of the init binary (the `[[bin]]` of firmware/).
pub const INIT_BIN: &str = "benchboot-init";

/// What to build for: a triple and its CPU as rustc, zig and qemu-user spell it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuTarget {
    pub triple: String,
    pub arch: Arch,
    pub zig_triple: String,
    /// `None` keeps the target's default CPU.
    pub rustc_cpu: Option<String>,
    pub zig_cpu: String,
    /// `-cpu` for qemu-user.
    pub qemu_cpu: String,
}

impl CpuTarget {
    /// The CPU a board names.
    pub fn of_board(board: &Board) -> CpuTarget {
        let rustc_cpu = (board.rustc_cpu != "generic").then(|| board.rustc_cpu.clone());
        CpuTarget {
            triple: board.triple.clone(),
            arch: board.arch,
            zig_triple: board.zig_triple.clone(),
            qemu_cpu: qemu_user_cpu(&board.triple, rustc_cpu.as_deref()),
            rustc_cpu,
            zig_cpu: board.zig_cpu.clone(),
        }
    }

    /// A target's baseline CPU (for `--target` builds without a board).
    ///
    /// # Errors
    /// For triples outside [`TARGETS`].
    pub fn baseline(triple: &str) -> Result<CpuTarget> {
        let Some(&(_, arch, zig_triple)) = TARGETS.iter().find(|t| t.0 == triple) else {
            let known: Vec<_> = TARGETS.iter().map(|t| t.0).collect();
            bail!(
                "unsupported target `{triple}`: use one of {}",
                known.join(", ")
            );
        };
        // rustc's own baselines for these targets; zig must match or it emits NEON/ARMv7.
        let (rustc_cpu, zig_cpu) = match triple {
            "arm-unknown-linux-musleabihf" => (Some("arm1176jzf-s"), "arm1176jzf_s"),
            "armv7-unknown-linux-musleabihf" => (None, "generic+v7a+vfp3-d32+thumb2-neon"),
            _ => (None, "generic"),
        };
        Ok(CpuTarget {
            triple: triple.to_owned(),
            arch,
            zig_triple: zig_triple.to_owned(),
            rustc_cpu: rustc_cpu.map(str::to_owned),
            zig_cpu: zig_cpu.to_owned(),
            qemu_cpu: qemu_user_cpu(triple, rustc_cpu),
        })
    }

    /// Names the build: `<triple>-<rustc cpu>` (`-baseline` without one). Each key has
    /// its own cargo target folder and output, so boards of one triple but different
    /// CPUs (Pi 2 Cortex-A7, BeagleBone Cortex-A8) never overwrite each other's init or
    /// rebuild std for each other.
    pub fn key(&self) -> String {
        format!(
            "{}-{}",
            self.triple,
            self.rustc_cpu.as_deref().unwrap_or("baseline")
        )
    }

    fn is_armv6(&self) -> bool {
        self.triple == "arm-unknown-linux-musleabihf"
    }
}

/// The qemu-user `-cpu` that runs a build: the board's own core where QEMU models it.
fn qemu_user_cpu(triple: &str, rustc_cpu: Option<&str>) -> String {
    match (triple, rustc_cpu) {
        ("arm-unknown-linux-musleabihf", _) => "arm1176",
        (_, Some(c @ ("cortex-a7" | "cortex-a8" | "cortex-a53" | "cortex-a72"))) => c,
        ("armv7-unknown-linux-musleabihf", _) => "cortex-a7",
        _ => "cortex-a53",
    }
    .to_owned()
}

/// Builds the init for `cpu`, runs every gate, and returns the path of the stripped
/// binary (`target/firmware/<triple>-<cpu>/benchboot-init`, see [`CpuTarget::key`]); the
/// unstripped one is kept beside it ([`unstripped`]).
pub fn build(cpu: &CpuTarget) -> Result<PathBuf> {
    let have = Available::probe();
    let forced = std::env::var("BENCHBOOT_ROUTE").ok();
    let route = toolchain::choose(&cpu.triple, &have, forced.as_deref())?;
    eprintln!(
        "firmware: building {INIT_BIN} for {} via {}",
        cpu.triple,
        route.name()
    );
    let sh = Shell::new()?;
    sh.change_dir(crate::repo_root());
    let cross_dir = crate::target_dir().join("cross").join(cpu.key());
    let triple = &cpu.triple;
    let env_triple = triple.to_uppercase().replace('-', "_");
    let mut rustflags = Vec::new();
    if let Some(c) = &cpu.rustc_cpu {
        rustflags.push(format!("-C target-cpu={c}"));
    }
    // Panic messages embed source paths: map this machine's toolchain and registry
    // folders to fixed names so the init is byte-identical on any machine.
    for (from, to) in remapped_roots() {
        rustflags.push(format!("--remap-path-prefix={}={to}", from.display()));
    }
    match route {
        Route::Zig => {
            let wrapper = zig_wrapper(cpu)?;
            rustflags.push("-C link-self-contained=no".into());
            let _env = (
                sh.push_env("RUSTC_BOOTSTRAP", "1"),
                sh.push_env(format!("CARGO_TARGET_{env_triple}_LINKER"), &wrapper),
                sh.push_env(format!("CC_{}", triple.replace('-', "_")), &wrapper),
                sh.push_env(
                    format!("CARGO_TARGET_{env_triple}_RUSTFLAGS"),
                    rustflags.join(" "),
                ),
                sh.push_env("CARGO_TARGET_DIR", &cross_dir),
            );
            cmd!(sh, "cargo build --quiet -p benchboot-firmware --bin {INIT_BIN} --profile firmware --target {triple} -Zbuild-std=std,panic_abort")
                .run()
                .context("cross-building the init (zig route)")?;
        }
        Route::Prebuilt => {
            rustflags.push("-C link-self-contained=yes -C linker=rust-lld".into());
            let _env = (
                sh.push_env(
                    format!("CARGO_TARGET_{env_triple}_RUSTFLAGS"),
                    rustflags.join(" "),
                ),
                sh.push_env("CARGO_TARGET_DIR", &cross_dir),
            );
            cmd!(sh, "cargo build --quiet -p benchboot-firmware --bin {INIT_BIN} --profile firmware --target {triple}")
                .run()
                .context("cross-building the init (prebuilt std route)")?;
        }
        Route::Cross => {
            let _env = (
                sh.push_env(
                    format!("CARGO_TARGET_{env_triple}_RUSTFLAGS"),
                    rustflags.join(" "),
                ),
                sh.push_env("CARGO_TARGET_DIR", &cross_dir),
            );
            cmd!(sh, "cross build -p benchboot-firmware --bin {INIT_BIN} --profile firmware --target {triple}")
                .run()
                .context("cross-building the init (cross route)")?;
        }
    }
    let built = cross_dir.join(triple).join("firmware").join(INIT_BIN);
    let out = crate::target_dir()
        .join("firmware")
        .join(cpu.key())
        .join(INIT_BIN);
    // The firmware profile links unstripped: that ELF is kept for `benchboot log` (its
    // symbols are defmt's string table), the image gets a stripped copy.
    let elf = std::fs::read(&built).with_context(|| format!("reading {}", built.display()))?;
    check_defmt_table(&elf).with_context(|| format!("{}", built.display()))?;
    crate::write_atomically(&unstripped(&out), &elf)?;
    let bytes = strip(&elf).with_context(|| format!("stripping {}", built.display()))?;
    crate::write_atomically(&out, &bytes)?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o755))?;
    gate(cpu, &out)?;
    let size = std::fs::metadata(&out)?.len();
    eprintln!(
        "firmware: {} ok: static, {:?}, runs under qemu-user -cpu {}; {size} bytes stripped \
         (unstripped, for `benchboot log`: {})",
        out.display(),
        cpu.arch,
        cpu.qemu_cpu,
        unstripped(&out).display()
    );
    Ok(out)
}

/// The unstripped init [`build`] keeps beside `init` (`benchboot-init.elf`): the table
/// `benchboot log` decodes the init's `log.defmt` with (firmware/src/log.rs).
pub fn unstripped(init: &Path) -> PathBuf {
    init.with_extension("elf")
}

/// `init` as `strip --strip-all` (llvm-strip) leaves it, byte for byte on the builds
/// compared: no symbols, no debug info, no section outside the loaded image (`.comment`,
/// defmt's `.defmt`) but `.ARM.attributes` (which the ARMv6 gate reads). Done here so no
/// binutils for the target are needed.
pub fn strip(elf: &[u8]) -> Result<Vec<u8>> {
    use object::build::elf::{Builder, SectionData};
    let mut b = Builder::read(elf)?;
    for s in b.sections.iter_mut() {
        let keep = s.sh_flags & u64::from(object::elf::SHF_ALLOC) != 0
            || s.sh_type == object::elf::SHT_ARM_ATTRIBUTES
            || matches!(s.data, SectionData::SectionString)
            || s.name.as_slice().starts_with(b".gnu.warning");
        s.delete = !keep;
    }
    for sym in b.symbols.iter_mut() {
        sym.delete = true;
    }
    b.delete_orphans();
    let mut out = Vec::with_capacity(elf.len());
    b.write(&mut out)?;
    Ok(out)
}

/// Checks that an unstripped init carries defmt's table (the `_defmt_version_` symbol and
/// the `.defmt` section firmware/defmt-sections.x adds), so its log can be decoded.
pub fn check_defmt_table(elf: &[u8]) -> Result<()> {
    use object::{Object, ObjectSymbol};
    let file = object::File::parse(elf).context("not an ELF file")?;
    ensure!(
        file.section_by_name(".defmt").is_some()
            && file
                .symbols()
                .any(|s| s.name().is_ok_and(|n| n.starts_with("_defmt_version_"))),
        "no defmt table (.defmt section, _defmt_version_ symbol): was it linked with \
         firmware/defmt-sections.x (firmware/build.rs) and left unstripped?"
    );
    Ok(())
}

/// The rustc sysroot (std sources for build-std) and the cargo home (registry sources),
/// with the fixed names they are remapped to. A folder that contains spaces is left
/// out (RUSTFLAGS splits on spaces).
fn remapped_roots() -> Vec<(PathBuf, &'static str)> {
    let mut roots = Vec::new();
    let sysroot = std::process::Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .ok()
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    if let Some(s) = sysroot.filter(|s| !s.as_os_str().is_empty()) {
        roots.push((s, "/rustc-sysroot"));
    }
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")));
    if let Some(c) = cargo_home {
        roots.push((c, "/cargo-home"));
    }
    roots.retain(|(p, _)| !p.to_string_lossy().contains(' '));
    roots
}

/// A tiny script per target/CPU that runs `python3 -m ziglang cc` with the right
/// `-target` and `-mcpu` (zig's default for arm-linux-musleabihf is ARMv7 + NEON, which
/// dies with SIGILL on a Pi Zero). Returns its path, `target/zig/<zig triple>-<cpu>-cc`;
/// also the linker of the armv7 unit-test run (tests/tests/system/arm32_units.rs).
pub fn zig_wrapper(cpu: &CpuTarget) -> Result<PathBuf> {
    let dir = crate::target_dir().join("zig");
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(format!(
        "{}-{}-cc",
        cpu.zig_triple,
        cpu.zig_cpu.replace('+', "p")
    ));
    let script = format!(
        "#!/bin/sh\n# generated by cargo xtask firmware\nexec python3 -m ziglang cc -target {} -mcpu={} \"$@\"\n",
        cpu.zig_triple, cpu.zig_cpu
    );
    crate::write_script(&path, &script)?;
    Ok(path)
}

/// Every check a firmware binary must pass before it goes into an image.
///
/// # Errors
/// Names the failed check and the binary.
pub fn gate(cpu: &CpuTarget, bin: &Path) -> Result<()> {
    let data = std::fs::read(bin).with_context(|| format!("reading {}", bin.display()))?;
    check_elf(&data, cpu.arch).with_context(|| format!("{}", bin.display()))?;
    let sh = Shell::new()?;
    if cpu.arch == Arch::Arm {
        let attrs = cmd!(sh, "readelf -A {bin}")
            .read()
            .context("running readelf -A (apt-get install binutils)")?;
        check_arm_attributes(&attrs, cpu.is_armv6())
            .with_context(|| format!("{}", bin.display()))?;
    }
    let qemu = match cpu.arch {
        Arch::Arm => "qemu-arm-static",
        Arch::Aarch64 => "qemu-aarch64-static",
    };
    let qcpu = &cpu.qemu_cpu;
    let out = cmd!(sh, "{qemu} -cpu {qcpu} {bin}")
        .ignore_status()
        .output()
        .with_context(|| format!("running {qemu} (apt-get install qemu-user-static)"))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    ensure!(
        out.status.code() == Some(2) && stdout.contains("must run as PID 1"),
        "{} under `{qemu} -cpu {qcpu}`: expected the not-PID-1 refusal (exit 2), got {:?}: {stdout}{}",
        bin.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(())
}

/// Checks the ELF header and program headers: the machine matches `arch`, and there is
/// no `PT_INTERP` or `PT_DYNAMIC` (a static executable).
pub fn check_elf(data: &[u8], arch: Arch) -> Result<()> {
    use object::{elf, Endianness};
    let (machine, types) = match arch {
        Arch::Arm => elf_machine_and_segments::<elf::FileHeader32<Endianness>>(data)
            .context("not a 32-bit ELF file")?,
        Arch::Aarch64 => elf_machine_and_segments::<elf::FileHeader64<Endianness>>(data)
            .context("not a 64-bit ELF file")?,
    };
    let want = match arch {
        Arch::Arm => elf::EM_ARM,
        Arch::Aarch64 => elf::EM_AARCH64,
    };
    ensure!(
        machine == want,
        "ELF machine is {machine}, expected {want} for {arch:?}"
    );
    ensure!(
        !types.contains(&elf::PT_INTERP) && !types.contains(&elf::PT_DYNAMIC),
        "not statically linked (has PT_INTERP or PT_DYNAMIC): check the musl link route"
    );
    Ok(())
}

/// `e_machine` and the `p_type` of every program header.
fn elf_machine_and_segments<H>(data: &[u8]) -> Result<(u16, Vec<u32>)>
where
    H: object::read::elf::FileHeader<Endian = object::Endianness>,
{
    use object::read::elf::ProgramHeader;
    let h = H::parse(data)?;
    let e = h.endian()?;
    let types = h
        .program_headers(e, data)?
        .iter()
        .map(|p| p.p_type(e))
        .collect();
    Ok((h.e_machine(e), types))
}

/// Checks `readelf -A` output: for ARMv6, `Tag_CPU_arch` is v6/v6K/v6KZ and no NEON.
pub fn check_arm_attributes(readelf_a: &str, armv6: bool) -> Result<()> {
    let arch = readelf_a
        .lines()
        .find_map(|l| l.trim().strip_prefix("Tag_CPU_arch:"))
        .map(str::trim)
        .context("readelf -A shows no Tag_CPU_arch")?;
    if armv6 {
        ensure!(
            matches!(arch, "v6" | "v6K" | "v6KZ"),
            "Tag_CPU_arch is {arch}: an ARMv6 (ARM1176) board cannot run it"
        );
        ensure!(
            !readelf_a.contains("Tag_Advanced_SIMD_arch: NEON"),
            "uses NEON, which ARMv6 lacks"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn armv6_attributes() {
        let ok = "Attribute Section: aeabi\nFile Attributes\n  Tag_CPU_name: \"arm1176jzf-s\"\n  Tag_CPU_arch: v6KZ\n  Tag_FP_arch: VFPv2\n";
        check_arm_attributes(ok, true).unwrap();
        let v7 = "  Tag_CPU_arch: v7\n  Tag_Advanced_SIMD_arch: NEONv1\n";
        let err = check_arm_attributes(v7, true).unwrap_err().to_string();
        assert!(err.contains("v7"), "{err}");
        check_arm_attributes(v7, false).unwrap();
        assert!(check_arm_attributes("", true).is_err());
    }

    #[test]
    fn elf_checks_reject_wrong_input() {
        assert!(check_elf(b"not an elf", Arch::Arm).is_err());
        // The host's own test binary is dynamically linked x86_64: wrong machine.
        let me = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        assert!(check_elf(&me, Arch::Aarch64).is_err());
    }

    #[test]
    fn strip_keeps_the_loaded_image_and_drops_symbols() {
        use object::{Object, ObjectSection};
        // This test binary: an unstripped x86_64 ELF without a defmt table.
        let me = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let err = check_defmt_table(&me).unwrap_err().to_string();
        assert!(err.contains("no defmt table"), "{err}");
        let stripped = strip(&me).unwrap();
        assert!(stripped.len() < me.len());
        let (a, b) = (
            object::File::parse(&*me).unwrap(),
            object::File::parse(&*stripped).unwrap(),
        );
        assert!(a.section_by_name(".symtab").is_some());
        assert!(b.section_by_name(".symtab").is_none());
        assert!(b.section_by_name(".comment").is_none());
        // Code and data stay where they were, byte for byte (this binary is dynamic:
        // its dynamic symbol and string tables are rewritten; the init has none).
        for name in [".text", ".rodata", ".data"] {
            let (Some(s), Some(t)) = (a.section_by_name(name), b.section_by_name(name)) else {
                panic!("{name} missing");
            };
            assert_eq!(t.address(), s.address(), "{name}");
            assert!(t.data().unwrap() == s.data().unwrap(), "{name} changed");
        }
        assert_eq!(
            strip(&stripped).unwrap(),
            stripped,
            "stripping again changes nothing"
        );
        assert_eq!(
            unstripped(Path::new("a/benchboot-init")),
            Path::new("a/benchboot-init.elf")
        );
    }

    #[test]
    fn each_cpu_builds_apart_and_runs_on_its_own_qemu_core() {
        let pi2 = CpuTarget::of_board(&crate::load_board("rpi-2b").unwrap());
        let bbb = CpuTarget::of_board(&crate::load_board("beaglebone-black").unwrap());
        let bpi = CpuTarget::of_board(&crate::load_board("bananapi-m1").unwrap());
        assert_eq!(pi2.triple, bbb.triple);
        assert_eq!(pi2.key(), "armv7-unknown-linux-musleabihf-cortex-a7");
        assert_eq!(bbb.key(), "armv7-unknown-linux-musleabihf-cortex-a8");
        assert_eq!(pi2.key(), bpi.key());
        assert_eq!(
            (pi2.qemu_cpu.as_str(), bbb.qemu_cpu.as_str()),
            ("cortex-a7", "cortex-a8")
        );
        let pi4 = CpuTarget::of_board(&crate::load_board("rpi-4b").unwrap());
        assert_eq!(pi4.qemu_cpu, "cortex-a72");
        let base = CpuTarget::baseline("aarch64-unknown-linux-musl").unwrap();
        assert_eq!(base.key(), "aarch64-unknown-linux-musl-baseline");
    }

    #[test]
    fn baselines() {
        let v6 = CpuTarget::baseline("arm-unknown-linux-musleabihf").unwrap();
        assert_eq!(v6.rustc_cpu.as_deref(), Some("arm1176jzf-s"));
        assert_eq!(v6.qemu_cpu, "arm1176");
        let a64 = CpuTarget::baseline("aarch64-unknown-linux-musl").unwrap();
        assert_eq!(
            (a64.arch, a64.zig_triple.as_str()),
            (Arch::Aarch64, "aarch64-linux-musl")
        );
        assert!(CpuTarget::baseline("x86_64-unknown-linux-gnu").is_err());
    }
}
