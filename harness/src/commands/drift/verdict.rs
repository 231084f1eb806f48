//! The verdict on a pair of versions: each change the differ found, classified as
//! **breaking** (a client written for the older version may break: a frame type, field
//! or tool gone, a field's type changed, frame order changed, exit code or result
//! subtype changed) or **additive** (new frame types, new fields, new tools, frames
//! inserted into an otherwise unchanged sequence).

use super::model::*;
use serde::{Deserialize, Serialize};
use std::fmt;

/// What changed, one variant per kind of change the differ reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum What {
    FrameTypeGone,
    FieldGone,
    FieldTypeChanged,
    ToolGone,
    OrderChanged,
    NoOutput,
    ExitCodeChanged,
    ResultChanged,
    FrameTypeAdded,
    FieldAdded,
    ToolAdded,
    FramesInserted,
}

impl fmt::Display for What {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            What::FrameTypeGone => "frame type gone",
            What::FieldGone => "field gone",
            What::FieldTypeChanged => "field type changed",
            What::ToolGone => "tool gone from init",
            What::OrderChanged => "frame order changed",
            What::NoOutput => "no output any more",
            What::ExitCodeChanged => "exit code changed",
            What::ResultChanged => "result changed",
            What::FrameTypeAdded => "frame type added",
            What::FieldAdded => "field added",
            What::ToolAdded => "tool added to init",
            What::FramesInserted => "frames inserted",
        })
    }
}

/// One change: where it is (scenario, frame, JSON path) and what it was before and after.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    pub what: What,
    /// The first scenario showing it (`None`: seen across the suite, e.g. init tools).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario: Option<String>,
    pub frame: String,
    pub path: String,
    pub from: String,
    pub to: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "class", content = "change", rename_all = "snake_case")]
pub enum Change {
    Breaking(Finding),
    Additive(Finding),
}

impl Change {
    pub fn is_breaking(&self) -> bool {
        matches!(self, Change::Breaking(_))
    }

    pub fn finding(&self) -> &Finding {
        match self {
            Change::Breaking(f) | Change::Additive(f) => f,
        }
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = self.scenario.as_deref().unwrap_or("(suite)");
        write!(f, "{}: {at}, {} `{}`", self.what, self.frame, self.path)?;
        if !self.from.is_empty() || !self.to.is_empty() {
            write!(f, ": {} → {}", show(&self.from), show(&self.to))?;
        }
        Ok(())
    }
}

fn show(s: &str) -> &str {
    if s.is_empty() {
        "—"
    } else {
        s
    }
}

fn finding(what: What, scenario: Option<&String>, frame: &str, path: &str) -> Finding {
    Finding {
        what,
        scenario: scenario.cloned(),
        frame: frame.to_string(),
        path: path.to_string(),
        from: String::new(),
        to: String::new(),
    }
}

/// Every change of a pair, breaking ones first.
pub fn classify(p: &PairDrift) -> Vec<Change> {
    let mut out = Vec::new();
    for k in &p.frame_types_gone {
        let f = finding(
            What::FrameTypeGone,
            k.scenarios.first(),
            &k.frame_type,
            "type",
        );
        out.push(Change::Breaking(f));
    }
    for k in &p.frame_types_added {
        let f = finding(
            What::FrameTypeAdded,
            k.scenarios.first(),
            &k.frame_type,
            "type",
        );
        out.push(Change::Additive(f));
    }
    out.extend(p.fields.iter().map(field));
    for (tools, what) in [
        (&p.tools_removed, What::ToolGone),
        (&p.tools_added, What::ToolAdded),
    ] {
        for t in tools {
            let mut f = finding(what, None, "system/init", "tools[]");
            f.from = if what == What::ToolGone {
                t.clone()
            } else {
                String::new()
            };
            f.to = if what == What::ToolAdded {
                t.clone()
            } else {
                String::new()
            };
            out.push(tool_change(f));
        }
    }
    out.extend(p.sequences.iter().map(sequence));
    out.extend(
        p.exit_codes
            .iter()
            .map(|c| scenario_change(c, What::ExitCodeChanged)),
    );
    out.extend(
        p.result_subtypes
            .iter()
            .map(|c| scenario_change(c, What::ResultChanged)),
    );
    out.sort_by_key(|c| !c.is_breaking());
    out
}

fn tool_change(f: Finding) -> Change {
    match f.what {
        What::ToolGone => Change::Breaking(f),
        _ => Change::Additive(f),
    }
}

fn field(c: &FieldChange) -> Change {
    let what = match c.change {
        FieldChangeKind::Added => What::FieldAdded,
        FieldChangeKind::Removed => What::FieldGone,
        FieldChangeKind::TypeChanged => What::FieldTypeChanged,
    };
    let mut f = finding(what, c.scenarios.first(), &c.frame_type, &c.path);
    f.from = c.from_types.join("|");
    f.to = c.to_types.join("|");
    match what {
        What::FieldAdded => Change::Additive(f),
        _ => Change::Breaking(f),
    }
}

fn sequence(c: &SequenceChange) -> Change {
    let what = match c.change {
        SequenceChangeKind::Reordered => What::OrderChanged,
        SequenceChangeKind::NoOutput => What::NoOutput,
        SequenceChangeKind::Changed if is_subsequence(&c.from, &c.to) => What::FramesInserted,
        SequenceChangeKind::Changed => What::OrderChanged,
    };
    let mut f = finding(what, Some(&c.scenario), "(sequence)", "frames[]");
    f.from = c.from.join(" ");
    f.to = c.to.join(" ");
    match what {
        What::FramesInserted => Change::Additive(f),
        _ => Change::Breaking(f),
    }
}

/// Whether `to` is `from` with frames inserted (every frame of `from`, in order).
fn is_subsequence(from: &[String], to: &[String]) -> bool {
    let mut rest = to.iter();
    from.iter().all(|x| rest.any(|y| y == x))
}

fn scenario_change(c: &ScenarioChange, what: What) -> Change {
    let (frame, path) = match what {
        What::ExitCodeChanged => ("(process)", "exit_code"),
        _ if base(&c.from) == base(&c.to) => ("result", "is_error"),
        _ => ("result", "subtype"),
    };
    let mut f = finding(what, Some(&c.scenario), frame, path);
    f.from = c.from.clone();
    f.to = c.to.clone();
    Change::Breaking(f)
}

/// A result-subtypes text without its ` (is_error)` marks.
fn base(s: &str) -> String {
    s.replace(" (is_error)", "")
}

/// Counts of a pair's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counts {
    pub breaking: usize,
    pub additive: usize,
}

pub fn counts(changes: &[Change]) -> Counts {
    let breaking = changes.iter().filter(|c| c.is_breaking()).count();
    Counts {
        breaking,
        additive: changes.len() - breaking,
    }
}
