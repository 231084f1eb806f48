//! How a CLI's process ended, as data: what the runner observes, saved results keep and
//! reports print. A leaf: the process driver lives in `process.rs`.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// How the process ended.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Exit {
    pub code: Option<i32>,
    pub signal: Option<i32>,
    /// Written as `killed`: `null` when it ended by itself, else the reason the
    /// harness killed it (`"timeout"`, `"grace"`, `"stdout-open"`).
    #[serde(rename = "killed", default, with = "killed")]
    pub termination: Termination,
}

/// Whether the process ended by itself or the harness killed it, and why.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Termination {
    /// It ended by itself: with an exit code, or by a signal the harness did not send.
    #[default]
    Exited,
    /// Killed at the trial's timeout.
    Timeout,
    /// Killed because it did not exit within the grace period after its last result.
    HungAfterResult,
    /// It exited, but a process it started kept its stdout open past the grace period.
    StdoutHeldOpen,
    /// Killed because a control request the client sent got no answer within the
    /// expectation's `answer_within`.
    Unanswered,
}

impl Termination {
    const KILLS: [Termination; 4] = [
        Termination::Timeout,
        Termination::HungAfterResult,
        Termination::StdoutHeldOpen,
        Termination::Unanswered,
    ];

    /// Whether the harness killed the process.
    pub fn by_harness(self) -> bool {
        self != Termination::Exited
    }

    fn name(self) -> &'static str {
        match self {
            Termination::Exited => "exited",
            Termination::Timeout => "timeout",
            Termination::HungAfterResult => "grace",
            Termination::StdoutHeldOpen => "stdout-open",
            Termination::Unanswered => "unanswered",
        }
    }
}

/// The short name reports and saved results use: `timeout`, `grace`, `stdout-open`.
impl fmt::Display for Termination {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `Exit.termination` as the `killed` field: `null`, or the name of the kill.
mod killed {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(t: &Termination, s: S) -> Result<S::Ok, S::Error> {
        t.by_harness().then(|| t.name()).serialize(s)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Termination, D::Error> {
        let Some(name) = Option::<String>::deserialize(d)? else {
            return Ok(Termination::Exited);
        };
        Termination::KILLS
            .into_iter()
            .find(|t| t.name() == name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown kill `{name}`")))
    }
}

/// As a report says how the CLI ended: `0`, `killed by signal 11`,
/// `killed by streamcheck (timeout)`.
impl fmt::Display for Exit {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match (self.termination, self.code, self.signal) {
            (t, _, _) if t.by_harness() => write!(f, "killed by streamcheck ({t})"),
            (_, Some(code), _) => write!(f, "{code}"),
            (_, None, Some(signal)) => write!(f, "killed by signal {signal}"),
            _ => f.write_str("unknown"),
        }
    }
}
