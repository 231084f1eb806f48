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
//! block ([`block`]).

pub mod block;
pub mod first;
pub mod generalise;
pub mod pending;
pub mod profile;
pub mod review;
pub mod yaml_edit;

pub use pending::{pending_dir, pending_files, Pending};

use crate::divergence::Kind;
use crate::matcher::{self, Expected, FrameRules, Mode};
use crate::pattern::{Captures, Pattern};
use crate::report::{write_atomic, ReportWriter};
use crate::runner::{AsWritten, RunOptions, Status, Trial};
use crate::scenario::{OutputFormat, Scenario, TargetExpect};
use crate::suite;
use crate::supported::Versions;
use crate::target::{Dialect, NotInstalled, Project, Target};
use crate::version_range::parse_version;
use generalise::{covers, generalise, merge_runs, session_capture_name, Volatile};
use profile::{Contract, RecordProfile};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// What the runs of one scenario on one target come to. `P` is how a pending recording
/// is carried: first the [`Pending`] itself, then, once `record` wrote it, its file.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome<P = PendingFile> {
    /// The recording differs from the current expectation.
    Pending(P),
    /// The recording equals the current expectation.
    Unchanged,
    Skipped(String),
    /// Could not be recorded (the CLI was killed, did not start, runs disagree...).
    NotRecorded(String),
}

/// Where a pending recording was written.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingFile {
    pub path: PathBuf,
    /// An unreviewed pending file was there before.
    pub replaced: bool,
    /// It adds the target's first block to the scenario.
    pub first_block: bool,
}

/// One scenario on one target after `record`.
#[derive(Debug, Clone, PartialEq)]
pub struct Recording {
    pub scenario: String,
    pub target: String,
    pub outcome: Outcome,
}

/// What `record` needs besides the runs.
#[derive(Debug, Clone, Copy)]
pub struct Recorder<'a> {
    pub project: &'a Project,
    /// The dialect's record profile; `None` records every key (`--full`).
    pub profile: Option<&'a RecordProfile>,
    /// The version the general expectation is written for (`targets/<dialect>/versions.yaml`);
    /// a recording on another version becomes a version block.
    pub pinned: Option<&'a str>,
}

