//! The alias table an image carries (`/lib/modules/modules.alias` in the initramfs):
//! every `alias=` and `softdep=` of the modules the image holds, in the text form
//! depmod writes for `modules.alias` and `modules.softdep`:
//!
//! ```text
//! alias usb:v*p*d*dc*dsc*dp*ic08isc06ip50in* usb_storage
//! softdep genet pre: mdio_bcm_unimac
//! ```
//!
//! PID 1 matches each device's `modalias` (sysfs) against it and loads what matches.

use crate::glob::glob_match;
use crate::modinfo::{canonical, parse_softdep, ModInfo, SoftDeps};

/// A line of a table that is not `alias P M`, `softdep M ...`, a comment or blank.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableError {
    /// 1-based line number.
    pub line: usize,
    pub message: String,
}

impl std::fmt::Display for TableError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for TableError {}

/// Modalias patterns and soft dependencies of the modules an image carries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AliasTable {
    /// (pattern, module), in the order of the modules given to [`AliasTable::build`].
    pub aliases: Vec<(String, String)>,
    /// (module, its soft dependencies).
    pub softdeps: Vec<(String, SoftDeps)>,
}

impl AliasTable {
    /// The table of `modules` (name, `.modinfo`), names made canonical.
    pub fn build<'a>(modules: impl IntoIterator<Item = (&'a str, &'a ModInfo)>) -> AliasTable {
        let mut t = AliasTable::default();
        for (name, info) in modules {
            let name = canonical(name);
            for a in &info.aliases {
                // A pattern with whitespace could not be written back as one field.
                if !a.contains(char::is_whitespace) {
                    t.aliases.push((a.clone(), name.clone()));
                }
            }
            if info.softdeps != SoftDeps::default() {
                t.softdeps.push((name, info.softdeps.clone()));
            }
        }
        t
    }

    /// The text form (see the module docs); [`AliasTable::parse`] reads it back.
    pub fn to_text(&self) -> String {
        let mut s = String::from(
            "# benchboot: modalias patterns and softdeps of the modules in this image\n",
        );
        for (p, m) in &self.aliases {
            s.push_str(&format!("alias {p} {m}\n"));
        }
        for (m, d) in &self.softdeps {
            s.push_str(&format!("softdep {m}"));
            if !d.pre.is_empty() {
                s.push_str(&format!(" pre: {}", d.pre.join(" ")));
            }
            if !d.post.is_empty() {
                s.push_str(&format!(" post: {}", d.post.join(" ")));
            }
            s.push('\n');
        }
        s
    }

    /// Reads the text form.
    ///
    /// # Errors
    /// The first line that is not blank, a `#` comment, `alias PATTERN MODULE` or
    /// `softdep MODULE [pre: ...] [post: ...]`, with its number.
    pub fn parse(text: &str) -> Result<AliasTable, TableError> {
        let mut t = AliasTable::default();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let bad = |message: &str| TableError {
                line: i + 1,
                message: message.to_owned(),
            };
            let mut words = line.split_whitespace();
            match words.next() {
                Some("alias") => {
                    let (Some(p), Some(m), None) = (words.next(), words.next(), words.next())
                    else {
                        return Err(bad("`alias` takes a pattern and a module"));
                    };
                    t.aliases.push((p.to_owned(), canonical(m)));
                }
                Some("softdep") => {
                    let Some(m) = words.next() else {
                        return Err(bad("`softdep` takes a module"));
                    };
                    let rest: Vec<&str> = words.collect();
                    t.softdeps
                        .push((canonical(m), parse_softdep(&rest.join(" "))));
                }
                _ => return Err(bad("expected `alias` or `softdep`")),
            }
        }
        Ok(t)
    }

    /// The modules whose patterns match `modalias`, each once, in table order.
    pub fn modules_for(&self, modalias: &str) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for (p, m) in &self.aliases {
            if !out.contains(&m.as_str()) && glob_match(p, modalias) {
                out.push(m);
            }
        }
        out
    }

    /// The soft dependencies of `module` (canonical name), if it has any.
    pub fn softdeps_of(&self, module: &str) -> Option<&SoftDeps> {
        let module = canonical(module);
        self.softdeps
            .iter()
            .find(|(m, _)| *m == module)
            .map(|(_, d)| d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> AliasTable {
        let storage = ModInfo::parse(
            b"alias=usb:v*p*d*dc*dsc*dp*ic08isc06ip50in*\0depends=usbcore,scsi_mod\0",
        );
        let uas = ModInfo::parse(b"alias=usb:v*p*d*dc*dsc*dp*ic08isc06ip62in*\0");
        let genet = ModInfo::parse(
            b"softdep=pre: mdio-bcm-unimac\0alias=of:N*T*Cbrcm,bcm2711-genet-v5C*\0",
        );
        AliasTable::build([("usb-storage", &storage), ("uas", &uas), ("genet", &genet)])
    }

    #[test]
    fn matches_by_modalias() {
        let t = table();
        assert_eq!(
            t.modules_for("usb:v0781p5581d0100dc00dsc00dp00ic08isc06ip50in00"),
            ["usb_storage"]
        );
        assert_eq!(
            t.modules_for("usb:v174Cp55AAd0100dc00dsc00dp00ic08isc06ip62in01"),
            ["uas"]
        );
        assert!(t
            .modules_for("usb:v0BDAp8153d3100dc00dsc00dp00icFFisc00ip00in00")
            .is_empty());
        assert_eq!(
            t.modules_for("of:NethernetT(null)Cbrcm,bcm2711-genet-v5Cbrcm,genet-v5"),
            ["genet"]
        );
        assert_eq!(t.softdeps_of("genet").unwrap().pre, ["mdio_bcm_unimac"]);
        assert!(t.softdeps_of("uas").is_none());
    }

    #[test]
    fn text_round_trip_and_errors() {
        let t = table();
        let text = t.to_text();
        assert!(
            text.contains("alias usb:v*p*d*dc*dsc*dp*ic08isc06ip62in* uas\n"),
            "{text}"
        );
        assert!(
            text.contains("softdep genet pre: mdio_bcm_unimac\n"),
            "{text}"
        );
        assert_eq!(AliasTable::parse(&text).unwrap(), t);
        let e = AliasTable::parse("# x\n\nalias onlyone\n").unwrap_err();
        assert_eq!(e.line, 3);
        assert!(AliasTable::parse("options x y")
            .unwrap_err()
            .message
            .contains("expected"));
        assert!(AliasTable::parse("softdep").is_err());
    }
}
