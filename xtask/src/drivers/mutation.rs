//! Each module of each hardware board's module lists dropped in turn, on the pinned
//! kernels and DTBs (unpacked like `cargo xtask boards` does): the check must fail, or
//! the board file must declare the module in `[hardware] optional-modules` with why.
//! A declared module whose removal the check does catch is an error too (the
//! declaration is stale), so the declarations stay exactly the modules the check
//! cannot see.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::pinned::without_module;
use super::*;
use benchboot_kmod::canonical;

/// What dropping each module of one board did.
#[derive(Default)]
struct Tally {
    /// Modules dropped (each canonical name of the board's lists once).
    checked: usize,
    /// Dropped, and the check failed.
    caught: Vec<String>,
    /// Dropped, the check passed, and the board file says why.
    optional: Vec<String>,
}

/// Per board: (name, the modules whose removal the check catches, in list order; how
/// many are declared optional), as the pinned packages and the shipped board files
/// give them. The rpi flavour builds in every driver the 1 B's DTB chains reach.
const EXPECTED: &[(&str, &[&str], usize)] = &[
    (
        "bananapi-m1",
        &[
            "sunxi_mmc",
            "sunxi_wdt",
            "i2c_mv64xxx",
            "axp20x_regulator",
            "axp20x_adc",
            "axp20x_usb_power",
            "sun4i_ts",
            "phy_sun4i_usb",
            "sunxi",
            "dwmac_sunxi",
            "ehci_platform",
            "ohci_platform",
            "ahci_sunxi",
        ],
        19,
    ),
    (
        "beaglebone-black",
        &[
            "sdhci_omap",
            "omap_wdt",
            "tps65217",
            "phy_am335x",
            "cppi41",
            "musb_dsps",
            "phy_gmii_sel",
            "davinci_mdio",
            "ti_cpsw_new",
        ],
        19,
    ),
    ("rpi-1b", &[], 18),
    (
        "rpi-2b",
        &[
            "bcm2835",
            "bcm2835_thermal",
            "bcm2835_wdt",
            "phy_generic",
            "dwc2",
        ],
        18,
    ),
    (
        "rpi-3b",
        &[
            "bcm2835",
            "sdhci_iproc",
            "bcm2835_thermal",
            "bcm2835_wdt",
            "phy_generic",
            "dwc2",
            "sdhci",
            "sdhci_pltfm",
        ],
        21,
    ),
    (
        "rpi-4b",
        &[
            "sdhci_iproc",
            "gpio_regulator",
            "fixed",
            "bcm2711_thermal",
            "bcm2835_wdt",
            "phy_generic",
            "dwc2",
            "mdio_bcm_unimac",
            "genet",
            "reset_raspberrypi",
            "sdhci",
            "sdhci_pltfm",
        ],
        26,
    ),
    (
        "rpi-zero-2-w",
        &[
            "bcm2835",
            "sdhci_iproc",
            "bcm2835_thermal",
            "bcm2835_wdt",
            "phy_generic",
            "dwc2",
            "sdhci",
            "sdhci_pltfm",
        ],
        14,
    ),
    ("rpi-zero-w", &["sdhci", "sdhci_pltfm", "sdhci_iproc"], 15),
];

/// The modules of an image built from `board`'s lists (which no longer name `m`)
/// without `m`: what the lists carry with their dependencies, less `m` (still there
/// when another module depends on it) and every module that needs it, directly or not
/// (the kernel cannot load those without it).
fn carried_without(flavour: &Flavour, board: &Board, m: &str) -> BTreeSet<String> {
    fn needs(
        deps: &BTreeMap<String, Vec<String>>,
        x: &str,
        m: &str,
        seen: &mut BTreeSet<String>,
    ) -> bool {
        x == m
            || (seen.insert(x.to_owned())
                && deps
                    .get(x)
                    .into_iter()
                    .flatten()
                    .any(|d| needs(deps, d, m, seen)))
    }
    let carried = flavour.carried(&hardware_modules(board)).unwrap();
    carried
        .into_iter()
        .filter(|x| !needs(&flavour.deps, x, m, &mut BTreeSet::new()))
        .collect()
}

