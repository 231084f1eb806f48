//! Parity between two targets: the same scenario run on both, each run mapped into
//! neutral events by its dialect's adapter ([`crate::dialect`]), then compared aspect by
//! aspect. Differences in substance (a retry one CLI does not announce, another exit
//! code for the same failure, another result, a missing tool result, other tool calls,
//! other text) are reported per scenario; the known differences in shape between the
//! dialects (frame names, envelopes, session ids, field names) are listed once.
//!
//! - [`compare`]: the pure core, over two [`Recorded`] outputs (frames + exit code)
//! - [`observed`]: two folders of captured runs (`NAME.stdout.jsonl`, `NAME.exit_code`, ...)
//! - [`run`]: runs the scenarios on both targets through [`crate::suite`]
//! - [`write`]: `parity.md` and `parity.json`

use crate::dialect::{self, Event, Neutral};
use crate::divergence::Kind;
use crate::output::Output;
use crate::pattern::Vars;
use crate::report::{redact_str, timestamp, write_atomic, ReportWriter};
use crate::runner::{RunOptions, Status, Trial};
use crate::scenario::{CloseStdin, Scenario, StdinLine};
use crate::suite;
use crate::target::{Dialect, NotInstalled, Target};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

pub const SCHEMA_VERSION: u32 = 1;

// ---------------------------------------------------------------------------
// What one run left behind
// ---------------------------------------------------------------------------

/// One run, as recorded: what the comparison looks at.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Recorded {
    /// The JSON objects the CLI printed on stdout, in order.
    pub frames: Vec<Value>,
    pub exit_code: Option<i32>,
    /// How it ended when not by exiting: `signal 9`, `killed (timeout)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<String>,
    /// stdout lines that are not JSON objects (all of stdout with `--output-format text`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub non_json: Vec<String>,
    /// Requests the CLI sent to the model (background requests left out), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<usize>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub stderr: String,
}

impl Recorded {
    /// From stdout as printed and the exit code.
    pub fn from_stdout(stdout: &[u8], exit_code: Option<i32>) -> Recorded {
        let out = Output::parse(stdout);
        Recorded {
            non_json: non_json(&out),
            frames: out.frames.into_iter().map(|f| f.value).collect(),
            exit_code,
            ..Recorded::default()
        }
    }

    /// From a finished trial, with its sandbox paths written as `$WORKSPACE` / `$HOME`
    /// so two trials' outputs compare.
    pub fn from_trial(t: &Trial) -> Recorded {
        let requests = t
            .journal
            .iter()
            .filter(|e| {
                matches!(
                    e.answer,
                    stub_api::Answer::Step { .. } | stub_api::Answer::Unscripted { .. }
                ) && e.path.ends_with("/v1/messages")
            })
            .count();
        let ended = match (t.exit.termination, t.exit.signal) {
            (k, _) if k.by_harness() => Some(format!("killed ({k})")),
            (_, Some(s)) => Some(format!("signal {s}")),
            _ => None,
        };
        Recorded {
            frames: t
                .output
                .frames
                .iter()
                .map(|f| with_paths(&f.value, &t.vars))
                .collect(),
            exit_code: t.exit.code,
            ended,
            non_json: non_json(&t.output)
                .into_iter()
                .map(|l| redact_str(&l, &t.vars))
                .collect(),
            requests: Some(requests),
            stderr: redact_str(&t.stderr.text(), &t.vars),
        }
    }

    /// From a capture folder: `NAME.stdout.jsonl`, `NAME.exit_code`, and when present
    /// `NAME.stderr.txt` and `NAME.requests.jsonl` (one line per request).
    pub fn from_capture(dir: &Path, name: &str) -> Result<Recorded, String> {
        let read = |ext: &str| std::fs::read(dir.join(format!("{name}.{ext}")));
        let stdout = read("stdout.jsonl").unwrap_or_default();
        let code =
            read("exit_code").map_err(|e| format!("{}/{name}.exit_code: {e}", dir.display()))?;
        let code = String::from_utf8_lossy(&code).trim().to_string();
        let exit_code = code.parse::<i32>().map_err(|_| {
            format!(
                "{}/{name}.exit_code: `{code}` is not an exit code",
                dir.display()
            )
        })?;
        let mut rec = Recorded::from_stdout(&stdout, Some(exit_code));
        rec.stderr = read("stderr.txt")
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default();
        rec.requests = read("requests.jsonl").ok().map(|b| {
            String::from_utf8_lossy(&b)
                .lines()
                .filter(|l| !l.trim().is_empty())
                .filter(|l| {
                    let v: Value = serde_json::from_str(l).unwrap_or(Value::Null);
                    !is_title_request(v.get("body").unwrap_or(&v))
                })
                .count()
        });
        Ok(rec)
    }

    fn exit_text(&self) -> String {
        match (&self.ended, self.exit_code) {
            (Some(e), _) => e.clone(),
            (None, Some(c)) => c.to_string(),
            (None, None) => "unknown".into(),
        }
    }
}

/// Claude Code's background session-title request (no tools, an output schema with a
/// `title` property), which the harness's stub answers by a built-in rule: not part of
/// the conversation, so not counted.
fn is_title_request(body: &Value) -> bool {
    let no_tools = body
        .get("tools")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty);
    let title = body
        .pointer("/output_config/format/schema/properties/title")
        .is_some();
    no_tools && title
}

fn non_json(out: &Output) -> Vec<String> {
    out.bad_lines
        .iter()
        .filter(|b| b.problem != crate::output::LineProblem::NoTrailingNewline)
        .map(|b| b.excerpt.clone())
        .collect()
}

fn with_paths(v: &Value, vars: &Vars) -> Value {
    match v {
        Value::String(s) => Value::String(redact_str(s, vars)),
        Value::Array(a) => Value::Array(a.iter().map(|x| with_paths(x, vars)).collect()),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| (k.clone(), with_paths(x, vars)))
                .collect(),
        ),
        other => other.clone(),
    }
}

// ---------------------------------------------------------------------------
// The comparison core
// ---------------------------------------------------------------------------

/// What is compared, in report order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Aspect {
    Exit,
    Init,
    Turns,
    Result,
    ResultText,
    Text,
    FinalText,
    Thinking,
    ToolCalls,
    ToolResults,
    Retries,
    Requests,
    Warnings,
    UserEcho,
    NonJson,
}

