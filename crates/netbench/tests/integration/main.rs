//! The network engine's integration tests, linked into one test binary: the engine
//! against itself over loopback (`loopback`) and against peers that lie, stall or flood
//! (`hostile_peer`).
#![forbid(unsafe_code)]

mod hostile_peer;
mod loopback;
