//! The benchboot host tool as a library: fetching results and rendering them.
#![forbid(unsafe_code)]

pub mod atomic_file;
pub mod chart;
pub mod collect;
pub mod compare;
pub mod console_log;
pub mod context;
pub mod devices;
pub mod discover;
pub mod doc;
pub mod fetch;
#[cfg(unix)]
pub mod field_test;
pub mod figure;
pub mod flash;
pub mod from_log;
pub mod got;
pub mod headline;
pub mod host_run;
pub mod html;
pub mod http_get;
#[cfg(unix)]
pub mod identity;
pub mod log;
#[cfg(unix)]
pub mod memory;
pub mod out;
pub mod plan;
pub mod plot;
pub mod point_to_point;
pub mod power;
#[cfg(unix)]
pub mod prepare_disk;
pub mod probe;
pub mod reference;
#[cfg(unix)]
pub mod relay;
pub mod render;
pub mod report;
pub mod results_file;
pub mod runs_page;
#[cfg(unix)]
pub mod storage;
pub mod store;
pub mod target_disk;
pub mod units;
pub mod whole_card;
pub mod wifi_join;
