//! What the page shows of one trial when it is opened: the detail embedded as JSON.

use super::timeline::{timeline, Event};
use crate::normalize::redact;
use crate::report::causes::rerun;
use crate::report::frame_diff;
use crate::runner::{Status, Trial};
use crate::store::saved::SavedTrial;
use crate::trial_id::{ScenarioId, TargetName};
use serde::Serialize;
use serde_json::Value;

/// A divergence as the page shows it.
#[derive(Debug, Clone, Serialize)]
pub struct DivergenceView {
    pub kind: String,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frame: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actual: Option<Value>,
}

/// One trial, opened.
#[derive(Debug, Clone, Serialize)]
pub struct TrialView {
    pub id: String,
    pub scenario: ScenarioId,
    pub description: String,
    pub scenario_path: String,
    pub target: TargetName,
    pub version: String,
    pub status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub duration_ms: u64,
    pub exit: String,
    /// The streamcheck command that runs this trial again.
    pub rerun: String,
    /// How the CLI itself was started (sandbox paths as they were).
    pub command_line: String,
    pub notes: Vec<String>,
    pub divergences: Vec<DivergenceView>,
    pub events: Vec<Event>,
    /// The unified diff of expected patterns against the frames (failed trials).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub diff: String,
    /// Whether the CLI's output was saved (a skipped trial has none).
    pub saved: bool,
}

pub fn status_name(s: &Status) -> &'static str {
    match s {
        Status::Passed => "passed",
        Status::Failed => "failed",
        Status::Known(_) => "known",
        Status::Skipped(_) => "skipped",
        Status::Unavailable(_) => "unavailable",
    }
}

/// The view of `t`, with its timeline when its output was saved.
pub fn view(id: String, t: &Trial, saved: Option<&SavedTrial>) -> TrialView {
    let vars = saved
        .map(SavedTrial::vars)
        .unwrap_or_else(|| t.vars.clone());
    let divergences = t
        .divergences
        .iter()
        .map(|d| DivergenceView {
            kind: d.kind.as_str().to_string(),
            message: d.message.clone(),
            frame: d.frame,
            line: d.line,
            path: d.path.clone(),
            expected: d.expected.as_ref().map(|v| redact(v, &vars)),
            actual: d.actual.as_ref().map(|v| redact(v, &vars)),
        })
        .collect();
    let (events, diff) = match saved {
        Some(s) => (
            timeline(s, &t.divergences),
            diff_of(s, !t.divergences.is_empty()),
        ),
        None => (Vec::new(), String::new()),
    };
    TrialView {
        id,
        scenario: t.key.scenario.clone(),
        description: t.description.clone(),
        scenario_path: t.scenario_path.clone(),
        target: t.key.target.clone(),
        version: t.key.target_version.clone(),
        status: status_name(&t.status),
        reason: reason(&t.status),
        duration_ms: t.duration_ms,
        exit: t.exit.to_string(),
        rerun: rerun(&t.key.scenario, &t.key.target),
        command_line: t.command_line.clone(),
        notes: t.notes.clone(),
        divergences,
        events,
        diff,
        saved: saved.is_some(),
    }
}

/// The view of a saved output alone (no results.json beside it): no divergences.
pub fn view_saved(id: String, s: &SavedTrial) -> TrialView {
    TrialView {
        id,
        scenario: s.key.scenario.clone(),
        description: String::new(),
        scenario_path: String::new(),
        target: s.key.target.clone(),
        version: s.key.target_version.clone(),
        status: status_name(&s.status),
        reason: reason(&s.status),
        duration_ms: 0,
        exit: s.exit.to_string(),
        rerun: rerun(&s.key.scenario, &s.key.target),
        command_line: String::new(),
        notes: Vec::new(),
        divergences: Vec::new(),
        events: timeline(s, &[]),
        diff: String::new(),
        saved: true,
    }
}

fn reason(s: &Status) -> Option<String> {
    match s {
        Status::Known(r) | Status::Skipped(r) => Some(r.clone()),
        _ => None,
    }
}

/// The unified diff of the expected patterns against the frames, for a diverged trial.
fn diff_of(s: &SavedTrial, diverged: bool) -> String {
    if !diverged || s.expected_frames.is_empty() {
        return String::new();
    }
    let frames: Vec<Value> = s.output().frames.into_iter().map(|f| f.value).collect();
    frame_diff(&s.expected_frames, &frames, &s.vars())
}
