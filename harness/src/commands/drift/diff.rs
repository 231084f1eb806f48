//! The differ: a pure function from recorded outputs to what changed, one function per
//! section of the report.

use super::model::*;
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
        target: v.target.clone(),
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

/// A scenario both versions ran.
struct Common<'a> {
    id: &'a String,
    from: &'a ScenarioOutput,
    to: &'a ScenarioOutput,
}

/// Compares two versions' outputs.
pub fn diff_pair(a: &VersionOutputs, b: &VersionOutputs) -> PairDrift {
    let common: Vec<Common> = a
        .scenarios
        .iter()
        .filter_map(|(id, from)| b.scenarios.get(id).map(|to| Common { id, from, to }))
        .filter(|c| c.from.ran() && c.to.ran())
        .collect();
    let kinds = FrameKinds::of(&common);
    let tools = tools(&common);
    let mut d = PairDrift {
        from: a.target.clone(),
        to: b.target.clone(),
        compared: common.len(),
        status_flips: status_flips(a, b),
        frame_types_added: kinds.added(),
        frame_types_gone: kinds.gone(),
        fields: fields(&common, &kinds),
        sequences: sequences(&common),
        exit_codes: exit_codes(&common),
        result_subtypes: result_subtypes(&common),
        tools_added: tools.added,
        tools_removed: tools.removed,
        tool_scenarios: tools.scenarios,
        values: values(&common),
        verdict: Vec::new(),
        pending: Vec::new(),
    };
    // The verdict lists every scenario a change was seen in; the tables a few.
    d.verdict = super::verdict::classify(&d);
    for k in d
        .frame_types_added
        .iter_mut()
        .chain(&mut d.frame_types_gone)
    {
        k.scenarios.truncate(EXAMPLES);
    }
    for f in &mut d.fields {
        f.scenarios.truncate(EXAMPLES);
    }
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
                scenario: id.clone(),
                from: name(x),
                to: name(y),
                from_reason: reason(x),
                to_reason: reason(y),
            });
        }
    }
    flips
}

/// Frame kind → the scenarios that printed it, on each side.
struct FrameKinds {
    from: BTreeMap<String, Vec<String>>,
    to: BTreeMap<String, Vec<String>>,
}

impl FrameKinds {
    fn of(common: &[Common]) -> FrameKinds {
        let kinds =
            |o: &ScenarioOutput| -> BTreeSet<String> { o.frames.iter().map(frame_kind).collect() };
        let mut k = FrameKinds {
            from: BTreeMap::new(),
            to: BTreeMap::new(),
        };
        for c in common {
            for kind in kinds(c.from) {
                k.from.entry(kind).or_default().push(c.id.clone());
            }
            for kind in kinds(c.to) {
                k.to.entry(kind).or_default().push(c.id.clone());
            }
        }
        k
    }

    fn added(&self) -> Vec<KindChange> {
        only_in(&self.to, &self.from)
    }

    fn gone(&self) -> Vec<KindChange> {
        only_in(&self.from, &self.to)
    }

    fn on_both_sides(&self) -> impl Iterator<Item = &String> {
        self.from.keys().filter(|k| self.to.contains_key(*k))
    }
}

fn only_in(
    side: &BTreeMap<String, Vec<String>>,
    other: &BTreeMap<String, Vec<String>>,
) -> Vec<KindChange> {
    side.iter()
        .filter(|(k, _)| !other.contains_key(*k))
        .map(|(k, s)| KindChange {
            frame_type: k.clone(),
            scenarios: sorted_unique(s.clone()),
        })
        .collect()
}

fn sorted_unique(mut s: Vec<String>) -> Vec<String> {
    s.sort();
    s.dedup();
    s
}

/// One side's fields of one frame kind: the schema, and where each path was seen.
#[derive(Default)]
struct KindFields {
    schema: Schema,
    seen_in: BTreeMap<String, Vec<String>>,
}

impl KindFields {
    fn add(&mut self, id: &str, frames: Vec<&Value>) {
        for (p, t) in schema_of(frames) {
            self.seen_in
                .entry(p.clone())
                .or_default()
                .push(id.to_string());
            self.schema.entry(p).or_default().extend(t);
        }
    }

    /// The paths the other side lacks, a new (or gone) object once, not each of its fields.
    fn missing_from(&self, other: &KindFields) -> Vec<&String> {
        let mut list: Vec<&String> = self
            .schema
            .keys()
            .filter(|p| !other.schema.contains_key(*p))
            .collect();
        let all: BTreeSet<String> = list.iter().map(|s| s.to_string()).collect();
        list.retain(|p| {
            !all.iter().any(|q| {
                p.len() > q.len()
                    && p.starts_with(q.as_str())
                    && p[q.len()..].starts_with(['.', '['])
            })
        });
        list
    }
}

