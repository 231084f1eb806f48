//! What a version range belongs to (a block, a bound, a known entry), as the range list and
//! the proofs name it.

use crate::trial_id::ScenarioId;
use serde::{Deserialize, Serialize};

/// What a range belongs to, as a proof names it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Subject {
    /// A version block, by its key (`claude-code@<2.1.154`).
    Block(String),
    /// A block's `min_version` or `max_version`.
    Bound {
        key: String,
        field: String,
        version: String,
    },
    /// A known-divergence entry.
    Entry {
        scenario: ScenarioId,
        kind: String,
        versions: String,
    },
}

impl Subject {
    pub fn describe(&self) -> String {
        match self {
            Subject::Block(key) => key.clone(),
            Subject::Bound {
                key,
                field,
                version,
            } => format!("{key} {field}: {version}"),
            Subject::Entry {
                scenario,
                kind,
                versions,
            } => format!("{scenario} {kind} {versions}"),
        }
    }

    pub fn is_entry(&self) -> bool {
        matches!(self, Subject::Entry { .. })
    }
}
