//! The card probe's integration tests, linked into one test binary: the quick probe over
//! fake devices that lie about their size (`fakes`) and the whole-card pass over a fake
//! device on a fake clock (`full`).
#![forbid(unsafe_code)]

mod fakes;
mod full;
mod slc;
