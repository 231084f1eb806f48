//! `streamcheck audit`: mutation testing of the suite itself. Each passing trial's saved
//! output is mutated one protocol change at a time and its scenario checked again with
//! the runner's own checks, without running the CLI: a mutation the scenario lets
//! through is a miss, a control (a change of form, not of meaning) it rejects is a false
//! alarm.
//!
//! - [`mutate`]: one [`Mutation`] applied to what a trial printed
//! - [`render`]: audit.md and audit.json

pub mod mutate;
pub mod render;

use crate::pattern::Captures;
use crate::runner::check::Recheck;
use crate::runner::saved::SavedTrial;
use crate::runner::{RunOptions, Status, Trial};
use crate::scenario::Scenario;
use crate::suite;
use crate::target::{NotInstalled, Target};
use mutate::Printed;
use serde::Serialize;
use std::fmt;
use std::path::PathBuf;
use std::time::Instant;

/// One change to a CLI's output. The last four are controls: they change the form of
/// the output, not what it says, so no scenario should fail on them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mutation {
    DropFrame,
    DuplicateFrame,
    SwapFramesAfterInit,
    ChangeType,
    ChangeSubtype,
    FlipIsError,
    ChangeResultText,
    ChangeAssistantText,
    ChangeToolName,
    ChangeToolUseId,
    ChangeSessionId,
    ChangeExitCode,
    InsertNonJson,
    FrameAfterResult,
    HangAfterResult,
    KeyOrder,
    Whitespace,
    StringEscapes,
    UnrelatedStderr,
}

impl Mutation {
    pub const ALL: [Mutation; 19] = [
        Mutation::DropFrame,
        Mutation::DuplicateFrame,
        Mutation::SwapFramesAfterInit,
        Mutation::ChangeType,
        Mutation::ChangeSubtype,
        Mutation::FlipIsError,
        Mutation::ChangeResultText,
        Mutation::ChangeAssistantText,
        Mutation::ChangeToolName,
        Mutation::ChangeToolUseId,
        Mutation::ChangeSessionId,
        Mutation::ChangeExitCode,
        Mutation::InsertNonJson,
        Mutation::FrameAfterResult,
        Mutation::HangAfterResult,
        Mutation::KeyOrder,
        Mutation::Whitespace,
        Mutation::StringEscapes,
        Mutation::UnrelatedStderr,
    ];

    pub fn is_control(self) -> bool {
        matches!(
            self,
            Mutation::KeyOrder
                | Mutation::Whitespace
                | Mutation::StringEscapes
                | Mutation::UnrelatedStderr
        )
    }

    /// What a scenario that misses this mutation should pin (or, for a control it
    /// fails, loosen).
    pub fn hint(self) -> &'static str {
        match self {
            Mutation::DropFrame => "list the frames it is about in exact mode: a dropped frame goes unseen",
            Mutation::DuplicateFrame => "match its frames in exact mode rather than `subsequence` or a broad `ignore`",
            Mutation::SwapFramesAfterInit => "pin the frames after system/init in their order (exact mode)",
            Mutation::ChangeType => "pin `type` on every frame it lists",
            Mutation::ChangeSubtype => "pin the result's `subtype`",
            Mutation::FlipIsError => "pin `is_error` on the result",
            Mutation::ChangeResultText => "pin the result's `result` exactly or with an anchored regex (^…$)",
            Mutation::ChangeAssistantText => "pin the assistant's text block",
            Mutation::ChangeToolName => "pin the tool_use `name`",
            Mutation::ChangeToolUseId => "pin the scripted tool_use `id` (and `tool_use_id` of its result)",
            Mutation::ChangeSessionId => "capture session_id in system/init and $ref it, and keep the session_matches_request invariant",
            Mutation::ChangeExitCode => "pin `exit_code` (or keep the exit_code_matches_result invariant)",
            Mutation::InsertNonJson => "keep the ndjson_only invariant",
            Mutation::FrameAfterResult => "keep the result_ends_turn invariant, or list every frame in exact mode",
            Mutation::HangAfterResult => "keep the exits_after_result invariant",
            Mutation::KeyOrder => "a pattern depends on key order",
            Mutation::Whitespace => "a rule reads stdout as text where it should read frames",
            Mutation::StringEscapes => "a rule reads stdout as text where it should read frames",
            Mutation::UnrelatedStderr => "the stderr rule is too strict: match only the line it is about",
        }
    }
}

