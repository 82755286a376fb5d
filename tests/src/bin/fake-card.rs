//! `fake-card SIZE MODEL`: mounts a fake card ([`benchboot_tests::fake_card`]) claiming
//! SIZE bytes that behaves as MODEL (`wrap=BYTES`, `drop=BYTES`, `eio=BYTES`,
//! `paced=WRITE,READ` in bytes/s: [`Model::parse`]), attaches a loop device over it,
//! prints the device's path as one line on stdout, and holds it until its stdin closes
//! or it gets SIGINT; then it detaches the loop device and unmounts the filesystem.
//! Needs root, /dev/fuse and losetup.
//!
//! `cargo xtask bench card` runs it (xtask cannot link this crate, which depends on
//! xtask): `cargo run -p benchboot-tests --bin fake-card -- 268435456 wrap=16777216`.
//! A SIGTERM or SIGKILL leaves the loop device attached and the mount dead
//! (`losetup -d`, `umount` clear them): close its stdin instead.
#![forbid(unsafe_code)]

use std::io::{Read, Write};
use std::sync::mpsc;

use anyhow::{bail, Context, Result};
use benchboot_tests::fake_card::{fake, Model};

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [size, model] = args.as_slice() else {
        bail!("usage: fake-card SIZE MODEL (SIZE in bytes; MODEL wrap=BYTES, drop=BYTES, eio=BYTES or paced=WRITE,READ in bytes/s)");
    };
    let size: u64 = size
        .parse()
        .with_context(|| format!("SIZE {size:?} is not a whole number of bytes"))?;
    let card = fake(size, Model::parse(model)?)?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", card.dev.0.display())?;
    out.flush()?;
    drop(out);

    let (done, wait) = mpsc::channel();
    let on_signal = done.clone();
    ctrlc::set_handler(move || {
        let _ = on_signal.send(());
    })
    .context("setting the SIGINT handler")?;
    std::thread::spawn(move || {
        let mut sink = Vec::new();
        let _ = std::io::stdin().read_to_end(&mut sink);
        let _ = done.send(());
    });
    let _ = wait.recv();
    drop(card);
    Ok(())
}
