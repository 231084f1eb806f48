//! Applies one [`Mutation`] to what a trial printed. Lines the mutation does not touch
//! keep the exact text the CLI printed; a changed frame is written back compactly.

use super::model::Mutation;
use crate::normalize::map_strings;
use crate::printed::exit::{Exit, Termination};
use crate::printed::output::Output;
use crate::runner::{Stderr, Trial};
use serde_json::{json, Map, Value};

/// A view of a trial a mutation can change: stdout lines, how it ended, stderr.
#[derive(Debug, Clone)]
pub struct Printed {
    pub lines: Vec<String>,
    pub exit: Exit,
    pub stderr: Stderr,
    /// Lines of frames the scenario ignores: no mutation picks them, since changing a
    /// frame the scenario says it does not look at is not a change it should catch.
    ignored: Vec<usize>,
}

impl Printed {
    pub fn new(stdout: &str, exit: Exit, stderr: Stderr) -> Printed {
        Printed {
            lines: stdout.lines().map(str::to_string).collect(),
            exit,
            stderr,
            ignored: Vec::new(),
        }
    }

    /// What `trial` printed.
    pub fn of(trial: &Trial) -> Printed {
        Printed::new(
            &trial.output.text(),
            trial.exit.clone(),
            trial.stderr.clone(),
        )
    }

    /// `trial` as if the CLI had printed this.
    pub fn on(&self, trial: &Trial) -> Trial {
        Trial {
            output: Output::parse(self.stdout().as_bytes()),
            exit: self.exit.clone(),
            stderr: self.stderr.clone(),
            ..trial.clone()
        }
    }

    /// Marks the frames `ignores` says yes to as ones no mutation picks.
    pub fn ignoring(mut self, ignores: impl Fn(&Value) -> bool) -> Printed {
        self.ignored = self
            .frames()
            .into_iter()
            .filter(|(_, v)| ignores(v))
            .map(|(i, _)| i)
            .collect();
        self
    }

    /// The frames a mutation may pick: every frame the scenario does not ignore.
    fn watched(&self) -> Vec<(usize, Value)> {
        let mut frames = self.frames();
        frames.retain(|(i, _)| !self.ignored.contains(i));
        frames
    }

    /// stdout again, every line ended.
    pub fn stdout(&self) -> String {
        self.lines.iter().map(|l| format!("{l}\n")).collect()
    }

    /// (line index, frame) for every line that is a JSON object.
    fn frames(&self) -> Vec<(usize, Value)> {
        self.lines
            .iter()
            .enumerate()
            .filter_map(|(i, l)| match serde_json::from_str::<Value>(l) {
                Ok(v @ Value::Object(_)) => Some((i, v)),
                _ => None,
            })
            .collect()
    }

    /// Rewrites the frame on line `at` with `f`; `None` when `f` changed nothing.
    fn edit_frame(&self, at: usize, f: impl FnOnce(&mut Value)) -> Option<Printed> {
        let mut value: Value = serde_json::from_str(&self.lines[at]).ok()?;
        let before = value.clone();
        f(&mut value);
        (value != before).then(|| {
            let mut out = self.clone();
            out.lines[at] = value.to_string();
            out
        })
    }

    /// Rewrites every frame line with `f`, keeping other lines.
    fn map_frames(&self, f: impl Fn(&Value) -> String) -> Printed {
        let mut out = self.clone();
        for (i, v) in self.frames() {
            out.lines[i] = f(&v);
        }
        out
    }
}

fn type_of(v: &Value) -> Option<&str> {
    v.get("type").and_then(Value::as_str)
}

fn is_init(v: &Value) -> bool {
    type_of(v) == Some("system") && v.get("subtype").and_then(Value::as_str) == Some("init")
}

/// The line of the last `result` frame.
fn last_result(frames: &[(usize, Value)]) -> Option<usize> {
    frames
        .iter()
        .rev()
        .find(|(_, v)| type_of(v) == Some("result"))
        .map(|(i, _)| *i)
}

