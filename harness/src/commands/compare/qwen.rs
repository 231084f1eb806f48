//! Qwen Code's adapter: it prints Claude Code's frames, so they are read as Claude Code's;
//! tool calls are then named by the catalogue's neutral names (its `tools.yaml` read
//! backwards), and its own stream events are listed by their event type.

use super::dialect::{frame_kind, Event, Neutral};
use crate::toolmap::ToolMap;
use serde_json::Value;
use std::sync::OnceLock;

/// `targets/qwen-code/tools.yaml`, built in so a comparison of saved runs needs no checkout.
fn tools() -> &'static ToolMap {
    static MAP: OnceLock<ToolMap> = OnceLock::new();
    MAP.get_or_init(|| {
        ToolMap::parse(include_str!("../../../../targets/qwen-code/tools.yaml"))
            .expect("targets/qwen-code/tools.yaml parses")
    })
}

/// Qwen Code's frames in neutral terms, given what the Claude Code adapter made of them.
pub(super) fn adapt(mut n: Neutral, frames: &[Value]) -> Neutral {
    for event in &mut n.events {
        if let Event::ToolCall { name, .. } = event {
            if let Some(neutral) = tools().neutral_name(name) {
                *name = neutral.to_string();
            }
        }
    }
    let streamed = frames
        .iter()
        .filter(|f| frame_kind(f) == "stream_event")
        .filter_map(|f| f.pointer("/event/type").and_then(Value::as_str));
    let kinds: Vec<String> = streamed.map(|t| format!("stream_event/{t}")).collect();
    if !kinds.is_empty() {
        n.unmapped.remove("stream_event");
        n.unmapped.extend(kinds);
    }
    n
}
