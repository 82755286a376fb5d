//! What a path the user names for writing is, found by identity (device numbers and
//! inode), never by its spelling: [`lookup`] is the one lookup of every command that
//! writes a disk or a file the user names (`flash --device`, `field-test --device`,
//! `probe DEV`, `prepare-disk DEV`, `plan write --card`, `storage --path`).
//!
//! Linux: stat(2) of the path, links followed. A block device node is judged by its
//! `st_rdev` against the system's tables ([`crate::devices::scan_system`]: the whole
//! disks of `/sys/block`, their partitions, the holders over them (dm, md, loop
//! devices whose backing file or device is on them), every mount of
//! `/proc/self/mountinfo` by major:minor, swap): `/dev/disk/by-id/...`, a second node
//! made with mknod, `/dev/sdb` itself are the same disk. A regular file is judged by
//! its `(st_dev, st_ino)` against every loop device's backing file (stat of
//! `loop/backing_file`; a removed one through `losetup`'s `BACK-INO`) and every active
//! swap file; across an overlay, against the files a loop device reads through it and
//! the upper copy a write reaches ([`stacked`]). The filesystem under a file, a folder or a file about to be created is
//! judged by its `statfs(2)` magic ([`KERNEL_FILESYSTEMS`]) and by the mountinfo entry
//! of its `st_dev` (devtmpfs, whose magic is tmpfs's). macOS: a device node by
//! `st_rdev` against `/dev/<disk>` of each disk and volume `diskutil` lists; devfs by
//! its statfs type name. Windows names its disks its own way
//! ([`crate::target_disk::find_windows_disk`]).
//!
//! The messages say what the path is in the user's words, then each command adds what
//! to do: `/dev/disk/by-label/BBRESULTS is /dev/sdb2, partition 2 of /dev/sdb (...),
//! mounted at /media/pi/BBRESULTS`.

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

use crate::devices::{self, Device, MountEntry, Partition};

pub mod stacked;

/// One file, by identity: the `major:minor` of the filesystem holding it (`st_dev`)
/// and its inode number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileId {
    pub dev: String,
    pub ino: u64,
}

/// The filesystem a path lies on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fs {
    /// `statfs(2)` `f_type` (Linux); 0 elsewhere.
    pub magic: u64,
    /// Its type as mountinfo (Linux) or statfs `f_fstypename` (macOS) says, when found.
    pub fstype: Option<String>,
    /// Where it is mounted, when found.
    pub mount_point: Option<PathBuf>,
}

/// The kernel's own filesystems, by `statfs(2)` magic (include/uapi/linux/magic.h):
/// their files are the kernel's interfaces, never a card, an image or a folder to
/// write a plan or test files in. devtmpfs reports tmpfs's magic: it is told by its
/// mountinfo type ([`Fs::kernel_own`]).
pub const KERNEL_FILESYSTEMS: &[(u64, &str)] = &[
    (0x9fa0, "proc, the kernel's process information"),
    (0x6265_6572, "sysfs, the kernel's device tree"),
    (0x6462_6720, "debugfs, the kernel's debugging files"),
    (0x7472_6163, "tracefs, the kernel's tracing files"),
    (0x6265_6570, "configfs, the kernel's configuration objects"),
    (0x0027_e0eb, "cgroup, the kernel's control groups"),
    (0x6367_7270, "cgroup2, the kernel's control groups"),
    (0xde5e_81e4, "efivarfs, the firmware's EFI variables"),
    (0x7363_6673, "securityfs, the kernel's security modules"),
    (0xf97c_ff8c, "selinuxfs, SELinux's interface"),
    (0x4341_5d53, "smackfs, Smack's interface"),
    (0x1cd1, "devpts, the terminals"),
    (0xcafe_4a11, "bpf, the kernel's BPF objects"),
    (0x6165_676c, "pstore, the kernel's crash records"),
    (0x6573_5543, "fusectl, FUSE's control files"),
    (0x4249_4e4d, "binfmt_misc, the kernel's binary formats"),
    (0x6e73_6673, "nsfs, the kernel's namespaces"),
    (0x1980_0202, "mqueue, the kernel's message queues"),
];

