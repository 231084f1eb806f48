//! `streamcheck audit`: mutation testing of the suite itself. Each passing trial's saved
//! output is mutated one protocol change at a time and its scenario checked again with
//! the runner's own checks, without running the CLI: a mutation the scenario lets
//! through is a miss, a control (a change of form, not of meaning) it rejects is a false
//! alarm.
//!
//! - [`html`]: the audit page (index.html)
//! - [`model`]: the mutations and what the audit found, as audit.json has them
//! - [`mutate`]: one [`Mutation`] applied to what a trial printed
//! - [`render`]: audit.md and audit.json
//! - [`error`]: why a trial could not be audited, or the audit run or written

pub mod error;
pub mod html;
pub mod model;
pub mod mutate;
pub mod render;

pub use error::AuditError;
pub use model::*;

use crate::file_error::FileError;
use crate::install::{NotInstalled, Project, Target};
use crate::pattern::Captures;
use crate::plan::{Planner, RunPlan};
use crate::protocol::ProtocolCheck;
use crate::runner::check::replanned;
use crate::runner::{RunOptions, Status, Trial};
use crate::scenario::Scenario;
use crate::store::{RunReader, SavedTrial};
use crate::suite;
use mutate::Printed;
use std::path::PathBuf;
use std::time::Instant;

/// Audits every passing saved trial whose scenario is in `scenarios`, each checked against
/// what `planner` plans for it again.
pub fn audit(scenarios: &[Scenario], saved: &[SavedTrial], planner: &Planner) -> Audit {
    let started = Instant::now();
    let (mut audited, mut not_audited) = (Vec::new(), Vec::new());
    for s in saved {
        let Some(scenario) = scenarios.iter().find(|x| x.id == s.key.scenario) else {
            continue;
        };
        match audit_one(scenario, s, planner) {
            Ok(a) => audited.push(a),
            Err(reason) => not_audited.push(NotAudited {
                scenario: s.key.scenario.clone(),
                target: s.key.target.clone(),
                reason: reason.to_string(),
            }),
        }
    }
    let total = |f: fn(&Outcome) -> bool| audited.iter().map(|a| a.count(f)).sum::<usize>();
    let caught = total(|o| matches!(o, Outcome::Caught(_)));
    let missed = total(|o| *o == Outcome::Missed);
    let false_alarms = total(|o| matches!(o, Outcome::FalseAlarm(_)));
    audited.sort_by_key(|a| {
        let weak =
            a.count(|o| *o == Outcome::Missed) + a.count(|o| matches!(o, Outcome::FalseAlarm(_)));
        (std::cmp::Reverse(weak), a.scenario.clone())
    });
    Audit {
        command: String::new(),
        score: if caught + missed == 0 {
            100.0
        } else {
            100.0 * caught as f64 / (caught + missed) as f64
        },
        caught,
        missed,
        false_alarms,
        duration_ms: started.elapsed().as_millis() as u64,
        scenarios: audited,
        not_audited,
    }
}

/// The scenario against its unmutated output (which must pass), then each mutation.
pub fn audit_one(
    scenario: &Scenario,
    saved: &SavedTrial,
    planner: &Planner,
) -> Result<ScenarioAudit, AuditError> {
    if saved.status != Status::Passed {
        return Err(AuditError::NotPassed);
    }
    let trial = Trial::from_saved(saved);
    // The expectation the trial ran against: the release it was held to's block, if one
    // holds it.
    let check = replanned(planner, scenario, &trial, trial.expect_version())
        .map_err(AuditError::Replanned)?;
    let strict = crate::protocol::Policy::Strict;
    let protocol = trial.key.dialect.map(|d| planner.protocol(d, strict));
    let check = Audited {
        check,
        before: protocol_findings(&trial, protocol.as_ref()),
        protocol,
    };
    if let Some(divergence) = first_divergence(&check, &trial) {
        return Err(AuditError::NoLongerPasses { divergence });
    }
    let caps = Captures::new();
    let ignores = |v: &serde_json::Value| {
        let ignore = &check.check.expect.ignore;
        ignore.iter().any(|p| p.0.is_match(v, &trial.vars, &caps))
    };
    let printed = Printed::of(&trial).ignoring(ignores);
    let results = Mutation::ALL
        .into_iter()
        .map(|m| {
            let outcome = match mutate::apply(m, &printed) {
                None => Outcome::NotApplicable,
                Some(mutated) => match (
                    first_divergence(&check, &mutated.on(&trial)),
                    m.is_control(),
                ) {
                    (Some(d), true) => Outcome::FalseAlarm(d),
                    (Some(d), false) => Outcome::Caught(d),
                    (None, true) => Outcome::Held,
                    (None, false) => Outcome::Missed,
                },
            };
            Tried {
                mutation: m,
                outcome,
            }
        })
        .collect();
    Ok(ScenarioAudit {
        scenario: saved.key.scenario.clone(),
        target: saved.key.target.clone(),
        results,
    })
}

