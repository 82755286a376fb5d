//! The benchboot host tool as a library: fetching results and rendering them.
#![forbid(unsafe_code)]

pub mod atomic_file;
pub mod collect;
pub mod compare;
pub mod console_log;
pub mod context;
pub mod devices;
pub mod discover;
pub mod doc;
pub mod fetch;
pub mod field_test;
pub mod figure;
pub mod flash;
pub mod from_log;
pub mod log;
pub mod memory;
pub mod plan;
pub mod plot;
pub mod prepare_disk;
pub mod probe;
pub mod reference;
pub mod relay;
pub mod render;
pub mod report;
pub mod storage;
pub mod store;
pub mod units;
pub mod wifi_join;
