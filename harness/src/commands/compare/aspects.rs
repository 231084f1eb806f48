//! The comparison core: both runs mapped into neutral events by their dialect's adapter,
//! then set side by side one [`Aspect`] at a time. Pure: frames and exit codes in, rows out.

use crate::dialect::{Dialect, Event, Neutral};
use crate::recording::recorded::Recorded;
use crate::text::clip_line;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeSet;
use std::fmt::Write as _;

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
    pub(super) fn short(self) -> &'static str {
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

    /// This aspect of both sides.
    fn row(self, a: &Facts, b: &Facts) -> AspectRow {
        match self {
            Aspect::Exit => exit(a, b),
            Aspect::Init => init(a, b),
            Aspect::Turns => turns(a, b),
            Aspect::Result => result(a, b),
            Aspect::ResultText => result_text(a, b),
            // Compared as one string: how the text is cut into blocks and deltas is shape.
            Aspect::Text => quoted_row(self, &a.texts, &b.texts, |t: &[&str]| t.concat()),
            Aspect::FinalText => final_text(a, b),
            Aspect::Thinking => quoted_row(self, &a.thinking, &b.thinking, |t: &[&str]| t.concat()),
            Aspect::ToolCalls => tool_calls(a, b),
            Aspect::ToolResults => tool_results(a, b),
            Aspect::Retries => retries(a, b),
            Aspect::Requests => requests(a, b),
            Aspect::Warnings => quoted_row(self, &a.warnings, &b.warnings, <[&str]>::to_vec),
            Aspect::UserEcho => quoted_row(self, &a.echoes, &b.echoes, <[&str]>::to_vec),
            Aspect::NonJson => {
                quoted_row(self, &a.run.non_json, &b.run.non_json, <[String]>::to_vec)
            }
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

impl AspectRow {
    fn new(aspect: Aspect, [a, b]: [String; 2], verdict: Verdict) -> AspectRow {
        AspectRow {
            aspect,
            a,
            b,
            verdict,
            note: None,
        }
    }

    fn noted(self, note: Option<String>) -> AspectRow {
        AspectRow { note, ..self }
    }
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
                    clip_line(&r.a, 160),
                    clip_line(&r.b, 160)
                );
                if let Some(n) = &r.note {
                    let _ = write!(s, " ({n})");
                }
                s
            })
            .collect()
    }
}

/// Compares two recorded runs of one scenario. Pure: frames and exit codes in, rows out.
pub fn compare(a: Side, b: Side) -> Comparison {
    let (na, nb) = (
        a.dialect.conventions().neutral(&a.run.frames),
        b.dialect.conventions().neutral(&b.run.frames),
    );
    let (fa, fb) = (Facts::of(&a, &na), Facts::of(&b, &nb));
    let rows = Aspect::ALL.iter().map(|a| a.row(&fa, &fb)).collect();
    Comparison {
        rows,
        unmapped: [na.unmapped, nb.unmapped],
    }
}

/// An [`Event::Result`].
struct TurnEnd<'a> {
    subtype: &'a str,
    raw_subtype: &'a str,
    is_error: bool,
    text: Option<&'a str>,
}

/// An [`Event::ToolCall`].
struct ToolCall<'a> {
    id: &'a str,
    name: &'a str,
    input: &'a Value,
}

/// An [`Event::ToolResult`].
struct ToolResult<'a> {
    tool_use_id: &'a str,
    is_error: bool,
    text: &'a str,
}

/// An [`Event::Retry`].
#[derive(Clone, Copy, PartialEq)]
struct Retry {
    attempt: Option<u64>,
    status: Option<u64>,
}

/// Everything the aspects need from one side.
struct Facts<'a> {
    name: &'a str,
    run: &'a Recorded,
    inits: usize,
    results: Vec<TurnEnd<'a>>,
    texts: Vec<&'a str>,
    /// The text blocks of the last assistant message that had text.
    final_text: Option<String>,
    thinking: Vec<&'a str>,
    calls: Vec<ToolCall<'a>>,
    tool_results: Vec<ToolResult<'a>>,
    retries: Vec<Retry>,
    warnings: Vec<&'a str>,
    echoes: Vec<&'a str>,
}

