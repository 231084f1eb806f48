//! Turning what a CLI printed into frame patterns that match this run and any run that
//! differs only in volatile values (which values are volatile: `normalize`).

use super::error::RecordError;
use crate::normalize::{
    is_volatile_key, looks_like_timestamp, redact_str, sandbox_token, uuid_spans,
};
use crate::pattern::{
    escape_literal, is_operator, is_uuid, type_placeholder, Captures, Pattern, Vars, UUID_REGEX,
};
use serde_json::{json, Value};
use std::ops::Range;

/// What is volatile in one trial's output.
#[derive(Debug, Clone)]
pub struct Volatile<'a> {
    /// The trial's sandbox paths: written back as `$WORKSPACE` / `$HOME`.
    pub vars: &'a Vars,
    /// The CLI's version: `claude_code_version` and strings equal to it become `$string`.
    pub version: Option<&'a str>,
    /// The capture name for the first session id (`session` unless the scenario uses another).
    pub session_capture: &'a str,
}

/// Turns the frames a CLI printed into frame patterns that match this run and any run
/// that differs only in volatile values:
/// - `session_id`: `{$capture: session}` the first time a value is seen, `{$ref: session}` after
///   (a second session gets `session_2`, ...);
/// - any other uuid: `$uuid` (a uuid inside a longer string: a `$regex`);
/// - durations, costs, times ([`is_volatile_key`]): `$number` / `$string`; ISO timestamps
///   anywhere: `$string`;
/// - the CLI version: `$string`;
/// - the sandbox's workspace and home inside strings: `$WORKSPACE` / `$HOME`; a string still
///   naming the sandbox after that (its temp dir, a path mangled into a name): `$string`;
/// - literal strings and keys starting with `$` are escaped as `$$`.
///
/// Everything else (texts, ids the stub generated, tool lists, models, tokens) stays exact.
pub fn generalise(frames: &[Value], v: &Volatile) -> Vec<Value> {
    let mut g = Generaliser {
        v,
        token: sandbox_token(v.vars),
        sessions: Vec::new(),
    };
    frames.iter().map(|f| g.value(f, None)).collect()
}

struct Generaliser<'a, 'b> {
    v: &'b Volatile<'a>,
    token: Option<String>,
    sessions: Vec<String>,
}

impl Generaliser<'_, '_> {
    fn value(&mut self, val: &Value, key: Option<&str>) -> Value {
        match val {
            Value::Object(m) => Value::Object(
                m.iter()
                    .map(|(k, x)| (escape_literal(k), self.value(x, Some(k))))
                    .collect(),
            ),
            Value::Array(a) => Value::Array(a.iter().map(|x| self.value(x, key)).collect()),
            Value::Number(_) if key.is_some_and(is_volatile_key) => "$number".into(),
            Value::String(s) => self.string(s, key),
            other => other.clone(),
        }
    }

    fn string(&mut self, s: &str, key: Option<&str>) -> Value {
        if key == Some("session_id") && !s.is_empty() {
            return self.session(s);
        }
        if key.is_some_and(is_volatile_key) || self.is_version(s, key) || looks_like_timestamp(s) {
            return "$string".into();
        }
        if is_uuid(s) {
            return "$uuid".into();
        }
        let redacted = redact_str(s, self.v.vars);
        if self.token.as_deref().is_some_and(|t| redacted.contains(t)) {
            return "$string".into();
        }
        let uuids = uuid_spans(s);
        if redacted != s {
            return self.template(s, redacted, !uuids.is_empty());
        }
        if !uuids.is_empty()
            || ((s.contains("$WORKSPACE") || s.contains("$HOME")) && !s.starts_with('$'))
        {
            return json!({ "$regex": literal_regex(s, &uuids) });
        }
        escape_literal(s).into()
    }

    /// `{$capture: session}` for a session id seen first, `{$ref: session}` after.
    fn session(&mut self, s: &str) -> Value {
        let base = self.v.session_capture;
        let name = |i: usize| {
            if i == 0 {
                base.to_string()
            } else {
                format!("{base}_{}", i + 1)
            }
        };
        if let Some(i) = self.sessions.iter().position(|x| x == s) {
            return json!({ "$ref": name(i) });
        }
        self.sessions.push(s.to_string());
        json!({ "$capture": name(self.sessions.len() - 1) })
    }

    fn is_version(&self, s: &str, key: Option<&str>) -> bool {
        key == Some("claude_code_version")
            || self
                .v
                .version
                .is_some_and(|ver| !ver.is_empty() && ver != "unknown" && s == ver)
    }

