//! Encoding a scripted message the way the Anthropic Messages API sends it: as SSE
//! events (`stream: true`) or as one JSON object, plus the error bodies.

use serde::Serialize;
use serde_json::Value;

use crate::script::{delta_parts, Block, Message, Usage};

/// Per-request values a message is rendered with.
pub(crate) struct RenderCtx<'a> {
    pub id: &'a str,
    pub model: &'a str,
}

/// Writes the SSE events of `msg` into `out`. When `ends` is given, the end offset of
/// every event is pushed to it (fault injection cuts the stream at event boundaries).
pub(crate) fn render_sse(
    msg: &Message,
    ctx: &RenderCtx,
    split: usize,
    out: &mut Vec<u8>,
    mut ends: Option<&mut Vec<usize>>,
) {
    let mut mark = |out: &Vec<u8>| {
        if let Some(ends) = ends.as_deref_mut() {
            ends.push(out.len());
        }
    };
    let usage = msg.usage;
    event(
        out,
        "message_start",
        &MessageStart {
            ty: "message_start",
            message: MessageHead {
                id: ctx.id,
                ty: "message",
                role: "assistant",
                model: ctx.model,
                content: [],
                stop_reason: None,
                stop_sequence: None,
                usage: WireUsage {
                    output_tokens: 1,
                    ..WireUsage::from(usage)
                },
            },
        },
    );
    mark(out);
    event(out, "ping", &Typed { ty: "ping" });
    mark(out);
    for (index, block) in msg.content.iter().enumerate() {
        block_events(index, block, split, out, &mut mark);
    }
    event(
        out,
        "message_delta",
        &MessageDelta {
            ty: "message_delta",
            delta: StopDelta {
                stop_reason: msg.effective_stop_reason().as_str(),
                stop_sequence: msg.stop_sequence.as_deref(),
            },
            usage: WireUsage::from(usage),
        },
    );
    mark(out);
    event(out, "message_stop", &Typed { ty: "message_stop" });
    mark(out);
}

/// The events of one content block: its start, its deltas (`split` parts each), its stop.
fn block_events(
    index: usize,
    block: &Block,
    split: usize,
    out: &mut Vec<u8>,
    mark: &mut impl FnMut(&Vec<u8>),
) {
    let content_block = match block {
        Block::Text(_) => WireBlock::Text { text: "" },
        Block::Thinking { .. } => WireBlock::Thinking {
            thinking: "",
            signature: "",
        },
        Block::RedactedThinking(data) => WireBlock::RedactedThinking { data },
        Block::ToolUse(t) => WireBlock::ToolUse {
            id: &t.id,
            name: &t.name,
            input: Input::Empty(Empty {}),
        },
        Block::ServerToolUse(t) => WireBlock::ServerToolUse {
            id: &t.id,
            name: &t.name,
            input: Input::Empty(Empty {}),
        },
        Block::WebSearchToolResult(r) => WireBlock::WebSearchToolResult {
            tool_use_id: &r.tool_use_id,
            content: &r.content,
        },
    };
    event(
        out,
        "content_block_start",
        &BlockStart {
            ty: "content_block_start",
            index,
            content_block,
        },
    );
    mark(out);
    let mut delta = |out: &mut Vec<u8>, delta: Delta| {
        let ty = "content_block_delta";
        event(out, ty, &BlockDelta { ty, index, delta });
        mark(out);
    };
    match block {
        Block::Text(text) => {
            for part in split_chars(text, split) {
                delta(out, Delta::Text { text: part });
            }
        }
        Block::Thinking {
            thinking,
            signature,
        } => {
            for part in split_chars(thinking, split) {
                delta(out, Delta::Thinking { thinking: part });
            }
            delta(out, Delta::Signature { signature });
        }
        Block::RedactedThinking(_) | Block::WebSearchToolResult(_) => {}
        Block::ToolUse(t) | Block::ServerToolUse(t) => {
            let json = t.input.to_string();
            for part in split_chars(&json, split) {
                delta(out, Delta::InputJson { partial_json: part });
            }
        }
    }
    let ty = "content_block_stop";
    event(out, ty, &BlockStop { ty, index });
    mark(out);
}

