//! Runs one scenario against one target: its own stub, sandbox and process group.
//!
//! - [`sandbox`]: the trial's temp dir (work, home, tmp), its files, the stub script
//! - [`process`]: spawning the CLI, feeding stdin, reading stdout/stderr, timeouts, kills
//! - [`output`]: stdout split into frames and bad lines; stderr kept at both ends
//! - [`check`]: the finished trial against its expectation

pub mod check;
pub mod exit;
pub mod output;
pub mod process;
pub(crate) mod runs;
pub mod sandbox;
pub mod saved;

pub use exit::{Exit, Termination};
pub use output::Stderr;

use crate::client::{self, ClientLog};
use crate::divergence::{Divergence, Kind};
use crate::pattern::Vars;
use crate::scenario::{Scenario, TargetExpect};
use crate::target::Target;
use output::Output;
use process::{Input, Limits};
use sandbox::SandboxDir;
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};
use stub_api::{JournalEntry, StubServer};

#[derive(Debug, Clone)]
pub struct RunOptions {
    /// How long a CLI may keep running after its last expected result.
    pub grace: Duration,
    /// Per-trial timeout when the scenario sets none.
    pub timeout: Duration,
    /// What to do with a target the scenario has no expectation for.
    pub without_expectation: AsWritten,
    /// Check against the expectation of this version rather than the target's own
    /// (`bisect` asks whether version v already behaves as a later one is expected to).
    pub expect_for: Option<String>,
    /// A known-divergence entry that matches nothing fails the trial (`--strict`).
    pub strict_known: bool,
}

/// Whether a target the scenario has no expectation for runs it as written (an empty
/// expectation).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum AsWritten {
    /// It is not a trial of that target.
    #[default]
    No,
    /// To record the target's first expectation (`record`); features the target lacks
    /// still skip it.
    ToRecord,
    /// For `compare`, which looks at what the CLI does, not at an expectation: also
    /// despite features the target lacks. An explicit `skip` still skips.
    ToCompare,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            grace: Duration::from_secs(3),
            timeout: Duration::from_secs(60),
            without_expectation: AsWritten::No,
            expect_for: None,
            strict_known: false,
        }
    }
}

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

/// Everything one trial produced.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Trial {
    pub scenario: String,
    pub scenario_path: String,
    pub description: String,
    pub target: String,
    pub target_version: String,
    /// The release whose expectation the trial was held to, when not the target's own
    /// version (a wrapper conforming to a Claude Code release).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_to: Option<String>,
    #[serde(flatten)]
    pub status: Status,
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
}

impl Trial {
    /// The version whose expectation this trial was checked against.
    pub fn expect_version(&self) -> &str {
        self.held_to.as_deref().unwrap_or(&self.target_version)
    }

    fn new(scenario: &Scenario, target: &str, version: &str) -> Trial {
        Trial {
            scenario_path: scenario.display_path(),
            description: scenario.file.description.clone(),
            ..Trial::blank(&scenario.id, target, version)
        }
    }

