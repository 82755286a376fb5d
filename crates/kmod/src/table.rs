//! The alias table an image carries (`/lib/modules/modules.alias` in the initramfs,
//! `benchboot_plan::MODULES_ALIAS_PATH`): every `alias=` and `softdep=` of the modules
//! the image holds, in the text form depmod writes for `modules.alias` and
//! `modules.softdep`, and each module's `depends=` (one `depends` line per module the
//! image carries, empty or not: the line also says the module is there):
//!
//! ```text
//! alias usb:v*p*d*dc*dsc*dp*ic08isc06ip50in* usb_storage
//! softdep genet pre: mdio_bcm_unimac
//! depends usb_storage: usbcore scsi_mod
//! depends scsi_mod:
//! ```
//!
//! `depends M: a b` is ours (depmod's `modules.dep` names files: `kernel/.../M.ko:
//! kernel/.../a.ko ...`); names are canonical (`-` as `_`), and the `.ko` of each sits
//! at `<MODULES_DIR>/<name>.ko`. PID 1 matches each device's `modalias` (sysfs) against
//! the table and loads what matches ([`crate::autoload`]).

use crate::glob::glob_match;
use crate::modinfo::{canonical, parse_softdep, ModInfo, SoftDeps};

/// A line of a table that is not `alias P M`, `softdep M ...`, `depends M: ...`, a
/// comment or blank.
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
    /// (module, its `depends=`), one entry per module the image carries, in the order
    /// given to [`AliasTable::build`].
    pub depends: Vec<(String, Vec<String>)>,
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
                t.softdeps.push((name.clone(), info.softdeps.clone()));
            }
            t.depends.push((name, info.depends.clone()));
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
        for (m, d) in &self.depends {
            s.push_str(&format!("depends {m}:"));
            for x in d {
                s.push(' ');
                s.push_str(x);
            }
            s.push('\n');
        }
        s
    }

    /// Reads the text form.
    ///
    /// # Errors
    /// The first line that is not blank, a `#` comment, `alias PATTERN MODULE`,
    /// `softdep MODULE [pre: ...] [post: ...]` or `depends MODULE: [MODULE...]`, with
    /// its number.
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
                Some("depends") => {
                    let Some(m) = words.next().and_then(|m| m.strip_suffix(':')) else {
                        return Err(bad(
                            "`depends` takes a module and a colon: `depends M: a b`",
                        ));
                    };
                    if m.is_empty() {
                        return Err(bad("`depends` takes a module before the colon"));
                    }
                    t.depends
                        .push((canonical(m), words.map(canonical).collect()));
                }
                _ => return Err(bad("expected `alias`, `softdep` or `depends`")),
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

    /// The `depends=` of `module` (canonical name), or `None` when the image does not
    /// carry it (no `depends` line names it).
    pub fn depends_of(&self, module: &str) -> Option<&[String]> {
        let module = canonical(module);
        self.depends
            .iter()
            .find(|(m, _)| *m == module)
            .map(|(_, d)| d.as_slice())
    }

    /// Whether the image carries `module` (see [`AliasTable::depends_of`]).
    pub fn carries(&self, module: &str) -> bool {
        self.depends_of(module).is_some()
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
        assert!(
            text.contains("depends usb_storage: usbcore scsi_mod\ndepends uas:\n"),
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
        let e = AliasTable::parse("alias a b\ndepends usb_storage usbcore\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("colon"), "{e}");
        assert_eq!(AliasTable::parse("depends :").unwrap_err().line, 1);
    }

    #[test]
    fn depends_and_what_the_image_carries() {
        let t = table();
        assert_eq!(
            t.depends_of("usb-storage").unwrap(),
            ["usbcore", "scsi_mod"]
        );
        assert_eq!(t.depends_of("uas").unwrap(), [] as [String; 0]);
        assert!(t.carries("genet"));
        assert!(!t.carries("usbcore"), "a dependency without its own line");
    }
}
