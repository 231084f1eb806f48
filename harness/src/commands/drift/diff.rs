//! The differ: a pure function from recorded outputs to what changed, one function per
//! section of the report.

use super::model::*;
use super::printed::Both;
use crate::frame::{frame_kind, json_type};
use crate::normalize::comparable;
use crate::text::clip;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// At most this many example scenarios per change.
const EXAMPLES: usize = 5;

/// Key paths → JSON types. Arrays are `[]`; keys that are not identifiers (model
/// names, file names used as keys) are `{*}`.
pub type Schema = BTreeMap<String, BTreeSet<&'static str>>;

pub fn schema_of<'a>(frames: impl IntoIterator<Item = &'a Value>) -> Schema {
    fn walk(v: &Value, path: &str, out: &mut Schema) {
        if !path.is_empty() {
            out.entry(path.to_string())
                .or_default()
                .insert(json_type(v));
        }
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    let ident = !k.is_empty()
                        && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                        && !k.starts_with(|c: char| c.is_ascii_digit());
                    let seg = if ident { k.as_str() } else { "{*}" };
                    let p = if path.is_empty() {
                        seg.to_string()
                    } else {
                        format!("{path}.{seg}")
                    };
                    walk(x, &p, out);
                }
            }
            Value::Array(a) => {
                let p = format!("{path}[]");
                for x in a {
                    walk(x, &p, out);
                }
            }
            _ => {}
        }
    }
    let mut out = Schema::new();
    for f in frames {
        walk(f, "", &mut out);
    }
    out
}

/// Compares each version with the next one that could run.
pub fn diff(versions: &[VersionOutputs]) -> Drift {
    let available: Vec<&VersionOutputs> = versions
        .iter()
        .filter(|v| v.unavailable.is_none())
        .collect();
    Drift {
        versions: versions.iter().map(summarise).collect(),
        pairs: available
            .windows(2)
            .map(|w| diff_pair(w[0], w[1]))
            .collect(),
    }
}

fn summarise(v: &VersionOutputs) -> VersionSummary {
    let count = |s: StatusName| {
        v.scenarios
            .values()
            .filter(|o| StatusName::of(Some(&o.status)) == s)
            .count()
    };
    let silent: Vec<&ScenarioOutput> = v
        .scenarios
        .values()
        .filter(|o| o.ran() && o.frames.is_empty())
        .collect();
    let mut lines: BTreeMap<&str, usize> = BTreeMap::new();
    for o in &silent {
        if let Some(l) = &o.stderr {
            *lines.entry(l.as_str()).or_default() += 1;
        }
    }
    let no_frames_stderr = lines
        .into_iter()
        .max_by_key(|(l, n)| (*n, std::cmp::Reverse(*l)))
        .map(|(l, n)| (l.to_string(), n));
    VersionSummary {
        target: v.target.as_str().into(),
        version: v.version.clone(),
        unavailable: v.unavailable.clone(),
        passed: count(StatusName::Passed),
        failed: count(StatusName::Failed),
        known: count(StatusName::Known),
        skipped: count(StatusName::Skipped),
        no_frames: silent.len(),
        no_frames_stderr,
        trial_ms: v.trial_ms,
        tools: init_tools(v.scenarios.values().flat_map(|o| &o.frames))
            .into_iter()
            .collect(),
    }
}

/// Compares two versions' outputs.
pub fn diff_pair(a: &VersionOutputs, b: &VersionOutputs) -> PairDrift {
    let common: Vec<Both> = a
        .scenarios
        .iter()
        .filter_map(|(id, from)| b.scenarios.get(id).map(|to| Both { id, from, to }))
        .filter(|c| c.from.ran() && c.to.ran())
        .collect();
    let (printed, not_printed) = super::printed::changes(&common);
    let mut d = PairDrift {
        from: a.target.clone(),
        to: b.target.clone(),
        compared: common.len(),
        status_flips: status_flips(a, b),
        printed,
        not_printed,
        sequences: sequences(&common),
        exit_codes: exit_codes(&common),
        result_subtypes: result_subtypes(&common),
        values: values(&common),
        verdict: Vec::new(),
        pending: Vec::new(),
    };
    d.verdict = super::verdict::classify(&d);
    d
}

/// Scenarios whose status differs, over every scenario either version has.
fn status_flips(a: &VersionOutputs, b: &VersionOutputs) -> Vec<StatusFlip> {
    let ids: BTreeSet<&String> = a.scenarios.keys().chain(b.scenarios.keys()).collect();
    let mut flips = Vec::new();
    for id in ids {
        let (x, y) = (a.scenarios.get(id), b.scenarios.get(id));
        let name = |o: Option<&ScenarioOutput>| StatusName::of(o.map(|o| &o.status));
        if name(x) != name(y) {
            let reason = |o: Option<&ScenarioOutput>| o.and_then(|o| o.reason());
            flips.push(StatusFlip {
                scenario: id.as_str().into(),
                from: name(x),
                to: name(y),
                from_reason: reason(x),
                to_reason: reason(y),
            });
        }
    }
    flips
}

