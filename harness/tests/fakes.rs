//! Five fake CLIs (tests/fixtures/fake-clis) against every edge case (`scenarios/edges/`),
//! each a command target held to the pin: `true` and `false` (print nothing, exit 0 or 1),
//! `init-only` (prints a plausible `system/init` and exits 0), `always-error` and
//! `always-success` (answer `initialize`, then every control request with a bare error or
//! success, and print nothing else). None of them runs a turn, streams a model answer,
//! runs a tool or checks a control request's fields, so an edge case one of them passes
//! pins too little to tell it from a CLI that lost the behaviour under test. The few passes
//! that are right (the case is about a refusal the fake happens to make) are listed in
//! [`PASSES`], each with why; a pass not listed fails the test, and so does a listed pass
//! that fails (the list stays exact).

mod common;

use common::{crate_dir, read_json, repo, streamcheck_at, text};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

const FAKES: [&str; 5] = [
    "true",
    "false",
    "init-only",
    "always-error",
    "always-success",
];

/// The (fake, edge case) pairs that pass, in groups: the fake, why passing is right (or
/// why it is listed for now), and the cases.
const PASSES: &[(&str, &str, &[&str])] = &[
    (
        "always-error",
        "stdin closed before any message: the CLI answers `initialize`, runs no turn and exits 0, which is all this fake does",
        &["edges/lifecycle[stdin-closed-before-any-message]"],
    ),
    (
        "always-success",
        "stdin closed before any message: the CLI answers `initialize`, runs no turn and exits 0, which is all this fake does",
        &["edges/lifecycle[stdin-closed-before-any-message]"],
    ),
];

/// Trials at once per fake (the five run at once). The fakes end in milliseconds; what
/// waits is a trial whose scripted client waits for a frame a fake never prints, until the
/// case's timeout (40 s in edges/lifecycle), so more trials than cores run at once.
const JOBS: &str = "6";

/// One `streamcheck run` of every edge case against `fake`: case id -> status.
fn run(fake: &str) -> BTreeMap<String, String> {
    let reports = tempfile::tempdir().unwrap();
    let command = crate_dir().join("tests/fixtures/fake-clis").join(fake);
    let out = streamcheck_at(&repo())
        .args(["run", "--filter", "edges/", "--jobs", JOBS])
        // Only the case's expectation and the invariants judge: the protocol inventory
        // would fail a fake for keys its frames lack, whatever the case pins.
        .args(["--protocol", "off", "--report", "json", "--target-command"])
        .arg(&command)
        .arg("--report-dir")
        .arg(reports.path())
        .output()
        .unwrap();
    let printed = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert_eq!(
        out.status.code(),
        Some(1),
        "{fake}: failures exit 1\n{printed}"
    );
    statuses(reports.path(), fake)
}

fn statuses(reports: &Path, fake: &str) -> BTreeMap<String, String> {
    let results = read_json(&reports.join("results.json"));
    assert_eq!(results["complete"], true, "{fake}: the run finished");
    let trials = results["trials"]
        .as_array()
        .expect("trials in results.json");
    trials
        .iter()
        .map(|t| {
            let case = t["scenario"].as_str().unwrap().to_string();
            (case, t["status"].as_str().unwrap().to_string())
        })
        .collect()
}

#[test]
fn each_fake_cli_fails_every_edge_case_it_does_not_satisfy() {
    let runs: Vec<_> = FAKES
        .iter()
        .map(|fake| (*fake, std::thread::spawn(move || run(fake))))
        .collect();
    let pairs: Vec<(&str, &str)> = (PASSES.iter())
        .flat_map(|(fake, _, cases)| cases.iter().map(move |case| (*fake, *case)))
        .collect();
    let allowed: BTreeSet<(&str, &str)> = pairs.iter().copied().collect();
    assert_eq!(allowed.len(), pairs.len(), "PASSES lists a pair twice");
    let mut wrong = Vec::new();
    for (fake, handle) in runs {
        let statuses = handle.join().expect("the run of a fake");
        assert!(
            statuses.len() > 400,
            "{fake}: every edge case ran ({} trials)",
            statuses.len()
        );
        for (case, status) in &statuses {
            let listed = allowed.contains(&(fake, case.as_str()));
            match (status.as_str(), listed) {
                ("failed", false) | ("passed", true) => {}
                ("passed", false) => wrong.push(format!(
                    "{fake} passes {case}: pin what shows the behaviour, or list the pair in PASSES with why"
                )),
                (other, _) => wrong.push(format!(
                    "{fake} on {case}: {other}{}",
                    if listed { " (listed in PASSES as a pass)" } else { "" }
                )),
            }
        }
        for (_, case) in pairs.iter().filter(|(f, _)| *f == fake) {
            if !statuses.contains_key(*case) {
                wrong.push(format!("{fake}: PASSES names {case}, which did not run"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
