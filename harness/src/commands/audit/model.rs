//! What an audit is about and what it found: the mutations, and per scenario what each
//! did (audit.json is these types serialised).

use crate::trial_id::{ScenarioId, TargetName};
use serde::Serialize;
use std::fmt;

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
    /// A key added to every frame of the last result's kind (the protocol inventory's).
    AddKeyToKind,
    /// `session_id` dropped from every frame of the last result's kind.
    DropKeyFromKind,
    /// A frame of a type no release prints, before the last result.
    NewFrameType,
    /// A number in the last result written as a string (`num_turns`).
    ChangeJsonType,
    KeyOrder,
    Whitespace,
    StringEscapes,
    UnrelatedStderr,
}

impl Mutation {
    pub const ALL: [Mutation; 23] = [
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
        Mutation::AddKeyToKind,
        Mutation::DropKeyFromKind,
        Mutation::NewFrameType,
        Mutation::ChangeJsonType,
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
            Mutation::AddKeyToKind | Mutation::NewFrameType | Mutation::ChangeJsonType => "keep the protocol inventory (targets/<dialect>/protocol.yaml) and its check on",
            Mutation::DropKeyFromKind => "keep the protocol inventory's check on, or pin session_id",
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
            Mutation::AddKeyToKind => "a key added to every frame of a kind",
            Mutation::DropKeyFromKind => "a key dropped from every frame of a kind",
            Mutation::NewFrameType => "a new frame type",
            Mutation::ChangeJsonType => "a key's JSON type changed",
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
    pub scenario: ScenarioId,
    pub target: TargetName,
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
    pub scenario: ScenarioId,
    pub target: TargetName,
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
