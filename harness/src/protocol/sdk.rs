//! A second opinion from the SDK's own types: the JSON Schema of the TypeScript Agent
//! SDK's `SDKMessage` (generated from its `sdk.d.ts` by ts-json-schema-generator, see
//! `tools/sdk-types/`) against what the inventory says a release prints: frame kinds and
//! key paths the CLI printed that the types do not declare, and the message types they
//! declare that no scenario made the CLI print, and the keys they declare that no frame
//! of a printed kind carried. `$ref`s are percent-decoded (`Record%3Cstring%2CX%3E`).
//! Control messages are not `SDKMessage`s and are left out: ts-json-schema-generator
//! cannot make a schema of the SDK's control types (`SDKControlRequest`, error TSJ-106).

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
}

/// The schema's object types reachable through `$ref`, `anyOf`, `oneOf` and `allOf`.
fn objects<'a>(root: &'a Value, v: &'a Value, out: &mut Vec<&'a Value>, depth: usize) {
    if depth > 32 {
        return;
    }
    if let Some(r) = v.get("$ref").and_then(Value::as_str) {
        let pointer = r.strip_prefix('#').map(|p| {
            percent_encoding::percent_decode_str(p)
                .decode_utf8_lossy()
                .into_owned()
        });
        if let Some(t) = pointer.as_deref().and_then(|p| root.pointer(p)) {
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
    block: Option<&str>,
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
        // A content block kind: the items of `message.content` of its type only.
        if let (Some(bt), true) = (block, i == 1 && *seg == "content[]") {
            let mut objs = Vec::new();
            for n in &next {
                objects(root, n, &mut objs, 0);
            }
            let typed: Vec<&Value> = (objs.iter().copied())
                .filter(|o| constants(o, "type").is_some_and(|c| c.contains(bt)))
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
    /// `schema`: ts-json-schema-generator's output for `SDKMessage`.
    pub fn new(schema: &'a Value) -> Result<Sdk<'a>, String> {
        let mut members = Vec::new();
        objects(schema, schema, &mut members, 0);
        if members.is_empty() {
            return Err("the schema declares no message type".into());
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
        if kind.starts_with("control_") || kind.starts_with("tool_use_result[") {
            return Vec::new();
        }
        (self.declared.iter().enumerate())
            .filter(|(_, (t, s, _))| {
                t == ty
                    && (ty == "stream_event"
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
                false => at(self.schema, nodes, &parent, block),
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

/// `schema` (ts-json-schema-generator's output for `SDKMessage`) against `inv` at `release`.
pub fn compare(inv: &Inventory, release: &Version, schema: &Value) -> Result<Comparison, String> {
    let view = inv
        .view(release)
        .ok_or_else(|| format!("the inventory starts after {release}"))?;
    let sdk = Sdk::new(schema)?;
    let mut c = Comparison::default();
    let mut matched: BTreeSet<usize> = BTreeSet::new();
    for (kind, k) in &inv.kinds {
        if !view.iter().any(|r| k.seen.contains(r))
            || kind.starts_with("control_")
            || kind.starts_with("tool_use_result[")
        {
            continue;
        }
        let (_, _, block) = split_kind(kind);
        let mine = sdk.members(kind);
        if mine.is_empty() {
            c.undeclared_kinds.push(kind.clone());
            continue;
        }
        matched.extend(mine.iter().map(|(i, _)| *i));
        let nodes: Vec<&Value> = mine.iter().map(|(_, m)| *m).collect();
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
            if at(schema, nodes.clone(), &full, block).is_some_and(|n| n.is_empty()) {
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
    Ok(c)
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
}
