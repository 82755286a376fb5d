//! The shell-style patterns of `alias=` lines (`fnmatch(3)` without flags, as kmod's
//! `kmod_module_new_from_lookup` uses them): `*` any run of bytes, `?` one byte,
//! `[...]` a set (`[!...]` or `[^...]` negated, `a-z` ranges), everything else itself.

/// Whether `text` matches `pattern` as `fnmatch(pattern, text, 0) == 0` would.
///
/// Iterative with one backtrack point (the last `*`), so a hostile pattern or
/// modalias costs O(pattern × text) at worst, never exponential time or recursion.
/// A `[` without its closing `]` matches a literal `[` (as glibc does).
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let p = pattern.as_bytes();
    let t = text.as_bytes();
    let (mut pi, mut ti) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() {
            match p[pi] {
                b'*' => {
                    star = Some((pi, ti));
                    pi += 1;
                    continue;
                }
                b'?' => {
                    pi += 1;
                    ti += 1;
                    continue;
                }
                b'[' => {
                    if let Some((hit, next)) = class(&p[pi..], t[ti]) {
                        if hit {
                            pi += next;
                            ti += 1;
                            continue;
                        }
                    } else if t[ti] == b'[' {
                        pi += 1;
                        ti += 1;
                        continue;
                    }
                }
                c if c == t[ti] => {
                    pi += 1;
                    ti += 1;
                    continue;
                }
                _ => {}
            }
        }
        match star {
            Some((sp, st)) => {
                pi = sp + 1;
                ti = st + 1;
                star = Some((sp, st + 1));
            }
            None => return false,
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

/// A bracket expression at the start of `p` (`p[0] == b'['`) against byte `c`:
/// `Some((matched, length of the expression))`, `None` when it has no closing `]`.
fn class(p: &[u8], c: u8) -> Option<(bool, usize)> {
    let mut i = 1;
    let negate = matches!(p.get(i), Some(b'!' | b'^'));
    if negate {
        i += 1;
    }
    let mut hit = false;
    let mut first = true;
    loop {
        let &lo = p.get(i)?;
        if lo == b']' && !first {
            return Some((hit != negate, i + 1));
        }
        first = false;
        if p.get(i + 1) == Some(&b'-') && p.get(i + 2).is_some_and(|&hi| hi != b']') {
            let hi = p[i + 2];
            hit |= lo <= c && c <= hi;
            i += 3;
        } else {
            hit |= lo == c;
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::glob_match;

    #[test]
    fn real_aliases_match_real_modaliases() {
        // usb-storage's alias for a bulk-only SCSI interface (file2alias.c do_usb_entry)
        // against the modalias sysfs gives a SanDisk stick's interface.
        let pat = "usb:v*p*d*dc*dsc*dp*ic08isc06ip50in*";
        let dev = "usb:v0781p5581d0100dc00dsc00dp00ic08isc06ip50in00";
        assert!(glob_match(pat, dev));
        // uas: the same class with protocol 0x62 does not match usb-storage's 0x50.
        assert!(!glob_match(
            pat,
            "usb:v174Cp55AAd0100dc00dsc00dp00ic08isc06ip62in01"
        ));
        // An OF alias: `of:N*T*C<compatible>C*` and the modalias of the emmc2 host.
        // `...C*` is the alias for a node whose compatible list goes on after it.
        assert!(!glob_match(
            "of:N*T*Cbrcm,bcm2711-emmc2C*",
            "of:NmmcT(null)Cbrcm,bcm2711-emmc2"
        ));
        assert!(glob_match(
            "of:N*T*Cti,am3352-uartC*",
            "of:NserialT(null)Cti,am3352-uartCti,omap3-uart"
        ));
        assert!(glob_match(
            "of:N*T*Cbrcm,bcm2711-emmc2",
            "of:NmmcT(null)Cbrcm,bcm2711-emmc2"
        ));
        assert!(!glob_match(
            "of:N*T*Cbrcm,bcm2711-emmc2",
            "of:NmmcT(null)Cbrcm,bcm2711-emmc2Cfoo"
        ));
        // r8152's device alias with an upper-case hex product id.
        assert!(glob_match(
            "usb:v0BDAp8153d*dc*dsc*dp*ic*isc*ip*in*",
            "usb:v0BDAp8153d3100dc00dsc00dp00icFFisc00ip00in00"
        ));
    }

    #[test]
    fn sets_ranges_and_literals() {
        assert!(glob_match(
            "pci:v*d*sv*sd*bc0[Cc]sc03i30*",
            "pci:v00001106d00003483sv00001106sd00003483bc0Csc03i30"
        ));
        assert!(glob_match("a[!b]c", "axc"));
        assert!(!glob_match("a[!b]c", "abc"));
        assert!(glob_match("a[]]c", "a]c"));
        assert!(glob_match("a[x", "a[x"), "an unclosed [ is a literal");
        assert!(glob_match("a?c", "abc"));
        assert!(!glob_match("a?c", "ac"));
        assert!(glob_match("*", ""));
        assert!(!glob_match("", "x"));
        assert!(glob_match("a*b*c", "aXbYbZc"));
        assert!(!glob_match("a*b*c", "aXbYbZ"));
    }

    #[test]
    fn hostile_patterns_stay_linear() {
        let pat = "*a".repeat(200) + "b";
        let text = "a".repeat(5000);
        assert!(!glob_match(&pat, &text));
    }
}
