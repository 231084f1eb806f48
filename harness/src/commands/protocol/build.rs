//! The inventory from run folders: every trial that ran (not skipped, not unavailable)
//! with stream-json output, per dialect and per release it printed as, observed and added
//! one release at a time. The command lines come from the folder's `results.json`.

use super::error::BuildError;
use crate::protocol::inventory::Inventory;
use crate::protocol::observe::Observed;
use crate::runner::{Status, Trial};
use crate::store::saved::SavedTrial;
use crate::store::{RunReader, StoreError};
use crate::trial_id::{ScenarioId, TargetName};
use semver::Version;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// What run folders printed: per dialect, per release.
#[derive(Debug, Default)]
pub struct Runs {
    pub by: BTreeMap<String, BTreeMap<Version, Observed>>,
    /// What they sent to the model API: per dialect, per release.
    pub sent: BTreeMap<String, BTreeMap<Version, Observed>>,
    /// Per dialect, per kind: an example from the newest release that printed it, with
    /// the trial's sandbox paths written `$WORKSPACE`/`$HOME`.
    pub examples: BTreeMap<String, BTreeMap<String, (Version, Value)>>,
    pub trials: usize,
}

impl Runs {
    pub fn read(dirs: &[impl AsRef<Path>]) -> Result<Runs, BuildError> {
        let mut runs = Runs::default();
        for dir in dirs {
            let dir = dir.as_ref();
            let saved = RunReader::open(dir).saved()?;
            if saved.is_empty() {
                let dir = dir.to_path_buf();
                return Err(StoreError::NoSavedTrials { dir }.into());
            }
            let commands = command_lines(dir)?;
            for s in &saved {
                if !commands.contains_key(&(s.key.scenario.clone(), s.key.target.clone())) {
                    continue;
                }
                let trial = restored(s, &commands);
                if matches!(trial.status, Status::Skipped(_) | Status::Unavailable(_))
                    || crate::runner::protocol::other_output(&trial.command_line)
                {
                    continue;
                }
                let Some(dialect) = trial.key.dialect else {
                    return Err(BuildError::NoDialect {
                        dir: dir.to_path_buf(),
                        scenario: s.key.scenario.clone(),
                    });
                };
                let release =
                    Version::parse(trial.printed_by()).map_err(|source| BuildError::Release {
                        dir: dir.to_path_buf(),
                        scenario: s.key.scenario.clone(),
                        release: trial.printed_by().to_string(),
                        source,
                    })?;
                runs.add(dialect.conventions().expect_key(), &release, &trial);
            }
        }
        Ok(runs)
    }

    fn add(&mut self, dialect: &str, release: &Version, trial: &Trial) {
        let o = crate::runner::protocol::observed(trial);
        let examples = self.examples.entry(dialect.to_string()).or_default();
        for (kind, count) in &o.kinds {
            let newer = examples.get(kind).is_none_or(|(r, _)| release > r);
            if let (Some(e), true) = (&count.example, newer) {
                examples.insert(kind.clone(), (release.clone(), redact(e, trial)));
            }
        }
        (self.by.entry(dialect.to_string()).or_default())
            .entry(release.clone())
            .or_default()
            .merge(&o);
        (self.sent.entry(dialect.to_string()).or_default())
            .entry(release.clone())
            .or_default()
            .merge(&crate::runner::protocol::requested(trial));
        self.trials += 1;
    }

    /// The dialect's inventory: `base` (or an empty one) with every release added.
    pub fn inventory(&self, dialect: &str, base: Option<Inventory>) -> Inventory {
        built(&self.by, dialect, base)
    }

    /// The dialect's request inventory: `base` (or an empty one) with every release added.
    pub fn request_inventory(&self, dialect: &str, base: Option<Inventory>) -> Inventory {
        built(&self.sent, dialect, base)
    }
}

fn built(
    by: &BTreeMap<String, BTreeMap<Version, Observed>>,
    dialect: &str,
    base: Option<Inventory>,
) -> Inventory {
    let mut inv = base.unwrap_or_else(|| Inventory::new(dialect));
    for (release, o) in by.get(dialect).into_iter().flatten() {
        inv.add(release, o);
    }
    inv
}

/// Per trial (scenario, target) of a run folder, its command line (`results.json`). A run
/// that did not finish leaves out the scenario it stopped in (its cases may be partly run;
/// what ran is what the inventory records as looked at).
fn command_lines(dir: &Path) -> Result<BTreeMap<(ScenarioId, TargetName), String>, StoreError> {
    let results = RunReader::open(dir).results()?;
    let stopped_in = (!results.complete)
        .then(|| results.trials.last())
        .flatten()
        .map(|t| t.key.scenario.file().to_string());
    Ok((results.trials.into_iter())
        .filter(|t| stopped_in.as_deref() != Some(t.key.scenario.file()))
        .map(|t| ((t.key.scenario, t.key.target), t.command_line))
        .collect())
}

/// A saved trial with its command line.
fn restored(s: &SavedTrial, commands: &BTreeMap<(ScenarioId, TargetName), String>) -> Trial {
    let mut trial = Trial::from_saved(s);
    if let Some(c) = commands.get(&(s.key.scenario.clone(), s.key.target.clone())) {
        trial.command_line.clone_from(c);
    }
    trial
}

/// `v` with the trial's sandbox paths written `$WORKSPACE`, `$HOME` and `$SANDBOX` (its
/// folder, also as the CLI mangles it into a file name: `-tmp-streamcheck-X-`).
fn redact(v: &Value, trial: &Trial) -> Value {
    let sandbox = Path::new(&trial.vars.workspace)
        .parent()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let mangled = sandbox.replace('/', "-");
    let pairs = [
        (trial.vars.workspace.as_str(), "$WORKSPACE"),
        (trial.vars.home.as_str(), "$HOME"),
        (sandbox.as_str(), "$SANDBOX"),
        (mangled.as_str(), "-$SANDBOX"),
    ];
    redact_with(v, &pairs)
}

fn redact_with(v: &Value, pairs: &[(&str, &str)]) -> Value {
    match v {
        Value::String(s) => {
            let mut s = s.clone();
            for (from, to) in pairs.iter().filter(|(f, _)| f.len() > 1) {
                s = s.replace(from, to);
            }
            Value::String(s)
        }
        Value::Array(a) => Value::Array(a.iter().map(|x| redact_with(x, pairs)).collect()),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| (k.clone(), redact_with(x, pairs)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The trials of a run folder that ran, checked against the inventory again under
/// `policy` (their findings in `protocol`, divergences only the protocol's).
pub fn recheck(
    root: &Path,
    dir: &Path,
    policy: crate::protocol::Policy,
) -> Result<Vec<Trial>, StoreError> {
    let saved = RunReader::open(dir).saved()?;
    let commands = command_lines(dir)?;
    let mut out = Vec::new();
    let mut checks = BTreeMap::new();
    for s in &saved {
        let mut trial = restored(s, &commands);
        if matches!(trial.status, Status::Skipped(_) | Status::Unavailable(_)) {
            continue;
        }
        trial.divergences.clear();
        if let Some(dialect) = trial.key.dialect {
            let check = (checks.entry(dialect))
                .or_insert_with(|| crate::protocol::ProtocolCheck::load(policy, root, dialect));
            crate::runner::protocol::check_trial(check, &mut trial);
        }
        out.push(trial);
    }
    Ok(out)
}
