//! caliban: a Rust re-implementation with its own frames (`message`, top-level `tool_use`
//! and `tool_result`, `text` deltas), its own exit codes, no control protocol. Built from
//! crates.io.

use super::conventions::Conventions;
use super::distribution::{CargoPin, Distribution};
use super::launch::{PrintMode, Written};
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

pub(crate) const PIN: CargoPin = CargoPin {
    krate: "caliban",
    version: "0.15.0",
    bin: "caliban",
    install_args: &["--no-default-features"],
};

pub(crate) struct Caliban;

impl Conventions for Caliban {
    fn expect_key(&self) -> &'static str {
        "caliban"
    }

    fn title(&self) -> &'static str {
        "caliban"
    }

    fn distribution(&self) -> Distribution {
        Distribution::Cargo(&PIN)
    }

    fn builtin_tools(&self) -> &'static [&'static str] {
        &[
            "AgentTool",
            "Bash",
            "BashOutput",
            "Edit",
            "EnterPlanMode",
            "ExitPlanMode",
            "Glob",
            "Grep",
            "KillShell",
            "MultiEdit",
            "NotebookEdit",
            "Read",
            "Skill",
            "TodoWrite",
            "ToolSearch",
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
            "max-budget",
        ]
    }

    fn speaks_control_protocol(&self) -> bool {
        false
    }

    fn lead_args(&self, _own: &[String]) -> Vec<String> {
        Vec::new()
    }

    fn default_args(&self, mode: &PrintMode) -> Vec<String> {
        mode.common_args()
    }

    /// caliban takes Claude Code's flags as written; scenarios give it its own where not.
    fn translate_args(&self, args: &[String], _tools: &ToolMap) -> Vec<String> {
        args.to_vec()
    }

    /// Its config, data, state and cache folders inside the trial's HOME.
    fn env(&self, home: &Path) -> Vec<(String, String)> {
        [
            ("XDG_CONFIG_HOME", ".config"),
            ("XDG_DATA_HOME", ".local/share"),
            ("XDG_STATE_HOME", ".local/state"),
            ("XDG_CACHE_HOME", ".cache"),
        ]
        .map(|(var, sub)| (var.to_string(), home.join(sub).display().to_string()))
        .into()
    }

    fn forced_env(&self) -> &'static [(&'static str, &'static str)] {
        &[]
    }

    fn shown_env(&self) -> &'static [&'static str] {
        &[]
    }

    fn prepare_home(&self, _home: &Path) -> std::io::Result<()> {
        Ok(())
    }

    fn side_request_rule(&self) -> Option<BuiltinRule> {
        None
    }

    /// sysexits EX_USAGE for bad flags and malformed stdin; clap's own exit 2.
    fn is_usage_exit(&self, code: i32) -> bool {
        matches!(code, 64 | 2)
    }

    fn as_written_hints(&self, written: &Written) -> Vec<String> {
        let mut hints = Vec::new();
        if written.has_message_frames() {
            hints.push("its stdin frames are in Claude Code's shape {type: user, message: ...}; caliban reads {type: user, content: ...}".into());
        }
        if written.has_arg(&["--dangerously-skip-permissions"]) {
            hints.push("--dangerously-skip-permissions is Claude Code's; caliban takes --permission-mode bypassPermissions --allow-dangerously-skip-permissions".into());
        }
        if written.has_arg(&["--allowedTools", "--allowed-tools"]) {
            hints.push("it allows tools with Claude Code's --allowedTools".into());
        }
        if !written.default_args {
            hints.push("its command line is written out for Claude Code (default_args: false)".into());
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
        include_str!("caliban_shape.md")
    }
}

/// caliban's subtypes are the neutral names.
fn neutral_subtype(raw: &str) -> &str {
    raw
}

/// caliban: `tool_use` / `tool_result` progress frames come before the `message` frame
/// that holds the same tool_use again. The call is counted once, from the progress frame,
/// and placed where the message puts it, so the order reads like Claude Code's: text,
/// call, result. With `--include-partial-messages` there is no `message` frame: `text`
/// and `thinking` deltas make up the blocks, split by any other frame.
#[derive(Default)]
struct Reader {
    out: Neutral,
    /// Progress frames waiting for the message that places them.
    pending: Vec<Event>,
    /// A delta run being assembled.
    delta: Option<Delta>,
    /// Deltas were seen since the last message frame: its text is already counted.
    streamed: bool,
    messages: usize,
    seen_calls: HashSet<String>,
}

/// Consecutive `text` (or `thinking`) deltas, one block once joined.
struct Delta {
    thinking: bool,
    text: String,
}

impl Reader {
    fn read(mut self, frames: &[Value]) -> Neutral {
        for v in frames {
            self.frame(v);
        }
        self.flush();
        self.out
    }

