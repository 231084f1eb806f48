//! A second opinion from the SDK's own types: the JSON Schema of the TypeScript Agent
//! SDK's `StdoutMessage` (everything the CLI writes: the `SDKMessage`s and the control
//! messages; generated from its `sdk.d.ts` by typescript-json-schema, see
//! `tools/sdk-types/`) against what the inventory says a release prints: frame kinds and
//! key paths the CLI printed that the types do not declare, the message types and control
//! request subtypes they declare that no scenario made the CLI print, and the keys they
//! declare that no frame of a printed kind carried; and per key the SDK's doc comment and
//! literal values. `$ref`s are percent-decoded (`Record%3Cstring%2CX%3E`).

use super::error::SdkError;
use super::inventory::Inventory;
use semver::Version;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeSet;

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Comparison {
    /// Frame kinds printed with no declared message type.
    pub undeclared_kinds: Vec<String>,
    /// `kind: path` printed that the kind's declared types do not hold (the outermost only).
    pub undeclared_keys: Vec<String>,
    /// Declared message types (`type` or `type/subtype`) no frame of the release matches.
    pub unprinted: Vec<String>,
    /// `kind: key` declared at the top of a printed kind's types that no frame carried.
    pub unprinted_keys: Vec<String>,
    /// `control_request/<subtype>` the SDK declares (sent by either side: each one's doc
    /// comment says which) that the CLI never sent.
    pub unsent_requests: Vec<String>,
}

/// Where a kind is one member of a union inside its frame: the key path of the union,
/// the key telling its members apart and the kind's value of it (`assistant[text]`:
/// `message.content[]`, `type`, `text`; `control_request/can_use_tool`: `request`,
/// `subtype`, `can_use_tool`).
struct Narrow<'k> {
    at: &'static str,
    key: &'static str,
    value: &'k str,
}

fn narrow(kind: &str) -> Option<Narrow<'_>> {
    let (ty, sub, block) = split_kind(kind);
    if let Some(b) = block {
        return Some(Narrow {
            at: "message.content[]",
            key: "type",
            value: b,
        });
    }
    let sub = sub?;
    match ty {
        "control_request" => Some(Narrow {
            at: "request",
            key: "subtype",
            value: sub,
        }),
        "control_response" => Some(Narrow {
            at: "response",
            key: "subtype",
            value: sub.rsplit('/').next().unwrap_or(sub),
        }),
        "stream_event" => Some(Narrow {
            at: "event",
            key: "type",
            value: sub,
        }),
        _ => None,
    }
}

/// The schema's object types reachable through `$ref`, `anyOf`, `oneOf` and `allOf`.
fn objects<'a>(root: &'a Value, v: &'a Value, out: &mut Vec<&'a Value>, depth: usize) {
    if depth > 32 {
        return;
    }
    if let Some(r) = v.get("$ref").and_then(Value::as_str) {
        if let Some(t) = resolve(root, r) {
            objects(root, t, out, depth + 1);
        }
        return;
    }
    let mut branched = false;
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(a)) = v.get(key) {
            branched = true;
            for x in a {
                objects(root, x, out, depth + 1);
            }
        }
    }
    if !branched {
        out.push(v);
    }
}

/// What a `$ref` names. A definition's name is percent-decoded whole: a `/` in it
/// (`%2F`, as in `io.modelcontextprotocol/related-task`) is part of the name.
fn resolve<'a>(root: &'a Value, r: &str) -> Option<&'a Value> {
    let decode = |p: &str| {
        percent_encoding::percent_decode_str(p)
            .decode_utf8_lossy()
            .into_owned()
    };
    for defs in ["definitions", "$defs"] {
        if let Some(name) = r.strip_prefix(&format!("#/{defs}/")) {
            return root.get(defs)?.get(decode(name));
        }
    }
    root.pointer(&decode(r.strip_prefix('#')?))
}

