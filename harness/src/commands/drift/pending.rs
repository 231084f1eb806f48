//! A verdict opens pending version blocks: for each scenario a breaking change names,
//! what the newer version printed there becomes a pending `claude-code@X:` block holding
//! only what differs (`record`'s version blocks, [`crate::recording::block`]),
//! for `streamcheck review`.

use super::model::Drift;
use crate::install::Project;
use crate::recording::{
    pending_for, profile::RecordProfile, Outcome, PendingPlace, RecordError, Recorder,
};
use crate::report::write_atomic;
use crate::runner::{Status, Trial};
use crate::scenario::Scenario;
use crate::trial_id::ScenarioId;
use std::collections::BTreeSet;

/// Writes the pending blocks of every pair into `place` and lists them (paths relative to
/// the project) in each pair's `pending`. Versions that are the pinned one,
/// or whose scenario passed, get none.
pub fn open(
    project: &Project,
    place: &PendingPlace,
    scenarios: &[Scenario],
    trials: &[Trial],
    drift: &mut Drift,
) -> Result<(), RecordError> {
    for pair in &mut drift.pairs {
        let named: BTreeSet<&ScenarioId> = pair
            .verdict
            .iter()
            .filter(|c| c.is_breaking())
            .flat_map(|c| c.finding().all_scenarios())
            .collect();
        for id in named {
            let Some(scenario) = scenarios.iter().find(|s| &s.id == id) else {
                continue;
            };
            let newer = trials
                .iter()
                .find(|t| t.key.target == pair.to && &t.key.scenario == id);
            if let Some(path) = newer
                .map(|t| open_one(project, place, scenario, t))
                .transpose()?
            {
                pair.pending.extend(path);
            }
        }
    }
    Ok(())
}

/// The pending block for one scenario's trial on the newer version, written; its path.
pub fn open_one(
    project: &Project,
    place: &PendingPlace,
    scenario: &Scenario,
    trial: &Trial,
) -> Result<Option<String>, RecordError> {
    if trial.status != Status::Failed || trial.exit.termination.by_harness() {
        return Ok(None);
    }
    let Some(dialect) = trial.key.dialect else {
        return Err(RecordError::NoDialect {
            scenario: trial.key.scenario.clone(),
            target: trial.key.target.clone(),
        });
    };
    let key = dialect.conventions().expect_key();
    let profile = RecordProfile::load(project, dialect)?;
    let pinned = (project.data(dialect)?.versions.as_ref()).map(|v| v.pinned.clone());
    let rec = Recorder {
        project,
        profile: profile.as_ref(),
        pinned: pinned.as_deref(),
    };
    let Outcome::Pending(p) = pending_for(&rec, scenario, key, std::slice::from_ref(trial)) else {
        return Ok(None);
    };
    if !p.is_block() {
        return Ok(None);
    }
    let path = p.path_in(&place.dir);
    write_atomic(&path, p.to_yaml().as_bytes())
        .map_err(|e| RecordError::write_pending(&path, e))?;
    let rel = path.strip_prefix(&project.root).unwrap_or(&path);
    Ok(Some(rel.to_string_lossy().replace('\\', "/")))
}
