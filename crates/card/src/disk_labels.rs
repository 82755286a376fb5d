//! The filesystem labels of a disk made by `benchboot prepare-disk DEV` (the write-ups'
//! layout of a USB or SATA disk: an MBR with four primary partitions of equal size,
//! 1 MiB aligned, in this order). A plan names a target on such a disk as
//! `LABEL=BBEXT4` and so on; PID 1 finds it by label (firmware/src/blkid.rs), whatever
//! the kernel calls the disk (`sda`, `sdb`).
//!
//! One place for these names: the host's `prepare-disk` formats with them and the plan
//! presets cite them. Every label fits FAT's 11 bytes and ext's 16, in capitals (FAT
//! keeps labels upper case).

/// p1, ext2 (`mke2fs -t ext2`), MBR type 0x83.
pub const EXT2: &str = "BBEXT2";
/// p2, ext3 (`mke2fs -t ext3`), MBR type 0x83.
pub const EXT3: &str = "BBEXT3";
/// p3, ext4 (`mke2fs -t ext4`), MBR type 0x83.
pub const EXT4: &str = "BBEXT4";
/// p4, FAT32 (`mkfs.fat -F 32`), MBR type 0x0c.
pub const VFAT: &str = "BBVFAT";

/// The four labels in partition order, p1 to p4.
pub const ALL: [&str; 4] = [EXT2, EXT3, EXT4, VFAT];

/// The longest FAT volume label, bytes (the boot sector's 11-byte field).
pub const FAT_LABEL_MAX: usize = 11;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_fit_fat_and_ext_and_are_distinct() {
        for l in ALL {
            assert!(l.len() <= FAT_LABEL_MAX, "{l}");
            assert!(
                l.bytes()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit()),
                "{l}"
            );
        }
        let mut sorted = ALL.to_vec();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), 4);
        assert_eq!(ALL, ["BBEXT2", "BBEXT3", "BBEXT4", "BBVFAT"]);
    }
}
