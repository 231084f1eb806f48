//! The record profile: which keys of a frame `record` writes into an expectation, so a
//! recording pins the protocol and not what changes with every release (catalogues, usage
//! numbers, model names). One data file per dialect, `targets/<dialect>/record-profile.yaml`
//! (its comments explain the format); `record --full` does without it.

use super::error::RecordError;
use crate::dialect::Dialect;
use crate::frame::frame_kind;
use crate::install::Project;
use crate::pattern::is_operator;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// `targets/<dialect>/record-profile.yaml`, as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordProfile {
    /// Paths kept in every frame.
    #[serde(default)]
    pub always: Vec<String>,
    /// Per frame kind (`type/subtype` or `type`): the only paths kept.
    #[serde(default)]
    pub keep: BTreeMap<String, Vec<String>>,
    /// Kinds not under `keep`: every key but these, at any depth.
    #[serde(default)]
    pub drop: BTreeSet<String>,
    /// Per scenario tag: more paths per frame kind (`"*"`: the whole frame).
    #[serde(default)]
    pub tags: BTreeMap<String, BTreeMap<String, Vec<String>>>,
}

impl RecordProfile {
    pub fn path(project: &Project, dialect: Dialect) -> PathBuf {
        project.root.join(format!(
            "targets/{}/record-profile.yaml",
            dialect.conventions().expect_key()
        ))
    }

    /// The dialect's profile; `None` when it has none (then everything is recorded).
    pub fn load(project: &Project, dialect: Dialect) -> Result<Option<RecordProfile>, RecordError> {
        let path = Self::path(project, dialect);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(RecordError::io(path, e)),
        };
        serde_yaml::from_str(&text)
            .map(Some)
            .map_err(|e| RecordError::yaml(path, e))
    }

    /// The profile for one scenario: `expected` is its current expectation's frames (every
    /// key path they name is kept), `tags` its tags.
    pub fn contract(&self, expected: &[Value], tags: &[String]) -> Contract<'_> {
        let mut named: BTreeMap<String, Paths> = BTreeMap::new();
        for f in expected {
            for pattern in frame_patterns(f) {
                named_paths(pattern, named.entry(frame_kind(pattern)).or_default());
            }
        }
        let mut tagged: BTreeMap<String, Paths> = BTreeMap::new();
        for by_kind in tags.iter().filter_map(|t| self.tags.get(t)) {
            for (kind, paths) in by_kind {
                let node = tagged.entry(kind.clone()).or_default();
                for p in paths {
                    node.insert(p);
                }
            }
        }
        Contract {
            profile: self,
            named,
            tagged,
        }
    }
}

/// The frame patterns of an expectation entry (an `any_order` group holds several).
fn frame_patterns(entry: &Value) -> Vec<&Value> {
    match entry.get("any_order").and_then(Value::as_array) {
        Some(runs) => runs
            .iter()
            .flat_map(|r| r.as_array().into_iter().flatten())
            .collect(),
        None => vec![entry],
    }
}

/// Every key path a pattern names (operators are leaves).
fn named_paths(pattern: &Value, into: &mut Paths) {
    match pattern {
        Value::Object(m) if !is_operator(pattern) => {
            for (k, v) in m {
                named_paths(v, into.children.entry(k.clone()).or_default());
            }
        }
        Value::Array(a) => a.iter().for_each(|x| named_paths(x, into)),
        _ => into.all = true,
    }
}

/// A set of key paths: `all` keeps everything under this point.
#[derive(Debug, Clone, Default)]
struct Paths {
    all: bool,
    children: BTreeMap<String, Paths>,
}