impl Recorder<'_> {
    /// True when a recording on `version` goes into a version block.
    fn is_other_version(&self, version: &str) -> bool {
        self.pinned.is_some_and(|p| p != version) && parse_version(version).is_some()
    }
}

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
        return Outcome::NotRecorded(why);
    }
    let mut notes = Vec::new();
    let frames = match frames_of(rec, scenario, trials, expect) {
        Ok(frames) => frames,
        Err(why) => return Outcome::NotRecorded(why),
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

/// The recorded frames, or `None` for an output format without frames.
fn frames_of(
    rec: &Recorder,
    scenario: &Scenario,
    trials: &[Trial],
    expect: &TargetExpect,
) -> Result<Option<Vec<Value>>, String> {
    if scenario.file.output_format == OutputFormat::Text {
        return Ok(None);
    }
    let named: Vec<Value> = expect.frames.iter().map(|e| e.0.source()).collect();
    let contract = rec.profile.map(|p| p.contract(&named, &scenario.file.tags));
    recorded_frames(trials, expect, contract.as_ref()).map(Some)
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
        return Outcome::NotRecorded(why);
    }
    let recorded = match frames_of(rec, scenario, trials, parent) {
        Ok(frames) => frames,
        Err(why) => return Outcome::NotRecorded(why),
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
                return Outcome::NotRecorded(why);
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

/// Fails when a run did not start, was killed, or exited unlike the first.
fn runs_agree(trials: &[Trial]) -> Result<(), String> {
    let first = &trials[0];
    for t in trials {
        if let Some(d) = t.divergences.iter().find(|d| d.kind == Kind::Spawn) {
            return Err(d.message.clone());
        }
        if t.exit.termination.by_harness() {
            return Err(format!("the CLI was {}: nothing stable to record", t.exit));
        }
        if t.exit.code != first.exit.code {
            return Err(format!(
                "the runs exited differently ({} and {})",
                first.exit, t.exit
            ));
        }
    }
    Ok(())
}

/// The runs' frames (those `ignore` does not drop), generalised and merged; checked to
/// match every run they came from.
fn recorded_frames(
    trials: &[Trial],
    expect: &TargetExpect,
    contract: Option<&Contract>,
) -> Result<Vec<Value>, String> {
    let ignore: Vec<Pattern> = expect.ignore.iter().map(|p| p.0.clone()).collect();
    let session =
        session_capture_name(&trials[0].expected_frames).unwrap_or_else(|| "session".into());
    let mut merged: Option<Vec<Value>> = None;
    for t in trials {
        let kept: Vec<Value> = kept_frames(t, expect)
            .iter()
            .map(|f| contract.map_or_else(|| f.clone(), |c| c.apply(f)))
            .collect();
        let version = (!t.target_version.is_empty()).then_some(t.expect_version());
        let this = generalise(
            &kept,
            &Volatile {
                vars: &t.vars,
                version,
                session_capture: &session,
            },
        );
        merged = Some(match merged {
            None => this,
            Some(m) => merge_runs(&m, &this)?,
        });
    }
    let frames = merged.unwrap_or_default();
    let compiled: Vec<Expected> = frames
        .iter()
        .map(|f| Pattern::compile(f).map(Expected::Frame))
        .collect::<Result<_, _>>()
        .map_err(|e| format!("recorded an invalid pattern: {e}"))?;
    let rules = FrameRules {
        expected: &compiled,
        ignore: &ignore,
        absent: &[],
        mode: Mode::Exact,
    };
    for t in trials {
        let found = matcher::match_frames(&rules, &t.output.frames, &t.vars, &mut Captures::new());
        if let Some(d) = found.first() {
            return Err(format!("the recording does not match its own run: {d}"));
        }
    }
    Ok(frames)
}

/// The frames of a run that the expectation's `ignore` does not drop.
fn kept_frames(t: &Trial, expect: &TargetExpect) -> Vec<Value> {
    let ignore: Vec<Pattern> = expect.ignore.iter().map(|p| p.0.clone()).collect();
    t.output
        .frames
        .iter()
        .filter(|f| {
            !ignore
                .iter()
                .any(|p| p.is_match(&f.value, &t.vars, &Captures::new()))
        })
        .map(|f| f.value.clone())
        .collect()
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
}

/// `streamcheck record`: runs the scenarios (`on_trial` hears of each trial with its run
/// number, from 1) and writes pending files. Returns the outcome per (scenario, target).
pub async fn record(
    project: &Project,
    scenarios: Vec<Scenario>,
    targets: &[Result<Target, NotInstalled>],
    opts: &RecordOptions,
    mut on_trial: impl FnMut(&Trial, usize),
) -> Result<Vec<Recording>, String> {
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
        let pinned = Versions::load(project, d.expect_key())
            .ok()
            .map(|v| v.pinned);
        profiles.insert(d.expect_key(), (profile, pinned));
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
    let dir = pending_dir(project);
    let mut out = Vec::new();
    for ((id, target), trials) in runs {
        let Some(scenario) = scenarios.iter().find(|s| s.id == id) else {
            continue;
        };
        let dialect = dialects
            .get(&target)
            .copied()
            .unwrap_or(Dialect::ClaudeCode);
        let (profile, pinned) = profiles
            .get(dialect.expect_key())
            .cloned()
            .unwrap_or_default();
        let rec = Recorder {
            project,
            profile: profile.as_ref(),
            pinned: pinned.as_deref(),
        };
        let outcome = pending_for(&rec, scenario, dialect.expect_key(), &trials);
        let passed = trials[0].status == Status::Passed;
        let outcome = write_pending(&dir, outcome, opts.failing_only && passed)?;
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
) -> Result<Outcome, String> {
    Ok(match outcome {
        Outcome::Pending(p) if skip_passing && !p.new_block => {
            Outcome::Skipped("passes (--failing-only)".into())
        }
        Outcome::Pending(p) => {
            let path = p.path_in(dir);
            let replaced = path.exists();
            write_atomic(&path, p.to_yaml().as_bytes())
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
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
) -> Result<(), String> {
    let mut writer = ReportWriter::create(dir, suite::target_infos(targets), vec![])
        .map_err(|e| format!("cannot write reports to {}: {e}", dir.display()))?;
    let run = RunOptions {
        without_expectation: match opts.first_blocks {
            true => AsWritten::ToRecord,
            false => AsWritten::No,
        },
        ..opts.run.clone()
    };
    let finished = suite::run(scenarios, targets, opts.jobs, run, &mut writer, on_trial)
        .await
        .map_err(|e| format!("cannot write reports: {e}"))?;
    if !finished {
        return Err("interrupted: nothing recorded".into());
    }
    writer.finish().map_err(|e| e.to_string())?;
    Ok(())
}
