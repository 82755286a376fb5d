//! A file's identity across stacking filesystems: the files a loop device reads and the
//! files a write reaches, beyond the one `(st_dev, st_ino)` that stat(2) of its name
//! gives.
//!
//! overlayfs (statfs magic [`OVERLAYFS_MAGIC`], mountinfo type `overlay`) shows the
//! files of its layers under its own device number: a file of the lower layer stats as
//! `0:40` through the overlay and as `254:0` in the layer, with the same inode when the
//! layers share a filesystem (Documentation/filesystems/overlayfs.rst, "Inode
//! properties"). A loop device attached through the overlay reads the layer's file, so
//! writing that file changes the disk underneath it. [`reads`] names every file such a
//! loop device may read: for each layer of the mount's options (`upperdir=`,
//! `lowerdir=`, `lowerdir+=`, `datadir+=`), the file at the same place in the layer
//! (also through a second overlay: layers stack two deep at most, the kernel's
//! `FILESYSTEM_MAX_STACK_DEPTH`), and any file of the layer's filesystem with the
//! overlay's inode number (a renamed folder's files are found by inode, not by place).
//! [`writes`] names the file a write through an overlay reaches: its copy in the upper
//! layer. Either errs towards refusing: a file in a lower layer hidden by an upper copy
//! counts, as does a file with the same inode number on another layer's filesystem.
//!
//! Bind mounts need nothing: a bound folder is the same filesystem, so its files keep
//! their `st_dev` and inode.

use std::path::{Path, PathBuf};

use super::{file_id, under, FileId};
use crate::devices::{self, MountEntry};

/// overlayfs's `statfs(2)` magic (include/uapi/linux/magic.h `OVERLAYFS_SUPER_MAGIC`).
pub const OVERLAYFS_MAGIC: u64 = 0x794c_7630;

/// How deep overlays stack over one another: the kernel's `FILESYSTEM_MAX_STACK_DEPTH`
/// (include/linux/fs.h), 2.
const MAX_DEPTH: usize = 2;

/// What a file read through a loop device may be, by identity.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Reads {
    /// The file itself and the files of the layers under it.
    pub ids: Vec<FileId>,
    /// The overlay it lies on (where it is mounted), when it does.
    pub overlay: Option<PathBuf>,
    /// The `major:minor` of each layer's filesystem that could be found.
    pub layer_devs: Vec<String>,
    /// Layers named so that they cannot be found (a relative `lowerdir=lower` is relative
    /// to where `mount` ran), as the options name them.
    pub unresolved: Vec<String>,
}

/// The layers an overlay's options name, as written (unescaped): the upper one, if
/// any, and the lower ones from the top (data-only layers last).
pub fn layers(options: &str) -> (Option<String>, Vec<String>) {
    let mut upper = None;
    let mut lower = Vec::new();
    for option in options.split(',') {
        let Some((key, value)) = option.split_once('=') else {
            continue;
        };
        let value = devices::unescape(value);
        match key {
            "upperdir" => upper = Some(value),
            "lowerdir+" | "datadir+" => lower.push(value),
            // `a:b` from the top; `\:` is a colon in a name; `::` starts the data-only
            // layers.
            "lowerdir" => {
                let mut name = String::new();
                let mut chars = value.chars();
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => name.extend(chars.next()),
                        ':' => {
                            if !name.is_empty() {
                                lower.push(std::mem::take(&mut name));
                            }
                        }
                        c => name.push(c),
                    }
                }
                if !name.is_empty() {
                    lower.push(name);
                }
            }
            _ => {}
        }
    }
    (upper, lower)
}

/// The overlay `path` (absolute, as the kernel names it, under `root`) lies on: the
/// mount whose point is the longest prefix of it (the last one mounted there) when it is
/// an overlay, or when `statfs(2)` says so on this machine.
fn overlay_of<'a>(table: &'a [MountEntry], root: &Path, path: &Path) -> Option<&'a MountEntry> {
    let mount = table
        .iter()
        .filter(|m| path.starts_with(&m.mount_point))
        .max_by_key(|m| m.mount_point.components().count())?;
    let by_magic = || {
        root == Path::new("/")
            && rustix::fs::statfs(path).is_ok_and(|s| {
                #[allow(clippy::unnecessary_cast)] // f_type's type differs between targets
                let magic = s.f_type as u64;
                magic == OVERLAYFS_MAGIC
            })
    };
    (mount.fstype == "overlay" || by_magic()).then_some(mount)
}

/// Where `path` is inside its overlay `m`: relative to a layer's top folder.
fn place_in(m: &MountEntry, path: &Path) -> PathBuf {
    let inside = path.strip_prefix(&m.mount_point).unwrap_or(path);
    m.root.strip_prefix("/").unwrap_or(&m.root).join(inside)
}

/// What a loop device whose backing file is `path` (absolute, as the kernel names it,
/// under `root`; `id` as losetup or stat said, `None` when unknown) may read: the file
/// itself and, on an overlay of `table`, its layers' files ([`Reads`]).
pub fn reads(root: &Path, table: &[MountEntry], path: &Path, id: Option<&FileId>) -> Reads {
    let mut r = Reads::default();
    r.ids.extend(id.cloned());
    read_layers(root, table, path, id, 0, &mut r);
    r
}

