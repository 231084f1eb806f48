//! Field-level parity: per frame kind, each key path whose presence, JSON type or
//! normalised value differs between what two CLIs printed for one scenario. Values are
//! normalised as everywhere else ([`crate::normalize`]): durations, costs, times, session
//! ids and uuids are hidden, sandbox paths are `$WORKSPACE`/`$HOME` (the caller's
//! [`super::Recorded`] frames already are).

use crate::frame::{frame_kind, json_type};
use crate::normalize;
use crate::protocol::check::within;
use crate::text::clip_line;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// A value longer than this is shown clipped (two differing long texts stay told apart
/// by their starts, and a report line stays readable).
const VALUE_CHARS: usize = 80;

/// Per key path (`message.usage.input_tokens`, array items `[]`): its JSON types and its
/// normalised scalar values.
#[derive(Debug, Default, Clone, PartialEq)]
struct Path {
    types: BTreeSet<&'static str>,
    values: BTreeSet<String>,
}

/// What one run printed: per frame kind, per key path (`""` the frame itself).
type Printed = BTreeMap<String, BTreeMap<String, Path>>;

fn printed<'a>(frames: impl IntoIterator<Item = &'a Value>) -> Printed {
    let mut out = Printed::new();
    for f in frames {
        let paths = out.entry(frame_kind(f)).or_default();
        walk(f, "", "", paths);
    }
    out
}

fn walk(v: &Value, path: &str, key: &str, out: &mut BTreeMap<String, Path>) {
    let entry = out.entry(path.to_string()).or_default();
    entry.types.insert(json_type(v));
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let p = match path {
                    "" => k.clone(),
                    _ => format!("{path}.{k}"),
                };
                walk(x, &p, k, out);
            }
        }
        Value::Array(a) => {
            for x in a {
                walk(x, &format!("{path}[]"), key, out);
            }
        }
        scalar if !path.is_empty() => {
            entry.values.insert(normalised(key, scalar));
        }
        _ => {}
    }
}

/// A scalar as compared: a volatile or run-id key's value as `<key>`, a uuid as
/// `<uuid>`, the CLI's own version left out.
fn normalised(key: &str, v: &Value) -> String {
    if key == "claude_code_version" {
        return "<version>".into();
    }
    if normalize::hides(key, v.is_null(), false) {
        return normalize::hidden(key);
    }
    clip_line(&normalize::comparable(v).to_string(), VALUE_CHARS)
}

/// Which side printed something the other did not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Which {
    A,
    B,
}

/// How a key path differs.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(tag = "differs", rename_all = "snake_case")]
pub enum Difference {
    /// Only one side printed frames of the kind at all (`path` is empty).
    Kind { only: Which },
    /// Only one side printed the key (in frames of a kind both printed); `example`: one of
    /// its values there (`None` for an object or array).
    Presence {
        only: Which,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        example: Option<String>,
    },
    /// Both printed it, with other JSON types.
    Type { a: Vec<String>, b: Vec<String> },
    /// Both printed it with the same types; the normalised values differ (each side's
    /// values not printed by the other).
    Value { a: Vec<String>, b: Vec<String> },
}

impl Difference {
    /// The class of difference, for the table across scenarios (values left out).
    pub fn class(&self) -> &'static str {
        match self {
            Difference::Kind { only: Which::A } | Difference::Presence { only: Which::A, .. } => {
                "only A"
            }
            Difference::Kind { only: Which::B } | Difference::Presence { only: Which::B, .. } => {
                "only B"
            }
            Difference::Type { .. } => "type",
            Difference::Value { .. } => "value",
        }
    }
}

/// One key path of one frame kind that differs in one scenario.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct FieldDifference {
    pub kind: String,
    /// The key path; empty for the frame kind itself.
    pub path: String,
    #[serde(flatten)]
    pub difference: Difference,
}

