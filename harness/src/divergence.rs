//! What a divergence is: one way a CLI's run differs from its scenario's expectation.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// An expected frame never came.
    MissingFrame,
    /// A frame came that no pattern expects (an extra, duplicated or forbidden frame).
    UnexpectedFrame,
    /// The frame came but a field differs.
    FieldMismatch,
    /// The frames came but not in an order the scenario allows.
    Order,
    ExitCode,
    Stderr,
    /// Plain-text output (`--output-format text`) differs.
    Text,
    /// The CLI did not finish within the scenario's timeout.
    Timeout,
    /// The CLI printed its last result but did not exit, or kept stdout open.
    Hang,
    /// A stdout line that is not a JSON object: not JSON, invalid UTF-8, too long, no newline.
    NonJson,
    /// An assertion on the requests the CLI sent failed.
    Request,
    /// The CLI sent a request the stub script had no answer for.
    UnscriptedRequest,
    /// A protocol invariant (checked in every scenario) is broken.
    Invariant,
    /// A file in the working directory is not as expected after the run.
    Workspace,
    /// The CLI could not be started at all.
    Spawn,
    /// A scenario listed as a known divergence of the target passes now.
    KnownDivergencePasses,
    /// The harness itself failed (a panic, a trial that never reported): never the CLI's fault.
    HarnessError,
    /// A test fixture the scenario needs could not be installed or started: never the CLI's fault.
    Fixture,
    /// The CLI sent a control_request that no responder of the client script answers.
    UnansweredControlRequest,
    /// The client script could not build a line (a `$name` naming nothing, ...).
    ClientScript,
    /// The output breaks what an Agent SDK requires of it (client-profile scenarios).
    SdkContract,
    /// An expectation skips the release for a reason its run no longer shows (a flag it
    /// now takes, a tool it now offers, a frame it now prints).
    SkipNoLongerHolds,
    /// What the CLI printed differs from the protocol inventory of the release (a key
    /// gone, or under `--protocol strict` a new one).
    Protocol,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::MissingFrame => "missing frame",
            Kind::UnexpectedFrame => "unexpected frame",
            Kind::FieldMismatch => "field mismatch",
            Kind::Order => "order",
            Kind::ExitCode => "exit code",
            Kind::Stderr => "stderr",
            Kind::Text => "text output",
            Kind::Timeout => "timeout",
            Kind::Hang => "hang",
            Kind::NonJson => "non-JSON output",
            Kind::Request => "request assertion",
            Kind::UnscriptedRequest => "unscripted request",
            Kind::Invariant => "invariant broken",
            Kind::Workspace => "workspace file",
            Kind::Spawn => "spawn failure",
            Kind::KnownDivergencePasses => "known divergence passes",
            Kind::HarnessError => "harness error",
            Kind::Fixture => "fixture failure",
            Kind::UnansweredControlRequest => "unanswered control request",
            Kind::ClientScript => "client script error",
            Kind::SdkContract => "SDK contract broken",
            Kind::SkipNoLongerHolds => "skip no longer holds",
            Kind::Protocol => "protocol change",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The id of a finding (a CLI bug, [`crate::findings`]) a known divergence is: a slug,
/// unique in its `findings.yaml`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, Serialize)]
#[serde(transparent)]
pub struct FindingId(String);

impl FindingId {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for FindingId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// One divergence, located as precisely as the kind allows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Divergence {
    pub kind: Kind,
    /// One sentence a person can act on.
    pub message: String,
    /// 0-based index of the frame among all frames the CLI printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame: Option<usize>,
    /// 1-based stdout line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// JSON path inside the frame (or request) of the first mismatch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actual: Option<Value>,
    /// In a multi-run scenario: the 1-based run it came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<usize>,
    /// The reason, when the target's known-divergence list names this divergence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub known: Option<String>,
    /// The CLI bug the known entry names, when it is one ([`crate::findings`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finding: Option<FindingId>,
    /// A cascade: the frame only fails because an earlier frame did not give this capture
    /// (reported there); no cause of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depends_on: Option<String>,
    /// The frame's other paths that differ (`$.model: expected "m", found "x"`), after
    /// the one `path` names.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<String>,
}

impl Divergence {
    pub fn new(kind: Kind, message: impl Into<String>) -> Divergence {
        Divergence {
            kind,
            message: message.into(),
            frame: None,
            line: None,
            path: None,
            expected: None,
            actual: None,
            run: None,
            known: None,
            finding: None,
            depends_on: None,
            also: Vec::new(),
        }
    }

    pub fn at_frame(mut self, frame: usize, line: usize) -> Self {
        self.frame = Some(frame);
        self.line = Some(line);
        self
    }

    pub fn at_path(mut self, path: impl Into<String>) -> Self {
        self.path = Some(path.into());
        self
    }

    pub fn expected(mut self, v: Value) -> Self {
        self.expected = Some(v);
        self
    }

    pub fn actual(mut self, v: Value) -> Self {
        self.actual = Some(v);
        self
    }
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)?;
        if let Some(why) = &self.known {
            write!(f, " (known divergence: {why})")?;
        }
        if let (Some(frame), Some(line)) = (self.frame, self.line) {
            write!(f, " [frame {frame}, stdout line {line}")?;
            if let Some(path) = &self.path {
                write!(f, ", {path}")?;
            }
            write!(f, "]")?;
        } else if let Some(path) = &self.path {
            write!(f, " [{path}]")?;
        }
        for other in &self.also {
            write!(f, "\n    also differs: {other}")?;
        }
        if let Some(e) = &self.expected {
            write!(f, "\n    expected: {}", compact(e))?;
        }
        if let Some(a) = &self.actual {
            write!(f, "\n    actual:   {}", compact(a))?;
        }
        Ok(())
    }
}

/// One-line JSON, cut so a huge frame does not drown the message.
pub fn compact(v: &Value) -> String {
    const MAX: usize = 400;
    let s = v.to_string();
    if s.chars().nth(MAX).is_none() {
        return s;
    }
    format!("{} ({} bytes)", crate::text::clip(&s, MAX), s.len())
}