/// tmpfs's `statfs(2)` magic, which devtmpfs reports too.
const TMPFS_MAGIC: u64 = 0x0102_1994;

impl Fs {
    /// What kernel filesystem this is, in words (`proc, the kernel's process
    /// information`), or `None` for an ordinary one. devtmpfs (the `/dev` of device
    /// nodes) counts, by its mountinfo type or a tmpfs mounted on `/dev`; macOS's devfs
    /// too.
    pub fn kernel_own(&self) -> Option<&'static str> {
        if let Some((_, what)) = KERNEL_FILESYSTEMS.iter().find(|(m, _)| *m == self.magic) {
            return Some(what);
        }
        let fstype = self.fstype.as_deref();
        let on_dev = self.mount_point.as_deref() == Some(Path::new("/dev"));
        if fstype == Some("devtmpfs") || (self.magic == TMPFS_MAGIC && on_dev) {
            return Some("devtmpfs, the device nodes");
        }
        (fstype == Some("devfs")).then_some("devfs, the device nodes")
    }
}

/// What a path names, once looked up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum What {
    /// Nothing there yet: a file would be created in `folder`, on `fs`.
    New {
        folder: PathBuf,
        fs: Fs,
    },
    /// Nothing there, and no folder `folder` to create it in.
    Nowhere {
        folder: PathBuf,
    },
    /// A regular file, with what holds it ([`FileUse`]).
    File {
        id: FileId,
        fs: Fs,
        uses: Vec<FileUse>,
    },
    Folder {
        fs: Fs,
    },
    /// A whole disk of this machine.
    Disk(Box<Device>),
    /// A partition of a disk of this machine.
    Partition {
        disk: Box<Device>,
        partition: Partition,
    },
    /// A block device the system's tables do not list (`major:minor`).
    Unlisted {
        dev: String,
    },
    /// A character device, pipe or socket (`kind`).
    Other {
        kind: &'static str,
    },
}

/// What holds a regular file, so that writing it would pull something from under its
/// user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileUse {
    /// It is the backing file of this loop device (with its mounts and holders).
    Loop(Box<Device>),
    /// It is an active swap file.
    Swap,
    /// This loop device's backing file was removed, lay on the same filesystem (or on
    /// an overlay over it) and could not be identified (`losetup` could not say its
    /// inode): it may be this file under another name.
    MaybeLoop(Box<Device>),
    /// Through the overlay mounted at `overlay`, this is the file the loop device reads
    /// as `backing`: a file of one of its layers, or the upper copy a write reaches
    /// ([`stacked`]).
    Stacked {
        device: Box<Device>,
        backing: PathBuf,
        overlay: PathBuf,
    },
    /// The loop device reads `backing` on the overlay mounted at `overlay`, whose
    /// `layers` are named so that they cannot be found (relative to where `mount` ran),
    /// and this file has its inode number: it may be that file in a layer.
    MaybeLayer {
        device: Box<Device>,
        backing: PathBuf,
        overlay: PathBuf,
        layers: Vec<String>,
    },
}

/// A path as given, and what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub given: PathBuf,
    pub what: What,
}

/// Looks `path` up by identity. `root` is where the disk tables (sysfs, proc's mounts
/// and swaps) are read: `/`, or a fake tree in tests, where a device node stat'ed on
/// this machine is found by its numbers; the filesystem under a path is always this
/// machine's.
///
/// # Errors
/// `path` cannot be stat'ed (other than not existing), or the system's disk tables
/// cannot be read.
pub fn lookup(path: &Path, root: &Path) -> Result<Found> {
    let what = what(path, root)?;
    Ok(Found {
        given: path.to_owned(),
        what,
    })
}