#[test]
fn every_listed_module_is_caught_or_declared_optional() {
    let started = std::time::Instant::now();
    let lock = crate::packages::Lock::load_repo().unwrap();
    let mut flavours: BTreeMap<String, (PathBuf, Flavour)> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut tallies: Vec<(String, Tally)> = Vec::new();
    for b in crate::boards::all().unwrap() {
        let Some(hw) = b.hardware.clone() else {
            continue;
        };
        let name = b.name.clone();
        if !flavours.contains_key(&b.kernel.package) {
            let (root, _) = crate::packages::unpacked(&lock, &b.kernel.package).unwrap();
            let f = Flavour::load(&root, &b.kernel.release).unwrap();
            flavours.insert(b.kernel.package.clone(), (root, f));
        }
        let (root, flavour) = &flavours[&b.kernel.package];
        let dtb = hardware_dtb(&b, root).unwrap().unwrap();
        let firmware: Vec<String> = crate::radio::files(&b, &lock)
            .unwrap()
            .into_iter()
            .map(|f| f.path)
            .collect();
        let present = |f: &str| firmware.iter().any(|p| *p == format!("lib/firmware/{f}"));
        let problems = |board: &Board, carried: &BTreeSet<String>| {
            check(board, &dtb, flavour, carried, &present)
                .unwrap()
                .problems
        };
        let all = flavour.carried(&hardware_modules(&b)).unwrap();
        assert_eq!(problems(&b, &all), Vec::<String>::new(), "{name}");
        let mut names: Vec<String> = hardware_modules(&b).iter().map(|m| canonical(m)).collect();
        names.dedup();
        let mut seen = BTreeSet::new();
        names.retain(|m| seen.insert(m.clone()));
        let mut t = Tally::default();
        for m in names {
            t.checked += 1;
            let less = without_module(b.clone(), &m);
            let caught = !problems(&less, &carried_without(flavour, &less, &m)).is_empty();
            let declared = (hw.optional_modules.iter()).find(|o| canonical(&o.module) == m);
            match (caught, declared) {
                (true, None) => t.caught.push(m),
                (false, Some(_)) => t.optional.push(m),
                (false, None) => failures.push(format!(
                    "boards/{name}.toml: without {m} the check still passes: make the check \
                     see what needs it, or declare it in [hardware] optional-modules with why"
                )),
                (true, Some(o)) => failures.push(format!(
                    "boards/{name}.toml: hardware.optional-modules declares {} ({}), but \
                     without it the check fails: remove the entry",
                    o.module, o.why
                )),
            }
        }
        eprintln!(
            "{name}: {} modules dropped in turn: {} caught, {} declared optional",
            t.checked,
            t.caught.len(),
            t.optional.len()
        );
        for m in &t.optional {
            let o = (hw.optional_modules.iter()).find(|o| canonical(&o.module) == *m);
            eprintln!("  optional {m}: {}", o.map_or("", |o| o.why.as_str()));
        }
        tallies.push((name, t));
    }
    let total = |f: fn(&Tally) -> usize| tallies.iter().map(|(_, t)| f(t)).sum::<usize>();
    eprintln!(
        "all boards: {} dropped, {} caught, {} declared optional, in {:.1} s",
        total(|t| t.checked),
        total(|t| t.caught.len()),
        total(|t| t.optional.len()),
        started.elapsed().as_secs_f64()
    );
    assert_eq!(failures, Vec::<String>::new());
    let got: Vec<(&str, Vec<&str>, usize)> = tallies
        .iter()
        .map(|(n, t)| {
            let caught = t.caught.iter().map(String::as_str).collect();
            (n.as_str(), caught, t.optional.len())
        })
        .collect();
    let want: Vec<(&str, Vec<&str>, usize)> = EXPECTED
        .iter()
        .map(|(n, c, o)| (*n, c.to_vec(), *o))
        .collect();
    assert_eq!(got, want);
}
