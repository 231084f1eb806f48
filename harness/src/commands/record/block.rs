//! Recording on a version other than the pinned one: a version block (`claude-code@X:`)
//! that states only what differs from the expectation the version gets without it
//! (`frames_patch` entries, `exit_code`), never a copy of the whole expectation.

use crate::expectation::{apply_frames_patch, for_version, ExpectKey};
use crate::frame::frame_kind;
use crate::matcher::{self, Expected, FrameRules, Mode};
use crate::pattern::{is_operator, Captures, Pattern, Vars};
use crate::runner::output::Frame;
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

/// A frame pattern's kind, for lining patterns up with frames: `type` and, when the
/// pattern names one, `subtype`. An `any_order` group has none.
struct PatKind(Option<String>, Option<String>);
struct FrameKind(String, Option<String>);

impl PartialEq<PatKind> for FrameKind {
    fn eq(&self, p: &PatKind) -> bool {
        p.0.as_deref() == Some(self.0.as_str()) && (p.1.is_none() || p.1 == self.1)
    }
}

fn literal(v: &Value, key: &str) -> Option<String> {
    v.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.starts_with('$'))
        .map(str::to_string)
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
/// extra frames are allowed anyway). `recorded[i]` is the pattern recorded for `actual[i]`.
pub fn frames_patch(
    parent: &[Value],
    mode: Mode,
    recorded: &[Value],
    actual: &[Value],
    vars: &Vars,
) -> BTreeMap<usize, Value> {
    let old: Vec<PatKind> = parent
        .iter()
        .map(|p| PatKind(literal(p, "type"), literal(p, "subtype")))
        .collect();
    let new: Vec<FrameKind> = actual
        .iter()
        .map(|f| {
            FrameKind(
                literal(f, "type").unwrap_or_default(),
                literal(f, "subtype"),
            )
        })
        .collect();
    let mut capture = similar::algorithms::Capture::new();
    let _ = similar::algorithms::myers::diff(&mut capture, &old, 0..old.len(), &new, 0..new.len());
    let mut plan: Vec<Plan> = parent.iter().map(|_| Plan::Keep).collect();
    let mut before: Vec<Vec<Value>> = vec![Vec::new(); parent.len() + 1];
    let mut caps = Captures::new();
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
        let one = json!({ k: v });
        let ok =
            Pattern::compile(&one).is_ok_and(|p| p.check(actual, vars, &mut caps.clone()).is_ok());
        if !ok {
            merge.insert(
                k.clone(),
                recorded.get(k).cloned().unwrap_or_else(|| "$absent".into()),
            );
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

/// Checks that `parent` with `patch` applied matches `actual`; the divergence if not.
pub fn verify(
    parent: &TargetExpect,
    patch: &BTreeMap<usize, Value>,
    actual: &[Frame],
    vars: &Vars,
) -> Result<(), String> {
    let frames: Vec<Value> = parent.frames.iter().map(|e| e.0.source()).collect();
    let patched = apply_frames_patch(&frames, patch)?;
    let compiled: Vec<Expected> = patched
        .iter()
        .map(|f| serde_json::from_value::<FrameEntry>(f.clone()).map(|e| e.0))
        .collect::<Result<_, _>>()
        .map_err(|e| format!("the version block holds an invalid pattern: {e}"))?;
    let ignore: Vec<Pattern> = parent.ignore.iter().map(|p| p.0.clone()).collect();
    let rules = FrameRules {
        expected: &compiled,
        ignore: &ignore,
        absent: &[],
        mode: parent.mode,
    };
    match matcher::match_frames(&rules, actual, vars, &mut Captures::new()).first() {
        Some(d) => Err(format!("the version block does not match its own run: {d}")),
        None => Ok(()),
    }
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
