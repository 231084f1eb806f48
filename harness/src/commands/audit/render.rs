//! audit.md (scenario × mutation, the weakest scenarios first, each miss with what to
//! pin) and audit.json (the [`Audit`] as it is).

use super::model::{Audit, Mutation, Outcome, Tried};
use crate::report::write_atomic;
use crate::text::Table;
use std::fmt::Write as _;
use std::path::Path;

pub fn write(dir: &Path, audit: &Audit) -> std::io::Result<()> {
    write_atomic(&dir.join("audit.md"), render_md(audit).as_bytes())?;
    write_atomic(&dir.join("audit.json"), &serde_json::to_vec_pretty(audit)?)
}

/// The lines `streamcheck audit` prints.
pub fn summary(audit: &Audit, dir: &Path) -> String {
    format!(
        "audit: {} scenario(s), score {:.1} % ({} caught, {} missed), {} false alarm(s), {} not audited, {} ms\naudit report: {}\n",
        audit.scenarios.len(),
        audit.score,
        audit.caught,
        audit.missed,
        audit.false_alarms,
        audit.not_audited.len(),
        audit.duration_ms,
        dir.join("audit.md").display()
    )
}

fn symbol(o: &Outcome) -> &'static str {
    match o {
        Outcome::Caught(_) => "✓",
        Outcome::Missed => "**✗**",
        Outcome::NotApplicable => "·",
        Outcome::Held => "✓",
        Outcome::FalseAlarm(_) => "**!**",
    }
}

pub fn render_md(audit: &Audit) -> String {
    let mut s = String::from("# Suite audit\n\n");
    if !audit.command.is_empty() {
        let _ = writeln!(s, "```\n{}\n```\n", audit.command);
    }
    let _ = writeln!(
        s,
        "Score: **{:.1} %** of the mutations that applied were caught ({} caught, {} missed); \
         **{}** false alarm(s) on the controls; {} scenario trial(s) audited.\n",
        audit.score,
        audit.caught,
        audit.missed,
        audit.false_alarms,
        audit.scenarios.len()
    );
    s.push_str(
        "✓ caught (or, for a control, held) · ✗ missed · ! false alarm · `·` nothing to mutate\n\n",
    );
    s.push_str("Columns:\n\n");
    for (i, m) in Mutation::ALL.iter().enumerate() {
        let _ = writeln!(s, "{}. {m}", i + 1);
    }
    s.push('\n');
    let columns = (1..=Mutation::ALL.len()).map(|i| i.to_string());
    let mut table = Table::new(
        ["scenario".to_string(), "target".to_string()]
            .into_iter()
            .chain(columns),
    );
    for a in &audit.scenarios {
        let symbols = a.results.iter().map(|t| symbol(&t.outcome).to_string());
        table.row(
            [a.scenario.to_string(), a.target.to_string()]
                .into_iter()
                .chain(symbols),
        );
    }
    s.push_str(&table.finish());
    misses(&mut s, audit);
    if !audit.not_audited.is_empty() {
        s.push_str("\n## Not audited\n\n");
        for n in &audit.not_audited {
            let _ = writeln!(s, "- `{}` ({}): {}", n.scenario, n.target, n.reason);
        }
    }
    s
}

fn misses(s: &mut String, audit: &Audit) {
    let weak: Vec<_> = audit
        .scenarios
        .iter()
        .filter(|a| {
            a.results
                .iter()
                .any(|t| matches!(t.outcome, Outcome::Missed | Outcome::FalseAlarm(_)))
        })
        .collect();
    if weak.is_empty() {
        s.push_str("\nNo misses, no false alarms.\n");
        return;
    }
    s.push_str("\n## Misses and false alarms\n\n");
    for a in weak {
        let _ = writeln!(s, "### {} ({})\n", a.scenario, a.target);
        for Tried {
            mutation: m,
            outcome,
        } in &a.results
        {
            match outcome {
                Outcome::Missed => {
                    let _ = writeln!(s, "- missed: {m}: {}", m.hint());
                }
                Outcome::FalseAlarm(d) => {
                    let _ = writeln!(s, "- false alarm: {m}: {} (it failed with: {d})", m.hint());
                }
                _ => {}
            }
        }
        s.push('\n');
    }
}
