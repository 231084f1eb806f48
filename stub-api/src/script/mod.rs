//! The script: which response answers which request. Types plus their serde and
//! JSON-schema forms. Shape rules that serde attributes cannot express (exactly one
//! response kind, a block is a single-key map, fault positions inside the message)
//! are checked while deserializing, so a YAML error carries its location.

use std::collections::BTreeMap;
use std::fmt;

use schemars::gen::SchemaGenerator;
use schemars::schema::{InstanceType, Metadata, Schema, SchemaObject, SubschemaValidation};
use schemars::JsonSchema;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// A complete stub script.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Script {
    /// One step per POST /v1/messages request, in order. A request that no step
    /// answers gets an HTTP 400; the last step is never repeated implicitly.
    #[serde(default)]
    pub steps: Vec<Step>,
    /// Rules answered without consuming a step; checked before the steps, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub background: Vec<Rule>,
    /// Named built-in background rules, checked after `background`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub builtin_rules: Vec<BuiltinRule>,
}

impl Script {
    /// Parses a bare script.
    pub fn from_yaml(s: &str) -> Result<Script, serde_yaml::Error> {
        serde_yaml::from_str(s)
    }

    /// Parses either a bare script or a scenario file whose top-level `stub:` key
    /// holds the script (the other keys of a scenario are ignored then).
    pub fn from_yaml_or_scenario(s: &str) -> Result<Script, serde_yaml::Error> {
        #[derive(Deserialize)]
        struct Scenario {
            stub: Script,
        }
        let top: serde_yaml::Value = serde_yaml::from_str(s)?;
        let is_scenario = top
            .as_mapping()
            .is_some_and(|m| m.contains_key(serde_yaml::Value::from("stub")));
        if is_scenario {
            // Parse the text again (not `top`) so errors keep their line and column.
            serde_yaml::from_str::<Scenario>(s).map(|sc| sc.stub)
        } else {
            Script::from_yaml(s)
        }
    }

    pub fn steps_len(&self) -> usize {
        self.steps.len()
    }

    /// The explicit background rules followed by the built-in ones.
    pub fn all_rules(&self) -> Vec<Rule> {
        let mut rules = self.background.clone();
        rules.extend(self.builtin_rules.iter().map(BuiltinRule::rule));
        rules
    }

    /// JSON schema of the script format.
    pub fn json_schema() -> schemars::schema::RootSchema {
        schemars::schema_for!(Script)
    }
}

/// A built-in background rule, referred to by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum BuiltinRule {
    /// Claude Code's session-title side request (no tools, `output_config.format`
    /// asking for a `title` property), answered with `{"title":"Stub session"}`.
    #[serde(rename = "claude-code-session-title")]
    ClaudeCodeSessionTitle,
    /// Qwen Code's background memory-extraction request (a system prompt that opens as
    /// its "managed memory extraction subagent"), answered with a text that saves nothing.
    #[serde(rename = "qwen-code-memory-extraction")]
    QwenCodeMemoryExtraction,
}

impl BuiltinRule {
    pub fn rule(&self) -> Rule {
        match self {
            BuiltinRule::ClaudeCodeSessionTitle => Rule::claude_code_session_title(),
            BuiltinRule::QwenCodeMemoryExtraction => Rule::qwen_code_memory_extraction(),
        }
    }
}

/// One scripted answer for one POST /v1/messages request (or `times` of them).
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// Predicates the request must satisfy; the empty match accepts anything.
    pub matcher: Match,
    pub times: Times,
    pub response: Response,
    /// Only with a `message` response.
    pub faults: Option<Faults>,
    /// Extra response headers, sent with whatever the step answers.
    pub headers: BTreeMap<String, String>,
}

/// A background rule: answers matching requests without consuming a step.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    pub name: String,
    pub matcher: Match,
    pub times: Times,
    pub response: Response,
    /// Extra response headers, sent with whatever the rule answers.
    pub headers: BTreeMap<String, String>,
}

impl Rule {
    pub const CLAUDE_CODE_SESSION_TITLE: &'static str = "claude-code-session-title";
    pub const QWEN_CODE_MEMORY_EXTRACTION: &'static str = "qwen-code-memory-extraction";

