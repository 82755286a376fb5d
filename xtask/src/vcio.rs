//! benchboot's `/dev/vcio` module (`firmware/vcio/benchboot_vcio.c`), built for the
//! pinned kernel of a board that asks for it (board file `modules.vcio = true`).
//!
//! Debian's kernels build the upstream Raspberry Pi firmware driver in
//! (`CONFIG_RASPBERRYPI_FIRMWARE=y`, `CONFIG_BCM2835_MBOX=y` in the pinned
//! `config-6.1.0-50-{rpi,armmp,arm64}`) but not raspberrypi/linux's
//! drivers/char/broadcom/vcio.c, the device PID 1's health.rs asks for the throttle
//! flags and the firmware's clocks; armmp and arm64 lack raspberrypi-hwmon too
//! (`# CONFIG_SENSORS_RASPBERRYPI_HWMON is not set`). The module is that ioctl over the
//! exported `rpi_firmware_property_list`.
//!
//! Build: kbuild out of tree (`make -C <headers> M=<dir> modules`) against Debian's
//! `linux-headers-<release>` of the pinned kernel, with the host's kbuild tools from
//! `linux-kbuild-<major.minor>` and Debian's cross gcc-12 (`cargo xtask setup`). The
//! header packages expect to live at `/usr/src` and `/usr/lib` (the flavour's
//! `Makefile` is `include /usr/src/linux-headers-<abi>-common/Makefile`, and
//! `scripts`/`tools` are links to `../../lib/linux-kbuild-<v>/...`): [`assemble_tree`]
//! lays them out under `target/vcio/<release>/root/` with every such path rewritten.
//!
//! The `.ko`'s `vermagic=` must equal the kernel's modules' ([`check_vermagic`]): the
//! kernel refuses a module whose vermagic differs (kernel/module/main.c,
//! `check_modinfo`). It is not signed: the pinned configs have `CONFIG_MODULE_SIG=y`
//! without `CONFIG_MODULE_SIG_FORCE`, so the kernel loads it and marks itself tainted
//! (`E`, unsigned module; `O`, out of tree: /proc/sys/kernel/tainted).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, ensure, Context, Result};
use benchboot_board::Board;

use crate::packages::{self, Lock};

/// The module's source directory, relative to the repository root.
pub const SOURCE_DIR: &str = "firmware/vcio";
/// The module's name (its `.ko` is `benchboot_vcio.ko`).
pub const MODULE: &str = "benchboot_vcio";
/// Source files copied into the build directory (kbuild writes its objects next to them).
const SOURCES: &[&str] = &["benchboot_vcio.c", "Kbuild"];
/// The DTB compatible of the firmware node the module asks the firmware driver for
/// (drivers/firmware/raspberrypi.c, `rpi_firmware_of_match`).
pub const FIRMWARE_COMPATIBLE: &str = "raspberrypi,bcm2835-firmware";

/// How kbuild is called for one Debian kernel architecture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cross {
    /// kbuild's `ARCH=`.
    pub make_arch: &'static str,
    /// `CROSS_COMPILE=`: the flavour's `.kernelvariables` appends `gcc-12`.
    pub prefix: &'static str,
    /// The Debian package that provides `<prefix>gcc-12`.
    pub apt: &'static str,
}

/// The cross toolchain for a kernel package's Debian architecture.
///
/// # Errors
/// An architecture no board asking for vcio has (armel: the rpi flavour ships
/// raspberrypi-hwmon, and no armel headers are pinned).
pub fn cross(debian_arch: &str) -> Result<Cross> {
    Ok(match debian_arch {
        "arm64" => Cross {
            make_arch: "arm64",
            prefix: "aarch64-linux-gnu-",
            apt: "gcc-aarch64-linux-gnu",
        },
        "armhf" => Cross {
            make_arch: "arm",
            prefix: "arm-linux-gnueabihf-",
            apt: "gcc-arm-linux-gnueabihf",
        },
        other => bail!(
            "modules.vcio: no vcio build for the {other} kernel (only armmp/armhf and arm64 are \
             pinned with headers; the rpi flavour has raspberrypi-hwmon): remove `vcio = true`"
        ),
    })
}

/// The Debian packages a build needs, by name: the flavour's headers, the common
/// headers they include, the host's kbuild tools.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderPackages {
    /// `linux-headers-6.1.0-50-arm64`.
    pub flavour: String,
    /// `linux-headers-6.1.0-50-common`.
    pub common: String,
    /// `linux-kbuild-6.1`.
    pub kbuild: String,
}

