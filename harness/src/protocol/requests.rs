//! What the CLI sent to the model API, as the request inventory counts it
//! (`targets/<dialect>/requests.yaml`, an [`Inventory`] like the frame one): per request
//! kind every key path of the body with its JSON types, and named lists of the header
//! names, the `anthropic-beta` flags and query parameters per kind, the tools sent and,
//! per tool, the JSON-Schema keywords its `input_schema` uses (never a value).
//!
//! A request's kind is its method and path, and for `/v1/messages` how it is sent: a
//! turn streams and carries the tools; `(not streamed)` is the non-streaming retry of a
//! turn, `(no tools)` a side request beside the conversation (a model probe, a title).
//! User-shaped values are opaque: message text is a string, a tool call's input and a
//! structured output's schema are their type only. An MCP tool's name is the scenario's
//! server and tool, so every MCP tool is one tool, [`MCP_TOOLS`].

use super::inventory::{self, Inventory};
use super::observe::Observed;
use crate::trial_id::ScenarioId;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use stub_api::JournalEntry;

/// The file of a dialect's request inventory, relative to the project.
pub fn file_of(dialect: &str) -> PathBuf {
    Path::new("targets").join(dialect).join("requests.yaml")
}

/// A dialect's request inventory in the project at `root` (`None`: it has none).
pub fn load(root: &Path, dialect: &str) -> inventory::Loaded {
    inventory::load_at(root.join(file_of(dialect)))
}

/// The file's text.
pub fn to_yaml(inv: &Inventory) -> String {
    inv.to_yaml_headed(&format!(
        "# What {} sent to the model API: every request kind, key path of its body (JSON types) and\n\
         # named list (header names, anthropic-beta flags, query parameters, tools, each tool's\n\
         # input_schema keywords) seen in the scenario catalogue's runs. Written by `streamcheck\n\
         # protocol build|add` beside protocol.yaml, with the same spans, `ran` and `by`.",
        inv.dialect
    ))
}

/// The name every MCP tool is counted under.
pub const MCP_TOOLS: &str = "mcp__*";

/// Key paths of a request body whose value is the scenario's data, kept as their type:
/// each tool's schema (its keywords are a list of their own) and a structured output's
/// schema.
const STOPS: [&str; 2] = ["tools[].input_schema", "output_config.format.schema"];

/// The list of header names of requests of `kind`.
pub fn headers_list(kind: &str) -> String {
    format!("headers[{kind}]")
}

/// The list of `anthropic-beta` flags of requests of `kind`.
pub fn betas_list(kind: &str) -> String {
    format!("anthropic-beta[{kind}]")
}

/// The list of query parameter names of requests of `kind`.
pub fn query_list(kind: &str) -> String {
    format!("query[{kind}]")
}

/// The list of tool names sent in requests of `kind`.
pub fn tools_list(kind: &str) -> String {
    format!("tools[{kind}]")
}

/// The list of JSON-Schema keywords in the `input_schema` of `tool`.
pub fn schema_list(tool: &str) -> String {
    format!("input_schema[{tool}]")
}

/// The request kind a list is about (`headers[POST /v1/messages]` -> `POST /v1/messages`);
/// `None` for a tool's keyword list, which is about a tool.
pub fn kind_of_list(list: &str) -> Option<&str> {
    let (what, rest) = list.split_once('[')?;
    (what != "input_schema").then(|| rest.strip_suffix(']'))?
}

/// A request's kind: `POST /v1/messages`, `POST /v1/messages (not streamed)`,
/// `POST /v1/messages (no tools, not streamed)`, `POST /v1/messages/count_tokens`.
pub fn kind_of(method: &str, path: &str, body: &Value) -> String {
    let route = format!("{method} {path}");
    if !path.ends_with("/v1/messages") {
        return route;
    }
    let mut how = Vec::new();
    let tools = body.get("tools").and_then(Value::as_array);
    if tools.is_none_or(|a| a.is_empty()) {
        how.push("no tools");
    }
    if body.get("stream") != Some(&Value::Bool(true)) {
        how.push("not streamed");
    }
    match how.is_empty() {
        true => route,
        false => format!("{route} ({})", how.join(", ")),
    }
}

/// A tool's name as the inventory keeps it.
fn tool_name(name: &str) -> &str {
    match name.starts_with("mcp__") {
        true => MCP_TOOLS,
        false => name,
    }
}

/// What one trial (`scenario` or `scenario[case]`) sent to the model API.
pub fn observe<'a>(
    scenario: &str,
    journal: impl IntoIterator<Item = &'a JournalEntry>,
) -> Observed {
    let sender = ScenarioId::file_of(scenario).to_string();
    let mut o = Observed::default();
    o.ran.insert(scenario.into());
    for entry in journal {
        let body = entry.body();
        let kind = kind_of(&entry.method, &entry.path, body);
        o.count(&sender, kind.clone(), body, &STOPS);
        o.add_names(
            &headers_list(&kind),
            scenario,
            entry.headers.keys().cloned(),
        );
        let betas = (entry.header("anthropic-beta").into_iter())
            .flat_map(|v| v.split(','))
            .map(|b| b.trim().to_string())
            .filter(|b| !b.is_empty());
        o.add_names(&betas_list(&kind), scenario, betas);
        let query = (entry.query.iter())
            .flat_map(|q| q.split('&'))
            .filter_map(|pair| pair.split('=').next())
            .filter(|name| !name.is_empty())
            .map(str::to_string);
        o.add_names(&query_list(&kind), scenario, query);
        let tools = body.get("tools").and_then(Value::as_array);
        let mut names = BTreeSet::new();
        for tool in tools.into_iter().flatten() {
            let Some(name) = tool.get("name").and_then(Value::as_str) else {
                continue;
            };
            let name = tool_name(name);
            names.insert(name.to_string());
            if let Some(schema) = tool.get("input_schema") {
                let mut words = BTreeSet::new();
                keywords(schema, &mut words);
                o.add_names(&schema_list(name), scenario, words);
            }
        }
        if tools.is_some() {
            o.add_names(&tools_list(&kind), scenario, names);
        }
    }
    o
}

