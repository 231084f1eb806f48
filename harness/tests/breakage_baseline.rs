//! The committed breakage baseline (`reports/baseline/breakages/`): every row of rows.yaml has
//! a result from the four allowed and says why, and breakages.md states the count and each
//! row's result as rows.yaml has them.

mod common;

use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
enum Verdict {
    Caught,
    Weak,
    Hindsight,
    #[serde(rename = "not caught")]
    NotCaught,
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::Caught => "caught",
            Verdict::Weak => "weak",
            Verdict::Hindsight => "hindsight",
            Verdict::NotCaught => "not caught",
        })
    }
}

#[derive(Deserialize, Debug)]
struct Row {
    id: String,
    scenarios: Vec<String>,
    result: Verdict,
    why: String,
    evidence: String,
}

#[derive(Deserialize)]
struct Rows {
    rows: Vec<Row>,
}

fn baseline() -> (Vec<Row>, String) {
    let dir = common::repo().join("reports/baseline/breakages");
    let yaml = std::fs::read_to_string(dir.join("rows.yaml")).expect("rows.yaml is readable");
    let rows: Rows = serde_yaml::from_str(&yaml).unwrap_or_else(|e| panic!("rows.yaml: {e}"));
    let md = std::fs::read_to_string(dir.join("breakages.md")).expect("breakages.md is readable");
    (rows.rows, md)
}

/// `**Caught: N of M**` and `Weak: W, hindsight: H, not caught: X.` from breakages.md.
fn stated_counts(md: &str) -> (usize, BTreeMap<Verdict, usize>) {
    let re = regex::Regex::new(
        r"\*\*Caught: (\d+) of (\d+)\*\*[^\n]*Weak: (\d+), hindsight: (\d+), not caught: (\d+)\.",
    )
    .unwrap();
    let c = re.captures(md).expect(
        "breakages.md states `**Caught: N of M** (..). Weak: W, hindsight: H, not caught: X.`",
    );
    let n = |i: usize| c[i].parse::<usize>().unwrap();
    let counts = BTreeMap::from([
        (Verdict::Caught, n(1)),
        (Verdict::Weak, n(3)),
        (Verdict::Hindsight, n(4)),
        (Verdict::NotCaught, n(5)),
    ]);
    (n(2), counts)
}

#[test]
fn every_row_has_an_allowed_result_a_reason_and_evidence() {
    let (rows, _) = baseline();
    assert!(!rows.is_empty(), "rows.yaml lists no row");
    let mut seen = std::collections::BTreeSet::new();
    for row in &rows {
        assert!(
            seen.insert(&row.id),
            "rows.yaml: row {} is listed twice",
            row.id
        );
        assert!(
            !row.scenarios.is_empty(),
            "rows.yaml: row {} names no scenario",
            row.id
        );
        assert!(
            !row.why.trim().is_empty(),
            "rows.yaml: row {} gives no `why`",
            row.id
        );
        assert!(
            row.evidence.contains("streamcheck "),
            "rows.yaml: row {}: `evidence` names no streamcheck command",
            row.id
        );
    }
}

#[test]
fn the_count_in_breakages_md_is_the_count_in_rows_yaml() {
    let (rows, md) = baseline();
    let (total, stated) = stated_counts(&md);
    assert_eq!(
        total,
        rows.len(),
        "breakages.md: `of {total}` but rows.yaml has {} rows",
        rows.len()
    );
    let mut counted: BTreeMap<Verdict, usize> = stated.keys().map(|v| (*v, 0)).collect();
    for row in &rows {
        *counted.get_mut(&row.result).unwrap() += 1;
    }
    assert_eq!(
        stated, counted,
        "breakages.md's counts differ from rows.yaml's results"
    );
}

#[test]
fn each_row_of_the_table_has_the_result_rows_yaml_gives() {
    let (rows, md) = baseline();
    for row in &rows {
        let prefix = format!("| {} |", row.id);
        let line = md
            .lines()
            .find(|l| l.starts_with(&prefix))
            .unwrap_or_else(|| panic!("breakages.md: no table row for {}", row.id));
        let result = line.split('|').nth(4).map(str::trim);
        assert_eq!(
            result,
            Some(row.result.to_string().as_str()),
            "breakages.md: the table row for {} says {:?}, rows.yaml says {}",
            row.id,
            result,
            row.result
        );
    }
}
