//! Everything decided for a trial, once, before anything runs: which trial it is
//! ([`TrialId`]), whether and why it runs ([`Decision`]), and per CLI run everything the
//! runner needs but the sandbox's paths ([`RunPlan`]: the scenario as that run sees it,
//! its expectation with the release-wide rules applied, its limits and its client).
//!
//! A [`Planner`] holds the per-dialect rules, loaded once. [`Planner::plan`] plans a trial
//! on an installed target; [`Planner::replan`] plans a finished trial again from its
//! identity alone, so `audit` and `bisect` check saved output against the very plan the
//! run would have made. The runner executes plans; it decides nothing.

pub mod checks;
pub mod describe;
pub mod launch;
mod options;
pub mod stub;

pub use options::{AsWritten, LetThrough, RunOptions};

use crate::client;
use crate::client::script::Line;
use crate::client::session::{ClosePolicy, Plan as ClientPlan};
use crate::dialect::Dialect;
use crate::expectation::rules::Rules;
use crate::install::{DialectData, InstallError, Project, Target};
use crate::known::KnownList;
use crate::protocol::{Policy, ProtocolCheck};
use crate::scenario::{CloseStdin, RunSpec, Scenario, StdinLine, TargetExpect};
use crate::trial_id::{ScenarioId, TargetName};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// Which trial: a scenario on one target at one release, held to one release's
/// expectation; in a multi-run scenario, one run of it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TrialId {
    pub scenario: ScenarioId,
    /// The target's name (`claude-code`, a `[targets.NAME]`, a command's file name).
    pub target: TargetName,
    pub dialect: Dialect,
    /// The CLI's version.
    pub version: String,
    /// The release whose expectation the trial is held to.
    pub held_to: String,
    /// The release whose let-through rules judge the output: the one it stands for, as the
    /// rules know releases (a command target's `conforms_to`, else its own version); with
    /// `--expect-for` and [`LetThrough::HeldTo`], the held-to release, whose rules alone apply.
    pub printed_by: String,
    /// In a multi-run scenario: the run (1-based).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run: Option<usize>,
}

impl TrialId {
    /// The same trial held to `release`'s expectation instead.
    pub fn held_to(&self, release: &str) -> TrialId {
        TrialId {
            held_to: release.to_string(),
            ..self.clone()
        }
    }
}

/// Whether a trial runs, and why not.
#[derive(Debug, Clone)]
pub enum Decision {
    /// It runs against its expectation (a `skip:` expectation runs once, to confirm its reason).
    Run,
    /// It runs as written, with an empty expectation: the scenario has none for the dialect.
    AsWritten(AsWritten),
    /// It does not run.
    Skip(SkipReason),
}

/// Why a planned trial does not run.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// The scenario has no expectation for the dialect (no trial of it, unless a command
    /// runs it as written).
    NoExpectation(Dialect),
    /// The target lacks a feature the scenario needs (`features:`), or the expectation
    /// asks for one it lacks.
    Unmet(String),
    /// The scenario needs features the project file says the target does not support
    /// (`supports`): the features.
    Unsupported(Vec<String>),
}

impl std::fmt::Display for SkipReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SkipReason::NoExpectation(d) => write!(
                f,
                "the scenario has no expectation for {}",
                d.conventions().expect_key()
            ),
            SkipReason::Unmet(why) => f.write_str(why),
            SkipReason::Unsupported(features) => {
                write!(f, "unsupported: needs {}", features.join(", "))
            }
        }
    }
}

/// Why a finished trial cannot be planned again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanError {
    NoDialect,
    NoExpectation(Dialect),
    RunUnknown,
    RunGone(usize),
    NoRules(Dialect),
    Truncated,
}