fn kind_sequence(o: &ScenarioOutput) -> Vec<String> {
    o.frames.iter().map(frame_kind).collect()
}

/// Scenarios whose frame-type sequence changed.
fn sequences(common: &[Both]) -> Vec<SequenceChange> {
    let mut out = Vec::new();
    for c in common {
        let (sx, sy) = (kind_sequence(c.from), kind_sequence(c.to));
        if sx == sy {
            continue;
        }
        let change = if sx.is_empty() {
            SequenceChangeKind::NowRuns
        } else if sy.is_empty() {
            SequenceChangeKind::NoOutput
        } else {
            let (mut ox, mut oy) = (sx.clone(), sy.clone());
            ox.sort();
            oy.sort();
            if ox == oy {
                SequenceChangeKind::Reordered
            } else {
                SequenceChangeKind::Changed
            }
        };
        out.push(SequenceChange {
            scenario: c.id.as_str().into(),
            change,
            from: run_length(&sx),
            to: run_length(&sy),
        });
    }
    out
}

/// `a, b, b, b` → `a, b ×3`.
pub fn run_length(seq: &[String]) -> Vec<String> {
    let mut out: Vec<(String, usize)> = Vec::new();
    for s in seq {
        match out.last_mut() {
            Some((last, n)) if last == s => *n += 1,
            _ => out.push((s.clone(), 1)),
        }
    }
    out.into_iter()
        .map(|(s, n)| if n == 1 { s } else { format!("{s} ×{n}") })
        .collect()
}

/// Scenarios whose exit changed; a side that printed nothing shows its stderr too.
fn exit_codes(common: &[Both]) -> Vec<ScenarioChange> {
    let with_stderr = |o: &ScenarioOutput| match (&o.stderr, o.frames.is_empty()) {
        (Some(l), true) => format!("{} (stderr: {l})", o.exit),
        _ => o.exit.to_string(),
    };
    common
        .iter()
        .filter(|c| c.from.exit.to_string() != c.to.exit.to_string())
        .map(|c| ScenarioChange {
            scenario: c.id.as_str().into(),
            from: with_stderr(c.from),
            to: with_stderr(c.to),
            new_fields: Vec::new(),
        })
        .collect()
}

/// Scenarios whose result frames' subtypes changed.
fn result_subtypes(common: &[Both]) -> Vec<ScenarioChange> {
    let list_or_none = |l: &[String]| {
        if l.is_empty() {
            "(no result)".to_string()
        } else {
            l.join(", ")
        }
    };
    let mut out = Vec::new();
    for c in common {
        let (rx, ry) = (c.from.result_subtypes(), c.to.result_subtypes());
        if rx != ry && !(rx.is_empty() && ry.is_empty()) {
            out.push(ScenarioChange {
                scenario: c.id.as_str().into(),
                from: list_or_none(&rx),
                to: list_or_none(&ry),
                new_fields: new_result_fields(c.from, c.to),
            });
        }
    }
    out
}

/// What is new in the newer result frames: top-level fields the older ones lack or had
/// empty (`errors[]`), durations and costs aside, and the result text when it turned into
/// an error.
fn new_result_fields(from: &ScenarioOutput, to: &ScenarioOutput) -> Vec<String> {
    let results = |o: &ScenarioOutput| -> Schema {
        let frames = o.frames.iter().filter(|f| crate::frame::is_result(f));
        schema_of(frames)
            .into_iter()
            .filter(|(p, _)| !p.contains('.') && !p.trim_end_matches("[]").contains('['))
            .filter(|(p, _)| !crate::normalize::is_volatile_key(p.trim_end_matches("[]")))
            .collect()
    };
    let (a, b) = (results(from), results(to));
    let mut out: Vec<String> = b
        .keys()
        .filter(|p| !a.contains_key(*p))
        .filter(|p| !b.contains_key(&format!("{p}[]")) || a.contains_key(*p))
        .cloned()
        .collect();
    let last_result = |o: &ScenarioOutput| {
        o.frames
            .iter()
            .rev()
            .find(|f| crate::frame::is_result(f))
            .cloned()
    };
    if let (Some(x), Some(y)) = (last_result(from), last_result(to)) {
        let error = y.get("is_error") == Some(&Value::Bool(true));
        if error && x.get("result") != y.get("result") {
            if let Some(text) = y.get("result").and_then(Value::as_str) {
                out.push(format!("result {}", clip(&format!("{text:?}"), 80)));
            }
        }
    }
    out
}