/// The header packages of kernel `release` (`6.1.0-50-arm64`) of `flavour` (`arm64`),
/// by Debian's naming (src:linux's debian/control).
///
/// # Errors
/// A release that does not end in `-<flavour>` or has no `major.minor`.
pub fn header_packages(release: &str, flavour: &str) -> Result<HeaderPackages> {
    let abi = release
        .strip_suffix(&format!("-{flavour}"))
        .with_context(|| format!("kernel.release `{release}` does not end in `-{flavour}`"))?;
    let mut parts = abi.split('.');
    let (Some(major), Some(minor)) = (parts.next(), parts.next()) else {
        bail!("kernel.release `{release}`: no major.minor version");
    };
    Ok(HeaderPackages {
        flavour: format!("linux-headers-{release}"),
        common: format!("linux-headers-{abi}-common"),
        kbuild: format!("linux-kbuild-{major}.{minor}"),
    })
}

/// The value of `vermagic=` in a `.modinfo` section.
pub fn vermagic(modinfo: &[u8]) -> Option<String> {
    modinfo
        .split(|&b| b == 0)
        .find_map(|f| f.strip_prefix(b"vermagic="))
        .map(|v| String::from_utf8_lossy(v).into_owned())
}

/// Checks the built module's `vermagic=` against one of the kernel's own modules.
///
/// # Errors
/// Names both strings and the likely cause (headers of another kernel).
pub fn check_vermagic(built: &[u8], kernel_module: &[u8], release: &str) -> Result<()> {
    let kernel = vermagic(kernel_module)
        .with_context(|| format!("the {release} modules carry no vermagic="))?;
    let ours = vermagic(built).context("benchboot_vcio.ko carries no vermagic=")?;
    ensure!(
        ours == kernel,
        "benchboot_vcio.ko: vermagic `{ours}` but the {release} kernel's modules have `{kernel}`: \
         the kernel would refuse it. The linux-headers pin in {} must be the kernel's version \
         (same ABI, flavour and Debian version)",
        packages::LOCK_FILE
    );
    Ok(())
}

/// Where an absolute path of the header packages (`/usr/src/...`) lives in `root`.
pub fn rooted(root: &Path, absolute: &Path) -> PathBuf {
    root.join(absolute.strip_prefix("/").unwrap_or(absolute))
}

/// The flavour's `Makefile` with its `include /usr/...` lines pointing into `root`.
pub fn rewrite_makefile(text: &str, root: &Path) -> String {
    text.lines()
        .map(|l| match l.strip_prefix("include /") {
            Some(path) => format!("include {}", root.join(path).display()),
            None => l.to_owned(),
        })
        .map(|l| l + "\n")
        .collect()
}

/// Recreates `src` at `dst`: directories made, files hard-linked (copied across file
/// systems), relative links kept, absolute links re-pointed into `root` ([`rooted`]).
fn mirror(src: &Path, dst: &Path, root: &Path) -> Result<()> {
    let meta = std::fs::symlink_metadata(src).with_context(|| format!("{}", src.display()))?;
    if meta.file_type().is_symlink() {
        let target = std::fs::read_link(src)?;
        let target = if target.is_absolute() {
            rooted(root, &target)
        } else {
            target
        };
        std::os::unix::fs::symlink(&target, dst)
            .with_context(|| format!("linking {}", dst.display()))?;
    } else if meta.is_dir() {
        std::fs::create_dir_all(dst)?;
        for e in std::fs::read_dir(src)? {
            let e = e?;
            mirror(&e.path(), &dst.join(e.file_name()), root)?;
        }
    } else if std::fs::hard_link(src, dst).is_err() {
        std::fs::copy(src, dst).with_context(|| format!("copying {}", src.display()))?;
    }
    Ok(())
}

