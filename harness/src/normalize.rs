//! Values that change from run to run, and the trial's sandbox paths: the one place that
//! says which they are. Each consumer hides them its own way, but by the same rules:
//!
//! - reports show [`redact`]ed values (a volatile value becomes `<key>`);
//! - drift compares [`comparable`] values and saves outputs with [`redact_sandbox`];
//! - compare keeps the frames [`with_paths`];
//! - `record` turns them into placeholders (`recording::generalise`), asking
//!   [`is_volatile_key`], [`looks_like_timestamp`], [`uuid_spans`] and [`sandbox_token`].
//!
//! Sandbox paths are written as `$WORKSPACE` and `$HOME`, the variables patterns
//! substitute back. What a uuid looks like is `$uuid`'s definition ([`pattern::is_uuid`]).

use crate::pattern::{self, is_pattern_text, Vars};
use regex::Regex;
use serde_json::Value;
use std::borrow::Cow;
use std::ops::Range;
use std::path::Path;
use std::sync::OnceLock;

/// Keys whose values change from run to run: durations, costs and times (`*_ms`, `*Ms`,
/// `*_time`, `*Time`, `*_at`, `*At`, `ttft*`, `*duration*`, `*cost*`, `time`, `timestamp`).
pub fn is_volatile_key(k: &str) -> bool {
    k == "timestamp"
        || k == "time"
        || k.ends_with("_ms")
        || k.ends_with("Ms")
        || k.ends_with("_time")
        || k.ends_with("Time")
        || k.ends_with("_at")
        || k.ends_with("At")
        || k.starts_with("ttft")
        || contains_ignore_case(k, "duration")
        || contains_ignore_case(k, "cost")
}

/// `needle` (lowercase ASCII) in `k`, any case, without allocating: this runs for every
/// key of every frame a report shows.
fn contains_ignore_case(k: &str, needle: &str) -> bool {
    k.as_bytes()
        .windows(needle.len())
        .any(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
}

/// Keys that name one run (`uuid`, `session_id`, `request_id`). Reports hide them;
/// `record` generalises them by value instead (a session is captured, a uuid is `$uuid`).
pub fn is_run_id_key(k: &str) -> bool {
    matches!(k, "uuid" | "session_id" | "request_id")
}

/// An ISO date and time at the start of a string (`2026-11-21T23:46:45.847Z`).
pub fn looks_like_timestamp(s: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}").expect("valid regex"))
        .is_match(s)
}

/// Where uuids sit in `s`, leftmost first and not overlapping.
pub fn uuid_spans(s: &str) -> Vec<Range<usize>> {
    const LEN: usize = 36;
    let mut spans = Vec::new();
    let mut i = 0;
    while i + LEN <= s.len() {
        if s.get(i..i + LEN).is_some_and(pattern::is_uuid) {
            spans.push(i..i + LEN);
            i += LEN;
        } else {
            i += 1;
        }
    }
    spans
}

/// The name of the trial's temp dir (`streamcheck-XXXXXX`): a string still holding it
/// after `$WORKSPACE` / `$HOME` were put in names the sandbox some other way (a path
/// mangled into a name, `-tmp-streamcheck-XXXXXX-work`).
pub fn sandbox_token(vars: &Vars) -> Option<String> {
    let base = Path::new(&vars.workspace).parent()?.file_name()?;
    let token = base.to_string_lossy().into_owned();
    (token.len() >= 8).then_some(token)
}

/// The sandbox's workspace and home in a string written as `$WORKSPACE` and `$HOME`.
pub fn redact_str(s: &str, vars: &Vars) -> String {
    redact_str_cow(s, vars).into_owned()
}

/// [`redact_str`], borrowing `s` when it holds no sandbox path (most strings).
fn redact_str_cow<'a>(s: &'a str, vars: &Vars) -> Cow<'a, str> {
    let holds = |p: &str| !p.is_empty() && s.contains(p);
    if !holds(&vars.workspace) && !holds(&vars.home) {
        return Cow::Borrowed(s);
    }
    let mut out = s.to_string();
    if !vars.workspace.is_empty() {
        out = out.replace(&vars.workspace, "$WORKSPACE");
    }
    if !vars.home.is_empty() {
        out = out.replace(&vars.home, "$HOME");
    }
    Cow::Owned(out)
}

/// [`redact_str`] in every string of a value.
pub fn with_paths(v: &Value, vars: &Vars) -> Value {
    map_strings(v, &|s| redact_str(s, vars))
}

/// [`redact_str`], then the sandbox's temp dir name, wherever it is left, as `<sandbox>`.
pub fn redact_sandbox_str(s: &str, vars: &Vars) -> String {
    hide_token(redact_str(s, vars), sandbox_token(vars).as_deref())
}

