//! Recording expectations from real runs, insta-style.
//!
//! `streamcheck record` runs scenarios and turns what the CLI printed into frame
//! patterns ([`generalise`]: uuids, session ids, durations, timestamps, sandbox paths
//! and the CLI version are generalised, the rest is kept exact). Nothing is written into
//! a scenario: each recording goes to a pending file, `reports/pending/<id>.<target>.yaml`.
//! `streamcheck review` shows each pending file as a unified diff of the scenario file
//! and, when accepted, rewrites only `frames:` and `exit_code:` under `expect: <target>:`
//! ([`rewrite_expectation`]), textually, so comments and other targets stay as written.

use crate::matcher::{self, Expected, FrameRules, Mode};
use crate::pattern::{Captures, Pattern, Vars};
use crate::report::{redact_str, timestamp, write_atomic, ReportWriter};
use crate::runner::{RunOptions, Status, Trial};
use crate::scenario::{OutputFormat, Scenario};
use crate::suite;
use crate::target::{NotInstalled, Project, Target};
use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{BufRead, Write as _};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::SystemTime;

/// `reports/pending/` under the project root (git-ignored).
pub fn pending_dir(project: &Project) -> PathBuf {
    project.root.join("reports/pending")
}

// ---------------------------------------------------------------------------
// Generalising what the CLI printed into patterns
// ---------------------------------------------------------------------------

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
/// - durations, costs, times (`*_ms`, `*Ms`, `*duration*`, `*cost*`, `ttft*`, `*_time`, `*_at`,
///   `timestamp`): `$number` / `$string`; ISO timestamps anywhere: `$string`;
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
                    .map(|(k, x)| (escape_key(k), self.value(x, Some(k))))
                    .collect(),
            ),
            Value::Array(a) => Value::Array(a.iter().map(|x| self.value(x, key)).collect()),
            Value::Number(_) if key.is_some_and(volatile_key) => "$number".into(),
            Value::String(s) => self.string(s, key),
            other => other.clone(),
        }
    }

    fn string(&mut self, s: &str, key: Option<&str>) -> Value {
        if key == Some("session_id") && !s.is_empty() {
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
            return json!({ "$capture": name(self.sessions.len() - 1) });
        }
        let is_version = key == Some("claude_code_version")
            || self
                .v
                .version
                .is_some_and(|ver| !ver.is_empty() && ver != "unknown" && s == ver);
        if key.is_some_and(volatile_key) || is_version || looks_like_timestamp(s) {
            return "$string".into();
        }
        if is_uuid(s) {
            return "$uuid".into();
        }
        let redacted = redact_str(s, self.v.vars);
        if self.token.as_deref().is_some_and(|t| redacted.contains(t)) {
            return "$string".into();
        }
        let embeds_uuid = uuid_re().is_match(s);
        if redacted != s {
            // A template: `$WORKSPACE` / `$HOME` are substituted when matching. It cannot
            // also hold a literal `$WORKSPACE` or a uuid, nor start like a placeholder.
            let template_ok = !s.contains("$WORKSPACE")
                && !s.contains("$HOME")
                && !embeds_uuid
                && Pattern::compile(&Value::String(redacted.clone())).is_ok_and(|p| {
                    p.is_match(&Value::String(s.into()), self.v.vars, &Captures::new())
                });
            return if template_ok {
                redacted.into()
            } else {
                "$string".into()
            };
        }
        if embeds_uuid || ((s.contains("$WORKSPACE") || s.contains("$HOME")) && !s.starts_with('$'))
        {
            let mut re = String::from("^");
            let mut last = 0;
            for m in uuid_re().find_iter(s) {
                re.push_str(&regex::escape(&s[last..m.start()]));
                re.push_str(
                    "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
                );
                last = m.end();
            }
            re.push_str(&regex::escape(&s[last..]));
            re.push('$');
            return json!({ "$regex": re });
        }
        escape_literal(s).into()
    }
}

/// A literal string as a pattern: a leading `$` doubled.
pub fn escape_literal(s: &str) -> String {
    if s.starts_with('$') {
        format!("${s}")
    } else {
        s.to_string()
    }
}

fn escape_key(k: &str) -> String {
    escape_literal(k)
}

/// Keys whose values change from run to run (durations, costs, times).
fn volatile_key(k: &str) -> bool {
    k == "timestamp"
        || k == "time"
        || k.ends_with("_ms")
        || k.ends_with("Ms")
        || k.ends_with("_time")
        || k.ends_with("Time")
        || k.ends_with("_at")
        || k.ends_with("At")
        || k.starts_with("ttft")
        || k.to_ascii_lowercase().contains("duration")
        || k.to_ascii_lowercase().contains("cost")
}

fn looks_like_timestamp(s: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}").expect("valid regex"))
        .is_match(s)
}

fn uuid_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
            .expect("valid regex")
    })
}

fn is_uuid(s: &str) -> bool {
    s.len() == 36 && uuid_re().is_match(s)
}