/// The line of the first frame that is neither `system/init` nor a `result`: the
/// content a scenario is about.
fn first_content(frames: &[(usize, Value)]) -> Option<usize> {
    frames
        .iter()
        .find(|(_, v)| !is_init(v) && type_of(v) != Some("result"))
        .map(|(i, _)| *i)
}

/// The first content block of type `ty` in any frame: (line, block).
fn first_block(frames: &[(usize, Value)], ty: &str) -> Option<(usize, Value)> {
    frames.iter().find_map(|(i, v)| {
        v.pointer("/message/content")?
            .as_array()?
            .iter()
            .find(|b| type_of(b) == Some(ty))
            .map(|b| (*i, b.clone()))
    })
}

/// Applies `f` to the first content block of type `ty` on line `at`.
fn edit_block(
    r: &Printed,
    at: usize,
    ty: &str,
    f: impl FnOnce(&mut Map<String, Value>),
) -> Option<Printed> {
    r.edit_frame(at, |v| {
        if let Some(Value::Array(blocks)) = v.pointer_mut("/message/content") {
            if let Some(Value::Object(b)) = blocks.iter_mut().find(|b| type_of(b) == Some(ty)) {
                f(b);
            }
        }
    })
}

fn prefixed(v: &mut Value, key: &str) {
    if let Some(Value::String(s)) = v.get_mut(key) {
        *s = format!("mutated: {s} (mutated)");
    }
}

/// `r` with `m` applied (a text changes at both ends, so a regex anchored at one end
/// only lets it through); `None` when the output has nothing `m` could change.
pub fn apply(m: Mutation, r: &Printed) -> Option<Printed> {
    let frames = r.watched();
    match m {
        Mutation::DropFrame => first_content(&frames).map(|at| {
            let mut out = r.clone();
            out.lines.remove(at);
            out
        }),
        Mutation::DuplicateFrame => first_content(&frames).map(|at| {
            let mut out = r.clone();
            out.lines.insert(at + 1, r.lines[at].clone());
            out
        }),
        Mutation::SwapFramesAfterInit => swap_after_init(r, &frames),
        Mutation::AddKeyToKind => every_of_kind(r, &frames, |v| {
            v["streamcheck_audit_key"] = json!(true);
        }),
        Mutation::DropKeyFromKind => every_of_kind(r, &frames, |v| {
            if let Some(m) = v.as_object_mut() {
                m.remove("session_id");
            }
        }),
        Mutation::NewFrameType => {
            let at = last_result(&frames)?;
            let mut out = r.clone();
            let sid = frames[0]
                .1
                .get("session_id")
                .cloned()
                .unwrap_or(Value::Null);
            let frame = json!({"type": "streamcheck_audit_frame", "session_id": sid});
            out.lines.insert(at, frame.to_string());
            Some(out)
        }
        Mutation::ChangeJsonType => r.edit_frame(last_result(&frames)?, |v| {
            if let Some(n) = v.get("num_turns").filter(|n| n.is_number()).cloned() {
                v["num_turns"] = json!(n.to_string());
            }
        }),
        Mutation::ChangeType => r.edit_frame(first_content(&frames)?, |v| {
            let to = if type_of(v) == Some("assistant") {
                "user"
            } else {
                "assistant"
            };
            v["type"] = json!(to);
        }),
        Mutation::ChangeSubtype => r.edit_frame(last_result(&frames)?, |v| {
            let to = match v.get("subtype").and_then(Value::as_str) {
                Some("success") => "error_during_execution",
                _ => "success",
            };
            v["subtype"] = json!(to);
        }),
        Mutation::FlipIsError => r.edit_frame(last_result(&frames)?, |v| {
            if let Some(Value::Bool(b)) = v.get_mut("is_error") {
                *b = !*b;
            }
        }),
        Mutation::ChangeResultText => {
            r.edit_frame(last_result(&frames)?, |v| prefixed(v, "result"))
        }
        Mutation::ChangeAssistantText => {
            let (at, _) = first_block(&frames, "text")?;
            edit_block(r, at, "text", |b| {
                if let Some(Value::String(s)) = b.get_mut("text") {
                    *s = format!("mutated: {s} (mutated)");
                }
            })
        }
        Mutation::ChangeToolName => {
            let (at, _) = first_block(&frames, "tool_use")?;
            edit_block(r, at, "tool_use", |b| {
                if let Some(Value::String(s)) = b.get_mut("name") {
                    s.push_str("_mutated");
                }
            })
        }
        Mutation::ChangeToolUseId => {
            let (_, block) = first_block(&frames, "tool_use")?;
            let id = block.get("id")?.as_str()?.to_string();
            Some(rewrite_all(r, &id, "toolu_mutated0000000000000"))
        }
        Mutation::ChangeSessionId => {
            let sid = frames
                .iter()
                .find_map(|(_, v)| v.get("session_id")?.as_str().map(str::to_string))?;
            Some(rewrite_all(r, &sid, "00000000-0000-4000-8000-0000000000ff"))
        }
        Mutation::ChangeExitCode => change_exit_code(r),
        Mutation::InsertNonJson => Some(insert_non_json(r, &frames)),
        Mutation::FrameAfterResult => frame_after_result(r, &frames),
        Mutation::HangAfterResult => hang_after_result(r, &frames),
        Mutation::KeyOrder => Some(r.map_frames(|v| reversed_keys(v).to_string())),
        Mutation::Whitespace => Some(r.map_frames(|v| {
            let pretty = serde_json::to_string_pretty(v).unwrap_or_default();
            pretty.replace('\n', " ")
        })),
        Mutation::StringEscapes => Some(r.map_frames(escaped)),
        Mutation::UnrelatedStderr => Some(unrelated_stderr(r)),
    }
}