impl Aspect {
    pub const ALL: [Aspect; 15] = [
        Aspect::Exit,
        Aspect::Init,
        Aspect::Turns,
        Aspect::Result,
        Aspect::ResultText,
        Aspect::Text,
        Aspect::FinalText,
        Aspect::Thinking,
        Aspect::ToolCalls,
        Aspect::ToolResults,
        Aspect::Retries,
        Aspect::Requests,
        Aspect::Warnings,
        Aspect::UserEcho,
        Aspect::NonJson,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Aspect::Exit => "exit code",
            Aspect::Init => "init",
            Aspect::Turns => "turns",
            Aspect::Result => "result",
            Aspect::ResultText => "result text",
            Aspect::Text => "assistant text",
            Aspect::FinalText => "final text",
            Aspect::Thinking => "thinking",
            Aspect::ToolCalls => "tool calls",
            Aspect::ToolResults => "tool results",
            Aspect::Retries => "retries",
            Aspect::Requests => "requests",
            Aspect::Warnings => "warnings",
            Aspect::UserEcho => "user echo",
            Aspect::NonJson => "non-JSON stdout",
        }
    }

    /// The overview table's column header.
    fn short(self) -> &'static str {
        match self {
            Aspect::Exit => "exit",
            Aspect::Init => "init",
            Aspect::Turns => "turns",
            Aspect::Result => "result",
            Aspect::ResultText => "res.text",
            Aspect::Text => "text",
            Aspect::FinalText => "final",
            Aspect::Thinking => "think",
            Aspect::ToolCalls => "calls",
            Aspect::ToolResults => "tool res.",
            Aspect::Retries => "retries",
            Aspect::Requests => "req.",
            Aspect::Warnings => "warn",
            Aspect::UserEcho => "echo",
            Aspect::NonJson => "non-JSON",
        }
    }
}

/// How the two sides compare on one aspect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Neither side has anything here.
    Neither,
    Same,
    /// Different only as the dialects are known to differ.
    Shape,
    /// Different in substance.
    Differs,
}

impl Verdict {
    pub fn symbol(self) -> &'static str {
        match self {
            Verdict::Neither => "·",
            Verdict::Same => "=",
            Verdict::Shape => "≈",
            Verdict::Differs => "≠",
        }
    }
}

/// One aspect, both values side by side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AspectRow {
    pub aspect: Aspect,
    pub a: String,
    pub b: String,
    pub verdict: Verdict,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One side of a comparison.
#[derive(Debug, Clone, Copy)]
pub struct Side<'a> {
    pub name: &'a str,
    pub dialect: Dialect,
    pub run: &'a Recorded,
}

/// The comparison of two runs of one scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub rows: Vec<AspectRow>,
    /// Per side: frame kinds that carry nothing neutral.
    pub unmapped: [BTreeSet<String>; 2],
}

impl Comparison {
    pub fn row(&self, aspect: Aspect) -> Option<&AspectRow> {
        self.rows.iter().find(|r| r.aspect == aspect)
    }

    pub fn verdict(&self, aspect: Aspect) -> Verdict {
        self.row(aspect).map_or(Verdict::Neither, |r| r.verdict)
    }

    /// The substantive differences, one sentence each.
    pub fn differences(&self, a: &str, b: &str) -> Vec<String> {
        self.rows
            .iter()
            .filter(|r| r.verdict == Verdict::Differs)
            .map(|r| {
                let mut s = format!(
                    "{}: {a} {}, {b} {}",
                    r.aspect.label(),
                    clip(&r.a, 160),
                    clip(&r.b, 160)
                );
                if let Some(n) = &r.note {
                    let _ = write!(s, " ({n})");
                }
                s
            })
            .collect()
    }
}

/// Everything the aspects need from one side.
struct Facts {
    inits: usize,
    /// (neutral subtype, raw subtype, is_error, text)
    results: Vec<(String, String, bool, Option<String>)>,
    texts: Vec<String>,
    final_text: Option<String>,
    thinking: Vec<String>,
    /// (id, name, input)
    calls: Vec<(String, String, Value)>,
    /// (tool_use_id, is_error, text)
    tool_results: Vec<(String, bool, String)>,
    /// (attempt, status)
    retries: Vec<(Option<u64>, Option<u64>)>,
    warnings: Vec<String>,
    echoes: Vec<String>,
}

impl Facts {
    fn of(n: &Neutral) -> Facts {
        let mut f = Facts {
            inits: 0,
            results: vec![],
            texts: vec![],
            final_text: None,
            thinking: vec![],
            calls: vec![],
            tool_results: vec![],
            retries: vec![],
            warnings: vec![],
            echoes: vec![],
        };
        let mut last_message = None;
        for e in &n.events {
            match e {
                Event::Init { .. } => f.inits += 1,
                Event::Text { text, message } => {
                    f.texts.push(text.clone());
                    last_message = Some(*message);
                }
                Event::Thinking { text, .. } => f.thinking.push(text.clone()),
                Event::ToolCall { id, name, input } => {
                    f.calls.push((id.clone(), name.clone(), input.clone()))
                }
                Event::ToolResult {
                    tool_use_id,
                    is_error,
                    text,
                } => f
                    .tool_results
                    .push((tool_use_id.clone(), *is_error, text.clone())),
                Event::Retry { attempt, status } => f.retries.push((*attempt, *status)),
                Event::Warning { text } => f.warnings.push(text.clone()),
                Event::UserEcho { text } => f.echoes.push(text.clone()),
                Event::Result {
                    subtype,
                    raw_subtype,
                    is_error,
                    text,
                } => f.results.push((
                    subtype.clone(),
                    raw_subtype.clone(),
                    *is_error,
                    text.clone(),
                )),
            }
        }
        // The final text: the text blocks of the last assistant message that had text.
        if let Some(m) = last_message {
            f.final_text = Some(
                n.events
                    .iter()
                    .filter_map(|e| match e {
                        Event::Text { text, message } if *message == m => Some(text.as_str()),
                        _ => None,
                    })
                    .collect(),
            );
        }
        f
    }
}

/// Compares two recorded runs of one scenario. Pure: frames and exit codes in, rows out.
pub fn compare(a: Side, b: Side) -> Comparison {
    let (na, nb) = (
        dialect::neutral(a.dialect, &a.run.frames),
        dialect::neutral(b.dialect, &b.run.frames),
    );
    let (fa, fb) = (Facts::of(&na), Facts::of(&nb));
    let rows = Aspect::ALL
        .iter()
        .map(|&aspect| aspect_row(aspect, &a, &b, &fa, &fb))
        .collect();
    Comparison {
        rows,
        unmapped: [na.unmapped, nb.unmapped],
    }
}

fn quoted(s: &str) -> String {
    format!("\"{s}\"")
}

fn list_or(items: &[String], empty: &str) -> String {
    if items.is_empty() {
        empty.to_string()
    } else {
        items.join(" ")
    }
}

fn row(aspect: Aspect, a: String, b: String, verdict: Verdict, note: Option<String>) -> AspectRow {
    AspectRow {
        aspect,
        a,
        b,
        verdict,
        note,
    }
}

/// Same / Differs / Neither for two displayed lists compared by a key.
fn simple<K: PartialEq>(
    aspect: Aspect,
    (ka, da): (K, String),
    (kb, db): (K, String),
    empty: bool,
) -> AspectRow {
    let verdict = if empty {
        Verdict::Neither
    } else if ka == kb {
        Verdict::Same
    } else {
        Verdict::Differs
    };
    row(aspect, da, db, verdict, None)
}