/// [`redact_sandbox_str`] in every string of a value.
pub fn redact_sandbox(v: &Value, vars: &Vars) -> Value {
    let token = sandbox_token(vars);
    map_strings(v, &|s| hide_token(redact_str(s, vars), token.as_deref()))
}

fn hide_token(s: String, token: Option<&str>) -> String {
    match token {
        Some(t) => s.replace(t, "<sandbox>"),
        None => s,
    }
}

/// For reports: the value of a volatile or run-id key becomes `<key>` (unless it is null
/// or written as a pattern, so an expectation shows what it asks for), and sandbox paths
/// become `$WORKSPACE` / `$HOME`.
pub fn redact(v: &Value, vars: &Vars) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| {
                    let x = if hides(k, x.is_null(), is_pattern_text(x)) {
                        Value::String(hidden(k))
                    } else {
                        redact(x, vars)
                    };
                    (k.clone(), x)
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(|x| redact(x, vars)).collect()),
        Value::String(s) => Value::String(redact_str(s, vars)),
        other => other.clone(),
    }
}

/// Whether [`redact`] hides the value under key `k`, given whether that value is null and
/// whether it is written in pattern syntax.
pub fn hides(k: &str, null: bool, pattern_text: bool) -> bool {
    (is_volatile_key(k) || is_run_id_key(k)) && !null && !pattern_text
}

/// What a hidden value of key `k` is shown as.
pub fn hidden(k: &str) -> String {
    format!("<{k}>")
}

/// [`redact`]`(v)` written as compact JSON into `out`, without building the redacted value
/// (the differ does this for every frame of a run).
pub fn write_redacted(out: &mut Vec<u8>, v: &Value, vars: &Vars) {
    match v {
        Value::Object(m) => {
            out.push(b'{');
            for (i, (k, x)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_json(out, k);
                out.push(b':');
                if hides(k, x.is_null(), is_pattern_text(x)) {
                    write_json(out, &hidden(k));
                } else {
                    write_redacted(out, x, vars);
                }
            }
            out.push(b'}');
        }
        Value::Array(a) => {
            out.push(b'[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_redacted(out, x, vars);
            }
            out.push(b']');
        }
        Value::String(s) => write_json(out, redact_str_cow(s, vars).as_ref()),
        other => write_json(out, other),
    }
}

/// `v` as compact JSON, appended to `out`.
pub fn write_json(out: &mut Vec<u8>, v: &(impl serde::Serialize + ?Sized)) {
    // Writing to a Vec cannot fail, and these values (strings, JSON values) always serialize.
    let _ = serde_json::to_writer(out, v);
}

