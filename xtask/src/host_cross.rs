//! `cargo xtask host --target T`: the host tool (`benchboot`) cross-built on Linux for
//! macOS and Windows, with zig (PyPI `ziglang`, already the board builds' C compiler) as
//! C compiler and linker. No SDK is needed or committed:
//!
//! - **macOS** (`aarch64-apple-darwin`, `x86_64-apple-darwin`): zig ships libSystem's
//!   text stubs (`.tbd`) and links Mach-O. The two system libraries the host tool's crate
//!   graph names beyond libSystem (libiconv: the `libc` crate links it on Apple targets,
//!   `src/unix/bsd/apple/mod.rs`; CoreFoundation: `iana-time-zone`, through chrono in
//!   defmt-decoder) get stubs of the same kind written here ([`MACOS_STUBS`]): the install name and the symbols used, no
//!   code; the binary binds to the real libraries on the Mac at load time.
//! - **Windows** (`x86_64-pc-windows-gnu`): zig links PE with its MinGW-w64 import
//!   libraries; rustc calls `x86_64-w64-mingw32-dlltool` (Debian
//!   `binutils-mingw-w64-x86-64`) for the `raw-dylib` imports of the windows crates.
//!
//! cc-rs passes `--target=<llvm triple>` (and `-arch X` for Apple targets) which zig's
//! driver rejects beside its own `-target`: the wrappers ([`wrapper`]) drop them.
//! The build profile is `cross-host` (Cargo.toml: the dev profile without debug info),
//! into `target/<triple>/cross-host/`. rustc warns that `xcrun` (Xcode's SDK lookup)
//! failed for the macOS builds: zig's stubs stand in for the SDK, the warning is moot.

use std::path::{Path, PathBuf};

use anyhow::{bail, ensure, Context, Result};
use object::{Architecture, BinaryFormat, Object};

/// One host target benchboot cross-builds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostTarget {
    /// The Rust target triple.
    pub triple: &'static str,
    /// zig's `-target` for it.
    pub zig_target: &'static str,
    /// The executable's file format.
    pub format: BinaryFormat,
    /// Its machine.
    pub arch: Architecture,
}

/// The host tool's non-Linux targets (macOS on Apple silicon and Intel, Windows).
pub const TARGETS: [HostTarget; 3] = [
    HostTarget {
        triple: "aarch64-apple-darwin",
        zig_target: "aarch64-macos",
        format: BinaryFormat::MachO,
        arch: Architecture::Aarch64,
    },
    HostTarget {
        triple: "x86_64-apple-darwin",
        zig_target: "x86_64-macos",
        format: BinaryFormat::MachO,
        arch: Architecture::X86_64,
    },
    HostTarget {
        triple: "x86_64-pc-windows-gnu",
        zig_target: "x86_64-windows-gnu",
        format: BinaryFormat::Pe,
        arch: Architecture::X86_64,
    },
];

/// The host tool for Linux, static (musl, with zig's libc): runs on any distribution.
pub const LINUX_TARGETS: [HostTarget; 2] = [
    HostTarget {
        triple: "x86_64-unknown-linux-musl",
        zig_target: "x86_64-linux-musl",
        format: BinaryFormat::Elf,
        arch: Architecture::X86_64,
    },
    HostTarget {
        triple: "aarch64-unknown-linux-musl",
        zig_target: "aarch64-linux-musl",
        format: BinaryFormat::Elf,
        arch: Architecture::Aarch64,
    },
];

/// Every target a release carries the host tool for (`cargo xtask dist`): Linux first.
pub const DIST_TARGETS: [HostTarget; 5] = [
    LINUX_TARGETS[0],
    LINUX_TARGETS[1],
    TARGETS[0],
    TARGETS[1],
    TARGETS[2],
];

/// The cargo profile of the cross builds (Cargo.toml `[profile.cross-host]`).
pub const PROFILE: &str = "cross-host";