/// Fields per frame kind, over the scenarios where both printed that kind.
fn fields(common: &[Common], kinds: &FrameKinds) -> Vec<FieldChange> {
    let mut out = Vec::new();
    for kind in kinds.on_both_sides() {
        let (mut a, mut b) = (KindFields::default(), KindFields::default());
        for c in common {
            let (fx, fy) = (frames_of_kind(c.from, kind), frames_of_kind(c.to, kind));
            if fx.is_empty() || fy.is_empty() {
                continue;
            }
            a.add(c.id, fx);
            b.add(c.id, fy);
        }
        out.extend(field_changes(kind, &a, &b));
    }
    out
}

fn frames_of_kind<'a>(o: &'a ScenarioOutput, kind: &str) -> Vec<&'a Value> {
    o.frames.iter().filter(|f| frame_kind(f) == kind).collect()
}

fn field_changes(kind: &str, a: &KindFields, b: &KindFields) -> Vec<FieldChange> {
    let types = |s: &BTreeSet<&'static str>| s.iter().map(|t| t.to_string()).collect();
    let change = |path: &str, change, from_types, to_types, scenarios| FieldChange {
        frame_type: kind.to_string(),
        path: path.to_string(),
        change,
        from_types,
        to_types,
        scenarios: sorted_unique(scenarios),
    };
    let mut out = Vec::new();
    for p in b.missing_from(a) {
        let to = types(&b.schema[p]);
        out.push(change(
            p,
            FieldChangeKind::Added,
            vec![],
            to,
            b.seen_in[p].clone(),
        ));
    }
    for p in a.missing_from(b) {
        let from = types(&a.schema[p]);
        out.push(change(
            p,
            FieldChangeKind::Removed,
            from,
            vec![],
            a.seen_in[p].clone(),
        ));
    }
    for (p, ta) in &a.schema {
        match b.schema.get(p) {
            Some(tb) if ta != tb => {
                let mut s = a.seen_in[p].clone();
                s.extend(b.seen_in[p].iter().cloned());
                out.push(change(
                    p,
                    FieldChangeKind::TypeChanged,
                    types(ta),
                    types(tb),
                    s,
                ));
            }
            _ => {}
        }
    }
    out
}

fn kind_sequence(o: &ScenarioOutput) -> Vec<String> {
    o.frames.iter().map(frame_kind).collect()
}

/// Scenarios whose frame-type sequence changed.
fn sequences(common: &[Common]) -> Vec<SequenceChange> {
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
            scenario: c.id.clone(),
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
fn exit_codes(common: &[Common]) -> Vec<ScenarioChange> {
    let with_stderr = |o: &ScenarioOutput| match (&o.stderr, o.frames.is_empty()) {
        (Some(l), true) => format!("{} (stderr: {l})", o.exit),
        _ => o.exit.to_string(),
    };
    common
        .iter()
        .filter(|c| c.from.exit.to_string() != c.to.exit.to_string())
        .map(|c| ScenarioChange {
            scenario: c.id.clone(),
            from: with_stderr(c.from),
            to: with_stderr(c.to),
            new_fields: Vec::new(),
        })
        .collect()
}

/// Scenarios whose result frames' subtypes changed.
fn result_subtypes(common: &[Common]) -> Vec<ScenarioChange> {
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
                scenario: c.id.clone(),
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

/// Tools in `system/init` added and removed between the versions.
struct ToolDrift {
    added: Vec<String>,
    removed: Vec<String>,
    scenarios: BTreeMap<String, Vec<String>>,
}

/// Tools in `system/init` added and removed, scenario by scenario (a tool one scenario
/// enables does not hide that another lost it), over the scenarios where both printed an init.
fn tools(common: &[Common]) -> ToolDrift {
    let mut added: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut removed: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let has_init = |o: &ScenarioOutput| o.frames.iter().any(|f| frame_kind(f) == "system/init");
    for c in common.iter().filter(|c| has_init(c.from) && has_init(c.to)) {
        let (ta, tb) = (init_tools(&c.from.frames), init_tools(&c.to.frames));
        for t in tb.difference(&ta) {
            added.entry(t.clone()).or_default().push(c.id.clone());
        }
        for t in ta.difference(&tb) {
            removed.entry(t.clone()).or_default().push(c.id.clone());
        }
    }
    let mut scenarios = BTreeMap::new();
    for (t, mut s) in added.clone().into_iter().chain(removed.clone()) {
        s.truncate(EXAMPLES);
        scenarios.insert(t, s);
    }
    ToolDrift {
        added: added.into_keys().collect(),
        removed: removed.into_keys().collect(),
        scenarios,
    }
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
fn values(common: &[Common]) -> Vec<ValueChange> {
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
                    if !e.scenarios.contains(c.id) {
                        e.scenarios.push(c.id.clone());
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