    /// Claude Code 2.1.197 asks for a session title with the main model, no tools and
    /// `output_config.format` = a JSON schema with a `title` property.
    pub fn claude_code_session_title() -> Rule {
        Rule {
            name: Self::CLAUDE_CODE_SESSION_TITLE.to_string(),
            matcher: Match {
                has_tools: Some(false),
                output_format_property: Some("title".to_string()),
                ..Match::default()
            },
            times: Times::Forever,
            response: Response::Message(Message::text(r#"{"title":"Stub session"}"#)),
            headers: BTreeMap::new(),
        }
    }
}

impl Rule {
    /// Qwen Code 0.24.4 runs a "managed memory extraction subagent" beside a plain run:
    /// a request with tools whose system prompt names that subagent.
    pub fn qwen_code_memory_extraction() -> Rule {
        Rule {
            name: Self::QWEN_CODE_MEMORY_EXTRACTION.to_string(),
            matcher: Match {
                has_tools: Some(true),
                system_contains: Some("managed memory extraction subagent".to_string()),
                ..Match::default()
            },
            times: Times::Forever,
            response: Response::Message(Message::text("Nothing worth remembering.")),
            headers: BTreeMap::new(),
        }
    }
}

/// The answer of a step or rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Response {
    Message(Message),
    HttpError(HttpError),
}

/// How many requests a step or rule answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Times {
    Count(u32),
    Forever,
}

impl Times {
    pub fn is_one(&self) -> bool {
        *self == Times::Count(1)
    }
}

impl Serialize for Times {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Times::Count(n) => s.serialize_u32(*n),
            Times::Forever => s.serialize_str("forever"),
        }
    }
}

impl<'de> Deserialize<'de> for Times {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Times;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a positive integer or `forever`")
            }
            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<Times, E> {
                match u32::try_from(n) {
                    Ok(0) => Err(E::custom("`times` must be at least 1")),
                    Ok(n) => Ok(Times::Count(n)),
                    Err(_) => Err(E::custom("`times` is too large; use `forever`")),
                }
            }
            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<Times, E> {
                match u64::try_from(n) {
                    Ok(n) => self.visit_u64(n),
                    Err(_) => Err(E::custom("`times` must be at least 1")),
                }
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Times, E> {
                if s == "forever" {
                    Ok(Times::Forever)
                } else {
                    Err(E::custom(format!(
                        "`times` must be a positive integer or `forever`, found {s:?}"
                    )))
                }
            }
        }
        d.deserialize_any(V)
    }
}

impl JsonSchema for Times {
    fn schema_name() -> String {
        "Times".to_string()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let mut count = SchemaObject {
            instance_type: Some(InstanceType::Integer.into()),
            ..Default::default()
        };
        count.number().minimum = Some(1.0);
        let forever = SchemaObject {
            instance_type: Some(InstanceType::String.into()),
            enum_values: Some(vec![Value::from("forever")]),
            ..Default::default()
        };
        SchemaObject {
            metadata: Some(Box::new(Metadata {
                description: Some(
                    "How many requests this answers: a positive integer or `forever`.".into(),
                ),
                ..Default::default()
            })),
            subschemas: Some(Box::new(SubschemaValidation {
                one_of: Some(vec![count.into(), forever.into()]),
                ..Default::default()
            })),
            ..Default::default()
        }
        .into()
    }
}

/// Request predicates; every one that is set must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Match {
    /// The request's `model` contains this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_contains: Option<String>,
    /// The text of the last user message (string content or its text blocks) contains this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_user_text_contains: Option<String>,
    /// The last user message carries tool_result blocks for all of these tool_use ids.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_results: Option<Vec<String>>,
    /// Some tool_result content (string or text blocks) in the last user message contains this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_result_contains: Option<String>,
    /// Some tool_result in the last user message failed (true: `is_error: true`) or did not
    /// (false: `is_error` false or absent): routes a failure without matching any CLI's
    /// wording of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_result_is_error: Option<bool>,
    /// The number of entries in `messages`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_count: Option<usize>,
    /// The request has a non-empty `tools` array (true) or not (false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_tools: Option<bool>,
    /// `output_config.format` is a JSON schema whose `properties` has this key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_format_property: Option<String>,
    /// The system prompt (string or text blocks) contains this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_contains: Option<String>,
}