impl HostTarget {
    /// The target named `triple`.
    ///
    /// # Errors
    /// An unknown triple, with the list of known ones.
    pub fn of(triple: &str) -> Result<&'static HostTarget> {
        DIST_TARGETS
            .iter()
            .find(|t| t.triple == triple)
            .with_context(|| {
                let known: Vec<_> = DIST_TARGETS.iter().map(|t| t.triple).collect();
                format!(
                    "{triple}: not a cross host target; use one of {}",
                    known.join(", ")
                )
            })
    }

    fn is_macos(&self) -> bool {
        self.format == BinaryFormat::MachO
    }

    /// The triple as cargo's environment variables spell it
    /// (`CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER`).
    fn env_key(&self) -> String {
        self.triple.to_uppercase().replace('-', "_")
    }

    /// Where cargo puts `benchboot` (`benchboot.exe`) for this target.
    pub fn binary(&self) -> PathBuf {
        let name = if self.format == BinaryFormat::Pe {
            "benchboot.exe"
        } else {
            "benchboot"
        };
        crate::target_dir()
            .join(self.triple)
            .join(PROFILE)
            .join(name)
    }
}

/// The text stubs (`.tbd`, TAPI v4) of the macOS libraries the host tool links beyond
/// libSystem: (path under the stub folder, contents). Install names and versions are
/// those of macOS 11+ (`otool -L` of a binary linked against them); the symbol lists are
/// the ones the crate graph uses (a missing one is a link error here, never a crash on
/// the Mac).
pub const MACOS_STUBS: [(&str, &str); 2] = [
    (
        "libiconv.tbd",
        "--- !tapi-tbd
tbd-version:     4
targets:         [ x86_64-macos, arm64-macos ]
install-name:    '/usr/lib/libiconv.2.dylib'
current-version: 7
compatibility-version: 7
exports:
  - targets:     [ x86_64-macos, arm64-macos ]
    symbols:     [ _iconv, _iconv_close, _iconv_open ]
...
",
    ),
    (
        "CoreFoundation.framework/CoreFoundation.tbd",
        "--- !tapi-tbd
tbd-version:     4
targets:         [ x86_64-macos, arm64-macos ]
install-name:    '/System/Library/Frameworks/CoreFoundation.framework/Versions/A/CoreFoundation'
current-version: 1971
compatibility-version: 150
exports:
  - targets:     [ x86_64-macos, arm64-macos ]
    symbols:     [ _CFRelease, _CFStringGetBytes, _CFStringGetCStringPtr, _CFStringGetLength,
                   _CFTimeZoneCopySystem, _CFTimeZoneGetName, _CFTimeZoneResetSystem ]
...
",
    ),
];

/// The wrapper script of `t`'s C compiler and linker: `python3 -m ziglang cc -target
/// <zig target>` with rustc's and cc-rs's arguments zig refuses taken out or mapped.
/// Written to `target/zig/host-<triple>-cc`.
///
/// - every target: `--target=<llvm triple>` (cc-rs; zig takes `-target`);
/// - macOS: `-arch X` (cc-rs and rustc);
/// - Windows: rustc's MinGW link line (rustc_target's `windows_gnu_base`) names GCC's
///   and MinGW's runtime, which zig replaces with its own: `-lgcc_eh` becomes
///   `-lunwind` (zig's LLVM libunwind has `_Unwind_Resume`); `-lgcc`,
///   `-l:libpthread.a` and `-lmsvcrt` go (zig links its MinGW CRT and winpthreads
///   itself, and refuses `-lmsvcrt` as "unable to find dynamic system library");
///   `-Wl,-Bstatic`/`-Wl,-Bdynamic` go (zig then searches `-l` names as DLLs only and
///   misses the `libwinapi_*.a` import libraries). cargo-zigbuild maps the same flags.
///
/// # Errors
/// Writing the script.
pub fn wrapper(t: &HostTarget) -> Result<PathBuf> {
    let dir = crate::target_dir().join("zig");
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(format!("host-{}-cc", t.triple));
    let (drop, map) = if t.is_macos() {
        ("--target=*", "")
    } else if t.format == BinaryFormat::Elf {
        // musl: zig links its own C runtime and libc statically; rustc's self-contained
        // copies of crt1.o, crti.o, crtbegin.o... would define `_start` twice.
        ("--target=*|*/self-contained/*.o", "")
    } else {
        (
            "--target=*|-Wl,-Bdynamic|-Wl,-Bstatic|-lgcc|-l:libpthread.a|-lmsvcrt",
            "\n    -lgcc_eh) a=-lunwind;;",
        )
    };
    let script = format!(
        "#!/bin/sh\n\
         # generated by cargo xtask host (xtask/src/host_cross.rs): zig cc for {triple}\n\
         skip=\n\
         for a do\n  shift\n  if [ -n \"$skip\" ]; then skip=; continue; fi\n  \
         case \"$a\" in\n    -arch) skip=1; continue;;\n    {drop}) continue;;{map}\n  esac\n  \
         set -- \"$@\" \"$a\"\ndone\n\
         exec python3 -m ziglang cc -target {zig} \"$@\"\n",
        triple = t.triple,
        zig = t.zig_target
    );
    crate::write_script(&path, &script)?;
    Ok(path)
}

