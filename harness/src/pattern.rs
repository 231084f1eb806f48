//! Partial JSON patterns: what a scenario says a frame or a request must look like.
//!
//! A pattern is written as plain JSON/YAML. Listed object keys must match, unlisted
//! keys are ignored; arrays match element by element and by length. Strings that are
//! placeholders (`$any`, `$uuid`, ...) and one-key objects whose key starts with `$`
//! (`{$regex: ...}`, `{$capture: sid}`, ...) are operators. `$$` escapes a leading `$`.

use regex::Regex;
use serde_json::Value;
use std::collections::HashMap;
use std::fmt;

mod error;
pub use error::PatternError;

/// Values that are only known once a trial runs, substituted into pattern strings.
#[derive(Debug, Clone, Default)]
pub struct Vars {
    pub workspace: String,
    pub home: String,
}

impl Vars {
    /// `s` with `$WORKSPACE` and `$HOME` replaced by their paths.
    pub fn substitute(&self, s: &str) -> String {
        s.replace("$WORKSPACE", &self.workspace)
            .replace("$HOME", &self.home)
    }
}

/// Values bound by `{$capture: name}`, shared by every pattern of one trial.
pub type Captures = HashMap<String, Value>;

/// A compiled pattern, keeping the source it was written as (shown in reports).
#[derive(Debug, Clone)]
pub struct Pattern {
    source: Value,
    node: Node,
}

#[derive(Debug, Clone)]
enum Node {
    Any,
    AnyString,
    AnyNumber,
    AnyBool,
    Uuid,
    Absent,
    Literal(Value),
    /// A string holding `$WORKSPACE` or `$HOME`, substituted at match time.
    Template(String),
    Object(Vec<(String, Node)>),
    Array(Vec<Node>),
    Contains(Vec<Node>),
    ContainsText(String),
    Regex(Box<Regex>),
    Capture(String),
    Ref(String),
    OneOf(Vec<Node>),
    Not(Box<Node>),
}

/// Why a value did not match, and where.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    /// JSON path of the first mismatch, e.g. `$.message.content[0].text`.
    pub path: String,
    /// What the pattern wanted there, as written.
    pub expected: Value,
    /// What was there (`None`: the key was missing).
    pub actual: Option<Value>,
    pub reason: String,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at {}: {}", self.path, self.reason)
    }
}

impl Pattern {
    /// Compiles a pattern; the error names the JSON path of what is wrong.
    pub fn compile(source: &Value) -> Result<Pattern, PatternError> {
        let node = compile_node(source, "$")?;
        Ok(Pattern {
            source: source.clone(),
            node,
        })
    }

    pub fn source(&self) -> &Value {
        &self.source
    }

    /// Matches `actual`, binding captures only when the whole pattern matches.
    pub fn check(
        &self,
        actual: &Value,
        vars: &Vars,
        caps: &mut Captures,
    ) -> Result<(), Box<Mismatch>> {
        let mut trial = caps.clone();
        let mut path = String::from("$");
        match_node(&self.node, Some(actual), vars, &mut trial, &mut path)?;
        *caps = trial;
        Ok(())
    }

    /// True when `actual` matches; never binds captures.
    pub fn is_match(&self, actual: &Value, vars: &Vars, caps: &Captures) -> bool {
        let mut trial = caps.clone();
        let mut path = String::from("$");
        match_node(&self.node, Some(actual), vars, &mut trial, &mut path).is_ok()
    }
}

/// How near `actual` comes to a pattern it fails: the leaves it meets and every leaf it
/// does not (not only the first), walking into objects and arrays of the pattern's length.
#[derive(Debug, Clone, PartialEq)]
pub struct Nearness {
    pub met: usize,
    pub differ: Vec<Mismatch>,
}

impl Pattern {
    /// [`Nearness`] of `actual`; captures bound on the way are kept only inside the walk,
    /// so a `$ref` after its `$capture` is checked as the match would.
    pub fn nearness(&self, actual: &Value, vars: &Vars, caps: &Captures) -> Nearness {
        let mut caps = caps.clone();
        let mut out = Nearness {
            met: 0,
            differ: Vec::new(),
        };
        let mut path = String::from("$");
        walk_leaves(
            &self.node,
            Some(actual),
            vars,
            &mut caps,
            &mut path,
            &mut out,
        );
        out
    }
}

