//! f3 8.0's output as Debian's f3 8.0-2 prints it on this machine, parsed.

use super::*;

const WRITE: &str = "F3 write 8.0\nCopyright (C) 2010 Digirati Internet LTDA.\n\
This is free software; see the source for copying conditions.\n\nFree space: 271.10 MB\n\
Creating file 1.h2w ... OK!\nFree space: 4.10 MB\nAverage writing speed: 386.12 MB/s\n";

const READ: &str = concat!(
    "F3 read 8.0\n",
    "Copyright (C) 2010 Digirati Internet LTDA.\n",
    "This is free software; see the source for copying conditions.\n",
    "\n",
    "                  SECTORS      ok/corrupted/changed/overwritten\n",
    "Validating file 1.h2w ...  546816/        0/      0/      0\n",
    "\n",
    "  Data OK: 267.00 MB (546816 sectors)\n",
    "Data LOST: 0.00 Byte (0 sectors)\n",
    "\t       Corrupted: 0.00 Byte (0 sectors)\n",
    "\tSlightly changed: 0.00 Byte (0 sectors)\n",
    "\t     Overwritten: 0.00 Byte (0 sectors)\n",
    "Average reading speed: 393.85 MB/s\n",
);

#[test]
fn f3_units_are_powers_of_1024() {
    assert_eq!(parse_size("2", "MB"), Some(2.0 * 1048576.0));
    assert_eq!(parse_size("1.5", "GB"), Some(1.5 * 1073741824.0));
    assert_eq!(parse_size("7", "Byte"), Some(7.0));
    assert_eq!(parse_size("7", "MiB"), None);
    assert_eq!(parse_speed(WRITE, "writing"), Some(386.12 * 1048576.0));
    assert_eq!(parse_speed(READ, "reading"), Some(393.85 * 1048576.0));
    assert_eq!(parse_speed(WRITE, "reading"), None);
    assert_eq!(
        parse_speed("Writing speed not available\n", "writing"),
        None
    );
}

#[test]
fn f3read_counts_sectors_and_warnings() {
    let f = parse_read(READ).unwrap();
    assert_eq!((f.ok, f.lost), (546816, 0));
    assert!(f.good());
    let bad = READ.replace(
        "Data LOST: 0.00 Byte (0 sectors)",
        "Data LOST: 16.00 MB (32768 sectors)",
    ) + "WARNING: Not all data was read due to I/O error(s)\n";
    let f = parse_read(&bad).unwrap();
    assert_eq!(f.lost, 32768);
    assert!(f.io_errors && !f.good());
    // Nothing read at all is no verdict of a good card.
    let none = READ.replace("(546816 sectors)", "(0 sectors)");
    assert!(!parse_read(&none).unwrap().good());
    assert_eq!(parse_read(WRITE), None);
    assert!(summary_block(READ).starts_with("  Data OK: 267.00 MB"));
    assert!(summary_block(READ).ends_with("393.85 MB/s"));
}
