//! The request-head parser of both servers and the results server's answers
//! (`crates/netbench/src/http/head.rs`): bounded, never panics,
//! and only `GET /results.json` (or `/`) is ever answered with the document.
#![no_main]

use benchboot_netbench::http::head::{parse_request, respond, Error};
use benchboot_netbench::http::MAX_REQUEST;
use libfuzzer_sys::fuzz_target;

const BODY: &str = "{\"secret\":\"the results document\"}";

fuzz_target!(|data: &[u8]| {
    let parsed = parse_request(data);
    let response = respond(data, BODY);
    assert!(response.starts_with("HTTP/1.0 "), "{response}");
    let served = response.starts_with("HTTP/1.0 200 ");
    assert_eq!(served, response.ends_with(BODY), "{response}");
    match parsed {
        Ok(r) => {
            assert_eq!(
                served,
                r.method == "GET" && (r.path == "/results.json" || r.path == "/")
            );
            // No `..` segment in the path (a query or fragment may hold anything).
            let path = r.path.split(['?', '#']).next().unwrap_or("");
            assert!(!path.split('/').any(|s| s == ".." || s == "."), "{path}");
        }
        Err(e) => {
            assert!(!served);
            assert!(response.starts_with(&format!("HTTP/1.0 {}", e.status())));
        }
    }
    // The server reads a byte at a time at worst: every prefix is either still
    // incomplete or already decided, and no decision needs more than MAX_REQUEST bytes.
    if data.len() > MAX_REQUEST + 1 {
        assert_ne!(
            parse_request(&data[..MAX_REQUEST + 1]),
            Err(Error::Incomplete)
        );
    }
});
