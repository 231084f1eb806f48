//! What one trial printed, as the inventory counts it: frame kinds (content blocks,
//! stream events and control messages each a kind of their own), per kind every key path
//! with its JSON types and how often it was there, and the names of the named lists.
//! Values never become names of keys: a key that is not an identifier (a model name, a
//! file name used as a key) is `{*}`; tool inputs, MCP arguments, elicitation schemas and
//! structured output (the scenario's data, not the CLI's protocol) are kept as their type
//! only. A `user` frame's `tool_use_result` is a kind per tool (`tool_use_result[Bash]`):
//! each tool's result has a shape of its own; an object or array in it that is a copy of
//! one in the call's input (a `ReportFindings` result echoing its findings) is the model's
//! data echoed, kept as its type only. A reply to a request the client invented
//! (no such request, no subtype, or one the CLI calls unsupported) is one kind,
//! [`UNSUPPORTED_REPLY`], whatever the request was.

use crate::frame::{frame_kind, json_type};
use crate::trial_id::ScenarioId;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// Keys whose value is the scenario's data (a tool's input, MCP arguments, an
/// elicitation's schema, a structured output, a request id the host chose): their type
/// is the protocol, what is inside them is not.
const OPAQUE: [&str; 6] = [
    "request_id",
    "input",
    "tool_input",
    "structured_output",
    "arguments",
    "requested_schema",
];

/// Keys whose string value the scenario or the stub chose (model and result text, a
/// stub's payload, a prompt): never recorded as a value of the protocol, whatever it
/// looks like; nor are those of keys ending in [`SCRIPTED_ENDINGS`].
const SCRIPTED: [&str; 12] = [
    "text",
    "thinking",
    "result",
    "data",
    "content",
    "partial_json",
    "signature",
    "prompt",
    "description",
    "title",
    "cwd",
    "command",
];

/// Endings (lowercase) of keys naming what the scenario chose: a tool, server or hook
/// (`tool_name`, `display_name`), a model (`resolvedModel`), a file (`requested_path`).
const SCRIPTED_ENDINGS: [&str; 4] = ["name", "model", "path", "file"];

/// Whether the value of `key` is the scenario's or the stub's choice.
fn scripted(key: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    SCRIPTED.contains(&key) || SCRIPTED_ENDINGS.iter().any(|e| lower.ends_with(e))
}

/// At most this many distinct values of a key are kept; past it the key is open.
pub const MAX_VALUES: usize = 16;

/// The longest value kept as a token.
const TOKEN_CHARS: usize = 40;

/// The string values a key was seen with, where it is enum-like.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Values {
    /// Not looked at: no string value, or one the inventory never records (an id, an
    /// opaque key's, one the scenario chose).
    #[default]
    Unrecorded,
    /// At most [`MAX_VALUES`] distinct tokens.
    Tokens(BTreeSet<String>),
    /// More than [`MAX_VALUES`] distinct values, or one that is not a token (free text,
    /// an id, a number, a path).
    Open,
}

impl Values {
    pub fn add(&mut self, value: &str) {
        match token(value) {
            true => self.merge(&Values::Tokens(BTreeSet::from([value.to_string()]))),
            false => *self = Values::Open,
        }
    }

    pub fn merge(&mut self, other: &Values) {
        match (&mut *self, other) {
            (_, Values::Unrecorded) | (Values::Open, _) => {}
            (Values::Unrecorded, o) => *self = o.clone(),
            (_, Values::Open) => *self = Values::Open,
            (Values::Tokens(mine), Values::Tokens(theirs)) => {
                mine.extend(theirs.iter().cloned());
                if mine.len() > MAX_VALUES {
                    *self = Values::Open;
                }
            }
        }
    }
}

