//! Per-dialect adapters: what a CLI printed, mapped into one neutral event sequence
//! that the comparison ([`super`]) can set side by side.
//!
//! The adapters keep substance (what the model said, which tools ran and what they
//! returned, retries, how the run ended) and drop shape (frame names, envelopes,
//! session ids, token fields). Frames that carry nothing neutral are counted by kind
//! in [`Neutral::unmapped`] so a report can list them once.

use crate::target::Dialect;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeSet, HashSet};

/// One thing that happened in a run, whatever the dialect.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// The session announced itself (Claude Code `system/init`, caliban `system/init`).
    Init { model: Option<String> },
    /// Assistant text. `message` numbers the assistant messages of the run (0-based), so
    /// blocks printed in separate frames but belonging to one message stay together.
    Text { text: String, message: usize },
    /// Assistant reasoning.
    Thinking { text: String, message: usize },
    /// A tool call, counted once (caliban prints it twice: a progress frame and inside `message`).
    ToolCall {
        id: String,
        name: String,
        input: Value,
    },
    ToolResult {
        tool_use_id: String,
        is_error: bool,
        text: String,
    },
    /// A retry the CLI announced (`system/api_retry`).
    Retry {
        attempt: Option<u64>,
        status: Option<u64>,
    },
    /// A notice that is not model output: caliban's `warning` frame, Claude Code's
    /// synthetic assistant message (model `<synthetic>`, e.g. an API error).
    Warning { text: String },
    /// The user's prompt echoed back (`--replay-user-messages`).
    UserEcho { text: String },
    /// The end of a turn. `subtype` is neutral (see [`neutral_subtype`]), `raw_subtype` as printed.
    Result {
        subtype: String,
        raw_subtype: String,
        is_error: bool,
        /// The reply on success; the error message otherwise, when the CLI gives one.
        text: Option<String>,
    },
}

/// A run in neutral terms.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Neutral {
    pub events: Vec<Event>,
    /// Kinds (`type` or `type/subtype`) of frames that mean nothing neutral (rate-limit
    /// events, partial-message deltas that a full message repeats, status frames, ...).
    pub unmapped: BTreeSet<String>,
}

impl Neutral {
    pub fn results(&self) -> impl Iterator<Item = &Event> {
        self.events
            .iter()
            .filter(|e| matches!(e, Event::Result { .. }))
    }

    /// Keeps `event`, or, when the frame means nothing neutral, its kind.
    fn push_or_unmapped(&mut self, event: Option<Event>, frame: &Value) {
        match event {
            Some(e) => self.events.push(e),
            None => {
                self.unmapped.insert(frame_kind(frame));
            }
        }
    }
}

/// Maps a dialect's frames into neutral events.
pub fn neutral(dialect: Dialect, frames: &[Value]) -> Neutral {
    match dialect {
        Dialect::ClaudeCode => ClaudeCode::default().read(frames),
        Dialect::QwenCode => super::qwen::adapt(ClaudeCode::default().read(frames), frames),
        Dialect::Caliban => Caliban::default().read(frames),
    }
}

/// A result subtype in neutral terms: caliban's names, which say what happened
/// (`success`, `error`, `max_turns`, `budget_exceeded`, `cancelled`, `max_tokens`,
/// `time_budget`). Claude Code's `error_max_turns` is `max_turns`, and so on.
pub fn neutral_subtype(dialect: Dialect, raw: &str) -> String {
    match (dialect, raw) {
        (Dialect::ClaudeCode | Dialect::QwenCode, "error_max_turns") => "max_turns",
        (Dialect::ClaudeCode, "error_max_budget_usd") => "budget_exceeded",
        (Dialect::ClaudeCode, "error_during_execution") => "error",
        (Dialect::ClaudeCode, "error_max_structured_output_retries") => "error",
        _ => raw,
    }
    .to_string()
}

/// `type`, or `type/subtype` when the frame has a string subtype.
pub fn frame_kind(v: &Value) -> String {
    let ty = v.get("type").and_then(Value::as_str).unwrap_or("(no type)");
    match v.get("subtype").and_then(Value::as_str) {
        Some(sub) => format!("{ty}/{sub}"),
        None => ty.to_string(),
    }
}

