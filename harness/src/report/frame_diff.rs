//! The expected-vs-actual frame diff shown in trial reports and on the terminal.

use crate::frame::PatternKind;
use crate::normalize::{hidden, hides, write_json, write_redacted};
use crate::pattern::{is_pattern_text, Captures, Pattern, Vars};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::HashMap;
use std::time::Duration;

/// A unified diff of the expected patterns against the actual frames. Each actual
/// frame is cut to the keys of the pattern at the same position, and parts that
/// a placeholder accepts are shown as the placeholder, so only real differences remain.
pub fn frame_diff(expected: &[Value], actual: &[Value], vars: &Vars) -> String {
    let flat = flatten(expected);
    let aligner = Aligner::new(&flat);
    let mut operators = OperatorCache::default();
    let mut left = Vec::new();
    for p in &flat {
        write_json(&mut left, p);
        left.push(b'\n');
    }
    // Each frame is written straight into the text, cut and redacted on the way: building
    // the cut value, then the redacted one, then their text cost most of the time at 100k
    // frames (mostly allocating and freeing).
    let mut right = Vec::new();
    for (i, a) in actual.iter().enumerate() {
        match aligner.pattern_for(i, a) {
            Some(p) => write_cut(&mut right, a, p, vars, &mut operators),
            None => write_headline(&mut right, a),
        }
        right.push(b'\n');
    }
    let (left, right) = (utf8(left), utf8(right));
    // The lines are cut here (a byte search) rather than by `diff_lines`, which walks the
    // text char by char: at 100k frames that was a quarter of the differ's instructions.
    let left: Vec<&str> = left.split_inclusive('\n').collect();
    let right: Vec<&str> = right.split_inclusive('\n').collect();
    // Myers is quadratic when the sides differ a lot (100k frames); past the deadline it
    // falls back to a coarser but still correct diff.
    similar::TextDiff::configure()
        .algorithm(similar::Algorithm::Patience)
        .timeout(Duration::from_millis(500))
        .newline_terminated(true)
        .diff_slices(&left, &right)
        .unified_diff()
        .context_radius(3)
        .header("expected", "actual")
        .to_string()
}

/// The expected patterns in order, `any_order` groups opened up.
fn flatten(expected: &[Value]) -> Vec<&Value> {
    expected
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
        .collect()
}

/// For each actual frame, the expected pattern the diff shows it against (if any).
pub(crate) fn aligned(expected: &[Value], actual: &[&Value]) -> Vec<Option<Value>> {
    let flat = flatten(expected);
    let aligner = Aligner::new(&flat);
    actual
        .iter()
        .enumerate()
        .map(|(i, a)| aligner.pattern_for(i, a).cloned())
        .collect()
}

/// The pattern to show each frame against: the one at the same position if it is about
/// the frame's kind (`frame::PatternKind`), else the first pattern about that kind.
struct Aligner<'a> {
    flat: &'a [&'a Value],
    kinds: Vec<PatternKind>,
}

impl<'a> Aligner<'a> {
    fn new(flat: &'a [&'a Value]) -> Self {
        let kinds = flat.iter().map(|p| PatternKind::of(p)).collect();
        Aligner { flat, kinds }
    }

    fn pattern_for(&self, i: usize, frame: &Value) -> Option<&'a Value> {
        if self.kinds.get(i).is_some_and(|k| k.admits_frame(frame)) {
            return self.flat.get(i).copied();
        }
        let first = self.kinds.iter().position(|k| k.admits_frame(frame))?;
        Some(self.flat[first])
    }
}

/// Text serde_json wrote (always UTF-8: checked, never assumed).
fn utf8(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// The frame's type and subtype only (no pattern is about its kind).
fn write_headline(out: &mut Vec<u8>, v: &Value) {
    out.push(b'{');
    let keys = ["type", "subtype"].into_iter();
    let present = keys.filter_map(|k| Some((k, v.get(k)?)));
    for (i, (k, x)) in present.enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_json(out, k);
        out.push(b':');
        write_json(out, x);
    }
    out.push(b'}');
}

/// Operator patterns compiled once per diff: the same few patterns are shown against
/// every frame, and compiling them per frame was most of the differ's time. Keyed by what
/// the pattern says, not where it sits: an expectation of 100k delta frames repeats one
/// pattern 100k times. A placeholder (`$string`) is its own key; an operator object is
/// keyed by its JSON text (which starts with `{`, so the two never meet).
#[derive(Default)]
struct OperatorCache(HashMap<String, Option<Pattern>>);

impl OperatorCache {
    fn accepts(&mut self, pattern: &Value, actual: &Value, vars: &Vars) -> bool {
        let key = match pattern {
            Value::String(s) => Cow::Borrowed(s.as_str()),
            other => Cow::Owned(other.to_string()),
        };
        let compiled = match self.0.get(key.as_ref()) {
            Some(compiled) => compiled,
            None => self
                .0
                .entry(key.into_owned())
                .or_insert_with(|| Pattern::compile(pattern).ok()),
        };
        compiled
            .as_ref()
            .is_some_and(|p| p.is_match(actual, vars, &Captures::new()))
    }
}

/// What `actual` cut to the keys of `pattern` is: a whole value (the pattern where an
/// operator accepts what is there, or the frame's own value), or an object or array built
/// from the parts `pattern` names.
enum Cut<'a> {
    Whole(&'a Value),
    Object(&'a Map<String, Value>, &'a Map<String, Value>),
    Array(&'a [Value], &'a [Value]),
}