impl Pattern {
    /// [`Pattern::nearness`], keeping in `caps` what the walk captured: a frame that fails
    /// on one field still gives the values its pattern captures elsewhere, so the frames
    /// after it are not judged against a capture that was never made.
    pub fn nearness_binding(&self, actual: &Value, vars: &Vars, caps: &mut Captures) -> Nearness {
        let mut out = Nearness {
            met: 0,
            differ: Vec::new(),
        };
        let mut path = String::from("$");
        walk_leaves(&self.node, Some(actual), vars, caps, &mut path, &mut out);
        out
    }
}

impl Mismatch {
    /// The capture a mismatch failed to make (`$capture: NAME` where the value is missing).
    pub fn failed_capture(&self) -> Option<&str> {
        let name = self.expected.get("$capture")?.as_str()?;
        self.actual.is_none().then_some(name)
    }

    /// The capture a `$ref` needed that was never made.
    pub fn needs_capture(&self) -> Option<&str> {
        let name = self.expected.get("$ref")?.as_str()?;
        let never = format!("`{name}` was never captured before this point");
        (self.reason == never).then_some(name)
    }
}

fn walk_leaves(
    node: &Node,
    actual: Option<&Value>,
    vars: &Vars,
    caps: &mut Captures,
    path: &mut String,
    out: &mut Nearness,
) {
    match (node, actual) {
        (Node::Object(fields), Some(Value::Object(map))) => {
            for (key, sub) in fields {
                let len = path.len();
                push_key(path, key);
                walk_leaves(sub, map.get(key), vars, caps, path, out);
                path.truncate(len);
            }
        }
        (Node::Array(items), Some(Value::Array(values))) if items.len() == values.len() => {
            for (i, (sub, v)) in items.iter().zip(values).enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                walk_leaves(sub, Some(v), vars, caps, path, out);
                path.truncate(len);
            }
        }
        _ => match match_node(node, actual, vars, caps, path) {
            Ok(()) => out.met += 1,
            Err(m) => out.differ.push(*m),
        },
    }
}

fn compile_node(v: &Value, path: &str) -> Result<Node, PatternError> {
    Ok(match v {
        Value::String(s) => compile_string(s, path)?,
        Value::Array(items) => Node::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, item)| compile_node(item, &format!("{path}[{i}]")))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(map) => {
            if let Some(op) = single_operator(map) {
                let arg = &map[op];
                let at = format!("{path}.{op}");
                return compile_operator(op, arg, &at);
            }
            let mut fields = Vec::with_capacity(map.len());
            for (k, val) in map {
                if k.starts_with('$') && !k.starts_with("$$") {
                    return Err(PatternError::KeyAmongFields {
                        path: path.to_string(),
                        key: k.clone(),
                    });
                }
                let key = k
                    .strip_prefix('$')
                    .filter(|r| r.starts_with('$'))
                    .unwrap_or(k);
                fields.push((
                    key.to_string(),
                    compile_node(val, &format!("{path}.{key}"))?,
                ));
            }
            Node::Object(fields)
        }
        other => Node::Literal(other.clone()),
    })
}

fn single_operator(map: &serde_json::Map<String, Value>) -> Option<&str> {
    if map.len() != 1 {
        return None;
    }
    let key = map.keys().next()?;
    (key.starts_with('$') && !key.starts_with("$$")).then_some(key.as_str())
}

/// True when `v` is an operator object: one key, starting with a single `$` (`{$regex: ..}`).
pub fn is_operator(v: &Value) -> bool {
    v.as_object().and_then(single_operator).is_some()
}

/// True when `v` is written in pattern syntax: a string starting with `$` (a placeholder,
/// a template, an escaped literal) or an object with a `$` key.
pub fn is_pattern_text(v: &Value) -> bool {
    match v {
        Value::String(s) => s.starts_with('$'),
        Value::Object(m) => m.keys().any(|k| k.starts_with('$')),
        _ => false,
    }
}

/// A literal string (or key) as a pattern: a leading `$` doubled.
pub fn escape_literal(s: &str) -> String {
    if s.starts_with('$') {
        format!("${s}")
    } else {
        s.to_string()
    }
}

