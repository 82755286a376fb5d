//! The host tool away from its source tree (`cargo install`, a copied binary): it
//! carries the board files, takes a user's own with `--boards DIR`, and checks a plan
//! for a card against the facts the card's image wrote (`image.json`), as PID 1 does.

use std::path::Path;
use std::process::{Command, Output};

use benchboot::plan::{resolve_for_board, write, write_with};
use benchboot_board::Catalog;
use benchboot_image::plans::PlanText;
use benchboot_plan::{CARD_FACTS_FILE, CARD_PLAN_FILE};

fn benchboot(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_benchboot"))
        .args(args)
        .output()
        .expect("benchboot runs")
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The image facts `cargo xtask image` writes for `board`, as JSON.
fn facts(board: &str) -> serde_json::Value {
    let b = benchboot_board::load(&benchboot_board::boards_dir(), board).unwrap();
    let layout = benchboot_image::layout::plan(&Default::default()).unwrap();
    serde_json::to_value(benchboot_image::plans::image_facts(&b, &layout)).unwrap()
}

/// A card's results partition as a folder, holding `facts` (none: an older card).
fn folder_card(facts: Option<&serde_json::Value>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    if let Some(f) = facts {
        std::fs::write(dir.path().join(CARD_FACTS_FILE), f.to_string()).unwrap();
    }
    dir
}

/// The binary copied into a fresh folder, and run there in a user + mount namespace
/// (`unshare -rm`, util-linux) where an empty tmpfs covers the checkout it was built
/// from: the path compiled into it leads nowhere. Fails (never skips) where unprivileged
/// namespaces are not allowed.
#[cfg(target_os = "linux")]
fn run_without_checkout(args: &[&str]) -> (Output, tempfile::TempDir) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .canonicalize()
        .unwrap();
    // Dropped (and removed, with its ~250 MB copy of the binary) by the caller.
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().canonicalize().unwrap();
    assert!(
        !tmp.starts_with(&root),
        "{} is inside the checkout {}: set TMPDIR elsewhere",
        tmp.display(),
        root.display()
    );
    std::fs::copy(env!("CARGO_BIN_EXE_benchboot"), tmp.join("benchboot")).unwrap();
    crate::wait_until_executable(Command::new(tmp.join("benchboot")).arg("--version"));
    let script = r#"root="$1"; here="$2"; shift 2
mount -t tmpfs benchboot-no-checkout "$root" || exit 97
test -e "$root/boards" && exit 98
cd "$here" && exec ./benchboot "$@""#;
    let mut cmd = Command::new("unshare");
    cmd.args(["-rm", "sh", "-c", script, "sh"])
        .arg(&root)
        .arg(&tmp)
        .args(args);
    cmd.env("BENCHBOOT_STORE", tmp.join("store"));
    let o = cmd
        .output()
        .expect("unshare (util-linux) runs: it hides the checkout from the copied binary");
    assert!(
        !matches!(o.status.code(), Some(97 | 98)),
        "could not hide {} in a mount namespace (unprivileged user namespaces \
         allowed?): {}",
        root.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    (o, dir)
}

#[cfg(target_os = "linux")]
#[test]
fn a_copied_binary_checks_plans_with_the_checkout_out_of_reach() {
    // What the binary says inside the checkout is what the copy says without it.
    let args = ["plan", "check", "quick", "--board", "rpi-zero-w"];
    let here = benchboot(&args);
    assert!(here.status.success(), "{:?}", text(&here));
    let (o, dir) = run_without_checkout(&args);
    let tmp = dir.path();
    let (out, err) = text(&o);
    assert!(o.status.success(), "stdout: {out}\nstderr: {err}");
    assert!(
        out.starts_with("plan quick v3 for rpi-zero-w (Raspberry Pi Zero W)\n"),
        "{out}"
    );
    assert_eq!(out, text(&here).0);

    // A card's own facts, from the copy too.
    let card = tmp.join("card");
    std::fs::create_dir(&card).unwrap();
    std::fs::write(card.join(CARD_FACTS_FILE), facts("rpi-4b").to_string()).unwrap();
    let card_arg = card.to_str().unwrap();
    let (o, _) = run_without_checkout(&["plan", "check", "quick", "--card", card_arg]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "stdout: {out}\nstderr: {err}");
    assert!(out.starts_with("plan quick v3 for rpi-4b ("), "{out}");

    // field-test --image: the board file comes from the binary (a dry run writes nothing).
    let img = tmp.join("board.img");
    let mut bytes = vec![0u8; 2 << 20];
    bytes[510..512].copy_from_slice(&[0x55, 0xaa]);
    std::fs::write(&img, bytes).unwrap();
    let card_img = tmp.join("card.img");
    let (o, _) = run_without_checkout(&[
        "field-test",
        "--board",
        "rpi-zero-w",
        "--device",
        card_img.to_str().unwrap(),
        "--image",
        img.to_str().unwrap(),
        "--dry-run",
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "stdout: {out}\nstderr: {err}");
    assert!(
        out.starts_with(&format!(
            "field test of rpi-zero-w (Raspberry Pi Zero W) with the card {}\n",
            card_img.display()
        )),
        "{out}"
    );
    assert!(out.contains("dry run: nothing written"), "{out}");
    assert!(!card_img.exists());

    // An unknown board lists the built-in ones, not an empty list.
    let (o, _) = run_without_checkout(&["plan", "check", "quick", "--board", "rpi-9"]);
    let (_, err) = text(&o);
    assert_eq!(
        err.trim_end(),
        format!(
            "error: --board rpi-9: no board named `rpi-9` among the boards built in; known \
             boards: {}",
            Catalog::builtin_names().join(", ")
        )
    );
    assert!(err.contains("rpi-4b, rpi-zero-2-w, rpi-zero-w"), "{err}");
}

#[test]
fn a_user_s_board_folder_wins_by_name_and_its_errors_name_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let zero_w =
        std::fs::read_to_string(benchboot_board::boards_dir().join("rpi-zero-w.toml")).unwrap();
    let mine = zero_w
        .replacen("name = \"rpi-zero-w\"", "name = \"my-zero\"", 1)
        .replacen("description = \"", "description = \"My own ", 1);
    std::fs::write(dir.path().join("my-zero.toml"), mine).unwrap();
    let boards = dir.path().to_str().unwrap();

    let o = benchboot(&[
        "plan", "check", "quick", "--board", "my-zero", "--boards", boards,
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        out.starts_with("plan quick v3 for my-zero (My own Raspberry Pi Zero W)\n"),
        "{out}"
    );
    // The built-in boards stay available beside the folder's.
    let o = benchboot(&[
        "plan", "check", "quick", "--board", "rpi-4b", "--boards", boards,
    ]);
    assert!(o.status.success(), "{:?}", text(&o));

    // A broken file of the folder, under a built-in board's name: it wins, and is named.
    let mut lines: Vec<&str> = zero_w.lines().collect();
    lines.insert(3, "cpu = = 1");
    let file = dir.path().join("rpi-zero-w.toml");
    std::fs::write(&file, lines.join("\n")).unwrap();
    let o = benchboot(&[
        "plan",
        "check",
        "quick",
        "--board",
        "rpi-zero-w",
        "--boards",
        boards,
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        err.starts_with(&format!(
            "error: --board rpi-zero-w: {}: TOML parse error at line 4, column",
            file.display()
        )),
        "{err}"
    );
    // `--help` says whose file wins.
    let (help, _) = text(&benchboot(&["plan", "check", "--help"]));
    assert!(
        help.contains("A file there wins over the built-in board of the same name"),
        "{help}"
    );
}

#[test]
fn a_card_is_checked_against_its_own_image_facts() {
    // A card whose image (another version's) made only ext2 and ext4 test partitions.
    let mut f = facts("qemu-virt-arm64");
    let card_parts = f["card"].as_array_mut().unwrap();
    card_parts.retain(|t| t["filesystem"] == "ext2" || t["filesystem"] == "ext4");
    assert_eq!(card_parts.len(), 2, "{f}");
    let card = folder_card(Some(&f));
    let vfat = PlanText {
        file: "my.toml".into(),
        text: "extends = \"quick\"\n[storage]\ncard = [\"ext4\", \"vfat\"]\n".into(),
    };
    // The board file's own image has a vfat partition ...
    let b = benchboot_board::load(&benchboot_board::boards_dir(), "qemu-virt-arm64").unwrap();
    resolve_for_board(&b, &vfat).unwrap();
    // ... this card's does not: refused, as its PID 1 would refuse it, and nothing written.
    let e = format!("{:#}", write(card.path(), &vfat).unwrap_err());
    // (The line, `my.toml:3`, is the plan crate's to give.)
    assert!(e.starts_with("my.toml"), "{e}");
    assert!(
        e.contains("storage.card: this image's card has no vfat partition"),
        "{e}"
    );
    assert!(!card.path().join(CARD_PLAN_FILE).exists());
    let ext4 = PlanText {
        file: "my.toml".into(),
        text: "extends = \"quick\"\n[storage]\ncard = [\"ext4\"]\n".into(),
    };
    write(card.path(), &ext4).unwrap();
    // `plan check --card` says the same: the preset names vfat, this card has none.
    let card_arg = card.path().to_str().unwrap();
    let o = benchboot(&["plan", "check", "quick", "--card", card_arg]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.starts_with("error: plans/quick.toml"), "{err}");
    assert!(
        err.contains("storage.card: this image's card has no vfat partition"),
        "{err}"
    );
    let mine = tempfile::tempdir().unwrap();
    let my_toml = mine.path().join("my.toml");
    std::fs::write(&my_toml, &ext4.text).unwrap();
    let o = benchboot(&[
        "plan",
        "check",
        my_toml.to_str().unwrap(),
        "--card",
        card_arg,
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("for qemu-virt-arm64 ("), "{out}");
    assert!(out.contains("(ext4)") && !out.contains("vfat"), "{out}");
    // A --board other than the card's is refused.
    let o = benchboot(&[
        "plan",
        "check",
        "quick",
        "--card",
        card.path().to_str().unwrap(),
        "--board",
        "rpi-4b",
    ]);
    let (_, err) = text(&o);
    assert_eq!(
        err.trim_end(),
        "error: --board rpi-4b: the card's image is for qemu-virt-arm64 (image.json): drop \
         --board"
    );
}

#[test]
fn an_older_card_without_image_facts_is_checked_against_the_board_file_with_a_note() {
    let card = folder_card(None);
    let path = card.path().to_str().unwrap();
    let o = benchboot(&["plan", "write", "--card", path, "quick"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        err.contains("no image.json on the results partition") && err.contains("give --board NAME"),
        "{err}"
    );
    assert!(!card.path().join(CARD_PLAN_FILE).exists());

    let o = benchboot(&[
        "plan", "write", "--card", path, "--board", "rpi-2b", "quick",
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert_eq!(
        err.trim_end(),
        format!(
            "note: {path} has no image.json (an older card): checked against the board file \
             of rpi-2b from the boards built in, not the card's own image"
        )
    );
    assert!(out.starts_with("wrote plans/quick.toml to "), "{out}");
    assert_eq!(
        std::fs::read_to_string(card.path().join(CARD_PLAN_FILE)).unwrap(),
        PlanText::from_arg("quick").unwrap().text
    );
    // The library call says the same.
    let said = write_with(
        card.path(),
        &PlanText::from_arg("seeds").unwrap(),
        Some("rpi-2b"),
        &Catalog::builtin(),
    )
    .unwrap();
    assert!(said.contains("(rpi-2b)"), "{said}");
}

#[test]
fn oversized_or_damaged_card_facts_are_refused_with_the_file() {
    let card = folder_card(None);
    let facts_file = card.path().join(CARD_FACTS_FILE);
    std::fs::write(&facts_file, "{\n  \"board\": 7\n}\n").unwrap();
    let e = format!(
        "{:#}",
        write(card.path(), &PlanText::standard()).unwrap_err()
    );
    assert!(
        e.starts_with(&format!(
            "{}: image.json line 2: damaged",
            card.path().display()
        )),
        "{e}"
    );
    let big = vec![b' '; 2 * 1024 * 1024];
    std::fs::write(&facts_file, big).unwrap();
    let e = format!(
        "{:#}",
        write(card.path(), &PlanText::standard()).unwrap_err()
    );
    assert_eq!(
        e,
        format!(
            "{}: image.json is over 1048576 bytes: no image's facts; rebuild the card (cargo \
             xtask image)",
            card.path().display()
        )
    );
    assert!(!card.path().join(CARD_PLAN_FILE).exists());
}