/// For comparing two runs' frames: [`redact`]ed, uuids as `<uuid>`, a socket named by its
/// process id (`.../cc-socks/17958.sock`) as `<pid>.sock`, and the CLI's own version
/// (`claude_code_version`) left out, so runs that differ only there compare equal.
pub fn comparable(v: &Value) -> Value {
    static PID_SOCKET: OnceLock<Regex> = OnceLock::new();
    let pid_socket = PID_SOCKET.get_or_init(|| Regex::new(r"(^|/)[0-9]+\.sock$").unwrap());
    fn walk(v: &Value, pid_socket: &Regex) -> Value {
        match v {
            Value::String(s) if pattern::is_uuid(s) => "<uuid>".into(),
            Value::String(s) if pid_socket.is_match(s) => {
                pid_socket.replace(s, "${1}<pid>.sock").into_owned().into()
            }
            Value::Array(a) => Value::Array(a.iter().map(|x| walk(x, pid_socket)).collect()),
            Value::Object(m) => Value::Object(
                m.iter()
                    .filter(|(k, _)| k.as_str() != "claude_code_version")
                    .map(|(k, x)| (k.clone(), walk(x, pid_socket)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
    walk(&redact(v, &Vars::default()), pid_socket)
}

/// `v` with every string `s` in it replaced by `f(s)`.
pub fn map_strings(v: &Value, f: &impl Fn(&str) -> String) -> Value {
    match v {
        Value::String(s) => Value::String(f(s)),
        Value::Array(a) => Value::Array(a.iter().map(|x| map_strings(x, f)).collect()),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| (k.clone(), map_strings(x, f)))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    /// A trial's sandbox paths, as the runner makes them.
    pub(crate) fn vars() -> Vars {
        Vars {
            workspace: "/tmp/streamcheck-AbC123/work".into(),
            home: "/tmp/streamcheck-AbC123/home".into(),
        }
    }

    #[test]
    fn written_redaction_is_the_redacted_value_as_json() {
        let vars = vars();
        let values = [
            json!({"session_id": "abc", "cwd": "/tmp/streamcheck-AbC123/work/a\"b", "x": [{"duration_ms": 5}, null, 1.5, -3, true]}),
            json!({"uuid": null, "total_cost_usd": "$number", "timestamp": {"$regex": "^2"}, "t": "é\n\u{1}"}),
            json!(["/tmp/streamcheck-AbC123/home/.claude", {"request_id": {"nested": 1}}, []]),
            json!("plain"),
            json!({}),
        ];
        for v in values {
            let mut out = Vec::new();
            write_redacted(&mut out, &v, &vars);
            assert_eq!(
                String::from_utf8(out).unwrap(),
                redact(&v, &vars).to_string()
            );
        }
    }

    #[test]
    fn redaction_hides_volatile_values_and_paths() {
        let vars = Vars {
            workspace: "/tmp/w".into(),
            home: "/tmp/h".into(),
        };
        let v = json!({"session_id": "abc", "cwd": "/tmp/w", "x": {"duration_ms": 5, "file": "/tmp/h/.claude"}});
        assert_eq!(
            redact(&v, &vars),
            json!({"session_id": "<session_id>", "cwd": "$WORKSPACE", "x": {"duration_ms": "<duration_ms>", "file": "$HOME/.claude"}})
        );
    }

    #[test]
    fn one_key_policy_for_reports_and_recordings() {
        for k in [
            "duration_ms",
            "duration_api_ms",
            "ttft_ms",
            "ttft_stream_ms",
            "time_to_request_ms",
            "total_cost_usd",
            "costUSD",
            "timestamp",
            "retry_delay_ms",
            "created_at",
            "startedAt",
        ] {
            assert!(is_volatile_key(k), "{k}");
        }
        for k in ["num_turns", "inputTokens", "model", "type"] {
            assert!(!is_volatile_key(k) && !is_run_id_key(k), "{k}");
        }
        // A pattern in an expectation is shown as written.
        let v = json!({"duration_ms": "$number", "uuid": {"$capture": "u"}, "cost": null});
        assert_eq!(redact(&v, &Vars::default()), v);
    }

    #[test]
    fn uuids_are_found_inside_strings() {
        let s =
            "agent 0f0e4c1a-1f53-402d-a4a7-3fc5fb8e57fb and dda7b70a-1f53-402d-a4a7-3fc5fb8e57fbff";
        let spans = uuid_spans(s);
        assert_eq!(spans.len(), 2);
        assert_eq!(&s[spans[0].clone()], "0f0e4c1a-1f53-402d-a4a7-3fc5fb8e57fb");
        assert_eq!(spans[1].start, 47);
        assert!(uuid_spans("日本 0f0e4c1a-1f53-402d-a4a7-3fc5fb8e57f").is_empty());
    }

    #[test]
    fn the_sandbox_is_hidden_even_when_mangled_into_a_name() {
        let v = json!({"p": "/tmp/streamcheck-AbC123/home/.claude/projects/-tmp-streamcheck-AbC123-work/x", "n": 1});
        assert_eq!(
            redact_sandbox(&v, &vars()),
            json!({"p": "$HOME/.claude/projects/-tmp-<sandbox>-work/x", "n": 1})
        );
        assert_eq!(
            with_paths(&v, &vars())["p"],
            "$HOME/.claude/projects/-tmp-streamcheck-AbC123-work/x"
        );
        assert_eq!(sandbox_token(&Vars::default()), None);
    }

    #[test]
    fn comparable_frames_ignore_uuids_durations_and_the_version() {
        let a = json!({"uuid": "x", "id": "0f0e4c1a-1f53-402d-a4a7-3fc5fb8e57fb", "claude_code_version": "1", "duration_ms": 3});
        let b = json!({"uuid": "y", "id": "dda7b70a-1f53-402d-a4a7-3fc5fb8e57fb", "claude_code_version": "2", "duration_ms": 9});
        assert_eq!(comparable(&a), comparable(&b));
        assert_ne!(comparable(&a), comparable(&json!({"uuid": "x"})));
    }

    /// A socket named by its process id differs from run to run: drift listed
    /// `messaging_socket_path` as a changed value for that alone.
    #[test]
    fn comparable_frames_ignore_a_sockets_process_id_but_not_its_folder() {
        let sock = |p: &str| json!({"messaging_socket_path": p});
        let a = comparable(&sock("/tmp/x/tmp/cc-socks/17958.sock"));
        assert_eq!(a, comparable(&sock("/tmp/x/tmp/cc-socks/17959.sock")));
        assert_eq!(a["messaging_socket_path"], "/tmp/x/tmp/cc-socks/<pid>.sock");
        assert_ne!(a, comparable(&sock("/tmp/x/other/17958.sock")));
        assert_ne!(
            comparable(&sock("a17958.sock")),
            comparable(&sock("a17959.sock"))
        );
    }
}