/// The archiver of the cross builds, `target/zig/host-ar`: `python3 -m ziglang ar`
/// (LLVM's, which indexes Mach-O and COFF members; MinGW's `x86_64-w64-mingw32-ar`
/// spun for minutes on zig's COFF object of SQLite, which cc-rs would otherwise pick).
///
/// # Errors
/// Writing the script.
pub fn archiver() -> Result<PathBuf> {
    let dir = crate::target_dir().join("zig");
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("host-ar");
    crate::write_script(
        &path,
        "#!/bin/sh\n# generated by cargo xtask host\nexec python3 -m ziglang ar \"$@\"\n",
    )?;
    Ok(path)
}

/// Writes [`MACOS_STUBS`] under `target/zig/macos-stubs/` and returns the folder.
///
/// # Errors
/// Writing a file.
pub fn macos_stubs() -> Result<PathBuf> {
    let dir = crate::target_dir().join("zig").join("macos-stubs");
    for (name, text) in MACOS_STUBS {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().expect("stub paths have a folder"))?;
        crate::write_atomically(&path, text.as_bytes())?;
    }
    Ok(dir)
}

/// The environment of a cargo build for `targets`: C compiler, archiver, linker and, for macOS,
/// the stub folder as library and framework search path; every target's rustflags remap
/// the checkout to `benchboot` and cargo's home to `cargo` ([`remap_flags`]), so no path
/// of this machine is in a binary (`cargo xtask dist` is reproducible across folders).
///
/// # Errors
/// Writing a wrapper or the stubs.
pub fn cargo_env(targets: &[&HostTarget]) -> Result<Vec<(String, String)>> {
    let mut env = Vec::new();
    let ar = archiver()?.display().to_string();
    for t in targets {
        let cc = wrapper(t)?.display().to_string();
        env.push((format!("CC_{}", t.triple.replace('-', "_")), cc.clone()));
        env.push((format!("AR_{}", t.triple.replace('-', "_")), ar.clone()));
        env.push((format!("CARGO_TARGET_{}_LINKER", t.env_key()), cc));
        // cc-rs's C (SQLite, ring): the same folders mapped in `__FILE__` and debug info.
        // zig compiles C at -O0 with UBSan on, whose source locations keep the paths
        // unmapped: the profile's unoptimised C goes without it, as a release build does.
        env.push((
            format!("CFLAGS_{}", t.triple.replace('-', "_")),
            format!(
                "{} -fno-sanitize=undefined",
                remap_flags().replace("--remap-path-prefix=", "-ffile-prefix-map=")
            ),
        ));
        let mut flags = remap_flags();
        if t.is_macos() {
            let stubs = macos_stubs()?.display().to_string();
            flags.push_str(&format!(" -L{stubs} -Clink-arg=-F{stubs}"));
        }
        env.push((format!("CARGO_TARGET_{}_RUSTFLAGS", t.env_key()), flags));
    }
    // The host tool's one build path outside debug info (`field_test::system`'s
    // fallback to the checkout it was built from) is left out of these builds.
    env.push((NO_BUILD_TREE.to_owned(), "1".to_owned()));
    Ok(env)
}

