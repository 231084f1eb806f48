//! `consume`'s reports: consume.md (the matrix and the findings), consume.json (every
//! feed), junit.xml (one suite per consumer and release) and index.html.

use super::{Consumed, Fed, Finding, Outcome};
use crate::report::{write_atomic, Formats};
use crate::text::{clip_line, md_escape, Table};
use std::collections::BTreeMap;
use std::io;
use std::path::Path;

/// Findings consume.md lists per consumer, release and probe (consume.json has them all).
const LISTED: usize = 5;

/// The matrix cell of one consumer, release and probe (`None`: the output as printed).
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Cell {
    pub passed: usize,
    pub failed: usize,
    pub not_applicable: usize,
}

impl Cell {
    pub fn text(&self) -> String {
        match (self.passed, self.failed) {
            (0, 0) => "n/a".into(),
            (p, 0) => format!("ok ({p})"),
            (p, f) => format!("**fails {f}/{}**", p + f),
        }
    }
}

type Key<'a> = (&'a str, &'a str, Option<super::Probe>);

/// (consumer, release, probe) → cell, releases in version order.
pub fn matrix(c: &Consumed) -> BTreeMap<(String, Version, Option<super::Probe>), Cell> {
    let mut cells: BTreeMap<(String, Version, Option<super::Probe>), Cell> = BTreeMap::new();
    for f in &c.fed {
        let cell = cells
            .entry((f.consumer.clone(), Version::of(&f.release), f.probe))
            .or_default();
        match f.outcome {
            Outcome::Passed { .. } => cell.passed += 1,
            Outcome::Failed(_) => cell.failed += 1,
            Outcome::NotApplicable => cell.not_applicable += 1,
            Outcome::NotFed { .. } => {}
        }
    }
    cells
}

/// A release, ordered as versions are (2.1.9 before 2.1.10), printed as written.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version(Option<semver::Version>, String);

impl Version {
    fn of(s: &str) -> Version {
        Version(semver::Version::parse(s).ok(), s.to_string())
    }
}

/// consume.md.
pub fn markdown(c: &Consumed) -> String {
    let mut md = String::from("# streamcheck consume\n\n");
    if !c.command.is_empty() {
        md.push_str(&format!("`{}`\n\n", c.command));
    }
    let not_fed = c
        .fed
        .iter()
        .filter(|f| f.probe.is_none() && matches!(f.outcome, Outcome::NotFed { .. }))
        .count();
    md.push_str(&format!(
        "{} feeds, {} failed; {not_fed} trial(s) not fed (their stdout is not stream-json); {:.1}s.\n\n",
        c.fed_count(),
        c.failed(),
        c.duration_ms as f64 / 1000.0
    ));
    for consumer in &c.consumers {
        md.push_str(&format!(
            "## `{}`\n\n`{}`\n\n",
            consumer.name, consumer.command
        ));
        md.push_str(&matrix_table(c, &consumer.name));
        md.push('\n');
    }
    if !c.probes.is_empty() {
        md.push_str("## Probes\n\n");
        let mut t = Table::new(["probe", "the real change it models"]);
        for p in &c.probes {
            t.row([format!("`{}`", p.probe.name()), md_escape(p.models)]);
        }
        md.push_str(&t.finish());
        md.push('\n');
    }
    md.push_str(&findings(c));
    md
}

/// One consumer's matrix: a row per release, a column for the output as printed and
/// one per probe; each cell the trials fed and how many it failed on.
pub fn matrix_table(c: &Consumed, consumer: &str) -> String {
    let cells = matrix(c);
    let probes: Vec<Option<super::Probe>> = std::iter::once(None)
        .chain(c.probes.iter().map(|p| Some(p.probe)))
        .collect();
    let header = std::iter::once("release".to_string()).chain(
        probes
            .iter()
            .map(|p| p.map_or("as printed".into(), |p| format!("`{}`", p.name()))),
    );
    let mut t = Table::new(header);
    let mut releases: Vec<&Version> = cells
        .keys()
        .filter(|(name, _, _)| name == consumer)
        .map(|(_, v, _)| v)
        .collect();
    releases.dedup();
    for v in releases {
        let row = std::iter::once(v.1.clone()).chain(probes.iter().map(|p| {
            cells
                .get(&(consumer.to_string(), v.clone(), *p))
                .copied()
                .unwrap_or_default()
                .text()
        }));
        t.row(row);
    }
    t.finish()
}

fn findings(c: &Consumed) -> String {
    let mut groups: BTreeMap<Key, Vec<(&Fed, &Finding)>> = BTreeMap::new();
    for f in &c.fed {
        if let Outcome::Failed(finding) = &f.outcome {
            groups
                .entry((&f.consumer, &f.release, f.probe))
                .or_default()
                .push((f, finding));
        }
    }
    if groups.is_empty() {
        return "No findings: every consumer read every feed.\n".into();
    }
    let mut md = String::from("## Findings\n\n");
    for ((consumer, release, probe), list) in groups {
        let what = probe.map_or("the output as printed".into(), |p| {
            format!("probe `{}`", p.name())
        });
        md.push_str(&format!(
            "### `{consumer}` on {release}, {what}: {} trial(s)\n\n",
            list.len()
        ));
        for (f, finding) in list.iter().take(LISTED) {
            md.push_str(&format!("- {}\n", describe(f, finding)));
        }
        if list.len() > LISTED {
            md.push_str(&format!(
                "- and {} more (consume.json lists them)\n",
                list.len() - LISTED
            ));
        }
        md.push('\n');
    }
    md
}

