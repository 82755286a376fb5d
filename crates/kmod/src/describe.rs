//! A device's modalias phrased for a person, and text from devices made safe to print.
//!
//! A modalias is what a device's `modalias` file in sysfs holds; the kernel writes it
//! from the device's own descriptors, so a USB device can put anything there a string
//! descriptor can hold. Nothing read from a device reaches a terminal unescaped
//! ([`printable`]). Formats, as the kernel prints them:
//! - USB interface: `usb:v%04Xp%04Xd%04Xdc%02Xdsc%02Xdp%02Xic%02Xisc%02Xip%02Xin%02X`
//!   (drivers/usb/core/sysfs.c, `modalias_show` of an interface);
//! - device tree: `of:N<name>T<type>C<compatible>C<compatible>...` (drivers/of/device.c
//!   `of_modalias`; the type is `(null)` when the node has no `device_type`);
//! - PCI: `pci:v%08Xd%08Xsv%08Xsd%08Xbc%02Xsc%02Xi%02X` (drivers/pci/pci-sysfs.c);
//! - SDIO: `sdio:c%02Xv%04Xd%04X` (drivers/mmc/core/sdio_bus.c);
//! - SCSI: `scsi:t-0x%02x`, the peripheral device type (drivers/scsi/scsi_sysfs.c);
//! - virtio: `virtio:d%08Xv%08X` (drivers/virtio/virtio.c).

/// `s` with every control character (C0, DEL, C1) written as `\xNN` or `\u{NNNN}` and
/// `\` as `\\`, so a terminal shows it and obeys none of it.
pub fn printable(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            c if c.is_control() && (c as u32) < 0x100 => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_control() => out.push_str(&format!("\\u{{{:04x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// The name of a USB class code (the base class of an interface or device), from
/// USB-IF's "Defined Class Codes" and include/uapi/linux/usb/ch9.h `USB_CLASS_*`.
pub fn usb_class_name(class: u8) -> Option<&'static str> {
    Some(match class {
        0x01 => "audio",
        0x02 => "communications",
        0x03 => "HID",
        0x05 => "physical",
        0x06 => "image",
        0x07 => "printer",
        0x08 => "mass storage",
        0x09 => "hub",
        0x0a => "CDC data",
        0x0b => "smart card",
        0x0d => "content security",
        0x0e => "video",
        0x0f => "personal healthcare",
        0x10 => "audio/video",
        0x11 => "billboard",
        0xdc => "diagnostic",
        0xe0 => "wireless controller",
        0xef => "miscellaneous",
        0xfe => "application specific",
        0xff => "vendor specific",
        _ => return None,
    })
}

/// The hex field of `s` that follows `key` at its start: `len` digits, lower case.
fn hex_field<'a>(s: &'a str, key: &str, len: usize) -> Option<(String, &'a str)> {
    let rest = s.strip_prefix(key)?;
    let digits = rest.get(..len)?;
    digits
        .chars()
        .all(|c| c.is_ascii_hexdigit())
        .then(|| (digits.to_ascii_lowercase(), &rest[len..]))
}

/// A USB interface modalias as `USB 0bda:8153 (interface class ff, vendor specific)`.
fn usb(m: &str) -> Option<String> {
    let (vendor, rest) = hex_field(m, "usb:v", 4)?;
    let (product, rest) = hex_field(rest, "p", 4)?;
    let at = rest.find("ic")?;
    let (class, _) = hex_field(&rest[at..], "ic", 2)?;
    let name = u8::from_str_radix(&class, 16)
        .ok()
        .and_then(usb_class_name)
        .map_or(String::new(), |n| format!(", {n}"));
    Some(format!(
        "USB {vendor}:{product} (interface class {class}{name})"
    ))
}

/// A PCI modalias as `PCI 10ec:8168 (class 02:00)`.
fn pci(m: &str) -> Option<String> {
    let (vendor, rest) = hex_field(m, "pci:v", 8)?;
    let (device, rest) = hex_field(rest, "d", 8)?;
    let at = rest.find("bc")?;
    let (class, rest) = hex_field(&rest[at..], "bc", 2)?;
    let (sub, _) = hex_field(rest, "sc", 2)?;
    Some(format!(
        "PCI {}:{} (class {class}:{sub})",
        &vendor[4..],
        &device[4..]
    ))
}

/// An SDIO function's modalias as `SDIO 02d0:a9a6 (class 00)`.
fn sdio(m: &str) -> Option<String> {
    let (class, rest) = hex_field(m, "sdio:c", 2)?;
    let (vendor, rest) = hex_field(rest, "v", 4)?;
    let (device, _) = hex_field(rest, "d", 4)?;
    Some(format!("SDIO {vendor}:{device} (class {class})"))
}

/// SCSI peripheral device types (include/scsi/scsi_proto.h `TYPE_*`).
fn scsi_type_name(t: u8) -> Option<&'static str> {
    Some(match t {
        0x00 => "disk",
        0x01 => "tape",
        0x02 => "printer",
        0x03 => "processor",
        0x04 => "write-once",
        0x05 => "CD/DVD",
        0x07 => "optical memory",
        0x08 => "medium changer",
        0x0c => "RAID controller",
        0x0d => "enclosure",
        0x0e => "simplified direct-access disk",
        0x11 => "object storage",
        0x14 => "host-managed zoned disk",
        0x1e => "well-known LUN",
        _ => return None,
    })
}

