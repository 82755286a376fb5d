//! Where a power meter sits, and what it measures there: the words `power record
//! --position` stores in a trace, the report prints beside the energy figures and the
//! field-test guide tells the person (one source for all three).

/// Where a meter sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Position {
    /// Between the supply and the board's power input (a USB-C or micro-USB meter in
    /// the board's cable, a shunt in its DC lead): the board alone.
    Board,
    /// At the wall (a smart plug, a plug-in meter): the board and its supply's losses.
    Wall,
}

impl Position {
    /// The trace's words: `between supply and board`, `at the wall`.
    pub fn words(self) -> &'static str {
        match self {
            Position::Board => "between supply and board",
            Position::Wall => "at the wall",
        }
    }

    /// The position whose [`Position::words`] `words` are, if any.
    pub fn of_words(words: &str) -> Option<Position> {
        [Position::Board, Position::Wall]
            .into_iter()
            .find(|p| p.words() == words)
    }

    /// What a meter there measures, one sentence.
    pub fn measures(self) -> &'static str {
        match self {
            Position::Board => {
                "a meter between the supply and the board's power input (a USB meter in the \
                 board's cable) measures the board alone"
            }
            Position::Wall => {
                "a meter at the wall measures the board and its supply's losses too (a \
                 supply's efficiency varies with load, so figures there are higher, more so at \
                 low load)"
            }
        }
    }
}

/// The report's line on the meter's position for a trace's `position` words: what a
/// meter there measures, or the words as given (raw text from a trace: the report's
/// rendering escapes it) when they are none of [`Position`]'s; `None` when the trace
/// does not say.
pub fn line(position: Option<&str>) -> String {
    match position {
        Some(w) => match Position::of_words(w) {
            Some(p) => format!("meter position: {w}: {}", p.measures()),
            None => format!(
                "meter position: {w} (a meter between the supply and the board measures the \
                 board alone; one at the wall measures the supply's losses too)"
            ),
        },
        None => "meter position: not recorded (`power record --position board|wall`): a meter \
                 between the supply and the board measures the board alone; one at the wall \
                 measures the supply's losses too"
            .into(),
    }
}

/// The field-test guide's paragraph on measuring energy: where the meter goes and what
/// each position measures, with the commands.
pub fn guide_paragraph() -> String {
    format!(
        "Energy (optional): put a power meter between the supply and the board's power input \
         (a USB-C or micro-USB meter in the board's power cable); {}. A plug at the wall works \
         too, but {}. Start it before powering the board:\n  benchboot power record --meter \
         SPEC --out trace.json --position board   (`benchboot power list` names the meters)\n\
         and once the run is collected, attach the trace:\n  benchboot power import RUN \
         trace.json\n",
        Position::Board.measures(),
        Position::Wall.measures()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_words_read_back_and_say_what_is_measured() {
        for p in [Position::Board, Position::Wall] {
            assert_eq!(Position::of_words(p.words()), Some(p));
        }
        assert_eq!(
            line(Some("at the wall")),
            "meter position: at the wall: a meter at the wall measures the board and its \
             supply's losses too (a supply's efficiency varies with load, so figures there are \
             higher, more so at low load)"
        );
        assert!(line(Some("on the bench")).starts_with("meter position: on the bench (a meter"));
        assert!(line(None).starts_with("meter position: not recorded"));
    }
}