impl Paths {
    fn of<'a>(paths: impl IntoIterator<Item = &'a String>) -> Paths {
        let mut p = Paths::default();
        for path in paths {
            p.insert(path);
        }
        p
    }

    fn insert(&mut self, path: &str) {
        if path == "*" {
            self.all = true;
            return;
        }
        let mut node = self;
        for seg in path.split('.') {
            node = node.children.entry(seg.to_string()).or_default();
        }
        node.all = true;
    }

    /// The part of `v` these paths reach (`drop`ped keys left out under `all`); `None`
    /// when they reach nothing. Array items are kept in place (an object item as `{}`
    /// at least), since an array pattern matches by length.
    fn select(&self, v: &Value, drop: &BTreeSet<String>) -> Option<Value> {
        if self.all {
            return Some(without(v, drop));
        }
        match v {
            Value::Object(m) => {
                let kept: Map<String, Value> = m
                    .iter()
                    .filter_map(|(k, x)| Some((k.clone(), self.children.get(k)?.select(x, drop)?)))
                    .collect();
                (!kept.is_empty()).then_some(Value::Object(kept))
            }
            Value::Array(a) => Some(Value::Array(
                a.iter()
                    .map(|x| {
                        self.select(x, drop)
                            .unwrap_or_else(|| Value::Object(Map::new()))
                    })
                    .collect(),
            )),
            other => Some(other.clone()),
        }
    }
}

/// `v` without the keys in `drop`, at any depth.
fn without(v: &Value, drop: &BTreeSet<String>) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| !drop.contains(*k))
                .map(|(k, x)| (k.clone(), without(x, drop)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(|x| without(x, drop)).collect()),
        other => other.clone(),
    }
}

/// Two selections of `like`, united, keys in `like`'s order.
fn union(a: Value, b: Value, like: &Value) -> Value {
    match (a, b, like) {
        (Value::Object(mut x), Value::Object(mut y), Value::Object(l)) => Value::Object(
            l.iter()
                .filter_map(|(k, lv)| {
                    let v = match (x.remove(k), y.remove(k)) {
                        (Some(va), Some(vb)) => union(va, vb, lv),
                        (va, vb) => va.or(vb)?,
                    };
                    Some((k.clone(), v))
                })
                .collect(),
        ),
        (Value::Array(x), Value::Array(y), Value::Array(l)) if x.len() == y.len() => Value::Array(
            x.into_iter()
                .zip(y)
                .zip(l)
                .map(|((p, q), lv)| union(p, q, lv))
                .collect(),
        ),
        (_, b, _) => b,
    }
}

/// A profile applied to one scenario ([`RecordProfile::contract`]).
#[derive(Debug, Clone)]
pub struct Contract<'a> {
    profile: &'a RecordProfile,
    /// Per frame kind: what the scenario's expectation names (kept, but without `drop`ped
    /// keys below the named ones: a `$any` does not bring a catalogue back)...
    named: BTreeMap<String, Paths>,
    /// ...and what its tags add (kept whole).
    tagged: BTreeMap<String, Paths>,
}

