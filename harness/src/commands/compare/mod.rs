//! Parity between two targets: the same scenario run on both, each run mapped into
//! neutral events by its dialect's adapter, then compared aspect by aspect. Differences
//! in substance (a retry one CLI does not announce, another exit code for the same
//! failure, another result, a missing tool result, other tool calls, other text) are
//! reported per scenario; the known differences in shape between the dialects (frame
//! names, envelopes, session ids, field names) are listed once.
//!
//! - [`run`]: runs the scenarios on both targets through [`crate::suite`]; `trials.rs`
//!   compares each pair of trials and says when a side could not run a scenario as written
//! - [`observed`]: two folders of captured runs instead (`captures.rs`)
//! - `recorded.rs`: what one run left behind ([`Recorded`]), from a trial or a capture
//! - the adapters into neutral events are the dialects' own (`Dialect::neutral`, in
//!   `dialect/`)
//! - `aspects.rs`: the pure core ([`compare`]), two runs in, one row per [`Aspect`] out
//! - `parity.rs`: the report model ([`Parity`], `parity.json`); the shape differences it
//!   lists are each dialect's (`Conventions::shape_differences`)
//! - `render.rs`: `parity.md` and the terminal summary, as strings; [`write()`] writes the files

mod aspects;
mod captures;
pub mod fields;
pub mod html;
mod parity;
mod render;
mod saved;
mod trials;

pub use aspects::{compare, Aspect, AspectRow, Comparison, Side, Verdict};
pub use captures::capture_side;
pub use parity::{
    known_shape_differences, Compared, Parity, ParityCounts, ScenarioParity, TargetSide,
    SCHEMA_VERSION,
};
pub use render::{render_md, summary};
pub use saved::{saved_runs, ParityTable};
pub use trials::compare_trials;

use crate::error::Error;
use crate::install::{NotInstalled, Target};
use crate::report::write_atomic;
use crate::runner::{AsWritten, RunOptions, Status, Trial};
use crate::scenario::Scenario;
use crate::store::StoreError;
use crate::suite;
use crate::trial_id::{ScenarioId, TargetName};
use captures::Folder;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Writes `parity.md` and `parity.json` into `dir`.
pub fn write(dir: &Path, p: &Parity) -> std::io::Result<()> {
    write_atomic(&dir.join("parity.md"), render_md(p).as_bytes())?;
    let json = serde_json::to_string_pretty(p).map_err(std::io::Error::other)?;
    write_atomic(&dir.join("parity.json"), json.as_bytes())
}

/// Compares two folders of captured runs, case by case. Needs no CLI.
pub fn observed(
    dir_a: &Path,
    dir_b: &Path,
    filters: &[String],
    command: String,
) -> Result<Parity, StoreError> {
    let (a, b) = (Folder::new(dir_a)?, Folder::new(dir_b)?);
    let mut results = Vec::new();
    for (key, names) in captures::pair_cases(&a, &b)? {
        if !filters.is_empty() && !filters.iter().any(|f| key.contains(f.as_str())) {
            continue;
        }
        results.push(captures::compare_case(&key, [&a, &b], &names)?);
    }
    let mut parity = Parity::new(command, a.side, b.side, results);
    parity.notes.push(
        "Captured runs: each CLI was run on its own, with its own flags and its own stdin file \
         (in its dialect); where the inputs differ (e.g. the prompt text), so do the outputs. \
         Request counts leave out Claude Code's background session-title request."
            .into(),
    );
    Ok(parity)
}

/// What `compare` runs.
pub struct LiveRun<'a> {
    pub scenarios: Vec<Scenario>,
    /// Exactly two: side A, side B.
    pub targets: &'a [Result<Target, NotInstalled>],
    pub jobs: usize,
    pub opts: RunOptions,
    /// Where the ordinary run reports and parity.md / parity.json go.
    pub report_dir: PathBuf,
    pub command: String,
    /// The formats of the runs' reports.
    pub report: crate::report::ReportOptions,
}

/// Trials by (scenario id, target name).
type Trials = BTreeMap<(ScenarioId, TargetName), Trial>;

/// Runs every scenario on both targets (a target the scenario has no expectation for
/// runs it as written) and compares the runs.
pub async fn run(live: LiveRun<'_>, on_trial: impl FnMut(&Trial)) -> Result<Parity, Error> {
    let [ta, tb] = live.targets else {
        return Err(StoreError::NotTwoTargets.into());
    };
    let (side_a, side_b) = (target_side(ta), target_side(tb));
    if side_a.name == side_b.name {
        return Err(StoreError::SameTargetTwice {
            target: side_a.name,
        }
        .into());
    }
    let (trials, finished) = run_both(&live, on_trial).await?;
    let dialects = [ta, tb].map(|t| t.as_ref().ok().map(|t| t.dialect));
    let mut results = Vec::new();
    for scenario in &live.scenarios {
        let pair =
            [&side_a, &side_b].map(|s| trials.get(&(scenario.id.clone(), s.name.clone().into())));
        let mut sp = match (pair, dialects) {
            ([Some(x), Some(y)], [Some(dx), Some(dy)]) => {
                compare_trials(scenario, (x, dx), (y, dy))
            }
            _ => ScenarioParity::not_compared(
                &scenario.id,
                if finished {
                    "a target did not run it".into()
                } else {
                    "interrupted before both targets ran it".into()
                },
            ),
        };
        sp.0.description = Some(scenario.file.description.clone());
        sp.0.fails_own_expectation = pair
            .into_iter()
            .flatten()
            .filter(|t| t.status == Status::Failed && has_expectation(scenario, [ta, tb], t))
            .map(|t| t.key.target.to_string())
            .collect();
        results.push(sp);
    }
    Ok(Parity::new(live.command, side_a, side_b, results))
}

/// Whether the scenario holds `trial`'s target to an expectation of its own.
fn has_expectation(
    scenario: &Scenario,
    targets: [&Result<Target, NotInstalled>; 2],
    trial: &Trial,
) -> bool {
    targets.into_iter().flatten().any(|t| {
        t.name == trial.key.target
            && crate::plan::block(scenario, t.dialect, t.expect_version()).is_some()
    })
}

fn target_side(t: &Result<Target, NotInstalled>) -> TargetSide {
    match t {
        Ok(t) => TargetSide {
            name: t.name.to_string(),
            version: t.version.clone(),
            dialect: Some(t.dialect),
        },
        Err(e) => TargetSide {
            name: e.target.to_string(),
            version: "unavailable".into(),
            dialect: None,
        },
    }
}

/// Runs the suite on both targets, writing the ordinary run reports. Returns the trials
/// and whether the run finished (it was not interrupted).
async fn run_both(
    live: &LiveRun<'_>,
    mut on_trial: impl FnMut(&Trial),
) -> Result<(Trials, bool), Error> {
    let opts = RunOptions {
        without_expectation: AsWritten::ToCompare,
        ..live.opts.clone()
    };
    let mut trials = Trials::new();
    let writer = crate::report::ReportWriter::create_with(
        &live.report_dir,
        suite::target_infos(live.targets),
        Vec::new(),
        live.report.clone(),
    )
    .map_err(|e| StoreError::io(&live.report_dir, e))?;
    let run = suite::run_and_report_as(
        writer,
        live.scenarios.clone(),
        live.targets,
        live.jobs,
        opts,
        |t, _| {
            on_trial(t);
            trials.insert((t.key.scenario.clone(), t.key.target.clone()), t.clone());
        },
    )
    .await?;
    let finished = run.end.finished();
    Ok((trials, finished))
}