fn aspect_row(aspect: Aspect, a: &Side, b: &Side, fa: &Facts, fb: &Facts) -> AspectRow {
    let (an, bn) = (a.name, b.name);
    match aspect {
        Aspect::Exit => {
            let (ea, eb) = (a.run.exit_text(), b.run.exit_text());
            let same = ea == eb;
            let note = match (fa.results.last(), fb.results.last()) {
                (Some(x), Some(y)) if !same && x.0 == y.0 && x.2 == y.2 => Some(format!(
                    "for the same outcome: {} with is_error {}",
                    x.0, x.2
                )),
                _ => None,
            };
            row(
                aspect,
                ea,
                eb,
                if same {
                    Verdict::Same
                } else {
                    Verdict::Differs
                },
                note,
            )
        }
        Aspect::Init => {
            let (x, y) = (fa.inits, fb.inits);
            let (verdict, note) = match (x, y) {
                (0, 0) => (Verdict::Neither, None),
                _ if x == y => (Verdict::Same, None),
                (0, _) => (
                    Verdict::Differs,
                    Some(format!("{an} prints no system/init")),
                ),
                (_, 0) => (
                    Verdict::Differs,
                    Some(format!("{bn} prints no system/init")),
                ),
                _ => (
                    Verdict::Shape,
                    Some("both announce the session, in a different number of frames".into()),
                ),
            };
            row(aspect, x.to_string(), y.to_string(), verdict, note)
        }
        Aspect::Turns => {
            let (x, y) = (fa.results.len(), fb.results.len());
            let note = match (x, y) {
                (0, y) if y > 0 => Some(format!("{an} prints no result frame")),
                (x, 0) if x > 0 => Some(format!("{bn} prints no result frame")),
                _ => None,
            };
            let mut r = simple(
                aspect,
                (x, x.to_string()),
                (y, y.to_string()),
                x == 0 && y == 0,
            );
            r.note = note;
            r
        }
        Aspect::Result => {
            let show = |f: &Facts| {
                list_or(
                    &f.results
                        .iter()
                        .map(|(_, raw, err, _)| format!("{raw} (is_error {err})"))
                        .collect::<Vec<_>>(),
                    "none",
                )
            };
            let key = |f: &Facts| -> Vec<(String, bool)> {
                f.results.iter().map(|r| (r.0.clone(), r.2)).collect()
            };
            let raw = |f: &Facts| -> Vec<(String, bool)> {
                f.results.iter().map(|r| (r.1.clone(), r.2)).collect()
            };
            let (verdict, note) = if fa.results.is_empty() && fb.results.is_empty() {
                (Verdict::Neither, None)
            } else if key(fa) != key(fb) {
                (Verdict::Differs, None)
            } else if raw(fa) != raw(fb) {
                (
                    Verdict::Shape,
                    Some("the same outcome under each dialect's subtype name".into()),
                )
            } else {
                (Verdict::Same, None)
            };
            row(aspect, show(fa), show(fb), verdict, note)
        }
        Aspect::ResultText => {
            let texts = |f: &Facts| -> Vec<Option<String>> {
                f.results.iter().map(|r| r.3.clone()).collect()
            };
            let show = |f: &Facts| {
                list_or(
                    &f.results
                        .iter()
                        .map(|r| r.3.as_deref().map_or("(none)".into(), quoted))
                        .collect::<Vec<_>>(),
                    "none",
                )
            };
            let empty = texts(fa).iter().chain(&texts(fb)).all(Option::is_none);
            simple(aspect, (texts(fa), show(fa)), (texts(fb), show(fb)), empty)
        }
        Aspect::Text => {
            let show = |f: &Facts| {
                list_or(
                    &f.texts.iter().map(|t| quoted(t)).collect::<Vec<_>>(),
                    "none",
                )
            };
            // Compared as one string: how the text is cut into blocks and deltas is shape.
            simple(
                aspect,
                (fa.texts.concat(), show(fa)),
                (fb.texts.concat(), show(fb)),
                fa.texts.is_empty() && fb.texts.is_empty(),
            )
        }
        Aspect::FinalText => {
            let show = |f: &Facts| f.final_text.as_deref().map_or("none".into(), quoted);
            simple(
                aspect,
                (fa.final_text.clone(), show(fa)),
                (fb.final_text.clone(), show(fb)),
                fa.final_text.is_none() && fb.final_text.is_none(),
            )
        }
        Aspect::Thinking => {
            let show = |f: &Facts| {
                list_or(
                    &f.thinking.iter().map(|t| quoted(t)).collect::<Vec<_>>(),
                    "none",
                )
            };
            simple(
                aspect,
                (fa.thinking.concat(), show(fa)),
                (fb.thinking.concat(), show(fb)),
                fa.thinking.is_empty() && fb.thinking.is_empty(),
            )
        }
        Aspect::ToolCalls => {
            let show = |f: &Facts| {
                list_or(
                    &f.calls
                        .iter()
                        .map(|(_, name, input)| format!("{name} {input}"))
                        .collect::<Vec<_>>(),
                    "none",
                )
            };
            let key = |f: &Facts| -> Vec<(String, Value)> {
                f.calls
                    .iter()
                    .map(|(_, n, i)| (n.clone(), i.clone()))
                    .collect()
            };
            let names =
                |f: &Facts| -> Vec<String> { f.calls.iter().map(|c| c.1.clone()).collect() };
            let mut r = simple(
                aspect,
                (key(fa), show(fa)),
                (key(fb), show(fb)),
                fa.calls.is_empty() && fb.calls.is_empty(),
            );
            if r.verdict == Verdict::Differs {
                r.note = Some(if names(fa) == names(fb) {
                    "the same tools with different input".into()
                } else {
                    format!(
                        "{an} calls {} tool(s), {bn} {}",
                        fa.calls.len(),
                        fb.calls.len()
                    )
                });
            }
            r
        }
        Aspect::ToolResults => tool_results_row(an, bn, fa, fb),
        Aspect::Retries => {
            let show = |f: &Facts| {
                list_or(
                    &f.retries
                        .iter()
                        .map(|(attempt, status)| {
                            let s = status.map_or("?".into(), |s| s.to_string());
                            match attempt {
                                Some(n) => format!("{s} (attempt {n})"),
                                None => s,
                            }
                        })
                        .collect::<Vec<_>>(),
                    "none",
                )
            };
            let statuses =
                |f: &Facts| -> Vec<Option<u64>> { f.retries.iter().map(|r| r.1).collect() };
            let (verdict, note) = if fa.retries.is_empty() && fb.retries.is_empty() {
                (Verdict::Neither, None)
            } else if statuses(fa) == statuses(fb) {
                if fa.retries == fb.retries {
                    (Verdict::Same, None)
                } else {
                    (
                        Verdict::Shape,
                        Some("attempts are numbered differently".into()),
                    )
                }
            } else {
                let silent = |name: &str, f: &Facts, run: &Recorded| {
                    let sent = run
                        .requests
                        .map(|n| format!(" in {n} request(s)"))
                        .unwrap_or_default();
                    match f.retries.len() {
                        0 => format!("{name} announces no retry{sent}"),
                        1 => format!("{name} announces 1 retry{sent}"),
                        n => format!("{name} announces {n} retries{sent}"),
                    }
                };
                (
                    Verdict::Differs,
                    Some(format!(
                        "{}; {}",
                        silent(an, fa, a.run),
                        silent(bn, fb, b.run)
                    )),
                )
            };
            row(aspect, show(fa), show(fb), verdict, note)
        }
        Aspect::Requests => {
            let show = |r: Option<usize>| r.map_or("unknown".into(), |n| n.to_string());
            let (x, y) = (a.run.requests, b.run.requests);
            let verdict = match (x, y) {
                (Some(x), Some(y)) if x == y => Verdict::Same,
                (Some(_), Some(_)) => Verdict::Differs,
                _ => Verdict::Neither,
            };
            row(aspect, show(x), show(y), verdict, None)
        }
        Aspect::Warnings => {
            let show = |f: &Facts| {
                list_or(
                    &f.warnings.iter().map(|t| quoted(t)).collect::<Vec<_>>(),
                    "none",
                )
            };
            simple(
                aspect,
                (fa.warnings.clone(), show(fa)),
                (fb.warnings.clone(), show(fb)),
                fa.warnings.is_empty() && fb.warnings.is_empty(),
            )
        }
        Aspect::UserEcho => {
            let show = |f: &Facts| {
                list_or(
                    &f.echoes.iter().map(|t| quoted(t)).collect::<Vec<_>>(),
                    "none",
                )
            };
            simple(
                aspect,
                (fa.echoes.clone(), show(fa)),
                (fb.echoes.clone(), show(fb)),
                fa.echoes.is_empty() && fb.echoes.is_empty(),
            )
        }
        Aspect::NonJson => {
            let (x, y) = (&a.run.non_json, &b.run.non_json);
            let show =
                |l: &Vec<String>| list_or(&l.iter().map(|t| quoted(t)).collect::<Vec<_>>(), "none");
            simple(
                aspect,
                (x.clone(), show(x)),
                (y.clone(), show(y)),
                x.is_empty() && y.is_empty(),
            )
        }
    }
}

