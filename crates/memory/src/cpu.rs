//! What the machine says about its CPU and memory: AT_HWCAP (the kernel's feature bits,
//! the same the kernels are chosen by), `/proc/cpuinfo`, the cache sizes in sysfs,
//! `MemTotal`, the CPUs this process may run on, cpufreq. Parsers are pure; the readers
//! take the `/proc` and `/sys` roots so tests run on fake trees.

use std::path::{Path, PathBuf};

/// AT_HWCAP of this process (getauxval(3) through rustix). Elsewhere (macOS): on AArch64
/// the bits of FP and ASIMD, which every AArch64 core Apple ships has; 0 otherwise.
pub fn hwcap() -> u64 {
    #[cfg(target_os = "linux")]
    {
        rustix::param::linux_hwcap().0 as u64
    }
    #[cfg(not(target_os = "linux"))]
    {
        if cfg!(target_arch = "aarch64") {
            0b11
        } else {
            0
        }
    }
}

/// Feature names from an AT_HWCAP word, for this build's architecture. Bits from the
/// kernel's uapi headers: arch/arm/include/uapi/asm/hwcap.h (`HWCAP_VFP` 1 << 6,
/// `HWCAP_NEON` 1 << 12, `HWCAP_VFPv4` 1 << 16, `HWCAP_LPAE` 1 << 20) and
/// arch/arm64/include/uapi/asm/hwcap.h (`HWCAP_FP` 1 << 0, `HWCAP_ASIMD` 1 << 1); on
/// x86-64 from CPUID (`sse2`, `avx2`, `erms`: REP MOVSB is fast).
pub fn features(hwcap: u64) -> Vec<String> {
    features_for(std::env::consts::ARCH, hwcap)
}

/// [`features`] for the named architecture.
pub fn features_for(arch: &str, hwcap: u64) -> Vec<String> {
    let bits: &[(u32, &str)] = match arch {
        "arm" => &[(6, "vfp"), (12, "neon"), (16, "vfpv4"), (20, "lpae")],
        "aarch64" => &[(0, "fp"), (1, "asimd")],
        _ => &[],
    };
    #[allow(unused_mut)] // only x86-64 adds to it
    let mut out: Vec<String> = bits
        .iter()
        .filter(|(b, _)| hwcap & (1u64 << b) != 0)
        .map(|(_, n)| (*n).to_owned())
        .collect();
    #[cfg(target_arch = "x86_64")]
    if arch == "x86_64" {
        for (on, name) in [
            (std::arch::is_x86_feature_detected!("sse2"), "sse2"),
            (std::arch::is_x86_feature_detected!("avx2"), "avx2"),
            (std::arch::is_x86_feature_detected!("ermsb"), "erms"),
        ] {
            if on {
                out.push(name.to_owned());
            }
        }
    }
    out
}

/// The CPU's name from `/proc/cpuinfo`: `model name` on x86; on ARM the implementer and
/// part (MIDR fields) decoded, e.g. `ARM1176` (part 0xb76), `Cortex-A53` (0xd03), with the
/// kernel's own `model name` beside it when there is one. Part numbers from the cores'
/// Technical Reference Manuals (MIDR register) as Linux lists them in
/// arch/arm64/include/asm/cputype.h.
pub fn model(cpuinfo: &str) -> String {
    let field = |key: &str| {
        cpuinfo.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == key).then(|| v.trim().to_owned())
        })
    };
    let name = field("model name").or_else(|| field("Processor"));
    let part =
        field("CPU part").and_then(|p| u32::from_str_radix(p.trim_start_matches("0x"), 16).ok());
    let implementer = field("CPU implementer");
    let core = match (implementer.as_deref(), part) {
        (Some("0x41"), Some(p)) => match p {
            0xb76 => Some("ARM1176"),
            0xc07 => Some("Cortex-A7"),
            0xc08 => Some("Cortex-A8"),
            0xc09 => Some("Cortex-A9"),
            0xc0f => Some("Cortex-A15"),
            0xd03 => Some("Cortex-A53"),
            0xd04 => Some("Cortex-A35"),
            0xd05 => Some("Cortex-A55"),
            0xd07 => Some("Cortex-A57"),
            0xd08 => Some("Cortex-A72"),
            0xd0b => Some("Cortex-A76"),
            _ => None,
        },
        _ => None,
    };
    match (core, name) {
        (Some(c), Some(n)) => format!("{c} ({n})"),
        (Some(c), None) => c.to_owned(),
        (None, Some(n)) => n,
        (None, None) => match part {
            Some(p) => format!("CPU part {p:#x}"),
            None => "unknown (no model name or CPU part in /proc/cpuinfo)".into(),
        },
    }
}