impl<'a> Facts<'a> {
    fn of(side: &Side<'a>, n: &'a Neutral) -> Facts<'a> {
        let mut f = Facts {
            name: side.name,
            run: side.run,
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
                    f.texts.push(text);
                    last_message = Some(*message);
                }
                Event::Thinking { text, .. } => f.thinking.push(text),
                Event::ToolCall { id, name, input } => f.calls.push(ToolCall { id, name, input }),
                Event::ToolResult {
                    tool_use_id,
                    is_error,
                    text,
                } => f.tool_results.push(ToolResult {
                    tool_use_id,
                    is_error: *is_error,
                    text,
                }),
                Event::Retry { attempt, status } => f.retries.push(Retry {
                    attempt: *attempt,
                    status: *status,
                }),
                Event::Warning { text } => f.warnings.push(text),
                Event::UserEcho { text } => f.echoes.push(text),
                Event::Result {
                    subtype,
                    raw_subtype,
                    is_error,
                    text,
                } => f.results.push(TurnEnd {
                    subtype,
                    raw_subtype,
                    is_error: *is_error,
                    text: text.as_deref(),
                }),
            }
        }
        f.final_text = last_message.map(|m| {
            n.events
                .iter()
                .filter_map(|e| match e {
                    Event::Text { text, message } if *message == m => Some(text.as_str()),
                    _ => None,
                })
                .collect()
        });
        f
    }

    fn tool_result(&self, id: &str) -> Option<&ToolResult<'a>> {
        self.tool_results.iter().find(|r| r.tool_use_id == id)
    }
}

fn quoted(s: &str) -> String {
    format!("\"{s}\"")
}

/// The items shown one after another, or `none`.
fn listed<T>(items: &[T], show: impl Fn(&T) -> String) -> String {
    if items.is_empty() {
        "none".to_string()
    } else {
        items.iter().map(show).collect::<Vec<_>>().join(" ")
    }
}

/// Both lists have the same keys, in order.
fn same_by<T, K: PartialEq>(a: &[T], b: &[T], key: impl Fn(&T) -> K) -> bool {
    a.iter().map(&key).eq(b.iter().map(&key))
}

/// Same when the keys are equal, Differs when not, Neither when both sides are empty.
fn equality_row<K: PartialEq>(
    aspect: Aspect,
    [ka, kb]: [K; 2],
    shown: [String; 2],
    empty: bool,
) -> AspectRow {
    let verdict = if empty {
        Verdict::Neither
    } else if ka == kb {
        Verdict::Same
    } else {
        Verdict::Differs
    };
    AspectRow::new(aspect, shown, verdict)
}

/// Texts shown quoted, compared by `key` (the list itself, or all of it as one string).
fn quoted_row<S: AsRef<str>, K: PartialEq>(
    aspect: Aspect,
    a: &[S],
    b: &[S],
    key: impl Fn(&[S]) -> K,
) -> AspectRow {
    let show = |items: &[S]| listed(items, |s| quoted(s.as_ref()));
    equality_row(
        aspect,
        [key(a), key(b)],
        [show(a), show(b)],
        a.is_empty() && b.is_empty(),
    )
}

fn exit(a: &Facts, b: &Facts) -> AspectRow {
    let (ea, eb) = (a.run.exit.to_string(), b.run.exit.to_string());
    let same = ea == eb;
    let note = match (a.results.last(), b.results.last()) {
        (Some(x), Some(y)) if !same && x.subtype == y.subtype && x.is_error == y.is_error => {
            Some(format!(
                "for the same outcome: {} with is_error {}",
                x.subtype, x.is_error
            ))
        }
        _ => None,
    };
    let verdict = if same {
        Verdict::Same
    } else {
        Verdict::Differs
    };
    AspectRow::new(Aspect::Exit, [ea, eb], verdict).noted(note)
}

fn init(a: &Facts, b: &Facts) -> AspectRow {
    let (x, y) = (a.inits, b.inits);
    let (verdict, note) = match (x, y) {
        (0, 0) => (Verdict::Neither, None),
        _ if x == y => (Verdict::Same, None),
        (0, _) => (
            Verdict::Differs,
            Some(format!("{} prints no system/init", a.name)),
        ),
        (_, 0) => (
            Verdict::Differs,
            Some(format!("{} prints no system/init", b.name)),
        ),
        _ => (
            Verdict::Shape,
            Some("both announce the session, in a different number of frames".into()),
        ),
    };
    AspectRow::new(Aspect::Init, [x.to_string(), y.to_string()], verdict).noted(note)
}

