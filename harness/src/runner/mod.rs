//! Runs one scenario against one target: its own stub, sandbox and process group.
//!
//! - [`sandbox`]: the trial's temp dir (work, home, tmp), its files, the stub script
//! - [`process`]: spawning the CLI, feeding stdin, reading stdout/stderr, timeouts, kills
//! - [`output`]: stdout split into frames and bad lines; stderr kept at both ends
//! - [`check`]: the finished trial against its expectation

pub mod check;
pub mod output;
pub mod process;
pub(crate) mod runs;
pub mod sandbox;
pub mod saved;

pub use output::Stderr;
pub use process::{Exit, Termination};

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
}

/// Everything one trial produced.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Trial {
    pub scenario: String,
    pub scenario_path: String,
    pub description: String,
    pub target: String,
    pub target_version: String,
    #[serde(flatten)]
    pub status: Status,
    pub divergences: Vec<Divergence>,
    /// Things worth knowing that are not divergences (e.g. the CLI closed stdin early).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
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
    /// The release-wide rules that held in this trial (each let something through).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<String>,
}

impl Trial {
    fn new(scenario: &Scenario, target: &str, version: &str) -> Trial {
        Trial {
            scenario: scenario.id.clone(),
            scenario_path: scenario.display_path(),
            description: scenario.file.description.clone(),
            target: target.to_string(),
            target_version: version.to_string(),
            status: Status::Passed,
            divergences: Vec::new(),
            notes: Vec::new(),
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
            rules: Vec::new(),
        }
    }

    /// A trial that did not run, for the target named `target` at `version`.
    pub fn skipped(scenario: &Scenario, target: &str, version: &str, reason: String) -> Trial {
        let mut t = Trial::new(scenario, target, version);
        t.status = Status::Skipped(reason);
        t
    }
}

/// Runs `scenario` on `target`. Never panics on anything the CLI does.
pub async fn run(scenario: &Scenario, target: &Target, opts: &RunOptions) -> Trial {
    let resolved = crate::fixtures::resolve(scenario);
    let scenario = &*resolved;
    let mut trial = Trial::new(scenario, &target.name, &target.version);
    let key = target.dialect.expect_key();
    let as_written = TargetExpect::default();
    let version = opts.expect_for.as_deref().unwrap_or(&target.version);
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
    trial.status = verdict(&mut trial, target);
    trial
}

/// Passed or failed, as the target's known-divergence list expects; a listed scenario
/// that passes is a divergence of the list.
fn verdict(trial: &mut Trial, target: &Target) -> Status {
    match (
        trial.divergences.is_empty(),
        target.known.get(&trial.scenario),
    ) {
        (true, None) => Status::Passed,
        (false, None) => Status::Failed,
        (false, Some(why)) => Status::Known(why.clone()),
        (true, Some(_)) => {
            trial.divergences.push(Divergence::new(
                Kind::KnownDivergencePasses,
                format!(
                    "listed in {} as a known divergence, but it passes now: remove it from the list",
                    target.known_file()
                ),
            ));
            Status::Failed
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