/// Whether a string looks like a token of the protocol (`success`, `end_turn`,
/// `content_block_delta`): short, starting with a letter, of letters, digits and `_-.:`
/// only, and not an id (a run of 5 digits, or digits mixed with both cases: base62).
pub fn token(s: &str) -> bool {
    let chars = s.chars().count();
    let shaped = (1..=TOKEN_CHARS).contains(&chars)
        && s.starts_with(|c: char| c.is_ascii_alphabetic())
        && (s.chars()).all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':'));
    let has = |f: fn(&char) -> bool| s.chars().any(|c| f(&c));
    let base62 =
        has(char::is_ascii_digit) && has(char::is_ascii_uppercase) && has(char::is_ascii_lowercase);
    let long_number = s
        .split(|c: char| !c.is_ascii_digit())
        .any(|run| run.len() >= 5);
    shaped && !base62 && !long_number
}

/// Whether a key names an id (`id`, `session_id`, `uuid`, `toolUseId`): its values are
/// never recorded.
fn id_key(key: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    lower == "id" || lower.ends_with("_id") || lower.ends_with("uuid") || key.ends_with("Id")
}

/// The kind of an error reply to a control request the CLI does not implement.
pub const UNSUPPORTED_REPLY: &str = "control_response/(unsupported request)/error";

/// How a CLI words its refusal of a request subtype it does not implement.
const UNSUPPORTED_WORDING: [&str; 1] = ["Unsupported control request subtype"];

/// The kind of a `user` frame's `tool_use_result` for the tool whose call it answers.
pub fn tool_result_kind(tool: &str) -> String {
    format!("tool_use_result[{tool}]")
}

/// A named list and where its names are printed: `(list, kind, JSON pointer)`; a kind
/// ending in `/` takes every kind of that frame type. A value there is one name (a
/// string), a list of names, or a list of objects with a `name`.
pub const LISTS: &[(&str, &str, &str)] = &[
    ("init.tools", "system/init", "/tools"),
    ("capabilities", "system/init", "/capabilities"),
    (
        "capabilities",
        "control_response/initialize/success",
        "/response/response/capabilities",
    ),
    ("permission_modes", "system/init", "/permissionMode"),
    ("permission_modes", "system/status", "/permissionMode"),
    (
        "permission_modes",
        "control_response/set_permission_mode/success",
        "/response/response/mode",
    ),
    ("stop_reason", "result/", "/stop_reason"),
    ("stop_reason", "assistant", "/message/stop_reason"),
    (
        "stop_reason",
        "stream_event/message_delta",
        "/event/delta/stop_reason",
    ),
];

/// The longest name a named list keeps.
pub const NAME_CHARS: usize = 100;

/// Per key path (`message.usage.input_tokens`, arrays as `[]`): its JSON types and how
/// many times it was there.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KeyCount {
    pub types: BTreeSet<&'static str>,
    pub present: u64,
    pub values: Values,
}

/// Everything printed of one kind.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KindCount {
    /// Frames (or blocks) of the kind.
    pub count: u64,
    /// The scenarios (without their case) that printed it.
    pub by: BTreeSet<String>,
    pub keys: BTreeMap<String, KeyCount>,
    /// Per path of an object (`""` the frame itself): how many objects were there; a key
    /// every one of them carried has `present` equal to it.
    pub objects: BTreeMap<String, u64>,
    /// The first one seen.
    pub example: Option<Value>,
}

impl KindCount {
    /// Whether every object at the key's parent carried it (`None`: not a key, or no
    /// parent object seen).
    pub fn every(&self, path: &str) -> Option<bool> {
        let parent = parent(path)?;
        let objects = *self.objects.get(parent)?;
        let present = self.keys.get(path).map_or(0, |k| k.present);
        (objects > 0).then_some(present >= objects)
    }

    fn merge(&mut self, other: &KindCount) {
        self.count += other.count;
        self.by.extend(other.by.iter().cloned());
        for (p, k) in &other.keys {
            let mine = self.keys.entry(p.clone()).or_default();
            mine.types.extend(&k.types);
            mine.present += k.present;
            mine.values.merge(&k.values);
        }
        for (p, n) in &other.objects {
            *self.objects.entry(p.clone()).or_default() += n;
        }
        if self.example.is_none() {
            self.example.clone_from(&other.example);
        }
    }
}