/// The name of the trial's temp dir (`streamcheck-XXXXXX`): a string still holding it
/// after `$WORKSPACE` / `$HOME` were put in names the sandbox in some other way.
fn sandbox_token(vars: &Vars) -> Option<String> {
    let base = Path::new(&vars.workspace).parent()?.file_name()?;
    let token = base.to_string_lossy().into_owned();
    (token.len() >= 8).then_some(token)
}

/// Merges the patterns recorded from two runs of the same scenario: leaves that differ
/// become `$string` / `$number` / `$bool` (or `$any`), keys missing from one run are left
/// out. Fails when the runs printed a different number of frames.
pub fn merge_runs(first: &[Value], other: &[Value]) -> Result<Vec<Value>, String> {
    if first.len() != other.len() {
        return Err(format!(
            "the runs printed different numbers of frames ({} and {})",
            first.len(),
            other.len()
        ));
    }
    Ok(first
        .iter()
        .zip(other)
        .map(|(a, b)| merge_value(a, b))
        .collect())
}

fn is_operator(v: &Value) -> bool {
    v.as_object().is_some_and(|m| {
        m.len() == 1 && m.keys().all(|k| k.starts_with('$') && !k.starts_with("$$"))
    })
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
        _ => match (pattern_kind(a), pattern_kind(b)) {
            (Some(ka), Some(kb)) if ka == kb => format!("${ka}").into(),
            _ => "$any".into(),
        },
    }
}

/// The JSON type a leaf pattern stands for, if it stands for one.
fn pattern_kind(v: &Value) -> Option<&'static str> {
    match v {
        Value::String(s) => Some(match s.as_str() {
            "$number" => "number",
            "$bool" => "bool",
            "$any" | "$absent" => return None,
            _ => "string",
        }),
        Value::Number(_) => Some("number"),
        Value::Bool(_) => Some("bool"),
        Value::Object(m) if m.contains_key("$regex") => Some("string"),
        Value::Object(m) if m.contains_key("$capture") || m.contains_key("$ref") => Some("string"),
        _ => None,
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
            pattern_kind(current) == pattern_kind(new)
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

// ---------------------------------------------------------------------------
// YAML flow style
// ---------------------------------------------------------------------------

/// A pattern value in YAML flow style, on one line (`{type: system, subtype: init}`).
/// Writes the value as it is: escaping `$` is [`generalise`]'s job.
pub fn flow(v: &Value) -> String {
    let mut out = String::new();
    write_flow(v, &mut out);
    out
}

fn write_flow(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => out.push_str(&yaml_str(s)),
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_flow(x, out);
            }
            out.push(']');
        }
        Value::Object(m) => {
            out.push('{');
            for (i, (k, x)) in m.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&yaml_str(k));
                out.push_str(": ");
                write_flow(x, out);
            }
            out.push('}');
        }
    }
}