/// Tool results, paired by tool_use id in call order. Output that one side wraps in
/// more text (caliban's Bash prints the command, exit code, stdout and stderr) is shape.
fn tool_results_row(an: &str, bn: &str, fa: &Facts, fb: &Facts) -> AspectRow {
    let mut ids: Vec<String> = Vec::new();
    for id in fa
        .calls
        .iter()
        .chain(&fb.calls)
        .map(|c| &c.0)
        .chain(fa.tool_results.iter().chain(&fb.tool_results).map(|r| &r.0))
    {
        if !ids.contains(id) {
            ids.push(id.clone());
        }
    }
    let name_of = |id: &str| {
        fa.calls
            .iter()
            .chain(&fb.calls)
            .find(|c| c.0 == id)
            .map_or_else(|| id.to_string(), |c| c.1.clone())
    };
    let find = |f: &Facts, id: &str| f.tool_results.iter().find(|r| r.0 == id).cloned();
    let show = |r: &Option<(String, bool, String)>| match r {
        None => "missing".to_string(),
        Some((_, err, text)) => format!(
            "{} {}",
            if *err { "error" } else { "ok" },
            quoted(&clip(text, 100))
        ),
    };
    let mut verdict = Verdict::Neither;
    let mut notes = Vec::new();
    let (mut da, mut db) = (Vec::new(), Vec::new());
    for id in &ids {
        let name = name_of(id);
        let (ra, rb) = (find(fa, id), find(fb, id));
        da.push(format!("{name}: {}", show(&ra)));
        db.push(format!("{name}: {}", show(&rb)));
        let v = match (&ra, &rb) {
            (None, None) => Verdict::Neither,
            (Some(_), None) => {
                notes.push(format!("{bn} gives no result for {name} ({id})"));
                Verdict::Differs
            }
            (None, Some(_)) => {
                notes.push(format!("{an} gives no result for {name} ({id})"));
                Verdict::Differs
            }
            (Some((_, ea, ta)), Some((_, eb, tb))) => {
                let (ta, tb) = (ta.trim(), tb.trim());
                if ea != eb {
                    notes.push(format!("{name}: {an} is_error {ea}, {bn} is_error {eb}"));
                    Verdict::Differs
                } else if ta == tb {
                    Verdict::Same
                } else if !ta.is_empty() && !tb.is_empty() && (ta.contains(tb) || tb.contains(ta)) {
                    notes.push(format!(
                        "{name}: the same output, wrapped in more text on one side"
                    ));
                    Verdict::Shape
                } else {
                    notes.push(format!("{name}: different output"));
                    Verdict::Differs
                }
            }
        };
        verdict = verdict.max(v);
    }
    AspectRow {
        aspect: Aspect::ToolResults,
        a: list_or(&da, "none"),
        b: list_or(&db, "none"),
        verdict,
        note: (!notes.is_empty()).then(|| notes.join("; ")),
    }
}

// ---------------------------------------------------------------------------
// The report
// ---------------------------------------------------------------------------

/// A target as the comparison names it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetSide {
    pub name: String,
    pub version: String,
    pub dialect: String,
}

/// One scenario (or captured case) on both targets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScenarioParity {
    pub scenario: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Why the two sides could not be compared (skipped, not captured, not started).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_compared: Option<String>,
    /// Targets that could not run the scenario as written (it has no expectation for them
    /// and they rejected its flags or stdin).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cannot_run_as_written: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aspects: Vec<AspectRow>,
    /// The substantive differences, one sentence each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub differences: Vec<String>,
}

impl ScenarioParity {
    fn not_compared(scenario: &str, why: String) -> ScenarioParity {
        ScenarioParity {
            scenario: scenario.to_string(),
            description: None,
            not_compared: Some(why),
            cannot_run_as_written: vec![],
            notes: vec![],
            aspects: vec![],
            differences: vec![],
        }
    }