/// The last-level cache: the largest `size` among
/// `/sys/devices/system/cpu/cpu0/cache/index*/` (Documentation/ABI/testing/
/// sysfs-devices-system-cpu), with the file it came from. `None` when the kernel exports
/// none (32-bit ARM kernels without cache nodes in the DTB).
pub fn llc(sys: &Path) -> Option<(u64, String)> {
    let dir = sys.join("devices/system/cpu/cpu0/cache");
    let mut best: Option<(u64, String)> = None;
    for e in std::fs::read_dir(&dir).ok()?.flatten() {
        let f = e.path().join("size");
        let Some(bytes) = std::fs::read_to_string(&f)
            .ok()
            .and_then(|t| parse_size(&t))
        else {
            continue;
        };
        if best.as_ref().is_none_or(|(b, _)| bytes > *b) {
            best = Some((bytes, f.display().to_string()));
        }
    }
    best
}

/// A sysfs cache size: `32K`, `1024K`, `8M`, or bytes.
pub fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let (num, mul) = match t.as_bytes().last()? {
        b'K' => (&t[..t.len() - 1], 1 << 10),
        b'M' => (&t[..t.len() - 1], 1 << 20),
        _ => (t, 1),
    };
    num.parse::<u64>().ok().map(|n| n * mul)
}

/// `MemTotal` of a `/proc/meminfo` text, bytes.
pub fn mem_total(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// The CPUs this process may run on (`sched_getaffinity`), in order; `[0]` when the
/// call fails. Elsewhere: 0 .. the available parallelism.
pub fn allowed_cpus() -> Vec<u32> {
    #[cfg(target_os = "linux")]
    {
        match rustix::thread::sched_getaffinity(None) {
            Ok(set) => (0..rustix::thread::CpuSet::MAX_CPU as u32)
                .filter(|&c| set.is_set(c as usize))
                .collect(),
            Err(_) => vec![0],
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let n = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
        (0..n).collect()
    }
}

/// Why a CPU fact could not be had or a thread not pinned. Each message names the CPU or
/// the sysfs file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CpuError {
    /// The kernel refused `sched_setaffinity` (the CPU offline or outside the set).
    #[error("sched_setaffinity(CPU {cpu}): {errno}")]
    Pin {
        /// The CPU asked for.
        cpu: u32,
        /// The kernel's answer.
        errno: rustix::io::Errno,
    },
    /// This system has no CPU affinity (macOS).
    #[error("CPU {cpu}: this system cannot pin a thread to a CPU (no sched_setaffinity)")]
    NoAffinity {
        /// The CPU asked for.
        cpu: u32,
    },
    /// `cpu<N>/cpufreq` is absent: no cpufreq driver bound.
    #[error(
        "{} absent: no cpufreq driver bound (on Debian's kernels cpufreq-dt and the SoC's \
         cpufreq module must be loaded)",
        dir.display()
    )]
    NoCpufreq {
        /// The folder looked for.
        dir: PathBuf,
    },
    /// Neither frequency file reads as a number: each file's reason, in the order tried.
    #[error("{}", .0.join("; "))]
    Unreadable(Vec<String>),
    /// Transparent huge pages are set to `[never]`.
    #[error("{}: [never]", file.display())]
    ThpNever {
        /// `kernel/mm/transparent_hugepage/enabled`.
        file: PathBuf,
    },
    /// The kernel has no transparent huge pages.
    #[error("{} absent: this kernel has no transparent huge pages", file.display())]
    ThpAbsent {
        /// `kernel/mm/transparent_hugepage/enabled`.
        file: PathBuf,
    },
}