/// A SCSI modalias as `SCSI device type 0x05 (CD/DVD)`.
fn scsi(m: &str) -> Option<String> {
    let (t, rest) = hex_field(m, "scsi:t-0x", 2)?;
    if !rest.is_empty() {
        return None;
    }
    let name = u8::from_str_radix(&t, 16)
        .ok()
        .and_then(scsi_type_name)
        .map_or(String::new(), |n| format!(" ({n})"));
    Some(format!("SCSI device type 0x{t}{name}"))
}

/// Virtio device IDs (include/uapi/linux/virtio_ids.h `VIRTIO_ID_*`).
fn virtio_name(id: u32) -> Option<&'static str> {
    Some(match id {
        1 => "network",
        2 => "block",
        3 => "console",
        4 => "entropy",
        5 => "balloon",
        8 => "SCSI",
        9 => "9P transport",
        16 => "GPU",
        18 => "input",
        19 => "vsock",
        26 => "file system",
        _ => return None,
    })
}

/// A virtio modalias as `virtio device 4 (entropy)`.
fn virtio(m: &str) -> Option<String> {
    let (d, rest) = hex_field(m, "virtio:d", 8)?;
    hex_field(rest, "v", 8)?;
    let id = u32::from_str_radix(&d, 16).ok()?;
    let name = virtio_name(id).map_or(String::new(), |n| format!(" ({n})"));
    Some(format!("virtio device {id}{name}"))
}

/// A device-tree modalias as `OF brcm,bcm2711-genet-v5 (node ethernet)`: the node's
/// most specific compatible and its name.
fn of(m: &str) -> Option<String> {
    let rest = m.strip_prefix("of:N")?;
    let t = rest.find('T')?;
    let name = &rest[..t];
    let c = rest[t..].find('C')?;
    let compatible = rest[t + c + 1..].split('C').next().unwrap_or("");
    // A compatible with a capital C in it is cut there; the name says which node.
    (!compatible.is_empty())
        .then(|| format!("OF {} (node {})", printable(compatible), printable(name)))
}

/// `modalias` for a person: USB, PCI and SDIO by vendor:product and class, device-tree
/// devices by compatible, SCSI devices by type, virtio devices by ID, anything else as it is, with control characters escaped
/// ([`printable`]).
pub fn describe(modalias: &str) -> String {
    let m = modalias.trim();
    let decoded = match m.split(':').next() {
        Some("usb") => usb(m),
        Some("pci") => pci(m),
        Some("sdio") => sdio(m),
        Some("of") => of(m),
        Some("scsi") => scsi(m),
        Some("virtio") => virtio(m),
        _ => None,
    };
    decoded.unwrap_or_else(|| printable(m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usb_interfaces_by_vendor_product_and_class() {
        // RTL8153 USB 3 Ethernet adapter, vendor-specific interface (no r8152 here).
        assert_eq!(
            describe("usb:v0BDAp8153d3100dc00dsc00dp00icFFisc00ip00in00\n"),
            "USB 0bda:8153 (interface class ff, vendor specific)"
        );
        // A SanDisk stick's bulk-only mass-storage interface.
        assert_eq!(
            describe("usb:v0781p5581d0100dc00dsc00dp00ic08isc06ip50in00"),
            "USB 0781:5581 (interface class 08, mass storage)"
        );
        assert_eq!(
            describe("usb:v1234p5678d0000dc00dsc00dp00ic42isc00ip00in00"),
            "USB 1234:5678 (interface class 42)"
        );
    }

    #[test]
    fn pci_sdio_and_device_tree() {
        assert_eq!(
            describe("pci:v000010ECd00008168sv00001043sd00008432bc02sc00i00"),
            "PCI 10ec:8168 (class 02:00)"
        );
        assert_eq!(describe("sdio:c00v02D0dA9A6"), "SDIO 02d0:a9a6 (class 00)");
        assert_eq!(
            describe("of:NethernetT(null)Cbrcm,bcm2711-genet-v5Cbrcm,genet-v5"),
            "OF brcm,bcm2711-genet-v5 (node ethernet)"
        );
    }

    #[test]
    fn others_raw_and_control_characters_escaped() {
        assert_eq!(describe("scsi:t-0x05"), "SCSI device type 0x05 (CD/DVD)");
        assert_eq!(describe("scsi:t-0x1f"), "SCSI device type 0x1f");
        assert_eq!(describe("scsi:t-0x00x"), "scsi:t-0x00x");
        assert_eq!(
            describe("virtio:d00000004v00001AF4"),
            "virtio device 4 (entropy)"
        );
        assert_eq!(
            describe("hid:b0003g0001v0000046Dp0000C52B"),
            "hid:b0003g0001v0000046Dp0000C52B"
        );
        assert_eq!(
            describe("cpu:type:aarch64:feature:,0000"),
            "cpu:type:aarch64:feature:,0000"
        );
        // Malformed USB: shown raw, escape sequences made harmless.
        assert_eq!(describe("usb:vZZZZ\x1b[2J\x07"), "usb:vZZZZ\\x1b[2J\\x07");
        assert_eq!(
            describe("of:Nx\x1bT(null)Cacme,\u{9b}31m"),
            "OF acme,\\x9b31m (node x\\x1b)"
        );
        assert_eq!(printable("a\\b\u{7f}\u{2028}é"), "a\\\\b\\x7f\u{2028}é");
        assert_eq!(printable("\u{85}"), "\\x85");
    }
}
