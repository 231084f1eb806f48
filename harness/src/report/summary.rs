//! `summary.md`: the run at a glance, one row per scenario, one column per target.

use super::{trial_stem, Results};
use crate::runner::Status;
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
    let _ = writeln!(s, "| target | version | |\n|---|---|---|");
    for t in &r.targets {
        let _ = writeln!(
            s,
            "| {} | {} | {} |",
            t.name,
            t.version.as_deref().unwrap_or("-"),
            t.unavailable.as_deref().unwrap_or("ok")
        );
    }
    let held = r.rules_held();
    if !held.is_empty() {
        let _ = writeln!(s, "\n## Release-wide rules (targets/<target>/rules.yaml)\n");
        for (rule, n) in held {
            let _ = writeln!(s, "- rule `{rule}` held in {n} trial(s)");
        }
    }
    if !r.scenario_errors.is_empty() {
        let _ = writeln!(s, "\n## Scenario files with errors\n");
        for e in &r.scenario_errors {
            let _ = writeln!(s, "- `{e}`");
        }
    }
    let targets: Vec<&str> = r.targets.iter().map(|t| t.name.as_str()).collect();
    let _ = writeln!(s, "\n## Results\n");
    let _ = write!(s, "| scenario |");
    for t in &targets {
        let _ = write!(s, " {t} |");
    }
    let _ = write!(s, "\n|---|");
    for _ in &targets {
        let _ = write!(s, "---|");
    }
    let _ = writeln!(s);
    let mut scenarios: Vec<&str> = r.trials.iter().map(|t| t.scenario.as_str()).collect();
    scenarios.dedup();
    for sc in scenarios {
        let _ = write!(s, "| {sc} |");
        for t in &targets {
            let cell = match r.trials.iter().find(|x| x.scenario == sc && x.target == *t) {
                None => "-".to_string(),
                Some(x) => match &x.status {
                    Status::Passed => format!("ok ({} ms)", x.duration_ms),
                    Status::Failed => format!(
                        "**FAILED** ({}) [report]({}.md)",
                        x.divergences
                            .first()
                            .map(|d| d.kind.as_str())
                            .unwrap_or("?"),
                        trial_stem(x)
                    ),
                    Status::Skipped(why) => format!("skipped: {}", why.replace('|', "\\|")),
                    Status::Known(why) => format!("known divergence: {}", why.replace('|', "\\|")),
                },
            };
            let _ = write!(s, " {cell} |");
        }
        let _ = writeln!(s);
    }
    s
}
