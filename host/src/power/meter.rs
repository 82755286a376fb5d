//! The one trait every power meter the host reads sits behind.

use std::time::Instant;

use benchboot_energy::Sample;

/// A meter the host reads: USB HID, a serial port, an HTTP plug, the QEMU model.
///
/// The transport (a file, a socket, a HID handle) is the implementation's; decoding is
/// `benchboot_energy::decode`'s. Samples are stamped on the host's monotonic clock as
/// seconds since the recording's `origin`, so console lines read on this host
/// (stamped the same way) and the samples share one clock.
pub trait Meter {
    /// How `benchboot power list` and the trace name it, e.g. `rdtech-um25c /dev/rfcomm0`.
    fn name(&self) -> String;
    /// The smallest step of one power reading, W.
    fn resolution_w(&self) -> f64;
    /// The nominal time between samples, s.
    fn period_s(&self) -> f64;
    /// Blocks until the next readings arrive (at most about one second) and returns
    /// them, stamped as seconds since `origin`.
    ///
    /// # Errors
    /// The transport failed or the meter sent what its decoder refuses; the recorder
    /// stops and keeps what it has.
    fn read(&mut self, origin: Instant) -> anyhow::Result<Vec<Sample>>;
    /// True when the power is a model, not a measurement (the QEMU meter): the trace
    /// and every figure from it are marked EMULATED.
    fn emulated(&self) -> bool {
        false
    }
    /// The meter's own energy counter now, J, where it has one.
    fn counter_j(&mut self) -> Option<f64> {
        None
    }
}