/// The values a property may have as a constant (`const` or `enum`).
fn constants(v: &Value, key: &str) -> Option<BTreeSet<String>> {
    let p = v.pointer(&format!("/properties/{key}"))?;
    if let Some(c) = p.get("const").and_then(Value::as_str) {
        return Some(BTreeSet::from([c.to_string()]));
    }
    let e = p.get("enum")?.as_array()?;
    Some(
        e.iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
    )
}

/// Whether a schema says nothing of what is inside it (any value, or an object open to
/// any key).
fn open(v: &Value) -> bool {
    let Some(m) = v.as_object() else {
        return v == &Value::Bool(true);
    };
    let typed = m.contains_key("type") || m.contains_key("const") || m.contains_key("enum");
    !typed
        || (m.get("type") == Some(&Value::String("object".into()))
            && !m.contains_key("properties")
            && m.get("additionalProperties")
                .is_none_or(|a| a == &Value::Bool(true)))
}

/// The schemas at `path` under `nodes` (empty: not declared); `None` when some node on
/// the way is open.
fn at<'a>(
    root: &'a Value,
    nodes: Vec<&'a Value>,
    path: &str,
    narrow: Option<&Narrow>,
) -> Option<Vec<&'a Value>> {
    let mut nodes = nodes;
    let segs: Vec<&str> = path.split('.').collect();
    for (i, seg) in segs.iter().enumerate() {
        let name = seg.trim_end_matches("[]");
        let arrays = (seg.len() - name.len()) / 2;
        let mut next = Vec::new();
        for n in &nodes {
            let mut objs = Vec::new();
            objects(root, n, &mut objs, 0);
            for o in objs {
                if open(o) {
                    return None;
                }
                let child = match name {
                    "{*}" => o.get("additionalProperties").filter(|a| a.is_object()),
                    _ => o.pointer(&format!("/properties/{name}")),
                };
                match (child, o.get("additionalProperties")) {
                    (Some(c), _) => next.push(c),
                    (None, Some(a)) if a.is_object() => next.push(a),
                    _ => {}
                }
            }
        }
        for _ in 0..arrays {
            let mut items = Vec::new();
            for n in &next {
                let mut objs = Vec::new();
                objects(root, n, &mut objs, 0);
                for o in objs {
                    if open(o) {
                        return None;
                    }
                    if let Some(it) = o.get("items") {
                        items.push(it);
                    }
                }
            }
            next = items;
        }
        // The kind's own member of the union there only.
        if let Some(n) = narrow.filter(|n| segs[..=i].join(".") == n.at) {
            let mut objs = Vec::new();
            for x in &next {
                objects(root, x, &mut objs, 0);
            }
            let typed: Vec<&Value> = (objs.iter().copied())
                .filter(|o| constants(o, n.key).is_some_and(|c| c.contains(n.value)))
                .collect();
            next = typed;
        }
        if next.is_empty() {
            return Some(next);
        }
        nodes = next;
    }
    Some(nodes)
}

/// The SDK's declared message types: per `type` (and `subtype` when it fixes them), the
/// object type declaring it.
pub struct Sdk<'a> {
    schema: &'a Value,
    declared: Vec<(String, Option<BTreeSet<String>>, &'a Value)>,
}

/// A kind's frame type, subtype and content block: `assistant[text]` -> (`assistant`,
/// None, `text`).
fn split_kind(kind: &str) -> (&str, Option<&str>, Option<&str>) {
    let (frame, block) = match kind.split_once('[') {
        Some((f, b)) => (f, Some(b.trim_end_matches(']'))),
        None => (kind, None),
    };
    match frame.split_once('/') {
        Some((t, s)) => (t, Some(s), block),
        None => (frame, None, block),
    }
}

