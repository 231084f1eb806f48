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

pub mod block;
mod error;
pub mod first;
pub mod frames;
pub mod generalise;
pub mod model;
pub mod pending;
pub mod profile;
pub mod review;
pub mod yaml_edit;

pub use error::RecordError;
pub use model::{Outcome, PendingFile, Recorder, Recording};
pub use pending::{pending_files, Pending, PendingPlace};

use crate::dialect::Dialect;
use crate::install::supported::Versions;
use crate::install::{NotInstalled, Project, Target};
use crate::report::write_atomic;
use crate::runner::{AsWritten, RunOptions, Status, Trial};
use crate::scenario::{Scenario, TargetExpect};
use crate::suite;
use frames::{frames_of, kept_frames, runs_agree};
use generalise::covers;
use profile::RecordProfile;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Turns the runs of one scenario on one target into a pending expectation, or says
/// why not. Pure but for the clock (`recorded_at`): `trials` are the runs (at least one).
pub fn pending_for(
    rec: &Recorder,
    scenario: &Scenario,
    expect_key: &str,
    trials: &[Trial],
) -> Outcome<Box<Pending>> {
    let Some(first) = trials.first() else {
        return Outcome::NotRecorded("no run".into());
    };
    if let Some(why) = first.status.did_not_run() {
        return Outcome::Skipped(why.to_string());
    }
    if let Some(case) = &scenario.case {
        // A version block of the case's own (`expect:` in its item) says what this case
        // does on another release; the expectation shared through parameters is not
        // rewritten from one case.
        if rec.is_other_version(first.expect_version())
            && !first::has_none_for(&scenario.file.expect, expect_key)
        {
            return match block_pending(rec, scenario, expect_key, trials) {
                Outcome::Pending(mut p) => {
                    p.case = Some(case.clone());
                    Outcome::Pending(p)
                }
                other => other,
            };
        }
        return Outcome::NotRecorded(format!(
            "case `{case}` of a `cases:` matrix: its expectation is shared with the other cases through `{{{{parameters}}}}`, so a recording of one case on the pinned release is not written back; edit `expect:` in {} by hand (this run is in the report; on another release a recording becomes a version block of the case's own)",
            scenario.display_path()
        ));
    }
    if first::has_none_for(&scenario.file.expect, expect_key) {
        return first::first_block(rec, scenario, expect_key, trials);
    }
    if rec.is_other_version(first.expect_version()) {
        return block_pending(rec, scenario, expect_key, trials);
    }
    let Some(expect) = scenario.file.expect.get(expect_key) else {
        return Outcome::Skipped(format!("no expectation for {expect_key}"));
    };
    if let Err(why) = runs_agree(trials) {
        return Outcome::NotRecorded(why.to_string());
    }
    let mut notes = Vec::new();
    let frames = match frames_of(rec, scenario, trials, expect) {
        Ok(frames) => frames,
        Err(why) => return Outcome::NotRecorded(why.to_string()),
    };
    if frames.is_some() && has_any_order(first) {
        notes.push("the current expectation has any_order groups; this recording pins the order of one run".into());
    }
    if unchanged(first, expect, frames.as_deref()) {
        return Outcome::Unchanged;
    }
    if first.status == Status::Passed {
        notes.push("the current expectation passes; this recording pins the full frames".into());
    }
    let mut p = Pending::new(rec.project, scenario, expect_key, first);
    p.notes = notes;
    p.exit_code = first.exit.code;
    p.frames = frames;
    Outcome::Pending(Box::new(p))
}

/// A recording on a version other than the pinned one: a version block holding what
/// differs from the expectation that version gets without it.
fn block_pending(
    rec: &Recorder,
    scenario: &Scenario,
    target: &str,
    trials: &[Trial],
) -> Outcome<Box<Pending>> {
    let first = &trials[0];
    let version = first.expect_version();
    let expect = &scenario.file.expect;
    let key = block::block_key(expect, target, version);
    let Some((parent_key, parent)) = block::parent(expect, &key, target, version) else {
        return Outcome::Skipped(format!("no expectation for {target}"));
    };
    if first.status == Status::Passed {
        return Outcome::Unchanged;
    }
    if let Err(why) = runs_agree(trials) {
        return Outcome::NotRecorded(why.to_string());
    }
    let recorded = match frames_of(rec, scenario, trials, parent) {
        Ok(frames) => frames,
        Err(why) => return Outcome::NotRecorded(why.to_string()),
    };
    let delta = match recorded {
        None => BTreeMap::new(),
        Some(recorded) => {
            let actual = kept_frames(first, parent);
            let parent_frames: Vec<Value> = parent.frames.iter().map(|e| e.0.source()).collect();
            // Expectations `{$ref: initialize}` the scripted client's request ids.
            let seed = match &first.client {
                Some(log) => log.captures(),
                None => block::infer_refs(&parent_frames, &actual),
            };
            let (mode, vars) = (parent.mode, &first.vars);
            let patch = block::frames_patch(&parent_frames, mode, &recorded, &actual, vars, &seed);
            if let Err(why) = block::verify(parent, &patch, &first.output.frames, vars, &seed) {
                return Outcome::NotRecorded(why.to_string());
            }
            patch
        }
    };
    let exit_code = first.exit.code.filter(|c| Some(*c) != parent.exit_code);
    if delta.is_empty() && exit_code.is_none() {
        return Outcome::Unchanged;
    }
    let mut p = Pending::new(rec.project, scenario, &key, first);
    p.refines = Some(parent_key);
    p.exit_code = exit_code;
    p.frames_patch = Some(delta);
    Outcome::Pending(Box::new(p))
}

fn has_any_order(trial: &Trial) -> bool {
    trial
        .expected_frames
        .iter()
        .any(|f| f.get("any_order").is_some())
}

/// True when the recording says nothing the current expectation does not.
fn unchanged(first: &Trial, expect: &TargetExpect, frames: Option<&[Value]>) -> bool {
    let unchanged_frames = frames.is_none_or(|f| {
        f.len() == first.expected_frames.len()
            && first
                .expected_frames
                .iter()
                .zip(f)
                .all(|(c, n)| covers(c, n))
    });
    let unchanged_exit = first.exit.code.is_none() || first.exit.code == expect.exit_code;
    unchanged_frames && unchanged_exit
}

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
    let dialects: BTreeMap<String, Dialect> = targets
        .iter()
        .filter_map(|t| t.as_ref().ok())
        .map(|t| (t.name.clone(), t.dialect))
        .collect();
    let mut profiles: BTreeMap<&str, (Option<RecordProfile>, Option<String>)> = BTreeMap::new();
    for d in dialects.values() {
        let profile = match opts.full {
            true => None,
            false => RecordProfile::load(project, *d)?,
        };
        let pinned = Versions::load(project, d.conventions().expect_key())
            .ok()
            .map(|v| v.pinned);
        profiles.insert(d.conventions().expect_key(), (profile, pinned));
    }
    let mut runs: BTreeMap<(String, String), Vec<Trial>> = BTreeMap::new();
    for k in 1..=opts.runs.max(1) {
        let dir = if k == 1 {
            opts.report_dir.clone()
        } else {
            opts.report_dir.join(format!("run-{k}"))
        };
        run_once(&dir, scenarios.clone(), targets, opts, |t| {
            on_trial(t, k);
            runs.entry((t.scenario.clone(), t.target.clone()))
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
        let Some(dialect) = trials[0].dialect else {
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