/// Pins the calling thread to `cpu` (`sched_setaffinity`).
///
/// # Errors
/// [`CpuError::Pin`]: the kernel's refusal (a CPU offline or outside the process's
/// set); [`CpuError::NoAffinity`] on a system without CPU affinity (macOS), always.
pub fn pin(cpu: u32) -> Result<(), CpuError> {
    #[cfg(target_os = "linux")]
    {
        let mut set = rustix::thread::CpuSet::new();
        set.set(cpu as usize);
        rustix::thread::sched_setaffinity(None, &set).map_err(|errno| CpuError::Pin { cpu, errno })
    }
    #[cfg(not(target_os = "linux"))]
    {
        Err(CpuError::NoAffinity { cpu })
    }
}

/// `/sys/devices/system/cpu/cpu<N>/cpufreq`, or why there is none.
///
/// # Errors
/// [`CpuError::NoCpufreq`]: the folder is absent, no cpufreq driver bound.
pub fn cpufreq_dir(sys: &Path, cpu: u32) -> Result<PathBuf, CpuError> {
    let dir = sys.join(format!("devices/system/cpu/cpu{cpu}/cpufreq"));
    if dir.is_dir() {
        Ok(dir)
    } else {
        Err(CpuError::NoCpufreq { dir })
    }
}

/// cpufreq's current frequency of `cpu`, kHz, and the file: `cpuinfo_cur_freq` (what the
/// driver reads back; root only), else `scaling_cur_freq` (what the governor asked)
/// (Documentation/admin-guide/pm/cpufreq.rst: both in kHz).
///
/// # Errors
/// [`CpuError::NoCpufreq`], or [`CpuError::Unreadable`] with each file's reason.
pub fn cpufreq_khz(sys: &Path, cpu: u32) -> Result<(u64, String), CpuError> {
    let dir = cpufreq_dir(sys, cpu)?;
    let mut why = Vec::new();
    for name in ["cpuinfo_cur_freq", "scaling_cur_freq"] {
        let f = dir.join(name);
        match std::fs::read_to_string(&f) {
            Ok(t) => match t.trim().parse() {
                Ok(khz) => return Ok((khz, f.display().to_string())),
                Err(_) => why.push(format!("{}: not a number: {:?}", f.display(), t.trim())),
            },
            Err(e) => why.push(format!("{}: {e}", f.display())),
        }
    }
    Err(CpuError::Unreadable(why))
}