fn swap_after_init(r: &Printed, frames: &[(usize, Value)]) -> Option<Printed> {
    let start = frames.iter().position(|(_, v)| is_init(v))? + 1;
    let ((a, va), (b, vb)) = (frames.get(start)?, frames.get(start + 1)?);
    (va != vb).then(|| {
        let mut out = r.clone();
        out.lines.swap(*a, *b);
        out
    })
}

fn change_exit_code(r: &Printed) -> Option<Printed> {
    let code = r.exit.code?;
    let mut out = r.clone();
    out.exit.code = Some(if code == 0 { 1 } else { 0 });
    Some(out)
}

fn insert_non_json(r: &Printed, frames: &[(usize, Value)]) -> Printed {
    let mut out = r.clone();
    let at = frames.first().map_or(0, |(i, _)| i + 1);
    out.lines.insert(at, "mutated: not a JSON line".into());
    out
}

fn frame_after_result(r: &Printed, frames: &[(usize, Value)]) -> Option<Printed> {
    let at = last_result(frames)?;
    let sid = frames[0]
        .1
        .get("session_id")
        .cloned()
        .unwrap_or(Value::Null);
    let extra = json!({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "after the result"}]}, "session_id": sid});
    let mut out = r.clone();
    out.lines.insert(at + 1, extra.to_string());
    Some(out)
}

/// Every watched frame of the last result's kind (`type/subtype`) changed by `f`.
fn every_of_kind(
    r: &Printed,
    frames: &[(usize, Value)],
    f: impl Fn(&mut Value),
) -> Option<Printed> {
    let at = last_result(frames)?;
    let kind = |v: &Value| crate::frame::frame_kind(v);
    let of = kind(&frames.iter().find(|(i, _)| *i == at)?.1);
    let mut out = r.clone();
    let mut changed = false;
    for (i, _) in frames.iter().filter(|(_, v)| kind(v) == of) {
        if let Some(edited) = out.edit_frame(*i, &f) {
            out = edited;
            changed = true;
        }
    }
    changed.then_some(out)
}

fn hang_after_result(r: &Printed, frames: &[(usize, Value)]) -> Option<Printed> {
    last_result(frames)?;
    let mut out = r.clone();
    out.exit = Exit {
        code: None,
        signal: Some(9),
        termination: Termination::HungAfterResult,
    };
    Some(out)
}

fn unrelated_stderr(r: &Printed) -> Printed {
    let mut out = r.clone();
    let warning = "Warning: an unrelated notice a newer CLI might print\n";
    out.stderr.head = format!("{warning}{}", r.stderr.head);
    out.stderr.total_bytes += warning.len() as u64;
    out
}

