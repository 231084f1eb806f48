//! Claude Code: the reference dialect. Scenarios are written in its flags and frames;
//! the other dialects say how they differ from it.

use super::conventions::Conventions;
use super::distribution::{Distribution, NpmPin};
use super::launch::{OutputFormat, PrintMode, Written};
use super::neutral::{
    content_text, is_new_call, result_event, str_of, system_event, tool_call, tool_result, Event,
    Neutral,
};
use crate::frame::frame_kind;
use crate::toolmap::ToolMap;
use serde_json::Value;
use std::collections::HashSet;
use std::path::Path;
use stub_api::BuiltinRule;

/// The pinned Claude Code: `targets/claude-code/` (package.json + package-lock.json, `npm ci`).
pub(crate) const PIN: NpmPin = NpmPin {
    target: "claude-code",
    title: "Claude Code",
    dir: "targets/claude-code",
    package: "@anthropic-ai/claude-code",
    bin: "claude",
    node_entry: None,
    runtime: &[],
};

pub(crate) struct ClaudeCode;

impl Conventions for ClaudeCode {
    fn expect_key(&self) -> &'static str {
        PIN.target
    }

    fn title(&self) -> &'static str {
        PIN.title
    }

    fn distribution(&self) -> Distribution {
        Distribution::Npm(&PIN)
    }

    fn builtin_tools(&self) -> &'static [&'static str] {
        &[
            "Task",
            "Bash",
            "Edit",
            "NotebookEdit",
            "Read",
            "SendMessage",
            "Skill",
            "TaskCreate",
            "TaskGet",
            "TaskList",
            "TaskOutput",
            "TaskStop",
            "TaskUpdate",
            "WebFetch",
            "WebSearch",
            "Write",
        ]
    }

    fn flags(&self) -> &'static [&'static str] {
        &[
            "partial-messages",
            "replay-user-messages",
            "input-stream-json",
            "output-json",
            "output-text",
            "max-turns",
            "api-retry",
        ]
    }

    fn speaks_control_protocol(&self) -> bool {
        true
    }

    fn lead_args(&self, _own: &[String]) -> Vec<String> {
        Vec::new()
    }

    /// stream-json output needs `--verbose` with `-p`.
    fn default_args(&self, mode: &PrintMode) -> Vec<String> {
        let mut args = mode.common_args();
        if mode.output_format == OutputFormat::StreamJson {
            args.push("--verbose".into());
        }
        args
    }

    fn translate_args(&self, args: &[String], _tools: &ToolMap) -> Vec<String> {
        args.to_vec()
    }

    fn env(&self, _home: &Path) -> Vec<(String, String)> {
        [
            // Root may only skip permission prompts inside a declared sandbox.
            ("IS_SANDBOX", "1"),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
            ("DISABLE_AUTOUPDATER", "1"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .into()
    }

    /// Without it Claude Code looks up and calls external hosts (telemetry, title generation).
    fn forced_env(&self) -> &'static [(&'static str, &'static str)] {
        &[("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")]
    }

    fn shown_env(&self) -> &'static [&'static str] {
        &["CLAUDE", "IS_SANDBOX"]
    }

    fn prepare_home(&self, _home: &Path) -> std::io::Result<()> {
        Ok(())
    }

    /// Its background request for a session title.
    fn side_request_rule(&self) -> Option<BuiltinRule> {
        Some(BuiltinRule::ClaudeCodeSessionTitle)
    }

    fn is_usage_exit(&self, code: i32) -> bool {
        code == 1
    }

    fn as_written_hints(&self, written: &Written) -> Vec<String> {
        let mut hints = Vec::new();
        if written.has_content_frames() {
            hints.push("its stdin frames are in caliban's shape {type: user, content: ...}; Claude Code reads {type: user, message: ...}".into());
        }
        hints
    }

    fn neutral_subtype<'a>(&self, raw: &'a str) -> &'a str {
        neutral_subtype(raw)
    }

    fn neutral(&self, frames: &[Value]) -> Neutral {
        Reader::default().read(frames)
    }

    fn shape_differences(&self) -> &'static str {
        ""
    }
}

/// `error_max_turns` is `max_turns`, and so on.
pub(super) fn neutral_subtype(raw: &str) -> &str {
    match raw {
        "error_max_turns" => "max_turns",
        "error_max_budget_usd" => "budget_exceeded",
        "error_during_execution" | "error_max_structured_output_retries" => "error",
        _ => raw,
    }
}