/// Lays the unpacked header packages out as they would be installed, under `root`
/// (`root/usr/src/linux-headers-*`, `root/usr/lib/linux-kbuild-*`), and returns the
/// flavour's kbuild directory (`root/usr/src/linux-headers-<release>`). `pkgs` are the
/// unpacked package roots (each holding `usr/...`).
///
/// # Errors
/// A package without `usr/`, or a file system error.
pub fn assemble_tree(root: &Path, pkgs: &[&Path], release: &str) -> Result<PathBuf> {
    if root.exists() {
        std::fs::remove_dir_all(root)?;
    }
    std::fs::create_dir_all(root)?;
    for pkg in pkgs {
        let usr = pkg.join("usr");
        ensure!(
            usr.is_dir(),
            "{}: no usr/ (not an unpacked header package)",
            pkg.display()
        );
        for top in ["src", "lib"] {
            let Ok(entries) = std::fs::read_dir(usr.join(top)) else {
                continue;
            };
            for e in entries {
                let e = e?;
                let dst = root.join("usr").join(top).join(e.file_name());
                std::fs::create_dir_all(dst.parent().unwrap_or(root))?;
                mirror(&e.path(), &dst, root)?;
            }
        }
    }
    let build = root
        .join("usr/src")
        .join(format!("linux-headers-{release}"));
    let makefile = build.join("Makefile");
    let text = std::fs::read_to_string(&makefile)
        .with_context(|| format!("{}: the flavour's headers", makefile.display()))?;
    // A hard link to the unpacked package's file: replace, never write through it.
    std::fs::remove_file(&makefile)?;
    std::fs::write(&makefile, rewrite_makefile(&text, root))?;
    Ok(build)
}

fn newest_mtime(paths: &[PathBuf]) -> Result<std::time::SystemTime> {
    let mut newest = std::time::UNIX_EPOCH;
    for p in paths {
        let m = std::fs::metadata(p)
            .and_then(|m| m.modified())
            .with_context(|| format!("{}", p.display()))?;
        newest = newest.max(m);
    }
    Ok(newest)
}

/// The DTB carries an enabled node compatible with [`FIRMWARE_COMPATIBLE`].
pub fn dtb_has_firmware(dtb: &[u8]) -> Result<bool> {
    let tree = benchboot_kmod::fdt::Tree::parse(dtb).map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok((0..tree.nodes.len()).any(|i| {
        tree.compatible(i).contains(&FIRMWARE_COMPATIBLE) && tree.disabled_at(i).is_none()
    }))
}

/// For a board with `modules.vcio`: checks its DTB has the firmware node, builds (or
/// reuses) `benchboot_vcio.ko` for its kernel and returns its path; `None` for other
/// boards. `kernel_root` is the unpacked kernel package.
///
/// The build is cached in `target/vcio/<release>/`: reused while the `.ko` is newer
/// than the sources and the header packages' unpack stamps.
///
/// # Errors
/// No firmware node, missing cross compiler (names the apt package), a failing kbuild
/// (its output), a vermagic mismatch.
pub fn for_board(board: &Board, kernel_root: &Path) -> Result<Option<PathBuf>> {
    if !board.vcio {
        return Ok(None);
    }
    let board_file = format!("boards/{}.toml", board.name);
    let release = &board.kernel.release;
    let dtb_name = board
        .kernel
        .dtb
        .as_deref()
        .with_context(|| format!("{board_file}: modules.vcio needs kernel.dtb"))?;
    let dtb_dir = kernel_root.join(format!("usr/lib/linux-image-{release}"));
    let dtb = crate::walk_files(&dtb_dir)?
        .into_iter()
        .find(|p| p.file_name().is_some_and(|n| n == dtb_name))
        .with_context(|| {
            format!(
                "{board_file}: kernel.dtb {dtb_name} not in {}",
                dtb_dir.display()
            )
        })?;
    ensure!(
        dtb_has_firmware(&std::fs::read(&dtb)?).with_context(|| format!("{}", dtb.display()))?,
        "{board_file}: modules.vcio: {dtb_name} has no `{FIRMWARE_COMPATIBLE}` node, so there is \
         no Raspberry Pi firmware to talk to: remove `vcio = true`"
    );
    build(
        release,
        &board.kernel.flavour,
        &board.kernel.arch,
        kernel_root,
    )
    .with_context(|| format!("{board_file}: modules.vcio"))
    .map(Some)
}

