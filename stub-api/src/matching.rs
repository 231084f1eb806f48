//! Reading just enough of a request body to answer it, and the `match` predicates.
//!
//! The body is scanned once into borrowed raw slices of the few top-level fields the
//! stub cares about; the rest is skipped without building a `Value`. Nested parts are
//! parsed only when a predicate asks for them.

use std::borrow::Cow;
use std::cell::OnceCell;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::script::Match;

#[derive(Deserialize, Default)]
struct Fields<'a> {
    #[serde(borrow, default)]
    model: Option<&'a RawValue>,
    #[serde(borrow, default)]
    stream: Option<&'a RawValue>,
    #[serde(borrow, default)]
    messages: Option<&'a RawValue>,
    #[serde(borrow, default)]
    tools: Option<&'a RawValue>,
    #[serde(borrow, default)]
    system: Option<&'a RawValue>,
    #[serde(borrow, default)]
    output_config: Option<&'a RawValue>,
    #[serde(borrow, default)]
    output_format: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct MessageView<'a> {
    #[serde(borrow, default)]
    role: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
}

/// A request body, viewed lazily.
pub(crate) struct RequestInfo<'a> {
    fields: Fields<'a>,
    model: Option<Cow<'a, str>>,
    stream: bool,
    messages: OnceCell<Vec<Option<MessageView<'a>>>>,
    last_user_content: OnceCell<Option<Value>>,
}

impl<'a> RequestInfo<'a> {
    /// Parses `body`; fails only if it is not JSON. A JSON value that is not an object
    /// (or has odd field types) is accepted and simply has none of the fields.
    pub(crate) fn parse(body: &'a str) -> Result<RequestInfo<'a>, serde_json::Error> {
        let is_object = body.trim_start().starts_with('{');
        let parsed = if is_object {
            serde_json::from_str::<Fields>(body)
        } else {
            serde_json::from_str::<serde::de::IgnoredAny>(body).map(|_| Fields::default())
        };
        let fields = match parsed {
            Ok(f) => f,
            Err(e) if e.is_data() => {
                serde_json::from_str::<serde::de::IgnoredAny>(body)?;
                Fields::default()
            }
            Err(e) => return Err(e),
        };
        let model = fields
            .model
            .and_then(|raw| serde_json::from_str::<Cow<str>>(raw.get()).ok());
        let stream = fields.stream.is_some_and(|raw| raw.get() == "true");
        Ok(RequestInfo {
            fields,
            model,
            stream,
            messages: OnceCell::new(),
            last_user_content: OnceCell::new(),
        })
    }

    pub(crate) fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    pub(crate) fn stream(&self) -> bool {
        self.stream
    }

    fn messages(&self) -> &[Option<MessageView<'a>>] {
        self.messages.get_or_init(|| {
            let Some(raw) = self.fields.messages else {
                return Vec::new();
            };
            let Ok(items) = serde_json::from_str::<Vec<&RawValue>>(raw.get()) else {
                return Vec::new();
            };
            items
                .into_iter()
                .map(|item| serde_json::from_str::<MessageView>(item.get()).ok())
                .collect()
        })
    }

    fn last_user_content(&self) -> Option<&Value> {
        self.last_user_content
            .get_or_init(|| {
                let last = self
                    .messages()
                    .iter()
                    .rev()
                    .flatten()
                    .find(|m| m.role.as_deref() == Some("user"))?;
                serde_json::from_str(last.content?.get()).ok()
            })
            .as_ref()
    }

    fn last_user_text(&self) -> String {
        self.last_user_content()
            .map(content_text)
            .unwrap_or_default()
    }

    /// (tool_use_id, text of the content) of every tool_result in the last user message.
    fn tool_results(&self) -> Vec<ToolResult<'_>> {
        let Some(Value::Array(blocks)) = self.last_user_content() else {
            return Vec::new();
        };
        blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
            .map(|b| ToolResult {
                id: b.get("tool_use_id").and_then(Value::as_str).unwrap_or(""),
                text: b.get("content").map(content_text).unwrap_or_default(),
                is_error: b.get("is_error").and_then(Value::as_bool).unwrap_or(false),
            })
            .collect()
    }

