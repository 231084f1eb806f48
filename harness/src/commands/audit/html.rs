//! The audit page: scenario × mutation, the weakest scenarios first.

use super::model::Mutation;
use crate::trial_id::{ScenarioId, TargetName};
use serde::Serialize;
use serde_json::Value;
use std::io;
use std::path::Path;

#[derive(Serialize)]
struct Column {
    n: usize,
    /// As audit.json names it (`drop_frame`).
    key: String,
    /// As audit.md says it.
    name: String,
    hint: String,
}

#[derive(Serialize)]
struct Cell {
    outcome: String,
    symbol: &'static str,
    /// The divergence that caught it (or the false alarm's).
    detail: String,
}

#[derive(Serialize)]
struct Row {
    scenario: ScenarioId,
    target: TargetName,
    weak: usize,
    cells: Vec<Cell>,
}

#[derive(Serialize)]
struct Page<'a> {
    title: String,
    command: Option<&'a str>,
    audit: &'a Value,
    columns: Vec<Column>,
    rows: Vec<Row>,
}

/// Writes `dir/index.html` from the `audit.json` the audit wrote there.
pub fn write_audit(dir: &Path) -> io::Result<()> {
    let text = std::fs::read_to_string(dir.join("audit.json"))?;
    let audit: Value = serde_json::from_str(&text).map_err(io::Error::other)?;
    let columns: Vec<Column> = Mutation::ALL
        .iter()
        .enumerate()
        .map(|(i, m)| Column {
            n: i + 1,
            key: serde_json::to_value(m)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            name: m.to_string(),
            hint: m.hint().to_string(),
        })
        .collect();
    let mut rows: Vec<Row> = audit["scenarios"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| row(s, &columns))
        .collect();
    // Misses and false alarms first; otherwise audit.json's own order (weakest first).
    rows.sort_by_key(|r| std::cmp::Reverse(r.weak));
    let command = audit["command"].as_str().filter(|c| !c.is_empty());
    let page = Page {
        title: "streamcheck audit".into(),
        command,
        audit: &audit,
        columns,
        rows,
    };
    crate::report::html::page::write_page(dir, "audit.html", page)
}

fn row(s: &Value, columns: &[Column]) -> Row {
    let results = s["results"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    let cells: Vec<Cell> = columns
        .iter()
        .map(|c| {
            let tried = results.iter().find(|t| t["mutation"] == c.key.as_str());
            let outcome = tried
                .and_then(|t| t["outcome"].as_str())
                .unwrap_or("not_applicable")
                .to_string();
            Cell {
                symbol: symbol(&outcome),
                detail: tried
                    .and_then(|t| t["divergence"].as_str())
                    .unwrap_or_default()
                    .to_string(),
                outcome,
            }
        })
        .collect();
    let count = |o: &[&str]| {
        cells
            .iter()
            .filter(|c| o.contains(&c.outcome.as_str()))
            .count()
    };
    Row {
        scenario: s["scenario"].as_str().unwrap_or_default().into(),
        target: s["target"].as_str().unwrap_or_default().into(),
        weak: count(&["missed", "false_alarm"]),
        cells,
    }
}

fn symbol(outcome: &str) -> &'static str {
    match outcome {
        "caught" | "held" => "✓",
        "missed" => "✗",
        "false_alarm" => "!",
        _ => "·",
    }
}