/// A response body rendered once per script entry, with holes for the two values
/// that change per request (message id and model). Filling it costs a few copies
/// instead of serializing the whole message again.
pub(crate) struct Template {
    bytes: Vec<u8>,
    segments: Vec<Segment>,
}

enum Segment {
    Literal(std::ops::Range<usize>),
    Id,
    Model,
}

const ID_MARK: &str = "\u{0}stub-api:id\u{0}";
const MODEL_MARK: &str = "\u{0}stub-api:model\u{0}";

impl Template {
    /// Renders with marker values and cuts the output at the (JSON-quoted) markers.
    /// None if a marker does not occur exactly once (e.g. message text contains it).
    pub(crate) fn new(render: impl Fn(&RenderCtx, &mut Vec<u8>)) -> Option<Template> {
        let mut bytes = Vec::new();
        render(
            &RenderCtx {
                id: ID_MARK,
                model: MODEL_MARK,
            },
            &mut bytes,
        );
        let quoted = |mark: &str| serde_json::to_vec(mark).expect("a string serializes");
        let (id, model) = (quoted(ID_MARK), quoted(MODEL_MARK));
        let find_all = |needle: &[u8]| -> Vec<usize> {
            bytes
                .windows(needle.len())
                .enumerate()
                .filter(|(_, w)| *w == needle)
                .map(|(i, _)| i)
                .collect()
        };
        let (ids, models) = (find_all(&id), find_all(&model));
        if ids.len() != 1 || models.len() != 1 {
            return None;
        }
        let mut holes = [
            (ids[0], id.len(), Segment::Id),
            (models[0], model.len(), Segment::Model),
        ];
        holes.sort_by_key(|h| h.0);
        let mut segments = Vec::with_capacity(5);
        let mut at = 0;
        for (start, len, hole) in holes {
            segments.push(Segment::Literal(at..start));
            segments.push(hole);
            at = start + len;
        }
        segments.push(Segment::Literal(at..bytes.len()));
        Some(Template { bytes, segments })
    }

    pub(crate) fn fill(&self, ctx: &RenderCtx) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.bytes.len() + ctx.id.len() + ctx.model.len() + 8);
        for segment in &self.segments {
            match segment {
                Segment::Literal(range) => out.extend_from_slice(&self.bytes[range.clone()]),
                Segment::Id => {
                    serde_json::to_writer(&mut out, ctx.id).expect("a string serializes")
                }
                Segment::Model => {
                    serde_json::to_writer(&mut out, ctx.model).expect("a string serializes")
                }
            }
        }
        out
    }
}

/// Writes `msg` as the non-streaming JSON response body.
pub(crate) fn render_json(msg: &Message, ctx: &RenderCtx, out: &mut Vec<u8>) {
    let content: Vec<WireBlock> = msg
        .content
        .iter()
        .map(|b| match b {
            Block::Text(text) => WireBlock::Text { text },
            Block::Thinking {
                thinking,
                signature,
            } => WireBlock::Thinking {
                thinking,
                signature,
            },
            Block::RedactedThinking(data) => WireBlock::RedactedThinking { data },
            Block::ToolUse(t) => WireBlock::ToolUse {
                id: &t.id,
                name: &t.name,
                input: Input::Full(&t.input),
            },
            Block::ServerToolUse(t) => WireBlock::ServerToolUse {
                id: &t.id,
                name: &t.name,
                input: Input::Full(&t.input),
            },
            Block::WebSearchToolResult(r) => WireBlock::WebSearchToolResult {
                tool_use_id: &r.tool_use_id,
                content: &r.content,
            },
        })
        .collect();
    let full = FullMessage {
        id: ctx.id,
        ty: "message",
        role: "assistant",
        model: ctx.model,
        content,
        stop_reason: msg.effective_stop_reason().as_str(),
        stop_sequence: msg.stop_sequence.as_deref(),
        usage: WireUsage::from(msg.usage),
    };
    serde_json::to_writer(out, &full).expect("serializing to a Vec cannot fail");
}