/// One finding in a sentence: the trial, how it failed, the line it was last given.
pub fn describe(f: &Fed, finding: &Finding) -> String {
    let at = match (finding.at_line, &finding.line) {
        (Some(0), _) => "; it fails on no input at all".to_string(),
        (Some(n), Some(line)) => format!("; last given line {n}: `{}`", clip_line(line, 160)),
        _ => String::new(),
    };
    let stderr = finding.stderr.trim();
    let stderr = match stderr.lines().last() {
        Some(last) => format!(" (stderr: {})", clip_line(last, 160)),
        None => String::new(),
    };
    format!(
        "`{}` on {}: {}{at}{stderr}",
        f.trial, f.target, finding.failure
    )
}

fn junit(c: &Consumed) -> String {
    use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
    let mut report = Report::new("streamcheck consume");
    let mut suites: BTreeMap<(String, String), TestSuite> = BTreeMap::new();
    for f in &c.fed {
        let status = match &f.outcome {
            Outcome::Passed { .. } => TestCaseStatus::success(),
            Outcome::Failed(finding) => {
                let mut st = TestCaseStatus::non_success(NonSuccessKind::Failure);
                st.set_message(describe(f, finding));
                st.set_description(finding.stderr.clone());
                st
            }
            Outcome::NotApplicable => continue,
            Outcome::NotFed { why } => {
                if f.probe.is_some() {
                    continue;
                }
                let mut st = TestCaseStatus::skipped();
                st.set_message(why.clone());
                st
            }
        };
        let name = match f.probe {
            Some(p) => format!("{} [{}]", f.trial, p.name()),
            None => f.trial.clone(),
        };
        let mut case = TestCase::new(name, status);
        case.set_classname(format!("{}.{}", f.consumer, f.target));
        suites
            .entry((f.consumer.clone(), f.target.clone()))
            .or_insert_with(|| TestSuite::new(format!("{} on {}", f.consumer, f.target)))
            .add_test_case(case);
    }
    report.add_test_suites(suites.into_values());
    report
        .to_string()
        .unwrap_or_else(|e| format!("<!-- junit serialization failed: {e} -->"))
}

fn html(c: &Consumed) -> String {
    let esc = |s: &str| {
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
    };
    let mut body = String::new();
    body.push_str(&format!(
        "<h1>streamcheck consume</h1><p><code>{}</code></p><p>{} feeds, {} failed.</p>",
        esc(&c.command),
        c.fed_count(),
        c.failed()
    ));
    let cells = matrix(c);
    for consumer in &c.consumers {
        body.push_str(&format!(
            "<h2>{}</h2><p><code>{}</code></p><table><tr><th>release</th><th>as printed</th>",
            esc(&consumer.name),
            esc(&consumer.command)
        ));
        for p in &c.probes {
            body.push_str(&format!(
                "<th title=\"{}\">{}</th>",
                esc(p.models),
                p.probe.name()
            ));
        }
        body.push_str("</tr>");
        let mut releases: Vec<&Version> = (cells.keys())
            .filter(|(n, _, _)| *n == consumer.name)
            .map(|(_, v, _)| v)
            .collect();
        releases.dedup();
        for v in releases {
            body.push_str(&format!("<tr><td>{}</td>", esc(&v.1)));
            let probes = std::iter::once(None).chain(c.probes.iter().map(|p| Some(p.probe)));
            for p in probes {
                let cell = (cells.get(&(consumer.name.clone(), v.clone(), p)))
                    .copied()
                    .unwrap_or_default();
                let class = if cell.failed > 0 {
                    " class=\"fail\""
                } else {
                    ""
                };
                body.push_str(&format!(
                    "<td{class}>{}</td>",
                    esc(&cell.text().replace("**", ""))
                ));
            }
            body.push_str("</tr>");
        }
        body.push_str("</table>");
    }
    body.push_str("<h2>Findings</h2><ul>");
    for f in &c.fed {
        if let Outcome::Failed(finding) = &f.outcome {
            let probe = f
                .probe
                .map_or("as printed".into(), |p| p.name().to_string());
            body.push_str(&format!(
                "<li><b>{}</b> on {} [{}]: {}</li>",
                esc(&f.consumer),
                esc(&f.release),
                probe,
                esc(&describe(f, finding))
            ));
        }
    }
    body.push_str("</ul>");
    format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>streamcheck consume</title><style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:2px 6px}}td.fail{{background:#fdd}}</style></head><body>{body}</body></html>\n"
    )
}

/// Writes the formats `formats` names into `dir`.
pub fn write(dir: &Path, c: &Consumed, formats: Formats) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    if formats.md {
        write_atomic(&dir.join("consume.md"), markdown(c).as_bytes())?;
    }
    if formats.json {
        let json = serde_json::to_vec_pretty(c).map_err(io::Error::other)?;
        write_atomic(&dir.join("consume.json"), &json)?;
    }
    if formats.junit {
        write_atomic(&dir.join("junit.xml"), junit(c).as_bytes())?;
    }
    if formats.html {
        write_atomic(&dir.join("index.html"), html(c).as_bytes())?;
    }
    Ok(())
}