/// Claude Code: `assistant` / `user` frames carry `message.content` blocks; consecutive
/// `assistant` frames with one `message.id` are one message; `stream_event` deltas repeat
/// what the `assistant` frames say and are left out, as are a subagent's frames.
#[derive(Default)]
pub(super) struct Reader {
    out: Neutral,
    seen_calls: HashSet<String>,
    /// The number of the assistant message being read.
    message: Option<usize>,
    /// Its `message.id`.
    last_id: Option<String>,
}

impl Reader {
    pub(super) fn read(mut self, frames: &[Value]) -> Neutral {
        for v in frames {
            self.frame(v);
        }
        self.out
    }

    fn frame(&mut self, v: &Value) {
        // A subagent's frames (its prompt, under a Task call) belong to the tool call;
        // what it found comes back in the tool result.
        if v.get("parent_tool_use_id").is_some_and(|p| !p.is_null()) {
            self.out.unmapped.insert(format!(
                "{} (subagent, parent_tool_use_id set)",
                frame_kind(v)
            ));
            return;
        }
        match v.get("type").and_then(Value::as_str) {
            Some("system") => self.out.push_or_unmapped(system_event(v), v),
            Some("assistant") => self.assistant(v.get("message").unwrap_or(&Value::Null)),
            Some("user") => self.user(v),
            Some("result") => self.out.events.push(result_event(v, neutral_subtype)),
            _ => self.out.push_or_unmapped(None, v),
        }
    }

    fn assistant(&mut self, msg: &Value) {
        let synthetic = msg.get("model").and_then(Value::as_str) == Some("<synthetic>");
        let id = str_of(msg, "id");
        if id.is_none() || id != self.last_id {
            self.message = Some(self.message.map_or(0, |m| m + 1));
            self.last_id = id;
        }
        let message = self.message.unwrap_or(0);
        let blocks = msg.get("content").and_then(Value::as_array);
        for b in blocks.into_iter().flatten() {
            self.assistant_block(b, message, synthetic);
        }
    }

    fn assistant_block(&mut self, b: &Value, message: usize, synthetic: bool) {
        let event = match b.get("type").and_then(Value::as_str) {
            Some("text") if synthetic => Event::Warning {
                text: str_of(b, "text").unwrap_or_default(),
            },
            Some("text") => Event::Text {
                text: str_of(b, "text").unwrap_or_default(),
                message,
            },
            Some("thinking") => Event::Thinking {
                text: str_of(b, "thinking").unwrap_or_default(),
                message,
            },
            Some("redacted_thinking") => Event::Thinking {
                text: String::new(),
                message,
            },
            Some("tool_use") | Some("server_tool_use") => {
                if !is_new_call(&mut self.seen_calls, str_of(b, "id").unwrap_or_default()) {
                    return;
                }
                tool_call(b)
            }
            _ => {
                self.out
                    .unmapped
                    .insert(format!("assistant content {}", frame_kind(b)));
                return;
            }
        };
        self.out.events.push(event);
    }

    /// Tool results, or else the user's prompt echoed back.
    fn user(&mut self, v: &Value) {
        let content = v
            .get("message")
            .and_then(|m| m.get("content"))
            .unwrap_or(&Value::Null);
        let results: Vec<&Value> = content
            .as_array()
            .into_iter()
            .flatten()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
            .collect();
        if results.is_empty() {
            self.out.events.push(Event::UserEcho {
                text: content_text(content),
            });
        } else {
            self.out.events.extend(results.into_iter().map(tool_result));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn subtypes_map_to_caliban_names() {
        assert_eq!(neutral_subtype("error_max_turns"), "max_turns");
        assert_eq!(neutral_subtype("success"), "success");
    }

    #[test]
    fn subagent_frames_are_left_out() {
        let frames = vec![
            json!({"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "Say banana"}]}, "parent_tool_use_id": "toolu_task"}),
            json!({"type": "user", "message": {"role": "user", "content": "hi"}, "parent_tool_use_id": null}),
        ];
        let n = ClaudeCode.neutral(&frames);
        assert_eq!(n.events, [Event::UserEcho { text: "hi".into() }]);
        assert!(n
            .unmapped
            .contains("user (subagent, parent_tool_use_id set)"));
    }
}