/// Set for the cross builds ([`cargo_env`]): the host tool then names no checkout
/// folder of this machine (`host/src/field_test/system.rs`), so the binary is the same
/// whichever folder it was built in.
pub const NO_BUILD_TREE: &str = "BENCHBOOT_NO_BUILD_TREE";

/// `--remap-path-prefix` for the checkout (`benchboot`), cargo's home (`cargo`, where
/// the registry's sources are) and rustup's (`rustup`, std's sources with rust-src):
/// the paths panics and debug info name. Paths with a space are left alone (rustflags
/// split on spaces).
pub fn remap_flags() -> String {
    let home = |var: &str, dot: &str| {
        std::env::var_os(var)
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(dot)))
    };
    let mut flags = Vec::new();
    for (from, to) in [
        (Some(crate::repo_root()), "benchboot"),
        (home("CARGO_HOME", ".cargo"), "cargo"),
        (home("RUSTUP_HOME", ".rustup"), "rustup"),
    ] {
        if let Some(from) = from.map(|p| p.display().to_string()) {
            if !from.contains(' ') {
                flags.push(format!("--remap-path-prefix={from}={to}"));
            }
        }
    }
    flags.join(" ")
}

/// Builds `benchboot` for `targets` in one cargo run and checks each binary
/// ([`check_binary`]). Returns the binaries' paths.
///
/// # Errors
/// A missing rustup target or dlltool (with the command that installs it), cargo's
/// failure, or a binary of the wrong format or machine.
pub fn build(targets: &[&HostTarget]) -> Result<Vec<PathBuf>> {
    ensure!(!targets.is_empty(), "no target to build");
    let installed = crate::toolchain::installed_targets();
    for t in targets {
        ensure!(
            installed.iter().any(|i| i == t.triple),
            "the Rust standard library for {} is not installed: run `rustup target add {}` \
             (or `cargo xtask setup --tests`)",
            t.triple,
            t.triple
        );
    }
    if targets.iter().any(|t| t.format == BinaryFormat::Pe)
        && which("x86_64-w64-mingw32-dlltool").is_none()
    {
        bail!(
            "x86_64-w64-mingw32-dlltool is missing (rustc needs it for the Windows imports): \
             apt-get install binutils-mingw-w64-x86-64 (or `cargo xtask setup --tests`)"
        );
    }
    let mut cmd = std::process::Command::new(std::env::var("CARGO").unwrap_or("cargo".into()));
    cmd.current_dir(crate::repo_root()).args([
        "build",
        "-p",
        "benchboot",
        "--bin",
        "benchboot",
        "--profile",
        PROFILE,
    ]);
    for t in targets {
        cmd.args(["--target", t.triple]);
    }
    cmd.envs(cargo_env(targets)?);
    let status = cmd.status().context("running cargo build")?;
    ensure!(
        status.success(),
        "cargo build of the host tool failed ({status})"
    );
    let mut out = Vec::new();
    for t in targets {
        let path = t.binary();
        let data = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
        check_binary(&data, t).with_context(|| format!("{}", path.display()))?;
        out.push(path);
    }
    Ok(out)
}

/// Checks that `data` is an executable of `t`'s format (Mach-O, PE) and machine.
///
/// # Errors
/// Names what the file is instead.
pub fn check_binary(data: &[u8], t: &HostTarget) -> Result<()> {
    let file = object::File::parse(data).context("not an object file object can read")?;
    ensure!(
        file.format() == t.format && file.architecture() == t.arch,
        "is a {:?} {:?} file; {} needs {:?} {:?}",
        file.format(),
        file.architecture(),
        t.triple,
        t.format,
        t.arch
    );
    if file.format() == BinaryFormat::Elf {
        // A static-pie is ET_DYN; static means no program interpreter.
        ensure!(
            matches!(
                file.kind(),
                object::ObjectKind::Executable | object::ObjectKind::Dynamic
            ) && file.section_by_name(".interp").is_none(),
            "is a {:?} with a program interpreter, not a static executable",
            file.kind()
        );
        return Ok(());
    }
    ensure!(
        file.kind() == object::ObjectKind::Executable,
        "is a {:?}, not an executable",
        file.kind()
    );
    Ok(())
}