/// Builds `benchboot_vcio.ko` for kernel `release` (`flavour`, Debian architecture
/// `debian_arch`) and checks its vermagic against a module of `kernel_root`.
pub fn build(
    release: &str,
    flavour: &str,
    debian_arch: &str,
    kernel_root: &Path,
) -> Result<PathBuf> {
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let cross = cross(debian_arch)?;
    let gcc = format!("{}gcc-12", cross.prefix);
    ensure!(
        Command::new(&gcc)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success()),
        "{gcc} not found: run `cargo xtask setup --tests` (apt: {}, make)",
        cross.apt
    );
    let names = header_packages(release, flavour)?;
    let lock = Lock::load_repo()?;
    let mut pkgs = Vec::new();
    for name in [&names.common, &names.flavour, &names.kbuild] {
        pkgs.push(packages::unpacked(&lock, name)?);
    }
    let dir = crate::target_dir().join("vcio").join(release);
    let ko = dir.join(format!("{MODULE}.ko"));
    let src_dir = crate::repo_root().join(SOURCE_DIR);
    let sources: Vec<PathBuf> = SOURCES.iter().map(|s| src_dir.join(s)).collect();
    let mut inputs = sources.clone();
    inputs.extend(
        pkgs.iter()
            .map(|(root, _)| root.join(".benchboot-unpacked")),
    );
    let kernel_module = crate::modules::index(kernel_root, release)?
        .into_values()
        .next()
        .with_context(|| format!("no module in the {release} kernel"))?;
    let kernel_info = crate::modules::modinfo(&kernel_module)?;
    if std::fs::metadata(&ko)
        .and_then(|m| m.modified())
        .is_ok_and(|built| newest_mtime(&inputs).is_ok_and(|n| built > n))
    {
        check_vermagic(&crate::modules::modinfo(&ko)?, &kernel_info, release)?;
        return Ok(ko);
    }
    let started = std::time::Instant::now();
    let pkg_roots: Vec<&Path> = pkgs.iter().map(|(r, _)| r.as_path()).collect();
    let tree = assemble_tree(&dir.join("root"), &pkg_roots, release)?;
    let work = dir.join("build");
    if work.exists() {
        std::fs::remove_dir_all(&work)?;
    }
    std::fs::create_dir_all(&work)?;
    for (name, src) in SOURCES.iter().zip(&sources) {
        std::fs::copy(src, work.join(name)).with_context(|| format!("{}", src.display()))?;
    }
    let out = Command::new("make")
        .arg("-C")
        .arg(&tree)
        .arg(format!("M={}", work.display()))
        .arg(format!("ARCH={}", cross.make_arch))
        .arg(format!("CROSS_COMPILE={}", cross.prefix))
        .arg("modules")
        .output()
        .context("make not found: run `cargo xtask setup --tests`")?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = err.lines().rev().take(30).collect();
        bail!(
            "building {SOURCE_DIR} against {} failed ({}):\n{}",
            names.flavour,
            out.status,
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        );
    }
    let built = work.join(format!("{MODULE}.ko"));
    // Debian installs its modules with the debug info stripped (INSTALL_MOD_STRIP): ~320 KB
    // of DWARF otherwise, ~10 KB without. .modinfo and the symbol versions stay.
    let strip = format!("{}strip", cross.prefix);
    let status = Command::new(&strip)
        .arg("--strip-debug")
        .arg(&built)
        .status()
        .with_context(|| {
            format!(
                "{strip} not found: run `cargo xtask setup --tests` ({})",
                cross.apt
            )
        })?;
    ensure!(
        status.success(),
        "{strip} --strip-debug {}: {status}",
        built.display()
    );
    check_vermagic(&crate::modules::modinfo(&built)?, &kernel_info, release)?;
    crate::write_atomically(&ko, &std::fs::read(&built)?)?;
    eprintln!(
        "vcio: built {} for {release} in {:.1} s",
        ko.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(ko)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_package_names_follow_debian() {
        let p = header_packages("6.1.0-50-arm64", "arm64").unwrap();
        assert_eq!(p.flavour, "linux-headers-6.1.0-50-arm64");
        assert_eq!(p.common, "linux-headers-6.1.0-50-common");
        assert_eq!(p.kbuild, "linux-kbuild-6.1");
        let p = header_packages("6.1.0-50-armmp", "armmp").unwrap();
        assert_eq!(p.flavour, "linux-headers-6.1.0-50-armmp");
        let err = header_packages("6.1.0-50-armmp", "arm64")
            .unwrap_err()
            .to_string();
        assert!(err.contains("does not end in `-arm64`"), "{err}");
        // Each name is pinned in the lock, at the kernel's version.
        let lock = Lock::load_repo().unwrap();
        for (release, flavour) in [("6.1.0-50-arm64", "arm64"), ("6.1.0-50-armmp", "armmp")] {
            let p = header_packages(release, flavour).unwrap();
            let kernel = lock.get(&format!("linux-image-{release}")).unwrap();
            for name in [&p.flavour, &p.common, &p.kbuild] {
                assert_eq!(lock.get(name).unwrap().version, kernel.version, "{name}");
            }
        }
        assert_eq!(lock.get("linux-kbuild-6.1").unwrap().arch, "amd64");
    }

    #[test]
    fn cross_toolchains() {
        assert_eq!(cross("arm64").unwrap().prefix, "aarch64-linux-gnu-");
        assert_eq!(cross("armhf").unwrap().make_arch, "arm");
        let err = cross("armel").unwrap_err().to_string();
        assert!(
            err.contains("armel") && err.contains("vcio = true"),
            "{err}"
        );
    }

    #[test]
    fn vermagic_must_match() {
        let kernel = b"license=GPL\0vermagic=6.1.0-50-arm64 SMP mod_unload modversions aarch64\0";
        let ours = b"depends=\0name=benchboot_vcio\0vermagic=6.1.0-50-arm64 SMP mod_unload modversions aarch64\0";
        assert_eq!(
            vermagic(ours).as_deref(),
            Some("6.1.0-50-arm64 SMP mod_unload modversions aarch64")
        );
        check_vermagic(ours, kernel, "6.1.0-50-arm64").unwrap();
        let other = b"vermagic=6.1.0-49-arm64 SMP mod_unload modversions aarch64\0";
        let err = check_vermagic(other, kernel, "6.1.0-50-arm64")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("6.1.0-49-arm64")
                && err.contains("would refuse")
                && err.contains("packages.lock.toml"),
            "{err}"
        );
        assert!(check_vermagic(b"name=x\0", kernel, "r").is_err());
    }

    #[test]
    fn makefile_include_points_into_the_tree() {
        let root = Path::new("/t/root");
        assert_eq!(
            rewrite_makefile(
                "include /usr/src/linux-headers-6.1.0-50-common/Makefile\n",
                root
            ),
            "include /t/root/usr/src/linux-headers-6.1.0-50-common/Makefile\n"
        );
        assert_eq!(rewrite_makefile("x := 1\n", root), "x := 1\n");
    }

    /// Fake header packages laid out like Debian's: the flavour's Makefile includes the
    /// common tree by absolute path, `scripts` is a relative link to kbuild's, and an
    /// absolute link (as the packages' /lib/modules/<r>/build has) is re-pointed.
    #[test]
    fn tree_resolves_inside_root() {
        let t = tempfile::tempdir().unwrap();
        let (common, flavour, kbuild) =
            (t.path().join("c"), t.path().join("f"), t.path().join("k"));
        let cdir = common.join("usr/src/linux-headers-9.9.0-1-common");
        std::fs::create_dir_all(&cdir).unwrap();
        std::fs::write(cdir.join("Makefile"), "COMMON := yes\n").unwrap();
        let fdir = flavour.join("usr/src/linux-headers-9.9.0-1-x");
        std::fs::create_dir_all(&fdir).unwrap();
        std::fs::write(
            fdir.join("Makefile"),
            "include /usr/src/linux-headers-9.9.0-1-common/Makefile\n",
        )
        .unwrap();
        std::os::unix::fs::symlink("../../lib/linux-kbuild-9.9/scripts", fdir.join("scripts"))
            .unwrap();
        std::os::unix::fs::symlink("/usr/src/linux-headers-9.9.0-1-common", fdir.join("common"))
            .unwrap();
        let kdir = kbuild.join("usr/lib/linux-kbuild-9.9/scripts");
        std::fs::create_dir_all(&kdir).unwrap();
        std::fs::write(kdir.join("modpost"), "elf").unwrap();

        let root = t.path().join("root");
        let build = assemble_tree(&root, &[&common, &flavour, &kbuild], "9.9.0-1-x").unwrap();
        assert_eq!(build, root.join("usr/src/linux-headers-9.9.0-1-x"));
        let mk = std::fs::read_to_string(build.join("Makefile")).unwrap();
        let included = mk.trim().strip_prefix("include ").unwrap();
        assert_eq!(
            std::fs::read_to_string(included).unwrap(),
            "COMMON := yes\n"
        );
        assert_eq!(
            std::fs::read_to_string(build.join("scripts/modpost")).unwrap(),
            "elf"
        );
        assert_eq!(
            std::fs::read_link(build.join("common")).unwrap(),
            root.join("usr/src/linux-headers-9.9.0-1-common")
        );
        assert!(build.join("common/Makefile").is_file());
        // The unpacked package's Makefile is untouched (the tree's is a new file).
        assert!(std::fs::read_to_string(fdir.join("Makefile"))
            .unwrap()
            .starts_with("include /usr/src/"));
        // Again: the old tree is replaced, not merged into.
        assemble_tree(&root, &[&common, &flavour, &kbuild], "9.9.0-1-x").unwrap();
    }
}

