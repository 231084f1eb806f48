//! A multi-run scenario whose second run diverges: the divergence is run 2's on the
//! terminal, in the trial's report and in results.json.

mod common;

use common::{fixture_root, read_json, run_fixture, text};

#[test]
fn a_divergence_in_run_2_is_reported_as_run_2s() {
    let reports = tempfile::tempdir().unwrap();
    let out = run_fixture(&fixture_root("runs"), reports.path())
        .args(["--filter", "second-run-differs"])
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains(
            "FAILED  second-run-differs (command:fake-cli.sh): field mismatch in run 2\n"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("field mismatch: run 2 of 2: frame 2 vs expected entry 2: expected \"Goodbye!\", found \"Hello again!\""),
        "{stdout}"
    );

    let md = std::fs::read_to_string(
        reports
            .path()
            .join("second-run-differs.command_fake-cli.sh.md"),
    )
    .unwrap();
    assert!(
        md.contains("**field mismatch** at frame 2, stdout line 3, `$.result`: run 2 of 2:"),
        "{md}"
    );
    // The report shows the run that diverged (run 2's output), not run 1's.
    assert!(
        md.contains(r#"+{"type":"result","subtype":"success","result":"Hello again!""#),
        "{md}"
    );

    let results = read_json(&reports.path().join("results.json"));
    let divergences = results["trials"][0]["divergences"].as_array().unwrap();
    assert_eq!(divergences.len(), 1, "run 1 passed: {divergences:?}");
    assert_eq!(divergences[0]["run"], 2);
    assert_eq!(divergences[0]["kind"], "field_mismatch");
    assert_eq!(divergences[0]["path"], "$.result");
}

/// A scenario whose `runs:` has one entry is saved with its run number, so `audit` can
/// check it again against that run's expectation.
#[test]
fn a_scenario_of_one_run_is_audited() {
    let reports = tempfile::tempdir().unwrap();
    let out = run_fixture(&fixture_root("runs"), reports.path())
        .args(["--filter", "one-run"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    let audit = tempfile::tempdir().unwrap();
    let out = common::streamcheck_at(&fixture_root("runs"))
        .args(["audit", "--from"])
        .arg(reports.path())
        .arg("--report-dir")
        .arg(audit.path())
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("0 not audited"), "{stdout}");
}