/// The object path a key path's key sits in (`a.b[].c` -> `a.b[]`, `c` -> ``); `None`
/// for what is not a key (an array's items `a[]`, a non-identifier key `{*}`).
pub fn parent(path: &str) -> Option<&str> {
    if path.ends_with("[]") || path.ends_with("{*}") {
        return None;
    }
    Some(path.rfind('.').map_or("", |i| &path[..i]))
}

/// What one trial (or many, merged) printed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Observed {
    /// The trials (`scenario` or `scenario[case]`) looked at, whether or not they printed.
    pub ran: BTreeSet<ScenarioId>,
    pub kinds: BTreeMap<String, KindCount>,
    /// Per list: per scenario that printed the list, the names it printed.
    pub lists: BTreeMap<String, BTreeMap<String, BTreeSet<String>>>,
}

impl Observed {
    /// One trial's output: its frames and the lines the client wrote (the requests a
    /// `control_response` answers). What it sent to the model API is the request
    /// inventory's ([`super::requests`]).
    pub fn of<'a>(
        scenario: &str,
        frames: impl IntoIterator<Item = &'a Value>,
        written: &[String],
    ) -> Observed {
        let asked = asked(written);
        let printer = ScenarioId::file_of(scenario).to_string();
        let mut o = Observed::default();
        o.ran.insert(scenario.into());
        let mut tools: BTreeMap<String, (String, &Value)> = BTreeMap::new();
        for frame in frames {
            if !frame.is_object() {
                continue;
            }
            let kind = kind_of(frame, &asked);
            o.lists_of(scenario, &kind, frame);
            let ty = frame
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let is_message = matches!(ty, "assistant" | "user");
            let blocks = match frame.pointer("/message/content") {
                Some(Value::Array(blocks)) if is_message => &blocks[..],
                _ => &[],
            };
            for b in blocks {
                if let Some(bt) = b.get("type").and_then(Value::as_str) {
                    o.count(&printer, format!("{ty}[{bt}]"), b, &[]);
                }
                if let (Some(id), Some(name)) = (
                    b.get("id").and_then(Value::as_str),
                    b.get("name").and_then(Value::as_str),
                ) {
                    let input = b.get("input").unwrap_or(&Value::Null);
                    tools.insert(id.to_string(), (tool_group(name).to_string(), input));
                }
            }
            let result = frame
                .get("tool_use_result")
                .filter(|r| ty == "user" && r.is_object());
            if let Some(result) = result {
                let call = (blocks.iter())
                    .find_map(|b| b.get("tool_use_id").and_then(Value::as_str))
                    .and_then(|id| tools.get(id));
                let tool = call.map_or("(unknown tool)", |(t, _)| t.as_str());
                let mut echoed = Vec::new();
                if let Some((_, input)) = call {
                    composites(input, &mut echoed);
                }
                o.count_echoing(&printer, tool_result_kind(tool), result, &echoed);
            }
            let stops: &[&str] = match is_message {
                true => &["message.content[]", "tool_use_result"],
                false => &[],
            };
            o.count(&printer, kind, frame, stops);
        }
        o
    }

    pub(crate) fn count(&mut self, scenario: &str, kind: String, v: &Value, stops: &[&str]) {
        let k = self.kind(scenario, kind, v);
        let w = Walk {
            stops,
            echoed: &[],
            values: true,
        };
        walk(v, "", &w, k);
    }

    /// A tool's result: `echoed`, the objects and arrays of the call's input, are kept
    /// as their type only where the result holds a copy of one; its values are the
    /// tool's output, never recorded.
    fn count_echoing(&mut self, scenario: &str, kind: String, v: &Value, echoed: &[&Value]) {
        let k = self.kind(scenario, kind, v);
        let w = Walk {
            stops: &[],
            echoed,
            values: false,
        };
        walk(v, "", &w, k);
    }

    /// A kind's count with one more of it, printed by `scenario`.
    fn kind(&mut self, scenario: &str, kind: String, v: &Value) -> &mut KindCount {
        let k = self.kinds.entry(kind).or_default();
        k.count += 1;
        if !k.by.contains(scenario) {
            k.by.insert(scenario.to_string());
        }
        if k.example.is_none() {
            k.example = Some(v.clone());
        }
        k
    }

    fn lists_of(&mut self, scenario: &str, kind: &str, frame: &Value) {
        for (list, of, pointer) in LISTS {
            let applies = match of.strip_suffix('/') {
                Some(ty) => kind == ty || kind.starts_with(of),
                None => kind == *of,
            };
            let Some(v) = applies.then(|| frame.pointer(pointer)).flatten() else {
                continue;
            };
            let names: Vec<String> = match v {
                Value::String(s) => vec![s.clone()],
                Value::Array(a) => a
                    .iter()
                    .filter_map(|x| x.as_str().or_else(|| x.get("name")?.as_str()))
                    .filter(|n| !n.starts_with("mcp__"))
                    .map(str::to_string)
                    .collect(),
                _ => continue,
            };
            self.add_names(list, scenario, names);
        }
    }

    /// A name longer than [`NAME_CHARS`] is the scenario's data echoed (a bogus mode or
    /// tool of 20,000 characters), not a name of the protocol: left out.
    pub(crate) fn add_names(
        &mut self,
        list: &str,
        scenario: &str,
        names: impl IntoIterator<Item = String>,
    ) {
        (self.lists.entry(list.to_string()).or_default())
            .entry(scenario.to_string())
            .or_default()
            .extend(
                names
                    .into_iter()
                    .filter(|n| n.chars().count() <= NAME_CHARS),
            );
    }

    pub fn merge(&mut self, other: &Observed) {
        self.ran.extend(other.ran.iter().cloned());
        for (kind, k) in &other.kinds {
            self.kinds.entry(kind.clone()).or_default().merge(k);
        }
        for (list, by) in &other.lists {
            let mine = self.lists.entry(list.clone()).or_default();
            for (scenario, names) in by {
                mine.entry(scenario.clone())
                    .or_default()
                    .extend(names.iter().cloned());
            }
        }
    }
}