/// How much of a divergence's message the report keeps.
const MESSAGE_CHARS: usize = 200;

/// A scenario's expectation, and the protocol inventory's findings on its unmutated
/// output: a mutation is caught by the inventory when it makes a finding that was not there.
struct Audited {
    check: RunPlan,
    /// The trial's dialect's inventories, strict (`None`: the trial does not say its dialect).
    protocol: Option<ProtocolCheck>,
    before: Vec<crate::protocol::Finding>,
}

/// What the protocol inventory finds in `trial` (new and gone alike).
fn protocol_findings(
    trial: &Trial,
    check: Option<&ProtocolCheck>,
) -> Vec<crate::protocol::Finding> {
    let mut t = trial.clone();
    t.protocol.clear();
    if let Some(check) = check {
        crate::runner::protocol::check_trial(check, &mut t);
    }
    t.protocol
}

/// The first divergence of `trial` checked again (else the first protocol finding its
/// unmutated output did not have), as the report words it: sandbox paths and ids
/// redacted, clipped.
fn first_divergence(check: &Audited, trial: &Trial) -> Option<String> {
    let first = crate::runner::check::run(&check.check, trial)
        .into_iter()
        .next()
        .or_else(|| {
            let found = protocol_findings(trial, check.protocol.as_ref());
            let f = found.into_iter().find(|f| {
                !check.before.contains(f) && f.change != crate::protocol::Change::Unchecked
            })?;
            Some(crate::divergence::Divergence::new(
                crate::divergence::Kind::Protocol,
                f.to_string(),
            ))
        })?;
    let mut message = crate::normalize::redact_sandbox_str(&first.message, &trial.vars);
    // Ids differ from run to run; the baseline should not.
    for span in crate::normalize::uuid_spans(&message).into_iter().rev() {
        message.replace_range(span, "$uuid");
    }
    Some(crate::text::clip(&message, MESSAGE_CHARS))
}

/// Options of `streamcheck audit`.
#[derive(Debug, Clone)]
pub struct AuditOptions {
    /// Audit the saved outputs of this earlier run instead of running the scenarios.
    pub from: Option<PathBuf>,
    /// Where the fresh run's reports go.
    pub run_dir: PathBuf,
    /// Where audit.md and audit.json go.
    pub report_dir: PathBuf,
    pub jobs: usize,
    pub run: RunOptions,
    /// The command line, written at the top of audit.md.
    pub command: String,
    /// The project the scenarios are of.
    pub project: Project,
}

/// Runs the scenarios (or reads an earlier run), audits them, writes audit.md and
/// audit.json, and returns the audit and the summary to print.
pub async fn command(
    scenarios: Vec<Scenario>,
    targets: &[Result<Target, NotInstalled>],
    opts: &AuditOptions,
) -> Result<(Audit, String), AuditError> {
    let run_dir = match &opts.from {
        Some(dir) => dir.clone(),
        None => {
            suite::run_and_report(
                &opts.run_dir,
                scenarios.clone(),
                targets,
                opts.jobs,
                opts.run.clone(),
                Vec::new(),
                |_, _| {},
            )
            .await?;
            opts.run_dir.clone()
        }
    };
    let saved = RunReader::open(&run_dir).saved()?;
    let planner = Planner::new(&opts.project)?;
    let audit = Audit {
        command: opts.command.clone(),
        ..audit(&scenarios, &saved, &planner)
    };
    render::write(&opts.report_dir, &audit).map_err(FileError::at(&opts.report_dir))?;
    let summary = render::summary(&audit, &opts.report_dir);
    Ok((audit, summary))
}

#[cfg(test)]
mod tests;