/// Every string equal to `from` in every frame becomes `to` (an id, consistently).
fn rewrite_all(r: &Printed, from: &str, to: &str) -> Printed {
    let swap = |s: &str| if s == from { to } else { s }.to_string();
    r.map_frames(|v| map_strings(v, &swap).to_string())
}

fn reversed_keys(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .rev()
                .map(|(k, x)| (k.clone(), reversed_keys(x)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(reversed_keys).collect()),
        other => other.clone(),
    }
}

/// `v` compact, with every non-ASCII character and `/` in strings written as an escape.
fn escaped(v: &Value) -> String {
    let mut out = String::new();
    write_escaped(v, &mut out);
    out
}

fn write_escaped(v: &Value, out: &mut String) {
    match v {
        Value::String(s) => escape_str(s, out),
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_escaped(x, out);
            }
            out.push(']');
        }
        Value::Object(m) => {
            out.push('{');
            for (i, (k, x)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                escape_str(k, out);
                out.push(':');
                write_escaped(x, out);
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

fn escape_str(s: &str, out: &mut String) {
    use std::fmt::Write as _;
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '/' => out.push_str("\\/"),
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{u:04x}");
                }
            }
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorded(stdout: &str) -> Printed {
        let exit = Exit {
            code: Some(0),
            ..Exit::default()
        };
        Printed::new(stdout, exit, Stderr::default())
    }

    const OUT: &str = concat!(
        r#"{"type":"system","subtype":"init","session_id":"s1"}"#,
        "\n",
        r#"{"type":"assistant","message":{"content":[{"type":"text","text":"héllo/x"},{"type":"tool_use","id":"t1","name":"Bash"}]},"session_id":"s1"}"#,
        "\n",
        r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1"}]},"session_id":"s1"}"#,
        "\n",
        r#"{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"s1"}"#,
        "\n"
    );

    #[test]
    fn controls_keep_every_value() {
        let r = recorded(OUT);
        let values = |r: &Printed| -> Vec<Value> {
            r.lines
                .iter()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect()
        };
        for m in [
            Mutation::KeyOrder,
            Mutation::Whitespace,
            Mutation::StringEscapes,
        ] {
            let out = apply(m, &r).unwrap();
            assert_ne!(out.lines, r.lines, "{m} changed no byte");
            assert_eq!(values(&out), values(&r), "{m} changed a value");
        }
        let escaped = apply(Mutation::StringEscapes, &r).unwrap();
        assert!(escaped.lines[1].contains(r"h\u00e9llo\/x"));
    }

    #[test]
    fn ids_change_consistently() {
        let out = apply(Mutation::ChangeToolUseId, &recorded(OUT)).unwrap();
        assert!(!out.stdout().contains("\"t1\""));
        assert_eq!(out.stdout().matches("toolu_mutated").count(), 2);
        let out = apply(Mutation::ChangeSessionId, &recorded(OUT)).unwrap();
        assert!(!out.stdout().contains("\"s1\""));
    }

    #[test]
    fn result_mutations_touch_the_last_result_only() {
        let r = recorded(OUT);
        let flipped = apply(Mutation::FlipIsError, &r).unwrap();
        assert!(flipped.lines[3].contains(r#""is_error":true"#));
        assert_eq!(flipped.lines[..3], r.lines[..3]);
        let swapped = apply(Mutation::SwapFramesAfterInit, &r).unwrap();
        assert_eq!(
            (&swapped.lines[1], &swapped.lines[2]),
            (&r.lines[2], &r.lines[1])
        );
    }

    #[test]
    fn a_mutation_with_nothing_to_change_does_not_apply() {
        let r = recorded("{\"type\":\"system\",\"subtype\":\"init\"}\n{\"type\":\"result\"}\n");
        assert!(apply(Mutation::ChangeToolName, &r).is_none());
        assert!(apply(Mutation::FlipIsError, &r).is_none());
        assert!(apply(Mutation::DropFrame, &r).is_none());
    }
}
