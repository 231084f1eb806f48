//! The report as text: `parity.md`, and the few lines the terminal gets. Returned as
//! strings; writing and printing them is the caller's.

use super::aspects::{Aspect, Verdict};
use super::parity::{Parity, ScenarioParity, TargetSide};
use crate::text::{clip_line, Table};
use std::fmt::Write as _;

/// `parity.md`.
pub fn render_md(p: &Parity) -> String {
    let mut s = String::new();
    intro(&mut s, p);
    overview(&mut s, p);
    fields_table(&mut s, p);
    shape_differences(&mut s, p);
    let _ = writeln!(s, "\n## Per scenario");
    for sc in &p.scenarios {
        scenario_section(&mut s, p, sc);
    }
    s
}

/// The title, the command, the counts, how to read the tables and the caveats.
fn intro(s: &mut String, p: &Parity) {
    let side = |t: &TargetSide| format!("{} {}", t.name, t.version);
    let _ = writeln!(s, "# Parity: {} vs {}\n", side(&p.a), side(&p.b));
    let _ = writeln!(s, "```\n{}\n```\n", p.command);
    let c = &p.counts;
    let _ = writeln!(
        s,
        "Generated {}. {} scenario(s) run on both: **{} that differ** ({} in substance, {} in key paths), {} the same, {} that one side cannot run as written (its flags or stdin are the other dialect's); {} not compared.\n",
        p.generated_at,
        c.compared,
        c.differ,
        c.differ_in_substance,
        c.differ_in_fields,
        c.compared
            .saturating_sub(c.differ)
            .saturating_sub(c.cannot_run_as_written),
        c.cannot_run_as_written,
        c.not_compared,
    );
    if let Some(line) = control_line(p) {
        let _ = writeln!(s, "{line}\n");
    }
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
}

/// One row per scenario, one column per aspect.
fn overview(s: &mut String, p: &Parity) {
    let _ = writeln!(s, "## Overview\n");
    let header = Aspect::ALL.iter().map(|a| a.short().to_string());
    let mut table = Table::new(
        std::iter::once("scenario".to_string())
            .chain(header)
            .chain(["≠".to_string(), "key paths ≠".to_string()]),
    );
    for sc in &p.scenarios {
        let name = format!("[{}](#{})", sc.scenario, anchor(&sc.scenario));
        if let Some(why) = &sc.not_compared {
            let blank = std::iter::repeat_n(String::new(), Aspect::ALL.len());
            let why = format!("not compared: {}", clip_line(why, 80));
            table.row([name, why].into_iter().chain(blank));
            continue;
        }
        let verdicts = Aspect::ALL.iter().map(|a| {
            let v = sc
                .aspects
                .iter()
                .find(|r| r.aspect == *a)
                .map_or(Verdict::Neither, |r| r.verdict);
            v.symbol().to_string()
        });
        let count = if !sc.cannot_run_as_written.is_empty() {
            format!(
                "not run as written by {}",
                sc.cannot_run_as_written.join(", ")
            )
        } else if sc.differences.is_empty() {
            "0".to_string()
        } else {
            format!("**{}**", sc.differences.len())
        };
        let fields = match sc.fields.len() {
            0 => "0".to_string(),
            n => format!("**{n}**"),
        };
        table.row(std::iter::once(name).chain(verdicts).chain([count, fields]));
    }
    s.push_str(&table.finish());
}

/// Per frame kind and key path, how it differs and in how many scenarios.
fn fields_table(s: &mut String, p: &Parity) {
    let _ = writeln!(s, "\n## Key paths that differ\n");
    if p.fields_by_path.is_empty() {
        let _ = writeln!(
            s,
            "None: in every scenario run on both, each frame kind carries the same key paths with the same JSON types and normalised values."
        );
        return;
    }
    let _ = writeln!(
        s,
        "{} row(s). Per frame kind and key path (a frame kind alone: only one side printed it), whether only one side printed it, its JSON type differs or its values differ; values normalised (durations, costs, times, session ids and uuids hidden; sandbox paths `$WORKSPACE`/`$HOME`). Nothing is listed under a key one side lacks.\n",
        p.fields_by_path.len()
    );
    s.push_str(&fields_rows(&p.fields_by_path));
}