fn init_tools<'a>(frames: impl IntoIterator<Item = &'a Value>) -> BTreeSet<String> {
    frames
        .into_iter()
        .filter(|f| frame_kind(f) == "system/init")
        .filter_map(|f| f.get("tools").and_then(Value::as_array))
        .flatten()
        .filter_map(|t| t.as_str().map(str::to_string))
        .collect()
}

/// Values of frames that line up by kind, most widespread first.
fn values(common: &[Both]) -> Vec<ValueChange> {
    let mut values: BTreeMap<(String, String), ValueChange> = BTreeMap::new();
    for c in common {
        let (sx, sy) = (kind_sequence(c.from), kind_sequence(c.to));
        let ops = similar::capture_diff_slices(similar::Algorithm::Myers, &sx, &sy);
        for op in ops {
            let similar::DiffOp::Equal {
                old_index,
                new_index,
                len,
            } = op
            else {
                continue;
            };
            for k in 0..len {
                let kind = &sx[old_index + k];
                let (fa, fb) = (&c.from.frames[old_index + k], &c.to.frames[new_index + k]);
                let mut found = Vec::new();
                leaf_diffs(&comparable(fa), &comparable(fb), "", &mut found);
                for leaf in found {
                    let e = values
                        .entry((kind.clone(), leaf.path.clone()))
                        .or_insert_with(|| ValueChange {
                            frame_type: kind.clone(),
                            path: leaf.path,
                            from: leaf.from,
                            to: leaf.to,
                            count: 0,
                            scenarios: vec![],
                        });
                    if !e.scenarios.iter().any(|s| s == c.id) {
                        e.scenarios.push(c.id.as_str().into());
                        e.count += 1;
                    }
                }
            }
        }
    }
    let mut values: Vec<ValueChange> = values.into_values().collect();
    values.sort_by(|p, q| {
        q.count
            .cmp(&p.count)
            .then(p.frame_type.cmp(&q.frame_type))
            .then(p.path.cmp(&q.path))
    });
    for v in &mut values {
        v.scenarios.truncate(EXAMPLES);
    }
    values
}

/// A leaf that differs between two frames: where, and one example of before and after.
struct LeafDiff {
    path: String,
    from: String,
    to: String,
}

fn show(v: &Value) -> String {
    clip(&v.to_string(), 120)
}

/// Leaves at the same path with the same JSON type and another value.
fn leaf_diffs(a: &Value, b: &Value, path: &str, out: &mut Vec<LeafDiff>) {
    if a == b {
        return;
    }
    let leaf = |from: String, to: String| LeafDiff {
        path: path.to_string(),
        from,
        to,
    };
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, va) in x {
                if let Some(vb) = y.get(k) {
                    leaf_diffs(va, vb, &join_key(path, k), out);
                }
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            let scalars = x.iter().chain(y).all(|v| !v.is_object() && !v.is_array());
            if x.len() == y.len() && !scalars {
                for (va, vb) in x.iter().zip(y) {
                    leaf_diffs(va, vb, &format!("{path}[]"), out);
                }
            } else if scalars {
                let (from, to) = scalar_list_change(x, y, b);
                out.push(leaf(from, to));
            } else {
                out.push(leaf(
                    format!("{} item(s)", x.len()),
                    format!("{} item(s)", y.len()),
                ));
            }
        }
        _ if json_type(a) == json_type(b) => out.push(leaf(show(a), show(b))),
        _ => {}
    }
}

/// `path.key`, a key that is not an identifier as `{*}`.
fn join_key(path: &str, k: &str) -> String {
    let ident = !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    let seg = if ident { k } else { "{*}" };
    if path.is_empty() {
        seg.to_string()
    } else {
        format!("{path}.{seg}")
    }
}

/// Two lists of scalars: the items gone and the items new, or "same items, other order".
fn scalar_list_change(x: &[Value], y: &[Value], after: &Value) -> (String, String) {
    let missing = |from: &[Value], other: &[Value]| -> Vec<String> {
        from.iter()
            .filter(|v| !other.contains(v))
            .map(|v| v.to_string())
            .collect()
    };
    let (gone, new) = (missing(x, y), missing(y, x));
    if gone.is_empty() && new.is_empty() {
        ("same items, other order".to_string(), show(after))
    } else {
        (
            clip(&format!("-[{}]", gone.join(", ")), 200),
            clip(&format!("+[{}]", new.join(", ")), 200),
        )
    }
}
