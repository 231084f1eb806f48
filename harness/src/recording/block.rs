//! Recording on a version other than the pinned one: a version block (`claude-code@X:`)
//! that states only what differs from the expectation the version gets without it
//! (`frames_patch` entries, `exit_code`), never a copy of the whole expectation.

use super::error::RecordError;
use crate::expectation::{apply_frames_patch, for_version, ExpectKey};
use crate::frame::{frame_kind, PatternKind};
use crate::matcher::{self, Expected, FrameRules, Mode};
use crate::pattern::{is_operator, Captures, Pattern, Vars};
use crate::printed::output::Frame;
use crate::scenario::{FrameEntry, TargetExpect};
use crate::version_range::VersionRange;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// The key a recording on `version` goes under: the block written for exactly that
/// version if the scenario has one, else a new `target@version`.
pub fn block_key(expect: &BTreeMap<String, TargetExpect>, target: &str, version: &str) -> String {
    let exact = VersionRange::parse(version).ok();
    expect
        .keys()
        .find(|k| {
            ExpectKey::parse(k).is_ok_and(|p| {
                p.target == target
                    && p.range
                        .zip(exact.as_ref())
                        .is_some_and(|(r, e)| r.same_versions(e))
            })
        })
        .cloned()
        .unwrap_or_else(|| format!("{target}@{version}"))
}

/// What `version` would be held to without the block `key`: the block it refines.
pub fn parent<'a>(
    expect: &'a BTreeMap<String, TargetExpect>,
    key: &str,
    target: &str,
    version: &str,
) -> Option<(String, &'a TargetExpect)> {
    let others: BTreeMap<String, TargetExpect> = expect
        .iter()
        .filter(|(k, _)| *k != key)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let chosen = for_version(&others, target, version)?;
    // Give back the entry of `expect` itself, found by identity of the resolved value.
    let name = others
        .iter()
        .find(|(_, v)| std::ptr::eq(*v, chosen))
        .map(|(k, _)| k.clone())?;
    expect.get(&name).map(|e| (name, e))
}

/// A frame's kind, compared with a pattern's (`frame::PatternKind`, the one rule).
struct FrameKind(String, Option<String>);

impl PartialEq<PatternKind> for FrameKind {
    fn eq(&self, p: &PatternKind) -> bool {
        p.admits(&self.0, self.1.as_deref())
    }
}

/// What happens to one frame of the parent.
enum Plan {
    Keep,
    Drop,
    Replace(Value),
    Merge(Map<String, Value>),
}

/// The `frames_patch` that turns `parent` (its frame patterns as written) into an
/// expectation `actual` matches: frames lined up by kind; a parent frame that still
/// matches is left alone, one that matches but for some keys gets `{$merge: ..}` of those
/// keys (taken from `recorded`, `$absent` where the frame lost the key), others are
/// replaced; gone frames are `null`, new ones spliced in (not for `subsequence`, where
/// extra frames are allowed anyway). `recorded[i]` is the pattern recorded for `actual[i]`;
/// `seed` holds what is bound before the frames (the scripted client's request ids).
pub fn frames_patch(
    parent: &[Value],
    mode: Mode,
    recorded: &[Value],
    actual: &[Value],
    vars: &Vars,
    seed: &Captures,
) -> BTreeMap<usize, Value> {
    let old: Vec<PatternKind> = parent.iter().map(PatternKind::of).collect();
    let new: Vec<FrameKind> = actual
        .iter()
        .map(|f| {
            let str_of = |k: &str| f.get(k).and_then(Value::as_str).map(str::to_string);
            FrameKind(str_of("type").unwrap_or_default(), str_of("subtype"))
        })
        .collect();
    let mut capture = similar::algorithms::Capture::new();
    let _ = similar::algorithms::myers::diff(&mut capture, &old, 0..old.len(), &new, 0..new.len());
    let mut plan: Vec<Plan> = parent.iter().map(|_| Plan::Keep).collect();
    let mut before: Vec<Vec<Value>> = vec![Vec::new(); parent.len() + 1];
    let mut caps = seed.clone();
    for op in capture.into_ops() {
        let (tag, old_range, new_range) = op.as_tag_tuple();
        if tag == similar::DiffTag::Equal {
            for (i, j) in old_range.zip(new_range) {
                plan[i] = compare(&parent[i], &recorded[j], &actual[j], vars, &mut caps);
            }
            continue;
        }
        for i in old_range.clone() {
            plan[i] = Plan::Drop;
        }
        if mode == Mode::Exact {
            before[old_range.start].extend(new_range.map(|j| recorded[j].clone()));
        }
    }
    emit(parent, plan, before)
}