fn read_layers(
    root: &Path,
    table: &[MountEntry],
    path: &Path,
    id: Option<&FileId>,
    depth: usize,
    r: &mut Reads,
) {
    if depth >= MAX_DEPTH {
        return;
    }
    let Some(m) = overlay_of(table, root, path) else {
        return;
    };
    r.overlay.get_or_insert_with(|| m.mount_point.clone());
    let place = place_in(m, path);
    let (upper, lower) = layers(&m.options);
    for layer in upper.into_iter().chain(lower) {
        let top = Path::new(&layer);
        if !top.is_absolute() {
            r.unresolved.push(layer);
            continue;
        }
        let Some(layer_id) = file_id(&under(root, top)) else {
            r.unresolved.push(layer);
            continue;
        };
        if let Some(id) = id {
            r.ids.push(FileId {
                dev: layer_id.dev.clone(),
                ino: id.ino,
            });
        }
        r.layer_devs.push(layer_id.dev);
        let file = top.join(&place);
        if let Some(found) = file_id(&under(root, &file)) {
            r.ids.push(found.clone());
            read_layers(root, table, &file, Some(&found), depth + 1, r);
        }
    }
}

/// The files a write to a file reaches ([`writes`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Writes {
    /// The file itself, then its copy in each upper layer under it.
    pub ids: Vec<FileId>,
    /// The overlay the file lies on (where it is mounted), when it does.
    pub overlay: Option<PathBuf>,
}

/// The files a write to `path` (this machine's; `id` its stat) reaches: itself and, on
/// an overlay of `table`, its copy in the upper layer, which the write goes to (a file
/// not yet copied up is copied on opening: a new file nothing else holds).
pub fn writes(table: &[MountEntry], path: &Path, id: &FileId) -> Writes {
    let mut w = Writes {
        ids: vec![id.clone()],
        overlay: None,
    };
    let mut at = path.canonicalize().unwrap_or_else(|_| path.to_owned());
    for _ in 0..MAX_DEPTH {
        let Some(m) = overlay_of(table, Path::new("/"), &at) else {
            break;
        };
        w.overlay.get_or_insert_with(|| m.mount_point.clone());
        let Some(upper) = layers(&m.options).0.filter(|u| Path::new(u).is_absolute()) else {
            break;
        };
        at = Path::new(&upper).join(place_in(m, &at));
        match file_id(&at) {
            Some(found) => w.ids.push(found),
            None => break,
        }
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_overlays_layers_are_read_from_its_options() {
        assert_eq!(
            layers("rw,lowerdir=/l1:/l2,upperdir=/u,workdir=/w,uuid=on"),
            (Some("/u".into()), vec!["/l1".into(), "/l2".into()])
        );
        // A colon in a name (`\:`, its backslash shown as \134), a comma (\054), data-only
        // layers after `::`, and the one-layer-each form of the new mount API.
        assert_eq!(
            layers(r"ro,lowerdir=/a\134:b:/c\054d::/data,redirect_dir=on"),
            (None, vec!["/a:b".into(), "/c,d".into(), "/data".into()])
        );
        assert_eq!(
            layers("rw,lowerdir+=/l1,lowerdir+=/l2,datadir+=/d,upperdir=/u,workdir=/w"),
            (
                Some("/u".into()),
                vec!["/l1".into(), "/l2".into(), "/d".into()]
            )
        );
        assert_eq!(layers("rw,relatime"), (None, vec![]));
    }

    #[test]
    fn a_file_under_a_bound_part_of_an_overlay_is_found_in_its_layers() {
        let m = devices::parse_mountinfo(
            "48 27 0:40 /sub /mnt/b rw - overlay overlay rw,lowerdir=/l,upperdir=/u,workdir=/w",
        );
        assert_eq!(
            place_in(&m[0], Path::new("/mnt/b/x/card.img")),
            Path::new("sub/x/card.img")
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_loop_over_an_overlay_file_reads_each_layers_copy_and_inode() {
        // A fake tree: /merged is an overlay (as mountinfo says) of /lower and /upper.
        let root = tempfile::tempdir().unwrap();
        for d in ["merged", "lower", "upper"] {
            std::fs::create_dir(root.path().join(d)).unwrap();
        }
        std::fs::write(root.path().join("merged/card.img"), b"m").unwrap();
        std::fs::write(root.path().join("lower/card.img"), b"l").unwrap();
        let table = devices::parse_mountinfo(
            "48 27 0:40 / /merged rw - overlay overlay \
             rw,lowerdir=/lower:rel,upperdir=/upper,workdir=/work\n",
        );
        let id = file_id(&root.path().join("merged/card.img")).unwrap();
        let r = reads(
            root.path(),
            &table,
            Path::new("/merged/card.img"),
            Some(&id),
        );
        let tmp = file_id(root.path()).unwrap().dev;
        let lower = file_id(&root.path().join("lower/card.img")).unwrap();
        assert_eq!(r.overlay, Some(PathBuf::from("/merged")));
        assert_eq!(r.layer_devs, vec![tmp.clone(), tmp.clone()]);
        assert_eq!(r.unresolved, vec!["rel".to_owned()]);
        let by_inode = FileId {
            dev: tmp,
            ino: id.ino,
        };
        // Itself, the upper layer's inode rule (no copy there), the lower's file and inode.
        assert_eq!(r.ids, vec![id, by_inode.clone(), by_inode, lower]);
    }
}
