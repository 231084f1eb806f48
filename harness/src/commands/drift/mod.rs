//! Drift across versions of a CLI: runs the suite on each version and reports, for
//! each pair of neighbouring versions, what changed in the protocol itself.
//!
//! The differ ([`diff()`]) is a pure function over what each version printed
//! ([`VersionOutputs`]: per scenario a view of its trial, the frames, exit and status),
//! so it is tested from small fixtures. The runs are read back from their run folder
//! (`results.json` and the saved trials in `outputs/`), so a run can be diffed again
//! without running anything (`streamcheck drift --replay reports/runs/X`).
//! What was printed (frame kinds, key paths and their JSON types, named lists such as the
//! tools in `system/init`) is judged by the protocol check `run` and `verdict` use, each
//! run against an inventory of the other ([`printed`]); the differ adds what an inventory
//! does not hold: the frame-kind sequence per scenario, exit codes, result subtypes, values
//! at the same place (volatile ones redacted), and which scenarios flip between pass and fail.
//!
//! Its parts: [`model`] (what drift reads and drift.json as types), [`diff`](mod@diff) (the
//! differ, one function per report section), [`verdict`] (each change breaking or
//! additive), [`render`] (drift.md) and [`html`](mod@html) (the drift page); [`error`] why
//! a drift could not be run, read back or written.

pub mod diff;
pub mod error;
pub mod html;
pub mod model;
pub mod pending;
pub mod printed;
pub mod render;
pub mod verdict;

pub use diff::{diff, diff_pair, run_length};
pub use error::DriftError;
pub use model::*;
pub use render::render_md;
pub use verdict::classify;

use crate::file_error::FileError;
use crate::install::{self, NotInstalled, Project, Source, Target, TargetSpec};
use crate::recording::PendingPlace;
use crate::report::{self, write_atomic};
use crate::runner::{RunOptions, Trial};
use crate::scenario::Scenario;
use crate::store::{RunReader, StoreError};
use crate::suite;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

/// Options of `streamcheck drift`.
#[derive(Debug, Clone)]
pub struct DriftOptions {
    pub jobs: usize,
    pub run: RunOptions,
    pub install: bool,
    /// Where drift.md and drift.json go.
    pub report_dir: PathBuf,
    /// Where the runs' own reports (and saved trials) go.
    pub run_dir: PathBuf,
    /// The command line, shown at the top of drift.md.
    pub command: String,
    pub notes: Vec<String>,
    /// Where the pending version blocks go.
    pub pending: PendingPlace,
}

/// Resolves a target; `claude-code@V` where V is the pinned version uses the pinned
/// install, so that version is not installed a second time from npm.
pub fn resolve(
    spec: &TargetSpec,
    project: &Project,
    install: bool,
) -> Result<Target, NotInstalled> {
    if let Source::Npm { version } = &spec.source {
        if let Ok(pinned) = TargetSpec::parse("claude-code") {
            if let Ok(mut t) = install::resolve(&pinned, project, install) {
                if &t.version == version {
                    t.name = spec.name.clone();
                    return Ok(t);
                }
            }
        }
    }
    install::resolve(spec, project, install)
}

/// Runs the suite on every target and writes drift.md and drift.json; `on_trial` is told
/// of each trial as it finishes.
pub async fn run(
    project: &Project,
    scenarios: Vec<Scenario>,
    specs: &[TargetSpec],
    opts: &DriftOptions,
    on_trial: impl FnMut(&Trial),
) -> Result<DriftFile, DriftError> {
    if specs.len() < 2 {
        return Err(DriftError::TooFewTargets);
    }
    let started = Instant::now();
    let targets: Vec<Result<Target, NotInstalled>> = specs
        .iter()
        .map(|s| resolve(s, project, opts.install))
        .collect();
    for t in &targets {
        match t {
            Ok(t) => log::info!(
                "{} is {} {}",
                t.name,
                t.dialect.conventions().title(),
                t.version
            ),
            Err(e) => log::warn!("{e}"),
        }
    }
    run_all(scenarios.clone(), &targets, opts, on_trial).await?;
    let (versions, trials) = read_run(&opts.run_dir)?;
    let mut notes = opts.notes.clone();
    let duration_ms = started.elapsed().as_millis() as u64;
    let run_dir = &opts.run_dir;
    notes.push(format!(
        "Wall time of the runs: {:.1} min with --jobs {}. The runs (for `streamcheck drift --replay`): {}.",
        duration_ms as f64 / 60_000.0,
        opts.jobs,
        run_dir.strip_prefix(&project.root).unwrap_or(run_dir).display()
    ));
    let scenarios = Some((project, scenarios.as_slice()));
    write(&versions, &trials, scenarios, opts, notes, duration_ms)
}

