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
    causes_first(&mut s, r);
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
    let mut scenarios: Vec<&str> = r.trials.iter().map(|t| t.key.scenario.as_str()).collect();
    scenarios.dedup();
    for sc in scenarios {
        let cells = targets.iter().map(|t| {
            match r
                .trials
                .iter()
                .find(|x| x.key.scenario == sc && x.key.target == *t)
            {
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

/// What to fix first: the causes of the failures, most trials first, each with an example
/// trial and the command that runs it again; then the protocol findings, one line per key;
/// the trials skipped as unsupported; the parity table.
fn causes_first(s: &mut String, r: &Results) {
    let causes = super::causes::ranked(&r.trials);
    if !causes.is_empty() {
        let _ = writeln!(s, "\n## What to fix first ({} causes)\n", causes.len());
        for c in &causes {
            let _ = writeln!(s, "- {}", c.line_md());
        }
    }
    let protocol = crate::runner::protocol::run_findings(&r.trials);
    if !protocol.is_empty() {
        let _ = writeln!(
            s,
            "\n## Protocol ({} findings against targets/<dialect>/protocol.yaml)\n",
            protocol.len()
        );
        for (finding, trials) in &protocol {
            let _ = writeln!(s, "- {}", crate::protocol::check::line(finding, trials));
        }
    }
    let unsupported: Vec<String> = (r.trials.iter())
        .filter_map(|t| {
            Some(format!(
                "`{} ({})`: needs {}",
                t.key.scenario,
                t.key.target,
                t.unsupported()?.join(", ")
            ))
        })
        .collect();
    if !unsupported.is_empty() {
        let _ = writeln!(
            s,
            "\n## Skipped as unsupported ({}, the target's `supports`)\n",
            unsupported.len()
        );
        for u in unsupported {
            let _ = writeln!(s, "- {u}");
        }
    }
    if !r.parity.is_empty() {
        let _ = writeln!(
            s,
            "\n## Parity ({} key paths only one side prints; `protocol = \"parity\"`)\n",
            r.parity.len()
        );
        let mut table = Table::new(["kind", "key path", "", "trials"]);
        for row in &r.parity {
            table.row([
                row.item.as_str().to_string(),
                format!("`{}`", row.key_path()),
                row.side.to_string(),
                crate::protocol::parity::trials(row),
            ]);
        }
        s.push_str(&table.finish());
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
            format!("`{} ({})`", t.key.scenario, t.key.target),
        );
    }
    known
}

/// Failed trials grouped by cause ([`super::causes`]), each with `scenario (target)` of
/// its trials, the most trials first.
pub fn failure_causes(trials: &[Trial]) -> Vec<(String, Vec<String>)> {
    (super::causes::ranked(trials).into_iter())
        .map(|c| {
            let names = c.trials.iter().map(|(s, t)| format!("{s} ({t})")).collect();
            (c.what, names)
        })
        .collect()
}

/// Adds `who` to the group of `key`, opening it at the end when it is new.
fn grouped<K: PartialEq>(groups: &mut Vec<(K, Vec<String>)>, key: K, who: String) {
    match groups.iter_mut().find(|(k, _)| *k == key) {
        Some((_, list)) => list.push(who),
        None => groups.push((key, vec![who])),
    }
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
