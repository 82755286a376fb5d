//! The presets shipped in `plans/`, built into every benchboot binary so a plan file
//! can say `extends = "quick"` on a board, a host or in a test alike.

/// `(name, text)` of every preset, the default first.
pub const PRESETS: [(&str, &str); 3] = [
    ("standard", include_str!("../../../plans/standard.toml")),
    ("quick", include_str!("../../../plans/quick.toml")),
    ("seeds", include_str!("../../../plans/seeds.toml")),
];

/// The preset a file without `extends` starts from.
pub const DEFAULT_PRESET: &str = "standard";

/// The text of preset `name`, if there is one.
pub fn preset(name: &str) -> Option<&'static str> {
    PRESETS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// The preset file name as the errors and the results name it: `plans/<name>.toml`.
pub fn preset_file(name: &str) -> String {
    format!("plans/{name}.toml")
}
