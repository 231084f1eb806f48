//! The JSON Schema of what one release prints: one definition per kind, each fixing what
//! tells it apart (`const` on `type` and `subtype`, on a control request's subtype, a
//! control response's own subtype, a stream event's and a content block's type);
//! `message.content[]` refers to the content blocks of its frame type and a `user` frame's
//! `tool_use_result` to the per-tool results. A kind the release did not run takes what
//! the nearest releases that ran it on each side printed. A key is required only when
//! every frame of its kind carried it and, for a kind the SDK declares, the SDK declares
//! it required. Objects stay open: a consumer must accept keys it does not know.

use super::error::SchemaError;
use super::inventory::{Inventory, Releases};
use super::sdk::Sdk;
use semver::Version;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// The SDK's declared message types for a dialect (`protocol schema` reads it when it
/// exists; tools/sdk-types/README.md says how it is made).
pub fn sdk_file(dialect: &str) -> std::path::PathBuf {
    std::path::Path::new("targets")
        .join(dialect)
        .join("sdk")
        .join("sdk-message.schema.json")
}

/// A kind's definition name: its name's words joined by `.` (`system/init` ->
/// `system.init`, `assistant[text]` -> `assistant.text`), a valid URI fragment as is.
pub fn def_name(kind: &str) -> String {
    (kind.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-')))
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(".")
}

/// `#/$defs/<name>`.
pub fn def_ref(kind: &str) -> String {
    format!("#/$defs/{}", def_name(kind))
}

/// Where a kind's name is fixed in its frames, and to what: `(key path, value)`.
fn constants(kind: &str) -> Vec<(String, String)> {
    if let Some((outer, inner)) = kind.split_once('[') {
        let inner = inner.trim_end_matches(']');
        return match outer {
            "tool_use_result" => Vec::new(),
            _ => vec![("type".into(), inner.into())],
        };
    }
    let parts: Vec<&str> = kind.split('/').collect();
    let mut out = vec![("type".to_string(), parts[0].to_string())];
    match (parts[0], &parts[1..]) {
        ("control_request", [sub]) => out.push(("request.subtype".into(), sub.to_string())),
        ("control_response", [_, reply]) => {
            out.push(("response.subtype".into(), reply.to_string()))
        }
        ("stream_event", [ev]) => out.push(("event.type".into(), ev.to_string())),
        (_, [sub]) => out.push(("subtype".into(), sub.to_string())),
        _ => {}
    }
    out
}

/// Whether a kind is a part of a frame (a content block, a tool's result), not a frame.
fn is_part(kind: &str) -> bool {
    kind.contains('[')
}

/// The releases a kind's definition is made from for `at`: each release that ran a
/// scenario printing it, else the nearest ones on each side that did.
fn kind_view(inv: &Inventory, kind: &str, at: &[&Version]) -> Releases {
    let running = inv.releases_running(kind);
    let mut out = Releases::new();
    for r in at {
        if running.contains(*r) || inv.ran_kind(kind, r).is_none() {
            out.insert((*r).clone());
            continue;
        }
        out.extend(running.iter().rfind(|x| x < r).cloned());
        out.extend(running.iter().find(|x| x > r).cloned());
    }
    out
}

/// The JSON Schema of what `release` prints; `sdk`: the SDK's declared message types
/// (required keys are only those it requires too).
pub fn schema(inv: &Inventory, release: &Version, sdk: Option<&Sdk>) -> Result<Value, SchemaError> {
    let Some(at) = inv.view(release) else {
        return Err(SchemaError::NothingToWrite {
            dialect: inv.dialect.clone(),
            first: inv.releases.first().cloned(),
            release: release.clone(),
        });
    };
    let mut present: BTreeMap<&String, Releases> = BTreeMap::new();
    for (kind, k) in &inv.kinds {
        let view = kind_view(inv, kind, &at);
        if view.iter().any(|r| k.seen.contains(r)) {
            present.insert(kind, view);
        }
    }
    let parts_of = |prefix: &str| -> Vec<Value> {
        (present.keys())
            .filter(|k| k.starts_with(prefix))
            .map(|k| json!({"$ref": def_ref(k)}))
            .collect()
    };
    let mut defs = Map::new();
    let mut frames = Vec::new();
    for (kind, view) in &present {
        let k = &inv.kinds[*kind];
        let any = |s: &Releases| view.iter().any(|r| s.contains(r));
        let all = |s: &Releases| view.iter().all(|r| s.contains(r));
        let mut root = Node::default();
        root.types.insert("object".into());
        for (path, key) in &k.keys {
            let types: Vec<&String> = (key.types.iter())
                .filter(|(_, d)| any(d))
                .map(|(t, _)| t)
                .collect();
            if types.is_empty() {
                continue;
            }
            let required = all(&key.every) && sdk.is_none_or(|s| s.requires(kind, path));
            let node = root.at(path);
            node.types.extend(types.into_iter().cloned());
            node.required = required;
        }
        for (path, value) in constants(kind) {
            let node = root.at(&path);
            node.konst = Some(value);
            node.required = true;
            node.types = BTreeSet::from(["string".to_string()]);
        }
        let ty = kind.split(['/', '[']).next().unwrap_or_default();
        if !is_part(kind) && matches!(ty, "assistant" | "user") {
            root.at("message.content[]").refs = parts_of(&format!("{ty}["));
            if ty == "user" && root.props.contains_key("tool_use_result") {
                root.at("tool_use_result").refs = parts_of("tool_use_result[");
            }
        }
        defs.insert(def_name(kind), root.schema());
        if !is_part(kind) {
            frames.push(json!({"$ref": def_ref(kind)}));
        }
    }
    let at_list: Vec<String> = at.iter().map(|r| r.to_string()).collect();
    Ok(json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": format!("urn:streamcheck:protocol:{}:{release}", inv.dialect),
        "title": format!("{} {release}: one stream-json frame", inv.dialect),
        "description": format!(
            "Generated by `streamcheck protocol schema` from {} (releases built from: {}). One definition per frame kind; content blocks are `<frame type>.<block type>`, a user frame's tool results `tool_use_result.<tool>`. Objects are open: accept keys you do not know.",
            super::inventory::file_of(&inv.dialect).display(),
            at_list.join(", ")
        ),
        "anyOf": frames,
        "$defs": defs,
    }))
}

