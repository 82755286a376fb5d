//! What runs on the board: the PID 1 init ([`init`]) and its steps.
//!
//! The storage engine is the `benchboot-storage` crate, the network engine
//! `benchboot-netbench`: plain Rust over small traits, unit-tested on the host. Syscalls
//! that need `unsafe` live in [`sys`]: the crate denies `unsafe_code` and allows it on
//! two `mod` lines only, `sys` and [`log`] (whose `unsafe impl` of defmt's `Logger` has
//! no unsafe operation, saying why). Forking is `sys`'s too: an `unsafe fn fork` with
//! its contract, kept by the one safe `spawn_child` the worker and the namespace
//! children use.
//!
//! Modules call downwards only, from [`init`] over the steps ([`steps`], [`commands`], [`network`],
//! [`faults`], the energy marks of [`energy`]) and their helpers to [`wait`] and [`worker`], then [`console`],
//! [`heart`] and [`sys`] at the bottom. The network steps ([`network`], [`wired`], [`wifi`])
//! import none of each other: what they share is [`netkit`], below all three.

#![deny(unsafe_code)]

pub mod blkid;
pub mod boot_card;
pub mod card_check;
pub mod card_plan;
pub mod census;
pub mod commands;
pub mod console;
pub mod device;
pub mod energy;
pub mod faults;
pub mod gadget;
pub mod health;
pub mod heart;
pub mod http;
pub mod init;
pub mod interrupts;
pub mod journal;
pub mod link;
#[allow(unsafe_code)]
pub mod log;
pub mod mailbox;
pub mod memory;
pub mod modalias;
pub mod netkit;
pub mod netlink;
pub mod network;
pub mod onboard;
pub mod radio;
pub mod steps;
#[allow(unsafe_code)]
pub mod sys;
pub mod target_guard;
#[cfg(test)]
mod test_loop;
pub mod wait;
pub mod watchdog;
pub mod wifi;
pub mod wired;
pub mod worker;
