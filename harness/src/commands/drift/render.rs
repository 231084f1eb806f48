//! drift.md: the versions, then one section per pair of neighbouring versions.

use super::model::*;
use super::verdict::{counts, is_subsequence};
use crate::protocol::check;
use crate::text::{clip, md_escape, Table};
use std::fmt::Write as _;

/// drift.md: `command` is shown at the top, `notes` under it.
pub fn render_md(d: &Drift, command: &str, notes: &[String]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Protocol drift across versions\n");
    let _ = writeln!(s, "Produced by:\n\n```\n{command}\n```\n");
    for n in notes {
        let _ = writeln!(s, "- {n}");
    }
    if !notes.is_empty() {
        s.push('\n');
    }
    verdicts(&mut s, &d.pairs);
    versions(&mut s, &d.versions);
    s.push('\n');
    let _ = writeln!(s, "Pass/fail is against the scenarios' expectations, which are written for the pinned Claude Code; a failure on another version is drift from it.\n");
    if d.pairs.is_empty() {
        let _ = writeln!(s, "Fewer than two versions could run: nothing to compare.");
    }
    for p in &d.pairs {
        pair(&mut s, p);
    }
    s
}

/// One short block per pair: counts, then each breaking change on a line.
fn verdicts(s: &mut String, pairs: &[PairDrift]) {
    if pairs.is_empty() {
        return;
    }
    let _ = writeln!(s, "## Verdict\n");
    for p in pairs {
        let n = counts(&p.verdict);
        let word = if n.breaking > 0 {
            "BREAKING"
        } else {
            "compatible"
        };
        let _ = writeln!(
            s,
            "### {} → {}: {word}, {} breaking, {} additive\n",
            p.from, p.to, n.breaking, n.additive
        );
        for c in p.verdict.iter().filter(|c| c.is_breaking()) {
            let _ = writeln!(s, "- {}", md_escape(&clip(&c.finding().to_string(), 240)));
        }
        if n.breaking > 0 {
            s.push('\n');
        }
        if !p.pending.is_empty() {
            let _ = writeln!(
                s,
                "Opened {} pending version block(s) for {} (only what differs from the expectation it refines), to accept or reject with `streamcheck review`: {}\n",
                p.pending.len(),
                p.to,
                p.pending.iter().map(|x| format!("`{x}`")).collect::<Vec<_>>().join(", ")
            );
        }
    }
}

fn versions(s: &mut String, versions: &[VersionSummary]) {
    let _ = writeln!(s, "## Versions\n");
    let mut table = Table::new([
        "target",
        "version",
        "passed",
        "failed",
        "known",
        "skipped",
        "ran, no frame",
        "trial time",
    ]);
    for v in versions {
        if let Some(why) = &v.unavailable {
            let why = format!("not available: {why}");
            table.row([v.target.as_str(), "—", "", "", "", "", "", &why]);
            continue;
        }
        table.row([
            v.target.to_string(),
            v.version.as_deref().unwrap_or("?").to_string(),
            v.passed.to_string(),
            v.failed.to_string(),
            v.known.to_string(),
            v.skipped.to_string(),
            v.no_frames.to_string(),
            format!("{:.0} s", v.trial_ms as f64 / 1000.0),
        ]);
    }
    s.push_str(&table.finish());
    for v in versions {
        if let Some((line, n)) = &v.no_frames_stderr {
            let _ = writeln!(
                s,
                "\n{}: {} scenario(s) printed no frame; most common first stderr line ({n}×): `{}`",
                v.target,
                v.no_frames,
                md_escape(line)
            );
        }
    }
}

fn pair(s: &mut String, p: &PairDrift) {
    let _ = writeln!(s, "## {} → {}\n", p.from, p.to);
    let _ = writeln!(
        s,
        "{} scenario(s) ran on both. {} status flip(s), {} protocol finding(s) on {} ({} of what only {} printed), {} sequence change(s), {} exit-code change(s), {} result-subtype change(s), {} changed value path(s).\n",
        p.compared,
        p.status_flips.len(),
        p.printed.len(),
        p.to,
        p.not_printed.len(),
        p.from,
        p.sequences.len(),
        p.exit_codes.len(),
        p.result_subtypes.len(),
        p.values.len()
    );
    if p.is_empty() {
        let _ = writeln!(s, "No drift.\n");
        return;
    }
    printed(s, p);
    status_flips(s, p);
    change_table(s, "Exit codes", &p.exit_codes, &p.from, &p.to);
    change_table(s, "Result subtypes", &p.result_subtypes, &p.from, &p.to);
    sequences(s, p);
    values(s, &p.values);
}

