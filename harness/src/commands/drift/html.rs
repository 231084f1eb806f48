//! The drift page: the verdict per pair of releases, each finding linking to the
//! trials of its scenario in the run that made it.

use super::model::{Change, DriftFile};
use super::verdict;
use crate::trial_id::ScenarioId;
use serde::Serialize;
use std::io;
use std::path::Path;

#[derive(Serialize)]
struct FindingView {
    breaking: bool,
    what: String,
    scenario: Option<ScenarioId>,
    frame: String,
    path: String,
    from: String,
    to: String,
    /// The scenario's trial on each version in the run's index.html.
    links: Vec<(String, String)>,
}

#[derive(Serialize)]
struct PairView {
    from: String,
    to: String,
    compared: usize,
    breaking: usize,
    additive: usize,
    findings: Vec<FindingView>,
    pending: Vec<String>,
}

#[derive(Serialize)]
struct Page<'a> {
    title: String,
    command: Option<&'a str>,
    file: &'a DriftFile,
    pairs: Vec<PairView>,
}

/// Writes `dir/index.html` for a drift report; `run_page` is the run's index.html as a
/// link from `dir` (none for a replay).
pub fn write_drift(dir: &Path, file: &DriftFile, run_page: Option<&str>) -> io::Result<()> {
    let pairs = file
        .drift
        .pairs
        .iter()
        .map(|p| {
            let n = verdict::counts(&p.verdict);
            let mut findings: Vec<FindingView> = p
                .verdict
                .iter()
                .map(|c| finding(c, [&p.from, &p.to], run_page))
                .collect();
            findings.sort_by_key(|f| !f.breaking);
            PairView {
                from: p.from.clone(),
                to: p.to.clone(),
                compared: p.compared,
                breaking: n.breaking,
                additive: n.additive,
                findings,
                pending: p.pending.clone(),
            }
        })
        .collect();
    let page = Page {
        title: "streamcheck drift".into(),
        command: Some(file.command.as_str()).filter(|c| !c.is_empty()),
        file,
        pairs,
    };
    crate::report::html::page::write_page(dir, "drift.html", page)
}

fn finding(c: &Change, versions: [&String; 2], run_page: Option<&str>) -> FindingView {
    let f = c.finding();
    let links = match (&f.scenario, run_page) {
        (Some(s), Some(page)) => versions
            .iter()
            .map(|v| {
                let stem = format!("{s}.{}", v.replace(['/', ':'], "_"));
                (v.to_string(), format!("{page}#trial={stem}"))
            })
            .collect(),
        _ => Vec::new(),
    };
    FindingView {
        breaking: c.is_breaking(),
        what: f.what.to_string(),
        scenario: f.scenario.clone(),
        frame: f.frame.clone(),
        path: f.path.clone(),
        from: f.from.clone(),
        to: f.to.clone(),
        links,
    }
}
