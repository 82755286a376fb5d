//! `collect` with no address finds the board ($BENCHBOOT_BOARD first). It sets an
//! environment variable, which no other thread may read meanwhile: it holds
//! [`crate::ENV`] and puts the variable back as it was.

use std::time::Duration;

use crate::fake_board::serve_results;

/// Sets an environment variable until dropped, then restores its earlier value.
struct SetEnv {
    key: &'static str,
    before: Option<std::ffi::OsString>,
}

impl SetEnv {
    fn new(key: &'static str, value: &str) -> SetEnv {
        let before = std::env::var_os(key);
        std::env::set_var(key, value);
        SetEnv { key, before }
    }
}

impl Drop for SetEnv {
    fn drop(&mut self) {
        match &self.before {
            Some(v) => std::env::set_var(self.key, v),
            None => std::env::remove_var(self.key),
        }
    }
}

#[test]
fn collect_finds_the_board_named_by_the_environment() {
    let mut r = benchboot_results::RunResults::new(
        "discovered-0001".into(),
        benchboot_plan::Plan::example(),
        benchboot_results::SystemInfo::default(),
    );
    r.complete = true;
    let addr = serve_results(r.to_json());
    let _env = crate::env_lock();
    let _board = SetEnv::new(benchboot::discover::BOARD_ENV, &addr);
    let dir = tempfile::tempdir().unwrap();
    let c = benchboot::collect::collect(&benchboot::collect::Options {
        addr: None,
        from_card: None,
        from_log: None,
        run: None,
        token: None,
        lava_check: true,
        store: Some(dir.path().to_owned()),
        timeout: Duration::from_secs(10),
        progress: false,
    })
    .unwrap();
    assert_eq!(c.results.run_id, "discovered-0001");
    assert_eq!(c.row.source, addr);
}