#[derive(Default)]
struct Node {
    types: BTreeSet<String>,
    required: bool,
    konst: Option<String>,
    /// Definitions one of which the value is (besides its types other than object).
    refs: Vec<Value>,
    props: BTreeMap<String, Node>,
    items: Option<Box<Node>>,
    any_key: Option<Box<Node>>,
}

impl Node {
    /// The node of a key path (`a.b[].c`), made on the way.
    fn at(&mut self, path: &str) -> &mut Node {
        let mut node = self;
        for seg in path.split('.') {
            let name = seg.trim_end_matches("[]");
            let arrays = (seg.len() - name.len()) / 2;
            node = match name {
                "{*}" => node.any_key.get_or_insert_with(Default::default),
                _ => node.props.entry(name.to_string()).or_default(),
            };
            for _ in 0..arrays {
                node = node.items.get_or_insert_with(Default::default);
            }
        }
        node
    }

    fn schema(&self) -> Value {
        let mut m = Map::new();
        let json_type = |t: &String| match t.as_str() {
            "bool" => "boolean".to_string(),
            _ => t.clone(),
        };
        if !self.refs.is_empty() {
            let mut any = self.refs.clone();
            let others: Vec<String> = (self.types.iter())
                .filter(|t| *t != "object")
                .map(json_type)
                .collect();
            if !others.is_empty() {
                any.push(json!({"type": others}));
            }
            return json!({"anyOf": any});
        }
        let ts: Vec<String> = self.types.iter().map(json_type).collect();
        match ts.len() {
            0 => {}
            1 => {
                m.insert("type".into(), json!(ts[0]));
            }
            _ => {
                m.insert("type".into(), json!(ts));
            }
        }
        if let Some(c) = &self.konst {
            m.insert("const".into(), json!(c));
        }
        if !self.props.is_empty() {
            let props: Map<String, Value> = (self.props.iter())
                .map(|(k, n)| (k.clone(), n.schema()))
                .collect();
            let required: Vec<&String> = (self.props.iter())
                .filter(|(_, n)| n.required)
                .map(|(k, _)| k)
                .collect();
            m.insert("properties".into(), Value::Object(props));
            if !required.is_empty() {
                m.insert("required".into(), json!(required));
            }
        }
        if let Some(a) = &self.any_key {
            m.insert("additionalProperties".into(), a.schema());
        }
        if let Some(items) = &self.items {
            m.insert("items".into(), items.schema());
        }
        Value::Object(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_definition_name_is_a_plain_uri_fragment() {
        assert_eq!(def_name("system/init"), "system.init");
        assert_eq!(def_name("assistant[tool_use]"), "assistant.tool_use");
        assert_eq!(
            def_name("control_response/(unsupported request)/error"),
            "control_response.unsupported.request.error"
        );
        assert_eq!(def_name("tool_use_result[mcp__*]"), "tool_use_result.mcp__");
    }
}
