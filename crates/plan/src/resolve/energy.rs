//! `[energy]` on an image: the plan file's keys over the base plan's energy marks.

use toml::Spanned;

use crate::EnergyPlan;

/// `[energy]` over the base plan's energy marks, or over the hardware or QEMU defaults
/// ([`EnergyPlan::HARDWARE`], [`EnergyPlan::QEMU`]) when the base plan has none.
pub(crate) fn energy(
    e: Option<&crate::file::EnergySection>,
    own: Option<&crate::file::EnergySection>,
    base: &EnergyPlan,
    emulated: bool,
) -> Result<EnergyPlan, super::Refusal> {
    let mut p = match (base.is_off(), emulated) {
        (false, _) => base.clone(),
        (true, true) => EnergyPlan::QEMU,
        (true, false) => EnergyPlan::HARDWARE,
    };
    let Some(e) = e else { return Ok(p) };
    if let Some(s) = &e.sensor {
        let text = s.get_ref();
        p.sensor = if text.is_empty() {
            None
        } else {
            let span = own.and_then(|o| o.sensor.as_ref()).map(Spanned::span);
            let sensor = crate::energy::Sensor::parse(text).map_err(|m| ("sensor", span, m))?;
            Some(sensor.to_string())
        };
    }
    if let Some(v) = e.idle {
        p.idle_ms = v.0;
    }
    if let Some(v) = e.sync {
        p.sync = v;
    }
    if let Some(v) = e.sync_slot {
        p.slot_ms = v.0;
    }
    Ok(p)
}