    /// Compares two runs and keeps the rows, the differences, and stderr as context.
    pub fn of(scenario: &str, a: Side, b: Side) -> (ScenarioParity, [BTreeSet<String>; 2]) {
        let c = compare(a, b);
        let mut notes = Vec::new();
        for side in [&a, &b] {
            if let Some(line) = side.run.stderr.lines().find(|l| !l.trim().is_empty()) {
                notes.push(format!("{} stderr: {}", side.name, clip(line.trim(), 200)));
            }
        }
        let differences = c.differences(a.name, b.name);
        (
            ScenarioParity {
                scenario: scenario.to_string(),
                description: None,
                not_compared: None,
                cannot_run_as_written: vec![],
                notes,
                aspects: c.rows,
                differences,
            },
            c.unmapped,
        )
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParityCounts {
    pub scenarios: usize,
    pub compared: usize,
    /// Run on both as written, with at least one substantive difference.
    pub differ: usize,
    pub not_compared: usize,
    /// Scenarios a target could not run as written.
    pub cannot_run_as_written: usize,
}

/// `parity.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Parity {
    pub schema_version: u32,
    pub generated_at: String,
    /// The command that made this report.
    pub command: String,
    pub a: TargetSide,
    pub b: TargetSide,
    pub counts: ParityCounts,
    /// Caveats about the whole comparison.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// How the dialects differ in shape: said once here, not per scenario.
    pub known_shape_differences: Vec<String>,
    /// Per target: kinds of frames that carry nothing neutral, seen in these runs.
    pub unmapped_frames: BTreeMap<String, Vec<String>>,
    /// Per aspect: how many compared scenarios differ there in substance.
    pub differences_by_aspect: BTreeMap<String, usize>,
    pub scenarios: Vec<ScenarioParity>,
}

impl Parity {
    pub fn new(
        command: String,
        a: TargetSide,
        b: TargetSide,
        results: Vec<(ScenarioParity, [BTreeSet<String>; 2])>,
    ) -> Parity {
        let mut unmapped: [BTreeSet<String>; 2] = Default::default();
        let mut scenarios = Vec::new();
        for (s, u) in results {
            for (all, one) in unmapped.iter_mut().zip(u) {
                all.extend(one);
            }
            scenarios.push(s);
        }
        let counts = ParityCounts {
            scenarios: scenarios.len(),
            compared: scenarios
                .iter()
                .filter(|s| s.not_compared.is_none())
                .count(),
            differ: scenarios
                .iter()
                .filter(|s| !s.differences.is_empty() && s.cannot_run_as_written.is_empty())
                .count(),
            not_compared: scenarios
                .iter()
                .filter(|s| s.not_compared.is_some())
                .count(),
            cannot_run_as_written: scenarios
                .iter()
                .filter(|s| !s.cannot_run_as_written.is_empty())
                .count(),
        };
        let mut differences_by_aspect = BTreeMap::new();
        for aspect in Aspect::ALL {
            let n = scenarios
                .iter()
                .filter(|s| {
                    s.cannot_run_as_written.is_empty()
                        && s.aspects
                            .iter()
                            .any(|r| r.aspect == aspect && r.verdict == Verdict::Differs)
                })
                .count();
            if n > 0 {
                differences_by_aspect.insert(aspect.label().to_string(), n);
            }
        }
        let known = known_shape_differences(dialect_of(&a.dialect), dialect_of(&b.dialect));
        let [ua, ub] = unmapped;
        let mut unmapped_frames = BTreeMap::new();
        unmapped_frames.insert(a.name.clone(), ua.into_iter().collect());
        unmapped_frames.insert(b.name.clone(), ub.into_iter().collect());
        Parity {
            schema_version: SCHEMA_VERSION,
            generated_at: timestamp(SystemTime::now()),
            command,
            a,
            b,
            counts,
            notes: Vec::new(),
            known_shape_differences: known,
            unmapped_frames,
            differences_by_aspect,
            scenarios,
        }
    }
}

fn dialect_name(d: Dialect) -> String {
    d.expect_key().to_string()
}

fn dialect_of(name: &str) -> Option<Dialect> {
    match name {
        "claude-code" => Some(Dialect::ClaudeCode),
        "caliban" => Some(Dialect::Caliban),
        _ => None,
    }
}

/// The shape differences between Claude Code's and caliban's stream-json, as the
/// adapters absorb them. Empty when both sides speak one dialect.
pub fn known_shape_differences(a: Option<Dialect>, b: Option<Dialect>) -> Vec<String> {
    if a == b || a.is_none() || b.is_none() {
        return Vec::new();
    }
    [
        "Assistant output: Claude Code prints `assistant` frames ({message: {id, content: [...]}}), one per content block, several sharing one message.id; caliban prints one `message` frame ({role, content: [...]}) per assistant message.",
        "Tool calls: Claude Code's are `tool_use` blocks inside `assistant` frames; caliban prints a top-level `tool_use` progress frame and the same block again inside the next `message` frame (counted once here).",
        "Tool results: Claude Code prints a `user` frame with message.content [{type: tool_result, ...}] and a `tool_use_result` summary; caliban prints a top-level `tool_result` frame with content blocks.",
        "Tool output: caliban's Bash result wraps stdout in `→ Bash command / → Exit code / → Stdout / → Stderr` lines; Claude Code's is the bare stdout. A result that contains the other's is counted as the same.",
        "Partial messages: Claude Code prints `stream_event` frames (message_start, content_block_delta, ...) and still the full `assistant` frames; caliban prints `text` / `thinking` delta frames and no `message` frame.",
        "session_id: Claude Code puts a UUID on every frame; caliban prints \"ephemeral\" on init and result only; no uuid fields.",
        "system/init fields: Claude Code `permissionMode`, `claude_code_version`, `slash_commands`, `agents`, `skills`, ...; caliban `permission_mode`, `settingSources`, `bare_mode`, `plugins`. Model names differ (the CLIs' defaults).",
        "Result frames: both carry subtype, is_error, num_turns; Claude Code adds duration_api_ms, usage with cache fields, permission_denials, stop_reason; caliban adds turns, total_input_tokens, total_output_tokens, turns_without_edit. For non-success runs caliban drops `result` and gives `error` (read here as the result text), `last_assistant_text` and `tool_calls_seen`.",
        "Result subtypes: Claude Code `error_max_turns`, `error_max_budget_usd`, `error_during_execution` are caliban's `max_turns`, `budget_exceeded`, `error` (compared under caliban's names).",
        "Replayed user messages: Claude Code {type: user, message: {role, content}, isReplay: true}; caliban {type: user, content: [blocks]}.",
        "stdin frames: Claude Code reads {type: user, message: {role: user, content}}; caliban reads {type: user, content} and rejects the other shape (exit 64).",
        "system/init per turn: with stream-json input Claude Code prints a system/init before every turn; caliban prints one per run.",
        "Extra frames without a caliban counterpart: Claude Code's `rate_limit_event`, `system/status`, `system/thinking_tokens`; Claude Code also prints an API error as a synthetic `assistant` message (model `<synthetic>`), read here as a warning.",
        "Flags: Claude Code needs --verbose with stream-json output and skips permission prompts with --dangerously-skip-permissions; caliban needs no --verbose and uses --permission-mode bypassPermissions --allow-dangerously-skip-permissions.",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn clip(s: &str, max: usize) -> String {
    let one_line = s.replace("\r\n", "⏎").replace('\n', "⏎");
    match one_line.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &one_line[..i]),
        None => one_line,
    }
}

fn cell(s: &str, max: usize) -> String {
    clip(s, max).replace('|', "\\|")
}

/// `parity.md`.
pub fn render_md(p: &Parity) -> String {
    let mut s = String::new();
    let side = |t: &TargetSide| format!("{} {}", t.name, t.version);
    let _ = writeln!(s, "# Parity: {} vs {}\n", side(&p.a), side(&p.b));
    let _ = writeln!(s, "```\n{}\n```\n", p.command);
    let c = &p.counts;
    let _ = writeln!(
        s,
        "Generated {}. {} scenario(s) run on both: **{} with substantive differences**, {} the same in substance, {} that one side cannot run as written (its flags or stdin are the other dialect's); {} not compared.\n",
        p.generated_at,
        c.compared,
        c.differ,
        c.compared
            .saturating_sub(c.differ)
            .saturating_sub(c.cannot_run_as_written),
        c.cannot_run_as_written,
        c.not_compared,
    );
    let _ = writeln!(
        s,
        "Each run is mapped into neutral events (init, assistant text, thinking, tool call, tool result, retry, warning, result, exit code) by an adapter per dialect; the aspects below compare those events. `=` the same, `≈` different only in shape (listed once below), `≠` different in substance, `·` neither side has any.\n"
    );
    for n in &p.notes {
        let _ = writeln!(s, "> {n}\n");
    }
    if !p.differences_by_aspect.is_empty() {
        let list: Vec<String> = p
            .differences_by_aspect
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        let _ = writeln!(
            s,
            "Substantive differences by aspect (scenarios): {}.\n",
            list.join(", ")
        );
    }

    let _ = writeln!(s, "## Overview\n");
    let _ = write!(s, "| scenario |");
    for a in Aspect::ALL {
        let _ = write!(s, " {} |", a.short());
    }
    let _ = writeln!(s, " ≠ |");
    let _ = writeln!(s, "|---|{}---|", "---|".repeat(Aspect::ALL.len()));
    for sc in &p.scenarios {
        let _ = write!(s, "| [{}](#{}) |", sc.scenario, anchor(&sc.scenario));
        match &sc.not_compared {
            Some(why) => {
                let _ = writeln!(
                    s,
                    " not compared: {} |{} |",
                    cell(why, 80),
                    " |".repeat(Aspect::ALL.len() - 1)
                );
            }
            None => {
                for a in Aspect::ALL {
                    let v = sc
                        .aspects
                        .iter()
                        .find(|r| r.aspect == a)
                        .map_or(Verdict::Neither, |r| r.verdict);
                    let _ = write!(s, " {} |", v.symbol());
                }
                let _ = writeln!(
                    s,
                    " {} |",
                    if !sc.cannot_run_as_written.is_empty() {
                        format!(
                            "not run as written by {}",
                            sc.cannot_run_as_written.join(", ")
                        )
                    } else if sc.differences.is_empty() {
                        "0".to_string()
                    } else {
                        format!("**{}**", sc.differences.len())
                    }
                );
            }
        }
    }

    let _ = writeln!(
        s,
        "\n## Known shape differences (not reported per scenario)\n"
    );
    if p.known_shape_differences.is_empty() {
        let _ = writeln!(s, "None: both sides speak one dialect.");
    }
    for k in &p.known_shape_differences {
        let _ = writeln!(s, "- {k}");
    }
    for (target, kinds) in &p.unmapped_frames {
        if !kinds.is_empty() {
            let kinds: Vec<String> = kinds.iter().map(|k| format!("`{k}`")).collect();
            let _ = writeln!(
                s,
                "- Frames of {target} with no neutral meaning, seen here: {}",
                kinds.join(", ")
            );
        }
    }

    let _ = writeln!(s, "\n## Per scenario");
    for sc in &p.scenarios {
        let _ = writeln!(s, "\n### {}\n", sc.scenario);
        if let Some(d) = &sc.description {
            let _ = writeln!(s, "{d}\n");
        }
        if let Some(why) = &sc.not_compared {
            let _ = writeln!(s, "Not compared: {why}");
        }
        for who in &sc.cannot_run_as_written {
            let _ = writeln!(s, "- **{who} cannot run this scenario as written.**");
        }
        for n in &sc.notes {
            let _ = writeln!(s, "- {}", clip(n, 400));
        }
        if sc.not_compared.is_some() {
            continue;
        }
        let _ = writeln!(
            s,
            "\n| aspect | {} | {} | |\n|---|---|---|---|",
            p.a.name, p.b.name
        );
        for r in &sc.aspects {
            if r.verdict == Verdict::Neither && r.aspect != Aspect::Exit {
                continue;
            }
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} |",
                r.aspect.label(),
                cell(&r.a, 140),
                cell(&r.b, 140),
                r.verdict.symbol()
            );
        }
        let shape: Vec<String> = sc
            .aspects
            .iter()
            .filter(|r| r.verdict == Verdict::Shape)
            .filter_map(|r| {
                r.note
                    .as_ref()
                    .map(|n| format!("{}: {n}", r.aspect.label()))
            })
            .collect();
        if !shape.is_empty() {
            let _ = writeln!(s, "\nShape only: {}.", shape.join("; "));
        }
        if !sc.cannot_run_as_written.is_empty() {
            for d in &sc.differences {
                let _ = writeln!(s, "\n{d}");
            }
        } else if sc.differences.is_empty() {
            let _ = writeln!(s, "\nThe same in substance.");
        } else {
            let _ = writeln!(s, "\nSubstantive differences:\n");
            for d in &sc.differences {
                let _ = writeln!(s, "- {d}");
            }
        }
    }
    s
}