/// Against the pinned packages (downloaded into the cache, as `cargo xtask image` does)
/// and Debian's cross compilers (`cargo xtask setup`).
#[cfg(test)]
mod pinned {
    use super::*;

    fn kernel(flavour: &str) -> (PathBuf, String) {
        let lock = Lock::load_repo().unwrap();
        let release = format!("6.1.0-50-{flavour}");
        let (root, _) = packages::unpacked(&lock, &format!("linux-image-{release}")).unwrap();
        (root, release)
    }

    /// The module builds for both flavours, its vermagic is the kernel's, and its only
    /// imports from the firmware driver are the three exported functions it calls.
    #[test]
    fn builds_for_armmp_and_arm64_with_the_kernels_vermagic() {
        for (flavour, arch, machine) in [("arm64", "arm64", "aarch64"), ("armmp", "armhf", "ARMv7")]
        {
            let (root, release) = kernel(flavour);
            let ko = build(&release, flavour, arch, &root).unwrap();
            let info = crate::modules::modinfo(&ko).unwrap();
            let magic = vermagic(&info).unwrap();
            assert!(magic.starts_with(&format!("{release} SMP")), "{magic}");
            assert!(magic.split_whitespace().any(|w| w == machine), "{magic}");
            let info = benchboot_kmod::ModInfo::parse(&info);
            assert!(info.depends.is_empty(), "{:?}", info.depends);
            let data = std::fs::read(&ko).unwrap();
            use object::{Object, ObjectSymbol};
            let elf = object::File::parse(&*data).unwrap();
            let undefined: Vec<String> = elf
                .symbols()
                .filter(|s| s.is_undefined())
                .filter_map(|s| s.name().ok().map(str::to_owned))
                .filter(|n| n.starts_with("rpi_firmware"))
                .collect();
            let mut undefined = undefined;
            undefined.sort();
            assert_eq!(
                undefined,
                [
                    "rpi_firmware_get",
                    "rpi_firmware_property_list",
                    "rpi_firmware_put"
                ],
                "{flavour}"
            );
            // Stripped like Debian's own modules.
            assert!(data.len() < 64 * 1024, "{} bytes", data.len());
        }
    }