impl Match {
    pub fn is_empty(&self) -> bool {
        *self == Match::default()
    }
}

/// How many deltas a text of `s` is streamed in when split into `k` parts: none for an
/// empty text, at most one per char.
pub(crate) fn delta_parts(s: &str, k: usize) -> usize {
    if s.is_empty() {
        0
    } else if k <= 1 {
        1
    } else {
        k.min(s.chars().count())
    }
}

/// An assistant message, streamed as SSE or sent as one JSON object.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Message {
    #[serde(default)]
    pub content: Vec<Block>,
    /// Default: `tool_use` if any tool_use block, else `end_turn`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<StopReason>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_sequence: Option<String>,
    /// Default: the request's `model`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Default: `msg_<n>`, n = 0-based index of the scripted messages request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Usage::is_default")]
    pub usage: Usage,
}

impl Message {
    /// A message with one text block.
    pub fn text(text: impl Into<String>) -> Message {
        Message {
            content: vec![Block::Text(text.into())],
            ..Message::default()
        }
    }

    /// Number of SSE events this message is streamed as with `split` parts per delta
    /// (`sse::render_sse` writes them; a test there keeps the two in step).
    pub(crate) fn event_count(&self, split: usize) -> usize {
        let blocks: usize = self
            .content
            .iter()
            .map(|b| {
                2 + match b {
                    Block::Text(t) => delta_parts(t, split),
                    Block::Thinking { thinking, .. } => delta_parts(thinking, split) + 1,
                    Block::RedactedThinking(_) => 0,
                    Block::ToolUse(t) | Block::ServerToolUse(t) => {
                        delta_parts(&t.input.to_string(), split)
                    }
                    Block::WebSearchToolResult(_) => 0,
                }
            })
            .sum();
        4 + blocks
    }

    pub fn effective_stop_reason(&self) -> StopReason {
        self.stop_reason.unwrap_or_else(|| {
            if self.content.iter().any(|b| matches!(b, Block::ToolUse(_))) {
                StopReason::ToolUse
            } else {
                StopReason::EndTurn
            }
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    EndTurn,
    ToolUse,
    MaxTokens,
    StopSequence,
    PauseTurn,
    Refusal,
}

impl StopReason {
    pub fn as_str(&self) -> &'static str {
        match self {
            StopReason::EndTurn => "end_turn",
            StopReason::ToolUse => "tool_use",
            StopReason::MaxTokens => "max_tokens",
            StopReason::StopSequence => "stop_sequence",
            StopReason::PauseTurn => "pause_turn",
            StopReason::Refusal => "refusal",
        }
    }
}

/// Token counts reported in `usage`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Usage {
    #[serde(default = "Usage::default_input")]
    pub input_tokens: u64,
    #[serde(default = "Usage::default_output")]
    pub output_tokens: u64,
    #[serde(default)]
    pub cache_creation_input_tokens: u64,
    #[serde(default)]
    pub cache_read_input_tokens: u64,
}

impl Usage {
    fn default_input() -> u64 {
        5
    }
    fn default_output() -> u64 {
        7
    }
    fn is_default(&self) -> bool {
        *self == Usage::default()
    }
}

impl Default for Usage {
    fn default() -> Self {
        Usage {
            input_tokens: Self::default_input(),
            output_tokens: Self::default_output(),
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 0,
        }
    }
}

/// A content block. In YAML a single-key map (`text:`, `thinking:` with an optional
/// sibling `signature:`, `redacted_thinking:`, `tool_use:`, `server_tool_use:`,
/// `web_search_tool_result:`).
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    Text(String),
    Thinking {
        thinking: String,
        signature: String,
    },
    RedactedThinking(String),
    ToolUse(ToolUse),
    /// A tool the API ran itself (`web_search`): streamed like `tool_use`, but it does not
    /// make the message's stop reason `tool_use`.
    ServerToolUse(ToolUse),
    /// The result of a server tool, sent whole in its `content_block_start`.
    WebSearchToolResult(WebSearchToolResult),
}

