//! What one trial is: its status and everything it produced.

use crate::client::ClientLog;
use crate::dialect::Dialect;
use crate::divergence::Divergence;
use crate::install::Target;
use crate::pattern::Vars;
pub use crate::plan::{AsWritten, LetThrough, RunOptions};
use crate::plan::{PlanError, TrialId, TrialPlan};
use crate::printed::exit::Exit;
use crate::printed::output::{Output, Stderr};
use crate::scenario::Scenario;
use crate::trial_id::{ScenarioId, TargetName};
use serde::{Deserialize, Serialize};
use stub_api::JournalEntry;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", content = "reason", rename_all = "snake_case")]
pub enum Status {
    Passed,
    Failed,
    Skipped(String),
    /// Failed, as the target's known-divergence list says it does (the reason).
    Known(String),
    /// Never ran: the target could not be installed or started (the reason). A setup
    /// error, never green.
    Unavailable(String),
}

impl Status {
    /// The trial did not run (skipped, or its target was unavailable).
    pub fn did_not_run(&self) -> Option<&str> {
        match self {
            Status::Skipped(why) | Status::Unavailable(why) => Some(why),
            _ => None,
        }
    }
}

pub use crate::plan::JOURNAL_BUDGET;

/// Which trial it is, the same in a run's results and in its saved output: the scenario,
/// the target it ran on, and which release's expectation and rules held.
///
/// Not the plan's [`TrialId`], whose shape `streamcheck plan` prints: a run folder keeps the
/// target's `conforms_to` (the plan's `printed_by` also depends on the run's options), and
/// a trial of a target that did not resolve has no dialect. [`Trial::id`] makes one from it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrialKey {
    pub scenario: ScenarioId,
    pub target: TargetName,
    /// As the target reported it: text, not a semver version (a command's `--version`,
    /// `unknown`, `-` for a target that could not start).
    pub target_version: String,
    /// The target's dialect: which expectations are its (never read from its name, which
    /// a project file chooses). `None` for a target that could not be resolved, and in
    /// files saved before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dialect: Option<Dialect>,
    /// The release whose expectation the trial was held to, when not the target's own
    /// version (a wrapper conforming to a Claude Code release).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_to: Option<String>,
    /// The dialect's release a command target stands for (see [`Target::conforms_to`]):
    /// the release whose printed frames the rules judge its output as.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conforms_to: Option<String>,
    /// The release whose let-through rules judged the output, when not the one that printed
    /// it: `run --expect-for` holds output to that release's rules alone, and a check of the
    /// saved trial (`audit`) applies the same. `None` in files saved before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judged_as: Option<String>,
}

impl TrialKey {
    /// Scenario `id` on `target` at `version`, nothing else known yet.
    pub fn new(id: &str, target: &str, version: &str) -> TrialKey {
        TrialKey {
            scenario: id.into(),
            target: target.into(),
            target_version: version.to_string(),
            dialect: None,
            held_to: None,
            conforms_to: None,
            judged_as: None,
        }
    }

    /// The version whose expectation this trial was checked against.
    pub fn expect_version(&self) -> &str {
        self.held_to.as_deref().unwrap_or(&self.target_version)
    }

    /// The release that printed its output, as the rules know releases (as
    /// [`Target::expect_version`]).
    pub fn printed_by(&self) -> &str {
        self.conforms_to.as_deref().unwrap_or(&self.target_version)
    }
}

/// Everything one trial produced.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Trial {
    #[serde(flatten)]
    pub key: TrialKey,
    pub scenario_path: String,
    pub description: String,
    #[serde(flatten)]
    pub status: Status,
    /// Why a skipped trial did not run, when the plan decided it (`unsupported`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip_reason: Option<crate::plan::SkipReason>,
    /// The protocol policy its output was checked under, when not off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_policy: Option<crate::protocol::check::Policy>,
    pub divergences: Vec<Divergence>,
    /// Things worth knowing that are not divergences (e.g. the CLI closed stdin early).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Known-divergence entries for this trial that matched none of its divergences.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stale_known: Vec<String>,
    pub duration_ms: u64,
    pub command_line: String,
    pub exit: Exit,
    #[serde(skip)]
    pub output: Output,
    #[serde(skip)]
    pub stderr: Stderr,
    #[serde(skip)]
    pub journal: Vec<JournalEntry>,
    /// Requests the stub answered but did not keep, past [`JOURNAL_BUDGET`] of requests
    /// (a CLI in a request loop must not use up the harness's memory).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub requests_dropped: u64,
    /// The expected frames as written (for the report's diff).
    #[serde(skip)]
    pub expected_frames: Vec<serde_json::Value>,
    /// Paths to redact in reports.
    #[serde(skip)]
    pub vars: Vars,
    /// What the scripted client sent and what it could not answer.
    #[serde(skip)]
    pub client: Option<ClientLog>,
    /// In a multi-run scenario: the run (1-based) whose output this trial holds.
    #[serde(skip)]
    pub run: Option<usize>,
    /// How long the stub ran before the CLI started: its journal's times minus this are
    /// on the CLI's clock (the HTML report orders requests among frames with it).
    #[serde(skip)]
    pub stub_lead_ms: u64,
    /// The release-wide rules that held in this trial (each let something through).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<String>,
    /// What its output changes against the protocol inventory (see [`crate::protocol`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub protocol: Vec<crate::protocol::check::Finding>,
}

