//! Recording expectations from real runs, insta-style.
//!
//! `streamcheck record` runs scenarios and turns what the CLI printed into frame patterns
//! ([`generalise`](mod@generalise): uuids, session ids, durations, timestamps, sandbox
//! paths and the CLI version are generalised, the rest is kept exact). Nothing is written
//! into a scenario: each recording goes to a pending file ([`pending`]),
//! `reports/pending/<id>.<target>.yaml`. `streamcheck review` ([`review`]) shows each
//! pending file as a unified diff of the scenario file and, when accepted, rewrites only
//! `frames:` and `exit_code:` under `expect: <target>:` ([`yaml_edit`]), textually, so
//! comments and other targets stay as written. A scenario with no expectation for the
//! target gets its first block ([`first`]), a version other than the pinned one a version
//! block ([`block`]). [`frames`] makes the frames a recording holds, [`model`] holds
//! what a recording comes to.

pub mod review;

use crate::install::{NotInstalled, Project, Target};
use crate::recording::profile::RecordProfile;
use crate::recording::{
    pending_for, Outcome, Pending, PendingFile, PendingPlace, RecordError, Recorder, Recording,
};
use crate::report::write_atomic;
use crate::runner::{AsWritten, RunOptions, Status, Trial};
use crate::scenario::Scenario;
use crate::suite;
use crate::trial_id::{ScenarioId, TargetName};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Options of `streamcheck record`.
#[derive(Debug, Clone)]
pub struct RecordOptions {
    pub jobs: usize,
    pub run: RunOptions,
    /// Runs per scenario; values that differ between runs are generalised.
    pub runs: usize,
    /// Record only scenarios whose current expectation fails.
    pub failing_only: bool,
    /// Record every key the CLI printed, not only the dialect's record profile.
    pub full: bool,
    /// Also run the scenarios with no expectation for a target, as written, and record
    /// their first block.
    pub first_blocks: bool,
    /// Where the runs' reports go.
    pub report_dir: PathBuf,
    /// Where the pending files go.
    pub pending: PendingPlace,
}

/// `streamcheck record`: runs the scenarios (`on_trial` hears of each trial with its run
/// number, from 1) and writes pending files. Returns the outcome per (scenario, target).
pub async fn record(
    project: &Project,
    scenarios: Vec<Scenario>,
    targets: &[Result<Target, NotInstalled>],
    opts: &RecordOptions,
    mut on_trial: impl FnMut(&Trial, usize),
) -> Result<Vec<Recording>, RecordError> {
    let by_name: BTreeMap<TargetName, &Target> = targets
        .iter()
        .filter_map(|t| t.as_ref().ok())
        .map(|t| (t.name.clone(), t))
        .collect();
    let mut profiles: BTreeMap<&str, (Option<RecordProfile>, Option<String>)> = BTreeMap::new();
    for t in by_name.values() {
        let profile = match opts.full {
            true => None,
            false => RecordProfile::load(project, t.dialect)?,
        };
        let pinned = t.data.versions.as_ref().map(|v| v.pinned.clone());
        profiles.insert(t.dialect.conventions().expect_key(), (profile, pinned));
    }
    let mut runs: BTreeMap<(ScenarioId, TargetName), Vec<Trial>> = BTreeMap::new();
    for k in 1..=opts.runs.max(1) {
        let dir = if k == 1 {
            opts.report_dir.clone()
        } else {
            opts.report_dir.join(format!("run-{k}"))
        };
        run_once(&dir, scenarios.clone(), targets, opts, |t| {
            on_trial(t, k);
            runs.entry((t.key.scenario.clone(), t.key.target.clone()))
                .or_default()
                .push(t.clone());
        })
        .await?;
    }
    let dir = &opts.pending.dir;
    let mut out = Vec::new();
    for ((id, target), trials) in runs {
        let Some(scenario) = scenarios.iter().find(|s| s.id == id) else {
            continue;
        };
        let Some(dialect) = trials[0].key.dialect else {
            // Only a target that could not be resolved leaves its trials without one.
            let why = trials[0]
                .status
                .did_not_run()
                .unwrap_or("its dialect is unknown");
            out.push(Recording {
                scenario: id,
                target,
                outcome: Outcome::Skipped(why.to_string()),
            });
            continue;
        };
        let (profile, pinned) = profiles
            .get(dialect.conventions().expect_key())
            .cloned()
            .unwrap_or_default();
        let rec = Recorder {
            project,
            profile: profile.as_ref(),
            pinned: pinned.as_deref(),
        };
        let outcome = pending_for(&rec, scenario, dialect.conventions().expect_key(), &trials);
        let passed = trials[0].status == Status::Passed;
        let outcome = write_pending(dir, outcome, opts.failing_only && passed)?;
        out.push(Recording {
            scenario: id,
            target,
            outcome,
        });
    }
    Ok(out)
}

/// Writes a pending recording into `dir`, unless `skip_passing` (the run passed and
/// `--failing-only` was given; a first block is written anyway: it had nothing to pass).
fn write_pending(
    dir: &std::path::Path,
    outcome: Outcome<Box<Pending>>,
    skip_passing: bool,
) -> Result<Outcome, RecordError> {
    Ok(match outcome {
        Outcome::Pending(p) if skip_passing && !p.new_block => {
            Outcome::Skipped("passes (--failing-only)".into())
        }
        Outcome::Pending(p) => {
            let path = p.path_in(dir);
            let replaced = path.exists();
            write_atomic(&path, p.to_yaml().as_bytes())
                .map_err(|e| RecordError::write_pending(&path, e))?;
            Outcome::Pending(PendingFile {
                path,
                replaced,
                first_block: p.new_block,
            })
        }
        Outcome::Unchanged => Outcome::Unchanged,
        Outcome::Skipped(why) => Outcome::Skipped(why),
        Outcome::NotRecorded(why) => Outcome::NotRecorded(why),
    })
}

/// One run of the suite, its reports in `dir`.
async fn run_once(
    dir: &std::path::Path,
    scenarios: Vec<Scenario>,
    targets: &[Result<Target, NotInstalled>],
    opts: &RecordOptions,
    on_trial: impl FnMut(&Trial),
) -> Result<(), RecordError> {
    let run = RunOptions {
        without_expectation: match opts.first_blocks {
            true => AsWritten::ToRecord,
            false => AsWritten::No,
        },
        ..opts.run.clone()
    };
    let mut on_trial = on_trial;
    let look = |t: &Trial, _| on_trial(t);
    let reported =
        suite::run_and_report(dir, scenarios, targets, opts.jobs, run, vec![], look).await?;
    match reported.end.finished() {
        true => Ok(()),
        false => Err(RecordError::Interrupted),
    }
}