fn which(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(program))
            .find(|p| Path::new(p).is_file())
    })
}

/// Debian's wine64 (bookworm: 8.0), which runs the Windows build and its tests here.
pub const WINE: &str = "/usr/lib/wine/wine64";

/// `ProcessPrng` for wine: Rust's std (1.78 and later) takes its random bytes from
/// `bcryptprimitives.dll!ProcessPrng` (Windows 10+), which wine 8.0 lacks, so every
/// Rust program dies at load (`c0000135`, "Library bcryptprimitives.dll ... not
/// found"). This stand-in fills the buffer from `RtlGenRandom` (advapi32
/// `SystemFunction036`, which wine has); it goes into the test prefix only, never
/// beside a shipped binary.
pub const PROCESS_PRNG_SHIM: &str = r#"#include <windows.h>
#include <ntsecapi.h>
__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    while (len > 0) {
        ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (!RtlGenRandom(data, n)) return FALSE;
        data += n;
        len -= n;
    }
    return TRUE;
}
"#;

/// The wine prefix of the tests, `target/wine`: created (`wineboot --init`) when
/// missing, with [`PROCESS_PRNG_SHIM`] built by zig into its `system32`.
///
/// # Errors
/// wine64 missing (with the apt command), wineboot or zig failing.
pub fn wine_prefix() -> Result<PathBuf> {
    ensure!(
        Path::new(WINE).is_file(),
        "{WINE} is missing: apt-get install wine64 (or `cargo xtask setup --tests`)"
    );
    let prefix = crate::target_dir().join("wine");
    let system32 = prefix.join("drive_c/windows/system32");
    if !system32.join("kernel32.dll").is_file() {
        let status = std::process::Command::new(WINE)
            .args(["wineboot", "--init"])
            .env("WINEPREFIX", &prefix)
            .env("WINEDEBUG", "-all")
            .status()
            .context("running wineboot --init")?;
        ensure!(status.success(), "wineboot --init failed ({status})");
        // wineboot returns before the prefix is written: wait for wineserver to end.
        let _ = std::process::Command::new("/usr/lib/wine/wineserver")
            .arg("-w")
            .env("WINEPREFIX", &prefix)
            .status();
        ensure!(system32.is_dir(), "wineboot made no {}", system32.display());
    }
    let dll = system32.join("bcryptprimitives.dll");
    if !dll.is_file() {
        let dir = crate::target_dir().join("zig").join("wine-shim");
        std::fs::create_dir_all(&dir)?;
        let src = dir.join("process_prng.c");
        crate::write_atomically(&src, PROCESS_PRNG_SHIM.as_bytes())?;
        let built = dir.join("bcryptprimitives.dll");
        let status = std::process::Command::new("python3")
            .args([
                "-m",
                "ziglang",
                "cc",
                "-target",
                "x86_64-windows-gnu",
                "-shared",
                "-O2",
            ])
            .arg("-o")
            .arg(&built)
            .arg(&src)
            .arg("-ladvapi32")
            .status()
            .context("running python3 -m ziglang cc")?;
        ensure!(
            status.success(),
            "zig cc of the ProcessPrng shim failed ({status})"
        );
        std::fs::copy(&built, &dll)?;
    }
    Ok(prefix)
}