/// A tool's name as the group its results are counted in: an MCP tool's name holds the
/// scenario's server and tool names, so they are one group.
fn tool_group(name: &str) -> &str {
    match name.starts_with("mcp__") {
        true => "mcp__*",
        false => name,
    }
}

/// The objects and arrays in a value (itself included).
fn composites<'a>(v: &'a Value, out: &mut Vec<&'a Value>) {
    let inner: Vec<&Value> = match v {
        Value::Object(m) => m.values().collect(),
        Value::Array(a) => a.iter().collect(),
        _ => return,
    };
    out.push(v);
    for x in inner {
        composites(x, out);
    }
}

/// Where a walk does not look inside: key paths (`stops`), and values equal to one of
/// `echoed` (not empty ones: `{}` or `[]` is no copy of anything); `values`: whether
/// string values of keys are recorded at all.
struct Walk<'a> {
    stops: &'a [&'a str],
    echoed: &'a [&'a Value],
    values: bool,
}

impl Walk<'_> {
    fn opaque(&self, key: &str, v: &Value) -> bool {
        let empty = match v {
            Value::Object(m) => m.is_empty(),
            Value::Array(a) => a.is_empty(),
            _ => true,
        };
        OPAQUE.contains(&key) || (!empty && self.echoed.contains(&v))
    }

    /// The string value of `key` worth recording: not an opaque key's, an id's, one the
    /// scenario chose or one under a key that is not an identifier.
    fn value<'v>(&self, key: &str, v: &'v Value) -> Option<&'v str> {
        let recorded = self.values
            && !OPAQUE.contains(&key)
            && !scripted(key)
            && !id_key(key)
            && segment(key) == key;
        v.as_str().filter(|_| recorded)
    }
}

fn walk(v: &Value, path: &str, w: &Walk, k: &mut KindCount) {
    if w.stops.contains(&path) {
        return;
    }
    let join = |seg: &str| match path.is_empty() {
        true => seg.to_string(),
        false => format!("{path}.{seg}"),
    };
    match v {
        Value::Object(m) => {
            *k.objects.entry(path.to_string()).or_default() += 1;
            for (key, x) in m {
                let p = join(segment(key));
                let e = k.keys.entry(p.clone()).or_default();
                e.types.insert(json_type(x));
                e.present += 1;
                if let Some(value) = w.value(key, x) {
                    e.values.add(value);
                }
                if !w.opaque(key, x) {
                    walk(x, &p, w, k);
                }
            }
        }
        Value::Array(items) => {
            let p = format!("{path}[]");
            for x in items {
                let e = k.keys.entry(p.clone()).or_default();
                e.types.insert(json_type(x));
                e.present += 1;
                if !w.opaque("", x) {
                    walk(x, &p, w, k);
                }
            }
        }
        _ => {}
    }
}