    /// The text of the tool_result answering `tool_use_id`, in any user message (the
    /// latest first).
    pub(crate) fn tool_result_text(&self, tool_use_id: &str) -> Option<String> {
        self.messages()
            .iter()
            .rev()
            .flatten()
            .filter(|m| m.role.as_deref() == Some("user"))
            .filter_map(|m| serde_json::from_str::<Value>(m.content?.get()).ok())
            .find_map(|content| {
                content.as_array()?.iter().find_map(|b| {
                    (b.get("type").and_then(Value::as_str) == Some("tool_result")
                        && b.get("tool_use_id").and_then(Value::as_str) == Some(tool_use_id))
                    .then(|| b.get("content").map(content_text).unwrap_or_default())
                })
            })
    }

    fn tools_len(&self) -> usize {
        self.fields
            .tools
            .and_then(|raw| serde_json::from_str::<Vec<serde::de::IgnoredAny>>(raw.get()).ok())
            .map_or(0, |v| v.len())
    }

    fn system_text(&self) -> String {
        self.fields
            .system
            .and_then(|raw| serde_json::from_str::<Value>(raw.get()).ok())
            .map(|v| content_text(&v))
            .unwrap_or_default()
    }

    /// The property names of the JSON schema in `output_config.format` (or the older
    /// top-level `output_format`), whether given as `{schema: {properties}}` or inline.
    fn output_format_properties(&self) -> Vec<String> {
        let mut names = Vec::new();
        let formats = [
            self.fields
                .output_config
                .and_then(|raw| serde_json::from_str::<Value>(raw.get()).ok())
                .and_then(|mut v| v.get_mut("format").map(Value::take)),
            self.fields
                .output_format
                .and_then(|raw| serde_json::from_str::<Value>(raw.get()).ok()),
        ];
        for format in formats.iter().flatten() {
            for schema in [Some(format), format.get("schema")].into_iter().flatten() {
                if let Some(Value::Object(props)) = schema.get("properties") {
                    names.extend(props.keys().cloned());
                }
            }
        }
        names
    }
}

/// Text of a message or tool_result `content`: the string itself, or its text blocks
/// joined by newlines.
fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => {
            let texts: Vec<&str> = blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect();
            texts.join("\n")
        }
        _ => String::new(),
    }
}

fn shorten(s: &str) -> String {
    const MAX: usize = 160;
    if s.chars().count() <= MAX {
        format!("{s:?}")
    } else {
        let cut: String = s.chars().take(MAX).collect();
        format!("{cut:?}...")
    }
}

/// Checks every predicate of `m`; on failure, describes the first one that failed.
pub(crate) fn check(m: &Match, req: &RequestInfo) -> Result<(), String> {
    if let Some(want) = &m.model_contains {
        if !req
            .model()
            .is_some_and(|model| model.contains(want.as_str()))
        {
            return Err(format!(
                "`model_contains: {want:?}` but the request's model is {}",
                req.model()
                    .map_or("absent".to_string(), |s| format!("{s:?}"))
            ));
        }
    }
    if let Some(want) = m.message_count {
        let have = req.messages().len();
        if have != want {
            return Err(format!(
                "`message_count: {want}` but the request has {have} messages"
            ));
        }
    }
    if let Some(want) = m.has_tools {
        let have = req.tools_len();
        if (have > 0) != want {
            return Err(format!(
                "`has_tools: {want}` but the request has {have} tools"
            ));
        }
    }
    if let Some(want) = &m.output_format_property {
        let props = req.output_format_properties();
        if !props.iter().any(|p| p == want) {
            return Err(if props.is_empty() {
                format!("`output_format_property: {want:?}` but the request has no output_config.format schema properties")
            } else {
                format!("`output_format_property: {want:?}` but output_config.format has properties {props:?}")
            });
        }
    }
    if let Some(want) = &m.system_contains {
        let text = req.system_text();
        if !text.contains(want.as_str()) {
            return Err(format!(
                "`system_contains: {want:?}` but the system prompt is {}",
                shorten(&text)
            ));
        }
    }
    if let Some(want) = &m.last_user_text_contains {
        let text = req.last_user_text();
        if !text.contains(want.as_str()) {
            return Err(format!(
                "`last_user_text_contains: {want:?}` but the last user message's text is {}",
                shorten(&text)
            ));
        }
    }
    if m.tool_results.is_some()
        || m.tool_result_contains.is_some()
        || m.tool_result_is_error.is_some()
    {
        check_tool_results(m, req)?;
    }
    Ok(())
}

/// One tool_result block of the last user message.
struct ToolResult<'a> {
    id: &'a str,
    text: String,
    is_error: bool,
}

