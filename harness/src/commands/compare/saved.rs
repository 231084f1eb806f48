//! Two run folders' saved trials (`outputs/`), compared scenario by scenario: no CLI runs.
//! A scenario run on one side only, or skipped or unavailable on one, is not compared.

use super::aspects::Side;
use super::fields::PathRow;
use super::parity::{Compared, Parity, ScenarioParity, TargetSide};
use crate::recording::recorded::Recorded;
use crate::runner::{Status, Trial};
use crate::store::{RunReader, StoreError};
use crate::trial_id::ScenarioId;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// One run folder's trials that ran, by scenario (a multi-run scenario: its last run).
fn read(dir: &Path) -> Result<(TargetSide, BTreeMap<ScenarioId, Trial>), StoreError> {
    let saved = RunReader::open(dir).saved()?;
    let first = saved.first().ok_or_else(|| StoreError::NoSavedTrials {
        dir: dir.to_path_buf(),
    })?;
    let side = TargetSide {
        name: first.key.target.to_string(),
        version: first.key.target_version.clone(),
        dialect: first.key.dialect,
    };
    if let Some(other) = saved.iter().find(|s| s.key.target != side.name) {
        return Err(StoreError::TwoTargets {
            dir: dir.to_path_buf(),
            first: side.name,
            other: other.key.target.to_string(),
        });
    }
    let trials = saved
        .iter()
        .map(|s| (s.key.scenario.clone(), Trial::from_saved(s)))
        .collect();
    Ok((side, trials))
}

/// Compares the saved trials of two run folders, one target each.
pub fn saved_runs(
    dir_a: &Path,
    dir_b: &Path,
    filters: &[String],
    command: String,
) -> Result<Parity, StoreError> {
    let (side_a, a) = read(dir_a)?;
    let (side_b, b) = read(dir_b)?;
    if side_a.name == side_b.name {
        return Err(StoreError::SameTargetFolders {
            target: side_a.name,
        });
    }
    let mut scenarios: Vec<&ScenarioId> = a.keys().chain(b.keys()).collect();
    scenarios.sort();
    scenarios.dedup();
    let mut results = Vec::new();
    for id in scenarios {
        if !filters.is_empty() && !filters.iter().any(|f| id.contains(f.as_str())) {
            continue;
        }
        results.push(pair(id, [(&side_a, a.get(id)), (&side_b, b.get(id))]));
    }
    let mut parity = Parity::new(command, side_a, side_b, results);
    parity.notes.push(
        "Saved runs: each side's trials as its run folder saved them; a scenario either side did not run (or skipped) is not compared."
            .into(),
    );
    Ok(parity)
}

fn pair(id: &str, sides: [(&TargetSide, Option<&Trial>); 2]) -> Compared {
    let mut ran = Vec::new();
    for (side, trial) in sides {
        let Some(t) = trial else {
            return ScenarioParity::not_compared(
                id,
                format!("{}'s run has no trial of it", side.name),
            );
        };
        if let Some(why) = t.status.did_not_run() {
            return ScenarioParity::not_compared(
                id,
                format!("{} did not run it: {why}", side.name),
            );
        }
        let Some(dialect) = t.key.dialect else {
            return ScenarioParity::not_compared(
                id,
                format!(
                    "{}'s saved trial does not say its dialect (saved by an older streamcheck)",
                    side.name
                ),
            );
        };
        ran.push((t, dialect, Recorded::from_trial(t)));
    }
    let [a, b] = [&ran[0], &ran[1]].map(|(t, dialect, run)| Side {
        name: &t.key.target,
        dialect: *dialect,
        run,
    });
    let (mut sp, unmapped) = ScenarioParity::of(id, a, b);
    sp.fails_own_expectation = (ran.iter())
        .filter(|(t, _, _)| t.status == Status::Failed)
        .map(|(t, _, _)| t.key.target.to_string())
        .collect();
    (sp, unmapped)
}

/// The committed parity table (`docs/parity/<target>.json`): the key paths that differ
/// across a catalogue, without the per-scenario detail or the time it was made, so that
/// the same runs give the same file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParityTable {
    pub a: TargetSide,
    pub b: TargetSide,
    /// Scenarios compared (run on both as written).
    pub compared: Vec<String>,
    pub rows: Vec<PathRow>,
}

impl ParityTable {
    pub fn of(p: &Parity) -> ParityTable {
        ParityTable {
            a: p.a.clone(),
            b: p.b.clone(),
            compared: (p.scenarios.iter())
                .filter(|s| s.not_compared.is_none() && s.cannot_run_as_written.is_empty())
                .map(|s| s.scenario.clone())
                .collect(),
            rows: p.fields_by_path.clone(),
        }
    }

    /// The table as Markdown, with how it is made.
    pub fn render_md(&self) -> String {
        use std::fmt::Write as _;
        let side = |t: &TargetSide| format!("{} {}", t.name, t.version);
        let mut s = String::new();
        let _ = writeln!(
            s,
            "# Key-path parity: {} vs {}\n",
            side(&self.a),
            side(&self.b)
        );
        let _ = writeln!(
            s,
            "Generated by `streamcheck compare --runs A B --table FILE.md` from a catalogue run of each (`streamcheck run --target NAME --report-dir DIR`); the JSON beside this page holds the same rows, and a test keeps this page equal to it. Do not edit by hand.\n"
        );
        let _ = writeln!(
            s,
            "{} scenario(s) run on both; {} row(s), the most scenarios first. A row is a frame kind and a key path (a frame kind alone: only one side printed such frames) that differs in presence, JSON type or normalised value; nothing is listed under a key one side lacks.\n",
            self.compared.len(),
            self.rows.len()
        );
        s.push_str(&super::render::fields_rows(&self.rows));
        s
    }
}