/// A few lines for the terminal: the scenarios that differ, and the counts.
pub fn summary(p: &Parity) -> String {
    let mut s = String::new();
    for sc in &p.scenarios {
        if let Some(why) = &sc.not_compared {
            let _ = writeln!(s, "not compared {}: {why}", sc.scenario);
        } else if !sc.cannot_run_as_written.is_empty() {
            let _ = writeln!(
                s,
                "not run     {}: {} cannot run it as written",
                sc.scenario,
                sc.cannot_run_as_written.join(", ")
            );
        } else if !sc.differences.is_empty() {
            let aspects: Vec<&str> = sc
                .aspects
                .iter()
                .filter(|r| r.verdict == Verdict::Differs)
                .map(|r| r.aspect.label())
                .collect();
            let _ = writeln!(s, "differs     {}: {}", sc.scenario, aspects.join(", "));
        }
    }
    let c = &p.counts;
    let _ = writeln!(
        s,
        "{} vs {}: {} run on both, {} differ in substance, {} cannot be run as written by one side, {} not compared",
        p.a.name, p.b.name, c.compared, c.differ, c.cannot_run_as_written, c.not_compared
    );
    s
}

/// GitHub's heading anchor for a scenario heading.
fn anchor(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            'a'..='z' | '0'..='9' | '-' | '_' => Some(c),
            ' ' => Some('-'),
            _ => None,
        })
        .collect()
}

/// Writes `parity.md` and `parity.json` into `dir`.
pub fn write(dir: &Path, p: &Parity) -> std::io::Result<()> {
    write_atomic(&dir.join("parity.md"), render_md(p).as_bytes())?;
    let json = serde_json::to_string_pretty(p).map_err(std::io::Error::other)?;
    write_atomic(&dir.join("parity.json"), json.as_bytes())
}

// ---------------------------------------------------------------------------
// Observed captures
// ---------------------------------------------------------------------------