    /// A string naming the sandbox, as a template: `$WORKSPACE` / `$HOME` are substituted
    /// when matching. It cannot also hold a literal `$WORKSPACE` or a uuid, nor start like
    /// a placeholder: then `$string`.
    fn template(&self, s: &str, redacted: String, embeds_uuid: bool) -> Value {
        let template_ok = !s.contains("$WORKSPACE")
            && !s.contains("$HOME")
            && !embeds_uuid
            && Pattern::compile(&Value::String(redacted.clone()))
                .is_ok_and(|p| p.is_match(&Value::String(s.into()), self.v.vars, &Captures::new()));
        if template_ok {
            redacted.into()
        } else {
            "$string".into()
        }
    }
}

/// A regex for `s` as it is, with any uuid at `uuids` instead of the one it holds.
fn literal_regex(s: &str, uuids: &[Range<usize>]) -> String {
    let mut re = String::from("^");
    let mut last = 0;
    for span in uuids {
        re.push_str(&regex::escape(&s[last..span.start]));
        re.push_str(UUID_REGEX);
        last = span.end;
    }
    re.push_str(&regex::escape(&s[last..]));
    re.push('$');
    re
}

/// Merges the patterns recorded from two runs of the same scenario: leaves that differ
/// become `$string` / `$number` / `$bool` (or `$any`), keys missing from one run are left
/// out. Fails when the runs printed a different number of frames.
pub fn merge_runs(first: &[Value], other: &[Value]) -> Result<Vec<Value>, RecordError> {
    if first.len() != other.len() {
        return Err(RecordError::FrameCounts {
            first: first.len(),
            other: other.len(),
        });
    }
    Ok(first
        .iter()
        .zip(other)
        .map(|(a, b)| merge_value(a, b))
        .collect())
}