impl std::fmt::Display for PlanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PlanError::NoDialect => f.write_str("its saved output does not say the target's dialect (saved by an older streamcheck): run it again"),
            PlanError::NoExpectation(d) => write!(f, "the scenario has no expectation for {}", d.conventions().expect_key()),
            PlanError::RunUnknown => f.write_str("it has several runs and its saved output does not say which one it is"),
            PlanError::RunGone(n) => write!(f, "its saved output is from run {n}, which the scenario no longer has"),
            PlanError::NoRules(d) => write!(f, "no rules loaded for {}", d.conventions().expect_key()),
            PlanError::Truncated => f.write_str("its stdout was too long to be saved whole"),
        }
    }
}

impl std::error::Error for PlanError {}

/// The requests a trial keeps in memory (approximate bytes): far above what any scenario
/// sends (a turn's request carries the whole conversation, ~100 KB), far below what a CLI
/// that asks again and again in a loop sends in a trial's timeout.
pub const JOURNAL_BUDGET: usize = 16 * 1024 * 1024;

/// The clocks of one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    pub timeout: Duration,
    /// How long the CLI may keep running after its `turns`-th result (or after it
    /// closed stdout).
    pub grace: Duration,
    pub turns: usize,
    /// How long a control request the client sent may wait for its answer.
    pub answer_within: Option<Duration>,
}

/// One trial, decided.
pub struct TrialPlan {
    pub id: TrialId,
    pub decision: Decision,
    /// The scenario with `$FIXTURES` substituted.
    pub scenario: Scenario,
    /// The expectation: the version block for the release the trial is held to, with the
    /// release-wide rules applied (empty when the trial runs as written).
    pub expect: TargetExpect,
    /// The project whose fixtures the runner installs before the trial (`$FIXTURES`).
    pub fixtures: Option<std::path::PathBuf>,
    /// Things to say in the trial's notes (it runs as written, or despite a missing feature).
    pub notes: Vec<String>,
    /// The CLI runs of the trial, in order: one, or a multi-run scenario's `runs`; only the
    /// first when the expectation is a skip (the run that confirms its reason).
    pub runs: Vec<RunPlan>,
    /// The known divergences its verdict may mark.
    pub known: KnownCheck,
}

/// The known-divergence entries a trial's verdict is judged with: its target's list (the
/// dialect's, with the project's own), and whether an entry that matches nothing fails
/// the trial (`--strict`). A plan made again from a finished trial ([`Planner::replan`])
/// has none: the commands that judge saved output match entries themselves.
#[derive(Debug, Clone, Default)]
pub struct KnownCheck {
    pub list: Arc<KnownList>,
    pub strict: bool,
}

impl TrialPlan {
    /// The release the trial is held to, when not the target's own.
    pub fn held_to(&self) -> Option<String> {
        (self.id.held_to != self.id.version).then(|| self.id.held_to.clone())
    }

    /// The run a finished trial's output is from: its number in a multi-run scenario.
    pub fn run(&self, number: Option<usize>) -> Result<&RunPlan, PlanError> {
        if self.scenario.file.runs.is_empty() {
            return self.runs.first().ok_or(PlanError::RunGone(1));
        }
        let number = number.ok_or(PlanError::RunUnknown)?;
        let found = number.checked_sub(1).and_then(|i| self.runs.get(i));
        found.ok_or(PlanError::RunGone(number))
    }
}

/// One CLI run: the scenario and expectation as that run sees them, and its limits.
#[derive(Debug, Clone)]
pub struct RunPlan {
    pub scenario: Scenario,
    pub expect: TargetExpect,
    pub limits: Limits,
    /// The inventories the output is checked against, and what their findings do to it.
    pub protocol: crate::protocol::ProtocolCheck,
    /// The process it starts, the sandbox's places still to fill in; `None` in a plan made
    /// again from a finished trial's identity ([`Planner::replan`]), which does not run.
    pub launch: Option<launch::Launch>,
}

impl RunPlan {
    /// The scripted client of this run, `None` when stdin is not used at all.
    pub fn client(&self) -> Option<ClientPlan> {
        client_plan(&self.scenario, &self.expect)
    }
}

