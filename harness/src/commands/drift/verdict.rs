//! The verdict on a pair of versions: each change the differ found, classified as
//! **breaking** (a client written for the older version may break: a frame type, field
//! or tool gone, a field's type changed to one the old type is not part of, frame order
//! changed, a scenario printing nothing any more, exit code or result subtype/`is_error`
//! changed) or **additive** (new frame types, new fields, new tools, a field widened to
//! a union holding its old type or seen with fewer of its types, frames inserted into an
//! otherwise unchanged sequence, and a scenario the older version refused outright,
//! printing no frame, that runs now).

use super::model::*;

fn finding(what: What, scenario: Option<&String>, frame: &str, path: &str) -> Finding {
    Finding {
        what,
        scenario: scenario.cloned(),
        scenarios: Vec::new(),
        frame: frame.to_string(),
        path: path.to_string(),
        from: String::new(),
        to: String::new(),
    }
}

/// Every change of a pair, breaking ones first.
pub fn classify(p: &PairDrift) -> Vec<Change> {
    let mut out = Vec::new();
    let kinds = [
        (
            &p.frame_types_gone,
            What::FrameTypeGone,
            Change::Breaking as fn(Finding) -> Change,
        ),
        (&p.frame_types_added, What::FrameTypeAdded, Change::Additive),
    ];
    for (list, what, change) in kinds {
        for k in list {
            let f = finding(what, k.scenarios.first(), &k.frame_type, "type");
            out.push(change(Finding {
                scenarios: several(&k.scenarios),
                ..f
            }));
        }
    }
    out.extend(p.fields.iter().map(field));
    out.extend(tool_changes(p));
    out.extend(p.sequences.iter().map(sequence));
    let now_runs = |c: &ScenarioChange| {
        p.sequences
            .iter()
            .any(|s| s.scenario == c.scenario && s.change == SequenceChangeKind::NowRuns)
    };
    for (list, what) in [
        (&p.exit_codes, What::ExitCodeChanged),
        (&p.result_subtypes, What::ResultChanged),
    ] {
        out.extend(list.iter().map(|c| scenario_change(c, what, now_runs(c))));
    }
    let mut out = one_per_change(out);
    out.sort_by_key(|c| !c.is_breaking());
    out
}

/// The scenarios a change was seen in, when more than one (one is `scenario`).
fn several(scenarios: &[String]) -> Vec<String> {
    match scenarios.len() {
        0 | 1 => Vec::new(),
        _ => scenarios.to_vec(),
    }
}

/// The same change (class, kind, frame, path, before and after) seen in several
/// scenarios becomes one finding listing them, where it was first seen.
pub fn one_per_change(changes: Vec<Change>) -> Vec<Change> {
    let mut out: Vec<Change> = Vec::new();
    for c in changes {
        let same = |o: &Change| {
            let (a, b) = (o.finding(), c.finding());
            o.is_breaking() == c.is_breaking()
                && (a.what, &a.frame, &a.path, &a.from, &a.to)
                    == (b.what, &b.frame, &b.path, &b.from, &b.to)
        };
        match out.iter_mut().find(|o| same(o)) {
            Some(o) => {
                let seen: Vec<String> = c.finding().all_scenarios().into_iter().cloned().collect();
                let f = o.finding_mut();
                if f.scenarios.is_empty() {
                    f.scenarios = f.scenario.iter().cloned().collect();
                }
                for s in seen {
                    if !f.scenarios.contains(&s) {
                        f.scenarios.push(s);
                    }
                }
            }
            None => out.push(c),
        }
    }
    out
}

/// Tools gone from (breaking) or added to (additive) `system/init`, each with the first
/// scenario whose init shows it.
fn tool_changes(p: &PairDrift) -> Vec<Change> {
    let mut out = Vec::new();
    let first = |t: &String| p.tool_scenarios.get(t).and_then(|s| s.first());
    for t in &p.tools_removed {
        let mut f = finding(What::ToolGone, first(t), "system/init", "tools[]");
        f.from = t.clone();
        out.push(Change::Breaking(f));
    }
    for t in &p.tools_added {
        let mut f = finding(What::ToolAdded, first(t), "system/init", "tools[]");
        f.to = t.clone();
        out.push(Change::Additive(f));
    }
    out
}

fn field(c: &FieldChange) -> Change {
    let within = |a: &[String], b: &[String]| a.iter().all(|t| b.contains(t));
    let what = match c.change {
        FieldChangeKind::Added => What::FieldAdded,
        FieldChangeKind::Removed => What::FieldGone,
        FieldChangeKind::TypeChanged if within(&c.from_types, &c.to_types) => What::FieldWidened,
        FieldChangeKind::TypeChanged if within(&c.to_types, &c.from_types) => What::FieldNarrowed,
        FieldChangeKind::TypeChanged => What::FieldTypeChanged,
    };
    let mut f = finding(what, c.scenarios.first(), &c.frame_type, &c.path);
    f.scenarios = several(&c.scenarios);
    f.from = c.from_types.join("|");
    f.to = c.to_types.join("|");
    match what {
        What::FieldGone | What::FieldTypeChanged => Change::Breaking(f),
        _ => Change::Additive(f),
    }
}

fn sequence(c: &SequenceChange) -> Change {
    let what = match c.change {
        SequenceChangeKind::Reordered => What::OrderChanged,
        SequenceChangeKind::NoOutput => What::NoOutputAnyMore,
        SequenceChangeKind::NowRuns => What::NowRuns,
        SequenceChangeKind::Changed if is_subsequence(&c.from, &c.to) => What::FramesInserted,
        SequenceChangeKind::Changed => What::OrderChanged,
    };
    let mut f = finding(what, Some(&c.scenario), "(sequence)", "frames[]");
    match what {
        // What was inserted, so the same frame inserted into many runs is one change.
        What::FramesInserted => f.to = inserted(&c.from, &c.to).join(" "),
        _ => {
            f.from = c.from.join(" ");
            f.to = c.to.join(" ");
        }
    }
    match what {
        What::FramesInserted | What::NowRuns => Change::Additive(f),
        _ => Change::Breaking(f),
    }
}

/// The frames of `to` that are not `from`'s (matched in order), each as `+kind`, once.
pub fn inserted(from: &[String], to: &[String]) -> Vec<String> {
    let mut rest = from.iter().peekable();
    let mut out: Vec<String> = Vec::new();
    for x in to {
        if rest.peek() == Some(&x) {
            rest.next();
        } else if !out.contains(&format!("+{x}")) {
            out.push(format!("+{x}"));
        }
    }
    out
}

/// Whether `to` is `from` with frames inserted (every frame of `from`, in order).
pub fn is_subsequence(from: &[String], to: &[String]) -> bool {
    let mut rest = to.iter();
    from.iter().all(|x| rest.any(|y| y == x))
}

/// An exit code or result change; additive when the older version printed no frame at
/// all (the scenario runs now), breaking otherwise.
fn scenario_change(c: &ScenarioChange, what: What, now_runs: bool) -> Change {
    let (frame, path) = match what {
        What::ExitCodeChanged => ("(process)", "exit_code"),
        _ if base(&c.from) == base(&c.to) => ("result", "is_error"),
        _ => ("result", "subtype"),
    };
    let mut f = finding(what, Some(&c.scenario), frame, path);
    f.from = c.from.clone();
    f.to = match c.new_fields.is_empty() {
        true => c.to.clone(),
        false => format!("{} with new {}", c.to, c.new_fields.join(", ")),
    };
    match now_runs {
        true => Change::Additive(f),
        false => Change::Breaking(f),
    }
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
