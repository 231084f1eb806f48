//! `summary.md`: the run at a glance, one row per scenario, one column per target.

use crate::runner::{Status, Trial};
use crate::store::results::{trial_stem, Results};
use crate::text::Table;
use std::fmt::Write as _;

pub(super) fn summary_md(r: &Results) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# streamcheck run {}\n", r.started_at);
    let _ = writeln!(
        s,
        "**{}**{}, {} scenario file error(s), {:.1} s\n",
        r.counts.line(),
        if r.complete { "" } else { " (run incomplete)" },
        r.counts.errors,
        r.duration_ms as f64 / 1000.0
    );
    let mut table = Table::new(["target", "version", ""]);
    for t in &r.targets {
        table.row([
            t.name.as_str(),
            t.version.as_deref().unwrap_or("-"),
            t.unavailable.as_deref().unwrap_or("ok"),
        ]);
    }
    s.push_str(&table.finish());
    rules_and_causes(&mut s, r);
    if !r.scenario_errors.is_empty() {
        let _ = writeln!(s, "\n## Scenario files with errors\n");
        for e in &r.scenario_errors {
            let _ = writeln!(s, "- `{e}`");
        }
    }
    let targets: Vec<&str> = r.targets.iter().map(|t| t.name.as_str()).collect();
    let _ = writeln!(s, "\n## Results\n");
    let mut table = Table::new(std::iter::once("scenario").chain(targets.iter().copied()));
    let mut scenarios: Vec<&str> = r.trials.iter().map(|t| t.scenario.as_str()).collect();
    scenarios.dedup();
    for sc in scenarios {
        let cells = targets.iter().map(|t| {
            match r.trials.iter().find(|x| x.scenario == sc && x.target == *t) {
                None => "-".to_string(),
                Some(x) => result_cell(x),
            }
        });
        table.row(std::iter::once(sc.to_string()).chain(cells));
    }
    s.push_str(&table.finish());
    s
}

/// A trial's cell in the results table.
fn result_cell(x: &Trial) -> String {
    match &x.status {
        Status::Passed => format!("ok ({} ms)", x.duration_ms),
        Status::Failed => format!(
            "**FAILED** ({}) [report]({}.md)",
            x.divergences
                .first()
                .map(|d| d.kind.as_str())
                .unwrap_or("?"),
            trial_stem(x)
        ),
        Status::Skipped(why) => format!("skipped: {why}"),
        Status::Known(why) => format!("known divergence: {why}"),
        Status::Unavailable(why) => format!("**UNAVAILABLE**: {why}"),
    }
}

/// The release-wide rules that held, the known divergences grouped by reason, and the
/// failures grouped by cause.
fn rules_and_causes(s: &mut String, r: &Results) {
    let held = r.rules_held();
    if !held.is_empty() {
        let _ = writeln!(s, "\n## Release-wide rules (targets/<target>/rules.yaml)\n");
        for (rule, n) in held {
            let _ = writeln!(s, "- rule `{rule}` held in {n} trial(s)");
        }
    }
    let findings = r.findings_met();
    if !findings.is_empty() {
        let _ = writeln!(s, "\n## Findings met (CLI bugs, docs/findings.md)\n");
        for (id, trials) in &findings {
            let names: Vec<String> = trials.iter().map(|t| format!("`{t}`")).collect();
            let _ = writeln!(
                s,
                "- known finding `{id}` in {} trial(s): {}",
                trials.len(),
                names.join(", ")
            );
        }
    }
    let known = known_by_reason(&r.trials);
    if !known.is_empty() {
        let _ = writeln!(s, "\n## Known divergences by reason\n");
        for (why, trials) in known {
            let _ = writeln!(s, "- {why}: {}", trials.join(", "));
        }
    }
    let protocol = crate::runner::protocol::run_findings(&r.trials);
    if !protocol.is_empty() {
        let _ = writeln!(
            s,
            "\n## Protocol changes (targets/<dialect>/protocol.yaml)\n"
        );
        for (finding, trials) in &protocol {
            let _ = writeln!(s, "- {}", crate::protocol::check::line(finding, trials));
        }
    }
    let causes = failure_causes(&r.trials);
    if !causes.is_empty() {
        let _ = writeln!(s, "\n## Failures by cause\n");
        for (cause, trials) in causes {
            let names: Vec<String> = trials.iter().map(|t| format!("`{t}`")).collect();
            let _ = writeln!(s, "- {cause}: {}", names.join(", "));
        }
    }
}

/// Known trials grouped by their reason: a regression of some releases seen in many
/// scenarios is one line naming them.
fn known_by_reason(trials: &[Trial]) -> Vec<(&str, Vec<String>)> {
    let mut known: Vec<(&str, Vec<String>)> = Vec::new();
    for t in trials {
        let Status::Known(why) = &t.status else {
            continue;
        };
        grouped(
            &mut known,
            why.as_str(),
            format!("`{} ({})`", t.scenario, t.target),
        );
    }
    known
}