/// Runs the suite on the targets that could be resolved, into the run folder.
async fn run_all(
    scenarios: Vec<Scenario>,
    targets: &[Result<Target, NotInstalled>],
    opts: &DriftOptions,
    on_trial: impl FnMut(&Trial),
) -> Result<(), DriftError> {
    let runnable: Vec<Result<Target, NotInstalled>> =
        targets.iter().filter(|t| t.is_ok()).cloned().collect();
    let mut on_trial = on_trial;
    let look = |t: &Trial, _| on_trial(t);
    let (dir, run) = (&opts.run_dir, opts.run.clone());
    let reported =
        suite::run_and_report(dir, scenarios, &runnable, opts.jobs, run, vec![], look).await?;
    match reported.end.finished() {
        true => Ok(()),
        false => Err(DriftError::Interrupted),
    }
}

/// What each target of a run folder printed (its `results.json` and saved trials), in
/// the order the run named the targets, and the trials themselves.
pub fn read_run(dir: &Path) -> Result<(Vec<VersionOutputs>, Vec<Trial>), StoreError> {
    let results = RunReader::open(dir).results_with_outputs()?;
    let versions = (results.targets.iter())
        .map(|info| {
            let trials: Vec<&Trial> = (results.trials.iter())
                .filter(|t| t.key.target == info.name)
                .collect();
            VersionOutputs {
                target: info.name.clone(),
                version: info.version.clone(),
                unavailable: info.unavailable.clone(),
                trial_ms: trials.iter().map(|t| t.duration_ms).sum(),
                scenarios: (trials.iter())
                    .map(|t| (t.key.scenario.to_string(), ScenarioOutput::of(t)))
                    .collect(),
            }
        })
        .collect();
    Ok((versions, results.trials))
}

/// Diffs the runs of an earlier drift (its run folder) and writes the report; with
/// `scenarios`, opens pending version blocks as a run does.
pub fn replay(
    run_dir: &Path,
    scenarios: Option<(&Project, &[Scenario])>,
    opts: &DriftOptions,
) -> Result<DriftFile, DriftError> {
    let (versions, trials) = read_run(run_dir)?;
    write(&versions, &trials, scenarios, opts, opts.notes.clone(), 0)
}

/// Diffs the versions, opens pending version blocks for the breaking changes (when the
/// scenarios are given) and writes drift.md and drift.json into the report folder.
fn write(
    versions: &[VersionOutputs],
    trials: &[Trial],
    scenarios: Option<(&Project, &[Scenario])>,
    opts: &DriftOptions,
    notes: Vec<String>,
    duration_ms: u64,
) -> Result<DriftFile, DriftError> {
    let (dir, command) = (&opts.report_dir, &opts.command);
    let mut drift = diff(versions);
    if let Some((project, scenarios)) = scenarios {
        pending::open(project, &opts.pending, scenarios, trials, &mut drift)?;
    }
    let md = render_md(&drift, command, &notes);
    let file = DriftFile {
        command: command.to_string(),
        generated_at: report::timestamp(SystemTime::now()),
        duration_ms,
        notes,
        drift,
    };
    let (md_path, json_path) = (dir.join("drift.md"), dir.join("drift.json"));
    write_atomic(&md_path, md.as_bytes()).map_err(FileError::at(&md_path))?;
    let json = serde_json::to_string_pretty(&file)? + "\n";
    write_atomic(&json_path, json.as_bytes()).map_err(FileError::at(&json_path))?;
    Ok(file)
}