impl FieldDifference {
    /// One sentence, naming the sides `a` and `b`.
    pub fn sentence(&self, a: &str, b: &str) -> String {
        let name = |w: Which| match w {
            Which::A => (a, b),
            Which::B => (b, a),
        };
        let (kind, path) = (&self.kind, &self.path);
        let list = |v: &[String]| match v.len() {
            0 => "nothing else".to_string(),
            _ => v.join(", "),
        };
        match &self.difference {
            Difference::Kind { only } => {
                let (this, other) = name(*only);
                format!("{this} printed `{kind}` frames, {other} printed none")
            }
            Difference::Presence { only, example } => {
                let (this, other) = name(*only);
                match example {
                    Some(v) => {
                        format!("{this} printed `{path}: {v}` in {kind}, {other} printed nothing")
                    }
                    None => format!("{this} printed `{path}` in {kind}, {other} printed nothing"),
                }
            }
            Difference::Type { a: ta, b: tb } => format!(
                "`{path}` in {kind} is {} in {a}, {} in {b}",
                ta.join("|"),
                tb.join("|")
            ),
            Difference::Value { a: va, b: vb } => format!(
                "`{path}` in {kind}: {a} printed {}, {b} printed {}",
                list(va),
                list(vb)
            ),
        }
    }
}

/// Every key path that differs between two runs' frames, frame kind by frame kind. Under
/// a key one side lacks, or whose type differs, nothing more is listed; a kind one side
/// did not print is one row.
pub fn differences(a: &[Value], b: &[Value]) -> Vec<FieldDifference> {
    let (pa, pb) = (printed(a), printed(b));
    let mut out = Vec::new();
    let kinds: BTreeSet<&String> = pa.keys().chain(pb.keys()).collect();
    for kind in kinds {
        let (ka, kb) = match (pa.get(kind), pb.get(kind)) {
            (Some(ka), Some(kb)) => (ka, kb),
            (Some(_), None) | (None, Some(_)) => {
                let only = if pa.contains_key(kind) {
                    Which::A
                } else {
                    Which::B
                };
                out.push(FieldDifference {
                    kind: kind.clone(),
                    path: String::new(),
                    difference: Difference::Kind { only },
                });
                continue;
            }
            (None, None) => continue,
        };
        let paths: BTreeSet<&String> = ka.keys().chain(kb.keys()).collect();
        let mut cut: Vec<&str> = Vec::new();
        for path in paths.into_iter().filter(|p| !p.is_empty()) {
            if cut.iter().any(|c| within(path, c)) {
                continue;
            }
            let difference = match (ka.get(path), kb.get(path)) {
                (Some(x), None) | (None, Some(x)) => {
                    cut.push(path);
                    Difference::Presence {
                        only: if ka.contains_key(path) {
                            Which::A
                        } else {
                            Which::B
                        },
                        example: x.values.iter().next().cloned(),
                    }
                }
                (Some(x), Some(y)) if x.types != y.types => {
                    cut.push(path);
                    let names = |p: &Path| p.types.iter().map(|t| t.to_string()).collect();
                    Difference::Type {
                        a: names(x),
                        b: names(y),
                    }
                }
                (Some(x), Some(y)) if x.values != y.values => {
                    let only =
                        |p: &Path, q: &Path| p.values.difference(&q.values).cloned().collect();
                    Difference::Value {
                        a: only(x, y),
                        b: only(y, x),
                    }
                }
                _ => continue,
            };
            out.push(FieldDifference {
                kind: kind.clone(),
                path: path.clone(),
                difference,
            });
        }
    }
    out
}

/// One row of the table across scenarios: a key path of a kind, how it differs, and
/// the scenarios it differs in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathRow {
    pub kind: String,
    pub path: String,
    /// [`Difference::class`] with the side named: `only <name>`, `type`, `value`.
    pub differs: String,
    /// One scenario's difference, as a sentence.
    pub example: String,
    pub scenarios: Vec<String>,
}

