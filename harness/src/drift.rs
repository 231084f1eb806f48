//! Drift across versions of a CLI: runs the suite on each version and reports, for
//! each pair of neighbouring versions, what changed in the protocol itself.
//!
//! The differ ([`diff`]) is a pure function over recorded outputs ([`VersionOutputs`]:
//! per scenario the frames, exit code and status), so it is tested from small fixtures
//! and can be re-run on saved outputs (`streamcheck drift --replay outputs.json`).
//! It compares frame types (type/subtype), the fields of each frame type (key paths →
//! JSON types, arrays as `[]`), the frame-type sequence per scenario, exit codes, result
//! subtypes, the tools in `system/init`, values at the same place (volatile ones
//! redacted), and which scenarios flip between pass and fail.

use crate::pattern::Vars;
use crate::report::{self, redact, redact_str, write_atomic, ReportWriter};
use crate::runner::{RunOptions, Status, Trial};
use crate::scenario::Scenario;
use crate::suite;
use crate::target::{self, NotInstalled, Project, Source, Target, TargetSpec};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

/// What one version printed in one scenario.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScenarioOutput {
    /// `passed`, `failed`, `known` (a listed known divergence) or `skipped`.
    pub status: String,
    /// Skip reason, or the first divergence of a failed run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub exit_code: Option<i32>,
    /// Set when the harness killed the CLI (`timeout`, `grace`, `stdout-open`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub killed: Option<String>,
    /// The frames, sandbox paths written as `$WORKSPACE` / `$HOME` (types kept).
    #[serde(default)]
    pub frames: Vec<Value>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub non_json_lines: usize,
    /// The first stderr line, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr: Option<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Everything one version printed in the suite.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct VersionOutputs {
    /// As named on the command line (`claude-code@2.1.74`).
    pub target: String,
    /// The version installed, when it could be.
    pub version: Option<String>,
    /// Why it could not run (not installable...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
    /// Sum of the trials' durations.
    #[serde(default)]
    pub trial_ms: u64,
    pub scenarios: BTreeMap<String, ScenarioOutput>,
}

fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// Sandbox paths as `$WORKSPACE` / `$HOME`, and the sandbox's temp dir name (also found
/// mangled into names, e.g. `-tmp-streamcheck-XXXXXX-work`) as `<sandbox>`.
fn redact_paths(v: &Value, vars: &Vars) -> Value {
    let token = std::path::Path::new(&vars.workspace)
        .parent()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|t| t.len() >= 8);
    fn walk(v: &Value, vars: &Vars, token: Option<&str>) -> Value {
        match v {
            Value::String(s) => {
                let s = redact_str(s, vars);
                Value::String(match token {
                    Some(t) => s.replace(t, "<sandbox>"),
                    None => s,
                })
            }
            Value::Array(a) => Value::Array(a.iter().map(|x| walk(x, vars, token)).collect()),
            Value::Object(m) => Value::Object(
                m.iter()
                    .map(|(k, x)| (k.clone(), walk(x, vars, token)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
    walk(v, vars, token.as_deref())
}

fn redact_text(s: &str, vars: &Vars) -> String {
    match redact_paths(&Value::String(s.to_string()), vars) {
        Value::String(s) => s,
        _ => unreachable!("a string stays a string"),
    }
}

/// A trial as the differ sees it.
pub fn output_of(trial: &Trial) -> ScenarioOutput {
    let (status, reason) = match &trial.status {
        Status::Passed => ("passed", None),
        Status::Failed => (
            "failed",
            trial.divergences.first().map(|d| clip(&d.to_string(), 300)),
        ),
        Status::Known(why) => ("known", Some(why.clone())),
        Status::Skipped(why) => ("skipped", Some(why.clone())),
    };
    let stderr = trial.stderr.text();
    ScenarioOutput {
        status: status.into(),
        reason: reason.map(|r| redact_text(&r, &trial.vars)),
        exit_code: trial.exit.code,
        killed: trial
            .exit
            .termination
            .by_harness()
            .then(|| trial.exit.termination.to_string()),
        frames: trial
            .output
            .frames
            .iter()
            .map(|f| redact_paths(&f.value, &trial.vars))
            .collect(),
        non_json_lines: trial.output.bad_lines.len(),
        stderr: stderr
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .map(|l| clip(&redact_text(l, &trial.vars), 200)),
    }
}

// ---------------------------------------------------------------------------
// The differ
// ---------------------------------------------------------------------------

/// A frame's kind: `type`, or `type/subtype`.
pub fn kind_of(frame: &Value) -> String {
    let t = frame
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("(no type)");
    match frame.get("subtype").and_then(Value::as_str) {
        Some(s) => format!("{t}/{s}"),
        None => t.to_string(),
    }
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

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

/// What changed between two neighbouring versions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PairDrift {
    pub from: String,
    pub to: String,
    /// Scenarios that ran (not skipped) on both: the ground of the comparison.
    pub compared: usize,
    pub frame_types_added: Vec<KindChange>,
    pub frame_types_gone: Vec<KindChange>,
    pub fields: Vec<FieldChange>,
    pub sequences: Vec<SequenceChange>,
    pub exit_codes: Vec<Change>,
    pub result_subtypes: Vec<Change>,
    pub tools_added: Vec<String>,
    pub tools_removed: Vec<String>,
    pub status_flips: Vec<StatusFlip>,
    pub values: Vec<ValueChange>,
}

impl PairDrift {
    /// True when the two versions printed the same protocol in every compared scenario.
    pub fn is_empty(&self) -> bool {
        self.frame_types_added.is_empty()
            && self.frame_types_gone.is_empty()
            && self.fields.is_empty()
            && self.sequences.is_empty()
            && self.exit_codes.is_empty()
            && self.result_subtypes.is_empty()
            && self.tools_added.is_empty()
            && self.tools_removed.is_empty()
            && self.status_flips.is_empty()
            && self.values.is_empty()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KindChange {
    pub frame_type: String,
    /// Scenarios where the version that has it printed it.
    pub scenarios: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FieldChangeKind {
    Added,
    Removed,
    TypeChanged,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FieldChange {
    pub frame_type: String,
    pub path: String,
    pub change: FieldChangeKind,
    pub from_types: Vec<String>,
    pub to_types: Vec<String>,
    /// Scenarios where the field is (added: in `to`; removed: in `from`; else either).
    pub scenarios: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SequenceChange {
    pub scenario: String,
    /// `reordered` (same frame types, other order), `changed`, or `no_output` (one side printed nothing).
    pub change: String,
    pub from: Vec<String>,
    pub to: Vec<String>,
}

/// A per-scenario value that changed (exit code, result subtypes).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Change {
    pub scenario: String,
    pub from: String,
    pub to: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatusFlip {
    pub scenario: String,
    pub from: String,
    pub to: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_reason: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ValueChange {
    pub frame_type: String,
    pub path: String,
    /// One example, before and after.
    pub from: String,
    pub to: String,
    /// Number of scenarios where this value changed.
    pub count: usize,
    pub scenarios: Vec<String>,
}

/// Per version: counts and how it went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VersionSummary {
    pub target: String,
    pub version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
    pub passed: usize,
    pub failed: usize,
    pub known: usize,
    pub skipped: usize,
    /// Scenarios that ran but printed no frame.
    pub no_frames: usize,
    /// The most frequent first stderr line of those, with its count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_frames_stderr: Option<(String, usize)>,
    pub trial_ms: u64,
    pub tools: Vec<String>,
}

/// The whole comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Drift {
    pub versions: Vec<VersionSummary>,
    /// Neighbouring versions that could run, in the order given.
    pub pairs: Vec<PairDrift>,
}

fn ran(o: &ScenarioOutput) -> bool {
    o.status != "skipped"
}

fn init_tools<'a>(frames: impl IntoIterator<Item = &'a Value>) -> BTreeSet<String> {
    frames
        .into_iter()
        .filter(|f| kind_of(f) == "system/init")
        .filter_map(|f| f.get("tools").and_then(Value::as_array))
        .flatten()
        .filter_map(|t| t.as_str().map(str::to_string))
        .collect()
}

fn summarise(v: &VersionOutputs) -> VersionSummary {
    let count = |s: &str| v.scenarios.values().filter(|o| o.status == s).count();
    let silent: Vec<&ScenarioOutput> = v
        .scenarios
        .values()
        .filter(|o| ran(o) && o.frames.is_empty())
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
        passed: count("passed"),
        failed: count("failed"),
        known: count("known"),
        skipped: count("skipped"),
        no_frames: silent.len(),
        no_frames_stderr,
        trial_ms: v.trial_ms,
        tools: init_tools(v.scenarios.values().flat_map(|o| &o.frames))
            .into_iter()
            .collect(),
    }
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

const EXAMPLES: usize = 5;

fn examples(mut s: Vec<String>) -> Vec<String> {
    s.sort();
    s.dedup();
    s
}

/// Compares two versions' outputs.
pub fn diff_pair(a: &VersionOutputs, b: &VersionOutputs) -> PairDrift {
    let mut d = PairDrift {
        from: a.target.clone(),
        to: b.target.clone(),
        ..PairDrift::default()
    };
    let common: Vec<(&String, &ScenarioOutput, &ScenarioOutput)> = a
        .scenarios
        .iter()
        .filter_map(|(id, x)| b.scenarios.get(id).map(|y| (id, x, y)))
        .filter(|(_, x, y)| ran(x) && ran(y))
        .collect();
    d.compared = common.len();

    // Status flips, over every scenario either version has.
    let ids: BTreeSet<&String> = a.scenarios.keys().chain(b.scenarios.keys()).collect();
    for id in ids {
        let (x, y) = (a.scenarios.get(id), b.scenarios.get(id));
        let st = |o: Option<&ScenarioOutput>| o.map_or("absent".to_string(), |o| o.status.clone());
        if st(x) != st(y) {
            d.status_flips.push(StatusFlip {
                scenario: id.clone(),
                from: st(x),
                to: st(y),
                from_reason: x.and_then(|o| o.reason.clone()),
                to_reason: y.and_then(|o| o.reason.clone()),
            });
        }
    }

    // Frame kinds, per scenario.
    let kinds = |o: &ScenarioOutput| -> BTreeSet<String> { o.frames.iter().map(kind_of).collect() };
    let mut kind_scen_a: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut kind_scen_b: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (id, x, y) in &common {
        for k in kinds(x) {
            kind_scen_a.entry(k).or_default().push((*id).clone());
        }
        for k in kinds(y) {
            kind_scen_b.entry(k).or_default().push((*id).clone());
        }
    }
    for (k, s) in &kind_scen_b {
        if !kind_scen_a.contains_key(k) {
            d.frame_types_added.push(KindChange {
                frame_type: k.clone(),
                scenarios: examples(s.clone()),
            });
        }
    }
    for (k, s) in &kind_scen_a {
        if !kind_scen_b.contains_key(k) {
            d.frame_types_gone.push(KindChange {
                frame_type: k.clone(),
                scenarios: examples(s.clone()),
            });
        }
    }

    // Fields per kind, over the scenarios where both printed that kind.
    for kind in kind_scen_a.keys().filter(|k| kind_scen_b.contains_key(*k)) {
        let mut sa = Schema::new();
        let mut sb = Schema::new();
        let mut where_a: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut where_b: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (id, x, y) in &common {
            let fx: Vec<&Value> = x.frames.iter().filter(|f| &kind_of(f) == kind).collect();
            let fy: Vec<&Value> = y.frames.iter().filter(|f| &kind_of(f) == kind).collect();
            if fx.is_empty() || fy.is_empty() {
                continue;
            }
            for (frames, schema, places) in
                [(fx, &mut sa, &mut where_a), (fy, &mut sb, &mut where_b)]
            {
                for (p, t) in schema_of(frames) {
                    places.entry(p.clone()).or_default().push((*id).clone());
                    schema.entry(p).or_default().extend(t);
                }
            }
        }
        let types = |s: &BTreeSet<&'static str>| s.iter().map(|t| t.to_string()).collect();
        let mut added: Vec<&String> = sb.keys().filter(|p| !sa.contains_key(*p)).collect();
        let mut removed: Vec<&String> = sa.keys().filter(|p| !sb.contains_key(*p)).collect();
        // Report a new (or gone) object once, not each of its fields.
        let top = |list: &mut Vec<&String>| {
            let all: BTreeSet<String> = list.iter().map(|s| s.to_string()).collect();
            list.retain(|p| {
                !all.iter().any(|q| {
                    p.len() > q.len()
                        && p.starts_with(q.as_str())
                        && p[q.len()..].starts_with(['.', '['])
                })
            });
        };
        top(&mut added);
        top(&mut removed);
        for p in added {
            d.fields.push(FieldChange {
                frame_type: kind.clone(),
                path: p.clone(),
                change: FieldChangeKind::Added,
                from_types: vec![],
                to_types: types(&sb[p]),
                scenarios: examples(where_b[p].clone()),
            });
        }
        for p in removed {
            d.fields.push(FieldChange {
                frame_type: kind.clone(),
                path: p.clone(),
                change: FieldChangeKind::Removed,
                from_types: types(&sa[p]),
                to_types: vec![],
                scenarios: examples(where_a[p].clone()),
            });
        }
        for (p, ta) in &sa {
            if let Some(tb) = sb.get(p) {
                if ta != tb {
                    let mut s = where_a[p].clone();
                    s.extend(where_b[p].iter().cloned());
                    d.fields.push(FieldChange {
                        frame_type: kind.clone(),
                        path: p.clone(),
                        change: FieldChangeKind::TypeChanged,
                        from_types: types(ta),
                        to_types: types(tb),
                        scenarios: examples(s),
                    });
                }
            }
        }
    }

    // Per scenario: sequence, exit code, result subtypes, values.
    let mut values: BTreeMap<(String, String), ValueChange> = BTreeMap::new();
    for (id, x, y) in &common {
        let (sx, sy): (Vec<String>, Vec<String>) = (
            x.frames.iter().map(kind_of).collect(),
            y.frames.iter().map(kind_of).collect(),
        );
        if sx != sy {
            let change = if sx.is_empty() || sy.is_empty() {
                "no_output"
            } else {
                let (mut ox, mut oy) = (sx.clone(), sy.clone());
                ox.sort();
                oy.sort();
                if ox == oy {
                    "reordered"
                } else {
                    "changed"
                }
            };
            d.sequences.push(SequenceChange {
                scenario: (*id).clone(),
                change: change.into(),
                from: compress(&sx),
                to: compress(&sy),
            });
        }
        let exit = |o: &ScenarioOutput| match (&o.killed, o.exit_code) {
            (Some(k), _) => format!("killed ({k})"),
            (None, Some(c)) => c.to_string(),
            (None, None) => "signal".into(),
        };
        if exit(x) != exit(y) {
            let with_stderr = |o: &ScenarioOutput| match (&o.stderr, o.frames.is_empty()) {
                (Some(l), true) => format!("{} (stderr: {l})", exit(o)),
                _ => exit(o),
            };
            d.exit_codes.push(Change {
                scenario: (*id).clone(),
                from: with_stderr(x),
                to: with_stderr(y),
            });
        }
        let results = |o: &ScenarioOutput| -> Vec<String> {
            o.frames
                .iter()
                .filter(|f| f.get("type").and_then(Value::as_str) == Some("result"))
                .map(|f| {
                    let sub = f.get("subtype").and_then(Value::as_str).unwrap_or("-");
                    match f.get("is_error") {
                        Some(Value::Bool(true)) => format!("{sub} (is_error)"),
                        _ => sub.to_string(),
                    }
                })
                .collect()
        };
        let (rx, ry) = (results(x), results(y));
        if rx != ry && !(rx.is_empty() && ry.is_empty()) {
            d.result_subtypes.push(Change {
                scenario: (*id).clone(),
                from: list_or_none(&rx),
                to: list_or_none(&ry),
            });
        }
        // Values of frames that line up by kind.
        let ops = similar::capture_diff_slices(similar::Algorithm::Myers, &sx, &sy);
        for op in ops {
            if let similar::DiffOp::Equal {
                old_index,
                new_index,
                len,
            } = op
            {
                for k in 0..len {
                    let (fa, fb) = (&x.frames[old_index + k], &y.frames[new_index + k]);
                    let mut found = Vec::new();
                    leaf_diffs(&normalise(fa), &normalise(fb), "", &mut found);
                    for (path, from, to) in found {
                        let e = values
                            .entry((sx[old_index + k].clone(), path.clone()))
                            .or_insert_with(|| ValueChange {
                                frame_type: sx[old_index + k].clone(),
                                path,
                                from,
                                to,
                                count: 0,
                                scenarios: vec![],
                            });
                        if !e.scenarios.contains(id) {
                            e.scenarios.push((*id).clone());
                            e.count += 1;
                        }
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
    d.values = values;

    let ta = init_tools(common.iter().flat_map(|(_, x, _)| &x.frames));
    let tb = init_tools(common.iter().flat_map(|(_, _, y)| &y.frames));
    d.tools_added = tb.difference(&ta).cloned().collect();
    d.tools_removed = ta.difference(&tb).cloned().collect();
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

fn list_or_none(l: &[String]) -> String {
    if l.is_empty() {
        "(no result)".into()
    } else {
        l.join(", ")
    }
}

/// `a, b, b, b` → `a, b ×3`.
pub fn compress(seq: &[String]) -> Vec<String> {
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

/// Values that differ from run to run, replaced so equal runs compare equal.
fn normalise(v: &Value) -> Value {
    fn uuids(v: &Value) -> Value {
        match v {
            Value::String(s)
                if s.len() == 36
                    && s.chars().enumerate().all(|(i, c)| match i {
                        8 | 13 | 18 | 23 => c == '-',
                        _ => c.is_ascii_hexdigit(),
                    }) =>
            {
                "<uuid>".into()
            }
            Value::Array(a) => Value::Array(a.iter().map(uuids).collect()),
            Value::Object(m) => Value::Object(
                m.iter()
                    .filter(|(k, _)| k.as_str() != "claude_code_version")
                    .map(|(k, x)| (k.clone(), uuids(x)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
    uuids(&redact(v, &Vars::default()))
}

fn show(v: &Value) -> String {
    clip(&v.to_string(), 120)
}

/// Leaves at the same path with the same JSON type and another value.
fn leaf_diffs(a: &Value, b: &Value, path: &str, out: &mut Vec<(String, String, String)>) {
    if a == b {
        return;
    }
    let join = |k: &str| {
        let ident = !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        let seg = if ident { k } else { "{*}" };
        if path.is_empty() {
            seg.to_string()
        } else {
            format!("{path}.{seg}")
        }
    };
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, va) in x {
                if let Some(vb) = y.get(k) {
                    leaf_diffs(va, vb, &join(k), out);
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
                let gone: Vec<String> = x
                    .iter()
                    .filter(|v| !y.contains(v))
                    .map(|v| v.to_string())
                    .collect();
                let new: Vec<String> = y
                    .iter()
                    .filter(|v| !x.contains(v))
                    .map(|v| v.to_string())
                    .collect();
                let (from, to) = if gone.is_empty() && new.is_empty() {
                    ("same items, other order".to_string(), show(b))
                } else {
                    (
                        clip(&format!("-[{}]", gone.join(", ")), 200),
                        clip(&format!("+[{}]", new.join(", ")), 200),
                    )
                };
                out.push((path.to_string(), from, to));
            } else {
                out.push((
                    path.to_string(),
                    format!("{} item(s)", x.len()),
                    format!("{} item(s)", y.len()),
                ));
            }
        }
        _ if json_type(a) == json_type(b) => out.push((path.to_string(), show(a), show(b))),
        _ => {}
    }
}

// ---------------------------------------------------------------------------
// drift.md
// ---------------------------------------------------------------------------

fn md_escape(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn scen_list(s: &[String]) -> String {
    s.iter()
        .map(|x| format!("`{x}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// drift.md: `command` is shown at the top, `notes` under it.
pub fn render_md(d: &Drift, command: &str, notes: &[String]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Protocol drift across versions\n");
    let _ = writeln!(s, "Produced by:\n\n```\n{command}\n```\n");
    for n in notes {
        let _ = writeln!(s, "- {n}");
    }
    if !notes.is_empty() {
        s.push('\n');
    }
    let _ = writeln!(s, "## Versions\n");
    let _ = writeln!(
        s,
        "| target | version | passed | failed | known | skipped | ran, no frame | trial time |\n|---|---|---|---|---|---|---|---|"
    );
    for v in &d.versions {
        if let Some(why) = &v.unavailable {
            let _ = writeln!(
                s,
                "| {} | — | | | | | | not available: {} |",
                v.target,
                md_escape(why)
            );
            continue;
        }
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {:.0} s |",
            v.target,
            v.version.as_deref().unwrap_or("?"),
            v.passed,
            v.failed,
            v.known,
            v.skipped,
            v.no_frames,
            v.trial_ms as f64 / 1000.0
        );
    }
    for v in &d.versions {
        if let Some((line, n)) = &v.no_frames_stderr {
            let _ = writeln!(
                s,
                "\n{}: {} scenario(s) printed no frame; most common first stderr line ({n}×): `{}`",
                v.target,
                v.no_frames,
                md_escape(line)
            );
        }
    }
    s.push('\n');
    let _ = writeln!(s, "Pass/fail is against the scenarios' expectations, which are written for the pinned Claude Code; a failure on another version is drift from it.\n");
    if d.pairs.is_empty() {
        let _ = writeln!(s, "Fewer than two versions could run: nothing to compare.");
    }
    for p in &d.pairs {
        render_pair(&mut s, p);
    }
    s
}

fn render_pair(s: &mut String, p: &PairDrift) {
    let _ = writeln!(s, "## {} → {}\n", p.from, p.to);
    let _ = writeln!(
        s,
        "{} scenario(s) ran on both. {} status flip(s), {} frame type(s) added, {} gone, {} field change(s), {} sequence change(s), {} exit-code change(s), {} result-subtype change(s), tools +{} −{}, {} changed value path(s).\n",
        p.compared,
        p.status_flips.len(),
        p.frame_types_added.len(),
        p.frame_types_gone.len(),
        p.fields.len(),
        p.sequences.len(),
        p.exit_codes.len(),
        p.result_subtypes.len(),
        p.tools_added.len(),
        p.tools_removed.len(),
        p.values.len()
    );
    if p.is_empty() {
        let _ = writeln!(s, "No drift.\n");
        return;
    }
    if !p.frame_types_added.is_empty() || !p.frame_types_gone.is_empty() {
        let _ = writeln!(s, "### Frame types\n");
        for k in &p.frame_types_added {
            let _ = writeln!(
                s,
                "- added `{}` (in {})",
                k.frame_type,
                scen_list(&k.scenarios)
            );
        }
        for k in &p.frame_types_gone {
            let _ = writeln!(
                s,
                "- gone `{}` (was in {})",
                k.frame_type,
                scen_list(&k.scenarios)
            );
        }
        s.push('\n');
    }
    if !p.tools_added.is_empty() || !p.tools_removed.is_empty() {
        let _ = writeln!(s, "### Tools in system/init\n");
        if !p.tools_added.is_empty() {
            let _ = writeln!(s, "- added: {}", p.tools_added.join(", "));
        }
        if !p.tools_removed.is_empty() {
            let _ = writeln!(s, "- removed: {}", p.tools_removed.join(", "));
        }
        s.push('\n');
    }
    if !p.fields.is_empty() {
        let _ = writeln!(s, "### Fields\n\n| frame type | field | change | types | e.g. in |\n|---|---|---|---|---|");
        for f in &p.fields {
            let (change, types) = match f.change {
                FieldChangeKind::Added => ("added", f.to_types.join("\\|")),
                FieldChangeKind::Removed => ("removed", f.from_types.join("\\|")),
                FieldChangeKind::TypeChanged => (
                    "type changed",
                    format!("{} → {}", f.from_types.join("\\|"), f.to_types.join("\\|")),
                ),
            };
            let _ = writeln!(
                s,
                "| `{}` | `{}` | {change} | {types} | {} |",
                f.frame_type,
                md_escape(&f.path),
                scen_list(&f.scenarios[..f.scenarios.len().min(2)])
            );
        }
        s.push('\n');
    }
    if !p.status_flips.is_empty() {
        let _ = writeln!(
            s,
            "### Pass/fail flips\n\n| scenario | {} | {} | why (the side that did not pass) |\n|---|---|---|---|",
            p.from, p.to
        );
        for f in &p.status_flips {
            let why = match (&f.from_reason, &f.to_reason) {
                (_, Some(r)) if f.to != "passed" => format!("{}: {r}", p.to),
                (Some(r), _) => format!("{}: {r}", p.from),
                _ => String::new(),
            };
            let why = why.as_str();
            let _ = writeln!(
                s,
                "| `{}` | {} | {} | {} |",
                f.scenario,
                f.from,
                f.to,
                md_escape(&clip(why, 160))
            );
        }
        s.push('\n');
    }
    change_table(s, "Exit codes", &p.exit_codes, &p.from, &p.to);
    change_table(s, "Result subtypes", &p.result_subtypes, &p.from, &p.to);
    if !p.sequences.is_empty() {
        let _ = writeln!(s, "### Frame sequences\n");
        for q in &p.sequences {
            let _ = writeln!(
                s,
                "- `{}` ({}):\n  - {}: {}\n  - {}: {}",
                q.scenario,
                q.change.replace('_', " "),
                p.from,
                if q.from.is_empty() {
                    "(none)".into()
                } else {
                    q.from.join(", ")
                },
                p.to,
                if q.to.is_empty() {
                    "(none)".into()
                } else {
                    q.to.join(", ")
                },
            );
        }
        s.push('\n');
    }
    if !p.values.is_empty() {
        const SHOWN: usize = 40;
        let _ = writeln!(
            s,
            "### Values (same frame type at the same place; volatile values redacted)\n\n| frame type | path | scenarios | example before | example after |\n|---|---|---|---|---|"
        );
        for v in p.values.iter().take(SHOWN) {
            let _ = writeln!(
                s,
                "| `{}` | `{}` | {} | `{}` | `{}` |",
                v.frame_type,
                md_escape(&v.path),
                v.count,
                md_escape(&v.from).replace('`', "'"),
                md_escape(&v.to).replace('`', "'")
            );
        }
        if p.values.len() > SHOWN {
            let _ = writeln!(s, "\n… and {} more in drift.json.", p.values.len() - SHOWN);
        }
        s.push('\n');
    }
}

// ---------------------------------------------------------------------------
// Running it
// ---------------------------------------------------------------------------

/// drift.json.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DriftFile {
    pub command: String,
    pub generated_at: String,
    /// Wall time of the runs (0 for a replay).
    pub duration_ms: u64,
    pub notes: Vec<String>,
    #[serde(flatten)]
    pub drift: Drift,
}

/// Options of `streamcheck drift`.
#[derive(Debug, Clone)]
pub struct DriftOptions {
    pub jobs: usize,
    pub run: RunOptions,
    pub install: bool,
    /// Where drift.md and drift.json go.
    pub report_dir: PathBuf,
    /// Where the runs' own reports (and outputs.json) go.
    pub run_dir: PathBuf,
    /// The command line, shown at the top of drift.md.
    pub command: String,
    pub notes: Vec<String>,
}

/// Resolves a target; `claude-code@V` where V is the pinned version uses the pinned install.
pub fn resolve(
    spec: &TargetSpec,
    project: &Project,
    install: bool,
) -> Result<Target, NotInstalled> {
    if let Source::Npm { version } = &spec.source {
        if let Ok(pinned) = TargetSpec::parse("claude-code") {
            if let Ok(mut t) = target::resolve(&pinned, project, install) {
                if &t.version == version {
                    t.name = spec.name.clone();
                    return Ok(t);
                }
            }
        }
    }
    target::resolve(spec, project, install)
}

/// Runs the suite on every target and writes drift.md and drift.json.
pub async fn run(
    project: &Project,
    scenarios: Vec<Scenario>,
    specs: &[TargetSpec],
    opts: &DriftOptions,
) -> Result<DriftFile, String> {
    if specs.len() < 2 {
        return Err("drift: name at least two targets (--target A --target B)".into());
    }
    let started = Instant::now();
    let targets: Vec<Result<Target, NotInstalled>> = specs
        .iter()
        .map(|s| resolve(s, project, opts.install))
        .collect();
    for t in &targets {
        match t {
            Ok(t) => eprintln!("streamcheck: {} is Claude Code {}", t.name, t.version),
            Err(e) => eprintln!("streamcheck: {e}"),
        }
    }
    let mut writer = ReportWriter::create(&opts.run_dir, suite::target_infos(&targets), vec![])
        .map_err(|e| format!("cannot write reports to {}: {e}", opts.run_dir.display()))?;
    let mut outputs: Vec<VersionOutputs> = specs
        .iter()
        .zip(&targets)
        .map(|(s, t)| VersionOutputs {
            target: s.name.clone(),
            version: t.as_ref().ok().map(|t| t.version.clone()),
            unavailable: t.as_ref().err().map(|e| e.to_string()),
            ..VersionOutputs::default()
        })
        .collect();
    let runnable: Vec<Result<Target, NotInstalled>> =
        targets.iter().filter(|t| t.is_ok()).cloned().collect();
    let total = scenarios.len() * runnable.len();
    let mut done = 0;
    let finished = suite::run(
        scenarios,
        &runnable,
        opts.jobs,
        opts.run.clone(),
        &mut writer,
        |t| {
            done += 1;
            let status = match &t.status {
                Status::Passed => "ok",
                Status::Failed => "FAILED",
                Status::Known(_) => "known",
                Status::Skipped(_) => "skipped",
            };
            println!("[{done}/{total}] {status:<7} {} ({})", t.scenario, t.target);
            if let Some(v) = outputs.iter_mut().find(|v| v.target == t.target) {
                v.trial_ms += t.duration_ms;
                v.scenarios.insert(t.scenario.clone(), output_of(t));
            }
        },
    )
    .await
    .map_err(|e| format!("cannot write reports: {e}"))?;
    if !finished {
        return Err("interrupted: no drift report written".into());
    }
    writer.finish().map_err(|e| e.to_string())?;
    let outputs_path = opts.run_dir.join("outputs.json");
    write_atomic(
        &outputs_path,
        serde_json::to_string(&outputs)
            .map_err(|e| e.to_string())?
            .as_bytes(),
    )
    .map_err(|e| format!("{}: {e}", outputs_path.display()))?;
    let mut notes = opts.notes.clone();
    let duration_ms = started.elapsed().as_millis() as u64;
    notes.push(format!(
        "Wall time of the runs: {:.1} min with --jobs {}. Raw outputs (for `streamcheck drift --replay`): {}.",
        duration_ms as f64 / 60_000.0,
        opts.jobs,
        shown_path(&outputs_path, &project.root)
    ));
    write(
        &outputs,
        &opts.report_dir,
        &opts.command,
        notes,
        duration_ms,
    )
}

fn shown_path(p: &Path, root: &Path) -> String {
    p.strip_prefix(root).unwrap_or(p).display().to_string()
}

/// Diffs saved outputs (an `outputs.json` of an earlier run) and writes the report.
pub fn replay(outputs: &Path, opts: &DriftOptions) -> Result<DriftFile, String> {
    let text =
        std::fs::read_to_string(outputs).map_err(|e| format!("{}: {e}", outputs.display()))?;
    let versions: Vec<VersionOutputs> =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", outputs.display()))?;
    write(
        &versions,
        &opts.report_dir,
        &opts.command,
        opts.notes.clone(),
        0,
    )
}

fn write(
    versions: &[VersionOutputs],
    dir: &Path,
    command: &str,
    notes: Vec<String>,
    duration_ms: u64,
) -> Result<DriftFile, String> {
    let drift = diff(versions);
    let md = render_md(&drift, command, &notes);
    let file = DriftFile {
        command: command.to_string(),
        generated_at: report::timestamp(SystemTime::now()),
        duration_ms,
        notes,
        drift,
    };
    let err = |p: &Path, e: std::io::Error| format!("{}: {e}", p.display());
    let (md_path, json_path) = (dir.join("drift.md"), dir.join("drift.json"));
    write_atomic(&md_path, md.as_bytes()).map_err(|e| err(&md_path, e))?;
    let json = serde_json::to_string_pretty(&file).map_err(|e| e.to_string())? + "\n";
    write_atomic(&json_path, json.as_bytes()).map_err(|e| err(&json_path, e))?;
    Ok(file)
}

/// A `### title` table of per-scenario before/after values, if there are any.
fn change_table(s: &mut String, title: &str, changes: &[Change], from: &str, to: &str) {
    if changes.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "### {title}\n\n| scenario | {from} | {to} |\n|---|---|---|"
    );
    for c in changes {
        let _ = writeln!(
            s,
            "| `{}` | {} | {} |",
            c.scenario,
            md_escape(&c.from),
            md_escape(&c.to)
        );
    }
    s.push('\n');
}