/// The Anthropic error body: `{"type":"error","error":{"type":..,"message":..}}`.
pub(crate) fn error_body(error_type: &str, message: &str) -> Vec<u8> {
    serde_json::to_vec(&ErrorBody::new(error_type, message)).expect("serializable")
}

/// One `event: error` SSE event with the Anthropic error body.
pub(crate) fn error_event(error_type: &str, message: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(128);
    event(&mut out, "error", &ErrorBody::new(error_type, message));
    out
}

/// An event whose data line is cut off in the middle of its JSON.
pub(crate) const MALFORMED_EVENT: &[u8] =
    b"event: content_block_delta\ndata: {\"type\": \"content_block_delta\", \n\n";

fn event(out: &mut Vec<u8>, name: &str, data: &impl Serialize) {
    out.extend_from_slice(b"event: ");
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"\ndata: ");
    serde_json::to_writer(&mut *out, data).expect("serializing to a Vec cannot fail");
    out.extend_from_slice(b"\n\n");
}

/// Splits `s` into `min(k, chars)` non-empty parts of near-equal char counts.
pub(crate) fn split_chars(s: &str, k: usize) -> Vec<&str> {
    let n = delta_parts(s, k);
    if n <= 1 {
        return if n == 0 { Vec::new() } else { vec![s] };
    }
    let chars = s.chars().count();
    let (base, extra) = (chars / n, chars % n);
    let mut out = Vec::with_capacity(n);
    let mut iter = s
        .char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(s.len()));
    let mut start = iter.next().unwrap_or(0);
    for i in 0..n {
        let len = base + usize::from(i < extra);
        let end = iter.nth(len - 1).unwrap_or(s.len());
        out.push(&s[start..end]);
        start = end;
    }
    out
}

/// A tool_use input: `{}` in content_block_start, the full input elsewhere.
#[derive(Serialize)]
#[serde(untagged)]
enum Input<'a> {
    Empty(Empty),
    Full(&'a Value),
}

#[derive(Serialize)]
struct Empty {}

#[derive(Serialize)]
struct Typed {
    #[serde(rename = "type")]
    ty: &'static str,
}

#[derive(Serialize)]
struct WireUsage {
    input_tokens: u64,
    cache_creation_input_tokens: u64,
    cache_read_input_tokens: u64,
    output_tokens: u64,
}

impl From<Usage> for WireUsage {
    fn from(u: Usage) -> Self {
        WireUsage {
            input_tokens: u.input_tokens,
            cache_creation_input_tokens: u.cache_creation_input_tokens,
            cache_read_input_tokens: u.cache_read_input_tokens,
            output_tokens: u.output_tokens,
        }
    }
}

#[derive(Serialize)]
struct MessageStart<'a> {
    #[serde(rename = "type")]
    ty: &'static str,
    message: MessageHead<'a>,
}

#[derive(Serialize)]
struct MessageHead<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    ty: &'static str,
    role: &'static str,
    model: &'a str,
    content: [(); 0],
    stop_reason: Option<&'a str>,
    stop_sequence: Option<&'a str>,
    usage: WireUsage,
}

#[derive(Serialize)]
struct FullMessage<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    ty: &'static str,
    role: &'static str,
    model: &'a str,
    content: Vec<WireBlock<'a>>,
    stop_reason: &'a str,
    stop_sequence: Option<&'a str>,
    usage: WireUsage,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireBlock<'a> {
    Text {
        text: &'a str,
    },
    Thinking {
        thinking: &'a str,
        signature: &'a str,
    },
    RedactedThinking {
        data: &'a str,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: Input<'a>,
    },
    ServerToolUse {
        id: &'a str,
        name: &'a str,
        input: Input<'a>,
    },
    WebSearchToolResult {
        tool_use_id: &'a str,
        content: &'a Value,
    },
}