fn what(path: &Path, root: &Path) -> Result<What> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let folder = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
                _ => PathBuf::from("."),
            };
            return Ok(if folder.is_dir() {
                What::New {
                    fs: fs_of(&folder, None),
                    folder,
                }
            } else {
                What::Nowhere { folder }
            });
        }
        Err(e) => bail!("{}: {}", path.display(), benchboot_input::os_words(&e)),
    };
    let ft = meta.file_type();
    // macOS names each disk twice: /dev/disk4 (block) and /dev/rdisk4 (character).
    if ft.is_block_device() || (cfg!(target_os = "macos") && ft.is_char_device()) {
        return block_device(meta.rdev(), root);
    }
    let id = FileId {
        dev: devices::dev_key(meta.dev()),
        ino: meta.ino(),
    };
    if ft.is_dir() {
        return Ok(What::Folder {
            fs: fs_of(path, Some(&id.dev)),
        });
    }
    if !ft.is_file() {
        let kind = if ft.is_char_device() {
            "character device"
        } else if ft.is_fifo() {
            "pipe"
        } else {
            "socket"
        };
        return Ok(What::Other { kind });
    }
    let fs = fs_of(path, Some(&id.dev));
    let uses = file_uses(path, &id, root)?;
    Ok(What::File { id, fs, uses })
}

/// The devices of the system under `root`.
fn scan(root: &Path) -> Result<Vec<Device>> {
    if root == Path::new("/") {
        devices::scan_system()
    } else {
        devices::scan_linux(root)
    }
}

/// The disk or partition whose number is `rdev` (Linux: major:minor against sysfs;
/// macOS: `st_rdev` of `/dev/<name>` and `/dev/r<name>` for each disk and volume
/// diskutil lists).
fn block_device(rdev: u64, root: &Path) -> Result<What> {
    let all = scan(root)?;
    let key = devices::dev_key(rdev);
    #[cfg(target_os = "linux")]
    let is = |_: &str, dev: Option<&str>| dev == Some(key.as_str());
    #[cfg(not(target_os = "linux"))]
    let is = |name: &str, _: Option<&str>| {
        use std::os::unix::fs::MetadataExt;
        [name.to_owned(), format!("r{name}")].iter().any(|n| {
            std::fs::metadata(Path::new("/dev").join(n))
                .is_ok_and(|m| devices::dev_key(m.rdev()) == key)
        })
    };
    if let Some(d) = all.iter().find(|d| is(&d.name, d.dev.as_deref())) {
        return Ok(What::Disk(Box::new(d.clone())));
    }
    for d in &all {
        if let Some(p) = d.partitions.iter().find(|p| is(&p.name, p.dev.as_deref())) {
            return Ok(What::Partition {
                disk: Box::new(d.clone()),
                partition: p.clone(),
            });
        }
    }
    Ok(What::Unlisted { dev: key })
}

/// The mount table under `root`, as `/proc/self/mountinfo` gives it.
fn mountinfo(root: &Path) -> Vec<MountEntry> {
    let text = std::fs::read_to_string(root.join("proc/self/mountinfo")).unwrap_or_default();
    devices::parse_mountinfo(&text)
}

/// The filesystem `path` lies on: `statfs(2)`, and its mount: the entry of `dev` (its
/// `st_dev`; `None` for a folder about to hold a new file: its own) in this machine's
/// mountinfo (the path is this machine's, whatever tree the disks are read from), else
/// the longest mount point over it.
fn fs_of(path: &Path, dev: Option<&str>) -> Fs {
    use std::os::unix::fs::MetadataExt;
    let dev = dev.map(str::to_owned).or_else(|| {
        std::fs::metadata(path)
            .ok()
            .map(|m| devices::dev_key(m.dev()))
    });
    let st = rustix::fs::statfs(path).ok();
    #[cfg(target_os = "linux")]
    #[allow(clippy::unnecessary_cast)] // f_type's type differs between targets
    let (magic, named) = (st.as_ref().map_or(0, |s| s.f_type as u64), None::<String>);
    #[cfg(not(target_os = "linux"))]
    let (magic, named) = (
        0,
        st.as_ref().map(|s| {
            let bytes: Vec<u8> = s
                .f_fstypename
                .iter()
                .take_while(|&&c| c != 0)
                .map(|&c| c as u8)
                .collect();
            String::from_utf8_lossy(&bytes).into_owned()
        }),
    );
    let table = mountinfo(Path::new("/"));
    let canonical = path.canonicalize().unwrap_or_else(|_| path.to_owned());
    let over = |m: &&MountEntry| canonical.starts_with(&m.mount_point);
    let mount = dev
        .as_deref()
        .and_then(|d| {
            let same: Vec<&MountEntry> = table.iter().filter(|m| m.dev == d).collect();
            same.iter().copied().rfind(over).or(same.first().copied())
        })
        .or_else(|| {
            table
                .iter()
                .filter(over)
                .max_by_key(|m| m.mount_point.components().count())
        });
    Fs {
        magic,
        fstype: named.or_else(|| mount.map(|m| m.fstype.clone())),
        mount_point: mount.map(|m| m.mount_point.clone()),
    }
}

