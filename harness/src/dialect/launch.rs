//! What a dialect is given to build a trial's command line, and what it is asked about a
//! scenario written for another dialect: plain data, filled in from a scenario by
//! `plan/launch.rs` and `commands/compare/trials.rs`. A leaf.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

// A scenario's `output_format` (no doc comment: it would change the scenario schema).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum OutputFormat {
    #[default]
    StreamJson,
    Json,
    Text,
}

impl OutputFormat {
    pub fn as_flag(self) -> &'static str {
        match self {
            OutputFormat::StreamJson => "stream-json",
            OutputFormat::Json => "json",
            OutputFormat::Text => "text",
        }
    }
}

/// A headless run as a scenario asks for it when it leaves the command line to the harness
/// (`default_args: true`).
#[derive(Debug, Clone, Copy)]
pub struct PrintMode<'a> {
    pub prompt: Option<&'a str>,
    /// The prompt comes as stream-json frames on stdin.
    pub stdin_stream: bool,
    pub output_format: OutputFormat,
}

impl PrintMode<'_> {
    /// `-p PROMPT --input-format stream-json --output-format FORMAT`: the flags every
    /// dialect so far spells alike.
    pub fn common_args(&self) -> Vec<String> {
        let mut args = vec!["-p".to_string()];
        args.extend(self.prompt.map(str::to_string));
        if self.stdin_stream {
            args.extend(["--input-format".into(), "stream-json".into()]);
        }
        args.extend([
            "--output-format".into(),
            self.output_format.as_flag().into(),
        ]);
        args
    }
}

/// A scenario as written, for a dialect it has no expectation for: what may not suit it.
#[derive(Debug, Clone)]
pub struct Written<'a> {
    /// The `{type: user, ...}` frames it writes to stdin.
    pub user_frames: Vec<&'a Value>,
    pub args: &'a [String],
    pub default_args: bool,
}

impl Written<'_> {
    /// A user frame in Claude Code's shape, `{type: user, message: ...}`.
    pub fn has_message_frames(&self) -> bool {
        self.user_frames.iter().any(|v| v.get("message").is_some())
    }

    /// A user frame in caliban's shape, `{type: user, content: ...}`.
    pub fn has_content_frames(&self) -> bool {
        self.user_frames
            .iter()
            .any(|v| v.get("message").is_none() && v.get("content").is_some())
    }

    pub fn has_arg(&self, names: &[&str]) -> bool {
        self.args.iter().any(|a| names.contains(&a.as_str()))
    }
}
