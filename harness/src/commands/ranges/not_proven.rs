//! [`NotProven`]: why `ranges --prove` could not prove a range, as the line
//! `file:line: range: not proven: ...` says it.

use super::proof::Edge;
use crate::boundary::search::Seen;
use crate::divergence::Divergence;

/// Why a range's bounds were not found, or do not hold.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NotProven {
    /// A bound no search reached (the other one failed first).
    #[error("not searched")]
    NotSearched,
    /// The range holds none of the releases the prover searches.
    #[error("no published release searched is in it")]
    NoReleaseIn,
    /// At the window's end, the release inside does not behave as written.
    #[error("{inside} does not behave as written: {}", .seen.describe())]
    InsideDiffers { inside: String, seen: Seen },
    /// The release beyond a bound behaves as written, the one inside does not.
    #[error("{beyond}, beyond the range, behaves as written, {inside} inside it {}", .seen_in.describe())]
    BeyondAsWritten {
        beyond: String,
        inside: String,
        seen_in: Seen,
    },
    /// Neither end of the range behaves as written.
    #[error(
        "no release in the range behaves as written against {beyond}: {inside} {}, {far} {}",
        .seen_in.describe(),
        .seen_far.describe()
    )]
    NoneAsWritten {
        beyond: String,
        inside: String,
        seen_in: Seen,
        far: String,
        seen_far: Seen,
    },
    /// The releases on either side of a bound tell nothing apart (both, neither, not run).
    #[error("{inside} {}; {beyond}, beyond, {}", .seen_in.describe(), .seen_out.describe())]
    Unclear {
        inside: String,
        seen_in: Seen,
        beyond: String,
        seen_out: Seen,
    },
    /// The range reaches past the release beyond it, and the outermost release is unclear.
    #[error(
        "{beyond} behaves as written, past the range; {outermost}, the outermost release searched, {}",
        .seen.describe()
    )]
    PastRange {
        beyond: String,
        outermost: String,
        seen: Seen,
    },
    /// A release the search ran matches neither side.
    #[error("{version} behaves neither as written nor as beyond: {}", .against_new.message)]
    Neither {
        version: String,
        against_new: Box<Divergence>,
    },
    /// A release the search ran matches both sides.
    #[error("{version} matches both expectations: they do not tell its output apart")]
    Both { version: String },
    /// A release the search needed did not run.
    #[error("{version} did not run: {why}")]
    NotRun { version: String, why: String },
    /// Run again, a release on either side of the bound did something else.
    #[error("{version} did something else when run again ({first}, then {again})")]
    Unstable {
        version: String,
        first: String,
        again: String,
    },
    /// The search's two ends do not hold as the prover set them up.
    #[error("{version}: {why}")]
    Precondition { version: String, why: String },
    /// The two sides of the bound get the same expectation: nothing tells them apart.
    #[error("the two sides of the bound get the same expectation")]
    Identical,
    /// The lower bound failed; the upper one holds.
    #[error("{why} (the upper bound holds: {last} behaves as written, {above} does not)")]
    Lower {
        why: Box<NotProven>,
        last: String,
        above: Edge,
    },
    /// The upper bound failed; the lower one holds.
    #[error("{why} (the lower bound holds: {first} behaves as written, {below} does not)")]
    Upper {
        why: Box<NotProven>,
        first: String,
        below: Edge,
    },
    /// Both bounds failed.
    #[error("{0}; {1}")]
    BothBounds(Box<NotProven>, Box<NotProven>),
    /// The lower bound found lies above the upper one.
    #[error(
        "the behaviour changes twice inside the range: it starts at {first} but ends after {last}: it needs two entries"
    )]
    Crossed { first: String, last: String },
    /// A sampled release between the proven bounds does not behave as written.
    #[error(
        "the behaviour changes twice inside the range: {first} and {last} behave as written, {between} between them does not ({}): it needs two blocks or entries",
        .seen.describe()
    )]
    ChangesInside {
        first: String,
        last: String,
        between: String,
        seen: Seen,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each message is the one the `String` reasons it replaced printed, word for word.
    #[test]
    fn messages_read_as_before() {
        let cases = [
            (NotProven::NotSearched, "not searched"),
            (
                NotProven::InsideDiffers {
                    inside: "2.1.3".into(),
                    seen: Seen::Old,
                },
                "2.1.3 does not behave as written: matched the old expectation",
            ),
            (
                NotProven::Lower {
                    why: Box::new(NotProven::NoReleaseIn),
                    last: "2.1.9".into(),
                    above: Edge::Release("2.1.10".into()),
                },
                "no published release searched is in it (the upper bound holds: 2.1.9 behaves as written, 2.1.10 does not)",
            ),
            (
                NotProven::ChangesInside {
                    first: "2.1.74".into(),
                    last: "2.1.332".into(),
                    between: "2.1.105".into(),
                    seen: Seen::Old,
                },
                "the behaviour changes twice inside the range: 2.1.74 and 2.1.332 behave as written, 2.1.105 between them does not (matched the old expectation): it needs two blocks or entries",
            ),
        ];
        for (e, text) in cases {
            assert_eq!(e.to_string(), text);
        }
    }
}