/// The table across scenarios: one row per kind, key path and class of difference, the
/// most scenarios first.
pub fn by_path<'a>(
    scenarios: impl IntoIterator<Item = (&'a str, &'a [FieldDifference])>,
    a: &str,
    b: &str,
) -> Vec<PathRow> {
    let mut rows: BTreeMap<(String, String, &'static str), PathRow> = BTreeMap::new();
    for (scenario, diffs) in scenarios {
        for d in diffs {
            let class = d.difference.class();
            let row = rows
                .entry((d.kind.clone(), d.path.clone(), class))
                .or_insert_with(|| PathRow {
                    kind: d.kind.clone(),
                    path: d.path.clone(),
                    differs: class
                        .replace(" A", &format!(" {a}"))
                        .replace(" B", &format!(" {b}")),
                    example: d.sentence(a, b),
                    scenarios: Vec::new(),
                });
            if row.scenarios.last().map(String::as_str) != Some(scenario) {
                row.scenarios.push(scenario.to_string());
            }
        }
    }
    let mut rows: Vec<PathRow> = rows.into_values().collect();
    rows.sort_by(|x, y| {
        (y.scenarios.len().cmp(&x.scenarios.len()))
            .then_with(|| (&x.kind, &x.path, &x.differs).cmp(&(&y.kind, &y.path, &y.differs)))
    });
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn one(a: Value, b: Value) -> Vec<FieldDifference> {
        differences(&[a], &[b])
    }

    #[test]
    fn a_key_one_side_lacks_is_named_with_its_value_and_nothing_under_it() {
        let d = one(
            json!({"type": "system", "subtype": "init", "permissionMode": "default", "mcp": {"x": 1}}),
            json!({"type": "system", "subtype": "init"}),
        );
        let lines: Vec<String> = d
            .iter()
            .map(|d| d.sentence("Claude Code", "mycli"))
            .collect();
        assert_eq!(
            lines,
            [
                "Claude Code printed `mcp` in system/init, mycli printed nothing",
                "Claude Code printed `permissionMode: \"default\"` in system/init, mycli printed nothing",
            ]
        );
    }

    #[test]
    fn types_and_values_differ_and_volatile_values_do_not() {
        let d = one(
            json!({"type": "result", "num_turns": 1, "is_error": false, "duration_ms": 12, "session_id": "a", "uuid": "0f8fad5b-d9cb-469f-a165-70867728950e"}),
            json!({"type": "result", "num_turns": "1", "is_error": true, "duration_ms": 99, "session_id": "b", "uuid": "7c9e6679-7425-40de-944b-e07fc1f90ae7"}),
        );
        assert_eq!(d.len(), 2, "{d:?}");
        assert_eq!(
            d[0].difference,
            Difference::Value {
                a: vec!["false".into()],
                b: vec!["true".into()]
            }
        );
        assert_eq!(d[0].path, "is_error");
        assert_eq!(
            d[1].difference,
            Difference::Type {
                a: vec!["number".into()],
                b: vec!["string".into()]
            }
        );
    }

    #[test]
    fn a_kind_one_side_lacks_is_one_row() {
        let d = differences(
            &[
                json!({"type": "result", "x": 1}),
                json!({"type": "assistant", "message": {"id": "m"}}),
            ],
            &[json!({"type": "result", "x": 1})],
        );
        assert_eq!(
            d,
            [FieldDifference {
                kind: "assistant".into(),
                path: String::new(),
                difference: Difference::Kind { only: Which::A }
            }]
        );
        assert!(differences(
            &[json!({"type": "result", "x": 1})],
            &[json!({"type": "result", "x": 1})]
        )
        .is_empty());
    }

    #[test]
    fn the_table_counts_scenarios_per_path_most_first() {
        let presence = one(
            json!({"type": "r", "k": 1, "z": 2}),
            json!({"type": "r", "z": 2}),
        );
        let value = one(json!({"type": "r", "z": 1}), json!({"type": "r", "z": 2}));
        let rows = by_path(
            [
                ("s1", &presence[..]),
                ("s2", &presence[..]),
                ("s3", &value[..]),
            ],
            "cc",
            "me",
        );
        assert_eq!(rows.len(), 2);
        assert_eq!(
            (rows[0].path.as_str(), rows[0].differs.as_str()),
            ("k", "only cc")
        );
        assert_eq!(rows[0].scenarios, ["s1", "s2"]);
        assert_eq!((rows[1].path.as_str(), rows[1].scenarios.len()), ("z", 1));
    }
}