/// A string as a YAML scalar: plain when that reads back as the same string, else double-quoted.
pub fn yaml_str(s: &str) -> String {
    const WORDS: &[&str] = &[
        "true", "false", "null", "yes", "no", "on", "off", "y", "n", "inf", "nan", "infinity",
    ];
    let plain = s
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./$".contains(c))
        && !WORDS.contains(&s.to_ascii_lowercase().as_str());
    if plain {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20
                || (0x7f..=0x9f).contains(&(c as u32))
                || matches!(
                    c,
                    '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
                ) =>
            {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

// ---------------------------------------------------------------------------
// Rewriting a scenario file
// ---------------------------------------------------------------------------

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// A line that holds YAML content (not blank, not only a comment).
fn is_content(line: &str) -> bool {
    let t = line.trim();
    !t.is_empty() && !t.starts_with('#')
}

/// The value after `key:` on a line (trimmed, without a trailing comment), if the line is that key.
fn key_value<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let t = line.trim_start();
    let rest = [key.to_string(), format!("\"{key}\""), format!("'{key}'")]
        .iter()
        .find_map(|k| t.strip_prefix(k.as_str()))?;
    let rest = rest.strip_prefix(':')?;
    if !(rest.is_empty() || rest.starts_with([' ', '\n', '\r'])) {
        return None;
    }
    let rest = rest.trim();
    Some(match rest.find(" #") {
        _ if rest.starts_with('#') => "",
        Some(i) if !rest.starts_with(['"', '\'']) => rest[..i].trim_end(),
        _ => rest,
    })
}

/// The end (exclusive) of the block that starts after line `start` and holds lines
/// indented more than `indent`; trailing blank and comment lines are left outside.
fn block_end(lines: &[String], start: usize, indent: usize) -> usize {
    let mut end = start + 1;
    let mut last_content = start + 1;
    while end < lines.len() {
        let l = &lines[end];
        if is_content(l) {
            if indent_of(l) <= indent {
                break;
            }
            last_content = end + 1;
        }
        end += 1;
    }
    last_content
}

/// Where `expect: <key>:` is: (line of the key, end of its block, indent of its fields).
fn locate(lines: &[String], key: &str) -> Result<(usize, usize, usize), String> {
    let expect = lines
        .iter()
        .position(|l| indent_of(l) == 0 && key_value(l, "expect").is_some())
        .ok_or("the file has no top-level `expect:` line")?;
    if !key_value(&lines[expect], "expect").unwrap_or("").is_empty() {
        return Err(
            "`expect:` is written in flow style ({...}); write it as a block to record into it"
                .into(),
        );
    }
    let expect_end = block_end(lines, expect, 0);
    let child = lines[expect + 1..expect_end]
        .iter()
        .find(|l| is_content(l))
        .map(|l| indent_of(l))
        .ok_or("`expect:` is empty")?;
    let target = (expect + 1..expect_end)
        .find(|&i| indent_of(&lines[i]) == child && key_value(&lines[i], key).is_some())
        .ok_or_else(|| format!("no `{key}:` under `expect:`"))?;
    if !key_value(&lines[target], key).unwrap_or("").is_empty() {
        return Err(format!(
            "`expect: {key}:` is written in flow style ({{...}}); write it as a block to record into it"
        ));
    }
    let end = block_end(lines, target, child);
    let field = lines[target + 1..end]
        .iter()
        .find(|l| is_content(l))
        .map(|l| indent_of(l))
        .ok_or_else(|| format!("`expect: {key}:` is empty"))?;
    Ok((target, end, field))
}

/// Replaces `frames:` (when `frames` is given) and `exit_code:` (when `exit_code` is given)
/// under `expect: <key>:` in a scenario file's text, leaving every other line as it is.
/// Frames are written one per line in flow style. Fails on layouts it cannot edit by
/// indentation (flow-style `expect`).
pub fn rewrite_expectation(
    text: &str,
    key: &str,
    frames: Option<&[Value]>,
    exit_code: Option<i32>,
) -> Result<String, String> {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    if let Some(frames) = frames {
        let (target, end, field) = locate(&lines, key)?;
        let pad = " ".repeat(field);
        let mut block = Vec::new();
        if frames.is_empty() {
            block.push(format!("{pad}frames: []"));
        } else {
            block.push(format!("{pad}frames:"));
            block.extend(frames.iter().map(|f| format!("{pad}  - {}", flow(f))));
        }
        let at = (target + 1..end)
            .find(|&i| indent_of(&lines[i]) == field && key_value(&lines[i], "frames").is_some());
        match at {
            Some(at) => {
                // The value: deeper lines, and `- ` items at the key's own indentation.
                let mut stop = at + 1;
                let mut last = at + 1;
                while stop < end {
                    let l = &lines[stop];
                    if is_content(l) {
                        let i = indent_of(l);
                        let item = i == field && l.trim_start().starts_with('-');
                        if i < field || (i == field && !item) {
                            break;
                        }
                        last = stop + 1;
                    }
                    stop += 1;
                }
                lines.splice(at..last, block);
            }
            None => {
                lines.splice(end..end, block);
            }
        }
    }
    if let Some(code) = exit_code {
        let (target, end, field) = locate(&lines, key)?;
        let new = format!("{}exit_code: {code}", " ".repeat(field));
        let at = (target + 1..end).find(|&i| {
            indent_of(&lines[i]) == field && key_value(&lines[i], "exit_code").is_some()
        });
        match at {
            Some(at) => {
                let comment = lines[at]
                    .find(" #")
                    .map(|i| lines[at][lines[at][..i].trim_end().len()..].to_string())
                    .unwrap_or_default();
                lines[at] = format!("{new}{comment}");
            }
            None => {
                // After the frames block if there is one, else at the end of the target.
                let after = (target + 1..end)
                    .find(|&i| {
                        indent_of(&lines[i]) == field && key_value(&lines[i], "frames").is_some()
                    })
                    .map(|at| {
                        let mut j = at + 1;
                        while j < end && (!is_content(&lines[j]) || indent_of(&lines[j]) > field) {
                            j += 1;
                        }
                        while j > at + 1 && !is_content(&lines[j - 1]) {
                            j -= 1;
                        }
                        j
                    })
                    .unwrap_or(end);
                lines.insert(after, new);
            }
        }
    }
    let mut out = lines.join("\n");
    out.push('\n');
    Ok(out)
}

/// Checks a rewritten scenario: it parses, `expect.<key>` holds exactly `frames` and
/// `exit_code`, and nothing else in the file changed meaning.
pub fn validate_rewrite(
    old: &str,
    new: &str,
    path: &Path,
    scenarios_root: &Path,
    key: &str,
    frames: Option<&[Value]>,
    exit_code: Option<i32>,
) -> Result<(), String> {
    Scenario::parse(new, path, scenarios_root).map_err(|e| e.to_string())?;
    let parse = |t: &str| -> Result<Value, String> {
        serde_yaml::from_str(t).map_err(|e| format!("{}: {e}", path.display()))
    };
    let (mut a, mut b) = (parse(old)?, parse(new)?);
    let new_target = b["expect"][key].clone();
    if let Some(frames) = frames {
        if new_target.get("frames") != Some(&Value::Array(frames.to_vec())) {
            return Err(format!(
                "after the rewrite `expect.{key}.frames` does not hold the recorded frames"
            ));
        }
    }
    if let Some(code) = exit_code {
        if new_target.get("exit_code") != Some(&json!(code)) {
            return Err(format!(
                "after the rewrite `expect.{key}.exit_code` is not {code}"
            ));
        }
    }
    for v in [&mut a, &mut b] {
        if let Some(t) = v
            .get_mut("expect")
            .and_then(|e| e.get_mut(key))
            .and_then(Value::as_object_mut)
        {
            if frames.is_some() {
                t.remove("frames");
            }
            if exit_code.is_some() {
                t.remove("exit_code");
            }
        }
    }
    if a != b {
        return Err("the rewrite would change more than frames and exit_code".into());
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Pending files
// ---------------------------------------------------------------------------

/// A recorded expectation waiting for review.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pending {
    pub scenario: String,
    /// The scenario file, relative to the project root.
    pub file: String,
    /// The key under `expect:` it replaces (`claude-code`).
    pub expect: String,
    /// The target it was recorded on (`claude-code@2.1.74`, `command:fake-cli.sh`).
    pub target: String,
    pub version: String,
    #[serde(default)]
    pub recorded_at: Option<String>,
    #[serde(default)]
    pub notes: Vec<String>,
    #[serde(default)]
    pub exit_code: Option<i32>,
    /// `None` for output formats without frames (`text`): `frames:` is left alone.
    #[serde(default)]
    pub frames: Option<Vec<Value>>,
}

impl Pending {
    pub fn to_yaml(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "# Recorded by `streamcheck record`; nothing was changed in the scenario.\n# Review with `streamcheck review` (accept rewrites `expect: {}:` in {}).",
            self.expect, self.file
        );
        for (k, v) in [
            ("scenario", &self.scenario),
            ("file", &self.file),
            ("expect", &self.expect),
            ("target", &self.target),
            ("version", &self.version),
        ] {
            let _ = writeln!(s, "{k}: {}", yaml_str(v));
        }
        if let Some(at) = &self.recorded_at {
            let _ = writeln!(s, "recorded_at: {}", yaml_str(at));
        }
        if !self.notes.is_empty() {
            let _ = writeln!(s, "notes:");
            for n in &self.notes {
                let _ = writeln!(s, "  - {}", yaml_str(n));
            }
        }
        if let Some(code) = self.exit_code {
            let _ = writeln!(s, "exit_code: {code}");
        }
        match &self.frames {
            None => {}
            Some(f) if f.is_empty() => s.push_str("frames: []\n"),
            Some(f) => {
                s.push_str("frames:\n");
                for frame in f {
                    let _ = writeln!(s, "  - {}", flow(frame));
                }
            }
        }
        s
    }

    pub fn parse(text: &str) -> Result<Pending, String> {
        serde_yaml::from_str(text).map_err(|e| e.to_string())
    }

    /// `reports/pending/<scenario id>.<target>.yaml`.
    pub fn path_in(&self, dir: &Path) -> PathBuf {
        dir.join(format!(
            "{}.{}.yaml",
            self.scenario,
            self.target.replace(['/', ':', '\\'], "_")
        ))
    }
}

/// What became of one recorded trial.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// A pending file was written (`replaced`: an unreviewed one was there before).
    Pending {
        path: PathBuf,
        replaced: bool,
    },
    /// The recording equals the current expectation.
    Unchanged,
    Skipped(String),
    /// Could not be recorded (the CLI was killed, did not start, runs disagree...).
    NotRecorded(String),
}

/// Turns the runs of one scenario on one target into a pending expectation, or says
/// why not. Pure apart from reading nothing: `trials` are the runs (at least one).
pub fn recording(
    project: &Project,
    scenario: &Scenario,
    expect_key: &str,
    trials: &[Trial],
) -> Result<Option<Pending>, Outcome> {
    let first = trials
        .first()
        .ok_or(Outcome::NotRecorded("no run".into()))?;
    if let Status::Skipped(why) = &first.status {
        return Err(Outcome::Skipped(why.clone()));
    }
    let expect = scenario
        .file
        .expect
        .get(expect_key)
        .ok_or_else(|| Outcome::Skipped(format!("no expectation for {expect_key}")))?;
    for t in trials {
        if let Some(d) = t
            .divergences
            .iter()
            .find(|d| d.kind == crate::divergence::Kind::Spawn)
        {
            return Err(Outcome::NotRecorded(d.message.clone()));
        }
        if t.exit.termination.by_harness() {
            return Err(Outcome::NotRecorded(format!(
                "the CLI was killed by the harness ({}): nothing stable to record",
                t.exit.termination
            )));
        }
        if t.exit.code != first.exit.code {
            return Err(Outcome::NotRecorded(format!(
                "the runs exited differently ({:?} and {:?})",
                first.exit.code, t.exit.code
            )));
        }
    }
    let ignore: Vec<Pattern> = expect.ignore.iter().map(|p| p.0.clone()).collect();
    let session = session_capture_name(&first.expected_frames).unwrap_or_else(|| "session".into());
    let with_frames = scenario.file.output_format != OutputFormat::Text;
    let mut notes = Vec::new();
    let frames = if with_frames {
        let mut merged: Option<Vec<Value>> = None;
        for t in trials {
            let kept: Vec<Value> = t
                .output
                .frames
                .iter()
                .filter(|f| {
                    !ignore
                        .iter()
                        .any(|p| p.is_match(&f.value, &t.vars, &Captures::new()))
                })
                .map(|f| f.value.clone())
                .collect();
            let version = (!t.target_version.is_empty()).then_some(t.target_version.as_str());
            let this = generalise(
                &kept,
                &Volatile {
                    vars: &t.vars,
                    version,
                    session_capture: &session,
                },
            );
            merged = Some(match merged {
                None => this,
                Some(m) => merge_runs(&m, &this).map_err(Outcome::NotRecorded)?,
            });
        }
        let frames = merged.unwrap_or_default();
        // The recording must match every run it came from.
        let compiled: Vec<Expected> = frames
            .iter()
            .map(|f| Pattern::compile(f).map(Expected::Frame))
            .collect::<Result<_, _>>()
            .map_err(|e| Outcome::NotRecorded(format!("recorded an invalid pattern: {e}")))?;
        for t in trials {
            let rules = FrameRules {
                expected: &compiled,
                ignore: &ignore,
                absent: &[],
                mode: Mode::Exact,
            };
            if let Some(d) =
                matcher::match_frames(&rules, &t.output.frames, &t.vars, &mut Captures::new())
                    .first()
            {
                return Err(Outcome::NotRecorded(format!(
                    "the recording does not match its own run: {d}"
                )));
            }
        }
        if first
            .expected_frames
            .iter()
            .any(|f| f.get("any_order").is_some())
        {
            notes.push("the current expectation has any_order groups; this recording pins the order of one run".into());
        }
        Some(frames)
    } else {
        None
    };
    let unchanged_frames = frames.as_ref().is_none_or(|f| {
        f.len() == first.expected_frames.len()
            && first
                .expected_frames
                .iter()
                .zip(f)
                .all(|(c, n)| covers(c, n))
    });
    let unchanged_exit = first.exit.code.is_none() || first.exit.code == expect.exit_code;
    if unchanged_frames && unchanged_exit {
        return Ok(None);
    }
    if first.status == Status::Passed {
        notes.push("the current expectation passes; this recording pins the full frames".into());
    }
    let file = scenario
        .path
        .strip_prefix(&project.root)
        .unwrap_or(&scenario.path)
        .to_string_lossy()
        .replace('\\', "/");
    Ok(Some(Pending {
        scenario: scenario.id.clone(),
        file,
        expect: expect_key.to_string(),
        target: first.target.clone(),
        version: first.target_version.clone(),
        recorded_at: Some(timestamp(SystemTime::now())),
        notes,
        exit_code: first.exit.code,
        frames,
    }))
}

/// Options of `streamcheck record`.
#[derive(Debug, Clone)]
pub struct RecordOptions {
    pub jobs: usize,
    pub run: RunOptions,
    /// Runs per scenario; values that differ between runs are generalised.
    pub runs: usize,
    /// Record only scenarios whose current expectation fails.
    pub failing_only: bool,
    /// Where the runs' reports go.
    pub report_dir: PathBuf,
}

/// `streamcheck record`: runs the scenarios and writes pending files. Returns the
/// outcome per (scenario, target).
pub async fn record(
    project: &Project,
    scenarios: Vec<Scenario>,
    targets: &[Result<Target, NotInstalled>],
    opts: &RecordOptions,
) -> Result<Vec<(String, String, Outcome)>, String> {
    let by_id: BTreeMap<String, Scenario> = scenarios
        .iter()
        .map(|s| (s.id.clone(), s.clone()))
        .collect();
    let keys: BTreeMap<String, &'static str> = targets
        .iter()
        .filter_map(|t| t.as_ref().ok())
        .map(|t| (t.name.clone(), t.dialect.expect_key()))
        .collect();
    let mut runs: BTreeMap<(String, String), Vec<Trial>> = BTreeMap::new();
    let n = opts.runs.max(1);
    for k in 1..=n {
        let dir = if k == 1 {
            opts.report_dir.clone()
        } else {
            opts.report_dir.join(format!("run-{k}"))
        };
        let mut writer = ReportWriter::create(&dir, suite::target_infos(targets), vec![])
            .map_err(|e| format!("cannot write reports to {}: {e}", dir.display()))?;
        let finished = suite::run(
            scenarios.clone(),
            targets,
            opts.jobs,
            opts.run.clone(),
            &mut writer,
            |t| {
                let state = match &t.status {
                    Status::Passed => "passes ".to_string(),
                    Status::Failed | Status::Known(_) => "differs".to_string(),
                    Status::Skipped(_) => "skipped".to_string(),
                };
                let run = if n > 1 {
                    format!(" [run {k}/{n}]")
                } else {
                    String::new()
                };
                println!("{state} {} ({}){run}", t.scenario, t.target);
                runs.entry((t.scenario.clone(), t.target.clone()))
                    .or_default()
                    .push(t.clone());
            },
        )
        .await
        .map_err(|e| format!("cannot write reports: {e}"))?;
        if finished {
            writer.finish().map_err(|e| e.to_string())?;
        } else {
            return Err("interrupted: nothing recorded".into());
        }
    }
    let dir = pending_dir(project);
    let mut out = Vec::new();
    for ((id, target), trials) in runs {
        let Some(scenario) = by_id.get(&id) else {
            continue;
        };
        let key = keys.get(&target).copied().unwrap_or("claude-code");
        let outcome = match recording(project, scenario, key, &trials) {
            Err(o) => o,
            Ok(None) => Outcome::Unchanged,
            Ok(Some(_)) if opts.failing_only && trials[0].status == Status::Passed => {
                Outcome::Skipped("passes (--failing-only)".into())
            }
            Ok(Some(p)) => {
                let path = p.path_in(&dir);
                let replaced = path.exists();
                write_atomic(&path, p.to_yaml().as_bytes())
                    .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
                Outcome::Pending { path, replaced }
            }
        };
        out.push((id, target, outcome));
    }
    Ok(out)
}

/// Prints what `record` did and returns the number of pending files written.
pub fn print_outcomes(outcomes: &[(String, String, Outcome)], root: &Path) -> usize {
    let mut pending = 0;
    println!();
    for (id, target, o) in outcomes {
        match o {
            Outcome::Pending { path, replaced } => {
                pending += 1;
                let shown = path
                    .strip_prefix(root)
                    .unwrap_or(path)
                    .display()
                    .to_string();
                let note = if *replaced {
                    " (replaces an unreviewed pending file)"
                } else {
                    ""
                };
                println!("pending    {id} ({target}): {shown}{note}");
            }
            Outcome::Unchanged => println!("unchanged  {id} ({target})"),
            Outcome::Skipped(why) => println!("skipped    {id} ({target}): {why}"),
            Outcome::NotRecorded(why) => println!("NOT RECORDED {id} ({target}): {why}"),
        }
    }
    let count = |f: fn(&Outcome) -> bool| outcomes.iter().filter(|(_, _, o)| f(o)).count();
    println!(
        "\n{pending} pending, {} unchanged, {} skipped, {} not recorded",
        count(|o| matches!(o, Outcome::Unchanged)),
        count(|o| matches!(o, Outcome::Skipped(_))),
        count(|o| matches!(o, Outcome::NotRecorded(_))),
    );
    if pending > 0 {
        println!("review them with `streamcheck review` (nothing in scenarios/ was changed)");
    }
    pending
}

// ---------------------------------------------------------------------------
// Review
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Accept,
    Reject,
    /// Keep the pending file for later.
    Skip,
    Quit,
}

