//! The `.modinfo` section of a `.ko`: NUL-separated `key=value` strings written by
//! `MODULE_*` macros and modpost (`depends=`, `alias=`, `softdep=`, `firmware=`).
//! Debian's kernel packages ship no `modules.dep`/`modules.alias`/`modules.softdep`
//! (boards-and-boot.md), so these are read from each module directly.

/// Module name as the kernel spells it: `-` becomes `_` (`usb-storage` → `usb_storage`).
pub fn canonical(name: &str) -> String {
    name.replace('-', "_")
}

/// `softdep=pre: a b post: c` (kmod's libkmod-config.c): modules to load before and
/// after this one. Both lists in canonical names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SoftDeps {
    pub pre: Vec<String>,
    pub post: Vec<String>,
}

/// What a module's `.modinfo` says about loading it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModInfo {
    /// `depends=`: modules whose symbols it uses (canonical names), loaded first.
    pub depends: Vec<String>,
    /// `alias=`: modalias patterns of the devices it drives (`of:N*T*C...`, `usb:v...`).
    pub aliases: Vec<String>,
    /// `softdep=`: modules it needs without a symbol dependency (e.g. genet's
    /// `pre: mdio-bcm-unimac`).
    pub softdeps: SoftDeps,
    /// `firmware=`: files it may request below `/lib/firmware`.
    pub firmware: Vec<String>,
}

impl ModInfo {
    /// Parses a `.modinfo` section. Never fails: unknown keys and non-UTF-8 bytes are
    /// skipped or replaced, so a damaged module gives fewer facts, not a panic.
    pub fn parse(section: &[u8]) -> ModInfo {
        let mut info = ModInfo::default();
        for kv in section.split(|&b| b == 0) {
            let kv = String::from_utf8_lossy(kv);
            let Some((key, value)) = kv.split_once('=') else {
                continue;
            };
            match key {
                "depends" => info.depends.extend(
                    value
                        .split(',')
                        .map(str::trim)
                        .filter(|s| !s.is_empty())
                        .map(canonical),
                ),
                "alias" if !value.is_empty() => info.aliases.push(value.to_owned()),
                "softdep" => {
                    let s = parse_softdep(value);
                    info.softdeps.pre.extend(s.pre);
                    info.softdeps.post.extend(s.post);
                }
                "firmware" if !value.is_empty() => info.firmware.push(value.to_owned()),
                _ => {}
            }
        }
        info
    }

    /// The compatibles of its `of:` aliases (`of:N*T*C<compatible>` and
    /// `of:N*T*C<compatible>C*`, file2alias.c `do_of_entry`), for aliases that name a
    /// compatible without wildcards in it.
    pub fn of_compatibles(&self) -> Vec<&str> {
        self.aliases
            .iter()
            .filter_map(|a| of_compatible(a))
            .collect()
    }
}

/// The compatible of one `of:` alias, if it names one (no `*?[` inside it).
pub fn of_compatible(alias: &str) -> Option<&str> {
    let rest = alias.strip_prefix("of:N")?;
    let c = rest.find("T")?;
    let rest = &rest[c + 1..];
    let c = rest.find('C')?;
    let compat = &rest[c + 1..];
    let compat = compat.strip_suffix("C*").unwrap_or(compat);
    (!compat.is_empty() && !compat.contains(['*', '?', '['])).then_some(compat)
}

/// `pre: a b post: c` → pre `[a, b]`, post `[c]` (canonical names). Words before any
/// `pre:`/`post:` are ignored, as kmod does.
pub fn parse_softdep(value: &str) -> SoftDeps {
    let mut s = SoftDeps::default();
    let mut into: Option<bool> = None;
    for word in value.split_whitespace() {
        match word {
            "pre:" => into = Some(true),
            "post:" => into = Some(false),
            m => match into {
                Some(true) => s.pre.push(canonical(m)),
                Some(false) => s.post.push(canonical(m)),
                None => {}
            },
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_real_modinfo() {
        // genet.ko of the pinned arm64 kernel, abridged to the keys read here.
        let section = b"softdep=pre: mdio-bcm-unimac\0alias=of:N*T*Cbrcm,genet-v5\0\
alias=of:N*T*Cbrcm,genet-v5C*\0alias=of:N*T*Cbrcm,bcm2711-genet-v5\0\
depends=bcm-phy-lib,mdio-bcm-unimac, of_mdio\0license=GPL\0name=genet\0firmware=\0";
        let m = ModInfo::parse(section);
        assert_eq!(m.depends, ["bcm_phy_lib", "mdio_bcm_unimac", "of_mdio"]);
        assert_eq!(m.softdeps.pre, ["mdio_bcm_unimac"]);
        assert!(m.softdeps.post.is_empty());
        assert_eq!(m.aliases.len(), 3);
        assert_eq!(
            m.of_compatibles(),
            ["brcm,genet-v5", "brcm,genet-v5", "brcm,bcm2711-genet-v5"]
        );
        assert!(m.firmware.is_empty());
    }

    #[test]
    fn softdep_forms() {
        let s = parse_softdep("pre: a-b c post: d");
        assert_eq!(s.pre, ["a_b", "c"]);
        assert_eq!(s.post, ["d"]);
        assert_eq!(parse_softdep("junk post: x").post, ["x"]);
        assert_eq!(parse_softdep("junk"), SoftDeps::default());
    }

    #[test]
    fn of_compatible_shapes() {
        assert_eq!(
            of_compatible("of:N*T*Cti,am3352-uart"),
            Some("ti,am3352-uart")
        );
        assert_eq!(
            of_compatible("of:N*T*Cti,am3352-uartC*"),
            Some("ti,am3352-uart")
        );
        assert_eq!(of_compatible("of:NmdioT*C*"), None);
        assert_eq!(of_compatible("usb:v*p*"), None);
        assert_eq!(of_compatible("of:N*T*C"), None);
    }

    #[test]
    fn damaged_sections_give_fewer_facts() {
        let m = ModInfo::parse(b"\xff\xfe=\0depends\0alias=\0=x\0");
        assert_eq!(m, ModInfo::default());
    }
}