/// Plans trials, with each dialect's data (rules, protocol inventories) as its project or
/// its target loaded it.
pub struct Planner {
    project: Project,
    data: BTreeMap<Dialect, Arc<DialectData>>,
}

impl Planner {
    /// A planner for the project at `project`, with every dialect's data (read now, so a
    /// file that does not load is this error).
    pub fn new(project: &Project) -> Result<Planner, InstallError> {
        let data = (Dialect::ALL.iter())
            .map(|&d| Ok((d, project.data(d)?)))
            .collect::<Result<_, InstallError>>()?;
        Ok(Planner {
            project: project.clone(),
            data,
        })
    }

    /// A planner for one resolved target, with the data it was resolved with.
    pub fn for_target(target: &Target) -> Planner {
        Planner {
            project: target.project.clone(),
            data: BTreeMap::from([(target.dialect, target.data.clone())]),
        }
    }

    /// The project it plans in.
    pub fn project(&self) -> &Project {
        &self.project
    }

    fn rules(&self, dialect: Dialect) -> Result<&Rules, PlanError> {
        (self.data.get(&dialect).map(|d| &*d.rules)).ok_or(PlanError::NoRules(dialect))
    }

    /// The check of `dialect`'s output under `policy`, against the inventories read with
    /// its data.
    pub fn protocol(&self, dialect: Dialect, policy: Policy) -> ProtocolCheck {
        match self.data.get(&dialect) {
            Some(d) => d.protocol.under(policy),
            None => ProtocolCheck::load(policy, &self.project.root, dialect),
        }
    }

    /// Plans `scenario` on `target`.
    pub fn plan(&self, scenario: &Scenario, target: &Target, opts: &RunOptions) -> TrialPlan {
        let held_to = (opts.expect_for.as_deref())
            .unwrap_or(target.expect_version())
            .to_string();
        let printed_by = match opts.let_through {
            LetThrough::HeldTo => held_to.clone(),
            LetThrough::AlsoPrinting => target.expect_version().to_string(),
        };
        let id = TrialId {
            scenario: scenario.id.clone(),
            target: target.name.clone(),
            dialect: target.dialect,
            version: target.version.clone(),
            held_to,
            printed_by,
            run: None,
        };
        let root = &target.project.root;
        let mut plan = TrialPlan {
            decision: Decision::Run,
            scenario: crate::fixtures::resolve(scenario, root).into_owned(),
            expect: TargetExpect::default(),
            fixtures: crate::fixtures::uses(scenario).then(|| root.clone()),
            notes: Vec::new(),
            runs: Vec::new(),
            known: KnownCheck {
                list: target.known.clone(),
                strict: opts.strict_known,
            },
            id,
        };
        let dialect = target.dialect;
        let rules = &target.data.rules;
        match expectation(
            &plan.scenario,
            rules,
            dialect,
            &plan.id.held_to,
            &plan.id.printed_by,
        ) {
            Some(expect) => plan.expect = expect,
            None if opts.without_expectation != AsWritten::No => {
                let why = match opts.without_expectation {
                    AsWritten::ToRecord => "to record its first one",
                    _ => "for comparison",
                };
                let key = dialect.conventions().expect_key();
                plan.notes
                    .push(format!("no expectation for {key}: ran as written, {why}"));
                plan.decision = Decision::AsWritten(opts.without_expectation);
            }
            None => {
                plan.decision = Decision::Skip(SkipReason::NoExpectation(dialect));
                return plan;
            }
        }
        let unsupported = target.unsupported(&plan.scenario, &plan.expect);
        if !unsupported.is_empty() && opts.without_expectation != AsWritten::ToCompare {
            plan.decision = Decision::Skip(SkipReason::Unsupported(unsupported));
            return plan;
        }
        if let Some(reason) = target.unmet(&plan.scenario, &plan.expect) {
            if opts.without_expectation != AsWritten::ToCompare {
                plan.decision = Decision::Skip(SkipReason::Unmet(reason));
                return plan;
            }
            plan.notes
                .push(format!("ran for comparison although: {reason}"));
        }
        let policy = target.declared.protocol.unwrap_or(opts.protocol);
        let protocol = self.protocol(dialect, policy);
        plan.runs = runs(&plan.scenario, &plan.expect, opts, protocol);
        if plan.expect.skip.is_some() {
            plan.runs.truncate(1);
        }
        for run in &mut plan.runs {
            run.launch = Some(target.launch(&run.scenario, &run.expect));
        }
        plan
    }