impl Trial {
    /// The lines the client wrote to the CLI's stdin, in order.
    pub fn written(&self) -> Vec<String> {
        (self.client.iter())
            .flat_map(|c| c.written.iter().map(|(_, l)| l.clone()))
            .collect()
    }

    /// The features it was skipped for lacking (`supports`), if it was.
    pub fn unsupported(&self) -> Option<&[String]> {
        match &self.skip_reason {
            Some(crate::plan::SkipReason::Unsupported(features)) => Some(features),
            _ => None,
        }
    }

    /// The version whose expectation this trial was checked against.
    pub fn expect_version(&self) -> &str {
        self.key.expect_version()
    }

    /// The release that printed its output (see [`TrialKey::printed_by`]).
    pub fn printed_by(&self) -> &str {
        self.key.printed_by()
    }

    /// The identity it was saved with; `Err` when saved without its dialect (by an older
    /// streamcheck).
    pub fn id(&self) -> Result<TrialId, PlanError> {
        let Some(dialect) = self.key.dialect else {
            return Err(PlanError::NoDialect);
        };
        Ok(TrialId {
            scenario: self.key.scenario.clone(),
            target: self.key.target.clone(),
            dialect,
            version: self.key.target_version.clone(),
            held_to: self.expect_version().to_string(),
            printed_by: (self.key.judged_as.clone()).unwrap_or_else(|| self.printed_by().into()),
            run: self.run,
        })
    }

    /// This trial as one of `target`: its dialect and the release it stands for.
    pub(crate) fn of(mut self, target: &Target) -> Trial {
        self.key.dialect = Some(target.dialect);
        self.key.conforms_to.clone_from(&target.conforms_to);
        self
    }

    /// The trial `plan` makes on `target`, before it runs: its key says all that [`Trial::id`]
    /// needs to give the plan's id back.
    pub(crate) fn planned(plan: &TrialPlan, target: &Target) -> Trial {
        let mut trial = Trial::new(&plan.scenario, &target.name, &target.version).of(target);
        trial.key.held_to = plan.held_to();
        trial.key.judged_as =
            (plan.id.printed_by != trial.printed_by()).then(|| plan.id.printed_by.clone());
        trial
    }

    pub(crate) fn new(scenario: &Scenario, target: &str, version: &str) -> Trial {
        Trial {
            scenario_path: scenario.display_path(),
            description: scenario.file.description.clone(),
            ..Trial::blank(&scenario.id, target, version)
        }
    }

    /// A passed trial of scenario `id` with nothing in it yet.
    pub(crate) fn blank(id: &str, target: &str, version: &str) -> Trial {
        Trial {
            key: TrialKey::new(id, target, version),
            scenario_path: String::new(),
            description: String::new(),
            status: Status::Passed,
            skip_reason: None,
            protocol_policy: None,
            divergences: Vec::new(),
            notes: Vec::new(),
            stale_known: Vec::new(),
            duration_ms: 0,
            command_line: String::new(),
            exit: Exit::default(),
            output: Output::default(),
            stderr: Stderr::default(),
            journal: Vec::new(),
            requests_dropped: 0,
            expected_frames: Vec::new(),
            vars: Vars::default(),
            client: None,
            run: None,
            stub_lead_ms: 0,
            rules: Vec::new(),
            protocol: Vec::new(),
        }
    }

    /// A trial whose target could not be installed or started.
    pub fn unavailable(scenario: &Scenario, target: &str, reason: String) -> Trial {
        let mut t = Trial::new(scenario, target, "-");
        t.status = Status::Unavailable(reason);
        t
    }

    /// A trial that did not run, for the target named `target` at `version`.
    pub fn skipped(scenario: &Scenario, target: &str, version: &str, reason: String) -> Trial {
        let mut t = Trial::new(scenario, target, version);
        t.status = Status::Skipped(reason);
        t
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
