//! What drift reads (per version, per scenario: a view of the trial its run folder
//! holds) and what it reports (per pair of neighbouring versions: what changed).
//! drift.json is these types serialised.

use crate::divergence::Divergence;
use crate::frame::is_result;
use crate::normalize::{redact_sandbox, redact_sandbox_str};
use crate::protocol::check;
use crate::runner::{Exit, Status, Trial};
use crate::text::clip;
use crate::trial_id::{ScenarioId, TargetName};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;

/// What one version printed in one scenario: a view of its trial, sandbox paths written
/// as `$WORKSPACE` / `$HOME`.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioOutput {
    pub status: Status,
    /// The first divergence of a failed run.
    pub first_divergence: Option<Divergence>,
    pub exit: Exit,
    /// The frames (types kept).
    pub frames: Vec<Value>,
    pub non_json_lines: usize,
    /// The first stderr line, if any.
    pub stderr: Option<String>,
    /// The lines the client wrote (what a `control_response` answers).
    pub written: Vec<String>,
}

impl ScenarioOutput {
    /// A run with this status that printed nothing.
    pub fn with_status(status: Status) -> ScenarioOutput {
        ScenarioOutput {
            status,
            first_divergence: None,
            exit: Exit::default(),
            frames: Vec::new(),
            non_json_lines: 0,
            stderr: None,
            written: Vec::new(),
        }
    }

    /// A trial as the differ sees it.
    pub fn of(trial: &Trial) -> ScenarioOutput {
        let hide = |s: &str| redact_sandbox_str(s, &trial.vars);
        let status = match &trial.status {
            Status::Skipped(why) => Status::Skipped(hide(why)),
            Status::Known(why) => Status::Known(hide(why)),
            Status::Unavailable(why) => Status::Unavailable(hide(why)),
            other => other.clone(),
        };
        let first_divergence = match trial.status {
            Status::Failed => trial.divergences.first().map(|d| Divergence {
                message: hide(&d.message),
                ..d.clone()
            }),
            _ => None,
        };
        let stderr = trial.stderr.text();
        ScenarioOutput {
            status,
            first_divergence,
            exit: trial.exit.clone(),
            frames: (trial.output.frames.iter())
                .map(|f| redact_sandbox(&f.value, &trial.vars))
                .collect(),
            non_json_lines: trial.output.bad_lines.len(),
            stderr: (stderr.lines().map(str::trim))
                .find(|l| !l.is_empty())
                .map(|l| clip(&hide(l), 200)),
            written: trial.written(),
        }
    }

    /// The run's skip reason, known-divergence reason or first divergence (none when empty).
    pub fn reason(&self) -> Option<String> {
        match &self.status {
            Status::Skipped(why) | Status::Known(why) | Status::Unavailable(why) => {
                Some(why.clone())
            }
            Status::Passed | Status::Failed => {
                (self.first_divergence.as_ref()).map(|d| clip(&d.to_string(), 300))
            }
        }
        .filter(|why| !why.is_empty())
    }

    /// The scenario ran (was not skipped).
    pub fn ran(&self) -> bool {
        self.status.did_not_run().is_none()
    }

    /// The result frames' subtypes (`success`, `error_max_turns (is_error)`).
    pub fn result_subtypes(&self) -> Vec<String> {
        self.frames
            .iter()
            .filter(|f| is_result(f))
            .map(|f| {
                let sub = f.get("subtype").and_then(Value::as_str).unwrap_or("-");
                match f.get("is_error") {
                    Some(Value::Bool(true)) => format!("{sub} (is_error)"),
                    _ => sub.to_string(),
                }
            })
            .collect()
    }
}

/// runner's [`Status`] without its reason, and `absent` for a scenario a version does not
/// have: what a status flip is between.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StatusName {
    Passed,
    Failed,
    Known,
    Skipped,
    Absent,
}

impl StatusName {
    pub fn of(status: Option<&Status>) -> StatusName {
        match status {
            None => StatusName::Absent,
            Some(Status::Passed) => StatusName::Passed,
            Some(Status::Failed) => StatusName::Failed,
            Some(Status::Known(_)) => StatusName::Known,
            Some(Status::Skipped(_) | Status::Unavailable(_)) => StatusName::Skipped,
        }
    }
}