    fn frame(&mut self, v: &Value) {
        match v.get("type").and_then(Value::as_str) {
            Some("text") => self.delta(v, false),
            Some("thinking") => self.delta(v, true),
            Some("tool_use") => {
                self.flush_delta();
                if is_new_call(&mut self.seen_calls, str_of(v, "id").unwrap_or_default()) {
                    self.pending.push(tool_call(v));
                }
            }
            Some("tool_result") => {
                self.flush_delta();
                self.pending.push(tool_result(v));
            }
            Some("message") => self.message(v),
            Some("result") => {
                self.flush();
                self.streamed = false;
                self.out.events.push(result_event(v, neutral_subtype));
            }
            ty => {
                self.flush();
                self.standalone(ty, v);
            }
        }
    }

    /// A frame that stands alone: it ends any delta run and places pending progress frames.
    fn standalone(&mut self, ty: Option<&str>, v: &Value) {
        let event = match ty {
            Some("system") => system_event(v),
            Some("user") => Some(Event::UserEcho {
                text: content_text(v.get("content").unwrap_or(&Value::Null)),
            }),
            Some("warning") => Some(Event::Warning {
                text: str_of(v, "message").unwrap_or_else(|| v.to_string()),
            }),
            _ => None,
        };
        self.out.push_or_unmapped(event, v);
    }

    fn delta(&mut self, v: &Value, thinking: bool) {
        self.flush_pending();
        let piece = str_of(v, "delta").unwrap_or_default();
        match &mut self.delta {
            Some(d) if d.thinking == thinking => d.text.push_str(&piece),
            _ => {
                self.flush_delta();
                self.delta = Some(Delta {
                    thinking,
                    text: piece,
                });
            }
        }
        self.streamed = true;
    }

    fn message(&mut self, v: &Value) {
        self.flush_delta();
        let message = self.next_message();
        let blocks = v.get("content").and_then(Value::as_array);
        for b in blocks.into_iter().flatten() {
            self.message_block(b, message);
        }
        self.flush_pending();
        self.streamed = false;
    }

    fn message_block(&mut self, b: &Value, message: usize) {
        match b.get("type").and_then(Value::as_str) {
            Some("text") if !self.streamed => self.out.events.push(Event::Text {
                text: str_of(b, "text").unwrap_or_default(),
                message,
            }),
            Some("thinking") if !self.streamed => self.out.events.push(Event::Thinking {
                text: str_of(b, "thinking").unwrap_or_default(),
                message,
            }),
            Some("text") | Some("thinking") => {}
            Some("tool_use") => self.place_call(b),
            _ => {
                self.out
                    .unmapped
                    .insert(format!("message content {}", frame_kind(b)));
            }
        }
    }

    /// A message's tool_use block: the progress frame's call, placed where the message
    /// has it; or the block itself when no progress frame announced it.
    fn place_call(&mut self, b: &Value) {
        let id = str_of(b, "id").unwrap_or_default();
        let at = self
            .pending
            .iter()
            .position(|e| matches!(e, Event::ToolCall { id: i, .. } if *i == id));
        match at {
            Some(i) => {
                let call = self.pending.remove(i);
                self.out.events.push(call);
            }
            None if is_new_call(&mut self.seen_calls, id) => self.out.events.push(tool_call(b)),
            // Already placed by an earlier message.
            None => {}
        }
    }

    fn next_message(&mut self) -> usize {
        self.messages += 1;
        self.messages - 1
    }

    fn flush_delta(&mut self) {
        if let Some(Delta { thinking, text }) = self.delta.take() {
            let message = self.next_message();
            self.out.events.push(if thinking {
                Event::Thinking { text, message }
            } else {
                Event::Text { text, message }
            });
        }
    }

    fn flush_pending(&mut self) {
        self.out.events.append(&mut self.pending);
    }

    fn flush(&mut self) {
        self.flush_delta();
        self.flush_pending();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn deltas_split_by_other_frames() {
        let frames = vec![
            json!({"type": "thinking", "delta": "hm"}),
            json!({"type": "text", "delta": "Run"}),
            json!({"type": "text", "delta": "ning."}),
            json!({"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}),
            json!({"type": "tool_result", "tool_use_id": "t1", "is_error": false, "content": [{"type": "text", "text": "ok"}]}),
            json!({"type": "text", "delta": "Done."}),
            json!({"type": "result", "subtype": "success", "result": "Done.", "is_error": false}),
        ];
        let n = Caliban.neutral(&frames);
        let kinds: Vec<String> = n
            .events
            .iter()
            .map(|e| match e {
                Event::Text { text, .. } => format!("text:{text}"),
                Event::Thinking { text, .. } => format!("thinking:{text}"),
                Event::ToolCall { id, .. } => format!("call:{id}"),
                Event::ToolResult { text, .. } => format!("result:{text}"),
                Event::Result { subtype, .. } => format!("end:{subtype}"),
                other => format!("{other:?}"),
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "thinking:hm",
                "text:Running.",
                "call:t1",
                "result:ok",
                "text:Done.",
                "end:success"
            ]
        );
    }
}