impl fmt::Display for Mutation {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(match self {
            Mutation::DropFrame => "drop a frame",
            Mutation::DuplicateFrame => "duplicate a frame",
            Mutation::SwapFramesAfterInit => "swap the two frames after init",
            Mutation::ChangeType => "change a frame's type",
            Mutation::ChangeSubtype => "change the result's subtype",
            Mutation::FlipIsError => "flip the result's is_error",
            Mutation::ChangeResultText => "alter the result text",
            Mutation::ChangeAssistantText => "alter an assistant text",
            Mutation::ChangeToolName => "change a tool name",
            Mutation::ChangeToolUseId => "change a tool_use_id",
            Mutation::ChangeSessionId => "change the session_id",
            Mutation::ChangeExitCode => "change the exit code",
            Mutation::InsertNonJson => "insert a non-JSON line",
            Mutation::FrameAfterResult => "a frame after the result",
            Mutation::HangAfterResult => "hang after the result",
            Mutation::KeyOrder => "control: key order",
            Mutation::Whitespace => "control: whitespace",
            Mutation::StringEscapes => "control: string escapes",
            Mutation::UnrelatedStderr => "control: unrelated stderr",
        })
    }
}

/// What one mutation did to one scenario.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", content = "divergence", rename_all = "snake_case")]
pub enum Outcome {
    /// The scenario failed on the mutation (its first divergence).
    Caught(String),
    Missed,
    /// The output has nothing this mutation could change.
    NotApplicable,
    /// A control the scenario passed.
    Held,
    /// A control the scenario failed on (its first divergence).
    FalseAlarm(String),
}

/// One mutation of one scenario's output, and what the scenario made of it.
#[derive(Debug, Clone, Serialize)]
pub struct Tried {
    pub mutation: Mutation,
    #[serde(flatten)]
    pub outcome: Outcome,
}

#[derive(Debug, Clone, Serialize)]
pub struct ScenarioAudit {
    pub scenario: String,
    pub target: String,
    pub results: Vec<Tried>,
}

impl ScenarioAudit {
    pub fn count(&self, f: impl Fn(&Outcome) -> bool) -> usize {
        self.results.iter().filter(|t| f(&t.outcome)).count()
    }
}

/// A trial that could not be audited, and why.
#[derive(Debug, Clone, Serialize)]
pub struct NotAudited {
    pub scenario: String,
    pub target: String,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Audit {
    /// The command that made this report.
    #[serde(default)]
    pub command: String,
    /// Caught mutations out of those that applied, in percent.
    pub score: f64,
    pub caught: usize,
    pub missed: usize,
    pub false_alarms: usize,
    pub duration_ms: u64,
    pub scenarios: Vec<ScenarioAudit>,
    pub not_audited: Vec<NotAudited>,
}

/// Audits every passing saved trial whose scenario is in `scenarios`.
pub fn audit(scenarios: &[Scenario], saved: &[SavedTrial]) -> Audit {
    let started = Instant::now();
    let (mut audited, mut not_audited) = (Vec::new(), Vec::new());
    for s in saved {
        let Some(scenario) = scenarios.iter().find(|x| x.id == s.scenario) else {
            continue;
        };
        match audit_one(scenario, s) {
            Ok(a) => audited.push(a),
            Err(reason) => not_audited.push(NotAudited {
                scenario: s.scenario.clone(),
                target: s.target.clone(),
                reason,
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
pub fn audit_one(scenario: &Scenario, saved: &SavedTrial) -> Result<ScenarioAudit, String> {
    if saved.status != Status::Passed {
        return Err("the trial did not pass, so there is nothing to mutate".into());
    }
    let trial = Trial::from_saved(saved);
    // The expectation the trial ran against: its version's block, if one holds it.
    let check = Recheck::new(scenario, &trial, &trial.target_version)?;
    if let Some(d) = first_divergence(&check, &trial) {
        return Err(format!("its saved output no longer passes: {d}"));
    }
    let caps = Captures::new();
    let ignores = |v: &serde_json::Value| {
        let ignore = &check.expect.ignore;
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
        scenario: saved.scenario.clone(),
        target: saved.target.clone(),
        results,
    })
}

/// How much of a divergence's message the report keeps.
const MESSAGE_CHARS: usize = 200;

/// The first divergence of `trial` checked again, as the report words it: sandbox paths
/// and ids redacted, clipped.
fn first_divergence(check: &Recheck, trial: &Trial) -> Option<String> {
    let first = check.divergences(trial).into_iter().next()?;
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
}

/// Runs the scenarios (or reads an earlier run), audits them, writes audit.md and
/// audit.json, and returns the summary to print.
pub async fn command(
    scenarios: Vec<Scenario>,
    targets: &[Result<Target, NotInstalled>],
    opts: &AuditOptions,
) -> Result<String, String> {
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
            .await
            .map_err(|e| e.to_string())?;
            opts.run_dir.clone()
        }
    };
    let saved = SavedTrial::read_all(&run_dir)?;
    let audit = Audit {
        command: opts.command.clone(),
        ..audit(&scenarios, &saved)
    };
    render::write(&opts.report_dir, &audit)
        .map_err(|e| format!("{}: {e}", opts.report_dir.display()))?;
    Ok(render::summary(&audit, &opts.report_dir))
}

#[cfg(test)]
mod tests;
