//! The verdict on a pair of versions: each change the protocol check and the differ found,
//! classified as **breaking** (a client written for the older version may break: a frame
//! type, key or name (an init tool, a permission mode...) gone, a key's type changed to one
//! the old type is not part of, frame order changed, a scenario printing nothing any more,
//! exit code or result subtype/`is_error` changed) or **additive** (new frame types, keys or
//! names, a key widened to a union holding its old type or seen with fewer of its types,
//! frames inserted into an otherwise unchanged sequence, and a scenario the older version
//! refused outright, printing no frame, that runs now).

use super::model::*;
use crate::protocol::check;
use crate::trial_id::ScenarioId;
use std::collections::{BTreeMap, BTreeSet};

fn finding(what: What, scenario: Option<&ScenarioId>, frame: &str, path: &str) -> Finding {
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
    let mut out = protocol_changes(p);
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
fn several(scenarios: &[ScenarioId]) -> Vec<ScenarioId> {
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
                let seen: Vec<ScenarioId> =
                    c.finding().all_scenarios().into_iter().cloned().collect();
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

/// The protocol check's findings as changes. A key, frame kind or name the newer release
/// no longer prints, or a key gone where the older one always printed it, is breaking; what
/// is new is additive. A JSON type new on a key is a widening (additive) unless the key also
/// lost one of its older types, which makes it a changed type (breaking); a lost type alone
/// is a narrowing (additive).
fn protocol_changes(p: &PairDrift) -> Vec<Change> {
    let mut out = Vec::new();
    // Per (kind, path): the older and the newer release's types, where either side's check
    // found a type the other lacks.
    let mut types: BTreeMap<(&str, &str), TypeShift> = BTreeMap::new();
    for c in &p.printed {
        let at = |what, frame: &str, path: &str| row(what, c, frame, path);
        match (c.finding.change, &c.finding.what) {
            (check::Change::New, check::What::Kind { kind }) => {
                out.push(Change::Additive(at(What::FrameTypeAdded, kind, "type")));
            }
            (check::Change::New, check::What::Key { kind, path, types }) => {
                let mut f = at(What::FieldAdded, kind, path);
                f.to = types.join("|");
                out.push(Change::Additive(f));
            }
            (check::Change::Gone, check::What::Key { kind, path, types }) => {
                let mut f = at(What::FieldGone, kind, path);
                f.from = types.join("|");
                out.push(Change::Breaking(f));
            }
            (
                check::Change::New,
                check::What::Type {
                    kind,
                    path,
                    types: new,
                    known,
                },
            ) => {
                let shift = types.entry((kind, path)).or_default();
                shift.older.extend(known.iter().cloned());
                shift.new.extend(new.iter().cloned());
                shift.seen(c);
            }
            (check::Change::New, check::What::Name { list, name, .. }) => {
                out.push(Change::Additive(at(What::NameAdded, list, name)));
            }
            (check::Change::Gone, check::What::Name { list, name, .. }) => {
                out.push(Change::Breaking(at(What::NameGone, list, name)));
            }
            _ => {}
        }
    }
    for c in &p.not_printed {
        let at = |what, frame: &str, path: &str| row(what, c, frame, path);
        match &c.finding.what {
            check::What::Kind { kind } => {
                out.push(Change::Breaking(at(What::FrameTypeGone, kind, "type")));
            }
            check::What::Key { kind, path, types } => {
                let mut f = at(What::FieldGone, kind, path);
                f.from = types.join("|");
                out.push(Change::Breaking(f));
            }
            check::What::Type {
                kind,
                path,
                types: lost,
                known,
            } => {
                let shift = types.entry((kind, path)).or_default();
                shift.newer.extend(known.iter().cloned());
                shift.lost.extend(lost.iter().cloned());
                shift.seen(c);
            }
            check::What::Name { list, name, .. } => {
                out.push(Change::Breaking(at(What::NameGone, list, name)));
            }
            check::What::Inventory { .. } => {}
        }
    }
    for ((kind, path), shift) in types {
        out.push(shift.change(kind, path));
    }
    out
}

/// A key's JSON types on each side, where either side's check found a type the other
/// lacks: the types each inventory holds (`older` from the newer run's check, `newer` from
/// the older run's), the types found new and found lost, and where.
#[derive(Default)]
struct TypeShift {
    older: BTreeSet<String>,
    newer: BTreeSet<String>,
    new: BTreeSet<String>,
    lost: BTreeSet<String>,
    scenarios: Vec<ScenarioId>,
}

impl TypeShift {
    fn seen(&mut self, c: &ProtocolChange) {
        for s in &c.scenarios {
            if !self.scenarios.iter().any(|id| id == s) {
                self.scenarios.push(s.as_str().into());
            }
        }
    }

    fn change(self, kind: &str, path: &str) -> Change {
        let join = |t: BTreeSet<String>| t.into_iter().collect::<Vec<_>>().join("|");
        let (widened, narrowed) = (!self.new.is_empty(), !self.lost.is_empty());
        // A side whose inventory no finding gave is the other side's with the types found.
        let older = match widened {
            true => self.older,
            false => self.newer.union(&self.lost).cloned().collect(),
        };
        let newer = match narrowed {
            true => self.newer,
            false => older.union(&self.new).cloned().collect(),
        };
        let what = match (widened, narrowed) {
            (true, true) => What::FieldTypeChanged,
            (true, false) => What::FieldWidened,
            _ => What::FieldNarrowed,
        };
        let mut f = finding(what, self.scenarios.first(), kind, path);
        f.scenarios = several(&self.scenarios);
        (f.from, f.to) = (join(older), join(newer));
        match what {
            What::FieldTypeChanged => Change::Breaking(f),
            _ => Change::Additive(f),
        }
    }
}

/// A change's row: where the protocol check saw it.
fn row(what: What, c: &ProtocolChange, frame: &str, path: &str) -> Finding {
    let ids: Vec<ScenarioId> = c.scenarios.iter().map(|s| s.as_str().into()).collect();
    Finding {
        scenarios: several(&ids),
        ..finding(what, ids.first(), frame, path)
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