/// What holds the regular file `path` (stat'ed as `id`): the loop devices that read it
/// (their backing file, or through an overlay a file of one of its layers, or the
/// overlay's file over the upper copy a write to `path` reaches: [`stacked`]) and
/// active swap files (Linux; nothing elsewhere).
fn file_uses(path: &Path, id: &FileId, root: &Path) -> Result<Vec<FileUse>> {
    if !cfg!(target_os = "linux") {
        return Ok(Vec::new());
    }
    let mut uses = Vec::new();
    let all = scan(root)?;
    let mut asked: Option<Vec<(String, FileId)>> = None;
    let table = mountinfo(root);
    let written = stacked::writes(&mountinfo(Path::new("/")), path, id);
    for d in all.iter().filter(|d| d.backing_file.is_some()) {
        let text = d.backing_file.as_deref().unwrap_or(Path::new(""));
        let text = text.to_string_lossy();
        let (path, removed) = match text.strip_suffix(" (deleted)") {
            Some(p) => (p, true),
            None => (text.as_ref(), false),
        };
        let stated = (!removed)
            .then(|| file_id(&under(root, Path::new(path))))
            .flatten();
        let backing = match stated {
            Some(b) => Some(b),
            None => asked
                .get_or_insert_with(|| losetup_ids(root))
                .iter()
                .find(|(name, _)| *name == d.name)
                .map(|(_, b)| b.clone()),
        };
        let reads = stacked::reads(root, &table, Path::new(path), backing.as_ref());
        let device = || Box::new(d.clone());
        match &backing {
            Some(b) if b == id => uses.push(FileUse::Loop(device())),
            Some(b) => {
                let through = reads.overlay.as_ref().or(written.overlay.as_ref());
                if let Some(overlay) = through {
                    if reads.ids.iter().any(|r| written.ids.contains(r)) {
                        uses.push(FileUse::Stacked {
                            device: device(),
                            backing: PathBuf::from(path),
                            overlay: overlay.clone(),
                        });
                    } else if !reads.unresolved.is_empty()
                        && written.ids.iter().any(|w| w.ino == b.ino && w.dev != b.dev)
                    {
                        uses.push(FileUse::MaybeLayer {
                            device: device(),
                            backing: PathBuf::from(path),
                            overlay: overlay.clone(),
                            layers: reads.unresolved.clone(),
                        });
                    }
                }
            }
            None => {
                // Unknown: it may be this file if it lay on the same filesystem, or on
                // one of the layers of the overlay it lay on.
                let on = table
                    .iter()
                    .filter(|m| Path::new(path).starts_with(&m.mount_point))
                    .max_by_key(|m| m.mount_point.components().count());
                let reaches = |dev: &String| written.ids.iter().any(|w| w.dev == *dev);
                if on.is_some_and(|m| reaches(&m.dev))
                    || reads.layer_devs.iter().any(reaches)
                    || !reads.unresolved.is_empty()
                {
                    uses.push(FileUse::MaybeLoop(device()));
                }
            }
        }
    }
    let swaps = std::fs::read_to_string(root.join("proc/swaps")).unwrap_or_default();
    for area in devices::parse_swaps(&swaps) {
        if area.kind == "file" && file_id(&under(root, &area.file)).as_ref() == Some(id) {
            uses.push(FileUse::Swap);
        }
    }
    Ok(uses)
}

/// `path` (absolute, as the kernel names it) inside `root`.
fn under(root: &Path, path: &Path) -> PathBuf {
    root.join(path.strip_prefix("/").unwrap_or(path))
}