/// The placeholder for the JSON type of a value, or of the values a leaf pattern stands
/// for (`$string` for `{$regex: ..}`, `{$capture: ..}` and `{$ref: ..}`): `$string`,
/// `$number` or `$bool`. `None` for `$any`, `$absent`, null, arrays and objects.
pub fn type_placeholder(v: &Value) -> Option<&'static str> {
    match v {
        Value::String(s) => match s.as_str() {
            "$number" => Some("$number"),
            "$bool" => Some("$bool"),
            "$any" | "$absent" => None,
            _ => Some("$string"),
        },
        Value::Number(_) => Some("$number"),
        Value::Bool(_) => Some("$bool"),
        Value::Object(m)
            if ["$regex", "$capture", "$ref"]
                .iter()
                .any(|k| m.contains_key(*k)) =>
        {
            Some("$string")
        }
        _ => None,
    }
}

fn compile_string(s: &str, path: &str) -> Result<Node, PatternError> {
    if let Some(rest) = s.strip_prefix("$$") {
        return Ok(Node::Literal(Value::String(format!("${rest}"))));
    }
    Ok(match s {
        "$any" => Node::Any,
        "$string" => Node::AnyString,
        "$number" => Node::AnyNumber,
        "$bool" => Node::AnyBool,
        "$uuid" => Node::Uuid,
        "$absent" => Node::Absent,
        _ if is_placeholder_like(s) => {
            return Err(PatternError::UnknownPlaceholder {
                path: path.to_string(),
                placeholder: s.to_string(),
            })
        }
        _ if s.contains("$WORKSPACE") || s.contains("$HOME") => Node::Template(s.to_string()),
        _ => Node::Literal(Value::String(s.to_string())),
    })
}

fn is_placeholder_like(s: &str) -> bool {
    s.len() > 1
        && s.starts_with('$')
        && s[1..].starts_with(|c: char| c.is_ascii_alphabetic())
        && s[1..]
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
        && s != "$WORKSPACE"
        && s != "$HOME"
}

fn compile_operator(op: &str, arg: &Value, path: &str) -> Result<Node, PatternError> {
    let at = || path.to_string();
    let name = |arg: &Value| -> Result<String, PatternError> {
        arg.as_str()
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .ok_or_else(|| PatternError::TakesName {
                path: at(),
                operator: op.to_string(),
            })
    };
    Ok(match op {
        "$regex" => {
            let src = arg
                .as_str()
                .ok_or_else(|| PatternError::RegexNotString { path: at() })?;
            Node::Regex(Box::new(
                Regex::new(src).map_err(|source| PatternError::BadRegex { path: at(), source })?,
            ))
        }
        "$capture" => Node::Capture(name(arg)?),
        "$ref" => Node::Ref(name(arg)?),
        "$contains" => match arg {
            Value::String(s) => Node::ContainsText(s.clone()),
            Value::Array(items) => Node::Contains(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| compile_node(item, &format!("{path}[{i}]")))
                    .collect::<Result<_, _>>()?,
            ),
            _ => return Err(PatternError::ContainsWhat { path: at() }),
        },
        "$one_of" => match arg {
            Value::Array(items) if !items.is_empty() => Node::OneOf(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| compile_node(item, &format!("{path}[{i}]")))
                    .collect::<Result<_, _>>()?,
            ),
            _ => return Err(PatternError::OneOfWhat { path: at() }),
        },
        "$not" => Node::Not(Box::new(compile_node(arg, path)?)),
        other => {
            return Err(PatternError::UnknownOperator {
                path: at(),
                operator: other.to_string(),
            })
        }
    })
}

fn source_of(node: &Node) -> Value {
    match node {
        Node::Any => "$any".into(),
        Node::AnyString => "$string".into(),
        Node::AnyNumber => "$number".into(),
        Node::AnyBool => "$bool".into(),
        Node::Uuid => "$uuid".into(),
        Node::Absent => "$absent".into(),
        Node::Literal(v) => v.clone(),
        Node::Template(s) => s.clone().into(),
        Node::Object(fields) => Value::Object(
            fields
                .iter()
                .map(|(k, n)| (k.clone(), source_of(n)))
                .collect(),
        ),
        Node::Array(items) => Value::Array(items.iter().map(source_of).collect()),
        Node::Contains(items) => {
            serde_json::json!({"$contains": items.iter().map(source_of).collect::<Vec<_>>()})
        }
        Node::ContainsText(s) => serde_json::json!({ "$contains": s }),
        Node::Regex(r) => serde_json::json!({"$regex": r.as_str()}),
        Node::Capture(n) => serde_json::json!({ "$capture": n }),
        Node::Ref(n) => serde_json::json!({ "$ref": n }),
        Node::OneOf(items) => {
            serde_json::json!({"$one_of": items.iter().map(source_of).collect::<Vec<_>>()})
        }
        Node::Not(inner) => serde_json::json!({"$not": source_of(inner)}),
    }
}