impl Block {
    pub const DEFAULT_SIGNATURE: &'static str = "c3R1Yi1hcGkgdGhpbmtpbmcgc2lnbmF0dXJl";
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolUse {
    pub id: String,
    pub name: String,
    /// Default `{}`. `{$from_tool_result: <tool_use_id>, regex: "..."}` anywhere in it is
    /// replaced by the regex's first group in that tool_result's text in the request
    /// answered (a value the CLI made up, such as a background task id).
    #[serde(default = "empty_object")]
    pub input: Value,
}

/// `web_search_tool_result`: the `content` (a list of `web_search_result` blocks, or an
/// error object) is sent as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebSearchToolResult {
    pub tool_use_id: String,
    pub content: Value,
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

/// An HTTP error response with the Anthropic error body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HttpError {
    pub status: u16,
    /// Default derived from the status (529 overloaded_error, 429 rate_limit_error, ...).
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub error_type: Option<String>,
    /// Default: a text fitting the type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Extra response headers (e.g. retry-after, x-should-retry, request-id).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
}

impl HttpError {
    pub fn effective_type(&self) -> &str {
        match &self.error_type {
            Some(t) => t,
            None => match self.status {
                400 => "invalid_request_error",
                401 => "authentication_error",
                403 => "permission_error",
                404 => "not_found_error",
                413 => "request_too_large",
                429 => "rate_limit_error",
                529 => "overloaded_error",
                _ => "api_error",
            },
        }
    }

    pub fn effective_message(&self) -> &str {
        match &self.message {
            Some(m) => m,
            None => default_error_message(self.effective_type()),
        }
    }
}

/// The usual message text for an Anthropic error type.
pub fn default_error_message(error_type: &str) -> &'static str {
    match error_type {
        "invalid_request_error" => "Invalid request",
        "authentication_error" => "invalid x-api-key",
        "permission_error" => {
            "Your API key does not have permission to use the specified resource."
        }
        "not_found_error" => "Not found",
        "request_too_large" => "Request exceeds the maximum allowed number of bytes.",
        "rate_limit_error" => "Number of request tokens has exceeded your rate limit.",
        "overloaded_error" => "Overloaded",
        _ => "Internal server error",
    }
}

/// Transport faults applied to a `message` response. Event counts (`*_after_events`)
/// count every SSE event of the message, message_start and ping included; injected
/// events are not counted. Event faults apply to streaming requests only.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Faults {
    #[serde(default, skip_serializing_if = "is_zero")]
    pub delay_before_headers_ms: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub delay_between_events_ms: u64,
    /// Split every text/thinking/input_json delta into this many deltas (by chars).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split_deltas: Option<u32>,
    /// Write the body in chunks of this many bytes, each flushed on its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunk_bytes: Option<usize>,
    /// Abort the connection after this many events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disconnect_after_events: Option<usize>,
    /// Send `event: error` after some events, then end the response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_error: Option<StreamError>,
    /// Insert an event whose data line is truncated JSON after this many events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub malformed_data_after_events: Option<usize>,
    /// Stop sending after this many events (0: right after the 200 and its headers) and
    /// hold the connection open, neither ending nor aborting the response, until the client
    /// closes it or the stub stops.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stall_after_events: Option<usize>,
    /// Cut every multi-byte UTF-8 character of the body after its first byte: the two
    /// parts go out in separate writes with a short pause between them, so a client that
    /// decodes each read on its own sees half a character.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub split_utf8_chars: bool,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StreamError {
    pub after_events: usize,
    #[serde(rename = "type", default = "StreamError::default_type")]
    pub error_type: String,
    /// Default: a text fitting the type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl StreamError {
    fn default_type() -> String {
        "overloaded_error".to_string()
    }
    pub fn effective_message(&self) -> &str {
        match &self.message {
            Some(m) => m,
            None => default_error_message(&self.error_type),
        }
    }
}

mod from_result;
/// The YAML forms of steps, rules and blocks, and their serde both ways.
mod wire;
