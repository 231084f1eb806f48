//! What a bisect found: per scenario how its search ended, and the versions probed
//! (bisect.json is these types serialised).

use crate::boundary::probe::InstallFailure;
use crate::boundary::search::Outcome;
use crate::trial_id::{ScenarioId, TargetName};
use serde::Serialize;

/// One scenario's result.
#[derive(Debug, Clone, Serialize)]
pub struct ScenarioBisect {
    pub scenario: ScenarioId,
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// What a bisect run found (bisect.json).
#[derive(Debug, Clone, Serialize)]
pub struct Bisect {
    pub target: TargetName,
    pub from: String,
    pub to: String,
    /// Published versions strictly between `from` and `to`.
    pub between: usize,
    /// Every version run, in the order probed (`from` and `to` first).
    pub probed: Vec<String>,
    /// The probed versions that were not in the cache yet.
    pub installed: Vec<String>,
    pub install_failures: Vec<InstallFailure>,
    pub duration_ms: u64,
    pub scenarios: Vec<ScenarioBisect>,
}

impl Bisect {
    pub fn all_bisected(&self) -> bool {
        self.scenarios.iter().all(|s| s.outcome.bisected())
    }
}