impl<'a> Sdk<'a> {
    /// `schema`: typescript-json-schema's output for `StdoutMessage` (or any union of
    /// message types).
    pub fn new(schema: &'a Value) -> Result<Sdk<'a>, SdkError> {
        let mut members = Vec::new();
        objects(schema, schema, &mut members, 0);
        if members.is_empty() {
            return Err(SdkError::NoMessageType);
        }
        let declared = (members.iter())
            .filter_map(|m| {
                let ty = constants(m, "type")?;
                Some(
                    ty.into_iter()
                        .map(move |t| (t, constants(m, "subtype"), *m)),
                )
            })
            .flatten()
            .collect();
        Ok(Sdk { schema, declared })
    }

    /// The declared types (their index) a printed kind is one of.
    fn members(&self, kind: &str) -> Vec<(usize, &'a Value)> {
        let (ty, sub, _) = split_kind(kind);
        if kind.starts_with("tool_use_result[") {
            return Vec::new();
        }
        (self.declared.iter().enumerate())
            .filter(|(_, (t, s, _))| {
                t == ty
                    && (matches!(ty, "stream_event" | "control_request" | "control_response")
                        || s.as_ref()
                            .is_none_or(|s| sub.is_some_and(|x| s.contains(x))))
            })
            .map(|(i, (_, _, m))| (i, *m))
            .collect()
    }

    /// Whether the SDK requires `path` in `kind`: every declared type of the kind
    /// requires each key on the way. A kind it does not declare: no.
    pub fn requires(&self, kind: &str, path: &str) -> bool {
        let members = self.members(kind);
        if members.is_empty() {
            return false;
        }
        let (_, _, block) = split_kind(kind);
        let narrow = narrow(kind);
        let full = match block {
            Some(_) => format!("message.content[].{path}"),
            None => path.to_string(),
        };
        let segs: Vec<&str> = full.split('.').collect();
        (1..=segs.len()).all(|n| {
            let parent = segs[..n - 1].join(".");
            let key = segs[n - 1];
            if key.ends_with("[]") || key == "{*}" || (block.is_some() && n <= 2) {
                return true;
            }
            let nodes: Vec<&Value> = members.iter().map(|(_, m)| *m).collect();
            let parents = match parent.is_empty() {
                true => Some(nodes),
                false => at(self.schema, nodes, &parent, narrow.as_ref()),
            };
            let Some(parents) = parents.filter(|p| !p.is_empty()) else {
                return false;
            };
            parents.iter().all(|p| {
                let mut objs = Vec::new();
                objects(self.schema, p, &mut objs, 0);
                !objs.is_empty()
                    && objs.iter().all(|o| {
                        (o.get("required").and_then(Value::as_array))
                            .is_some_and(|r| r.iter().any(|x| x == key))
                    })
            })
        })
    }
}

/// `schema` (typescript-json-schema's output for `StdoutMessage`) against `inv` at `release`.
pub fn compare(inv: &Inventory, release: &Version, schema: &Value) -> Result<Comparison, SdkError> {
    let view = (inv.view(release)).ok_or_else(|| SdkError::StartsAfter {
        release: release.clone(),
    })?;
    let sdk = Sdk::new(schema)?;
    let mut c = Comparison::default();
    let mut matched: BTreeSet<usize> = BTreeSet::new();
    for (kind, k) in &inv.kinds {
        if !view.iter().any(|r| k.seen.contains(r)) || kind.starts_with("tool_use_result[") {
            continue;
        }
        let (_, _, block) = split_kind(kind);
        let narrow = narrow(kind);
        let mine = sdk.members(kind);
        let nodes: Vec<&Value> = mine.iter().map(|(_, m)| *m).collect();
        let own = |n: &Narrow| at(schema, nodes.clone(), n.at, Some(n));
        if mine.is_empty() || narrow.as_ref().and_then(own).is_some_and(|o| o.is_empty()) {
            c.undeclared_kinds.push(kind.clone());
            continue;
        }
        matched.extend(mine.iter().map(|(i, _)| *i));
        let printed = |path: &str| {
            (k.keys.get(path)).is_some_and(|key| view.iter().any(|r| key.seen().contains(r)))
        };
        if block.is_none() {
            let mut declared = BTreeSet::new();
            for n in &nodes {
                let mut objs = Vec::new();
                objects(schema, n, &mut objs, 0);
                for o in objs {
                    if let Some(Value::Object(props)) = o.get("properties") {
                        declared.extend(props.keys().cloned());
                    }
                }
            }
            for key in declared.iter().filter(|key| !printed(key)) {
                c.unprinted_keys.push(format!("{kind}: {key}"));
            }
        }
        let mut reported: Vec<String> = Vec::new();
        for (path, key) in &k.keys {
            if !view.iter().any(|r| key.seen().contains(r)) {
                continue;
            }
            if reported
                .iter()
                .any(|r| path.starts_with(&format!("{r}.")) || path.starts_with(&format!("{r}[]")))
            {
                continue;
            }
            let full = match block {
                Some(_) => format!("message.content[].{path}"),
                None => path.clone(),
            };
            if at(schema, nodes.clone(), &full, narrow.as_ref()).is_some_and(|n| n.is_empty()) {
                c.undeclared_keys.push(format!("{kind}: {path}"));
                reported.push(path.clone());
            }
        }
    }
    for (i, (t, s, _)) in sdk.declared.iter().enumerate() {
        if matched.contains(&i) {
            continue;
        }
        let name = match s {
            Some(s) => s
                .iter()
                .map(|x| format!("{t}/{x}"))
                .collect::<Vec<_>>()
                .join(", "),
            None => t.clone(),
        };
        c.unprinted.push(name);
    }
    c.unprinted.sort();
    c.unprinted.dedup();
    let requests: Vec<&Value> = (sdk.declared.iter())
        .filter(|(t, _, _)| t == "control_request")
        .map(|(_, _, m)| *m)
        .collect();
    let mut declared = Vec::new();
    for n in at(schema, requests, "request", None).unwrap_or_default() {
        objects(schema, n, &mut declared, 0);
    }
    let sent = |sub: &str| {
        let kind = format!("control_request/{sub}");
        (inv.kinds.get(&kind)).is_some_and(|k| view.iter().any(|r| k.seen.contains(r)))
    };
    c.unsent_requests = (declared.iter())
        .filter_map(|o| constants(o, "subtype"))
        .flatten()
        .filter(|sub| !sent(sub))
        .map(|sub| format!("control_request/{sub}"))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    Ok(c)
}

/// What the SDK says of one key: its doc comment and, when it is a union of literals,
/// the literals.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Said {
    pub doc: Option<String>,
    pub literals: Vec<String>,
}