/// A capture folder's target, from its name: `claude-code-2.1.197` is claude-code
/// 2.1.197; a name containing `caliban` is in caliban's dialect, any other in Claude Code's.
pub fn capture_side(dir: &Path) -> (TargetSide, Dialect) {
    let base = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| dir.display().to_string());
    let (name, version) = match base.rfind('-') {
        Some(i) if base[i + 1..].starts_with(|c: char| c.is_ascii_digit()) => {
            (base[..i].to_string(), base[i + 1..].to_string())
        }
        _ => (base.clone(), "unknown".to_string()),
    };
    let dialect = if base.contains("caliban") {
        Dialect::Caliban
    } else {
        Dialect::ClaudeCode
    };
    (
        TargetSide {
            name,
            version,
            dialect: dialect_name(dialect),
        },
        dialect,
    )
}

/// Cases in a capture folder: names with a `NAME.exit_code`.
fn capture_cases(dir: &Path) -> Result<Vec<String>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            e.file_name()
                .to_string_lossy()
                .strip_suffix(".exit_code")
                .map(str::to_string)
        })
        .collect();
    names.sort();
    Ok(names)
}

fn short_name(d: Dialect) -> &'static str {
    match d {
        Dialect::ClaudeCode => "claude",
        Dialect::Caliban => "caliban",
    }
}

/// The name a case is paired under: `input_<other>_shape` (this CLI fed the other
/// dialect's stdin frames) pairs with the other folder's mirror case.
fn case_key(name: &str, other: Dialect) -> String {
    if name == format!("input_{}_shape", short_name(other)) {
        "input_foreign_shape".to_string()
    } else {
        name.to_string()
    }
}

/// Compares two folders of captured runs, case by case. Needs no CLI.
pub fn observed(
    dir_a: &Path,
    dir_b: &Path,
    filters: &[String],
    command: String,
) -> Result<Parity, String> {
    let (side_a, da) = capture_side(dir_a);
    let (side_b, db) = capture_side(dir_b);
    let mut keys: BTreeMap<String, [Option<String>; 2]> = BTreeMap::new();
    for name in capture_cases(dir_a)? {
        let key = case_key(&name, db);
        keys.entry(key).or_default()[0] = Some(name);
    }
    for name in capture_cases(dir_b)? {
        let key = case_key(&name, da);
        keys.entry(key).or_default()[1] = Some(name);
    }
    let mut results = Vec::new();
    for (key, [na, nb]) in keys {
        if !filters.is_empty() && !filters.iter().any(|f| key.contains(f.as_str())) {
            continue;
        }
        let (Some(na), Some(nb)) = (na.as_ref(), nb.as_ref()) else {
            let (have, lack) = if na.is_some() {
                (&side_a.name, &side_b.name)
            } else {
                (&side_b.name, &side_a.name)
            };
            results.push((
                ScenarioParity::not_compared(
                    &key,
                    format!("captured for {have} only, not for {lack}"),
                ),
                Default::default(),
            ));
            continue;
        };
        let ra = Recorded::from_capture(dir_a, na)?;
        let rb = Recorded::from_capture(dir_b, nb)?;
        let (mut sp, unmapped) = ScenarioParity::of(
            &key,
            Side {
                name: &side_a.name,
                dialect: da,
                run: &ra,
            },
            Side {
                name: &side_b.name,
                dialect: db,
                run: &rb,
            },
        );
        let mut context = Vec::new();
        for (side, dir, name) in [(&side_a, dir_a, na), (&side_b, dir_b, nb)] {
            if let Ok(cmd) = std::fs::read_to_string(dir.join(format!("{name}.cmdline"))) {
                let label = if *name == key {
                    String::new()
                } else {
                    format!(" (case {name})")
                };
                context.push(format!("{} ran{label}: `{}`", side.name, cmd.trim()));
            }
        }
        context.append(&mut sp.notes);
        sp.notes = context;
        results.push((sp, unmapped));
    }
    let mut parity = Parity::new(command, side_a, side_b, results);
    parity.notes.push(
        "Captured runs: each CLI was run on its own, with its own flags and its own stdin file \
         (in its dialect); where the inputs differ (e.g. the prompt text), so do the outputs. \
         Request counts leave out Claude Code's background session-title request."
            .into(),
    );
    Ok(parity)
}

// ---------------------------------------------------------------------------
// Live runs
// ---------------------------------------------------------------------------

/// What `compare` runs.
pub struct LiveRun<'a> {
    pub scenarios: Vec<Scenario>,
    /// Exactly two: side A, side B.
    pub targets: &'a [Result<Target, NotInstalled>],
    pub jobs: usize,
    pub opts: RunOptions,
    /// Where the ordinary run reports and parity.md / parity.json go.
    pub report_dir: PathBuf,
    pub command: String,
}

/// Runs every scenario on both targets (a target the scenario has no expectation for
/// runs it as written) and compares the runs.
pub async fn run(live: LiveRun<'_>, on_trial: impl FnMut(&Trial)) -> Result<Parity, String> {
    let [ta, tb] = live.targets else {
        return Err("compare takes exactly two targets (--target A --target B)".into());
    };
    let side = |t: &Result<Target, NotInstalled>| match t {
        Ok(t) => TargetSide {
            name: t.name.clone(),
            version: t.version.clone(),
            dialect: dialect_name(t.dialect),
        },
        Err(e) => TargetSide {
            name: e.target.clone(),
            version: "unavailable".into(),
            dialect: String::new(),
        },
    };
    let (side_a, side_b) = (side(ta), side(tb));
    if side_a.name == side_b.name {
        return Err(format!(
            "compare needs two different targets, got {} twice",
            side_a.name
        ));
    }
    let mut writer = ReportWriter::create(
        &live.report_dir,
        suite::target_infos(live.targets),
        Vec::new(),
    )
    .map_err(|e| format!("cannot write reports to {}: {e}", live.report_dir.display()))?;
    let mut opts = live.opts;
    opts.without_expectation = true;
    let mut trials: BTreeMap<(String, String), Trial> = BTreeMap::new();
    let mut on_trial = on_trial;
    let finished = suite::run(
        live.scenarios.clone(),
        live.targets,
        live.jobs,
        opts,
        &mut writer,
        |t| {
            on_trial(t);
            trials.insert((t.scenario.clone(), t.target.clone()), t.clone());
        },
    )
    .await
    .map_err(|e| format!("cannot write reports: {e}"))?;
    if finished {
        writer.finish().map_err(|e| e.to_string())?;
    }
    let dialects = [ta, tb].map(|t| t.as_ref().ok().map(|t| t.dialect));
    let mut results = Vec::new();
    for scenario in &live.scenarios {
        let pair = [&side_a, &side_b].map(|s| trials.get(&(scenario.id.clone(), s.name.clone())));
        let mut sp = match (pair, dialects) {
            ([Some(x), Some(y)], [Some(dx), Some(dy)]) => {
                compare_trials(scenario, (x, dx), (y, dy))
            }
            _ => (
                ScenarioParity::not_compared(
                    &scenario.id,
                    if finished {
                        "a target did not run it".into()
                    } else {
                        "interrupted before both targets ran it".into()
                    },
                ),
                Default::default(),
            ),
        };
        sp.0.description = Some(scenario.file.description.clone());
        results.push(sp);
    }
    Ok(Parity::new(live.command, side_a, side_b, results))
}

