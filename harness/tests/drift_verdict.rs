//! The verdict's classifier: each kind of change, from a two-version fixture, lands
//! breaking or additive; and `drift --replay` exits 1 on a breaking change, 0 without.

use assert_cmd::Command;
use serde_json::{json, Value};
use streamcheck::commands::drift::{self, Change, ScenarioOutput, VersionOutputs, What};
use streamcheck::runner::Status;

fn out(exit: i32, frames: Value) -> ScenarioOutput {
    ScenarioOutput {
        exit_code: Some(exit),
        frames: frames.as_array().unwrap().clone(),
        ..ScenarioOutput::with_status(Status::Passed)
    }
}

fn version(target: &str, scenarios: Vec<(&str, ScenarioOutput)>) -> VersionOutputs {
    VersionOutputs {
        target: target.into(),
        version: Some(target.into()),
        scenarios: scenarios
            .into_iter()
            .map(|(id, o)| (id.to_string(), o))
            .collect(),
        ..VersionOutputs::default()
    }
}

fn init(tools: &[&str]) -> Value {
    json!({"type": "system", "subtype": "init", "tools": tools})
}

fn pair() -> (VersionOutputs, VersionOutputs) {
    let a = version(
        "a",
        vec![
            (
                "s/fields",
                out(
                    0,
                    json!([init(&["Bash", "Glob"]), {"type": "assistant", "gone": 1, "n": 1}, {"type": "result", "subtype": "success", "is_error": false}]),
                ),
            ),
            (
                "s/order",
                out(
                    0,
                    json!([init(&["Bash", "Glob"]), {"type": "assistant"}, {"type": "user"}, {"type": "result", "subtype": "success", "is_error": false}]),
                ),
            ),
            (
                "s/insert",
                out(
                    0,
                    json!([init(&["Bash", "Glob"]), {"type": "assistant"}, {"type": "result", "subtype": "success", "is_error": false}]),
                ),
            ),
            (
                "s/result",
                out(
                    1,
                    json!([init(&["Bash", "Glob"]), {"type": "result", "subtype": "error_max_turns", "is_error": false}]),
                ),
            ),
            (
                "s/kind",
                out(
                    0,
                    json!([init(&["Bash", "Glob"]), {"type": "system", "subtype": "status"}, {"type": "result", "subtype": "success", "is_error": false}]),
                ),
            ),
        ],
    );
    let b = version(
        "b",
        vec![
            (
                "s/fields",
                out(
                    0,
                    json!([init(&["Bash", "Read"]), {"type": "assistant", "n": "1", "new": true}, {"type": "result", "subtype": "success", "is_error": false}]),
                ),
            ),
            (
                "s/order",
                out(
                    0,
                    json!([init(&["Bash", "Read"]), {"type": "user"}, {"type": "assistant"}, {"type": "result", "subtype": "success", "is_error": false}]),
                ),
            ),
            (
                "s/insert",
                out(
                    0,
                    json!([init(&["Bash", "Read"]), {"type": "assistant"}, {"type": "stream_event"}, {"type": "result", "subtype": "success", "is_error": false}]),
                ),
            ),
            (
                "s/result",
                out(
                    0,
                    json!([init(&["Bash", "Read"]), {"type": "result", "subtype": "error_max_turns", "is_error": true}]),
                ),
            ),
            (
                "s/kind",
                out(
                    0,
                    json!([init(&["Bash", "Read"]), {"type": "result", "subtype": "success", "is_error": false}]),
                ),
            ),
        ],
    );
    (a, b)
}

fn find(changes: &[Change], what: What) -> &Change {
    changes
        .iter()
        .find(|c| c.finding().what == what)
        .unwrap_or_else(|| panic!("no {what:?} in {changes:#?}"))
}

#[test]
fn each_kind_of_change_is_breaking_or_additive() {
    let (a, b) = pair();
    let p = drift::diff_pair(&a, &b);
    let v = &p.verdict;
    for what in [
        What::FrameTypeGone,
        What::FieldGone,
        What::FieldTypeChanged,
        What::ToolGone,
        What::OrderChanged,
        What::ExitCodeChanged,
        What::ResultChanged,
    ] {
        assert!(find(v, what).is_breaking(), "{what:?} should be breaking");
    }
    for what in [
        What::FrameTypeAdded,
        What::FieldAdded,
        What::ToolAdded,
        What::FramesInserted,
    ] {
        assert!(!find(v, what).is_breaking(), "{what:?} should be additive");
    }
    let tool = find(v, What::ToolGone).finding();
    assert_eq!(
        (tool.from.as_str(), tool.frame.as_str()),
        ("Glob", "system/init")
    );
    let gone = find(v, What::FieldGone).finding();
    assert_eq!(
        (gone.scenario.as_deref(), gone.path.as_str()),
        (Some("s/fields"), "gone")
    );
    let result = find(v, What::ResultChanged).finding();
    assert_eq!(result.path, "is_error");
    assert_eq!(result.to, "error_max_turns (is_error)");
    let first_additive = v.iter().position(|c| !c.is_breaking()).unwrap();
    assert!(
        v[first_additive..].iter().all(|c| !c.is_breaking()),
        "breaking ones first"
    );
}

#[test]
fn drift_md_opens_with_the_verdict_and_the_exit_code_follows_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir_all(root.join("scenarios")).unwrap();
    let (a, b) = pair();
    for (name, versions, code) in [
        ("breaking", vec![a.clone(), b], 1),
        ("same", vec![a.clone(), a], 0),
    ] {
        let outputs = dir.path().join(format!("{name}.json"));
        std::fs::write(&outputs, serde_json::to_string(&versions).unwrap()).unwrap();
        let report = dir.path().join(name);
        let status = Command::cargo_bin("streamcheck")
            .unwrap()
            .arg("--root")
            .arg(&root)
            .args(["drift", "--replay"])
            .arg(&outputs)
            .arg("--report-dir")
            .arg(&report)
            .assert()
            .get_output()
            .status
            .code();
        assert_eq!(status, Some(code), "{name}");
        let md = std::fs::read_to_string(report.join("drift.md")).unwrap();
        let verdict = md.find("## Verdict").expect("a verdict section");
        assert!(verdict < md.find("## Versions").unwrap());
        if code == 1 {
            assert!(md.contains("### a → b: BREAKING"), "{md}");
            assert!(
                md.contains("- tool gone from init: (suite), system/init `tools[]`: Glob → —"),
                "{md}"
            );
        } else {
            assert!(
                md.contains("### a → a: compatible, 0 breaking, 0 additive"),
                "{md}"
            );
        }
    }
}