/// A key as a path segment: itself when it is an identifier, else `{*}`.
fn segment(key: &str) -> &str {
    let ident = !key.is_empty()
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !key.starts_with(|c: char| c.is_ascii_digit());
    if ident {
        key
    } else {
        "{*}"
    }
}

/// Whether a request subtype the client wrote looks like one (`set_model`): not empty,
/// lowercase, no spaces.
fn subtype_like(sub: &str) -> bool {
    !sub.is_empty()
        && (sub.chars()).all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// The subtype of each control_request the client wrote, by request_id (as JSON: a host
/// may send a number or an object).
fn asked(written: &[String]) -> BTreeMap<String, String> {
    written
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v.get("type").and_then(Value::as_str) == Some("control_request"))
        .filter_map(|v| {
            let id = v.get("request_id")?.to_string();
            let sub = v.pointer("/request/subtype")?.as_str()?.to_string();
            Some((id, sub))
        })
        .collect()
}

/// A frame's kind: `type/subtype`; a control_request by its request's subtype, a
/// control_response by the subtype of the request it answers and its own
/// (`control_response/initialize/success`), a stream_event by its event's type.
/// `asked`: the subtype of each request the client wrote, by its id as JSON.
pub fn kind_of(frame: &Value, asked: &BTreeMap<String, String>) -> String {
    let s = |p: &str| frame.pointer(p).and_then(Value::as_str);
    match s("/type") {
        Some("control_request") => {
            format!("control_request/{}", s("/request/subtype").unwrap_or("?"))
        }
        Some("control_response") => {
            let to =
                (frame.pointer("/response/request_id")).and_then(|id| asked.get(&id.to_string()));
            let reply = s("/response/subtype").unwrap_or("?");
            let refused = (s("/response/error"))
                .is_some_and(|e| UNSUPPORTED_WORDING.iter().any(|w| e.starts_with(w)));
            match to.filter(|sub| subtype_like(sub)) {
                Some(to) if !(refused && reply == "error") => {
                    format!("control_response/{to}/{reply}")
                }
                _ if reply == "error" => UNSUPPORTED_REPLY.to_string(),
                to => format!(
                    "control_response/{}/{reply}",
                    to.map_or("(not a request of the client)", String::as_str)
                ),
            }
        }
        Some("stream_event") => format!("stream_event/{}", s("/event/type").unwrap_or("?")),
        _ => frame_kind(frame),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_frame_counts_its_keys_its_blocks_and_its_names_but_no_value_as_a_key() {
        let frames = [
            json!({"type": "system", "subtype": "init", "tools": ["Bash", "mcp__s__t"], "modelUsage": {"claude-x-1": {"n": 1}}}),
            json!({"type": "assistant", "uuid": "u", "message": {"content": [
                {"type": "tool_use", "id": "t", "input": {"command": "ls"}},
                {"type": "text", "text": "hi"}]}}),
            json!({"type": "assistant", "message": {"content": []}}),
            json!({"type": "control_response", "response": {"subtype": "success", "request_id": "r1", "response": {"pid": 1}}}),
        ];
        let written = vec![
            r#"{"type":"control_request","request_id":"r1","request":{"subtype":"initialize"}}"#
                .to_string(),
        ];
        let o = Observed::of("s/x", &frames, &written);
        let kinds: Vec<&str> = o.kinds.keys().map(String::as_str).collect();
        assert_eq!(
            kinds,
            [
                "assistant",
                "assistant[text]",
                "assistant[tool_use]",
                "control_response/initialize/success",
                "system/init"
            ]
        );
        let init = &o.kinds["system/init"];
        assert!(init.keys.contains_key("modelUsage.{*}.n"));
        assert!(!init.keys.keys().any(|k| k.contains("claude-x")));
        let tool_use = &o.kinds["assistant[tool_use]"];
        assert_eq!(tool_use.keys["input"].types, BTreeSet::from(["object"]));
        assert!(
            !tool_use.keys.contains_key("input.command"),
            "a tool's input is data"
        );
        let assistant = &o.kinds["assistant"];
        assert_eq!(
            assistant.every("uuid"),
            Some(false),
            "one of two carried it"
        );
        assert_eq!(assistant.every("message.content"), Some(true));
        assert!(!assistant.keys.contains_key("message.content[].text"));
        assert_eq!(
            o.lists["init.tools"]["s/x"],
            BTreeSet::from(["Bash".to_string()])
        );
    }

    #[test]
    fn replies_to_invented_requests_are_one_kind_user_data_is_opaque_and_results_go_by_tool() {
        let reply = |id: &str, error: &str| json!({"type": "control_response", "response": {"subtype": "error", "request_id": id, "error": error}});
        let frames = [
            reply("r1", "Unsupported control request subtype: MCP_STATUS"),
            reply("r2", "Unsupported control request subtype: can_use_tool"),
            reply("r3", "Unsupported control request subtype: "),
            reply("r9", "Unsupported control request subtype: undefined"),
            reply("r4", "Model 'x' not found"),
            json!({"type": "control_request", "request_id": "c", "request": {"subtype": "mcp_message", "message": {"params": {"arguments": {"a": 1}}}}}),
            json!({"type": "assistant", "message": {"content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}]}}),
            json!({"type": "user", "tool_use_result": {"stdout": "x"}, "message": {"content": [{"type": "tool_result", "tool_use_id": "t1"}]}}),
        ];
        let w = |id: &str, sub: &str| {
            format!(
                r#"{{"type":"control_request","request_id":"{id}","request":{{"subtype":"{sub}"}}}}"#
            )
        };
        let written = vec![
            w("r1", "MCP_STATUS"),
            w("r2", "can_use_tool"),
            w("r3", ""),
            w("r4", "set_model"),
        ];
        let o = Observed::of("s/x[a]", &frames, &written);
        let kinds: Vec<&str> = o.kinds.keys().map(String::as_str).collect();
        assert_eq!(
            kinds,
            [
                "assistant",
                "assistant[tool_use]",
                UNSUPPORTED_REPLY,
                "control_response/set_model/error",
                "control_request/mcp_message",
                "tool_use_result[Bash]",
                "user",
                "user[tool_result]",
            ]
            .iter()
            .copied()
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect::<Vec<_>>()
        );
        assert_eq!(o.kinds[UNSUPPORTED_REPLY].count, 4);
        let mcp = &o.kinds["control_request/mcp_message"];
        assert!(mcp.keys.contains_key("request.message.params.arguments"));
        assert!(
            !mcp.keys.keys().any(|k| k.ends_with("arguments.a")),
            "{:?}",
            mcp.keys.keys()
        );
        assert!(o.kinds["tool_use_result[Bash]"].keys.contains_key("stdout"));
        assert!(!o.kinds["user"].keys.contains_key("tool_use_result.stdout"));
        assert_eq!(o.kinds["user"].by, BTreeSet::from(["s/x".to_string()]));
        assert_eq!(o.ran, BTreeSet::from(["s/x[a]".into()]));
    }

    #[test]
    fn what_a_tool_result_copies_from_the_calls_input_is_kept_as_its_type_only() {
        let finding = json!({"file": "a.rs", "failure_scenario": "len 0"});
        let frames = [
            json!({"type": "assistant", "message": {"content": [{"type": "tool_use", "id": "t1", "name": "ReportFindings",
                "input": {"level": "low", "findings": [finding.clone()], "empty": {}}}]}}),
            json!({"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "t1"}]},
                "tool_use_result": {"count": 1, "level": "low", "findings": [finding.clone()], "more": [finding, {"own": 1}],
                    "empty": {}, "meta": {"kept": true}}}),
        ];
        let o = Observed::of("s/x", &frames, &[]);
        let keys: Vec<&str> = (o.kinds["tool_use_result[ReportFindings]"].keys.keys())
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "count",
                "empty",
                "findings",
                "level",
                "meta",
                "meta.kept",
                "more",
                "more[]",
                "more[].own"
            ],
            "a copied array or array item is its type only; a key of the result's own is kept"
        );
    }

    #[test]
    fn an_enum_like_keys_tokens_are_recorded_and_ids_text_and_user_data_never() {
        let result = |sub: &str, stop: &str| {
            json!({"type": "result", "subtype": sub, "stop_reason": stop, "session_id": "9f1c2d3e-aaaa-bbbb-cccc-123456789abc",
                "result": "done", "error": "Model 'x' not found", "request_id": "abc"})
        };
        let frames = [
            result("success", "end_turn"),
            result("success", "tool_use"),
            json!({"type": "assistant", "message": {"role": "assistant", "model": "claude-x", "content": [
                {"type": "text", "text": "ok"},
                {"type": "tool_use", "id": "toolu_01AbC", "name": "Bash", "input": {"mode": "fast"}}]}}),
            json!({"type": "control_request", "request_id": "r", "request": {"subtype": "can_use_tool", "tool_name": "Bash",
                "input": {"kind": "x"}, "display_name": "Add", "requested_path": "a.txt", "toolUseId": "t1"}}),
        ];
        let o = Observed::of("s/x", &frames, &[]);
        let keys = |kind: &str| &o.kinds[kind].keys;
        let tokens = |v: &[&str]| Values::Tokens(v.iter().map(|s| s.to_string()).collect());
        let result = keys("result/success");
        assert_eq!(
            result["stop_reason"].values,
            tokens(&["end_turn", "tool_use"])
        );
        assert_eq!(result["subtype"].values, tokens(&["success"]));
        assert_eq!(
            result["error"].values,
            Values::Open,
            "free text is no token"
        );
        for never in ["session_id", "result", "request_id"] {
            assert_eq!(result[never].values, Values::Unrecorded, "{never}");
        }
        assert_eq!(
            keys("assistant")["message.role"].values,
            tokens(&["assistant"])
        );
        assert_eq!(
            keys("assistant")["message.model"].values,
            Values::Unrecorded
        );
        assert_eq!(keys("assistant[text]")["text"].values, Values::Unrecorded);
        let tool_use = keys("assistant[tool_use]");
        assert_eq!(tool_use["type"].values, tokens(&["tool_use"]));
        assert_eq!(tool_use["name"].values, Values::Unrecorded);
        assert_eq!(tool_use["id"].values, Values::Unrecorded);
        assert!(!tool_use.contains_key("input.mode"));
        let request = keys("control_request/can_use_tool");
        for never in [
            "request.tool_name",
            "request.display_name",
            "request.requested_path",
            "request.toolUseId",
        ] {
            assert_eq!(request[never].values, Values::Unrecorded, "{never}");
        }
    }

    #[test]
    fn past_the_most_values_or_at_one_that_is_no_token_a_key_is_open() {
        let frames: Vec<Value> = (0..=MAX_VALUES)
            .map(|i| json!({"type": "system", "subtype": "status", "status": format!("state_{}", (b'a' + i as u8) as char)}))
            .collect();
        let few = Observed::of("s/x", &frames[..MAX_VALUES], &[]);
        assert!(
            matches!(&few.kinds["system/status"].keys["status"].values, Values::Tokens(v) if v.len() == MAX_VALUES)
        );
        let all = Observed::of("s/x", &frames, &[]);
        assert_eq!(
            all.kinds["system/status"].keys["status"].values,
            Values::Open
        );
        for not_token in [
            "2.1.74",
            "/tmp/a",
            "two words",
            "msg_01AbCdEf",
            "req_123456",
            "",
        ] {
            assert!(!token(not_token), "{not_token}");
        }
        for t in [
            "end_turn",
            "content_block_delta",
            "ui.render",
            "PreToolUse",
            "local_agent",
        ] {
            assert!(token(t), "{t}");
        }
    }
}
