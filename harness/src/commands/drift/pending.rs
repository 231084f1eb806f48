//! A verdict opens pending version blocks: for each scenario a breaking change names,
//! what the newer version printed there becomes a pending `claude-code@X:` block holding
//! only what differs (`record`'s version blocks, [`crate::commands::record::block`]),
//! for `streamcheck review`.

use super::model::{Drift, ScenarioOutput, VersionOutputs};
use crate::commands::record::{
    block::as_frames, pending_dir, pending_for, profile::RecordProfile, Outcome, Recorder,
};
use crate::pattern::Vars;
use crate::report::write_atomic;
use crate::runner::{Status, Trial};
use crate::scenario::Scenario;
use crate::supported::Versions;
use crate::target::{Project, TargetSpec};
use serde_json::Value;
use std::collections::BTreeSet;

/// Where the outputs' sandbox was, once its paths were written as `$WORKSPACE`/`$HOME`.
const REPLAYED: &str = "/tmp/streamcheck-replayed";

/// Writes the pending blocks of every pair into `reports/pending/` and lists them (paths
/// relative to the project) in each pair's `pending`. Versions that are the pinned one,
/// or whose scenario passed, get none.
pub fn open(
    project: &Project,
    scenarios: &[Scenario],
    versions: &[VersionOutputs],
    drift: &mut Drift,
) -> Result<(), String> {
    for pair in &mut drift.pairs {
        let Some(newer) = versions.iter().find(|v| v.target == pair.to) else {
            continue;
        };
        let named: BTreeSet<&String> = pair
            .verdict
            .iter()
            .filter(|c| c.is_breaking())
            .flat_map(|c| c.finding().all_scenarios())
            .collect();
        for id in named {
            let Some(scenario) = scenarios.iter().find(|s| &s.id == id) else {
                continue;
            };
            let Some(out) = newer.scenarios.get(id) else {
                continue;
            };
            if let Some(path) = open_one(project, scenario, newer, out)? {
                pair.pending.push(path);
            }
        }
    }
    Ok(())
}

/// The pending block for one scenario on one version, written; its path.
fn open_one(
    project: &Project,
    scenario: &Scenario,
    newer: &VersionOutputs,
    out: &ScenarioOutput,
) -> Result<Option<String>, String> {
    let (Some(version), Ok(spec)) = (&newer.version, TargetSpec::parse(&newer.target)) else {
        return Ok(None);
    };
    if out.status != Status::Failed || out.killed.is_some() {
        return Ok(None);
    }
    let key = spec.dialect.expect_key();
    let profile = RecordProfile::load(project, spec.dialect)?;
    let pinned = Versions::load(project, key).ok().map(|v| v.pinned);
    let rec = Recorder {
        project,
        profile: profile.as_ref(),
        pinned: pinned.as_deref(),
    };
    let trial = replayed_trial(scenario, &newer.target, version, out);
    let Outcome::Pending(p) = pending_for(&rec, scenario, key, &[trial]) else {
        return Ok(None);
    };
    if !p.is_block() {
        return Ok(None);
    }
    let path = p.path_in(&pending_dir(project));
    write_atomic(&path, p.to_yaml().as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    let rel = path.strip_prefix(&project.root).unwrap_or(&path);
    Ok(Some(rel.to_string_lossy().replace('\\', "/")))
}

/// A failed trial rebuilt from saved output, its sandbox paths put back under [`REPLAYED`].
fn replayed_trial(scenario: &Scenario, target: &str, version: &str, out: &ScenarioOutput) -> Trial {
    let vars = Vars {
        workspace: format!("{REPLAYED}/work"),
        home: format!("{REPLAYED}/home"),
    };
    let frames: Vec<Value> = out.frames.iter().map(|f| unredact(f, &vars)).collect();
    let mut t = Trial::skipped(scenario, target, version, String::new());
    t.status = Status::Failed;
    t.exit.code = out.exit_code;
    t.output.frames = as_frames(&frames);
    t.vars = vars;
    t
}

/// `$WORKSPACE`, `$HOME` and `<sandbox>` (how drift saves sandbox paths) back to paths.
fn unredact(v: &Value, vars: &Vars) -> Value {
    match v {
        Value::String(s) => {
            let token = REPLAYED.rsplit('/').next().unwrap_or_default();
            Value::String(vars.substitute(s).replace("<sandbox>", token))
        }
        Value::Array(a) => Value::Array(a.iter().map(|x| unredact(x, vars)).collect()),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| (k.clone(), unredact(x, vars)))
                .collect(),
        ),
        other => other.clone(),
    }
}
