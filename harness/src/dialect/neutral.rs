//! The neutral model every dialect's adapter maps its frames into, so that `compare` can set
//! two runs side by side: [`Event`]s and [`Neutral`], plus the readers of frame parts that
//! the adapters share. A leaf: the adapters import it, it imports none of them.
//!
//! The adapters keep substance (what the model said, which tools ran and what they
//! returned, retries, how the run ended) and drop shape (frame names, envelopes,
//! session ids, token fields). Frames that carry nothing neutral are counted by kind
//! in [`Neutral::unmapped`] so a report can list them once.

use crate::frame::frame_kind;
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
    /// The end of a turn. `subtype` is neutral (each dialect's `neutral_subtype`),
    /// `raw_subtype` as printed.
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
    pub(super) fn push_or_unmapped(&mut self, event: Option<Event>, frame: &Value) {
        match event {
            Some(e) => self.events.push(e),
            None => {
                self.unmapped.insert(frame_kind(frame));
            }
        }
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

pub(super) fn str_of(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

/// A `result` frame, its subtype named by `subtype` (the dialect's `neutral_subtype`).
pub(super) fn result_event(v: &Value, subtype: fn(&str) -> &str) -> Event {
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
        subtype: subtype(&raw).to_string(),
        raw_subtype: raw,
        is_error,
        text,
    }
}

pub(super) fn tool_call(block: &Value) -> Event {
    Event::ToolCall {
        id: str_of(block, "id").unwrap_or_default(),
        name: str_of(block, "name").unwrap_or_default(),
        input: block.get("input").cloned().unwrap_or(Value::Null),
    }
}

pub(super) fn tool_result(block: &Value) -> Event {
    Event::ToolResult {
        tool_use_id: str_of(block, "tool_use_id").unwrap_or_default(),
        is_error: block
            .get("is_error")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        text: content_text(block.get("content").unwrap_or(&Value::Null)),
    }
}

/// An `init` or `api_retry` system frame, alike in every dialect; `None` for any other.
pub(super) fn system_event(v: &Value) -> Option<Event> {
    match v.get("subtype").and_then(Value::as_str) {
        Some("init") => Some(Event::Init {
            model: str_of(v, "model"),
        }),
        Some("api_retry") => Some(Event::Retry {
            attempt: v.get("attempt").and_then(Value::as_u64),
            status: v.get("error_status").and_then(Value::as_u64),
        }),
        _ => None,
    }
}

/// A tool call not counted yet (a call without an id is always new).
pub(super) fn is_new_call(seen: &mut HashSet<String>, id: String) -> bool {
    id.is_empty() || seen.insert(id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