fn turns(a: &Facts, b: &Facts) -> AspectRow {
    let (x, y) = (a.results.len(), b.results.len());
    let note = match (x, y) {
        (0, y) if y > 0 => Some(format!("{} prints no result frame", a.name)),
        (x, 0) if x > 0 => Some(format!("{} prints no result frame", b.name)),
        _ => None,
    };
    let shown = [x.to_string(), y.to_string()];
    equality_row(Aspect::Turns, [x, y], shown, x == 0 && y == 0).noted(note)
}

fn result(a: &Facts, b: &Facts) -> AspectRow {
    let show = |f: &Facts| {
        listed(&f.results, |r| {
            format!("{} (is_error {})", r.raw_subtype, r.is_error)
        })
    };
    let (verdict, note) = if a.results.is_empty() && b.results.is_empty() {
        (Verdict::Neither, None)
    } else if !same_by(&a.results, &b.results, |r| (r.subtype, r.is_error)) {
        (Verdict::Differs, None)
    } else if !same_by(&a.results, &b.results, |r| (r.raw_subtype, r.is_error)) {
        (
            Verdict::Shape,
            Some("the same outcome under each dialect's subtype name".into()),
        )
    } else {
        (Verdict::Same, None)
    };
    AspectRow::new(Aspect::Result, [show(a), show(b)], verdict).noted(note)
}

fn result_text(a: &Facts, b: &Facts) -> AspectRow {
    let texts = [a, b].map(|f| f.results.iter().map(|r| r.text).collect::<Vec<_>>());
    let show = |f: &Facts| listed(&f.results, |r| r.text.map_or("(none)".into(), quoted));
    let empty = a.results.iter().chain(&b.results).all(|r| r.text.is_none());
    equality_row(Aspect::ResultText, texts, [show(a), show(b)], empty)
}

fn final_text(a: &Facts, b: &Facts) -> AspectRow {
    let show = |f: &Facts| f.final_text.as_deref().map_or("none".into(), quoted);
    equality_row(
        Aspect::FinalText,
        [&a.final_text, &b.final_text],
        [show(a), show(b)],
        a.final_text.is_none() && b.final_text.is_none(),
    )
}

fn tool_calls(a: &Facts, b: &Facts) -> AspectRow {
    let show = |f: &Facts| listed(&f.calls, |c| format!("{} {}", c.name, c.input));
    let calls = [a, b].map(|f| {
        f.calls
            .iter()
            .map(|c| (c.name, c.input))
            .collect::<Vec<_>>()
    });
    let mut r = equality_row(
        Aspect::ToolCalls,
        calls,
        [show(a), show(b)],
        a.calls.is_empty() && b.calls.is_empty(),
    );
    if r.verdict == Verdict::Differs {
        r.note = Some(if same_by(&a.calls, &b.calls, |c| c.name) {
            "the same tools with different input".into()
        } else {
            format!(
                "{} calls {} tool(s), {} {}",
                a.name,
                a.calls.len(),
                b.name,
                b.calls.len()
            )
        });
    }
    r
}

/// Tool results, paired by tool_use id in call order. Output that one side wraps in
/// more text (caliban's Bash prints the command, exit code, stdout and stderr) is shape.
fn tool_results(a: &Facts, b: &Facts) -> AspectRow {
    let show = |r: Option<&ToolResult>| match r {
        None => "missing".to_string(),
        Some(r) => format!(
            "{} {}",
            if r.is_error { "error" } else { "ok" },
            quoted(&clip_line(r.text, 100))
        ),
    };
    let mut verdict = Verdict::Neither;
    let mut notes = Vec::new();
    let (mut da, mut db) = (Vec::new(), Vec::new());
    for id in tool_use_ids(a, b) {
        let name = tool_name(a, b, id);
        da.push(format!("{name}: {}", show(a.tool_result(id))));
        db.push(format!("{name}: {}", show(b.tool_result(id))));
        let (v, note) = tool_result_verdict(a, b, id, &name);
        notes.extend(note);
        verdict = verdict.max(v);
    }
    AspectRow::new(
        Aspect::ToolResults,
        [listed(&da, String::clone), listed(&db, String::clone)],
        verdict,
    )
    .noted((!notes.is_empty()).then(|| notes.join("; ")))
}