    /// A passed trial of scenario `id` with nothing in it yet.
    fn blank(id: &str, target: &str, version: &str) -> Trial {
        Trial {
            scenario: id.to_string(),
            scenario_path: String::new(),
            description: String::new(),
            target: target.to_string(),
            target_version: version.to_string(),
            held_to: None,
            status: Status::Passed,
            divergences: Vec::new(),
            notes: Vec::new(),
            stale_known: Vec::new(),
            duration_ms: 0,
            command_line: String::new(),
            exit: Exit::default(),
            output: Output::default(),
            stderr: Stderr::default(),
            journal: Vec::new(),
            expected_frames: Vec::new(),
            vars: Vars::default(),
            client: None,
            run: None,
            stub_lead_ms: 0,
            rules: Vec::new(),
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

/// A trial that could not start because a fixture it needs could not be installed or started.
fn fixture_failed(scenario: &Scenario, target: &Target, why: String) -> Trial {
    let mut trial = Trial::new(scenario, &target.name, &target.version);
    trial.status = Status::Failed;
    trial.divergences.push(Divergence::new(Kind::Fixture, why));
    trial
}

/// Runs `scenario` on `target`. Never panics on anything the CLI does.
pub async fn run(scenario: &Scenario, target: &Target, opts: &RunOptions) -> Trial {
    let resolved = match crate::fixtures::prepare(scenario) {
        Ok(resolved) => resolved,
        Err(why) => return fixture_failed(scenario, target, why),
    };
    let scenario = &*resolved;
    let mut trial = Trial::new(scenario, &target.name, &target.version);
    let key = target.dialect.expect_key();
    let as_written = TargetExpect::default();
    let version = opts
        .expect_for
        .as_deref()
        .unwrap_or(target.expect_version());
    trial.held_to = (version != target.version).then(|| version.to_string());
    let ruled;
    let expect = match crate::expectation::for_version(&scenario.file.expect, key, version) {
        Some(expect) => match crate::expectation::rules::applied(scenario, key, expect, version) {
            Ok(with_rules) => {
                ruled = with_rules;
                &ruled
            }
            Err(why) => {
                trial.divergences.push(spawn_error(&why));
                trial.status = Status::Failed;
                return trial;
            }
        },
        None if opts.without_expectation != AsWritten::No => {
            let why = match opts.without_expectation {
                AsWritten::ToRecord => "to record its first one",
                _ => "for comparison",
            };
            trial
                .notes
                .push(format!("no expectation for {key}: ran as written, {why}"));
            &as_written
        }
        None => {
            trial.status = Status::Skipped(format!("the scenario has no expectation for {key}"));
            return trial;
        }
    };
    if let Some(reason) = target.unmet(scenario, expect) {
        if opts.without_expectation != AsWritten::ToCompare || expect.skip.is_some() {
            trial.status = Status::Skipped(reason);
            return trial;
        }
        let note = format!("ran for comparison although: {reason}");
        trial.notes.push(note);
    }
    trial.expected_frames = expect.frames.iter().map(|e| e.0.source()).collect();
    let started = Instant::now();
    let executed = if scenario.file.runs.is_empty() {
        execute(scenario, expect, target, opts, &mut trial).await
    } else {
        runs::execute_all(scenario, expect, target, opts, &mut trial).await
    };
    if let Err(d) = executed {
        trial.divergences.push(d);
    }
    trial.duration_ms = started.elapsed().as_millis() as u64;
    trial.status = verdict(&mut trial, target, opts.strict_known);
    trial
}

/// Passed, failed, or known when every divergence is one the target's known-divergence
/// list names. A list entry that matches nothing here is stale: noted, and a divergence
/// of its own under `strict`.
fn verdict(trial: &mut Trial, target: &Target, strict: bool) -> Status {
    let dialect = target.dialect.expect_key();
    let stale = (target.known).judge(
        &trial.scenario,
        &target.name,
        dialect,
        &mut trial.divergences,
    );
    for entry in stale {
        let what = entry.describe();
        trial.stale_known.push(what.clone());
        if strict {
            trial.divergences.push(Divergence::new(
                Kind::KnownDivergencePasses,
                format!("{} lists `{what}` as a known divergence, but the trial does not show it now: remove the entry", target.known.file),
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

async fn execute(
    scenario: &Scenario,
    expect: &TargetExpect,
    target: &Target,
    opts: &RunOptions,
    trial: &mut Trial,
) -> Result<(), Divergence> {
    let sandbox = SandboxDir::create(scenario).map_err(|e| spawn_error(&e))?;
    execute_in(&sandbox, scenario, expect, target, opts, trial).await
}

fn spawn_error(e: &dyn std::fmt::Display) -> Divergence {
    Divergence::new(Kind::Spawn, e.to_string())
}

/// One CLI run in an existing sandbox (a multi-run scenario calls it once per run).
async fn execute_in(
    sandbox: &SandboxDir,
    scenario: &Scenario,
    expect: &TargetExpect,
    target: &Target,
    opts: &RunOptions,
    trial: &mut Trial,
) -> Result<(), Divergence> {
    trial.vars = sandbox.vars();
    target
        .prepare_home(&sandbox.home)
        .map_err(|e| spawn_error(&format!("cannot prepare the CLI's HOME: {e}")))?;
    let script = sandbox.stub_script(scenario, target.dialect, &target.tools);
    let server = StubServer::start(script)
        .await
        .map_err(|e| spawn_error(&format!("cannot start the stub: {e}")))?;
    let stub_started = Instant::now();
    let base_url = server.base_url();
    let inv = target.invocation(scenario, expect, &sandbox.for_target(&base_url));
    trial.command_line = inv.display();

    let limits = Limits {
        timeout: expect.timeout.map_or(opts.timeout, Duration::from_secs),
        grace: opts.grace,
        turns: scenario.turns(expect),
    };
    let input = Input {
        client: client::plan(scenario, expect).map(|p| client::Client::new(p, trial.vars.clone())),
        signal: scenario.file.signal.clone(),
    };
    let process = process::drive(input, &inv, &sandbox.workspace, &limits).await;
    trial.journal = server.journal();
    server.shutdown().await;

    let process = process?;
    let lead = process.started.saturating_duration_since(stub_started);
    trial.stub_lead_ms = lead.as_millis() as u64;
    trial.exit = process.exit;
    trial.output = process.output;
    trial.stderr = process.stderr;
    trial.client = process.client;
    if let Some(e) = &process.stdin_error {
        trial.notes.push(format!(
            "writing stdin failed: {e} (the CLI closed it early)"
        ));
    }
    let divergences = check::expectation(scenario, expect, trial, limits.timeout);
    trial.divergences.extend(divergences);
    trial.rules = check::rules_held(expect, trial);
    Ok(())
}