impl Sdk<'_> {
    /// The SDK's doc comment of a declared kind (`system/init`; a control request by its
    /// request's type: `control_request/initialize`).
    pub fn kind_doc(&self, kind: &str) -> Option<String> {
        let nodes: Vec<&Value> = self.members(kind).iter().map(|(_, m)| *m).collect();
        let nodes = match narrow(kind) {
            Some(n) => at(self.schema, nodes, n.at, Some(&n))?,
            None => nodes,
        };
        let doc = (nodes.iter()).find_map(|n| n.get("description").and_then(Value::as_str));
        doc.map(str::to_string)
    }

    /// The SDK's doc comment and literal values of `path` in `kind` (none when it does
    /// not declare the kind or the key, or declares it in an open object).
    pub fn said(&self, kind: &str, path: &str) -> Said {
        let members = self.members(kind);
        let (_, _, block) = split_kind(kind);
        let narrow = narrow(kind);
        let full = match block {
            Some(_) => format!("message.content[].{path}"),
            None => path.to_string(),
        };
        let nodes: Vec<&Value> = members.iter().map(|(_, m)| *m).collect();
        let found = match nodes.is_empty() {
            true => None,
            false => at(self.schema, nodes, &full, narrow.as_ref()),
        };
        let Some(found) = found.filter(|f| !f.is_empty()) else {
            return Said::default();
        };
        let mut said = Said::default();
        let mut literals = BTreeSet::new();
        let mut open = false;
        for n in found {
            let doc = n
                .get("description")
                .or_else(|| resolve(self.schema, n.get("$ref")?.as_str()?)?.get("description"));
            if said.doc.is_none() {
                said.doc = doc.and_then(Value::as_str).map(str::to_string);
            }
            let mut objs = Vec::new();
            objects(self.schema, n, &mut objs, 0);
            for o in objs {
                let values: Vec<&Value> = match (o.get("const"), o.get("enum")) {
                    (Some(c), _) => vec![c],
                    (None, Some(Value::Array(e))) => e.iter().collect(),
                    _ if o.get("type") == Some(&Value::String("null".into())) => vec![],
                    _ => {
                        open = true;
                        vec![]
                    }
                };
                literals.extend(values.into_iter().map(|v| match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                }));
            }
        }
        if !open {
            said.literals = literals.into_iter().collect();
        }
        said
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Observed;
    use serde_json::json;

    #[test]
    fn keys_kinds_and_types_the_sdk_does_not_declare_are_listed_and_an_open_type_holds_all() {
        let schema = json!({"$ref": "#/definitions/M", "definitions": {
            "M": {"anyOf": [{"$ref": "#/definitions/A"}, {"$ref": "#/definitions/R"}, {"$ref": "#/definitions/T"}]},
            "A": {"type": "object", "additionalProperties": false, "properties": {
                "type": {"const": "assistant", "type": "string"},
                "uuid": {},
                "message": {"type": "object", "properties": {"content": {"type": "array", "items": {"anyOf": [
                    {"type": "object", "properties": {"type": {"const": "text"}, "text": {"type": "string"}}}
                ]}}}}}},
            "R": {"type": "object", "properties": {"type": {"const": "result"}, "subtype": {"enum": ["success"]}, "n": {"type": "number"}}},
            "T": {"type": "object", "properties": {"type": {"const": "tool_progress"}}}
        }});
        let frames = [
            json!({"type": "assistant", "uuid": {"x": 1}, "extra": 1, "message": {"content": [{"type": "text", "text": "a", "citations": null}]}}),
            json!({"type": "result", "subtype": "success", "n": 1, "m": 2}),
            json!({"type": "rate_limit_event"}),
        ];
        let mut inv = Inventory::new("claude-code");
        let r = Version::new(2, 1, 1);
        inv.add(&r, &Observed::of("s", &frames, &[]));
        let c = compare(&inv, &r, &schema).unwrap();
        assert_eq!(c.undeclared_kinds, ["rate_limit_event"]);
        assert_eq!(
            c.undeclared_keys,
            [
                "assistant: extra",
                "assistant[text]: citations",
                "result/success: m"
            ]
        );
        assert_eq!(c.unprinted, ["tool_progress"]);
        assert_eq!(c.unprinted_keys, Vec::<String>::new());
        let sdk = Sdk::new(&schema).unwrap();
        assert!(!sdk.requires("assistant", "type"), "A declares no required");
    }

    #[test]
    fn a_percent_encoded_ref_is_followed_and_required_keys_are_the_sdks() {
        let schema = json!({"$ref": "#/definitions/M", "definitions": {
            "M": {"anyOf": [{"$ref": "#/definitions/R"}]},
            "R": {"type": "object", "required": ["type", "modelUsage"], "properties": {
                "type": {"const": "result"}, "subtype": {"const": "success"},
                "modelUsage": {"$ref": "#/definitions/Record%3Cstring%2CModelUsage%3E"},
                "late": {"type": "string"}}},
            "Record<string,ModelUsage>": {"type": "object", "additionalProperties": {"$ref": "#/definitions/ModelUsage"}},
            "ModelUsage": {"type": "object", "additionalProperties": false, "required": ["costUSD"], "properties": {"costUSD": {"type": "number"}}}
        }});
        let frames = [
            json!({"type": "result", "subtype": "success", "modelUsage": {"m-1": {"costUSD": 1, "webSearch": 0}}}),
        ];
        let mut inv = Inventory::new("claude-code");
        let r = Version::new(2, 1, 1);
        inv.add(&r, &Observed::of("s", &frames, &[]));
        let c = compare(&inv, &r, &schema).unwrap();
        assert_eq!(
            c.undeclared_keys,
            ["result/success: modelUsage.{*}.webSearch"]
        );
        assert_eq!(c.unprinted_keys, ["result/success: late"]);
        let sdk = Sdk::new(&schema).unwrap();
        assert!(sdk.requires("result/success", "modelUsage.{*}.costUSD"));
        assert!(!sdk.requires("result/success", "subtype"));
        assert!(!sdk.requires("system/init", "type"), "not declared");
    }

    #[test]
    fn control_messages_are_compared_by_their_requests_subtype_and_keys_carry_the_sdks_word() {
        let schema = json!({"anyOf": [{"$ref": "#/definitions/Req"}, {"$ref": "#/definitions/Resp"}], "definitions": {
            "Req": {"type": "object", "required": ["type", "request"], "properties": {
                "type": {"const": "control_request"}, "request_id": {"type": "string"},
                "request": {"anyOf": [{"$ref": "#/definitions/CanUse"}, {"$ref": "#/definitions/Init"}]}}},
            "CanUse": {"type": "object", "required": ["subtype", "tool_name"], "properties": {
                "subtype": {"const": "can_use_tool"},
                "tool_name": {"type": "string", "description": "The tool asking."},
                "mode": {"description": "How.", "anyOf": [{"const": "a"}, {"enum": ["b", "c"]}, {"type": "null"}]}}},
            "Init": {"type": "object", "properties": {"subtype": {"const": "initialize"}, "hooks": {"type": "object"}}},
            "Resp": {"type": "object", "properties": {"type": {"const": "control_response"},
                "response": {"anyOf": [{"$ref": "#/definitions/Ok"}, {"$ref": "#/definitions/Err%2Fx"}]}}},
            "Ok": {"type": "object", "properties": {"subtype": {"const": "success"}, "response": {"type": "object"}}},
            "Err/x": {"type": "object", "properties": {"subtype": {"const": "error"}, "request_id": {"type": "string"}, "error": {"type": "string"}}}
        }});
        let frames = [
            json!({"type": "control_request", "request_id": "1", "request": {"subtype": "can_use_tool", "tool_name": "Bash", "mode": "a", "hooks": {}}}),
            json!({"type": "control_request", "request_id": "2", "request": {"subtype": "nonsense"}}),
            json!({"type": "control_response", "response": {"subtype": "error", "request_id": "9", "error": "x", "error_code": "y"}}),
        ];
        let mut inv = Inventory::new("claude-code");
        let r = Version::new(2, 1, 1);
        inv.add(&r, &Observed::of("s", &frames, &[]));
        let c = compare(&inv, &r, &schema).unwrap();
        assert_eq!(c.undeclared_kinds, ["control_request/nonsense"]);
        assert_eq!(
            c.undeclared_keys,
            [
                "control_request/can_use_tool: request.hooks",
                "control_response/(unsupported request)/error: response.error_code"
            ],
            "a key of another request subtype is not declared for this one; a `/` in a definition's name is part of it"
        );
        assert_eq!(c.unsent_requests, ["control_request/initialize"]);
        let sdk = Sdk::new(&schema).unwrap();
        assert!(sdk.requires("control_request/can_use_tool", "request.tool_name"));
        assert!(!sdk.requires("control_request/can_use_tool", "request_id"));
        let said = sdk.said("control_request/can_use_tool", "request.mode");
        assert_eq!(said.doc.as_deref(), Some("How."));
        assert_eq!(said.literals, ["a", "b", "c"]);
        let said = sdk.said("control_request/can_use_tool", "request.tool_name");
        assert_eq!(said.doc.as_deref(), Some("The tool asking."));
        assert!(said.literals.is_empty(), "an open string has no literals");
        assert_eq!(
            sdk.said("control_request/initialize", "request.tool_name"),
            Said::default()
        );
    }
}