/// Compares two trials of one scenario, saying when one could not run it as written.
pub fn compare_trials(
    scenario: &Scenario,
    (x, dx): (&Trial, Dialect),
    (y, dy): (&Trial, Dialect),
) -> (ScenarioParity, [BTreeSet<String>; 2]) {
    for t in [x, y] {
        let why = match &t.status {
            Status::Skipped(why) => Some(format!("{} skipped it: {why}", t.target)),
            _ if t.divergences.iter().any(|d| d.kind == Kind::Spawn) => Some(format!(
                "{} could not be started: {}",
                t.target,
                t.divergences
                    .iter()
                    .find(|d| d.kind == Kind::Spawn)
                    .map(|d| d.message.clone())
                    .unwrap_or_default()
            )),
            _ => None,
        };
        if let Some(why) = why {
            return (
                ScenarioParity::not_compared(&scenario.id, why),
                Default::default(),
            );
        }
    }
    let (rx, ry) = (Recorded::from_trial(x), Recorded::from_trial(y));
    let (mut sp, unmapped) = ScenarioParity::of(
        &scenario.id,
        Side {
            name: &x.target,
            dialect: dx,
            run: &rx,
        },
        Side {
            name: &y.target,
            dialect: dy,
            run: &ry,
        },
    );
    let mut notes = Vec::new();
    for (t, d, r) in [(x, dx, &rx), (y, dy, &ry)] {
        let hints = as_written_hints(scenario, d);
        if !scenario.file.expect.contains_key(d.expect_key()) {
            notes.push(format!(
                "{} has no expectation in this scenario: it ran it as written{}",
                t.target,
                if hints.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", hints.join("; "))
                }
            ));
            let other = if std::ptr::eq(r, &rx) { &ry } else { &rx };
            if (rejected(d, r) || stalled(r)) && !never_started(other) {
                sp.cannot_run_as_written.push(t.target.clone());
                let why = if stalled(r) {
                    let paused = scenario.file.close_stdin != CloseStdin::Immediately
                        || scenario.file.stdin.as_ref().is_some_and(|l| {
                            l.iter()
                                .any(|l| matches!(l, StdinLine::AfterResults { .. }))
                        });
                    if paused {
                        "it printed nothing and sent no request while stdin stayed open (the scenario sends or closes stdin only after a result): it seems to read stdin to EOF before it starts".to_string()
                    } else {
                        "it printed nothing and sent no request before the timeout".to_string()
                    }
                } else {
                    format!(
                        "exit {}: {}",
                        r.exit_text(),
                        r.stderr
                            .lines()
                            .find(|l| !l.trim().is_empty())
                            .map_or(String::new(), |l| clip(l.trim(), 200))
                    )
                };
                sp.differences = vec![format!(
                    "{} cannot run this scenario as written ({why}); {} exits {}. The other aspects follow from that and are not differences in substance.",
                    t.target,
                    if std::ptr::eq(t, x) { &y.target } else { &x.target },
                    other.exit_text()
                )];
            }
        } else {
            match &t.status {
                Status::Failed => notes.push(format!(
                    "{} fails its own expectation here ({} divergence(s); first: {})",
                    t.target,
                    t.divergences.len(),
                    t.divergences
                        .first()
                        .map(|d| clip(&d.message, 160))
                        .unwrap_or_default()
                )),
                Status::Known(why) => {
                    notes.push(format!("{}: a known divergence: {why}", t.target))
                }
                _ => {}
            }
        }
        if let Some(d) = t
            .divergences
            .iter()
            .find(|d| d.kind == Kind::UnscriptedRequest)
        {
            notes.push(format!(
                "{} went off the stub's script (written for {}): {}",
                t.target,
                scenario
                    .file
                    .expect
                    .keys()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", "),
                clip(&d.message, 200)
            ));
        }
        notes.extend(
            t.notes
                .iter()
                // Said above, with the reasons.
                .filter(|n| !n.contains("ran as written, for comparison"))
                .map(|n| format!("{}: {n}", t.target)),
        );
    }
    notes.append(&mut sp.notes);
    sp.notes = notes;
    (sp, unmapped)
}

/// Why a scenario written for another dialect may not suit `dialect`.
pub fn as_written_hints(scenario: &Scenario, dialect: Dialect) -> Vec<String> {
    let mut hints = Vec::new();
    let frames: Vec<&Value> = scenario
        .file
        .stdin
        .iter()
        .flatten()
        .filter_map(|l| match l {
            StdinLine::Frame(v) if v.get("type").and_then(Value::as_str) == Some("user") => Some(v),
            _ => None,
        })
        .collect();
    let claude_shaped = frames.iter().any(|v| v.get("message").is_some());
    let caliban_shaped = frames
        .iter()
        .any(|v| v.get("message").is_none() && v.get("content").is_some());
    match dialect {
        Dialect::Caliban if claude_shaped => hints.push(
            "its stdin frames are in Claude Code's shape {type: user, message: ...}; caliban reads {type: user, content: ...}".into(),
        ),
        Dialect::ClaudeCode if caliban_shaped => hints.push(
            "its stdin frames are in caliban's shape {type: user, content: ...}; Claude Code reads {type: user, message: ...}".into(),
        ),
        _ => {}
    }
    let args = &scenario.file.args;
    if dialect == Dialect::Caliban {
        if args.iter().any(|a| a == "--dangerously-skip-permissions") {
            hints.push("--dangerously-skip-permissions is Claude Code's; caliban takes --permission-mode bypassPermissions --allow-dangerously-skip-permissions".into());
        }
        if args
            .iter()
            .any(|a| a == "--allowedTools" || a == "--allowed-tools")
        {
            hints.push("it allows tools with Claude Code's --allowedTools".into());
        }
        if !scenario.file.default_args {
            hints.push(
                "its command line is written out for Claude Code (default_args: false)".into(),
            );
        }
    }
    hints
}

/// It printed nothing, sent no request and was killed at the timeout.
fn stalled(r: &Recorded) -> bool {
    r.ended.as_deref() == Some("killed (timeout)") && r.frames.is_empty() && r.requests == Some(0)
}

/// It sent no request and did not succeed: the scenario is about refusing the input.
fn never_started(r: &Recorded) -> bool {
    r.requests == Some(0) && r.exit_code != Some(0)
}

/// The CLI refused the invocation itself: a usage error before any model request.
fn rejected(dialect: Dialect, r: &Recorded) -> bool {
    let usage = match dialect {
        // sysexits EX_USAGE for bad flags and malformed stdin; clap's own exit 2.
        Dialect::Caliban => matches!(r.exit_code, Some(64) | Some(2)),
        Dialect::ClaudeCode => r.exit_code == Some(1),
    };
    usage && r.requests.unwrap_or(0) == 0 && !r.stderr.trim().is_empty()
}
