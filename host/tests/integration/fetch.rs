//! `benchboot fetch`'s checks of what a board serves, against the fake board.

use std::time::Duration;

use benchboot::fetch::fetch;

use crate::fake_board;

#[test]
fn wrong_major_version_is_refused() {
    let addr =
        fake_board::serve_results("{\"schema_version\": {\"major\": 9, \"minor\": 0}}".into());
    let err = format!("{:#}", fetch(&addr, Duration::from_secs(5)).unwrap_err());
    assert!(err.contains("schema version 9"), "{err}");
    assert!(err.contains("update benchboot"), "{err}");
}

#[test]
fn nothing_listening_names_the_address() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr = format!("127.0.0.1:{port}");
    let err = format!("{:#}", fetch(&addr, Duration::from_secs(2)).unwrap_err());
    assert!(err.contains(&addr), "{err}");
}
