//! What `bisect` says: one line per scenario, bisect.md and bisect.json.

use super::model::{Bisect, ScenarioBisect};
use crate::boundary::search::Outcome;
use crate::report::write_atomic;
use crate::text::Table;
use std::fmt::Write as _;
use std::path::Path;

pub fn write(dir: &Path, bisect: &Bisect) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    write_atomic(&dir.join("bisect.md"), render_md(bisect).as_bytes())?;
    write_atomic(
        &dir.join("bisect.json"),
        &serde_json::to_vec_pretty(bisect)?,
    )
}

/// One scenario's result as a sentence.
pub fn line(s: &ScenarioBisect, from: &str, to: &str) -> String {
    let what = match &s.outcome {
        Outcome::Boundary {
            first_new,
            last_old,
            untested,
        } => {
            let mut l = format!(
                "first matches {to}'s expectation at {first_new} ({last_old} matches {from}'s)"
            );
            if !untested.is_empty() {
                let _ = write!(l, "; not installable between: {}", untested.join(", "));
            }
            l
        }
        Outcome::Identical => {
            format!("nothing to bisect: {from} and {to} get the same expectation")
        }
        Outcome::Precondition { version, why } => {
            format!("cannot bisect: {version} fails its own expectation: {why}")
        }
        Outcome::Neither {
            version,
            against_new,
            against_old,
        } => format!(
            "cannot bisect: {version} matches neither expectation ({to}'s: {}; {from}'s: {})",
            against_new.message, against_old.message
        ),
        Outcome::Both { version } => format!(
            "cannot bisect: {version} matches both expectations (they do not tell its output apart)"
        ),
        Outcome::Unstable {
            version,
            first,
            again,
        } => format!("cannot bisect: {version} is unstable: it {first}, run again it {again}"),
        Outcome::NotRun { version, why } => {
            format!("cannot bisect: {version} did not run it: {why}")
        }
    };
    format!("{}: {what}", s.scenario)
}

/// The closing summary line.
pub fn summary(b: &Bisect) -> String {
    let bisected = b.scenarios.iter().filter(|s| s.outcome.bisected()).count();
    format!(
        "bisect {} {} -> {}: {bisected} of {} scenario(s) bisected; {} of {} version(s) between probed, {} installed, {} install failure(s); {:.1} s",
        b.target,
        b.from,
        b.to,
        b.scenarios.len(),
        b.probed.len().saturating_sub(2),
        b.between,
        b.installed.len(),
        b.install_failures.len(),
        b.duration_ms as f64 / 1000.0
    )
}

pub fn render_md(b: &Bisect) -> String {
    let mut s = format!(
        "# Bisect: {} {} -> {}\n\n{}\n\n",
        b.target,
        b.from,
        b.to,
        summary(b)
    );
    let _ = writeln!(s, "Probed, in order: {}\n", b.probed.join(", "));
    let _ = writeln!(
        s,
        "Each probe is held to {}'s and {}'s expectations with their release-wide rules, and \
         also with the let-through rules (`anywhere`, `every` with `shape`) of the release that \
         printed it: frames a release prints in every run say nothing about where one scenario \
         changed. (`run --expect-for` applies the held-to release's rules only.)\n",
        b.to, b.from
    );
    for f in &b.install_failures {
        let _ = writeln!(s, "- install failed: {}: {}", f.version, f.why);
    }
    s.push('\n');
    let mut table = Table::new([
        "scenario",
        "first matching the new expectation",
        "last matching the old",
        "result",
    ]);
    for sc in &b.scenarios {
        let (first, last) = match &sc.outcome {
            Outcome::Boundary {
                first_new,
                last_old,
                ..
            } => (first_new.as_str(), last_old.as_str()),
            _ => ("", ""),
        };
        table.row([sc.scenario.as_str(), first, last, &line(sc, &b.from, &b.to)]);
    }
    s.push_str(&table.finish());
    s
}