/// The protocol check's findings each way, in its own words (as `run` and `verdict` print
/// them).
fn printed(s: &mut String, p: &PairDrift) {
    let sides = [
        (
            &p.printed,
            format!("{} against what {} printed", p.to, p.from),
        ),
        (
            &p.not_printed,
            format!(
                "{} against what {} printed: what only {} printed",
                p.from, p.to, p.from
            ),
        ),
    ];
    for (changes, title) in sides {
        if changes.is_empty() {
            continue;
        }
        let _ = writeln!(s, "### Protocol: {title}\n");
        for c in changes {
            let _ = writeln!(s, "- {}", check::line(&c.finding, &c.scenarios));
        }
        s.push('\n');
    }
}

fn status_flips(s: &mut String, p: &PairDrift) {
    if p.status_flips.is_empty() {
        return;
    }
    s.push_str("### Pass/fail flips\n\n");
    let mut table = Table::new([
        "scenario",
        &p.from,
        &p.to,
        "why (the side that did not pass)",
    ]);
    for f in &p.status_flips {
        let why = match (&f.from_reason, &f.to_reason) {
            (_, Some(r)) if f.to != StatusName::Passed => format!("{}: {r}", p.to),
            (Some(r), _) => format!("{}: {r}", p.from),
            _ => String::new(),
        };
        table.row([
            format!("`{}`", f.scenario),
            f.from.to_string(),
            f.to.to_string(),
            clip(&why, 160),
        ]);
    }
    s.push_str(&table.finish());
    s.push('\n');
}

/// A `### title` table of per-scenario before/after values, if there are any.
fn change_table(s: &mut String, title: &str, changes: &[ScenarioChange], from: &str, to: &str) {
    if changes.is_empty() {
        return;
    }
    let _ = writeln!(s, "### {title}\n");
    let mut table = Table::new(["scenario", from, to]);
    for c in changes {
        table.row([&format!("`{}`", c.scenario), &c.from, &c.to]);
    }
    s.push_str(&table.finish());
    s.push('\n');
}

fn sequences(s: &mut String, p: &PairDrift) {
    if p.sequences.is_empty() {
        return;
    }
    let list = |l: &[String]| {
        if l.is_empty() {
            "(none)".to_string()
        } else {
            l.join(", ")
        }
    };
    let _ = writeln!(s, "### Frame sequences\n");
    // Frames inserted into otherwise unchanged runs: one line per set of frames inserted.
    let mut inserted: Vec<(Vec<String>, Vec<&str>)> = Vec::new();
    let is_insertion = |q: &SequenceChange| {
        q.change == SequenceChangeKind::Changed && is_subsequence(&q.from, &q.to)
    };
    for q in p.sequences.iter().filter(|q| is_insertion(q)) {
        let what = super::verdict::inserted(&q.from, &q.to);
        match inserted.iter_mut().find(|(w, _)| *w == what) {
            Some((_, scenarios)) => scenarios.push(&q.scenario),
            None => inserted.push((what, vec![&q.scenario])),
        }
    }
    for (what, scenarios) in &inserted {
        let names: Vec<String> = scenarios.iter().map(|x| format!("`{x}`")).collect();
        let _ = writeln!(
            s,
            "- frames inserted ({}) in {} scenario(s): {}",
            what.join(", "),
            scenarios.len(),
            names.join(", ")
        );
    }
    for q in p.sequences.iter().filter(|q| !is_insertion(q)) {
        let _ = writeln!(
            s,
            "- `{}` ({}):\n  - {}: {}\n  - {}: {}",
            q.scenario,
            q.change,
            p.from,
            list(&q.from),
            p.to,
            list(&q.to),
        );
    }
    s.push('\n');
}

fn values(s: &mut String, values: &[ValueChange]) {
    const SHOWN: usize = 40;
    if values.is_empty() {
        return;
    }
    s.push_str("### Values (same frame type at the same place; volatile values redacted)\n\n");
    let mut table = Table::new([
        "frame type",
        "path",
        "scenarios",
        "example before",
        "example after",
    ]);
    for v in values.iter().take(SHOWN) {
        table.row([
            format!("`{}`", v.frame_type),
            format!("`{}`", v.path),
            v.count.to_string(),
            format!("`{}`", v.from.replace('`', "'")),
            format!("`{}`", v.to.replace('`', "'")),
        ]);
    }
    s.push_str(&table.finish());
    if values.len() > SHOWN {
        let _ = writeln!(s, "\n… and {} more in drift.json.", values.len() - SHOWN);
    }
    s.push('\n');
}
