//! Executes a trial's plan ([`crate::plan`]) on its target: its own stub, sandbox and
//! process group. It decides nothing the plan has not.
//!
//! - [`sandbox`]: the trial's temp dir (work, home, tmp), its files, the stub script
//! - [`process`]: spawning the CLI, feeding stdin, reading stdout/stderr, timeouts, kills
//! - `execute.rs`: one CLI run of a plan; `runs.rs`: several in one sandbox
//! - [`check`]: the finished trial against its run's plan; [`protocol`]: against the
//!   protocol inventory; [`skip`]: a skip's reason against the run that confirms it

pub mod check;
mod execute;
pub mod process;
pub mod protocol;
mod runs;
pub mod sandbox;
pub mod skip;
pub mod trial;

pub use crate::printed::{Exit, Stderr, Termination};
pub use trial::{AsWritten, LetThrough, RunOptions, Status, Trial, TrialKey};

use crate::divergence::{Divergence, Kind};
use crate::install::Target;
use crate::plan::{Decision, TrialPlan};
use std::time::Instant;

/// The trial a plan that does not run gives, `None` when it runs.
pub fn skipped(plan: &TrialPlan, target: &Target) -> Option<Trial> {
    let Decision::Skip(why) = &plan.decision else {
        return None;
    };
    let mut trial = Trial::planned(plan, target);
    trial.status = Status::Skipped(why.to_string());
    trial.skip_reason = Some(why.clone());
    Some(trial)
}

/// Runs a decided plan and gives its verdict. Never panics on anything the CLI does.
pub async fn execute_plan(plan: &TrialPlan, target: &Target) -> Trial {
    if let Some(trial) = skipped(plan, target) {
        return trial;
    }
    let mut trial = Trial::planned(plan, target);
    if let Some(root) = &plan.fixtures {
        if let Err(why) = crate::fixtures::install(root) {
            trial.status = Status::Failed;
            trial
                .divergences
                .push(Divergence::new(Kind::Fixture, why.to_string()));
            return trial;
        }
    }
    trial.notes = plan.notes.clone();
    let started = Instant::now();
    // A multi-run trial says which run its output is from (a skip's probe and a scenario of
    // one `runs:` entry run the first), so it can be judged again against another block.
    trial.run = (!plan.scenario.file.runs.is_empty()).then_some(1);
    let executed = match (&plan.expect.skip, plan.runs.as_slice()) {
        (Some(_), [first, ..]) => execute::probe(first, target, &mut trial).await,
        (_, [one]) => execute::execute(one, target, &mut trial).await,
        (_, runs) => runs::execute_all(&plan.scenario, runs, target, &mut trial).await,
    };
    if let Err(d) = executed {
        trial.divergences.push(d);
    }
    trial.duration_ms = started.elapsed().as_millis() as u64;
    if let (Some(s), true) = (&plan.expect.skip, trial.divergences.is_empty()) {
        match skip::confirm(&s.reason, &trial) {
            Ok(evidence) => {
                trial.status = Status::Skipped(format!(
                    "{} (skip confirmed: {}; {evidence})",
                    s.because, s.reason
                ));
                return trial;
            }
            Err(shown) => trial.divergences.push(Divergence::new(
                Kind::SkipNoLongerHolds,
                format!(
                    "the expectation skips this release for \"{}\" ({}), but {shown}: write what it does instead",
                    s.because, s.reason
                ),
            )),
        }
    }
    trial.status = verdict(&mut trial, plan);
    trial
}

/// Passed, failed, or known when every divergence is one the plan's known-divergence
/// list names. A list entry that matches nothing here is stale: noted, and a divergence
/// of its own under `--strict`.
fn verdict(trial: &mut Trial, plan: &TrialPlan) -> Status {
    let dialect = plan.id.dialect.conventions().expect_key();
    let printed: Vec<&serde_json::Value> = trial.output.frames.iter().map(|f| &f.value).collect();
    let ran = crate::known::Ran {
        name: &plan.id.target,
        dialect,
        version: &plan.id.version,
        printed: &printed,
    };
    let known = &plan.known.list;
    let stale = known.judge(&trial.key.scenario, &ran, &mut trial.divergences);
    for entry in stale {
        let what = entry.describe();
        trial.stale_known.push(what.clone());
        if plan.known.strict {
            trial.divergences.push(Divergence::new(
                Kind::KnownDivergencePasses,
                format!("{} lists `{what}` as a known divergence, but the trial does not show it now: remove the entry", known.file),
            ));
        }
    }
    let reasons: Vec<&str> = trial
        .divergences
        .iter()
        .map(|d| d.known.as_deref())
        .collect::<Option<_>>()
        .unwrap_or_default();
    match (trial.divergences.is_empty(), reasons.is_empty()) {
        (true, _) => Status::Passed,
        (false, true) => Status::Failed,
        (false, false) => {
            let mut reasons = reasons;
            reasons.dedup();
            Status::Known(reasons.join("; "))
        }
    }
}