/// What `$uuid` accepts: 8-4-4-4-12 hex digits, nothing around them.
pub fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// [`is_uuid`] as a regular expression, for patterns that hold a uuid inside a longer string.
pub const UUID_REGEX: &str =
    "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}";

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a bool",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn numbers_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => x == y,
            _ => x == y,
        },
        _ => a == b,
    }
}

fn match_node(
    node: &Node,
    actual: Option<&Value>,
    vars: &Vars,
    caps: &mut Captures,
    path: &mut String,
) -> Result<(), Box<Mismatch>> {
    let fail = |reason: String| {
        Box::new(Mismatch {
            path: path.to_string(),
            expected: source_of(node),
            actual: actual.cloned(),
            reason,
        })
    };
    let Some(value) = actual else {
        return match node {
            Node::Absent => Ok(()),
            Node::Not(inner) if matches!(**inner, Node::Absent) => Err(fail("missing".into())),
            Node::Not(_) => Ok(()),
            _ => Err(fail("missing".into())),
        };
    };
    let reason = match node {
        Node::Object(fields) => return match_object(fields, node, value, vars, caps, path),
        Node::Array(items) => return match_array(items, node, value, vars, caps, path),
        Node::Contains(items) => return match_contains(items, node, value, vars, caps, path),
        _ => scalar_mismatch(node, value, vars, caps, path),
    };
    match reason {
        None => Ok(()),
        Some(reason) => Err(fail(reason)),
    }
}

/// Why a value does not match a node with no children to descend into, if it does not.
/// `$one_of` and `$not` try their options on a copy of the captures.
fn scalar_mismatch(
    node: &Node,
    value: &Value,
    vars: &Vars,
    caps: &mut Captures,
    path: &str,
) -> Option<String> {
    let ok = |yes: bool, why: &dyn Fn() -> String| if yes { None } else { Some(why()) };
    match node {
        Node::Any => None,
        Node::AnyString | Node::AnyNumber | Node::AnyBool => {
            let yes = match node {
                Node::AnyString => value.is_string(),
                Node::AnyNumber => value.is_number(),
                _ => value.is_boolean(),
            };
            ok(yes, &|| {
                format!("expected {}, found {}", type_wanted(node), type_name(value))
            })
        }
        Node::Uuid => ok(value.as_str().is_some_and(is_uuid), &|| {
            format!("expected a uuid, found {value}")
        }),
        Node::Absent => ok(value.is_null(), &|| {
            format!("expected no value, found {value}")
        }),
        Node::Literal(want) => ok(numbers_equal(want, value), &|| {
            format!("expected {want}, found {value}")
        }),
        Node::Template(t) => {
            let want = vars.substitute(t);
            ok(value.as_str() == Some(want.as_str()), &|| {
                format!("expected {want:?}, found {value}")
            })
        }
        Node::ContainsText(needle) => {
            let needle = vars.substitute(needle);
            ok(value.as_str().is_some_and(|s| s.contains(&needle)), &|| {
                format!("expected a string containing {needle:?}, found {value}")
            })
        }
        Node::Regex(re) => ok(value.as_str().is_some_and(|s| re.is_match(s)), &|| {
            format!(
                "expected a string matching /{}/, found {value}",
                re.as_str()
            )
        }),
        Node::Capture(name) | Node::Ref(name) => capture_mismatch(node, name, value, caps),
        Node::OneOf(options) => {
            let matched = options.iter().any(|o| try_node(o, value, vars, caps, path));
            ok(matched, &|| {
                format!("matches none of the options, found {value}")
            })
        }
        Node::Not(inner) => {
            let matched = try_node(inner, value, vars, &mut caps.clone(), path);
            ok(!matched, &|| {
                format!("expected anything but {}", source_of(inner))
            })
        }
        Node::Object(_) | Node::Array(_) | Node::Contains(_) => {
            unreachable!("match_node descends into containers itself")
        }
    }
}

