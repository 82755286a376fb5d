//! The benchboot PID 1: boots straight into the benchmark plan.
//!
//! A panic must not reach the kernel ("Attempted to kill init!"): the hook hands it to
//! [`benchboot_firmware::init::on_panic`], which records it, serves the results as they
//! stood and never returns, so the abort that follows a panic never comes.
#![forbid(unsafe_code)]

fn main() {
    std::panic::set_hook(Box::new(|info| {
        benchboot_firmware::init::on_panic(&info.to_string().replace('\n', " "))
    }));
    if std::process::id() != 1 {
        benchboot_firmware::console::say(
            "benchboot-init must run as PID 1 (the kernel's init); to measure on a host use `benchboot`",
        );
        std::process::exit(2);
    }
    benchboot_firmware::init::run()
}