/// The table of [`fields_table`], alone.
pub(crate) fn fields_rows(rows: &[super::fields::PathRow]) -> String {
    let mut table = Table::new(["frame", "key path", "differs", "scenarios", "example"]);
    for r in rows {
        let path = match r.path.as_str() {
            "" => "(the frame)".to_string(),
            p => format!("`{p}`"),
        };
        let scenarios = match r.scenarios.as_slice() {
            [one] => format!("1 ({one})"),
            [first, ..] => format!("{} ({first}, ...)", r.scenarios.len()),
            [] => "0".to_string(),
        };
        table.row([
            format!("`{}`", r.kind),
            path,
            r.differs.clone(),
            scenarios,
            clip_line(&r.example, 160),
        ]);
    }
    table.finish()
}

/// The shape differences and unmapped frame kinds, said once for all scenarios.
fn shape_differences(s: &mut String, p: &Parity) {
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
}

/// A scenario's heading, notes, aspect table and differences.
fn scenario_section(s: &mut String, p: &Parity, sc: &ScenarioParity) {
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
        let _ = writeln!(s, "- {}", clip_line(n, 400));
    }
    if sc.not_compared.is_some() {
        return;
    }
    s.push('\n');
    let mut table = Table::new(["aspect", &p.a.name, &p.b.name, ""]);
    for r in &sc.aspects {
        if r.verdict == Verdict::Neither && r.aspect != Aspect::Exit {
            continue;
        }
        table.row([
            r.aspect.label(),
            &clip_line(&r.a, 140),
            &clip_line(&r.b, 140),
            r.verdict.symbol(),
        ]);
    }
    s.push_str(&table.finish());
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
    if sc.cannot_run_as_written.is_empty() && !sc.fields.is_empty() {
        let _ = writeln!(s, "\nKey paths that differ:\n");
        for f in &sc.fields {
            let _ = writeln!(s, "- {}", clip_line(&f.sentence(&p.a.name, &p.b.name), 300));
        }
    }
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
        } else if sc.differs() {
            let mut what: Vec<String> = sc
                .aspects
                .iter()
                .filter(|r| r.verdict == Verdict::Differs)
                .map(|r| r.aspect.label().to_string())
                .collect();
            if !sc.fields.is_empty() {
                what.push(format!("{} key path(s)", sc.fields.len()));
            }
            let _ = writeln!(s, "differs     {}: {}", sc.scenario, what.join(", "));
        }
    }
    let c = &p.counts;
    let _ = writeln!(
        s,
        "{} vs {}: {} run on both, {} differ ({} in substance, {} in key paths), {} cannot be run as written by one side, {} not compared",
        p.a.name,
        p.b.name,
        c.compared,
        c.differ,
        c.differ_in_substance,
        c.differ_in_fields,
        c.cannot_run_as_written,
        c.not_compared
    );
    if let Some(line) = control_line(p) {
        let _ = writeln!(s, "{line}");
    }
    if c.fail_own_expectation > 0 {
        let failing: Vec<String> = (p.scenarios.iter())
            .filter(|sc| !sc.fails_own_expectation.is_empty())
            .map(|sc| format!("{} ({})", sc.scenario, sc.fails_own_expectation.join(", ")))
            .collect();
        let _ = writeln!(
            s,
            "{} scenario(s) where a compared target fails its own expectation: {}",
            c.fail_own_expectation,
            failing.join("; ")
        );
    }
    s
}

/// Who cannot run control/ scenarios, and how many of the scenarios not compared are such.
fn control_line(p: &Parity) -> Option<String> {
    let n = p.counts.no_control_protocol;
    let mut who: Vec<&str> = p
        .scenarios
        .iter()
        .flat_map(|s| s.no_control_protocol.iter().map(String::as_str))
        .collect();
    who.sort_unstable();
    who.dedup();
    (n > 0).then(|| {
        format!(
            "{} cannot run control/ scenarios (no control protocol): {n} scenario(s) with a `client:` section not compared.",
            who.join(", ")
        )
    })
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
