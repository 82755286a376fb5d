//! Kernel modules: dependencies read from each `.ko`'s `.modinfo`, load order resolved.
//!
//! Debian's kernel packages ship no `modules.dep` (boards-and-boot.md), so the
//! `depends=` entry of each module's `.modinfo` section is read directly.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

pub use benchboot_kmod::canonical;
use benchboot_kmod::ModInfo;

/// The `depends=` list of a module's `.modinfo` (NUL-separated `key=value` strings).
pub fn depends_of(modinfo: &[u8]) -> Vec<String> {
    ModInfo::parse(modinfo).depends
}

/// Every `.ko` under `lib/modules/<release>/` of an unpacked kernel, by canonical name.
pub fn index(kernel_root: &Path, release: &str) -> Result<BTreeMap<String, PathBuf>> {
    let dir = kernel_root.join("lib/modules").join(release);
    let mut out = BTreeMap::new();
    for p in crate::walk_files(&dir)? {
        if p.extension().is_some_and(|x| x == "ko") {
            if let Some(stem) = p.file_stem().and_then(|s| s.to_str()) {
                out.insert(canonical(stem), p.clone());
            }
        }
    }
    if out.is_empty() {
        bail!(
            "{}: no kernel modules found: is kernel.release right?",
            dir.display()
        );
    }
    Ok(out)
}

/// Reads the `.modinfo` section of a `.ko`.
pub fn modinfo(path: &Path) -> Result<Vec<u8>> {
    use object::{Object, ObjectSection};
    let data = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let file = object::File::parse(&*data)
        .with_context(|| format!("{}: not an ELF module", path.display()))?;
    let section = file
        .section_by_name(".modinfo")
        .with_context(|| format!("{}: no .modinfo section", path.display()))?;
    Ok(section.data()?.to_vec())
}

/// Orders `wanted` and their dependencies so every module comes after what it depends
/// on. `deps` maps a module to its direct dependencies.
///
/// # Errors
/// A module missing from `deps` (named, with who needed it) or a dependency cycle.
pub fn load_order(wanted: &[String], deps: &BTreeMap<String, Vec<String>>) -> Result<Vec<String>> {
    fn visit(
        m: &str,
        needed_by: &str,
        deps: &BTreeMap<String, Vec<String>>,
        state: &mut BTreeMap<String, bool>,
        out: &mut Vec<String>,
    ) -> Result<()> {
        match state.get(m) {
            Some(true) => return Ok(()),
            Some(false) => bail!("dependency cycle through module `{m}`"),
            None => {}
        }
        let Some(ds) = deps.get(m) else {
            bail!("module `{m}` (needed by {needed_by}) is not in the kernel package");
        };
        state.insert(m.to_owned(), false);
        for d in ds {
            visit(d, m, deps, state, out)?;
        }
        state.insert(m.to_owned(), true);
        out.push(m.to_owned());
        Ok(())
    }
    let mut state = BTreeMap::new();
    let mut out = Vec::new();
    for m in wanted {
        visit(&canonical(m), "the board file", deps, &mut state, &mut out)?;
    }
    Ok(out)
}

/// Every module of an unpacked kernel: its file and what its `.modinfo` says.
pub fn infos(kernel_root: &Path, release: &str) -> Result<BTreeMap<String, (PathBuf, ModInfo)>> {
    index(kernel_root, release)?
        .into_iter()
        .map(|(name, path)| {
            let info = ModInfo::parse(&modinfo(&path)?);
            Ok((name, (path, info)))
        })
        .collect()
}

/// Resolves `wanted` against an unpacked kernel: the load order and each module's file.
/// A module's `softdep` `pre:` modules are loaded with it, before it (genet's
/// `mdio-bcm-unimac`; those the flavour builds in are skipped): there is no udev or
/// kmod on the board to follow them.
pub fn resolve(
    kernel_root: &Path,
    release: &str,
    wanted: &[String],
) -> Result<Vec<(String, PathBuf)>> {
    let all = infos(kernel_root, release)?;
    let order = load_order(wanted, &dependencies(&all))?;
    Ok(order
        .into_iter()
        .map(|m| {
            let p = all[&m].0.clone();
            (m, p)
        })
        .collect())
}

/// Each module's direct dependencies as [`resolve`] follows them (canonical names):
/// its `softdep` `pre:` modules that the flavour has as modules, then its `depends=`.
pub fn dependencies(all: &BTreeMap<String, (PathBuf, ModInfo)>) -> BTreeMap<String, Vec<String>> {
    let mut deps = BTreeMap::new();
    for (name, (_, info)) in all {
        // A softdep may name a module this flavour builds in (or not at all): skipped.
        let mut d: Vec<String> = (info.softdeps.pre.iter())
            .filter(|m| all.contains_key(*m))
            .cloned()
            .collect();
        d.extend(info.depends.iter().cloned());
        deps.insert(name.clone(), d);
    }
    deps
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deps(pairs: &[(&str, &[&str])]) -> BTreeMap<String, Vec<String>> {
        pairs
            .iter()
            .map(|(m, d)| (m.to_string(), d.iter().map(|s| s.to_string()).collect()))
            .collect()
    }

    #[test]
    fn modinfo_depends() {
        let info = b"license=GPL\0depends=mbcache,jbd2,crc16\0intree=Y\0";
        assert_eq!(depends_of(info), ["mbcache", "jbd2", "crc16"]);
        assert!(depends_of(b"depends=\0").is_empty());
        assert_eq!(depends_of(b"depends=usb-common\0"), ["usb_common"]);
    }

    #[test]
    fn dependencies_come_first() {
        let d = deps(&[
            ("ext4", &["mbcache", "jbd2", "crc16"]),
            ("jbd2", &[]),
            ("mbcache", &[]),
            ("crc16", &[]),
            ("vfat", &["fat"]),
            ("fat", &[]),
        ]);
        let order = load_order(&["vfat".into(), "ext4".into()], &d).unwrap();
        assert_eq!(order, ["fat", "vfat", "mbcache", "jbd2", "crc16", "ext4"]);
    }

    #[test]
    fn shared_dependency_loaded_once() {
        let d = deps(&[("a", &["c"]), ("b", &["c"]), ("c", &[])]);
        assert_eq!(
            load_order(&["a".into(), "b".into()], &d).unwrap(),
            ["c", "a", "b"]
        );
    }

    #[test]
    fn missing_and_cycles_are_errors() {
        let d = deps(&[("a", &["nope"])]);
        let err = load_order(&["a".into()], &d).unwrap_err().to_string();
        assert!(err.contains("`nope` (needed by a)"), "{err}");
        let d = deps(&[("a", &["b"]), ("b", &["a"])]);
        assert!(load_order(&["a".into()], &d)
            .unwrap_err()
            .to_string()
            .contains("cycle"));
    }
}