/// [`FileId`] of `path`, links followed.
pub fn file_id(path: &Path) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).ok()?;
    Some(FileId {
        dev: devices::dev_key(m.dev()),
        ino: m.ino(),
    })
}

/// Each loop device's backing file by identity, as `losetup` says it (its
/// `LOOP_GET_STATUS64` answer: the inode and device of a file even after it was
/// removed); empty when losetup is missing or may not ask (not root), and in a fake
/// tree.
fn losetup_ids(root: &Path) -> Vec<(String, FileId)> {
    if root != Path::new("/") {
        return Vec::new();
    }
    // util-linux's; also where a user's PATH lacks sbin.
    let tool = ["/usr/sbin/losetup", "/sbin/losetup"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .unwrap_or_else(|| "losetup".into());
    let out = std::process::Command::new(tool)
        .args(["--list", "--noheadings", "--raw"])
        .args(["--output", "NAME,BACK-INO,BACK-MAJ:MIN"])
        .stdin(std::process::Stdio::null())
        .output();
    match out {
        Ok(o) if o.status.success() => parse_losetup(&String::from_utf8_lossy(&o.stdout)),
        _ => Vec::new(),
    }
}

/// `losetup --list --noheadings --raw --output NAME,BACK-INO,BACK-MAJ:MIN`: lines of
/// `/dev/loop0 12 259:0` (util-linux 2.38 pads the last column, escaped in raw output:
/// `\x20\x20254:0`); a line with a field missing (not root) is left out.
pub fn parse_losetup(text: &str) -> Vec<(String, FileId)> {
    text.lines()
        .filter_map(|l| {
            let l = l.replace("\\x20", " ");
            let mut f = l.split_whitespace();
            let name = f.next()?.trim_start_matches("/dev/").to_owned();
            let ino = f.next()?.parse().ok()?;
            let dev = f.next()?;
            dev.contains(':').then(|| {
                (
                    name,
                    FileId {
                        dev: dev.to_owned(),
                        ino,
                    },
                )
            })
        })
        .collect()
}

impl Found {
    /// `{arg}{given}`, and what it is when the name is not the device node itself:
    /// `/dev/disk/by-id/usb-x is /dev/sdb`.
    fn named(&self, arg: &str, node: &Path) -> String {
        if self.given == node {
            format!("{arg}{}", node.display())
        } else {
            format!("{arg}{} is {}", self.given.display(), node.display())
        }
    }

    /// The path in words, as far as the lookup knows it: a disk by its node and
    /// description, a partition with its number, disk and mount points
    /// (`/dev/disk/by-label/BBRESULTS is /dev/sdb2, partition 2 of /dev/sdb (...),
    /// mounted at /media/pi/BBRESULTS`), anything else by the name given.
    pub fn words(&self, arg: &str) -> String {
        match &self.what {
            What::Disk(d) => {
                let named = self.named(arg, &d.path);
                let described = d.describe();
                let rest = described
                    .strip_prefix(&d.path.display().to_string())
                    .unwrap_or(&described);
                format!("{named}{rest}")
            }
            What::Partition { disk, partition } => {
                let node = disk.path.with_file_name(&partition.name);
                let number = partition
                    .number
                    .map_or_else(|| "a partition".to_owned(), |n| format!("partition {n}"));
                let mounts: Vec<String> = disk
                    .mounts
                    .iter()
                    .filter(|m| m.device == partition.name)
                    .map(|m| m.mount_point.display().to_string())
                    .collect();
                let mounted = if mounts.is_empty() {
                    String::new()
                } else {
                    format!(", mounted at {}", mounts.join(", "))
                };
                let named = self.named(arg, &node);
                let is = if named.contains(" is ") { "," } else { " is" };
                format!("{named}{is} {number} of {}{mounted}", disk.describe())
            }
            _ => format!("{arg}{}", self.given.display()),
        }
    }

    /// Refuses a file, a folder or a file about to be created on one of the kernel's
    /// own filesystems ([`Fs::kernel_own`]), by `statfs(2)` magic: never written,
    /// however it is spelt. `fix` says what to name instead.
    ///
    /// # Errors
    /// What it is and `fix`.
    pub fn refuse_kernel_files(&self, arg: &str, fix: &str) -> Result<()> {
        let fs = match &self.what {
            What::New { fs, .. } | What::File { fs, .. } | What::Folder { fs } => fs,
            _ => return Ok(()),
        };
        let Some(what) = fs.kernel_own() else {
            return Ok(());
        };
        let how = if fs.magic == 0 {
            String::new()
        } else {
            format!(", statfs magic {:#x}", fs.magic)
        };
        let subject = match &self.what {
            What::New { folder, .. } => format!(
                "{arg}{}: no such file, and its folder {} is",
                self.given.display(),
                folder.display()
            ),
            _ => format!("{arg}{} is", self.given.display()),
        };
        bail!("{subject} on {what}{how}: the kernel's own files, never written; {fix}")
    }

    /// Refuses a regular file something holds ([`FileUse`]): the backing file of a loop
    /// device (writing it changes that disk under its filesystem), an active swap
    /// file, or a file that may be a loop device's removed backing file. Each is said
    /// with what to do.
    ///
    /// # Errors
    /// Every use, one line each.
    pub fn refuse_in_use(&self, arg: &str) -> Result<()> {
        let What::File { uses, .. } = &self.what else {
            return Ok(());
        };
        if uses.is_empty() {
            return Ok(());
        }
        let given = self.given.display();
        let lines: Vec<String> = uses
            .iter()
            .map(|u| use_words(u, &given.to_string()))
            .collect();
        bail!(
            "refusing to write {arg}{given}:{}",
            lines
                .iter()
                .map(|l| format!("\n  - {l}"))
                .collect::<String>()
        )
    }
}

/// One [`FileUse`] of file `given`, in words, with what to do.
fn use_words(u: &FileUse, given: &str) -> String {
    match u {
        FileUse::Loop(d) => {
            let node = d.path.display();
            loop_words(d, &format!("it is the backing file of loop device {node}"))
        }
        FileUse::Stacked {
            device,
            backing,
            overlay,
        } => loop_words(
            device,
            &format!(
                "through the overlay mounted at {}, it is the backing file of loop device {} \
                 ({})",
                overlay.display(),
                device.path.display(),
                backing.display()
            ),
        ),
        FileUse::Swap => format!(
            "it is an active swap file: writing it would corrupt what is swapped out; \
             `swapoff {given}` first, or name another file"
        ),
        FileUse::MaybeLoop(d) => {
            let node = d.path.display();
            let backing = d
                .backing_file
                .as_deref()
                .unwrap_or(Path::new("?"))
                .display();
            format!(
                "loop device {node} reads a removed file ({backing}) on the same filesystem, \
                 which may be this file under another name (losetup could not say which: \
                 run as root); detach it first (`losetup -d {node}`)"
            )
        }
        FileUse::MaybeLayer {
            device,
            backing,
            overlay,
            layers,
        } => {
            let node = device.path.display();
            format!(
                "loop device {node} reads {} on the overlay mounted at {}, whose layers are \
                 named relative to where it was mounted ({}), so they cannot be found: this \
                 file has the same inode number and may be that file in a layer; detach it \
                 first (`losetup -d {node}`), or mount the overlay with absolute layer paths",
                backing.display(),
                overlay.display(),
                layers.join(", ")
            )
        }
    }
}

/// A loop device's use of a file, `what` it is to it, and what to do: detach it, after
/// unmounting what is mounted from it.
fn loop_words(d: &Device, what: &str) -> String {
    let node = d.path.display();
    let m: Vec<String> = d
        .mounts
        .iter()
        .map(|m| m.mount_point.display().to_string())
        .collect();
    if m.is_empty() {
        format!(
            "{what}: writing it would change that disk under whoever uses it; detach it \
             first (`losetup -d {node}`)"
        )
    } else {
        format!(
            "{what}, mounted at {}: writing it would destroy that filesystem; unmount it and \
             detach {node} first (`umount {}`, `losetup -d {node}`)",
            m.join(", "),
            m.join(" "),
        )
    }
}

#[cfg(test)]
mod tests;
