//! Picks a route that can cross-build static musl binaries here, and says which.
//!
//! Routes, in order of preference (toolchain.md):
//! 1. `prebuilt`: rustup's prebuilt std for the target (`rustup target add`), linked
//!    self-contained by `rust-lld`. Not available for the two arm musl targets on these
//!    machines.
//! 2. `zig`: std built from source (`-Zbuild-std`, rustup's `rust-src` component) with zig
//!    (PyPI `ziglang`) as C compiler, musl libc and linker.
//! 3. `cross`: the `cross` tool, when a container engine answers.
//!
//! `BENCHBOOT_ROUTE=prebuilt|zig|cross` forces one.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{bail, Result};

/// A way to build for one target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    Prebuilt,
    Zig,
    Cross,
}

impl Route {
    pub fn name(&self) -> &'static str {
        match self {
            Route::Prebuilt => "prebuilt rustup std + rust-lld",
            Route::Zig => "std built from source (-Zbuild-std) + zig cc as linker and musl libc",
            Route::Cross => "cross (container engine)",
        }
    }
}

/// What is installed, as far as the routes care.
#[derive(Debug, Clone, Default)]
pub struct Available {
    /// Targets with rustup's prebuilt std installed.
    pub prebuilt_targets: Vec<String>,
    pub rust_src: bool,
    pub zig: bool,
    pub cross_with_engine: bool,
}

impl Available {
    /// Probes rustup, `python3 -m ziglang`, `cross` and `docker`/`podman`.
    pub fn probe() -> Available {
        let out = |prog: &str, args: &[&str]| -> Option<String> {
            let o = Command::new(prog).args(args).output().ok()?;
            o.status
                .success()
                .then(|| String::from_utf8_lossy(&o.stdout).into_owned())
        };
        let prebuilt_targets = installed_targets();
        let rust_src = rust_src_dir().is_some();
        let zig = out("python3", &["-m", "ziglang", "version"]).is_some();
        let engine = out("docker", &["info"]).is_some() || out("podman", &["info"]).is_some();
        let cross_with_engine = engine && out("cross", &["--version"]).is_some();
        Available {
            prebuilt_targets,
            rust_src,
            zig,
            cross_with_engine,
        }
    }
}

/// The targets whose standard library rustup has installed (`rustup target list
/// --installed`); empty without rustup.
pub fn installed_targets() -> Vec<String> {
    Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .map(|l| l.trim().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// The std sources rustup installs with `rust-src`, if present.
pub fn rust_src_dir() -> Option<PathBuf> {
    let o = Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .ok()?;
    let sysroot = String::from_utf8_lossy(&o.stdout).trim().to_owned();
    let dir = PathBuf::from(sysroot).join("lib/rustlib/src/rust/library/std");
    dir.is_dir().then_some(dir)
}

/// Chooses the route for `triple`, or explains exactly what to install.
///
/// # Errors
/// When no route is available (the message lists the commands that make one), or when
/// `forced` names a route that is not available or unknown.
pub fn choose(triple: &str, have: &Available, forced: Option<&str>) -> Result<Route> {
    let prebuilt = have.prebuilt_targets.iter().any(|t| t == triple);
    let zig = have.rust_src && have.zig;
    match forced {
        Some("prebuilt") if prebuilt => return Ok(Route::Prebuilt),
        Some("zig") if zig => return Ok(Route::Zig),
        Some("cross") if have.cross_with_engine => return Ok(Route::Cross),
        Some(f @ ("prebuilt" | "zig" | "cross")) => {
            bail!("BENCHBOOT_ROUTE={f} was asked for but is not available here; unset it to pick one automatically\n{}", how_to_install(triple))
        }
        Some(other) => bail!("BENCHBOOT_ROUTE={other} is unknown: use prebuilt, zig or cross"),
        None => {}
    }
    if prebuilt {
        Ok(Route::Prebuilt)
    } else if zig {
        Ok(Route::Zig)
    } else if have.cross_with_engine {
        Ok(Route::Cross)
    } else {
        bail!("no way to build {triple} here.\n{}", how_to_install(triple))
    }
}

fn how_to_install(triple: &str) -> String {
    format!(
        "install one of:\n  \
         - `cargo xtask setup` (rustup component add rust-src; pip install ziglang): builds every target offline\n  \
         - `rustup target add {triple}` (needs rustup to serve that std; it does not serve the arm musl ones here)\n  \
         - `cargo install cross` plus a running docker or podman engine"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const ARMV6: &str = "arm-unknown-linux-musleabihf";

    #[test]
    fn prefers_prebuilt_then_zig_then_cross() {
        let mut have = Available {
            prebuilt_targets: vec![ARMV6.into()],
            rust_src: true,
            zig: true,
            cross_with_engine: true,
        };
        assert_eq!(choose(ARMV6, &have, None).unwrap(), Route::Prebuilt);
        have.prebuilt_targets.clear();
        assert_eq!(choose(ARMV6, &have, None).unwrap(), Route::Zig);
        have.zig = false;
        assert_eq!(choose(ARMV6, &have, None).unwrap(), Route::Cross);
    }

    #[test]
    fn nothing_available_says_what_to_install() {
        let err = choose(ARMV6, &Available::default(), None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("cargo xtask setup"), "{err}");
        assert!(
            err.contains("rustup target add arm-unknown-linux-musleabihf"),
            "{err}"
        );
        assert!(err.contains("cross"), "{err}");
    }

    #[test]
    fn forced_route_must_exist() {
        let have = Available {
            rust_src: true,
            zig: true,
            ..Available::default()
        };
        assert_eq!(choose(ARMV6, &have, Some("zig")).unwrap(), Route::Zig);
        assert!(choose(ARMV6, &have, Some("cross")).is_err());
        let err = choose(ARMV6, &have, Some("magic")).unwrap_err().to_string();
        assert!(err.contains("unknown"), "{err}");
    }
}
