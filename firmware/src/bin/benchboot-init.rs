//! The benchboot PID 1: boots straight into the benchmark plan.
//!
//! A panic must not reach the kernel ("Attempted to kill init!"): the hook reports it on
//! the console and parks PID 1 forever instead of letting it abort.

fn main() {
    std::panic::set_hook(Box::new(|info| {
        benchboot_firmware::console::say(&format!("PID 1 panicked: {info}; parked, not exiting"));
        benchboot_firmware::init::idle_forever();
    }));
    if std::process::id() != 1 {
        benchboot_firmware::console::say(
            "benchboot-init must run as PID 1 (the kernel's init); to measure on a host use `benchboot`",
        );
        std::process::exit(2);
    }
    benchboot_firmware::init::run()
}
