//! A skip is re-checked on every run: the CLI runs the scenario once and the skip's reason
//! is checked against what it printed. A pinned hang is checked, not tolerated.

mod common;

use common::{fixture_root, read_json, run_fixture, text};
use serde_json::Value;
use std::collections::BTreeMap;

/// Runs the `skips` fixture: its exit code and each trial of results.json by scenario.
fn run() -> (Option<i32>, String, BTreeMap<String, Value>) {
    let reports = tempfile::tempdir().unwrap();
    let out = run_fixture(&fixture_root("skips"), reports.path())
        .args(["--jobs", "2"])
        .output()
        .unwrap();
    let results = read_json(&reports.path().join("results.json"));
    let trials = results["trials"].as_array().expect("trials").iter();
    let by_id = trials
        .map(|t| (t["scenario"].as_str().unwrap().to_string(), t.clone()))
        .collect();
    (out.status.code(), text(&out.stdout), by_id)
}

fn kinds(trial: &Value) -> Vec<&str> {
    (trial["divergences"].as_array().unwrap().iter())
        .map(|d| d["kind"].as_str().unwrap())
        .collect()
}

#[test]
fn skips_are_confirmed_or_fail_and_pinned_hangs_are_checked() {
    let (code, stdout, trials) = run();
    assert_eq!(code, Some(1), "some trials fail: {stdout}");
    let status = |id: &str| trials[id]["status"].as_str().unwrap().to_string();
    let reason = |id: &str| {
        trials[id]["reason"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };

    // Confirmed: skipped, with the evidence the run gave.
    assert_eq!(status("flag-refused"), "skipped", "{stdout}");
    assert!(
        reason("flag-refused").contains("skip confirmed")
            && reason("flag-refused").contains("error: unknown option '--refused-flag'"),
        "{}",
        reason("flag-refused")
    );
    assert_eq!(status("tool-absent"), "skipped", "{stdout}");
    assert!(
        reason("tool-absent").contains("not in system/init.tools"),
        "{}",
        reason("tool-absent")
    );

    // Not confirmed: failed, as a skip that no longer holds, saying what the run showed.
    for id in ["flag-taken", "tool-offered", "frame-printed"] {
        assert_eq!(status(id), "failed", "{id}: {stdout}");
        assert_eq!(kinds(&trials[id]), ["skip_no_longer_holds"], "{id}");
    }
    let message = |id: &str| {
        trials[id]["divergences"][0]["message"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(
        message("tool-offered").contains("Read is offered in system/init.tools"),
        "{}",
        message("tool-offered")
    );
    assert!(
        message("flag-taken").contains("took --accepted-flag"),
        "{}",
        message("flag-taken")
    );

    // A pinned hang passes when the CLI hangs, and fails when it exits by itself.
    assert_eq!(status("hang-pinned"), "passed", "{stdout}");
    assert_eq!(trials["hang-pinned"]["exit"]["killed"], "grace");
    assert_eq!(status("hang-gone"), "failed", "{stdout}");
    assert_eq!(kinds(&trials["hang-gone"]), ["exit_code"]);
}
