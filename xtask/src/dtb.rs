//! DTB fix-ups from the board file, applied with `fdtput` and read back with `fdtget`:
//! for the image, the driver-chain check and the board check alike (below `image` and
//! `drivers`, which both use it).

use anyhow::{ensure, Context, Result};
use benchboot_board::DtbFixup;
use xshell::{cmd, Shell};

/// Applies `fixups` to a DTB with `fdtput` (device-tree-compiler) and checks each with
/// `fdtget`; returns the new DTB.
///
/// # Errors
/// A node or property that does not exist, or an edit that does not read back.
pub fn apply_dtb_fixups(dtb: &[u8], fixups: &[DtbFixup]) -> Result<Vec<u8>> {
    if fixups.is_empty() {
        return Ok(dtb.to_vec());
    }
    let tmp = tempfile::NamedTempFile::new()?;
    std::fs::write(tmp.path(), dtb)?;
    let sh = Shell::new()?;
    let file = tmp.path();
    let hint = "(apt-get install device-tree-compiler)";
    for f in fixups {
        match f {
            DtbFixup::Set {
                node,
                property,
                value,
            } => {
                cmd!(sh, "fdtput -t s {file} {node} {property} {value}")
                    .quiet()
                    .run()
                    .with_context(|| format!("setting {node} {property} {hint}"))?;
                let got = cmd!(sh, "fdtget -t s {file} {node} {property}")
                    .quiet()
                    .read()?;
                ensure!(
                    got.trim() == value,
                    "fdtput did not set {node} {property}: reads back {got:?}"
                );
            }
            DtbFixup::DeleteProperty { node, property } => {
                cmd!(sh, "fdtput -d {file} {node} {property}")
                    .quiet()
                    .run()
                    .with_context(|| format!("deleting {node} {property} {hint}"))?;
            }
            DtbFixup::DeleteNode { node } => {
                cmd!(sh, "fdtput -r {file} {node}")
                    .quiet()
                    .run()
                    .with_context(|| format!("deleting node {node} {hint}"))?;
            }
        }
    }
    Ok(std::fs::read(file)?)
}