    /// The Pis' DTBs have the firmware node; the BeagleBone's does not (so a board file
    /// asking for vcio there is refused by [`for_board`]).
    #[test]
    fn firmware_node_in_the_pi_dtbs_only() {
        let (root, release) = kernel("armmp");
        let dir = root.join(format!("usr/lib/linux-image-{release}"));
        for (dtb, has) in [
            ("bcm2836-rpi-2-b.dtb", true),
            ("am335x-boneblack.dtb", false),
        ] {
            let data = std::fs::read(dir.join(dtb)).unwrap();
            assert_eq!(dtb_has_firmware(&data).unwrap(), has, "{dtb}");
        }
        // Every board that asks for vcio: its own hardware DTB has the node.
        let lock = Lock::load_repo().unwrap();
        for name in ["rpi-2b", "rpi-3b", "rpi-4b", "rpi-zero-2-w"] {
            let b = crate::load_board(name).unwrap();
            assert!(b.vcio, "{name}");
            let (root, _) = packages::unpacked(&lock, &b.kernel.package).unwrap();
            let dir = root.join(format!("usr/lib/linux-image-{}", b.kernel.release));
            let dtb_name = b.kernel.dtb.as_deref().unwrap();
            let dtb = crate::walk_files(&dir)
                .unwrap()
                .into_iter()
                .find(|p| p.file_name().is_some_and(|n| n == dtb_name))
                .unwrap();
            assert!(
                dtb_has_firmware(&std::fs::read(dtb).unwrap()).unwrap(),
                "{name}"
            );
        }
        let mut bbb = crate::load_board("beaglebone-black").unwrap();
        bbb.vcio = true;
        let err = for_board(&bbb, &root).unwrap_err();
        let err = format!("{err:#}");
        assert!(
            err.contains("boards/beaglebone-black.toml")
                && err.contains("raspberrypi,bcm2835-firmware")
                && err.contains("remove `vcio = true`"),
            "{err}"
        );
    }
}