/// How `review` decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReviewMode {
    AcceptAll,
    RejectAll,
    /// Ask on the terminal, file by file.
    Ask,
    /// Only show the diffs and list the files.
    List,
}

/// Every pending file under `dir`, sorted.
pub fn pending_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "yaml") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// One pending file, ready to decide on: the scenario text now and after accepting.
pub struct Change {
    pub pending_path: PathBuf,
    pub pending: Pending,
    pub scenario_path: PathBuf,
    pub old: String,
    pub new: String,
}

impl Change {
    /// Loads a pending file and computes (and validates) the scenario's new text.
    pub fn load(project: &Project, pending_path: &Path) -> Result<Change, String> {
        let text = std::fs::read_to_string(pending_path).map_err(|e| e.to_string())?;
        let pending = Pending::parse(&text)?;
        let scenario_path = project.root.join(&pending.file);
        let old = std::fs::read_to_string(&scenario_path)
            .map_err(|e| format!("{}: {e}", scenario_path.display()))?;
        let new = rewrite_expectation(
            &old,
            &pending.expect,
            pending.frames.as_deref(),
            pending.exit_code,
        )?;
        validate_rewrite(
            &old,
            &new,
            &scenario_path,
            &project.scenarios_dir(),
            &pending.expect,
            pending.frames.as_deref(),
            pending.exit_code,
        )?;
        Ok(Change {
            pending_path: pending_path.to_path_buf(),
            pending,
            scenario_path,
            old,
            new,
        })
    }

