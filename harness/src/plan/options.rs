//! How a command asks for its trials to be planned: limits, which expectation holds, and
//! what happens to a scenario without one.

use std::time::Duration;

#[derive(Debug, Clone)]
pub struct RunOptions {
    /// How long a CLI may keep running after its last expected result.
    pub grace: Duration,
    /// Per-trial timeout when the scenario sets none.
    pub timeout: Duration,
    /// What to do with a target the scenario has no expectation for.
    pub without_expectation: AsWritten,
    /// Check against the expectation of this version rather than the target's own
    /// (`bisect` asks whether version v already behaves as a later one is expected to).
    pub expect_for: Option<String>,
    /// With `expect_for`: which release's let-through rules (`anywhere`, `every` with
    /// `shape`) keep frames out of the match.
    pub let_through: LetThrough,
    /// A known-divergence entry that matches nothing fails the trial (`--strict`).
    pub strict_known: bool,
    /// What the protocol inventory's findings do to a trial (`--protocol`).
    pub protocol: crate::protocol::check::Policy,
}

/// Whose release-wide let-through rules apply to output held to another release's
/// expectation (`RunOptions::expect_for`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum LetThrough {
    /// Only the rules of the release the output is held to: "would a catalogue written on
    /// that release have caught this output?" (`run --expect-for`).
    #[default]
    HeldTo,
    /// Also the printing release's: frames a release prints in every run say nothing about
    /// where one scenario's behaviour changed (`bisect`'s probes).
    AlsoPrinting,
}

/// Whether a target the scenario has no expectation for runs it as written (an empty
/// expectation).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum AsWritten {
    /// It is not a trial of that target.
    #[default]
    No,
    /// To record the target's first expectation (`record`); features the target lacks
    /// still skip it.
    ToRecord,
    /// For `compare`, which looks at what the CLI does, not at an expectation: also
    /// despite features the target lacks. An explicit `skip` still skips.
    ToCompare,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            grace: Duration::from_secs(3),
            timeout: Duration::from_secs(60),
            without_expectation: AsWritten::No,
            expect_for: None,
            let_through: LetThrough::HeldTo,
            strict_known: false,
            protocol: crate::protocol::check::Policy::Off,
        }
    }
}
