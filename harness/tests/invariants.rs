//! The invariants checked beside the frames (exit code, session, result text, client
//! requests, U+FFFD) against a fixture CLI that keeps or breaks
//! each (fixtures/invariants/fake-cli.sh, one mode per scenario).

use assert_cmd::Command;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn fixture_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/invariants")
}

/// Scenario -> (status, divergence messages).
fn run() -> BTreeMap<String, (String, Vec<String>)> {
    let reports = tempfile::tempdir().unwrap();
    Command::cargo_bin("streamcheck")
        .unwrap()
        .arg("--root")
        .arg(fixture_root())
        .args(["run", "--jobs", "2", "--target-command"])
        .arg(fixture_root().join("fake-cli.sh"))
        .arg("--report-dir")
        .arg(reports.path())
        .output()
        .unwrap();
    let text = std::fs::read_to_string(reports.path().join("results.json")).unwrap();
    let results: Value = serde_json::from_str(&text).unwrap();
    results["trials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let messages = t["divergences"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d["message"].as_str().unwrap().to_string())
                .collect();
            let status = t["status"].as_str().unwrap().to_string();
            (
                t["scenario"].as_str().unwrap().to_string(),
                (status, messages),
            )
        })
        .collect()
}

#[test]
fn each_invariant_fails_the_fixture_that_breaks_it_and_only_that() {
    let trials = run();
    let failed_with = |id: &str| {
        let (status, messages) = &trials[id];
        assert_eq!(status, "failed", "{id}: {messages:?}");
        assert_eq!(messages.len(), 1, "{id}: {messages:?}");
        messages[0].clone()
    };
    for id in ["ok", "error_ok", "opted_out"] {
        assert_eq!(trials[id].0, "passed", "{id}: {:?}", trials[id].1);
    }
    assert!(failed_with("exit_disagrees")
        .contains("exited with 1, but its last result has is_error: false"));
    assert!(failed_with("error_exit_zero")
        .contains("exited with 0, but its last result has is_error: true"));
    let session = failed_with("session_not_sent");
    assert!(
        session.contains("\"sid-other\" is not the one the CLI sent"),
        "{session}"
    );
    assert!(session.contains("\"sid-sent\""), "{session}");
    let empty = failed_with("empty_result");
    assert!(empty.contains("has an empty `result`"), "{empty}");
    let fffd = failed_with("replacement_char");
    assert!(fffd.contains("U+FFFD"), "{fffd}");
    let unanswered = failed_with("unanswered");
    assert!(
        unanswered.contains("interrupt control_request \"req_fixture_1\""),
        "{unanswered}"
    );
}