fn merge_value(a: &Value, b: &Value) -> Value {
    if a == b {
        return a.clone();
    }
    match (a, b) {
        (Value::Object(x), Value::Object(y)) if !is_operator(a) && !is_operator(b) => {
            Value::Object(
                x.iter()
                    .filter_map(|(k, va)| y.get(k).map(|vb| (k.clone(), merge_value(va, vb))))
                    .collect(),
            )
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => Value::Array(
            x.iter()
                .zip(y)
                .map(|(va, vb)| merge_value(va, vb))
                .collect(),
        ),
        _ => match (type_placeholder(a), type_placeholder(b)) {
            (Some(ta), Some(tb)) if ta == tb => ta.into(),
            _ => "$any".into(),
        },
    }
}

/// True when the current pattern `current` says what the recording `new` says, or the
/// same with a placeholder where `new` has a value of that type (a value `record --runs 2`
/// generalised earlier): then the recording brings nothing new.
pub fn covers(current: &Value, new: &Value) -> bool {
    if current == new {
        return true;
    }
    match (current, new) {
        (Value::Object(c), Value::Object(n)) if !is_operator(current) && !is_operator(new) => {
            c.len() == n.len()
                && c.iter()
                    .all(|(k, cv)| n.get(k).is_some_and(|nv| covers(cv, nv)))
        }
        (Value::Array(c), Value::Array(n)) => {
            c.len() == n.len() && c.iter().zip(n).all(|(cv, nv)| covers(cv, nv))
        }
        (Value::String(p), _) if p == "$any" => true,
        (Value::String(p), _) if matches!(p.as_str(), "$string" | "$number" | "$bool") => {
            type_placeholder(current) == type_placeholder(new)
        }
        _ => false,
    }
}

/// The name the scenario's current expectation captures the session id under, if any.
pub fn session_capture_name(expected: &[Value]) -> Option<String> {
    fn walk(v: &Value) -> Option<String> {
        match v {
            Value::Object(m) => {
                if let Some(name) = m
                    .get("session_id")
                    .and_then(|s| s.get("$capture"))
                    .and_then(Value::as_str)
                {
                    return Some(name.to_string());
                }
                m.values().find_map(walk)
            }
            Value::Array(a) => a.iter().find_map(walk),
            _ => None,
        }
    }
    expected.iter().find_map(walk)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::normalize::tests::vars;

    fn gen(frames: Value) -> Vec<Value> {
        let v = vars();
        generalise(
            frames.as_array().unwrap(),
            &Volatile {
                vars: &v,
                version: Some("2.1.197"),
                session_capture: "session",
            },
        )
    }

    #[test]
    fn volatile_values_are_generalised_and_the_rest_kept() {
        let frames = json!([
            {"type": "system", "subtype": "init", "cwd": "/tmp/streamcheck-AbC123/work",
             "session_id": "e2529446-7ae7-45d8-b4bd-57484ba1a59b", "claude_code_version": "2.1.197",
             "uuid": "dda7b70a-1f53-402d-a4a7-3fc5fb8e57fb", "tools": ["Bash"],
             "memory_paths": {"auto": "/tmp/streamcheck-AbC123/home/.claude/projects/-tmp-streamcheck-AbC123-work/memory/"},
             "transcript": "/tmp/streamcheck-AbC123/home/.claude/x"},
            {"type": "user", "timestamp": "2026-11-21T23:46:45.847Z", "session_id": "e2529446-7ae7-45d8-b4bd-57484ba1a59b",
             "message": {"id": "msg_0", "content": [{"type": "text", "text": "$5 costs $HOME"}]},
             "note": "agent 0f0e4c1a-1f53-402d-a4a7-3fc5fb8e57fb done", "$weird": "$any"},
            {"type": "result", "duration_ms": 1850, "total_cost_usd": 0.0004, "num_turns": 2,
             "modelUsage": {"m": {"costUSD": 0.1, "inputTokens": 10}}, "session_id": "other"}
        ]);
        let g = gen(frames);
        assert_eq!(g[0]["cwd"], "$WORKSPACE");
        assert_eq!(g[0]["session_id"], json!({"$capture": "session"}));
        assert_eq!(g[0]["claude_code_version"], "$string");
        assert_eq!(g[0]["uuid"], "$uuid");
        assert_eq!(g[0]["tools"], json!(["Bash"]));
        assert_eq!(g[0]["memory_paths"]["auto"], "$string");
        assert_eq!(g[0]["transcript"], "$HOME/.claude/x");
        assert_eq!(g[1]["timestamp"], "$string");
        assert_eq!(g[1]["session_id"], json!({"$ref": "session"}));
        assert_eq!(g[1]["message"]["id"], "msg_0");
        assert_eq!(g[1]["message"]["content"][0]["text"], "$$5 costs $HOME");
        assert_eq!(
            g[1]["note"],
            json!({"$regex": format!("^agent {UUID_REGEX} done$")})
        );
        assert_eq!(g[1]["$$weird"], "$$any");
        assert_eq!(g[2]["duration_ms"], "$number");
        assert_eq!(g[2]["total_cost_usd"], "$number");
        assert_eq!(g[2]["num_turns"], 2);
        assert_eq!(g[2]["modelUsage"]["m"]["costUSD"], "$number");
        assert_eq!(g[2]["modelUsage"]["m"]["inputTokens"], 10);
        assert_eq!(g[2]["session_id"], json!({"$capture": "session_2"}));
    }

    #[test]
    fn generalised_frames_match_the_original() {
        let frames = json!([
            {"type": "system", "cwd": "/tmp/streamcheck-AbC123/work/sub", "session_id": "s1", "t": "a \"quoted\"\n line"},
            {"type": "assistant", "text": "literal $WORKSPACE text", "p": "$HOME", "session_id": "s1"}
        ]);
        let g = gen(frames.clone());
        let v = vars();
        let mut caps = Captures::new();
        for (p, f) in g.iter().zip(frames.as_array().unwrap()) {
            Pattern::compile(p)
                .unwrap()
                .check(f, &v, &mut caps)
                .unwrap_or_else(|e| panic!("{p} vs {f}: {e}"));
        }
    }

    #[test]
    fn the_uuid_regex_in_patterns_accepts_what_uuid_accepts() {
        let re = regex::Regex::new(&format!("^{UUID_REGEX}$")).unwrap();
        for s in [
            "dda7b70a-1f53-402d-a4a7-3fc5fb8e57fb",
            "DDA7B70A-1F53-402D-A4A7-3FC5FB8E57FB",
            "dda7b70a-1f53-402d-a4a7-3fc5fb8e57f",
            "dda7b70a_1f53-402d-a4a7-3fc5fb8e57fb",
            "gda7b70a-1f53-402d-a4a7-3fc5fb8e57fb",
        ] {
            assert_eq!(re.is_match(s), is_uuid(s), "{s}");
        }
    }

    #[test]
    fn runs_merge_into_placeholders() {
        let a =
            vec![json!({"type": "x", "n": 1, "s": "a", "only_a": true, "b": true, "same": "z"})];
        let b = vec![json!({"type": "x", "n": 2, "s": "b", "b": false, "same": "z"})];
        let m = merge_runs(&a, &b).unwrap();
        assert_eq!(
            m[0],
            json!({"type": "x", "n": "$number", "s": "$string", "b": "$bool", "same": "z"})
        );
        assert!(merge_runs(&a, &[]).is_err());
    }

    #[test]
    fn an_earlier_recording_covers_a_new_one_with_values_where_it_has_placeholders() {
        let current = json!({"type": "x", "id": "$string", "n": "$number", "k": [1, "$any"]});
        assert!(covers(
            &current,
            &json!({"type": "x", "id": "ab12", "n": 3, "k": [1, {"a": 1}]})
        ));
        assert!(!covers(
            &current,
            &json!({"type": "x", "id": 5, "n": 3, "k": [1, 2]})
        ));
        assert!(!covers(
            &current,
            &json!({"type": "x", "id": "a", "n": 3, "k": [1, 2], "new": 1})
        ));
        assert!(!covers(&json!({"type": "x"}), &json!({"type": "y"})));
    }
}
