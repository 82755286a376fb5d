//! What a test needs from the machine, and what happens when it is missing: under CI
//! (`CI=true`, as `.ci/run` runs) the test fails and names what to install; elsewhere it
//! prints one `SKIPPED` line and passes. A test that cannot run must never pass as if
//! it had run on the machine that is meant to run it.

/// True when the environment says CI: `CI` is set, non-empty and not `false` or `0`
/// (GitHub Actions, GitLab and `.ci/run`'s callers set `CI=true`).
pub fn under_ci() -> bool {
    says_ci(std::env::var("CI").ok().as_deref())
}

/// [`under_ci`] for a value of `CI` (`None`: unset).
fn says_ci(value: Option<&str>) -> bool {
    value.is_some_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// Reports that `test` cannot run because `what` is missing here, `install` saying how
/// to get it.
///
/// # Panics
/// Under CI ([`under_ci`]), always: the message names the test, what is missing and
/// `install`. Elsewhere it prints `SKIPPED <test>: ...` to stderr and returns, and the
/// caller returns from the test.
pub fn missing(test: &str, what: &str, install: &str) {
    if under_ci() {
        panic!("{test}: {what}; under CI (CI=true) this fails instead of skipping: {install}");
    }
    eprintln!("SKIPPED {test}: {what} ({install})");
}

/// True when `system` (e.g. `qemu-system-arm`) is installed and has QEMU machine
/// `machine`; otherwise [`missing`] (a failure under CI) and false.
///
/// # Panics
/// Under CI when the machine is missing.
pub fn require_machine(test: &str, system: &str, machine: &str) -> bool {
    if xtask::qemu::has_machine(system, machine) {
        return true;
    }
    missing(
        test,
        &format!("{system} is not installed or has no `{machine}` machine"),
        "run `cargo xtask setup --tests` (on bookworm it installs QEMU 10 from \
         bookworm-backports, which has bpim2u and raspi4b)",
    );
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ci_is_any_value_but_empty_false_and_zero() {
        for v in ["true", "1", "yes", "github"] {
            assert!(says_ci(Some(v)), "{v}");
        }
        for v in [None, Some(""), Some("false"), Some("0")] {
            assert!(!says_ci(v), "{v:?}");
        }
    }
}
