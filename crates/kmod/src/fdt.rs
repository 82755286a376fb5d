//! A flattened device tree (DTB) read into a node table: the format of the Devicetree
//! Specification v0.4, chapter 5 (header, structure block tokens `FDT_BEGIN_NODE` = 1,
//! `FDT_END_NODE` = 2, `FDT_PROP` = 3, `FDT_NOP` = 4, `FDT_END` = 9, strings block).
//!
//! Every offset and length is checked against the blob: a damaged or hostile DTB is an
//! error, never a panic or an unbounded allocation.

use std::collections::HashMap;

/// `0xd00dfeed`, big-endian at offset 0 (DT spec 5.2).
pub const FDT_MAGIC: u32 = 0xd00d_feed;

/// Why a blob is not a DTB this reader can use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FdtError(pub String);

impl std::fmt::Display for FdtError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "not a usable DTB: {}", self.0)
    }
}

impl std::error::Error for FdtError {}

/// One node: its full path (`/soc/mmc@7e300000`), parent and properties.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub path: String,
    pub parent: Option<usize>,
    pub props: Vec<(String, Vec<u8>)>,
}

/// Every node of a DTB, parents before children; node 0 is the root `/`.
#[derive(Debug, Clone, Default)]
pub struct Tree {
    pub nodes: Vec<Node>,
    by_path: HashMap<String, usize>,
    by_phandle: HashMap<u32, usize>,
}