    /// The change as a unified diff of the scenario file.
    pub fn diff(&self) -> String {
        similar::TextDiff::from_lines(&self.old, &self.new)
            .unified_diff()
            .context_radius(3)
            .header(
                &format!("a/{}", self.pending.file),
                &format!("b/{}", self.pending.file),
            )
            .to_string()
    }

    /// Rewrites the scenario file (atomically) and removes the pending file.
    pub fn accept(&self) -> Result<(), String> {
        let err = |e: std::io::Error| format!("{}: {e}", self.scenario_path.display());
        let perms = std::fs::metadata(&self.scenario_path)
            .map_err(err)?
            .permissions();
        write_atomic(&self.scenario_path, self.new.as_bytes()).map_err(err)?;
        // The temp file was created private: give the scenario its permissions back.
        std::fs::set_permissions(&self.scenario_path, perms).map_err(err)?;
        std::fs::remove_file(&self.pending_path).map_err(|e| e.to_string())
    }

    pub fn reject(&self) -> Result<(), String> {
        std::fs::remove_file(&self.pending_path).map_err(|e| e.to_string())
    }
}

/// Counts of a review.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ReviewSummary {
    pub accepted: usize,
    pub rejected: usize,
    pub kept: usize,
    pub errors: usize,
}

/// `streamcheck review`: shows each pending change as a diff and applies the decision.
/// `filters` are substrings of scenario ids (empty: all). `ask` is called in `Ask` mode.
pub fn review(
    project: &Project,
    filters: &[String],
    mode: ReviewMode,
    color: bool,
    ask: &mut dyn FnMut(&Change) -> Decision,
) -> ReviewSummary {
    let dir = pending_dir(project);
    let files = pending_files(&dir);
    let mut sum = ReviewSummary::default();
    if files.is_empty() {
        println!("no pending recordings in {}", dir.display());
        return sum;
    }
    let mut quit = false;
    for path in files {
        let shown = path
            .strip_prefix(&project.root)
            .unwrap_or(&path)
            .display()
            .to_string();
        let id = std::fs::read_to_string(&path)
            .ok()
            .and_then(|t| Pending::parse(&t).ok())
            .map(|p| p.scenario)
            .unwrap_or_default();
        if !filters.is_empty() && !filters.iter().any(|f| id.contains(f.as_str())) {
            continue;
        }
        let change = match Change::load(project, &path) {
            Ok(c) => c,
            Err(e) => {
                println!("error      {shown}: {e} (kept)");
                sum.errors += 1;
                continue;
            }
        };
        if quit {
            sum.kept += 1;
            continue;
        }
        let p = &change.pending;
        if change.old == change.new {
            println!(
                "unchanged  {} ({}): the scenario already says this; pending file removed",
                p.scenario, p.target
            );
            let _ = change.reject();
            continue;
        }
        println!(
            "\n==== {} ({} {}, expect: {}) ====",
            p.scenario, p.target, p.version, p.expect
        );
        for n in &p.notes {
            println!("note: {n}");
        }
        for line in change.diff().lines() {
            println!("{}", paint_diff(line, color));
        }
        let decision = match mode {
            ReviewMode::AcceptAll => Decision::Accept,
            ReviewMode::RejectAll => Decision::Reject,
            ReviewMode::Ask => ask(&change),
            ReviewMode::List => Decision::Skip,
        };
        let result = match decision {
            Decision::Accept => change.accept().map(|_| {
                sum.accepted += 1;
                format!("accepted   {}", change.pending.file)
            }),
            Decision::Reject => change.reject().map(|_| {
                sum.rejected += 1;
                format!("rejected   {shown}")
            }),
            Decision::Skip | Decision::Quit => {
                sum.kept += 1;
                quit = decision == Decision::Quit;
                Ok(format!("kept       {shown}"))
            }
        };
        match result {
            Ok(line) => println!("{line}"),
            Err(e) => {
                sum.errors += 1;
                println!("error      {shown}: {e}");
            }
        }
    }
    remove_empty_dirs(&dir);
    println!(
        "\n{} accepted, {} rejected, {} kept pending, {} error(s)",
        sum.accepted, sum.rejected, sum.kept, sum.errors
    );
    if mode == ReviewMode::List && sum.kept > 0 {
        println!(
            "(no terminal: only listed; run on a terminal, or pass --accept-all / --reject-all)"
        );
    }
    sum
}

