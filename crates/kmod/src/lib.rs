//! Kernel modules and the device tree as data, with no I/O: what a module's `.modinfo` section says
//! ([`ModInfo`]), how the kernel's modalias patterns match a device
//! ([`glob_match`]), and the alias table an image carries so that PID 1 can load
//! drivers by modalias the way udev + kmod would ([`AliasTable`]).
//!
//! Used at build time by xtask (resolving and checking a board's module set against
//! its DTB) and at run time by PID 1 (loading the driver of every device that
//! appears: [`autoload`], devices named for a person by [`describe`]), and the driver
//! chain of a device-tree node ([`chain`]: every supply, PHY,
//! clock... a node needs, each proved built in or carried, over a DTB read by [`fdt`]).
//! Sources: `scripts/mod/modpost.c` and `file2alias.c` (what `alias=` lines
//! look like), kmod's `libkmod-config.c` (`softdep` syntax), `modules.alias` as
//! depmod writes it (`alias <pattern> <module>`).

#![forbid(unsafe_code)]

pub mod autoload;
pub mod chain;
pub mod describe;
pub mod fdt;
pub mod glob;
pub mod modinfo;
pub mod table;

pub use autoload::{decide, Decision, Device, Load, Why};
pub use describe::{describe, printable};
pub use glob::glob_match;
pub use modinfo::{canonical, ModInfo, SoftDeps};
pub use table::{AliasTable, TableError};