/// The `tool_results`, `tool_result_contains` and `tool_result_is_error` predicates, on
/// the last user message.
fn check_tool_results(m: &Match, req: &RequestInfo) -> Result<(), String> {
    let results = req.tool_results();
    if let Some(want) = &m.tool_results {
        let missing: Vec<&String> = want
            .iter()
            .filter(|id| !results.iter().any(|r| r.id == id.as_str()))
            .collect();
        if !missing.is_empty() {
            let have: Vec<&str> = results.iter().map(|r| r.id).collect();
            return Err(format!(
                "`tool_results: {want:?}` but the last user message has tool_results for {have:?} (missing {missing:?})"
            ));
        }
    }
    if let Some(want) = &m.tool_result_contains {
        if !results.iter().any(|r| r.text.contains(want.as_str())) {
            return Err(format!(
                "`tool_result_contains: {want:?}` but no tool_result in the last user message contains it ({} tool_results)",
                results.len()
            ));
        }
    }
    if let Some(want) = m.tool_result_is_error {
        if !results.iter().any(|r| r.is_error == want) {
            return Err(format!(
                "`tool_result_is_error: {want}` but no tool_result in the last user message has is_error {want} ({} tool_results)",
                results.len()
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(yaml: &str) -> Match {
        serde_yaml::from_str(yaml).unwrap()
    }

    #[test]
    fn predicates() {
        let body = r#"{"model":"claude-opus-4","stream":true,"system":[{"type":"text","text":"be brief"}],
            "tools":[{"name":"Bash"}],
            "messages":[{"role":"user","content":"first"},{"role":"assistant","content":"x"},
              {"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"hello out"}]},
                                         {"type":"tool_result","tool_use_id":"t2","content":"plain","is_error":true},
                                         {"type":"text","text":"second"}]}]}"#;
        let req = RequestInfo::parse(body).unwrap();
        assert!(req.stream());
        assert_eq!(req.model(), Some("claude-opus-4"));
        for ok in [
            "{}",
            "model_contains: opus",
            "message_count: 3",
            "has_tools: true",
            "system_contains: brief",
            "last_user_text_contains: second",
            "tool_results: [t1, t2]",
            "tool_result_contains: hello",
            "tool_result_contains: plain",
            "tool_result_is_error: true",
            "tool_result_is_error: false",
        ] {
            assert_eq!(check(&m(ok), &req), Ok(()), "{ok}");
        }
        for (bad, needle) in [
            ("model_contains: haiku", "model_contains"),
            ("message_count: 2", "has 3 messages"),
            ("has_tools: false", "has 1 tools"),
            ("tool_results: [t1, t3]", "missing [\"t3\"]"),
            ("output_format_property: title", "output_format_property"),
            ("last_user_text_contains: first", "last_user_text_contains"),
        ] {
            let err = check(&m(bad), &req).unwrap_err();
            assert!(err.contains(needle), "{bad}: {err}");
        }
    }

    #[test]
    fn tool_result_is_error_reads_an_absent_flag_as_false() {
        let body = r#"{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}]}"#;
        let req = RequestInfo::parse(body).unwrap();
        assert_eq!(check(&m("tool_result_is_error: false"), &req), Ok(()));
        let err = check(&m("tool_result_is_error: true"), &req).unwrap_err();
        assert!(
            err.contains("no tool_result in the last user message has is_error true"),
            "{err}"
        );
    }

    #[test]
    fn lenient_bodies() {
        let req = RequestInfo::parse("[1,2]").unwrap();
        assert_eq!(req.model(), None);
        assert!(!req.stream());
        let req = RequestInfo::parse(r#"{"model": 3, "messages": "no", "tools": {}}"#).unwrap();
        assert_eq!(
            check(&m("{message_count: 0, has_tools: false}"), &req),
            Ok(())
        );
        assert!(RequestInfo::parse("{nope").is_err());
    }

    #[test]
    fn title_shape() {
        let body = r#"{"model":"m","tools":[],"messages":[],"output_config":{"effort":"high","format":{"type":"json_schema","schema":{"type":"object","properties":{"title":{"type":"string"}}}}}}"#;
        let req = RequestInfo::parse(body).unwrap();
        assert_eq!(
            check(
                &m("{has_tools: false, output_format_property: title}"),
                &req
            ),
            Ok(())
        );
    }
}