/// Failed trials grouped by what their first divergence says changed (its kind, the frame
/// kind and path it is at, expected -> found when both are short values): a change seen in
/// many scenarios is one line naming them. Each with `scenario (target)` of its trials.
pub fn failure_causes(trials: &[Trial]) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for t in trials.iter().filter(|t| t.status == Status::Failed) {
        let Some(d) = t.divergences.first() else {
            continue;
        };
        let kind_of = |v: &serde_json::Value| {
            let part = |k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_string);
            [part("type"), part("subtype")]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join("/")
        };
        let short = |v: &Option<serde_json::Value>| {
            v.as_ref()
                .filter(|v| !v.is_object() && !v.is_array())
                .map(|v| crate::text::clip(&v.to_string(), 60))
        };
        let mut cause = d.kind.to_string();
        let frame = d.actual.as_ref().map(kind_of).unwrap_or_default();
        if !frame.is_empty() && d.frame.is_some() {
            cause.push_str(&format!(" in {frame}"));
        }
        if let Some(path) = &d.path {
            cause.push_str(&format!(" at `{path}`"));
        }
        let found = match (&d.actual, &d.path) {
            (Some(frame), Some(path)) if d.frame.is_some() => value_at(frame, path).cloned(),
            _ => d.actual.clone(),
        };
        if let (Some(want), Some(got)) = (short(&d.expected), short(&found)) {
            cause.push_str(&format!(": {want} -> {got}"));
        } else if d.path.is_none() && (frame.is_empty() || d.frame.is_none()) {
            cause.push_str(&format!(": {}", crate::text::clip(&d.message, 120)));
        }
        grouped(&mut out, cause, format!("{} ({})", t.scenario, t.target));
    }
    out.sort_by_key(|(_, list)| std::cmp::Reverse(list.len()));
    out
}

/// Adds `who` to the group of `key`, opening it at the end when it is new.
fn grouped<K: PartialEq>(groups: &mut Vec<(K, Vec<String>)>, key: K, who: String) {
    match groups.iter_mut().find(|(k, _)| *k == key) {
        Some((_, list)) => list.push(who),
        None => groups.push((key, vec![who])),
    }
}

/// The value at a divergence path (`$.message.content[0].text`) inside `v`.
fn value_at<'a>(v: &'a serde_json::Value, path: &str) -> Option<&'a serde_json::Value> {
    let rest = path.strip_prefix('$')?;
    let mut here = v;
    for part in rest.split('.').filter(|p| !p.is_empty()) {
        let mut pieces = part.split('[');
        let key = pieces.next().unwrap_or_default();
        if !key.is_empty() {
            here = here.get(key)?;
        }
        for index in pieces {
            here = here.get(index.trim_end_matches(']').parse::<usize>().ok()?)?;
        }
    }
    Some(here)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::divergence::Kind;
    use serde_json::json;

    fn failed(id: &str, expected: serde_json::Value, actual: serde_json::Value) -> Trial {
        serde_json::from_value(json!({
            "scenario": id, "scenario_path": "", "description": "", "target": "claude-code@2.1.105",
            "target_version": "2.1.105", "status": "failed", "duration_ms": 1, "command_line": "",
            "exit": {"code": 0, "termination": "exited"},
            "divergences": [{"kind": "field_mismatch", "message": "m", "frame": 3, "path": "$.is_error",
                "expected": expected, "actual": actual}]
        }))
        .unwrap()
    }

    #[test]
    fn one_regression_known_in_many_scenarios_is_one_line() {
        let mut trials: Vec<Trial> = ["a", "b", "c"]
            .iter()
            .map(|id| failed(id, json!(1), json!(2)))
            .collect();
        trials[0].status = Status::Known("regression R".into());
        trials[1].status = Status::Known("regression R".into());
        let known = known_by_reason(&trials);
        assert_eq!(known.len(), 1);
        assert_eq!(known[0].0, "regression R");
        assert_eq!(known[0].1.len(), 2);
        assert!(known[0].1[0].starts_with("`a ("), "{:?}", known[0].1);
    }

    #[test]
    fn one_change_failing_many_scenarios_is_one_cause() {
        let result = |e: bool| json!({"type": "result", "subtype": "success", "is_error": e});
        let mut trials: Vec<Trial> = ["a", "b", "c"]
            .iter()
            .map(|id| failed(id, json!(false), result(true)))
            .collect();
        trials.push(failed("d", json!(true), result(false)));
        for (id, at) in [("e", 3), ("f", 5)] {
            let mut t = failed(
                id,
                json!(null),
                json!({"type": "system", "subtype": "notice"}),
            );
            let d = &mut t.divergences[0];
            (d.kind, d.path, d.frame) = (Kind::UnexpectedFrame, None, Some(at));
            d.message = format!("frame {at} is not expected here");
            trials.push(t);
        }
        let causes = failure_causes(&trials);
        assert_eq!(causes.len(), 3, "{causes:?}");
        let notice = causes
            .iter()
            .find(|c| c.0.contains("system/notice"))
            .unwrap();
        assert_eq!(
            notice.1.len(),
            2,
            "the frame's place does not split a cause"
        );
        assert_eq!(causes[0].1.len(), 3);
        assert!(
            causes[0].0.contains("in result/success at `$.is_error`"),
            "{causes:?}"
        );
        assert!(
            causes[2].1[0].starts_with("d (claude-code@2.1.105)"),
            "{causes:?}"
        );
    }
}