/// `$capture` binds a value on first sight and then wants the same value; `$ref` only wants it.
fn capture_mismatch(node: &Node, name: &str, value: &Value, caps: &mut Captures) -> Option<String> {
    match caps.get(name) {
        Some(bound) if bound == value => None,
        Some(bound) => Some(format!(
            "expected the value captured as `{name}` ({bound}), found {value}"
        )),
        None if matches!(node, Node::Capture(_)) => {
            caps.insert(name.to_string(), value.clone());
            None
        }
        None => Some(format!("`{name}` was never captured before this point")),
    }
}

/// Whether `node` matches `value`; on a match the captures it bound are kept.
fn try_node(node: &Node, value: &Value, vars: &Vars, caps: &mut Captures, path: &str) -> bool {
    let mut trial = caps.clone();
    let mut p = path.to_string();
    let matched = match_node(node, Some(value), vars, &mut trial, &mut p).is_ok();
    if matched {
        *caps = trial;
    }
    matched
}

fn container_mismatch(node: &Node, value: &Value, path: &str, reason: String) -> Box<Mismatch> {
    Box::new(Mismatch {
        path: path.to_string(),
        expected: source_of(node),
        actual: Some(value.clone()),
        reason,
    })
}

fn match_object(
    fields: &[(String, Node)],
    node: &Node,
    value: &Value,
    vars: &Vars,
    caps: &mut Captures,
    path: &mut String,
) -> Result<(), Box<Mismatch>> {
    let Some(map) = value.as_object() else {
        let reason = format!("expected an object, found {}", type_name(value));
        return Err(container_mismatch(node, value, path, reason));
    };
    for (key, sub) in fields {
        let len = path.len();
        push_key(path, key);
        let r = match_node(sub, map.get(key), vars, caps, path);
        path.truncate(len);
        r?;
    }
    Ok(())
}

fn match_array(
    items: &[Node],
    node: &Node,
    value: &Value,
    vars: &Vars,
    caps: &mut Captures,
    path: &mut String,
) -> Result<(), Box<Mismatch>> {
    let Some(arr) = value.as_array() else {
        let reason = format!("expected an array, found {}", type_name(value));
        return Err(container_mismatch(node, value, path, reason));
    };
    for (i, (sub, v)) in items.iter().zip(arr).enumerate() {
        let len = path.len();
        path.push_str(&format!("[{i}]"));
        let r = match_node(sub, Some(v), vars, caps, path);
        path.truncate(len);
        r?;
    }
    if items.len() != arr.len() {
        let reason = format!(
            "expected {} element(s), found {} (write {{$contains: [...]}} to match some elements only)",
            items.len(),
            arr.len()
        );
        return Err(container_mismatch(node, value, path, reason));
    }
    Ok(())
}

fn match_contains(
    items: &[Node],
    node: &Node,
    value: &Value,
    vars: &Vars,
    caps: &mut Captures,
    path: &str,
) -> Result<(), Box<Mismatch>> {
    let Some(arr) = value.as_array() else {
        let reason = format!("expected an array, found {}", type_name(value));
        return Err(container_mismatch(node, value, path, reason));
    };
    for (i, sub) in items.iter().enumerate() {
        if !arr.iter().any(|v| try_node(sub, v, vars, caps, path)) {
            let reason = format!("no element matches $contains[{i}] {}", source_of(sub));
            return Err(container_mismatch(sub, value, path, reason));
        }
    }
    Ok(())
}

fn type_wanted(node: &Node) -> &'static str {
    match node {
        Node::AnyString => "a string",
        Node::AnyNumber => "a number",
        Node::AnyBool => "a bool",
        _ => "a value",
    }
}

fn push_key(path: &mut String, key: &str) {
    if key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !key.is_empty() {
        path.push('.');
        path.push_str(key);
    } else {
        path.push_str(&format!("[{key:?}]"));
    }
}

/// A pattern, compiled when the file is read so a bad placeholder is reported with its line.
#[derive(Debug, Clone)]
pub struct PatternValue(pub Pattern);