/// How a parent frame pattern fares against the frame lined up with it.
fn compare(
    pattern: &Value,
    recorded: &Value,
    actual: &Value,
    vars: &Vars,
    caps: &mut Captures,
) -> Plan {
    let Ok(p) = Pattern::compile(pattern) else {
        return Plan::Replace(recorded.clone());
    };
    if p.check(actual, vars, caps).is_ok() {
        return Plan::Keep;
    }
    let Value::Object(keys) = pattern else {
        return Plan::Replace(recorded.clone());
    };
    if is_operator(pattern) {
        return Plan::Replace(recorded.clone());
    }
    let mut merge = Map::new();
    for (k, v) in keys {
        let got = actual.get(k);
        if !sub_matches(v, got, vars, caps) {
            let rec = recorded_value(recorded.get(k), got);
            merge.insert(k.clone(), repair(v, &rec, got, vars, caps));
        }
    }
    if merge.len() == keys.len() || frame_kind(pattern) != frame_kind(recorded) {
        return Plan::Replace(recorded.clone());
    }
    // Bind what the rest of the pattern captures, for the frames after it.
    let mut kept = keys.clone();
    kept.retain(|k, _| !merge.contains_key(k));
    if let Ok(p) = Pattern::compile(&Value::Object(kept)) {
        let _ = p.check(actual, vars, caps);
    }
    Plan::Merge(merge)
}

/// What the recording says of a key: its pattern, `$absent` when the frame lacks the key.
fn recorded_value(recorded: Option<&Value>, actual: Option<&Value>) -> Value {
    match (recorded, actual) {
        (Some(r), _) => r.clone(),
        (None, None) => "$absent".into(),
        (None, Some(a)) => a.clone(),
    }
}

/// Whether a pattern matches a value (a missing key: `None`), captures left as they are.
fn sub_matches(pattern: &Value, actual: Option<&Value>, vars: &Vars, caps: &Captures) -> bool {
    let probe = json!({ "v": pattern });
    let value = actual.map_or_else(|| json!({}), |a| json!({ "v": a }));
    Pattern::compile(&probe).is_ok_and(|p| p.check(&value, vars, &mut caps.clone()).is_ok())
}

/// `pattern` with only what no longer matches replaced by the recording, key by key in
/// objects, so ids it captured or referred to stay as written.
fn repair(
    pattern: &Value,
    recorded: &Value,
    actual: Option<&Value>,
    vars: &Vars,
    caps: &Captures,
) -> Value {
    let (Value::Object(p), Some(Value::Object(a)), Value::Object(r)) = (pattern, actual, recorded)
    else {
        return recorded.clone();
    };
    if is_operator(pattern) {
        return recorded.clone();
    }
    let mut out = Map::new();
    for (k, v) in p {
        let fixed = match sub_matches(v, a.get(k), vars, caps) {
            true => v.clone(),
            false => {
                let rec = recorded_value(r.get(k), a.get(k));
                repair(v, &rec, a.get(k), vars, caps)
            }
        };
        out.insert(k.clone(), fixed);
    }
    Value::Object(out)
}

/// The plan as `frames_patch` entries (see the format in `expectation`).
fn emit(parent: &[Value], plan: Vec<Plan>, mut before: Vec<Vec<Value>>) -> BTreeMap<usize, Value> {
    let mut out = BTreeMap::new();
    let tail = before.pop().unwrap_or_default();
    for (i, (own, inserted)) in plan.into_iter().zip(before).enumerate() {
        let single = match own {
            Plan::Keep => None,
            Plan::Drop => Some(Value::Null),
            Plan::Replace(v) => Some(v),
            Plan::Merge(m) => Some(json!({"$merge": m})),
        };
        if inserted.is_empty() {
            if let Some(v) = single {
                out.insert(i, v);
            }
            continue;
        }
        let mut list = inserted;
        match single {
            None => list.push(parent[i].clone()),
            Some(Value::Null) => {}
            Some(v) if v.get("$merge").is_some() => {
                let mut frame = parent[i].clone();
                if let (Some(f), Some(Value::Object(m))) = (frame.as_object_mut(), v.get("$merge"))
                {
                    f.extend(m.clone());
                }
                list.push(frame);
            }
            Some(v) => list.push(v),
        }
        out.insert(i, Value::Array(list));
    }
    if !tail.is_empty() {
        out.insert(parent.len(), Value::Array(tail));
    }
    out
}

/// Checks that `parent` with `patch` applied matches `actual` (`seed` as in
/// [`frames_patch`]); the divergence if not.
pub fn verify(
    parent: &TargetExpect,
    patch: &BTreeMap<usize, Value>,
    actual: &[Frame],
    vars: &Vars,
    seed: &Captures,
) -> Result<(), RecordError> {
    let frames: Vec<Value> = parent.frames.iter().map(|e| e.0.source()).collect();
    let patched = apply_frames_patch(&frames, patch)?;
    let compiled: Vec<Expected> = patched
        .iter()
        .map(|f| serde_json::from_value::<FrameEntry>(f.clone()).map(|e| e.0))
        .collect::<Result<_, _>>()
        .map_err(RecordError::BlockPattern)?;
    let ignore: Vec<Pattern> = parent.ignore.iter().map(|p| p.0.clone()).collect();
    let rules = FrameRules {
        expected: &compiled,
        ignore: &ignore,
        absent: &[],
        mode: parent.mode,
    };
    match matcher::match_frames(&rules, actual, vars, &mut seed.clone())
        .into_iter()
        .next()
    {
        Some(d) => Err(RecordError::BlockNoSelfMatch(Box::new(d))),
        None => Ok(()),
    }
}

