//! `run --expect-for VERSION` checks a run against the expectation another version gets:
//! a release's output against the last good release's expectation.

mod common;

use common::{fixture_root, run_fixture, text};

fn run(extra: &[&str]) -> (Option<i32>, String) {
    let reports = tempfile::tempdir().unwrap();
    let out = run_fixture(&fixture_root("expect-for"), reports.path())
        .args(extra)
        .output()
        .unwrap();
    (out.status.code(), text(&out.stdout))
}

#[test]
fn its_own_expectation_passes() {
    let (code, stdout) = run(&[]);
    assert_eq!(code, Some(0), "{stdout}");
}

#[test]
fn an_older_versions_expectation_fails_with_its_divergence() {
    let (code, stdout) = run(&["--expect-for", "0.9.0"]);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        stdout.contains("expected \"Goodbye!\", found \"Hello!\""),
        "{stdout}"
    );
}

#[test]
fn a_version_without_a_block_of_its_own_gets_the_general_one() {
    let (code, stdout) = run(&["--expect-for", "1.0.0"]);
    assert_eq!(code, Some(0), "{stdout}");
}

/// Output held to another release's expectation gets that release's rules only: a frame
/// the printing release's rule lets through is a divergence for a catalogue written on a
/// release before the rule ("would it have caught this?").
#[test]
fn the_held_to_releases_rules_apply_not_the_printing_releases() {
    let (code, stdout) = run(&["--filter", "notice"]);
    assert_eq!(
        code,
        Some(0),
        "1.2.0's own rule lets the notice through: {stdout}"
    );
    let (code, stdout) = run(&["--filter", "notice", "--expect-for", "0.9.0"]);
    assert_eq!(code, Some(1), "0.9.0 has no such rule: {stdout}");
    assert!(stdout.contains("unexpected frame"), "{stdout}");
}