impl<'de> serde::Deserialize<'de> for PatternValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = <Value as serde::Deserialize>::deserialize(d)?;
        Pattern::compile(&v)
            .map(PatternValue)
            .map_err(serde::de::Error::custom)
    }
}

impl schemars::JsonSchema for PatternValue {
    fn schema_name() -> String {
        "Pattern".into()
    }
    fn json_schema(_: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
        let mut s = schemars::schema::SchemaObject::default();
        s.metadata().description = Some(
            "A partial JSON pattern: listed keys must match; placeholders $any $string $number $bool $uuid $absent; operators {$regex}, {$contains}, {$capture}, {$ref}, {$one_of}, {$not}; $WORKSPACE and $HOME in strings.".into(),
        );
        s.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pat(v: Value) -> Pattern {
        Pattern::compile(&v).unwrap()
    }

    fn check(p: Value, actual: Value) -> Result<(), Box<Mismatch>> {
        pat(p).check(&actual, &Vars::default(), &mut Captures::new())
    }

    #[test]
    fn partial_objects_ignore_unlisted_keys() {
        assert!(check(json!({"type": "result"}), json!({"type": "result", "x": 1})).is_ok());
        let err = check(json!({"type": "result"}), json!({"type": "assistant"})).unwrap_err();
        assert_eq!(err.path, "$.type");
        assert_eq!(err.actual, Some(json!("assistant")));
    }

    #[test]
    fn missing_key_is_a_mismatch_with_its_path() {
        let err = check(json!({"a": {"b": 1}}), json!({"a": {}})).unwrap_err();
        assert_eq!(err.path, "$.a.b");
        assert_eq!(err.actual, None);
        assert_eq!(err.reason, "missing");
    }

    #[test]
    fn arrays_match_elementwise_and_by_length() {
        assert!(check(
            json!([{"t": 1}, {"t": 2}]),
            json!([{"t": 1, "x": 0}, {"t": 2}])
        )
        .is_ok());
        let err = check(json!([{"t": 1}]), json!([{"t": 1}, {"t": 2}])).unwrap_err();
        assert!(
            err.reason.contains("expected 1 element(s), found 2"),
            "{err}"
        );
        let err = check(json!([1, 2]), json!([1, 3])).unwrap_err();
        assert_eq!(err.path, "$[1]");
    }

    #[test]
    fn contains_matches_some_elements_in_any_order() {
        assert!(check(
            json!({"$contains": ["Bash", "Read"]}),
            json!(["Read", "Task", "Bash"])
        )
        .is_ok());
        let err = check(json!({"$contains": ["Glob"]}), json!(["Read", "Bash"])).unwrap_err();
        assert!(err.reason.contains("no element matches"), "{err}");
    }

    #[test]
    fn contains_on_a_string_is_a_substring_test() {
        assert!(check(json!({"$contains": "ell"}), json!("hello")).is_ok());
        assert!(check(json!({"$contains": "xyz"}), json!("hello")).is_err());
        assert!(check(json!({"$contains": "xyz"}), json!(3)).is_err());
    }

    #[test]
    fn type_placeholders() {
        assert!(check(json!("$any"), json!(null)).is_ok());
        assert!(check(json!("$string"), json!("s")).is_ok());
        assert!(check(json!("$string"), json!(1)).is_err());
        assert!(check(json!("$number"), json!(1.5)).is_ok());
        assert!(check(json!("$number"), json!("1")).is_err());
        assert!(check(json!("$bool"), json!(false)).is_ok());
        assert!(check(json!("$bool"), json!(0)).is_err());
    }

    #[test]
    fn uuid_placeholder() {
        assert!(check(
            json!("$uuid"),
            json!("5595b838-7570-4bb3-8c62-876337d757b6")
        )
        .is_ok());
        assert!(check(json!("$uuid"), json!("ephemeral")).is_err());
        assert!(check(
            json!("$uuid"),
            json!("5595b838-7570-4bb3-8c62-876337d757bZ")
        )
        .is_err());
    }

    #[test]
    fn absent_accepts_missing_or_null_only() {
        assert!(check(json!({"k": "$absent"}), json!({})).is_ok());
        assert!(check(json!({"k": "$absent"}), json!({"k": null})).is_ok());
        let err = check(json!({"k": "$absent"}), json!({"k": 0})).unwrap_err();
        assert_eq!(err.path, "$.k");
    }

    #[test]
    fn regex_operator() {
        assert!(check(
            json!({"$regex": "^tool-.*output$"}),
            json!("tool-use-output")
        )
        .is_ok());
        assert!(check(json!({"$regex": "^x"}), json!("tool")).is_err());
        assert!(Pattern::compile(&json!({"$regex": "("})).is_err());
    }

    #[test]
    fn capture_then_ref_must_be_equal() {
        let vars = Vars::default();
        let mut caps = Captures::new();
        pat(json!({"session_id": {"$capture": "sid"}}))
            .check(&json!({"session_id": "a"}), &vars, &mut caps)
            .unwrap();
        assert!(pat(json!({"session_id": {"$ref": "sid"}}))
            .check(&json!({"session_id": "a"}), &vars, &mut caps)
            .is_ok());
        let err = pat(json!({"session_id": {"$ref": "sid"}}))
            .check(&json!({"session_id": "b"}), &vars, &mut caps)
            .unwrap_err();
        assert!(err.reason.contains("captured as `sid`"), "{err}");
        // Capturing the same name again behaves like a ref.
        assert!(pat(json!({"$capture": "sid"}))
            .check(&json!("b"), &vars, &mut caps)
            .is_err());
    }

    #[test]
    fn ref_before_capture_fails() {
        assert!(check(json!({"$ref": "nope"}), json!("x")).is_err());
    }

    #[test]
    fn failed_match_binds_nothing() {
        let vars = Vars::default();
        let mut caps = Captures::new();
        let p = pat(json!({"a": {"$capture": "x"}, "b": 1}));
        assert!(p.check(&json!({"a": 5, "b": 2}), &vars, &mut caps).is_err());
        assert!(caps.is_empty());
    }

    #[test]
    fn workspace_and_home_are_substituted() {
        let vars = Vars {
            workspace: "/tmp/ws".into(),
            home: "/tmp/home".into(),
        };
        let p = pat(json!({"cwd": "$WORKSPACE", "f": "$HOME/.claude"}));
        assert!(p
            .check(
                &json!({"cwd": "/tmp/ws", "f": "/tmp/home/.claude"}),
                &vars,
                &mut Captures::new()
            )
            .is_ok());
        assert!(p
            .check(
                &json!({"cwd": "/elsewhere", "f": "/tmp/home/.claude"}),
                &vars,
                &mut Captures::new()
            )
            .is_err());
    }

    #[test]
    fn one_of_and_not() {
        assert!(check(json!({"$one_of": ["a", "b"]}), json!("b")).is_ok());
        assert!(check(json!({"$one_of": ["a", "b"]}), json!("c")).is_err());
        assert!(check(json!({"$not": "a"}), json!("b")).is_ok());
        assert!(check(json!({"$not": "a"}), json!("a")).is_err());
    }

    #[test]
    fn numbers_compare_by_value() {
        assert!(check(json!(5), json!(5.0)).is_ok());
        assert!(check(json!(5), json!(6)).is_err());
    }

    #[test]
    fn dollar_dollar_escapes_a_literal() {
        assert!(check(json!("$$any"), json!("$any")).is_ok());
        assert!(check(json!("$$any"), json!("other")).is_err());
    }

    #[test]
    fn unknown_placeholders_and_operators_are_compile_errors_with_a_path() {
        let err = Pattern::compile(&json!({"a": ["$uid"]})).unwrap_err();
        assert_eq!(
            err,
            PatternError::UnknownPlaceholder {
                path: "$.a[0]".into(),
                placeholder: "$uid".into()
            }
        );
        let err = Pattern::compile(&json!({"a": {"$regexp": "x"}})).unwrap_err();
        assert!(
            matches!(&err, PatternError::UnknownOperator { path, operator } if path == "$.a.$regexp" && operator == "$regexp"),
            "{err}"
        );
        let err = Pattern::compile(&json!({"a": {"$regex": "x", "b": 1}})).unwrap_err();
        assert!(err.to_string().contains("must be the only key"), "{err}");
    }

    #[test]
    fn prices_and_sentences_with_dollars_are_literals() {
        assert!(check(json!("costs $5"), json!("costs $5")).is_ok());
        assert!(check(json!("$ ls"), json!("$ ls")).is_ok());
    }
}
