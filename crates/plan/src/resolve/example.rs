//! [`ImageFacts::example`].

use super::ImageFacts;
use crate::{Bus, StorageTarget};

impl ImageFacts {
    /// The facts of a Pi Zero W image: its card's test partitions `mmcblk0p5`..`p9`
    /// (ext2, ext3, ext4, vfat, raw, labelled by filesystem), boot disk `mmcblk0`,
    /// a disk signature, USB disks, its CYW43438 radio (2.4 GHz, 20 MHz); no Ethernet.
    /// For tests, fuzz targets and examples, beside [`Plan::example`].
    pub fn example() -> ImageFacts {
        use crate::Filesystem;
        let card = [
            Filesystem::Ext2,
            Filesystem::Ext3,
            Filesystem::Ext4,
            Filesystem::Vfat,
            Filesystem::Raw,
        ]
        .iter()
        .enumerate()
        .map(|(i, fs)| StorageTarget {
            label: fs.name().into(),
            device: format!("/dev/mmcblk0p{}", i + 5),
            filesystem: *fs,
            optional: false,
        })
        .collect();
        ImageFacts {
            board: "rpi-zero-w".into(),
            card,
            boot_disk: "mmcblk0".into(),
            disk_signature: 0x1a2b_3c4d,
            buses: vec![Bus::Usb],
            ethernet: None,
            usb_ethernet: None,
            wifi: Some(crate::WifiFacts {
                chip: "CYW43438".into(),
                bands: vec![crate::WifiBand::Ghz2],
                widths_mhz: vec![20],
                firmware_missing: None,
            }),
        }
    }
}