/// Values for the `{$ref: X}` the parent's frames use but never `$capture` (ids the scripted
/// client bound, when its log is not at hand: outputs saved by drift), read from the frame of
/// the same kind at the same place. A wrong guess only makes [`verify`] refuse the block.
pub fn infer_refs(parent: &[Value], actual: &[Value]) -> Captures {
    fn captured(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                if let Some(Value::String(n)) = m.get("$capture") {
                    out.push(n.clone());
                }
                m.values().for_each(|x| captured(x, out));
            }
            Value::Array(a) => a.iter().for_each(|x| captured(x, out)),
            _ => {}
        }
    }
    fn bind(p: &Value, a: &Value, skip: &[String], caps: &mut Captures) {
        match (p, a) {
            (Value::Object(m), _) if m.len() == 1 && m.contains_key("$ref") => {
                if let Some(n) = m["$ref"].as_str().filter(|n| !skip.iter().any(|s| s == n)) {
                    caps.entry(n.to_string()).or_insert_with(|| a.clone());
                }
            }
            (Value::Object(m), Value::Object(x)) if !is_operator(p) => {
                for (k, v) in m {
                    if let Some(y) = x.get(k) {
                        bind(v, y, skip, caps);
                    }
                }
            }
            (Value::Array(m), Value::Array(x)) => {
                m.iter().zip(x).for_each(|(v, y)| bind(v, y, skip, caps));
            }
            _ => {}
        }
    }
    let mut skip = Vec::new();
    parent.iter().for_each(|p| captured(p, &mut skip));
    let mut caps = Captures::new();
    let mut next = 0;
    for p in parent {
        let kind = frame_kind(p);
        // A kind the output lacks consumes nothing.
        if let Some(i) = (next..actual.len()).find(|&i| frame_kind(&actual[i]) == kind) {
            bind(p, &actual[i], &skip, &mut caps);
            next = i + 1;
        }
    }
    caps
}

/// Frames as the matcher takes them, from values (stdout lines numbered from 1).
pub fn as_frames(values: &[Value]) -> Vec<Frame> {
    values
        .iter()
        .enumerate()
        .map(|(index, value)| Frame {
            index,
            line: index + 1,
            at_ms: 0,
            value: value.clone(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_patch_states_only_what_differs_and_keeps_what_the_parent_captured() {
        let parent = [
            json!({"type": "system", "subtype": "init", "session_id": {"$capture": "s"}}),
            json!({"type": "control_response", "response": {"request_id": {"$capture": "r"}, "subtype": "success", "n": 1}}),
            json!({"type": "assistant"}),
            json!({"type": "result", "is_error": false, "model": "m", "session_id": {"$ref": "s"}}),
        ];
        let actual = [
            json!({"type": "system", "subtype": "init", "session_id": "abc"}),
            json!({"type": "control_response", "response": {"request_id": "req_9", "subtype": "success", "n": 2}}),
            json!({"type": "system", "subtype": "status"}),
            json!({"type": "result", "is_error": true, "session_id": "abc"}),
            json!({"type": "system", "subtype": "late"}),
        ];
        let recorded: Vec<Value> = actual
            .iter()
            .map(|f| {
                let mut f = f.clone();
                if f.get("session_id").is_some() {
                    f["session_id"] = json!({"$ref": "s"});
                }
                f
            })
            .collect();
        let none = Captures::new();
        let patch = frames_patch(
            &parent,
            Mode::Exact,
            &recorded,
            &actual,
            &Vars::default(),
            &none,
        );
        let expected = BTreeMap::from([
            (
                1,
                json!({"$merge": {"response": {"request_id": {"$capture": "r"}, "subtype": "success", "n": 2}}}),
            ),
            // The assistant frame is gone, a status frame came in its place.
            (2, json!([{"type": "system", "subtype": "status"}])),
            (3, json!({"$merge": {"is_error": true, "model": "$absent"}})),
            (4, json!([{"type": "system", "subtype": "late"}])),
        ]);
        assert_eq!(patch, expected);
        let parent_expect: TargetExpect =
            serde_json::from_value(json!({"frames": parent})).unwrap();
        verify(
            &parent_expect,
            &patch,
            &as_frames(&actual),
            &Vars::default(),
            &none,
        )
        .unwrap();
        let refs = infer_refs(
            &[
                json!({"type": "user"}),
                json!({"type": "control_response", "response": {"request_id": {"$ref": "init"}}}),
            ],
            &[
                json!({"type": "system"}),
                json!({"type": "control_response", "response": {"request_id": "req_1_ab"}}),
            ],
        );
        assert_eq!(refs.get("init"), Some(&json!("req_1_ab")));
        assert!(
            infer_refs(&parent, &actual).is_empty(),
            "captured names are not guessed"
        );
        let mut wrong = patch.clone();
        wrong.remove(&4);
        assert!(verify(
            &parent_expect,
            &wrong,
            &as_frames(&actual),
            &Vars::default(),
            &none
        )
        .is_err());
    }
}