impl fmt::Display for StatusName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            StatusName::Passed => "passed",
            StatusName::Failed => "failed",
            StatusName::Known => "known",
            StatusName::Skipped => "skipped",
            StatusName::Absent => "absent",
        })
    }
}

/// Everything one version printed in the suite.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VersionOutputs {
    /// As named on the command line (`claude-code@2.1.74`).
    pub target: String,
    /// The version installed, when it could be.
    pub version: Option<String>,
    /// Why it could not run (not installable...).
    pub unavailable: Option<String>,
    /// Sum of the trials' durations.
    pub trial_ms: u64,
    pub scenarios: BTreeMap<String, ScenarioOutput>,
}

/// What changed between two neighbouring versions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PairDrift {
    pub from: String,
    pub to: String,
    /// Scenarios that ran (not skipped) on both: the ground of the comparison.
    pub compared: usize,
    /// The newer run checked against an inventory of the older one, as `run` and `verdict`
    /// check a trial against the project's ([`crate::protocol::check`]): a frame kind, key,
    /// JSON type or name that is new, and a key or name gone where the older release always
    /// printed it.
    #[serde(default)]
    pub printed: Vec<ProtocolChange>,
    /// The older run checked against an inventory of the newer one: what only the older
    /// release printed (the check's `new`, which is gone from the newer release).
    #[serde(default)]
    pub not_printed: Vec<ProtocolChange>,
    pub sequences: Vec<SequenceChange>,
    pub exit_codes: Vec<ScenarioChange>,
    pub result_subtypes: Vec<ScenarioChange>,
    pub status_flips: Vec<StatusFlip>,
    pub values: Vec<ValueChange>,
    /// Every change above classified breaking or additive, breaking first.
    #[serde(default)]
    pub verdict: Vec<Change>,
    /// Pending version blocks the breaking changes opened (`reports/pending/...`), for
    /// `streamcheck review`.
    #[serde(default)]
    pub pending: Vec<String>,
}

impl PairDrift {
    /// True when the two versions printed the same protocol in every compared scenario.
    pub fn is_empty(&self) -> bool {
        self.printed.is_empty()
            && self.not_printed.is_empty()
            && self.sequences.is_empty()
            && self.exit_codes.is_empty()
            && self.result_subtypes.is_empty()
            && self.status_flips.is_empty()
            && self.values.is_empty()
    }
}

/// One finding of the protocol check, with the trials (`scenario` or `scenario[case]`) it
/// was seen in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProtocolChange {
    pub finding: check::Finding,
    pub scenarios: Vec<String>,
}

/// How a scenario's frame-type sequence changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SequenceChangeKind {
    /// The same frame types, in another order.
    Reordered,
    Changed,
    /// The newer version printed no frame, the older one did.
    NoOutput,
    /// The older version printed no frame (refused the flag...), the newer one does.
    NowRuns,
}

impl fmt::Display for SequenceChangeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SequenceChangeKind::Reordered => "reordered",
            SequenceChangeKind::Changed => "changed",
            SequenceChangeKind::NoOutput => "no output any more",
            SequenceChangeKind::NowRuns => "output now, none before",
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SequenceChange {
    pub scenario: ScenarioId,
    pub change: SequenceChangeKind,
    pub from: Vec<String>,
    pub to: Vec<String>,
}

/// A per-scenario value that changed (exit code, result subtypes).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScenarioChange {
    pub scenario: ScenarioId,
    pub from: String,
    pub to: String,
    /// Result changes: top-level fields the newer result frames have and the older lack.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub new_fields: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatusFlip {
    pub scenario: ScenarioId,
    pub from: StatusName,
    pub to: StatusName,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_reason: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ValueChange {
    pub frame_type: String,
    pub path: String,
    /// One example, before and after.
    pub from: String,
    pub to: String,
    /// Number of scenarios where this value changed.
    pub count: usize,
    pub scenarios: Vec<ScenarioId>,
}