/// The environment that runs Windows test binaries under wine from `cargo test
/// --target x86_64-pc-windows-gnu`: [`cargo_env`]'s, the runner, the prefix, wine's
/// debug channels off, and insta's workspace root (insta asks `cargo metadata`, which
/// a Windows process cannot run here).
///
/// # Errors
/// [`wine_prefix`]'s and [`cargo_env`]'s.
pub fn wine_test_env() -> Result<Vec<(String, String)>> {
    let windows = HostTarget::of("x86_64-pc-windows-gnu")?;
    let mut env = cargo_env(&[windows])?;
    env.push((
        format!("CARGO_TARGET_{}_RUNNER", windows.env_key()),
        WINE.into(),
    ));
    env.push(("WINEPREFIX".into(), wine_prefix()?.display().to_string()));
    env.push(("WINEDEBUG".into(), "-all".into()));
    env.push((
        "INSTA_WORKSPACE_ROOT".into(),
        crate::repo_root().display().to_string(),
    ));
    Ok(env)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_triples_resolve_and_unknown_ones_list_the_known() {
        assert_eq!(
            HostTarget::of("x86_64-pc-windows-gnu").unwrap().zig_target,
            "x86_64-windows-gnu"
        );
        let e = HostTarget::of("x86_64-pc-windows-msvc")
            .unwrap_err()
            .to_string();
        assert!(e.contains(
            "x86_64-unknown-linux-musl, aarch64-unknown-linux-musl, aarch64-apple-darwin, \
             x86_64-apple-darwin, x86_64-pc-windows-gnu"
        ));
    }

    #[test]
    fn env_names_follow_cargo_and_cc_rs() {
        let t = HostTarget::of("aarch64-apple-darwin").unwrap();
        assert_eq!(t.env_key(), "AARCH64_APPLE_DARWIN");
        assert!(t
            .binary()
            .ends_with("aarch64-apple-darwin/cross-host/benchboot"));
        let w = HostTarget::of("x86_64-pc-windows-gnu").unwrap();
        assert!(w
            .binary()
            .ends_with("x86_64-pc-windows-gnu/cross-host/benchboot.exe"));
    }

    #[test]
    fn every_target_remaps_the_build_paths_in_rust_and_c() {
        let root = crate::repo_root().display().to_string();
        let linux = HostTarget::of("aarch64-unknown-linux-musl").unwrap();
        let mac = HostTarget::of("x86_64-apple-darwin").unwrap();
        let env = cargo_env(&[linux, mac]).unwrap();
        let get = |k: &str| {
            env.iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.clone())
                .unwrap_or_else(|| panic!("{k} not set: {env:?}"))
        };
        for key in [
            "CARGO_TARGET_AARCH64_UNKNOWN_LINUX_MUSL_RUSTFLAGS",
            "CARGO_TARGET_X86_64_APPLE_DARWIN_RUSTFLAGS",
        ] {
            let flags = get(key);
            assert!(
                flags.contains(&format!("--remap-path-prefix={root}=benchboot")),
                "{flags}"
            );
            assert!(
                flags.contains("=cargo") && flags.contains("=rustup"),
                "{flags}"
            );
        }
        // The macOS stubs stay in its flags beside the remaps.
        assert!(get("CARGO_TARGET_X86_64_APPLE_DARWIN_RUSTFLAGS").contains("macos-stubs"));
        let c = get("CFLAGS_aarch64_unknown_linux_musl");
        assert!(
            c.contains(&format!("-ffile-prefix-map={root}=benchboot")),
            "{c}"
        );
        assert!(
            !c.contains("--remap") && c.ends_with(" -fno-sanitize=undefined"),
            "{c}"
        );
        // No checkout path through `env!("CARGO_MANIFEST_DIR")` either.
        assert_eq!(get(NO_BUILD_TREE), "1");
    }

    #[test]
    fn a_dynamic_linux_program_is_not_a_static_release_binary() {
        // This test binary is glibc-linked: it names a program interpreter.
        let me = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let e = check_binary(&me, HostTarget::of("x86_64-unknown-linux-musl").unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.contains("program interpreter"), "{e}");
    }

    #[test]
    fn a_linux_elf_is_not_a_mac_binary() {
        let me = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let e = check_binary(&me, HostTarget::of("x86_64-apple-darwin").unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.contains("is a Elf X86_64 file"), "{e}");
        assert!(e.contains("needs MachO X86_64"), "{e}");
    }
}