/// Every tool_use id either side mentions, calls first, each once, in order.
fn tool_use_ids<'a>(a: &Facts<'a>, b: &Facts<'a>) -> Vec<&'a str> {
    let calls = a.calls.iter().chain(&b.calls).map(|c| c.id);
    let results = (a.tool_results.iter().chain(&b.tool_results)).map(|r| r.tool_use_id);
    let mut ids: Vec<&str> = Vec::new();
    for id in calls.chain(results) {
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    ids
}

/// The tool a call id belongs to, or the id when neither side called it.
fn tool_name(a: &Facts, b: &Facts, id: &str) -> String {
    a.calls
        .iter()
        .chain(&b.calls)
        .find(|c| c.id == id)
        .map_or_else(|| id.to_string(), |c| c.name.to_string())
}

fn tool_result_verdict(a: &Facts, b: &Facts, id: &str, name: &str) -> (Verdict, Option<String>) {
    let (an, bn) = (a.name, b.name);
    match (a.tool_result(id), b.tool_result(id)) {
        (None, None) => (Verdict::Neither, None),
        (Some(_), None) => (
            Verdict::Differs,
            Some(format!("{bn} gives no result for {name} ({id})")),
        ),
        (None, Some(_)) => (
            Verdict::Differs,
            Some(format!("{an} gives no result for {name} ({id})")),
        ),
        (Some(x), Some(y)) => {
            let (ta, tb) = (x.text.trim(), y.text.trim());
            if x.is_error != y.is_error {
                let (ea, eb) = (x.is_error, y.is_error);
                let note = format!("{name}: {an} is_error {ea}, {bn} is_error {eb}");
                (Verdict::Differs, Some(note))
            } else if ta == tb {
                (Verdict::Same, None)
            } else if !ta.is_empty() && !tb.is_empty() && (ta.contains(tb) || tb.contains(ta)) {
                let note = format!("{name}: the same output, wrapped in more text on one side");
                (Verdict::Shape, Some(note))
            } else {
                (Verdict::Differs, Some(format!("{name}: different output")))
            }
        }
    }
}

fn retries(a: &Facts, b: &Facts) -> AspectRow {
    let show = |f: &Facts| {
        listed(&f.retries, |r| {
            let s = r.status.map_or("?".into(), |s| s.to_string());
            match r.attempt {
                Some(n) => format!("{s} (attempt {n})"),
                None => s,
            }
        })
    };
    let (verdict, note) = if a.retries.is_empty() && b.retries.is_empty() {
        (Verdict::Neither, None)
    } else if !same_by(&a.retries, &b.retries, |r| r.status) {
        let note = format!("{}; {}", announced_retries(a), announced_retries(b));
        (Verdict::Differs, Some(note))
    } else if a.retries == b.retries {
        (Verdict::Same, None)
    } else {
        (
            Verdict::Shape,
            Some("attempts are numbered differently".into()),
        )
    };
    AspectRow::new(Aspect::Retries, [show(a), show(b)], verdict).noted(note)
}

/// `NAME announces 2 retries in 3 request(s)`: a retry one side makes silently shows.
fn announced_retries(f: &Facts) -> String {
    let name = f.name;
    let sent = f
        .run
        .requests
        .map(|n| format!(" in {n} request(s)"))
        .unwrap_or_default();
    match f.retries.len() {
        0 => format!("{name} announces no retry{sent}"),
        1 => format!("{name} announces 1 retry{sent}"),
        n => format!("{name} announces {n} retries{sent}"),
    }
}

fn requests(a: &Facts, b: &Facts) -> AspectRow {
    let show = |r: Option<usize>| r.map_or("unknown".into(), |n| n.to_string());
    let (x, y) = (a.run.requests, b.run.requests);
    let verdict = match (x, y) {
        (Some(x), Some(y)) if x == y => Verdict::Same,
        (Some(_), Some(_)) => Verdict::Differs,
        _ => Verdict::Neither,
    };
    AspectRow::new(Aspect::Requests, [show(x), show(y)], verdict)
}