/// What changed, one variant per kind of change the differ reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum What {
    FrameTypeGone,
    FieldGone,
    FieldTypeChanged,
    /// A name gone from a named list (`init.tools`, `permission_modes`...).
    NameGone,
    OrderChanged,
    NoOutputAnyMore,
    ExitCodeChanged,
    ResultChanged,
    FrameTypeAdded,
    FieldAdded,
    FieldWidened,
    FieldNarrowed,
    NameAdded,
    FramesInserted,
    /// The older version printed no frame (it refused the flag), the newer one runs.
    NowRuns,
}

impl fmt::Display for What {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            What::FrameTypeGone => "frame type gone",
            What::FieldGone => "field gone",
            What::FieldTypeChanged => "field type changed",
            What::NameGone => "name gone",
            What::OrderChanged => "frame order changed",
            What::NoOutputAnyMore => "no output any more",
            What::ExitCodeChanged => "exit code changed",
            What::ResultChanged => "result changed",
            What::FrameTypeAdded => "frame type added",
            What::FieldAdded => "field added",
            What::FieldWidened => "field type widened",
            What::FieldNarrowed => "field seen with fewer types",
            What::NameAdded => "name added",
            What::FramesInserted => "frames inserted",
            What::NowRuns => "runs now (printed no frame before)",
        })
    }
}

/// One change: where it is (scenario, frame, JSON path) and what it was before and after.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    pub what: What,
    /// The first scenario showing it (`None`: seen across the suite, e.g. init tools).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario: Option<ScenarioId>,
    /// Every scenario showing this same change, when more than one does: the change is
    /// one finding, these are where it was seen.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scenarios: Vec<ScenarioId>,
    pub frame: String,
    pub path: String,
    pub from: String,
    pub to: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "class", content = "change", rename_all = "snake_case")]
pub enum Change {
    Breaking(Finding),
    Additive(Finding),
}

impl Change {
    pub fn is_breaking(&self) -> bool {
        matches!(self, Change::Breaking(_))
    }

    pub fn finding(&self) -> &Finding {
        match self {
            Change::Breaking(f) | Change::Additive(f) => f,
        }
    }

    pub(super) fn finding_mut(&mut self) -> &mut Finding {
        match self {
            Change::Breaking(f) | Change::Additive(f) => f,
        }
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const NAMED: usize = 5;
        let at = match self.scenarios.len() {
            0 | 1 => self.scenario.as_deref().unwrap_or("(suite)").to_string(),
            n => {
                let names = self.scenarios.iter().take(NAMED).map(ScenarioId::to_string);
                let more = (n > NAMED).then(|| format!("{} more", n - NAMED));
                let names: Vec<String> = names.chain(more).collect();
                format!("{n} scenarios ({})", names.join(", "))
            }
        };
        write!(f, "{}: {at}, {} `{}`", self.what, self.frame, self.path)?;
        if !self.from.is_empty() || !self.to.is_empty() {
            write!(f, ": {} → {}", show(&self.from), show(&self.to))?;
        }
        Ok(())
    }
}

impl Finding {
    /// Every scenario showing it (the first alone when it was seen once).
    pub fn all_scenarios(&self) -> Vec<&ScenarioId> {
        match self.scenarios.is_empty() {
            true => self.scenario.iter().collect(),
            false => self.scenarios.iter().collect(),
        }
    }
}

fn show(s: &str) -> &str {
    if s.is_empty() {
        "—"
    } else {
        s
    }
}

/// Per version: counts and how it went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VersionSummary {
    pub target: TargetName,
    pub version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
    pub passed: usize,
    pub failed: usize,
    pub known: usize,
    pub skipped: usize,
    /// Scenarios that ran but printed no frame.
    pub no_frames: usize,
    /// The most frequent first stderr line of those, with its count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_frames_stderr: Option<(String, usize)>,
    pub trial_ms: u64,
    pub tools: Vec<String>,
}

/// The whole comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Drift {
    pub versions: Vec<VersionSummary>,
    /// Neighbouring versions that could run, in the order given.
    pub pairs: Vec<PairDrift>,
}

/// drift.json.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DriftFile {
    pub command: String,
    pub generated_at: String,
    /// Wall time of the runs (0 for a replay).
    pub duration_ms: u64,
    pub notes: Vec<String>,
    #[serde(flatten)]
    pub drift: Drift,
}
