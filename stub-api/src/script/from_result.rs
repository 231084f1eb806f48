//! `{$from_tool_result: <tool_use_id>, regex: "..."}` in a `tool_use` input: a value the
//! CLI made up (a background task id, a cron job id) taken from the text of a tool_result
//! in the request being answered, so the next scripted call can name it.
//!
//! The object is replaced by the regex's first capture group (the whole match when it has
//! none) in that tool_result's text, found in any user message of the request (the
//! latest first); a step whose reference finds no such result, or whose regex does not
//! match it, is not answered (the request is reported unscripted with the reason).

use regex::Regex;
use serde_json::Value;

use super::{Block, Message};

pub const KEY: &str = "$from_tool_result";

/// One reference, as written.
struct Ref<'a> {
    tool_use_id: &'a str,
    regex: Regex,
}

/// Reads `{$from_tool_result: id, regex: "..."}`; `None` for any other value, an error
/// for a map with the key but another shape or a bad regex.
fn parse(v: &Value) -> Option<Result<Ref<'_>, String>> {
    let m = v.as_object().filter(|m| m.contains_key(KEY))?;
    let shape =
        || format!("write `{{{KEY}: <tool_use_id>, regex: \"...\"}}` (exactly these two keys)");
    let (Some(id), Some(re), 2) = (
        m.get(KEY).and_then(Value::as_str),
        m.get("regex").and_then(Value::as_str),
        m.len(),
    ) else {
        return Some(Err(shape()));
    };
    Some(
        Regex::new(re)
            .map(|regex| Ref {
                tool_use_id: id,
                regex,
            })
            .map_err(|e| format!("`{KEY}: {id}`: bad regex: {e}")),
    )
}

/// Every reference in `v`, depth first.
fn visit<'a>(v: &'a Value, f: &mut dyn FnMut(Result<Ref<'a>, String>)) {
    if let Some(r) = parse(v) {
        return f(r);
    }
    match v {
        Value::Object(m) => m.values().for_each(|x| visit(x, f)),
        Value::Array(items) => items.iter().for_each(|x| visit(x, f)),
        _ => {}
    }
}

/// Checks every reference in a tool_use input (shape and regex), for load time.
pub fn check_input(input: &Value) -> Result<(), String> {
    let mut first = Ok(());
    visit(input, &mut |r| {
        if let (Err(e), Ok(())) = (r, &first) {
            first = Err(e);
        }
    });
    first
}

fn has_refs(input: &Value) -> bool {
    let mut any = false;
    visit(input, &mut |_| any = true);
    any
}

impl Message {
    /// True when a tool_use input names a value of the request (the message is then
    /// rendered per request, not from a template).
    pub fn takes_from_tool_results(&self) -> bool {
        self.content.iter().any(|b| match b {
            Block::ToolUse(t) => has_refs(&t.input),
            _ => false,
        })
    }

    /// The message with every reference replaced; `result_text` gives the text of the
    /// request's tool_result with that id.
    pub fn resolve_tool_result_refs(
        &self,
        result_text: impl Fn(&str) -> Option<String>,
    ) -> Result<Message, String> {
        let mut out = self.clone();
        for block in &mut out.content {
            if let Block::ToolUse(t) = block {
                t.input = resolve(&t.input, &result_text)?;
            }
        }
        Ok(out)
    }
}

fn resolve(v: &Value, result_text: &dyn Fn(&str) -> Option<String>) -> Result<Value, String> {
    if let Some(r) = parse(v) {
        let r = r?;
        let text = result_text(r.tool_use_id).ok_or_else(|| {
            format!(
                "`{KEY}: {}`: no tool_result with that id in the request",
                r.tool_use_id
            )
        })?;
        let caps = r.regex.captures(&text).ok_or_else(|| {
            format!(
                "`{KEY}: {}`: /{}/ does not match its text {:?}",
                r.tool_use_id,
                r.regex,
                text.chars().take(200).collect::<String>()
            )
        })?;
        let got = caps.get(1).or_else(|| caps.get(0)).expect("group 0 exists");
        return Ok(Value::String(got.as_str().to_string()));
    }
    Ok(match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| Ok((k.clone(), resolve(x, result_text)?)))
                .collect::<Result<_, String>>()?,
        ),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|x| resolve(x, result_text))
                .collect::<Result<_, _>>()?,
        ),
        other => other.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn message(input: Value) -> Message {
        serde_yaml::from_str::<Message>(&format!(
            "content: [{{tool_use: {{id: t2, name: TaskStop, input: {input}}}}}]"
        ))
        .unwrap()
    }

    fn input(m: &Message) -> &Value {
        match &m.content[0] {
            Block::ToolUse(t) => &t.input,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn replaces_a_reference_by_its_capture_group() {
        let m = message(
            json!({"task_id": {KEY: "t1", "regex": "with ID: (\\w+)\\."}, "keep": [1, {"x": "y"}]}),
        );
        assert!(m.takes_from_tool_results());
        let texts = |id: &str| {
            (id == "t1")
                .then(|| "Command running in background with ID: b7x2k. Output ...".to_string())
        };
        let got = m.resolve_tool_result_refs(texts).unwrap();
        assert_eq!(
            input(&got),
            &json!({"task_id": "b7x2k", "keep": [1, {"x": "y"}]})
        );
        // Without a group the whole match is the value.
        let m = message(json!({"id": {KEY: "t1", "regex": "b[0-9][0-9a-z]{3}"}}));
        assert_eq!(
            input(&m.resolve_tool_result_refs(texts).unwrap()),
            &json!({"id": "b7x2k"})
        );
    }

    #[test]
    fn a_missing_result_or_a_regex_that_does_not_match_is_an_error_naming_it() {
        let m = message(json!({"task_id": {KEY: "t1", "regex": "ID: (\\w+)"}}));
        let err = m.resolve_tool_result_refs(|_| None).unwrap_err();
        assert!(err.contains("no tool_result with that id"), "{err}");
        let err = m
            .resolve_tool_result_refs(|_| Some("nothing here".into()))
            .unwrap_err();
        assert!(
            err.contains("does not match its text \"nothing here\""),
            "{err}"
        );
    }

    #[test]
    fn plain_inputs_have_no_references() {
        let m = message(json!({"command": "echo {$from_tool_result}", "n": [1]}));
        assert!(!m.takes_from_tool_results());
        assert_eq!(check_input(input(&m)), Ok(()));
    }

    #[test]
    fn a_bad_reference_is_refused_at_load_with_its_shape() {
        for (yaml, needle) in [
            (
                "{task_id: {$from_tool_result: t1}}",
                "exactly these two keys",
            ),
            (
                "{task_id: {$from_tool_result: t1, regex: x, extra: 1}}",
                "exactly these two keys",
            ),
            (
                "{task_id: {$from_tool_result: t1, regex: \"(\"}}",
                "bad regex",
            ),
        ] {
            let text = format!("content: [{{tool_use: {{id: t2, name: X, input: {yaml}}}}}]");
            let err = serde_yaml::from_str::<Message>(&text)
                .unwrap_err()
                .to_string();
            assert!(err.contains(needle), "{yaml}: {err}");
        }
    }
}
