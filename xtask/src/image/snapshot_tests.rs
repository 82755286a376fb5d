//! Snapshot tests (insta) of what `cargo xtask image` generates for every board file in
//! `boards/` (and the QEMU-only copy of a card its QEMU machine boots): the loader's
//! configuration (`config.txt` or `extlinux/extlinux.conf`), `cmdline.txt`, and the
//! card's layout (MBR disk signature, raw loader blobs, start,
//! size, type and label of every partition). The snapshots are in `snapshots/`; a
//! changed, missing or extra line fails (`cargo insta review`, or `INSTA_UPDATE=always`
//! and a look at the diff, accepts a wanted change). Each file's snapshot ends with an
//! `<end of file: N bytes>` line, so a blank line added at the end fails too (insta
//! ignores trailing newlines).

use benchboot_board::Board;
use benchboot_image::layout::{self, Layout, Role};

use super::{cmdline_txt, loader_config, volume_label};

/// Every board file, loaded (`boards/*.toml` but `shared.toml` and the lock), as
/// (snapshot name, board); a board whose QEMU machine boots its card
/// (`qemu.boot = "card"`) also as the QEMU-only copy of that card
/// ([`crate::qemu::card_stand_in`], named `<board>__qemu-card`).
fn boards() -> Vec<(String, Board)> {
    let boards = crate::boards::all().unwrap();
    assert!(boards.len() >= 10, "{} board files", boards.len());
    let mut out = Vec::new();
    for board in boards {
        if board
            .qemu
            .as_ref()
            .is_some_and(|q| q.boot == benchboot_board::QemuBoot::Card)
        {
            let stand_in = crate::qemu::card_stand_in(&board).unwrap();
            out.push((format!("{}__qemu-card", board.name), stand_in));
        }
        out.push((board.name.clone(), board));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// `text` as a snapshot shows it: verbatim, then its length on a line of its own.
fn with_end(text: &str) -> String {
    format!("{text}<end of file: {} bytes>", text.len())
}

/// The partition table as fdisk would list it, by partition number, with the labels
/// `render` writes, after the disk's size and signature and the loader's raw blobs.
fn layout_text(board: &Board, l: &Layout) -> String {
    let mib = |sectors: u64| (sectors * layout::SECTOR) >> 20;
    let mut s = format!(
        "disk: {} bytes ({} MiB), MBR disk signature {:#010x}\n",
        l.disk_bytes,
        l.disk_bytes >> 20,
        layout::disk_signature(&board.name, l)
    );
    let blobs = board.loader.as_ref().map_or(&[][..], |l| &l.raw[..]);
    if blobs.is_empty() {
        s.push_str("raw blobs: none\n");
    }
    for b in blobs {
        s.push_str(&format!("raw blob: {} at byte {}\n", b.file, b.offset));
    }
    s.push_str(&format!(
        "{:<4} {:>10} {:>10} {:>9} {:>8} {:<4} {:<12} {}\n",
        "part", "start LBA", "sectors", "start MiB", "size MiB", "type", "role", "label"
    ));
    let mut rows: Vec<(u8, u32, u32, u8, String, &str)> = l
        .parts
        .iter()
        .map(|p| {
            let role = match p.role {
                Role::Boot => "boot".to_owned(),
                Role::Results => "results".to_owned(),
                Role::Journal => "journal".to_owned(),
                Role::Test(fs) => format!("test {}", fs.name()),
            };
            let label = volume_label(p.role).unwrap_or("-");
            (p.number, p.start_lba, p.sectors, p.mbr_type, role, label)
        })
        .collect();
    rows.push((
        3,
        l.extended.0,
        l.extended.1,
        layout::TYPE_EXTENDED_LBA,
        "extended".to_owned(),
        "-",
    ));
    rows.sort_by_key(|r| r.0);
    for (number, start, sectors, mbr_type, role, label) in rows {
        s.push_str(&format!(
            "{:<4} {start:>10} {sectors:>10} {:>9} {:>8} {mbr_type:#04x} {role:<12} {label}\n",
            format!("p{number}"),
            mib(u64::from(start)),
            mib(u64::from(sectors)),
        ));
    }
    for (i, (ebr, len)) in l.slots.iter().enumerate() {
        s.push_str(&format!(
            "EBR of p{} at LBA {ebr}, slot of {len} sectors\n",
            i + 5
        ));
    }
    s
}

#[test]
fn every_boards_loader_config_as_generated() {
    let mut which = String::new();
    for (name, board) in boards() {
        let config = loader_config(&board);
        which.push_str(&format!(
            "{name}: {}\n",
            config.as_ref().map_or("no loader on the card", |c| c.0)
        ));
        if let Some((path, text)) = config {
            let file = path.rsplit('/').next().unwrap();
            insta::assert_snapshot!(format!("{name}__{file}"), with_end(&text));
        }
    }
    // Which boards' loaders write which file (so a board that loses its loader fails).
    insta::assert_snapshot!("loader_config_per_board", which);
}

#[test]
fn every_boards_cmdline_txt_as_generated() {
    for (name, board) in boards() {
        let text = cmdline_txt(&board);
        insta::assert_snapshot!(format!("{name}__cmdline.txt"), with_end(&text));
    }
}

#[test]
fn every_boards_card_layout() {
    let l = layout::plan(&layout::Spec::default()).unwrap();
    // The QEMU-only copy of a card has the board's name, so the board's layout.
    for (_, board) in boards().into_iter().filter(|(n, _)| !n.contains("__")) {
        insta::assert_snapshot!(format!("{}__layout", board.name), layout_text(&board, &l));
    }
}

#[test]
fn a_snapshot_shows_a_blank_line_added_at_the_end() {
    // insta trims trailing newlines before comparing; the end line keeps them.
    assert_ne!(with_end("a=1\n"), with_end("a=1\n\n"));
    assert!(with_end("a=1\n").ends_with("a=1\n<end of file: 4 bytes>"));
}