/// Transparent huge pages for `madvise(MADV_HUGEPAGE)`: available unless the kernel has
/// none (`/sys/kernel/mm/transparent_hugepage/enabled` absent) or says `[never]`
/// (Documentation/admin-guide/mm/transhuge.rst).
///
/// # Errors
/// [`CpuError::ThpAbsent`] or [`CpuError::ThpNever`].
pub fn thp_available(sys: &Path) -> Result<(), CpuError> {
    let file = sys.join("kernel/mm/transparent_hugepage/enabled");
    match std::fs::read_to_string(&file) {
        Ok(t) if t.contains("[never]") => Err(CpuError::ThpNever { file }),
        Ok(_) => Ok(()),
        Err(_) => Err(CpuError::ThpAbsent { file }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// /proc/cpuinfo of a Pi Zero W (Debian 6.1 rpi kernel), the fields that matter.
    const ZERO_W: &str = "processor\t: 0\nmodel name\t: ARMv6-compatible processor rev 7 (v6l)\n\
        BogoMIPS\t: 697.95\nFeatures\t: half thumb fastmult vfp edsp java tls \n\
        CPU implementer\t: 0x41\nCPU architecture: 7\nCPU variant\t: 0x0\nCPU part\t: 0xb76\n\
        CPU revision\t: 7\n\nHardware\t: BCM2835\n";
    /// aarch64 (a Pi 3 B on Debian arm64): no model name.
    const PI3: &str =
        "processor\t: 0\nBogoMIPS\t: 38.40\nFeatures\t: fp asimd evtstrm crc32 cpuid\n\
        CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: 0xd03\n";

    #[test]
    fn the_core_is_named_from_the_midr_fields() {
        assert_eq!(
            model(ZERO_W),
            "ARM1176 (ARMv6-compatible processor rev 7 (v6l))"
        );
        assert_eq!(model(PI3), "Cortex-A53");
        assert_eq!(
            model("model name\t: Intel(R) Xeon(R) CPU\n"),
            "Intel(R) Xeon(R) CPU"
        );
        assert_eq!(model("CPU part\t: 0x123\n"), "CPU part 0x123");
    }

    #[test]
    fn hwcap_bits_name_the_features_the_kernels_need() {
        // The ARM1176's AT_HWCAP as Debian's rpi kernel gives it: swp half thumb
        // fastmult vfp edsp java tls (0x1d7 | 1 << 15): VFP, no NEON.
        let zero_w = features_for("arm", 0x81d7);
        assert_eq!(zero_w, ["vfp"]);
        // Cortex-A7 (Pi 2 B): vfp neon vfpv4 lpae (+ others).
        assert_eq!(
            features_for("arm", 0x0017_b8d7),
            ["vfp", "neon", "vfpv4", "lpae"]
        );
        assert_eq!(features_for("aarch64", 0x3), ["fp", "asimd"]);
    }

    #[test]
    fn sizes_and_meminfo_parse() {
        assert_eq!(parse_size("512K\n"), Some(512 << 10));
        assert_eq!(parse_size("8M"), Some(8 << 20));
        assert_eq!(parse_size("x"), None);
        assert_eq!(
            mem_total("MemTotal:         443844 kB\nMemFree: 1 kB\n"),
            Some(443_844 * 1024)
        );
        assert_eq!(mem_total("MemFree: 1 kB\n"), None);
    }

    #[test]
    fn llc_is_the_largest_cache_sysfs_lists() {
        let t = tempfile_dir();
        let c = t.join("devices/system/cpu/cpu0/cache");
        for (i, s) in [(0, "32K"), (1, "32K"), (2, "512K")] {
            std::fs::create_dir_all(c.join(format!("index{i}"))).unwrap();
            std::fs::write(c.join(format!("index{i}/size")), s).unwrap();
        }
        let (bytes, src) = llc(&t).unwrap();
        assert_eq!(bytes, 512 << 10);
        assert!(src.ends_with("index2/size"), "{src}");
        assert!(llc(&t.join("nothing")).is_none());
        std::fs::remove_dir_all(&t).unwrap();
    }

    #[test]
    fn cpufreq_and_thp_say_which_file_is_missing_or_unreadable() {
        let t = tempfile_dir();
        let dir = t.join("devices/system/cpu/cpu0/cpufreq");
        assert_eq!(
            cpufreq_khz(&t, 0),
            Err(CpuError::NoCpufreq { dir: dir.clone() })
        );
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("scaling_cur_freq"), "fast\n").unwrap();
        let Err(CpuError::Unreadable(why)) = cpufreq_khz(&t, 0) else {
            panic!("an unreadable cpufreq must say why")
        };
        assert_eq!(why.len(), 2, "{why:?}");
        assert!(why[0].starts_with(&dir.join("cpuinfo_cur_freq").display().to_string()));
        assert!(
            why[1].ends_with("scaling_cur_freq: not a number: \"fast\""),
            "{why:?}"
        );
        std::fs::write(dir.join("scaling_cur_freq"), "600000\n").unwrap();
        assert_eq!(
            cpufreq_khz(&t, 0),
            Ok((600_000, dir.join("scaling_cur_freq").display().to_string()))
        );
        let file = t.join("kernel/mm/transparent_hugepage/enabled");
        assert_eq!(
            thp_available(&t),
            Err(CpuError::ThpAbsent { file: file.clone() })
        );
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, "always madvise [never]\n").unwrap();
        assert_eq!(
            thp_available(&t),
            Err(CpuError::ThpNever { file: file.clone() })
        );
        std::fs::write(&file, "always [madvise] never\n").unwrap();
        assert_eq!(thp_available(&t), Ok(()));
        std::fs::remove_dir_all(&t).unwrap();
    }

    fn tempfile_dir() -> std::path::PathBuf {
        let d =
            std::env::temp_dir().join(format!("bb-mem-{}-{}", std::process::id(), crate::now_ns()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }
}
