//! The invariants checked beside the frames (exit code, session, result text, client
//! requests, U+FFFD) against a fixture CLI that keeps or breaks
//! each (fixtures/invariants/fake-cli.sh, one mode per scenario).

mod common;

use common::{fixture_root, run_fixture, trial_outcomes};
use std::collections::BTreeMap;

/// Scenario -> (status, divergence messages).
fn run() -> BTreeMap<String, (String, Vec<String>)> {
    let root = fixture_root("invariants");
    let reports = tempfile::tempdir().unwrap();
    run_fixture(&root, reports.path())
        .args(["--jobs", "2"])
        .output()
        .unwrap();
    trial_outcomes(reports.path(), "message")
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
    for id in ["ok", "error_ok", "opted_out", "ends_otherwise"] {
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
    let no_result = failed_with("no_result");
    assert!(
        no_result.contains("the output ends with frame 1 (assistant), not a result"),
        "a subsequence that leaves the result out still needs one: {no_result}"
    );
    let empty = failed_with("empty_stdout");
    assert!(empty.contains("stdout is empty"), "{empty}");
    let unanswered = failed_with("unanswered");
    assert!(
        unanswered.contains("interrupt control_request \"req_fixture_1\""),
        "{unanswered}"
    );
}