/// Keywords whose value is an object of subschemas by name (the names are values).
const SCHEMAS_BY_NAME: [&str; 5] = [
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

/// Keywords whose value is a subschema or a list of them.
const SUBSCHEMAS: [&str; 14] = [
    "items",
    "prefixItems",
    "additionalItems",
    "additionalProperties",
    "unevaluatedProperties",
    "unevaluatedItems",
    "anyOf",
    "oneOf",
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "contains",
];

/// The keywords a JSON Schema uses, through its subschemas; values (an `enum`'s items, a
/// `description`, a property's name) are not keywords.
fn keywords(schema: &Value, out: &mut BTreeSet<String>) {
    let Value::Object(m) = schema else {
        if let Value::Array(items) = schema {
            items.iter().for_each(|s| keywords(s, out));
        }
        return;
    };
    for (word, v) in m {
        out.insert(word.clone());
        if SCHEMAS_BY_NAME.contains(&word.as_str()) {
            for sub in v.as_object().into_iter().flat_map(|o| o.values()) {
                keywords(sub, out);
            }
        } else if SUBSCHEMAS.contains(&word.as_str()) || word == "propertyNames" {
            keywords(v, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::collections::BTreeMap;
    use stub_api::Answer;

    pub(crate) fn entry(path: &str, headers: &[(&str, &str)], body: Value) -> JournalEntry {
        let headers: BTreeMap<String, String> = (headers.iter())
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        JournalEntry::new(
            0,
            "POST".into(),
            path.into(),
            Some("beta=true".into()),
            headers,
            body.to_string(),
            None,
            0,
            Answer::Side,
            200,
        )
    }

    #[test]
    fn a_request_counts_its_kind_keys_headers_betas_and_tool_keywords_but_no_value() {
        let turn = json!({
            "model": "m", "stream": true, "max_tokens": 1,
            "messages": [{"role": "user", "content": [
                {"type": "tool_use", "id": "t", "name": "Bash", "input": {"command": "ls"}}]}],
            "output_config": {"format": {"type": "json_schema", "schema": {"properties": {"title": {}}}}},
            "tools": [
                {"name": "Bash", "input_schema": {"type": "object", "properties": {"command": {"type": "string", "enum": ["a"]}}, "required": ["command"]}},
                {"name": "mcp__fixture__echo", "input_schema": {"type": "object", "anyOf": [{"minLength": 1}]}}
            ]
        });
        let probe = json!({"model": "m", "max_tokens": 1, "messages": []});
        let journal = [
            entry(
                "/v1/messages",
                &[("x-api-key", "[redacted]"), ("anthropic-beta", "a-1, b-2")],
                turn,
            ),
            entry("/v1/messages", &[("x-api-key", "[redacted]")], probe),
        ];
        let o = observe("s/x[c]", &journal);
        let kinds: Vec<&str> = o.kinds.keys().map(String::as_str).collect();
        assert_eq!(
            kinds,
            [
                "POST /v1/messages",
                "POST /v1/messages (no tools, not streamed)"
            ]
        );
        let keys = &o.kinds["POST /v1/messages"].keys;
        assert!(keys.contains_key("messages[].content[].input"));
        assert!(!keys.keys().any(|k| k.contains("command")), "{keys:?}");
        assert!(keys.contains_key("tools[].input_schema"));
        assert!(!keys.keys().any(|k| k.contains("input_schema.")));
        assert!(!keys.keys().any(|k| k.contains("title")), "{keys:?}");
        let names =
            |list: &str| -> Vec<String> { o.lists[list]["s/x[c]"].iter().cloned().collect() };
        assert_eq!(
            names("headers[POST /v1/messages]"),
            ["anthropic-beta", "x-api-key"]
        );
        assert_eq!(names("anthropic-beta[POST /v1/messages]"), ["a-1", "b-2"]);
        assert_eq!(names("query[POST /v1/messages]"), ["beta"]);
        assert_eq!(names("tools[POST /v1/messages]"), ["Bash", MCP_TOOLS]);
        assert_eq!(
            names("input_schema[Bash]"),
            ["enum", "properties", "required", "type"]
        );
        assert_eq!(
            names("input_schema[mcp__*]"),
            ["anyOf", "minLength", "type"]
        );
        assert_eq!(
            kind_of_list("headers[POST /v1/messages (not streamed)]"),
            Some("POST /v1/messages (not streamed)")
        );
        assert_eq!(kind_of_list("input_schema[Bash]"), None);
    }
}
