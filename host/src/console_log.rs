//! A board's console as a log file (a serial capture or a LAVA job log): the reader
//! lives in `benchboot_console::log_file` (where the `console_log` fuzz target reaches
//! it without building the host tool).

pub use benchboot_console::log_file::{parse, parse_results_export, ConsoleLog};