/// The text of a content value: a string as is, or the `text` of its text blocks, joined.
pub fn content_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| match b {
                Value::String(s) => Some(s.as_str()),
                _ => b.get("text").and_then(Value::as_str),
            })
            .collect::<Vec<_>>()
            .join(""),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn str_of(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

fn result_event(dialect: Dialect, v: &Value) -> Event {
    let raw = str_of(v, "subtype").unwrap_or_default();
    let is_error = v
        .get("is_error")
        .and_then(Value::as_bool)
        .unwrap_or(raw != "success");
    let text = str_of(v, "result")
        .or_else(|| str_of(v, "error"))
        .or_else(|| match v.get("errors") {
            Some(Value::Array(a)) if !a.is_empty() => Some(
                a.iter()
                    .map(|e| e.as_str().map_or_else(|| e.to_string(), str::to_string))
                    .collect::<Vec<_>>()
                    .join("; "),
            ),
            _ => None,
        });
    Event::Result {
        subtype: neutral_subtype(dialect, &raw),
        raw_subtype: raw,
        is_error,
        text,
    }
}

fn retry_event(v: &Value) -> Event {
    Event::Retry {
        attempt: v.get("attempt").and_then(Value::as_u64),
        status: v.get("error_status").and_then(Value::as_u64),
    }
}

fn tool_call(block: &Value) -> Event {
    Event::ToolCall {
        id: str_of(block, "id").unwrap_or_default(),
        name: str_of(block, "name").unwrap_or_default(),
        input: block.get("input").cloned().unwrap_or(Value::Null),
    }
}

fn tool_result(block: &Value) -> Event {
    Event::ToolResult {
        tool_use_id: str_of(block, "tool_use_id").unwrap_or_default(),
        is_error: block
            .get("is_error")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        text: content_text(block.get("content").unwrap_or(&Value::Null)),
    }
}

/// An `init` or `api_retry` system frame, alike in both dialects; `None` for any other.
fn system_event(v: &Value) -> Option<Event> {
    match v.get("subtype").and_then(Value::as_str) {
        Some("init") => Some(Event::Init {
            model: str_of(v, "model"),
        }),
        Some("api_retry") => Some(retry_event(v)),
        _ => None,
    }
}

/// A tool call not counted yet (a call without an id is always new).
fn is_new_call(seen: &mut HashSet<String>, id: String) -> bool {
    id.is_empty() || seen.insert(id)
}

/// Claude Code: `assistant` / `user` frames carry `message.content` blocks; consecutive
/// `assistant` frames with one `message.id` are one message; `stream_event` deltas repeat
/// what the `assistant` frames say and are left out, as are a subagent's frames.
#[derive(Default)]
struct ClaudeCode {
    out: Neutral,
    seen_calls: HashSet<String>,
    /// The number of the assistant message being read.
    message: Option<usize>,
    /// Its `message.id`.
    last_id: Option<String>,
}

impl ClaudeCode {
    fn read(mut self, frames: &[Value]) -> Neutral {
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
            Some("result") => self.out.events.push(result_event(Dialect::ClaudeCode, v)),
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

/// caliban: `tool_use` / `tool_result` progress frames come before the `message` frame
/// that holds the same tool_use again. The call is counted once, from the progress frame,
/// and placed where the message puts it, so the order reads like Claude Code's: text,
/// call, result. With `--include-partial-messages` there is no `message` frame: `text`
/// and `thinking` deltas make up the blocks, split by any other frame.
#[derive(Default)]
struct Caliban {
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

impl Caliban {
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
                self.out.events.push(result_event(Dialect::Caliban, v));
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
    fn subtypes_map_to_caliban_names() {
        assert_eq!(
            neutral_subtype(Dialect::ClaudeCode, "error_max_turns"),
            "max_turns"
        );
        assert_eq!(neutral_subtype(Dialect::Caliban, "max_turns"), "max_turns");
        assert_eq!(neutral_subtype(Dialect::ClaudeCode, "success"), "success");
    }

    #[test]
    fn caliban_deltas_split_by_other_frames() {
        let frames = vec![
            json!({"type": "thinking", "delta": "hm"}),
            json!({"type": "text", "delta": "Run"}),
            json!({"type": "text", "delta": "ning."}),
            json!({"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}),
            json!({"type": "tool_result", "tool_use_id": "t1", "is_error": false, "content": [{"type": "text", "text": "ok"}]}),
            json!({"type": "text", "delta": "Done."}),
            json!({"type": "result", "subtype": "success", "result": "Done.", "is_error": false}),
        ];
        let n = neutral(Dialect::Caliban, &frames);
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

    #[test]
    fn claude_code_subagent_frames_are_left_out() {
        let frames = vec![
            json!({"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "Say banana"}]}, "parent_tool_use_id": "toolu_task"}),
            json!({"type": "user", "message": {"role": "user", "content": "hi"}, "parent_tool_use_id": null}),
        ];
        let n = neutral(Dialect::ClaudeCode, &frames);
        assert_eq!(n.events, [Event::UserEcho { text: "hi".into() }]);
        assert!(n
            .unmapped
            .contains("user (subagent, parent_tool_use_id set)"));
    }

    #[test]
    fn content_text_takes_strings_and_blocks() {
        assert_eq!(content_text(&json!("a")), "a");
        assert_eq!(
            content_text(
                &json!([{"type": "text", "text": "a"}, {"type": "image"}, {"type": "text", "text": "b"}])
            ),
            "ab"
        );
    }
}
