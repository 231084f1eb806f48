//! The expected-vs-actual frame diff shown in trial reports and on the terminal.

use crate::normalize::redact;
use crate::pattern::{Captures, Pattern, Vars};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::time::Duration;

/// A unified diff of the expected patterns against the actual frames. Each actual
/// frame is cut to the keys of the pattern at the same position, and parts that
/// a placeholder accepts are shown as the placeholder, so only real differences remain.
pub fn frame_diff(expected: &[Value], actual: &[Value], vars: &Vars) -> String {
    let flat: Vec<&Value> = expected
        .iter()
        .flat_map(|e| match e.get("any_order").and_then(Value::as_array) {
            Some(runs) if e.as_object().is_some_and(|m| m.len() == 1) => runs
                .iter()
                .flat_map(|r| match r {
                    Value::Array(seq) => seq.iter().collect::<Vec<_>>(),
                    single => vec![single],
                })
                .collect(),
            _ => vec![e],
        })
        .collect();
    let aligner = Aligner::new(&flat);
    let mut operators = OperatorCache::default();
    let left: String = flat.iter().map(|p| format!("{}\n", p)).collect();
    let right: String = actual
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let shown = match aligner.pattern_for(i, a) {
                Some(p) => redact(&cut_to_pattern(a, p, vars, &mut operators), vars),
                None => headline(a),
            };
            format!("{shown}\n")
        })
        .collect();
    // Myers is quadratic when the sides differ a lot (100k frames); past the deadline it
    // falls back to a coarser but still correct diff.
    similar::TextDiff::configure()
        .algorithm(similar::Algorithm::Patience)
        .timeout(Duration::from_millis(500))
        .diff_lines(&left, &right)
        .unified_diff()
        .context_radius(3)
        .header("expected", "actual")
        .to_string()
}

/// The pattern to show each frame against: the one at the same position if it is about
/// the same kind of frame (type, subtype), else the first pattern about that kind.
struct Aligner<'a> {
    flat: &'a [&'a Value],
    /// First pattern per (type, subtype or "" when the pattern names none).
    first: HashMap<(String, String), &'a Value>,
}

impl<'a> Aligner<'a> {
    fn new(flat: &'a [&'a Value]) -> Self {
        let mut first = HashMap::new();
        for p in flat {
            if let Some(ty) = p.get("type").and_then(Value::as_str) {
                let sub = p.get("subtype").and_then(Value::as_str).unwrap_or("");
                first.entry((ty.to_string(), sub.to_string())).or_insert(*p);
            }
        }
        Aligner { flat, first }
    }

    fn pattern_for(&self, i: usize, frame: &Value) -> Option<&'a Value> {
        let same_kind = |p: &Value| {
            p.get("type").is_some()
                && ["type", "subtype"].iter().all(|k| {
                    p.get(k)
                        .is_none_or(|want| !want.is_string() || frame.get(k) == Some(want))
                })
        };
        if let Some(p) = self.flat.get(i).filter(|p| same_kind(p)) {
            return Some(p);
        }
        let ty = frame.get("type").and_then(Value::as_str)?.to_string();
        let sub = frame
            .get("subtype")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        self.first
            .get(&(ty.clone(), sub))
            .or_else(|| self.first.get(&(ty, String::new())))
            .copied()
    }
}

fn headline(v: &Value) -> Value {
    let mut m = Map::new();
    for k in ["type", "subtype"] {
        if let Some(x) = v.get(k) {
            m.insert(k.into(), x.clone());
        }
    }
    Value::Object(m)
}

/// Operator patterns compiled once per diff: the same few patterns are shown against
/// every frame, and compiling them per frame was most of the differ's time.
#[derive(Default)]
struct OperatorCache(HashMap<*const Value, Option<Pattern>>);

impl OperatorCache {
    fn accepts(&mut self, pattern: &Value, actual: &Value, vars: &Vars) -> bool {
        let compiled = self
            .0
            .entry(pattern as *const Value)
            .or_insert_with(|| Pattern::compile(pattern).ok());
        compiled
            .as_ref()
            .is_some_and(|p| p.is_match(actual, vars, &Captures::new()))
    }
}

/// `actual` cut to the keys `pattern` names; where an operator accepts what is there,
/// the operator is shown instead, so only real differences remain.
fn cut_to_pattern(actual: &Value, pattern: &Value, vars: &Vars, ops: &mut OperatorCache) -> Value {
    let placeholder = pattern
        .as_str()
        .is_some_and(|s| s.starts_with('$') && !s.starts_with("$$"));
    if placeholder || crate::pattern::is_operator(pattern) {
        let capture_like = pattern
            .as_object()
            .is_some_and(|m| m.contains_key("$capture") || m.contains_key("$ref"));
        return if capture_like || ops.accepts(pattern, actual, vars) {
            pattern.clone()
        } else {
            actual.clone()
        };
    }
    match (actual, pattern) {
        (Value::Object(a), Value::Object(p)) => Value::Object(
            p.iter()
                .filter_map(|(k, sub)| {
                    a.get(k)
                        .map(|x| (k.clone(), cut_to_pattern(x, sub, vars, ops)))
                })
                .collect(),
        ),
        (Value::Array(a), Value::Array(p)) => Value::Array(
            a.iter()
                .enumerate()
                .map(|(i, x)| match p.get(i) {
                    Some(sub) => cut_to_pattern(x, sub, vars, ops),
                    None => x.clone(),
                })
                .collect(),
        ),
        _ => actual.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn diff_shows_only_real_differences() {
        let expected = vec![
            json!({"type": "system", "subtype": "init", "session_id": "$uuid"}),
            json!({"type": "result", "result": "Hello!"}),
        ];
        let actual = vec![
            json!({"type": "system", "subtype": "init", "session_id": "5595b838-7570-4bb3-8c62-876337d757b6", "tools": ["Bash"]}),
            json!({"type": "result", "result": "Hello?", "duration_ms": 3}),
        ];
        let d = frame_diff(&expected, &actual, &Vars::default());
        assert!(
            d.contains("-{\"type\":\"result\",\"result\":\"Hello!\"}"),
            "{d}"
        );
        assert!(
            d.contains("+{\"type\":\"result\",\"result\":\"Hello?\"}"),
            "{d}"
        );
        assert!(!d.contains("-{\"type\":\"system\""), "{d}");
        assert!(!d.contains("tools"), "{d}");
    }
}
