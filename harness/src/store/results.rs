//! `results.json`: what a run left, trial by trial, with its counts.

use super::error::StoreError;
use crate::runner::{Status, Trial};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub const SCHEMA_VERSION: u32 = 1;

/// `results.json`: the run's summary with every trial, rewritten as the run goes.
pub(super) const RESULTS_FILE: &str = "results.json";

/// The run's index: a trial per line, appended as each finishes, so a run cut short
/// still lists every trial that finished.
pub(super) const INDEX_FILE: &str = "results.jsonl";

/// A target as the run saw it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TargetInfo {
    pub name: String,
    pub version: Option<String>,
    /// Why it could not run, if it could not.
    pub unavailable: Option<String>,
}

/// `results.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Results {
    pub schema_version: u32,
    pub started_at: String,
    pub duration_ms: u64,
    pub complete: bool,
    pub targets: Vec<TargetInfo>,
    pub counts: Counts,
    /// Scenario files that could not be loaded.
    pub scenario_errors: Vec<String>,
    /// What a re-implementation checked under `protocol = "parity"` lacks or adds against
    /// the reference release's inventory, one row per key path.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parity: Vec<crate::protocol::parity::Row>,
    pub trials: Vec<Trial>,
}

impl Results {
    /// A run folder's `results.json`.
    pub(super) fn read(dir: &Path) -> Result<Results, StoreError> {
        let path = dir.join(RESULTS_FILE);
        let r: Results = super::saved::read_json(&path)?;
        if r.schema_version != SCHEMA_VERSION {
            return Err(StoreError::SchemaVersion {
                path,
                found: r.schema_version,
                reads: SCHEMA_VERSION,
            });
        }
        Ok(r)
    }

    /// Each finding (a CLI bug, [`crate::findings`]) some trial showed, with those trials.
    pub fn findings_met(
        &self,
    ) -> std::collections::BTreeMap<crate::findings::FindingId, Vec<String>> {
        crate::findings::met(self.trials.iter().map(|t| {
            (
                format!("{} ({})", t.key.scenario, t.key.target),
                t.divergences.as_slice(),
            )
        }))
    }

    /// Each release-wide rule that held in some trial, with how many trials it held in.
    pub fn rules_held(&self) -> std::collections::BTreeMap<&str, usize> {
        let mut held = std::collections::BTreeMap::new();
        for rule in self.trials.iter().flat_map(|t| &t.rules) {
            *held.entry(rule.as_str()).or_default() += 1;
        }
        held
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Counts {
    pub passed: usize,
    pub failed: usize,
    pub skipped: usize,
    /// Failed as the target's known-divergence list expects.
    pub known: usize,
    pub errors: usize,
    /// Trials whose target could not be installed or started.
    #[serde(default)]
    pub unavailable: usize,
    /// Known-divergence entries that matched nothing in their trial (the CLI was fixed).
    #[serde(default)]
    pub stale_known: usize,
    /// Of the skipped: those needing a feature their target does not support (`supports`).
    #[serde(default)]
    pub unsupported: usize,
}

impl Counts {
    pub fn of(trials: &[Trial], errors: usize) -> Counts {
        let mut c = Counts {
            errors,
            ..Counts::default()
        };
        for t in trials {
            c.stale_known += t.stale_known.len();
            c.unsupported += usize::from(t.unsupported().is_some());
            match t.status {
                Status::Passed => c.passed += 1,
                Status::Failed => c.failed += 1,
                Status::Skipped(_) => c.skipped += 1,
                Status::Known(_) => c.known += 1,
                Status::Unavailable(_) => c.unavailable += 1,
            }
        }
        c
    }

    /// The closing line CI tooling reads.
    pub fn line(&self) -> String {
        let mut line = format!(
            "{} passed, {} failed, {} known, {} skipped",
            self.passed, self.failed, self.known, self.skipped
        );
        if self.unsupported > 0 {
            line.push_str(&format!(" ({} unsupported)", self.unsupported));
        }
        match self.unavailable {
            0 => line,
            n => format!("{line}, {n} unavailable"),
        }
    }
}

/// `<scenario id>.<target>` under the report dir: the scenario folders are kept.
pub fn trial_stem(trial: &Trial) -> String {
    format!(
        "{}.{}",
        trial.key.scenario,
        trial.key.target.replace(['/', ':'], "_")
    )
}

/// Where a run folder keeps a trial's saved form.
pub(super) fn saved_trial_path(dir: &Path, trial: &Trial) -> PathBuf {
    (dir.join(crate::store::saved::DIR)).join(format!("{}.json", trial_stem(trial)))
}
