//! The benchboot host tool as a library: fetching results and rendering them.

pub mod discover;
pub mod fetch;
pub mod render;
pub mod storage;
