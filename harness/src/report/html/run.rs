//! The run page: scenario rows × target columns, failures first, each trial's detail
//! embedded for the script to open.

use super::page::{write_page, Embedded, Packer};
use super::trial::{status_name, view};
use crate::runner::{Status, Trial};
use crate::store::results::{trial_stem, Results};
use crate::store::saved::SavedTrial;
use crate::trial_id::ScenarioId;
use serde::Serialize;
use std::collections::BTreeMap;
use std::io;
use std::path::Path;

#[derive(Serialize)]
struct Cell {
    /// The trial's id on the page (`#trial=<id>`), if it ran.
    id: Option<String>,
    status: &'static str,
    /// The first divergence's kind, or the skip / known reason.
    note: String,
    duration_ms: u64,
}

#[derive(Serialize)]
struct Row {
    scenario: ScenarioId,
    description: String,
    /// The worst status of the row, for ordering and filtering.
    status: &'static str,
    cells: Vec<Cell>,
}

#[derive(Serialize)]
struct Page<'a> {
    title: String,
    command: Option<&'a str>,
    results: &'a Results,
    columns: Vec<String>,
    rows: Vec<Row>,
    trials: Vec<Embedded>,
    /// What to fix first: the causes of the failures, most trials first.
    causes: Vec<crate::report::causes::Cause>,
    /// The run's protocol findings, one line each (see [`crate::protocol`]).
    protocol: Vec<String>,
    /// Trials skipped as unsupported (`supports`): `scenario (target)`, the features.
    unsupported: Vec<(String, String)>,
    /// The CLI bugs the run met, one line each (see [`crate::findings`]).
    findings: Vec<String>,
    /// The long strings the trials share, packed (see [`Packer`]).
    strings: minijinja::Value,
}

/// Writes `dir/index.html` for `results`; `saved` gives a trial's saved output (from
/// memory during a run, from `outputs/` after a merge).
pub fn write_run(
    dir: &Path,
    results: &Results,
    command: Option<&str>,
    saved: impl Fn(&Trial) -> Option<SavedTrial>,
) -> io::Result<()> {
    let columns: Vec<String> = results.targets.iter().map(|t| t.name.clone()).collect();
    let mut by_scenario: BTreeMap<&ScenarioId, Vec<&Trial>> = BTreeMap::new();
    for t in &results.trials {
        by_scenario.entry(&t.key.scenario).or_default().push(t);
    }
    let mut rows: Vec<Row> = by_scenario
        .iter()
        .map(|(scenario, trials)| row(scenario, trials, &columns))
        .collect();
    rows.sort_by_key(|r| rank(r.status));
    let mut packer = Packer::default();
    let trials = results
        .trials
        .iter()
        .filter(|t| !matches!(t.status, Status::Skipped(_)))
        .map(|t| {
            let id = trial_stem(t);
            let detail = view(id.clone(), t, saved(t).as_ref());
            packer.pack(id, &detail)
        })
        .collect();
    let strings = packer.table();
    let page = Page {
        title: format!("streamcheck run {}", results.started_at),
        command,
        results,
        columns,
        rows,
        trials,
        causes: crate::report::causes::ranked(&results.trials),
        unsupported: (results.trials.iter())
            .filter_map(|t| {
                let features = t.unsupported()?.join(", ");
                Some((format!("{} ({})", t.key.scenario, t.key.target), features))
            })
            .collect(),
        protocol: (crate::runner::protocol::run_findings(&results.trials).iter())
            .map(|(f, t)| crate::protocol::check::line(f, t))
            .collect(),
        findings: (results.findings_met().iter())
            .map(|(id, t)| crate::findings::met_line(id, t))
            .collect(),
        strings,
    };
    write_page(dir, "run.html", page)
}

fn row(scenario: &ScenarioId, trials: &[&Trial], columns: &[String]) -> Row {
    let cells: Vec<Cell> = columns
        .iter()
        .map(|c| match trials.iter().find(|t| &t.key.target == c) {
            Some(t) => cell(t),
            None => Cell {
                id: None,
                status: "none",
                note: String::new(),
                duration_ms: 0,
            },
        })
        .collect();
    let status = cells
        .iter()
        .map(|c| c.status)
        .min_by_key(|s| rank(s))
        .unwrap_or("none");
    Row {
        scenario: scenario.clone(),
        description: trials
            .first()
            .map(|t| t.description.clone())
            .unwrap_or_default(),
        status,
        cells,
    }
}

fn cell(t: &Trial) -> Cell {
    let note = match &t.status {
        Status::Failed => t
            .divergences
            .first()
            .map(|d| d.kind.as_str().to_string())
            .unwrap_or_default(),
        Status::Known(why) | Status::Skipped(why) | Status::Unavailable(why) => why.clone(),
        Status::Passed => String::new(),
    };
    Cell {
        id: t.status.did_not_run().is_none().then(|| trial_stem(t)),
        status: status_name(&t.status),
        note,
        duration_ms: t.duration_ms,
    }
}

/// Failures first, then known divergences, passes, skips.
fn rank(status: &str) -> u8 {
    match status {
        "failed" => 0,
        "known" => 1,
        "passed" => 2,
        "skipped" => 3,
        _ => 4,
    }
}