impl<'a> Cut<'a> {
    fn of(actual: &'a Value, pattern: &'a Value, vars: &Vars, ops: &mut OperatorCache) -> Self {
        let placeholder = pattern
            .as_str()
            .is_some_and(|s| s.starts_with('$') && !s.starts_with("$$"));
        if placeholder || crate::pattern::is_operator(pattern) {
            let capture_like = pattern
                .as_object()
                .is_some_and(|m| m.contains_key("$capture") || m.contains_key("$ref"));
            let shown = capture_like || ops.accepts(pattern, actual, vars);
            return Cut::Whole(if shown { pattern } else { actual });
        }
        match (actual, pattern) {
            (Value::Object(a), Value::Object(p)) => Cut::Object(a, p),
            (Value::Array(a), Value::Array(p)) => Cut::Array(a, p),
            _ => Cut::Whole(actual),
        }
    }

    /// Whether the report hides this value under a volatile key (see [`hides`]).
    fn hidden_under(&self, key: &str) -> bool {
        let (null, pattern_text) = match self {
            Cut::Whole(v) => (v.is_null(), is_pattern_text(v)),
            Cut::Object(a, p) => (
                false,
                p.keys().any(|k| k.starts_with('$') && a.contains_key(k)),
            ),
            Cut::Array(..) => (false, false),
        };
        hides(key, null, pattern_text)
    }
}

/// `actual` cut to the keys `pattern` names, redacted, written as JSON; where an operator
/// accepts what is there, the operator is shown instead, so only real differences remain.
fn write_cut(
    out: &mut Vec<u8>,
    actual: &Value,
    pattern: &Value,
    vars: &Vars,
    ops: &mut OperatorCache,
) {
    write_cut_of(out, Cut::of(actual, pattern, vars, ops), vars, ops)
}

fn write_cut_of(out: &mut Vec<u8>, cut: Cut, vars: &Vars, ops: &mut OperatorCache) {
    match cut {
        Cut::Whole(v) => write_redacted(out, v, vars),
        Cut::Object(a, p) => {
            out.push(b'{');
            let named = p.iter().filter_map(|(k, sub)| Some((k, a.get(k)?, sub)));
            for (i, (k, x, sub)) in named.enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_json(out, k);
                out.push(b':');
                let cut = Cut::of(x, sub, vars, ops);
                if cut.hidden_under(k) {
                    write_json(out, &hidden(k));
                } else {
                    write_cut_of(out, cut, vars, ops);
                }
            }
            out.push(b'}');
        }
        Cut::Array(a, p) => {
            out.push(b'[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                match p.get(i) {
                    Some(sub) => write_cut(out, x, sub, vars, ops),
                    None => write_redacted(out, x, vars),
                }
            }
            out.push(b']');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::normalize::redact;
    use serde_json::json;

    /// The projection as it was first written (build the cut value, then redact it): the
    /// streamed one must print exactly this.
    fn cut_then_redact(actual: &Value, pattern: &Value, vars: &Vars) -> String {
        fn cut(actual: &Value, pattern: &Value, vars: &Vars, ops: &mut OperatorCache) -> Value {
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
                            a.get(k).map(|x| (k.clone(), cut(x, sub, vars, ops)))
                        })
                        .collect(),
                ),
                (Value::Array(a), Value::Array(p)) => Value::Array(
                    a.iter()
                        .enumerate()
                        .map(|(i, x)| match p.get(i) {
                            Some(sub) => cut(x, sub, vars, ops),
                            None => x.clone(),
                        })
                        .collect(),
                ),
                _ => actual.clone(),
            }
        }
        redact(
            &cut(actual, pattern, vars, &mut OperatorCache::default()),
            vars,
        )
        .to_string()
    }

    #[test]
    fn the_streamed_projection_prints_what_cut_then_redact_builds() {
        let vars = crate::normalize::tests::vars();
        let cases = [
            (
                json!({"type": "result", "session_id": "s1", "duration_ms": 12, "usage": {"input_tokens": 3}, "result": "hi"}),
                json!({"type": "result", "session_id": {"$ref": "sid"}, "duration_ms": "$number", "usage": {"input_tokens": 4}, "result": {"$regex": "^h"}}),
            ),
            (
                json!({"type": "x", "uuid": "u", "cwd": "/tmp/streamcheck-AbC123/work", "content": [{"a": 1}, {"a": 2}, "extra"], "timestamp": null}),
                json!({"type": "x", "uuid": "u2", "cwd": "$WORKSPACE", "content": [{"a": "$string"}, {"a": {"$one_of": [2, 3]}}], "timestamp": null}),
            ),
            (
                json!({"type": "y", "duration_api_ms": {"nested": true}, "created_at": [1, 2], "tags": ["$x"]}),
                json!({"type": "y", "duration_api_ms": {"nested": "$bool"}, "created_at": [1], "tags": "$any"}),
            ),
            (json!([1, 2, 3]), json!({"not": "an array"})),
            (json!("a\"quote"), json!("$$literal")),
        ];
        for (actual, pattern) in cases {
            let mut out = Vec::new();
            write_cut(
                &mut out,
                &actual,
                &pattern,
                &vars,
                &mut OperatorCache::default(),
            );
            assert_eq!(
                String::from_utf8(out).unwrap(),
                cut_then_redact(&actual, &pattern, &vars),
                "{actual} against {pattern}"
            );
        }
    }

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
