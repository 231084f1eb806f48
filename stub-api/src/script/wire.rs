//! Wire forms of the types whose shape rules serde attributes cannot express: what a
//! step, a rule and a block look like in YAML, their checks, and the conversions.

use super::*;
use schemars::gen::SchemaGenerator;
use schemars::schema::Schema;
use serde::de::value::MapAccessDeserializer;
use serde::de::{MapAccess, Visitor};
use serde::Deserializer;
use std::fmt;
use std::marker::PhantomData;

/// YAML form of a step.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Step")]
pub(super) struct StepDef {
    /// Predicates the request must satisfy; absent accepts any request.
    #[serde(rename = "match", default, skip_serializing_if = "Match::is_empty")]
    matcher: Match,
    /// Default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    times: Option<Times>,
    /// Answer with this message (exactly one of `message`, `http_error`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    message: Option<Message>,
    /// Answer with this HTTP error (exactly one of `message`, `http_error`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    http_error: Option<HttpError>,
    /// Only with `message`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    faults: Option<Faults>,
    /// Extra response headers (name -> value), e.g. Claude Code's
    /// `anthropic-ratelimit-unified-status: allowed`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    headers: BTreeMap<String, String>,
}

/// YAML form of a background rule.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Rule")]
pub(super) struct RuleDef {
    name: String,
    #[serde(rename = "match", default, skip_serializing_if = "Match::is_empty")]
    matcher: Match,
    /// Default `forever`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    times: Option<Times>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    message: Option<Message>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    http_error: Option<HttpError>,
    /// Extra response headers (name -> value).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    headers: BTreeMap<String, String>,
}

/// YAML form of a block: a single-key map (`thinking` may carry `signature`).
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Block")]
pub(super) struct BlockDef {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    thinking: Option<String>,
    /// Only with `thinking`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    signature: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    redacted_thinking: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tool_use: Option<ToolUse>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    server_tool_use: Option<ToolUse>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    web_search_tool_result: Option<WebSearchToolResult>,
}

fn one_response(
    what: &str,
    message: Option<Message>,
    http_error: Option<HttpError>,
) -> Result<Response, String> {
    let response = match (message, http_error) {
        (Some(m), None) => Response::Message(m),
        (None, Some(e)) => Response::HttpError(e),
        (Some(_), Some(_)) => {
            return Err(format!(
                "{what} needs exactly one of `message`, `http_error`; found both"
            ))
        }
        (None, None) => {
            return Err(format!(
                "{what} needs exactly one of `message`, `http_error`; found neither"
            ))
        }
    };
    if let Response::HttpError(e) = &response {
        validate_http_error(e)?;
    }
    Ok(response)
}

fn validate_http_error(e: &HttpError) -> Result<(), String> {
    if !(200..=599).contains(&e.status) {
        return Err(format!(
            "http_error.status must be within 200..=599, found {}",
            e.status
        ));
    }
    validate_headers("http_error.headers", &e.headers)
}

fn validate_headers(what: &str, headers: &BTreeMap<String, String>) -> Result<(), String> {
    for (name, value) in headers {
        hyper::header::HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("{what}: invalid header name {name:?}"))?;
        hyper::header::HeaderValue::from_str(value)
            .map_err(|_| format!("{what}: invalid value for {name:?}: {value:?}"))?;
    }
    Ok(())
}

fn validate_faults(faults: &Faults, message: &Message) -> Result<(), String> {
    if faults.split_deltas == Some(0) {
        return Err("faults.split_deltas must be at least 1".into());
    }
    if faults.chunk_bytes == Some(0) {
        return Err("faults.chunk_bytes must be at least 1".into());
    }
    let events = message.event_count(faults.split_deltas.unwrap_or(1) as usize);
    let positions = [
        ("disconnect_after_events", faults.disconnect_after_events),
        (
            "stream_error.after_events",
            faults.stream_error.as_ref().map(|e| e.after_events),
        ),
        (
            "malformed_data_after_events",
            faults.malformed_data_after_events,
        ),
        ("stall_after_events", faults.stall_after_events),
    ];
    for (name, n) in positions {
        if let Some(n) = n {
            if n > events {
                return Err(format!(
                    "faults.{name} is {n} but this message streams only {events} events"
                ));
            }
        }
    }
    Ok(())
}

impl TryFrom<StepDef> for Step {
    type Error = String;
    fn try_from(d: StepDef) -> Result<Step, String> {
        let response = one_response("a step", d.message, d.http_error)?;
        if let Some(faults) = &d.faults {
            match &response {
                Response::Message(m) => validate_faults(faults, m)?,
                Response::HttpError(_) => {
                    return Err(
                        "`faults` only apply to a `message` response, not to `http_error`".into(),
                    )
                }
            }
        }
        validate_headers("headers", &d.headers)?;
        Ok(Step {
            matcher: d.matcher,
            times: d.times.unwrap_or(Times::Count(1)),
            response,
            faults: d.faults,
            headers: d.headers,
        })
    }
}

impl From<Step> for StepDef {
    fn from(s: Step) -> StepDef {
        let (message, http_error) = split_response(s.response);
        StepDef {
            matcher: s.matcher,
            times: (!s.times.is_one()).then_some(s.times),
            message,
            http_error,
            faults: s.faults,
            headers: s.headers,
        }
    }
}