impl Contract<'_> {
    /// The part of a frame the recording keeps.
    pub fn apply(&self, frame: &Value) -> Value {
        let kind = frame_kind(frame);
        let ty = frame
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let kinds = [kind.as_str(), ty];
        let p = self.profile;
        let listed: Vec<&String> = kinds
            .iter()
            .filter_map(|k| p.keep.get(*k))
            .flatten()
            .collect();
        let mut base = Paths::of(p.always.iter().chain(listed.iter().copied()));
        base.all = !kinds.iter().any(|k| p.keep.contains_key(*k));
        let mut kept = base.select(frame, &p.drop).unwrap_or_default();
        let none = BTreeSet::new();
        for k in kinds.iter().filter(|k| !k.is_empty()) {
            for (extra, drop) in [(&self.named, &p.drop), (&self.tagged, &none)] {
                if let Some(more) = extra.get(*k).and_then(|e| e.select(frame, drop)) {
                    kept = union(kept, more, frame);
                }
            }
        }
        kept
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn profile() -> RecordProfile {
        serde_yaml::from_str(
            "always: [type, subtype, session_id]
keep:
  system/init: [cwd]
  assistant: [message.content, message.stop_reason]
  result: [is_error, result, num_turns]
drop: [usage, model, uuid]
tags:
  init: {system/init: ['*']}
",
        )
        .unwrap()
    }

    fn init() -> Value {
        json!({"type": "system", "subtype": "init", "session_id": "s", "cwd": "/w",
               "tools": ["Bash"], "slash_commands": ["x"], "skills": [], "agents": ["a"],
               "model": "claude-x", "uuid": "u"})
    }

    #[test]
    fn listed_kinds_keep_their_paths_and_others_all_but_dropped_keys() {
        let p = profile();
        let c = p.contract(&[], &[]);
        assert_eq!(
            c.apply(&init()),
            json!({"type": "system", "subtype": "init", "session_id": "s", "cwd": "/w"})
        );
        let tool = json!({"type": "assistant", "session_id": "s", "uuid": "u",
            "message": {"model": "m", "usage": {"input_tokens": 3}, "stop_reason": "tool_use",
                "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}]}});
        assert_eq!(
            c.apply(&tool),
            json!({"type": "assistant", "session_id": "s", "message": {"stop_reason": "tool_use",
                "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}]}})
        );
        let retry = json!({"type": "system", "subtype": "api_retry", "attempt": 1, "uuid": "u",
            "error": {"model": "m", "status": 529}});
        assert_eq!(
            c.apply(&retry),
            json!({"type": "system", "subtype": "api_retry", "attempt": 1, "error": {"status": 529}})
        );
    }

    #[test]
    fn what_the_expectation_names_and_the_tags_add_is_kept() {
        let p = profile();
        let named = [
            json!({"type": "system", "subtype": "init", "model": {"$regex": "^claude"}}),
            json!({"any_order": [[{"type": "result", "usage": {"output_tokens": "$number"}}]]}),
        ];
        let c = p.contract(&named, &[]);
        let kept = c.apply(&init());
        assert_eq!(kept["model"], "claude-x");
        assert!(kept.get("tools").is_none());
        let result = json!({"type": "result", "is_error": false, "num_turns": 1,
            "usage": {"output_tokens": 5, "input_tokens": 2}, "total_cost_usd": 0.1});
        assert_eq!(
            c.apply(&result),
            json!({"type": "result", "is_error": false, "num_turns": 1, "usage": {"output_tokens": 5}})
        );
        let tagged = p.contract(&[], &["init".to_string()]);
        assert_eq!(tagged.apply(&init()), init());
        // A placeholder names the key, not the catalogues below it.
        let any = [json!({"type": "control_response", "response": "$any"})];
        let reply = json!({"type": "control_response", "response": {"subtype": "success", "model": "m", "usage": {}}});
        assert_eq!(
            p.contract(&any, &[]).apply(&reply),
            json!({"type": "control_response", "response": {"subtype": "success"}})
        );
    }

    #[test]
    fn array_items_stay_in_place() {
        let mut paths = Paths::default();
        paths.insert("content.name");
        let v = json!({"content": [{"type": "text"}, {"name": "Bash", "x": 1}, 3]});
        assert_eq!(
            paths.select(&v, &BTreeSet::new()),
            Some(json!({"content": [{}, {"name": "Bash"}, 3]}))
        );
    }

    #[test]
    fn the_profiles_in_targets_parse() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let project = Project::at(root);
        let profiles: Vec<(Dialect, Option<RecordProfile>)> = (Dialect::ALL.iter())
            .map(|&d| (d, RecordProfile::load(&project, d).unwrap()))
            .collect();
        // A dialect may have none (then everything is recorded); these three have one.
        let with_one = profiles.iter().filter(|(_, p)| p.is_some()).count();
        assert!(with_one >= 3, "{profiles:?}");
        for (d, p) in profiles {
            let Some(p) = p else { continue };
            assert!(p.always.iter().any(|k| k == "type"), "{d}");
        }
    }
}
