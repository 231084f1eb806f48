//! A scenario and a target resolved into one trial plan before anything runs: fixtures
//! substituted, the version block chosen and the release-wide rules applied, the runs and
//! each run's client laid out. The runner executes a plan and checks it; it decides nothing.

pub mod launch;

use crate::client;
use crate::client::script::Line;
use crate::client::session::{ClosePolicy, Plan as ClientPlan};
use crate::divergence::{Divergence, Kind};
use crate::install::Target;
use crate::runner::trial::{AsWritten, LetThrough, RunOptions, Trial};
use crate::scenario::{CloseStdin, RunSpec, Scenario, StdinLine, TargetExpect};

/// One trial, resolved.
pub struct TrialPlan {
    /// The scenario with `$FIXTURES` substituted.
    pub scenario: Scenario,
    /// The expectation: the version block for the release the trial is held to, with the
    /// release-wide rules applied (empty when the trial runs as written).
    pub expect: TargetExpect,
    /// The release whose expectation the trial is held to, when not the target's own.
    pub held_to: Option<String>,
    /// Things to say in the trial's notes (it runs as written, or despite a missing feature).
    pub notes: Vec<String>,
    /// The CLI runs of the trial, in order: one, or a multi-run scenario's `runs`; only the
    /// first when the expectation is a skip (the run that confirms its reason).
    pub runs: Vec<RunPlan>,
}

/// One CLI run: the scenario and expectation as that run sees them.
pub struct RunPlan {
    pub scenario: Scenario,
    pub expect: TargetExpect,
}

/// A trial without a plan: already decided (skipped, or failed before it ran).
pub type Decided = Box<Trial>;

/// Resolves `scenario` on `target`, or the trial it already is (skipped, or failed).
pub fn resolve(
    scenario: &Scenario,
    target: &Target,
    opts: &RunOptions,
) -> Result<TrialPlan, Decided> {
    let scenario = crate::fixtures::prepare(scenario, &target.project.root)
        .map_err(|why| failed(scenario, target, Divergence::new(Kind::Fixture, why)))?
        .into_owned();
    let key = target.dialect.conventions().expect_key();
    let version = opts
        .expect_for
        .as_deref()
        .unwrap_or(target.expect_version());
    let held_to = (version != target.version).then(|| version.to_string());
    let printed_by = match opts.let_through {
        LetThrough::HeldTo => version,
        LetThrough::AlsoPrinting => target.expect_version(),
    };
    let mut notes = Vec::new();
    let found = crate::expectation::for_version(&scenario.file.expect, key, version)
        .map(|e| target.rules.apply_printed_by(e, version, printed_by).0);
    let expect = match found {
        Some(expect) => expect,
        None if opts.without_expectation != AsWritten::No => {
            let why = match opts.without_expectation {
                AsWritten::ToRecord => "to record its first one",
                _ => "for comparison",
            };
            notes.push(format!("no expectation for {key}: ran as written, {why}"));
            TargetExpect::default()
        }
        None => {
            let why = format!("the scenario has no expectation for {key}");
            return Err(skipped(&scenario, target, why));
        }
    };
    if let Some(reason) = target.unmet(&scenario, &expect) {
        if opts.without_expectation != AsWritten::ToCompare {
            return Err(skipped(&scenario, target, reason));
        }
        notes.push(format!("ran for comparison although: {reason}"));
    }
    let mut runs = runs(&scenario, &expect);
    if expect.skip.is_some() {
        runs.truncate(1);
    }
    Ok(TrialPlan {
        scenario,
        expect,
        held_to,
        notes,
        runs,
    })
}

/// The expectation `key` gets at `version` for output `printed_by` printed: its version
/// block with the release-wide rules applied; `None` when the scenario has none for `key`.
pub fn expectation_at(
    scenario: &Scenario,
    key: &str,
    root: &std::path::Path,
    version: &str,
    printed_by: &str,
) -> Result<Option<TargetExpect>, String> {
    let Some(expect) = crate::expectation::for_version(&scenario.file.expect, key, version) else {
        return Ok(None);
    };
    crate::expectation::rules::applied(root, key, expect, version, printed_by).map(Some)
}

fn skipped(scenario: &Scenario, target: &Target, why: String) -> Decided {
    Box::new(Trial::skipped(scenario, &target.name, &target.version, why).of(target))
}

fn failed(scenario: &Scenario, target: &Target, why: Divergence) -> Decided {
    let mut trial = Trial::new(scenario, &target.name, &target.version).of(target);
    trial.status = crate::runner::trial::Status::Failed;
    trial.divergences.push(why);
    Box::new(trial)
}

fn runs(scenario: &Scenario, expect: &TargetExpect) -> Vec<RunPlan> {
    if scenario.file.runs.is_empty() {
        return vec![RunPlan {
            scenario: scenario.clone(),
            expect: expect.clone(),
        }];
    }
    let each = scenario.file.runs.iter().enumerate();
    each.map(|(index, spec)| RunPlan {
        scenario: for_run(scenario, spec),
        expect: expect.runs.get(index).cloned().unwrap_or_default(),
    })
    .collect()
}

/// The scenario as a single run: the run's args follow the scenario's; its prompt, stdin
/// and stub replace the scenario's.
pub fn for_run(scenario: &Scenario, spec: &RunSpec) -> Scenario {
    let mut one = scenario.clone();
    one.file.args.extend(spec.args.iter().cloned());
    one.file.prompt = spec.prompt.clone().or(one.file.prompt);
    one.file.stdin = spec.stdin.clone().or(one.file.stdin);
    one.file.stub = spec.stub.clone();
    one.file.runs.clear();
    one
}

/// The client plan for a scenario on a target, `None` when stdin is not used at all.
pub fn client_plan(scenario: &Scenario, expect: &TargetExpect) -> Option<ClientPlan> {
    if let Some(spec) = &scenario.file.client {
        let profile = spec
            .profile
            .as_deref()
            .map(|p| client::profile::get(p).expect("checked when the scenario was loaded"));
        let initialize = match (&spec.initialize, profile) {
            (Some(serde_json::Value::Bool(false)), _) | (_, None) => None,
            (over, Some(p)) => Some(p.initialize(over.as_ref())),
        };
        return Some(ClientPlan {
            profile,
            initialize,
            lines: spec.conversation.clone(),
            responders: spec.respond.clone(),
            close: ClosePolicy::WhenSettled {
                turns: scenario.turns(expect),
            },
            one_first_write: spec.one_first_write,
            split_utf8_chars: spec.split_utf8_chars,
        });
    }
    let lines = scenario.stdin(expect)?;
    Some(ClientPlan {
        profile: None,
        initialize: None,
        lines: lines
            .iter()
            .map(|l| match l {
                StdinLine::AfterResults { after_results } => Line::AfterResults(*after_results),
                other => Line::Raw(other.to_line().expect("a line to write")),
            })
            .collect(),
        responders: Vec::new(),
        close: match scenario.file.close_stdin {
            CloseStdin::Immediately => ClosePolicy::Immediately,
            CloseStdin::AfterResults { after_results } => ClosePolicy::AfterResults(after_results),
        },
        one_first_write: false,
        split_utf8_chars: false,
    })
}