fn be32(b: &[u8], at: usize) -> Result<u32, FdtError> {
    b.get(at..at + 4)
        .map(|s| u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
        .ok_or_else(|| FdtError(format!("truncated at byte {at}")))
}

fn cstr(b: &[u8], at: usize) -> Result<&str, FdtError> {
    let rest = b
        .get(at..)
        .ok_or_else(|| FdtError(format!("string offset {at} past the end")))?;
    let end = rest
        .iter()
        .position(|&c| c == 0)
        .ok_or_else(|| FdtError(format!("string at {at} has no NUL")))?;
    std::str::from_utf8(&rest[..end]).map_err(|_| FdtError(format!("string at {at} is not UTF-8")))
}

impl Tree {
    /// Reads a DTB.
    ///
    /// # Errors
    /// A bad magic, a header or token pointing outside the blob, an unbalanced node
    /// nesting, a name that is not UTF-8.
    pub fn parse(dtb: &[u8]) -> Result<Tree, FdtError> {
        if be32(dtb, 0)? != FDT_MAGIC {
            return Err(FdtError("bad magic (want d00dfeed)".into()));
        }
        let total = (be32(dtb, 4)? as usize).min(dtb.len());
        let dtb = &dtb[..total];
        let off_struct = be32(dtb, 8)? as usize;
        let off_strings = be32(dtb, 12)? as usize;
        let strings = dtb
            .get(off_strings..)
            .ok_or_else(|| FdtError("strings block past the end".into()))?;
        let mut t = Tree::default();
        let mut stack: Vec<usize> = Vec::new();
        let mut at = off_struct;
        loop {
            let token = be32(dtb, at)?;
            at += 4;
            match token {
                1 => {
                    let name = cstr(dtb, at)?;
                    at += (name.len() + 1).next_multiple_of(4);
                    let parent = stack.last().copied();
                    let path = match parent {
                        None => "/".to_owned(),
                        Some(p) if t.nodes[p].path == "/" => format!("/{name}"),
                        Some(p) => format!("{}/{name}", t.nodes[p].path),
                    };
                    if parent.is_none() && !t.nodes.is_empty() {
                        return Err(FdtError("a second root node".into()));
                    }
                    t.by_path.insert(path.clone(), t.nodes.len());
                    stack.push(t.nodes.len());
                    t.nodes.push(Node {
                        path,
                        parent,
                        props: Vec::new(),
                    });
                }
                2 => {
                    stack
                        .pop()
                        .ok_or_else(|| FdtError("FDT_END_NODE without a node".into()))?;
                }
                3 => {
                    let len = be32(dtb, at)? as usize;
                    let name_off = be32(dtb, at + 4)? as usize;
                    let data = (at + 8)
                        .checked_add(len)
                        .and_then(|end| dtb.get(at + 8..end))
                        .ok_or_else(|| FdtError(format!("property at {at} runs past the end")))?;
                    let name = cstr(strings, name_off)?;
                    let node = *stack
                        .last()
                        .ok_or_else(|| FdtError("a property outside any node".into()))?;
                    if name == "phandle" || name == "linux,phandle" {
                        if let Ok(ph) = be32(data, 0) {
                            t.by_phandle.insert(ph, node);
                        }
                    }
                    t.nodes[node].props.push((name.to_owned(), data.to_vec()));
                    at += 8 + len.next_multiple_of(4);
                }
                4 => {}
                9 => break,
                other => return Err(FdtError(format!("unknown token {other} at {}", at - 4))),
            }
        }
        if !stack.is_empty() || t.nodes.is_empty() {
            return Err(FdtError("unbalanced nodes".into()));
        }
        Ok(t)
    }

    /// The node at `path` (`/soc/mmc@7e300000`), or an alias name (`serial1`).
    pub fn find(&self, path: &str) -> Option<usize> {
        if let Some(&i) = self.by_path.get(path) {
            return Some(i);
        }
        if path.starts_with('/') {
            return None;
        }
        let aliases = self.by_path.get("/aliases")?;
        let target = self.string(*aliases, path)?;
        self.by_path.get(target).copied()
    }

    /// The node whose `phandle` is `ph`.
    pub fn by_phandle(&self, ph: u32) -> Option<usize> {
        self.by_phandle.get(&ph).copied()
    }

    /// The raw value of property `name` of node `i`.
    pub fn prop(&self, i: usize, name: &str) -> Option<&[u8]> {
        self.nodes[i]
            .props
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_slice())
    }

    /// A string-list property (`compatible`), each string once; empty when absent.
    pub fn strings(&self, i: usize, name: &str) -> Vec<&str> {
        self.prop(i, name)
            .map(|v| {
                v.split(|&b| b == 0)
                    .filter(|s| !s.is_empty())
                    .filter_map(|s| std::str::from_utf8(s).ok())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The first string of property `name`.
    pub fn string(&self, i: usize, name: &str) -> Option<&str> {
        self.strings(i, name).into_iter().next()
    }

    /// Property `name` as big-endian u32 cells (a trailing partial cell is dropped).
    pub fn cells(&self, i: usize, name: &str) -> Vec<u32> {
        self.prop(i, name)
            .map(|v| {
                v.chunks_exact(4)
                    .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// `compatible` of node `i`, most specific first.
    pub fn compatible(&self, i: usize) -> Vec<&str> {
        self.strings(i, "compatible")
    }

    /// Whether node `i` itself is enabled: `status` absent, `okay` or `ok` (DT spec
    /// 2.3.4).
    pub fn enabled_here(&self, i: usize) -> bool {
        matches!(self.string(i, "status"), None | Some("okay" | "ok"))
    }

    /// The first node on the way from `i` up to the root that is disabled, if any: a
    /// node under a disabled parent is never probed.
    pub fn disabled_at(&self, i: usize) -> Option<usize> {
        let mut at = Some(i);
        while let Some(n) = at {
            if !self.enabled_here(n) {
                return Some(n);
            }
            at = self.nodes[n].parent;
        }
        None
    }

    /// The children of node `i`, in document order.
    pub fn children(&self, i: usize) -> Vec<usize> {
        (i + 1..self.nodes.len())
            .filter(|&k| self.nodes[k].parent == Some(i))
            .collect()
    }

    /// The path of node `i`.
    pub fn path(&self, i: usize) -> &str {
        &self.nodes[i].path
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Builds a DTB from (depth, name, props) in document order (a test fixture writer;
    /// the real DTBs are the pinned kernels' and are read by xtask's tests).
    /// A node for [`dtb`]: (depth, name, properties as (name, value)).
    pub(crate) type Node<'a> = (usize, &'a str, &'a [(&'a str, &'a [u8])]);

    pub(crate) fn dtb(nodes: &[Node<'_>]) -> Vec<u8> {
        let mut st = Vec::new();
        let mut strings: Vec<u8> = Vec::new();
        let mut depth_stack: Vec<usize> = Vec::new();
        let push32 = |v: &mut Vec<u8>, x: u32| v.extend_from_slice(&x.to_be_bytes());
        for (depth, name, props) in nodes {
            while depth_stack.last().is_some_and(|d| d >= depth) {
                depth_stack.pop();
                push32(&mut st, 2);
            }
            push32(&mut st, 1);
            st.extend_from_slice(name.as_bytes());
            st.push(0);
            while st.len() % 4 != 0 {
                st.push(0);
            }
            for (p, v) in *props {
                let off = strings.len() as u32;
                strings.extend_from_slice(p.as_bytes());
                strings.push(0);
                push32(&mut st, 3);
                push32(&mut st, v.len() as u32);
                push32(&mut st, off);
                st.extend_from_slice(v);
                while st.len() % 4 != 0 {
                    st.push(0);
                }
            }
            depth_stack.push(*depth);
        }
        for _ in depth_stack {
            push32(&mut st, 2);
        }
        push32(&mut st, 9);
        let off_struct = 40u32;
        let off_strings = off_struct + st.len() as u32;
        let total = off_strings + strings.len() as u32;
        let mut out = Vec::new();
        for x in [
            FDT_MAGIC,
            total,
            off_struct,
            off_strings,
            0,
            17,
            16,
            0,
            strings.len() as u32,
            st.len() as u32,
        ] {
            push32(&mut out, x);
        }
        out.extend_from_slice(&st);
        out.extend_from_slice(&strings);
        out
    }

    #[test]
    fn nodes_paths_phandles_aliases() {
        let blob = dtb(&[
            (0, "", &[("compatible", b"vendor,board\0")]),
            (1, "aliases", &[("serial0", b"/soc/serial@1000\0")]),
            (1, "soc", &[("compatible", b"simple-bus\0")]),
            (
                2,
                "serial@1000",
                &[
                    ("compatible", b"ti,am3352-uart\0ti,omap3-uart\0"),
                    ("status", b"okay\0"),
                ],
            ),
            (
                2,
                "reg",
                &[("phandle", &[0, 0, 0, 7]), ("status", b"disabled\0")],
            ),
            (3, "child", &[]),
        ]);
        let t = Tree::parse(&blob).unwrap();
        assert_eq!(t.nodes.len(), 6);
        let s = t.find("serial0").unwrap();
        assert_eq!(t.path(s), "/soc/serial@1000");
        assert_eq!(t.compatible(s), ["ti,am3352-uart", "ti,omap3-uart"]);
        let r = t.by_phandle(7).unwrap();
        assert_eq!(t.path(r), "/soc/reg");
        let c = t.find("/soc/reg/child").unwrap();
        assert_eq!(t.disabled_at(c), Some(r));
        assert_eq!(t.disabled_at(s), None);
        assert_eq!(t.cells(r, "phandle"), [7]);
    }

    #[test]
    fn damaged_blobs_are_errors() {
        let blob = dtb(&[(0, "", &[]), (1, "a", &[("p", b"x\0")])]);
        // Every truncation is an error, never a panic.
        for cut in 0..blob.len() {
            assert!(Tree::parse(&blob[..cut]).is_err(), "cut at {cut}");
        }
        let mut bad = blob.clone();
        bad[0] = 0;
        assert!(Tree::parse(&bad).unwrap_err().0.contains("magic"));
        // A property length pointing far past the end.
        let mut bad = blob.clone();
        let at = bad.windows(4).position(|w| w == [0, 0, 0, 3]).unwrap();
        bad[at + 4..at + 8].copy_from_slice(&u32::MAX.to_be_bytes());
        assert!(Tree::parse(&bad).is_err());
    }
}