impl TryFrom<RuleDef> for Rule {
    type Error = String;
    fn try_from(d: RuleDef) -> Result<Rule, String> {
        let response = one_response("a background rule", d.message, d.http_error)?;
        validate_headers("headers", &d.headers)?;
        Ok(Rule {
            name: d.name,
            matcher: d.matcher,
            times: d.times.unwrap_or(Times::Forever),
            response,
            headers: d.headers,
        })
    }
}

impl From<Rule> for RuleDef {
    fn from(r: Rule) -> RuleDef {
        let (message, http_error) = split_response(r.response);
        RuleDef {
            name: r.name,
            matcher: r.matcher,
            times: (r.times != Times::Forever).then_some(r.times),
            message,
            http_error,
            headers: r.headers,
        }
    }
}

fn split_response(r: Response) -> (Option<Message>, Option<HttpError>) {
    match r {
        Response::Message(m) => (Some(m), None),
        Response::HttpError(e) => (None, Some(e)),
    }
}

impl TryFrom<BlockDef> for Block {
    type Error = String;
    fn try_from(d: BlockDef) -> Result<Block, String> {
        let mut kinds = Vec::new();
        if d.text.is_some() {
            kinds.push("text");
        }
        if d.thinking.is_some() {
            kinds.push("thinking");
        }
        if d.redacted_thinking.is_some() {
            kinds.push("redacted_thinking");
        }
        if d.tool_use.is_some() {
            kinds.push("tool_use");
        }
        if d.server_tool_use.is_some() {
            kinds.push("server_tool_use");
        }
        if d.web_search_tool_result.is_some() {
            kinds.push("web_search_tool_result");
        }
        if kinds.len() != 1 {
            return Err(format!(
                "a content block needs exactly one of `text`, `thinking`, `redacted_thinking`, `tool_use`, `server_tool_use`, `web_search_tool_result`; found {}",
                if kinds.is_empty() { "none".to_string() } else { kinds.join(", ") }
            ));
        }
        if d.signature.is_some() && d.thinking.is_none() {
            return Err("`signature` only goes with a `thinking` block".into());
        }
        Ok(if let Some(text) = d.text {
            Block::Text(text)
        } else if let Some(thinking) = d.thinking {
            Block::Thinking {
                thinking,
                signature: d
                    .signature
                    .unwrap_or_else(|| Block::DEFAULT_SIGNATURE.to_string()),
            }
        } else if let Some(data) = d.redacted_thinking {
            Block::RedactedThinking(data)
        } else if let Some(t) = d.server_tool_use {
            Block::ServerToolUse(t)
        } else if let Some(r) = d.web_search_tool_result {
            Block::WebSearchToolResult(r)
        } else {
            let tool_use = d.tool_use.expect("counted above");
            super::from_result::check_input(&tool_use.input)?;
            Block::ToolUse(tool_use)
        })
    }
}

impl From<Block> for BlockDef {
    fn from(b: Block) -> BlockDef {
        let mut d = BlockDef {
            text: None,
            thinking: None,
            signature: None,
            redacted_thinking: None,
            tool_use: None,
            server_tool_use: None,
            web_search_tool_result: None,
        };
        match b {
            Block::Text(t) => d.text = Some(t),
            Block::Thinking {
                thinking,
                signature,
            } => {
                d.thinking = Some(thinking);
                d.signature = Some(signature);
            }
            Block::RedactedThinking(data) => d.redacted_thinking = Some(data),
            Block::ToolUse(t) => d.tool_use = Some(t),
            Block::ServerToolUse(t) => d.server_tool_use = Some(t),
            Block::WebSearchToolResult(r) => d.web_search_tool_result = Some(r),
        }
        d
    }
}

/// Deserializes the wire form `Def` of a map and converts it, inside the map visitor so
/// that a conversion error carries the map's YAML location and path (an error raised
/// after the map was read, as with `#[serde(try_from)]`, would point at the parent).
struct ViaDef<Def, T>(PhantomData<fn() -> (Def, T)>, &'static str);

impl<'de, Def, T> Visitor<'de> for ViaDef<Def, T>
where
    Def: Deserialize<'de>,
    T: TryFrom<Def, Error = String>,
{
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.1)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        let def = Def::deserialize(MapAccessDeserializer::new(map))?;
        T::try_from(def).map_err(A::Error::custom)
    }
}

/// Serialize and deserialize through the wire form; JSON schema of the wire form
/// (schemars would otherwise describe the in-memory shape).
macro_rules! via_def {
    ($ty:ty, $def:ty, $name:literal, $expecting:literal) => {
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                d.deserialize_map(ViaDef::<$def, $ty>(PhantomData, $expecting))
            }
        }
        impl Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                <$def>::from(self.clone()).serialize(s)
            }
        }
        impl JsonSchema for $ty {
            fn schema_name() -> String {
                $name.to_string()
            }
            fn json_schema(gen: &mut SchemaGenerator) -> Schema {
                <$def>::json_schema(gen)
            }
        }
    };
}
via_def!(Step, StepDef, "Step", "a step (a map)");
via_def!(Rule, RuleDef, "Rule", "a background rule (a map)");
via_def!(
    Block,
    BlockDef,
    "Block",
    "a content block (a single-key map)"
);