fn paint_diff(line: &str, color: bool) -> String {
    let code = match line.chars().next() {
        _ if !color => return line.to_string(),
        Some('-') => "31",
        Some('+') => "32",
        Some('@') => "36",
        _ => return line.to_string(),
    };
    format!("\x1b[{code}m{line}\x1b[0m")
}

/// Asks on the terminal: accept, reject, skip or quit.
pub fn ask_on_terminal(change: &Change) -> Decision {
    let stdin = std::io::stdin();
    loop {
        print!(
            "{} ({}): [a]ccept, [r]eject, [s]kip, [q]uit? ",
            change.pending.scenario, change.pending.target
        );
        let _ = std::io::stdout().flush();
        let mut line = String::new();
        match stdin.lock().read_line(&mut line) {
            Ok(0) | Err(_) => return Decision::Quit,
            Ok(_) => {}
        }
        match line.trim().to_ascii_lowercase().as_str() {
            "a" | "accept" | "y" | "yes" => return Decision::Accept,
            "r" | "reject" | "n" | "no" => return Decision::Reject,
            "s" | "skip" | "" => return Decision::Skip,
            "q" | "quit" => return Decision::Quit,
            _ => println!("answer a, r, s or q"),
        }
    }
}

fn remove_empty_dirs(dir: &Path) {
    fn walk(d: &Path) -> bool {
        let Ok(entries) = std::fs::read_dir(d) else {
            return false;
        };
        let mut empty = true;
        for e in entries.flatten() {
            let p = e.path();
            if !(p.is_dir() && walk(&p) && std::fs::remove_dir(&p).is_ok()) {
                empty = false;
            }
        }
        empty
    }
    walk(dir);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars() -> Vars {
        Vars {
            workspace: "/tmp/streamcheck-AbC123/work".into(),
            home: "/tmp/streamcheck-AbC123/home".into(),
        }
    }

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
        assert!(g[1]["note"]["$regex"]
            .as_str()
            .unwrap()
            .starts_with("^agent "));
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
    fn flow_style_reads_back_as_the_same_value() {
        let v = json!({"type": "system", "s": "$uuid", "e": "$$x", "k": "a: b, c", "t": "true", "n": null,
            "num": 0.0004, "neg": -3, "arr": [], "obj": {}, "u": "日本語 \u{85} \u{7f}", "q": "it's \"x\"\\",
            "empty": "", "dash": "-x", "yes": "yes", "path": "$WORKSPACE/a.txt", "1": 1});
        let text = format!("- {}\n", flow(&v));
        let back: Vec<Value> = serde_yaml::from_str(&text).unwrap();
        assert_eq!(back[0], v, "{text}");
        assert!(
            text.starts_with("- {type: system, s: $uuid, e: $$x, "),
            "{text}"
        );
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

    const FILE: &str = "# yaml-language-server: $schema=../schema.json
description: d # keep me
prompt: p
expect:
  caliban:
    frames:
      - {type: a}   # caliban's
    exit_code: 0
  # a comment about claude-code
  claude-code:
    ignore: [{type: rate_limit_event}]
    frames:
    - {type: system}
    # a comment inside frames
    - type: result
      result: x

    exit_code: 1  # was 1
    requests: {count: 1}
  zzz:
    frames: [{type: z}]
";

    fn check_rewrite(text: &str, key: &str, frames: Option<&[Value]>, code: Option<i32>) -> String {
        let new = rewrite_expectation(text, key, frames, code).unwrap();
        let root = Path::new("scenarios");
        validate_rewrite(text, &new, &root.join("t/x.yaml"), root, key, frames, code)
            .unwrap_or_else(|e| panic!("{e}\n{new}"));
        new
    }

    #[test]
    fn rewrite_touches_only_frames_and_exit_code_of_the_target() {
        let frames = vec![
            json!({"type": "system", "subtype": "init"}),
            json!({"type": "result"}),
        ];
        let new = check_rewrite(FILE, "claude-code", Some(&frames), Some(0));
        assert!(new.contains("    frames:\n      - {type: system, subtype: init}\n      - {type: result}\n\n    exit_code: 0  # was 1\n    requests: {count: 1}\n"), "{new}");
        assert!(new.contains("description: d # keep me"));
        assert!(new.contains("      - {type: a}   # caliban's\n    exit_code: 0\n"));
        assert!(new.contains("  # a comment about claude-code\n"));
        assert!(!new.contains("a comment inside frames"));
        // Other targets: flow frames and a block without exit_code.
        let new = check_rewrite(FILE, "zzz", Some(&frames), Some(3));
        assert!(new.ends_with("  zzz:\n    frames:\n      - {type: system, subtype: init}\n      - {type: result}\n    exit_code: 3\n"), "{new}");
        let new = check_rewrite(FILE, "caliban", Some(&[]), None);
        assert!(
            new.contains("  caliban:\n    frames: []\n    exit_code: 0\n"),
            "{new}"
        );
    }

    #[test]
    fn rewrite_refuses_flow_style_and_missing_targets() {
        let flow = "description: d\nexpect: {claude-code: {frames: []}}\n";
        assert!(rewrite_expectation(flow, "claude-code", Some(&[]), None)
            .unwrap_err()
            .contains("flow style"));
        assert!(rewrite_expectation(FILE, "nope", Some(&[]), None)
            .unwrap_err()
            .contains("no `nope:`"));
    }

    #[test]
    fn pending_files_read_back() {
        let p = Pending {
            scenario: "basics/x".into(),
            file: "scenarios/basics/x.yaml".into(),
            expect: "claude-code".into(),
            target: "command:fake-cli.sh".into(),
            version: "9.9.9".into(),
            recorded_at: Some("2026-01-01T00:00:00Z".into()),
            notes: vec!["a: note".into()],
            exit_code: Some(0),
            frames: Some(vec![
                json!({"type": "system", "session_id": {"$capture": "session"}, "x": "$$lit"}),
            ]),
        };
        assert_eq!(Pending::parse(&p.to_yaml()).unwrap(), p);
        assert_eq!(
            p.path_in(Path::new("/p")),
            Path::new("/p/basics/x.command_fake-cli.sh.yaml")
        );
    }
}
