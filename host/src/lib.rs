//! The benchboot host tool as a library: fetching results and rendering them.

pub mod fetch;
pub mod render;
pub mod storage;