#[derive(Serialize)]
struct BlockStart<'a> {
    #[serde(rename = "type")]
    ty: &'static str,
    index: usize,
    content_block: WireBlock<'a>,
}

#[derive(Serialize)]
#[serde(tag = "type")]
enum Delta<'a> {
    #[serde(rename = "text_delta")]
    Text { text: &'a str },
    #[serde(rename = "thinking_delta")]
    Thinking { thinking: &'a str },
    #[serde(rename = "signature_delta")]
    Signature { signature: &'a str },
    #[serde(rename = "input_json_delta")]
    InputJson { partial_json: &'a str },
}

#[derive(Serialize)]
struct BlockDelta<'a> {
    #[serde(rename = "type")]
    ty: &'static str,
    index: usize,
    delta: Delta<'a>,
}

#[derive(Serialize)]
struct BlockStop {
    #[serde(rename = "type")]
    ty: &'static str,
    index: usize,
}

#[derive(Serialize)]
struct StopDelta<'a> {
    stop_reason: &'a str,
    stop_sequence: Option<&'a str>,
}

#[derive(Serialize)]
struct MessageDelta<'a> {
    #[serde(rename = "type")]
    ty: &'static str,
    delta: StopDelta<'a>,
    usage: WireUsage,
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    #[serde(rename = "type")]
    ty: &'static str,
    error: ErrorDetail<'a>,
}

#[derive(Serialize)]
struct ErrorDetail<'a> {
    #[serde(rename = "type")]
    ty: &'a str,
    message: &'a str,
}

impl<'a> ErrorBody<'a> {
    fn new(error_type: &'a str, message: &'a str) -> Self {
        ErrorBody {
            ty: "error",
            error: ErrorDetail {
                ty: error_type,
                message,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_is_char_safe_and_complete() {
        let s = "héllo wörld ✓";
        for k in 1..20 {
            let parts = split_chars(s, k);
            assert_eq!(parts.concat(), s);
            assert_eq!(parts.len(), k.min(s.chars().count()));
            assert!(parts.iter().all(|p| !p.is_empty()));
        }
        assert!(split_chars("", 3).is_empty());
    }

    #[test]
    fn templates_fill_like_a_full_render() {
        let msg: Message = serde_yaml::from_str(
            "content: [{text: 'a \\\"quoted\\\" ✓'}, {thinking: hmm}, {tool_use: {id: t, name: n, input: {a: 1}}}]",
        )
        .unwrap();
        let sse = Template::new(|ctx, out| render_sse(&msg, ctx, 1, out, None)).unwrap();
        let json = Template::new(|ctx, out| render_json(&msg, ctx, out)).unwrap();
        for (id, model) in [("msg_0", "claude-x"), ("m\"q", "mo\\del\n")] {
            let ctx = RenderCtx { id, model };
            let mut want = Vec::new();
            render_sse(&msg, &ctx, 1, &mut want, None);
            assert_eq!(sse.fill(&ctx), want);
            let mut want = Vec::new();
            render_json(&msg, &ctx, &mut want);
            assert_eq!(json.fill(&ctx), want);
        }
        let sneaky = Message::text(ID_MARK);
        assert!(Template::new(|ctx, out| render_json(&sneaky, ctx, out)).is_none());
    }

    #[test]
    fn event_count_matches_render() {
        let msg: Message = serde_yaml::from_str(
            "content: [{text: abc}, {thinking: hmm}, {redacted_thinking: x}, {tool_use: {id: t, name: n, input: {a: 1}}}, {text: ''}]",
        )
        .unwrap();
        for split in [1, 2, 5] {
            let mut out = Vec::new();
            let mut ends = Vec::new();
            let ctx = RenderCtx {
                id: "m",
                model: "x",
            };
            render_sse(&msg, &ctx, split, &mut out, Some(&mut ends));
            assert_eq!(ends.len(), msg.event_count(split));
            assert_eq!(*ends.last().unwrap(), out.len());
        }
    }
}