    /// Plans a finished trial again from its identity, in this planner's project, with
    /// default limits: what `audit` and `bisect` check saved output against.
    pub fn replan(&self, scenario: &Scenario, id: &TrialId) -> Result<TrialPlan, PlanError> {
        let root = &self.project.root;
        let fixtures = crate::fixtures::uses(scenario).then(|| root.clone());
        let scenario = crate::fixtures::resolve(scenario, root).into_owned();
        let rules = self.rules(id.dialect)?;
        let expect = expectation(&scenario, rules, id.dialect, &id.held_to, &id.printed_by)
            .ok_or(PlanError::NoExpectation(id.dialect))?;
        let opts = RunOptions::default();
        let protocol = self.protocol(id.dialect, opts.protocol);
        let runs = runs(&scenario, &expect, &opts, protocol);
        Ok(TrialPlan {
            id: id.clone(),
            decision: Decision::Run,
            scenario,
            expect,
            fixtures,
            notes: Vec::new(),
            runs,
            known: KnownCheck::default(),
        })
    }

    /// The expectation `dialect` gets at `version` for output `printed_by` printed, with
    /// the rules applied; `None` when the scenario has none for it.
    pub fn expectation(
        &self,
        scenario: &Scenario,
        dialect: Dialect,
        version: &str,
        printed_by: &str,
    ) -> Result<Option<TargetExpect>, PlanError> {
        let rules = self.rules(dialect)?;
        Ok(expectation(scenario, rules, dialect, version, printed_by))
    }
}

/// The version block `dialect` gets at `version`, as written (no rules applied): the one
/// place a scenario's `expect` keys are looked up for a trial.
pub fn block<'a>(
    scenario: &'a Scenario,
    dialect: Dialect,
    version: &str,
) -> Option<&'a TargetExpect> {
    let key = dialect.conventions().expect_key();
    crate::expectation::for_version(&scenario.file.expect, key, version)
}

fn expectation(
    scenario: &Scenario,
    rules: &Rules,
    dialect: Dialect,
    version: &str,
    printed_by: &str,
) -> Option<TargetExpect> {
    let found = block(scenario, dialect, version)?;
    Some(rules.apply_printed_by(found, version, printed_by).0)
}

fn runs(
    scenario: &Scenario,
    expect: &TargetExpect,
    opts: &RunOptions,
    protocol: ProtocolCheck,
) -> Vec<RunPlan> {
    let one = |scenario: Scenario, expect: TargetExpect| RunPlan {
        limits: Limits {
            timeout: expect.timeout.map_or(opts.timeout, Duration::from_secs),
            grace: opts.grace,
            turns: scenario.turns(&expect),
            answer_within: expect.answer_within.map(Duration::from_secs),
        },
        scenario,
        expect,
        protocol: protocol.clone(),
        launch: None,
    };
    if scenario.file.runs.is_empty() {
        return vec![one(scenario.clone(), expect.clone())];
    }
    let each = scenario.file.runs.iter().enumerate();
    each.map(|(index, spec)| {
        let run_expect = expect.runs.get(index).cloned().unwrap_or_default();
        one(for_run(scenario, spec), run_expect)
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

#[cfg(test)]
mod tests;
