//! The drift differ, from small recorded outputs: what was printed (frame kinds, keys, types,
//! names) through the protocol check both ways, frames reordered, exit codes, result
//! subtypes, flips.

mod common;
mod run_folder;

use run_folder::exit_code;

use assert_cmd::Command;
use common::{read_json, streamcheck_at, text};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use streamcheck::commands::drift::{
    self, ScenarioOutput, SequenceChangeKind, StatusName, VersionOutputs, What,
};
use streamcheck::protocol::check;
use streamcheck::runner::Status;

fn out(status: Status, exit: i32, frames: Value) -> ScenarioOutput {
    ScenarioOutput {
        exit: exit_code(exit),
        frames: frames.as_array().unwrap().clone(),
        ..ScenarioOutput::with_status(status)
    }
}

fn skipped() -> Status {
    Status::Skipped("not for this version".into())
}

fn version(target: &str, scenarios: Vec<(&str, ScenarioOutput)>) -> VersionOutputs {
    VersionOutputs {
        target: target.into(),
        version: Some(target.trim_start_matches("cli@").into()),
        scenarios: scenarios
            .into_iter()
            .map(|(id, o)| (id.to_string(), o))
            .collect::<BTreeMap<_, _>>(),
        ..VersionOutputs::default()
    }
}

fn init(tools: &[&str]) -> Value {
    json!({"type": "system", "subtype": "init", "session_id": "s", "tools": tools, "model": "m1"})
}

fn old() -> VersionOutputs {
    version(
        "cli@1.0",
        vec![
            (
                "basics/text",
                out(
                    Status::Passed,
                    0,
                    json!([init(&["Bash", "Glob"]),
                        {"type": "assistant", "message": {"content": [{"type": "text", "text": "hi"}]}, "x": 1, "uuid": "dda7b70a-1f53-402d-a4a7-3fc5fb8e57fb"},
                        {"type": "result", "subtype": "success", "n": 1, "duration_ms": 10}]),
                ),
            ),
            (
                "tools/order",
                out(
                    Status::Passed,
                    0,
                    json!([init(&["Bash", "Glob"]), {"type": "assistant"}, {"type": "user"}, {"type": "result", "subtype": "success"}]),
                ),
            ),
            (
                "errors/fatal",
                out(
                    Status::Passed,
                    1,
                    json!([init(&["Bash", "Glob"]), {"type": "result", "subtype": "error_during_execution", "is_error": true}]),
                ),
            ),
            ("only/old", out(skipped(), 0, json!([]))),
        ],
    )
}

fn new() -> VersionOutputs {
    version(
        "cli@2.0",
        vec![
            (
                "basics/text",
                out(
                    Status::Passed,
                    0,
                    json!([init(&["Bash", "Write"]),
                        {"type": "assistant", "message": {"content": [{"type": "text", "text": "hi"}]}, "y": "new", "extra": {"a": {"b": 1}}, "uuid": "0f0e4c1a-1f53-402d-a4a7-3fc5fb8e57fb"},
                        {"type": "system", "subtype": "status"},
                        {"type": "result", "subtype": "success", "n": "1", "duration_ms": 99}]),
                ),
            ),
            (
                "tools/order",
                out(
                    Status::Failed,
                    0,
                    json!([init(&["Bash", "Write"]), {"type": "user"}, {"type": "assistant"}, {"type": "result", "subtype": "success"}]),
                ),
            ),
            (
                "errors/fatal",
                out(
                    Status::Failed,
                    2,
                    json!([init(&["Bash", "Write"]), {"type": "result", "subtype": "error_max_turns", "is_error": true}]),
                ),
            ),
            ("only/old", out(skipped(), 0, json!([]))),
        ],
    )
}

/// The verdict row of `what` at `frame` `path`.
fn row<'a>(
    p: &'a drift::PairDrift,
    what: What,
    frame: &str,
    path: &str,
) -> Option<&'a drift::Finding> {
    (p.verdict.iter().map(|c| c.finding()))
        .find(|f| f.what == what && f.frame == frame && f.path == path)
}

/// The protocol check's findings each way, as its lines.
fn lines(changes: &[drift::ProtocolChange]) -> Vec<String> {
    changes
        .iter()
        .map(|c| check::line(&c.finding, &c.scenarios))
        .collect()
}

#[test]
fn keys_new_gone_and_changing_type_come_from_the_protocol_check_both_ways() {
    let d = drift::diff(&[old(), new()]);
    assert_eq!(d.pairs.len(), 1);
    let p = &d.pairs[0];
    assert_eq!((p.from.as_str(), p.to.as_str()), ("cli@1.0", "cli@2.0"));
    assert_eq!(p.compared, 3, "skipped scenarios are not compared");

    // The newer run against the older run's inventory: what is new. A new object is one
    // finding, not one per key inside it; the gone tool is gone where each scenario
    // printed it.
    assert_eq!(
        lines(&p.printed),
        [
            "gone: name `Glob` in init.tools, in 3 trials (basics/text, errors/fatal, tools/order)",
            "new frame kind `result/error_max_turns`, in 1 trial (errors/fatal)",
            "new frame kind `system/status`, in 1 trial (basics/text)",
            "new key `assistant.extra` (object), in 1 trial (basics/text)",
            "new key `assistant.y` (string), in 1 trial (basics/text)",
            "new type of `result/success.n`: string (the inventory has number), in 1 trial (basics/text)",
            "new name `Write` in init.tools, in 3 trials (basics/text, errors/fatal, tools/order)",
        ],
        "{:#?}",
        p.printed
    );
    // The older run against the newer run's inventory: what only the older one printed.
    assert_eq!(
        lines(&p.not_printed),
        [
            "new frame kind `result/error_during_execution`, in 1 trial (errors/fatal)",
            "new key `assistant.x` (number), in 1 trial (basics/text)",
            "new type of `result/success.n`: number (the inventory has string), in 1 trial (basics/text)",
            "new name `Glob` in init.tools, in 3 trials (basics/text, errors/fatal, tools/order)",
        ],
        "{:#?}",
        p.not_printed
    );

    // As verdict rows: a key only the older release printed is gone, a type found new one
    // way and lost the other changed.
    let y = row(p, What::FieldAdded, "assistant", "y").expect("y added");
    assert_eq!(
        (y.to.as_str(), y.scenario.as_deref()),
        ("string", Some("basics/text"))
    );
    assert!(row(p, What::FieldAdded, "assistant", "extra").is_some());
    assert!(row(p, What::FieldAdded, "assistant", "extra.a").is_none());
    let x = row(p, What::FieldGone, "assistant", "x").expect("x gone");
    assert_eq!(x.from, "number");
    let n = row(p, What::FieldTypeChanged, "result/success", "n").expect("n changed type");
    assert_eq!((n.from.as_str(), n.to.as_str()), ("number", "string"));
    let glob = row(p, What::NameGone, "init.tools", "Glob").expect("Glob gone");
    assert_eq!(
        glob.all_scenarios().len(),
        3,
        "one change, seen in three scenarios"
    );
    assert!(row(p, What::NameAdded, "init.tools", "Write").is_some());
}

#[test]
fn frames_reordered_added_and_gone() {
    let p = &drift::diff(&[old(), new()]).pairs[0];
    let order = p
        .sequences
        .iter()
        .find(|s| s.scenario == "tools/order")
        .unwrap();
    assert_eq!(order.change, SequenceChangeKind::Reordered);
    assert_eq!(
        order.from,
        ["system/init", "assistant", "user", "result/success"]
    );
    assert_eq!(
        order.to,
        ["system/init", "user", "assistant", "result/success"]
    );
    let text = p
        .sequences
        .iter()
        .find(|s| s.scenario == "basics/text")
        .unwrap();
    assert_eq!(text.change, SequenceChangeKind::Changed);

    let kinds = |what| -> Vec<&str> {
        (p.verdict.iter().map(|c| c.finding()))
            .filter(|f| f.what == what)
            .map(|f| f.frame.as_str())
            .collect()
    };
    assert_eq!(
        kinds(What::FrameTypeAdded),
        ["result/error_max_turns", "system/status"]
    );
    assert_eq!(
        kinds(What::FrameTypeGone),
        ["result/error_during_execution"]
    );
    let status = row(p, What::FrameTypeAdded, "system/status", "type").unwrap();
    assert_eq!(status.all_scenarios(), ["basics/text"]);
}

#[test]
fn exit_codes_result_subtypes_and_flips() {
    let p = &drift::diff(&[old(), new()]).pairs[0];
    assert_eq!(p.exit_codes.len(), 1);
    assert_eq!(
        (p.exit_codes[0].from.as_str(), p.exit_codes[0].to.as_str()),
        ("1", "2")
    );
    assert_eq!(p.result_subtypes.len(), 1);
    assert_eq!(
        p.result_subtypes[0].from,
        "error_during_execution (is_error)"
    );
    assert_eq!(p.result_subtypes[0].to, "error_max_turns (is_error)");
    let flips: Vec<(&str, StatusName, StatusName)> = p
        .status_flips
        .iter()
        .map(|f| (f.scenario.as_str(), f.from, f.to))
        .collect();
    assert_eq!(
        flips,
        [
            ("errors/fatal", StatusName::Passed, StatusName::Failed),
            ("tools/order", StatusName::Passed, StatusName::Failed)
        ]
    );
}

#[test]
fn volatile_values_are_not_drift_but_real_values_are() {
    let mut b = old();
    b.target = "cli@1.1".into();
    // Another uuid and duration only: no drift at all.
    let frames = &mut b.scenarios.get_mut("basics/text").unwrap().frames;
    frames[1]["uuid"] = json!("0f0e4c1a-1f53-402d-a4a7-3fc5fb8e57fb");
    frames[2]["duration_ms"] = json!(12345);
    let p = &drift::diff(&[old(), b.clone()]).pairs[0];
    assert!(p.is_empty(), "{p:#?}");

    // A changed model name is a value change, counted per scenario.
    for o in b.scenarios.values_mut() {
        if let Some(f) = o.frames.first_mut() {
            f["model"] = json!("m2");
        }
    }
    let p = &drift::diff(&[old(), b]).pairs[0];
    assert_eq!(p.values.len(), 1, "{:#?}", p.values);
    let v = &p.values[0];
    assert_eq!(
        (v.frame_type.as_str(), v.path.as_str()),
        ("system/init", "model")
    );
    assert_eq!(
        (v.from.as_str(), v.to.as_str(), v.count),
        ("\"m1\"", "\"m2\"", 3)
    );
}

#[test]
fn a_version_that_cannot_run_is_reported_and_skipped_in_pairs() {
    let broken = VersionOutputs {
        target: "cli@1.5".into(),
        unavailable: Some("cli@1.5 is not available: the installer failed".into()),
        ..VersionOutputs::default()
    };
    let d = drift::diff(&[old(), broken, new()]);
    assert_eq!(d.versions.len(), 3);
    assert_eq!(d.pairs.len(), 1);
    assert_eq!(d.pairs[0].to, "cli@2.0");
    let md = drift::render_md(
        &d,
        "streamcheck drift --target a --target b",
        &["a note".into()],
    );
    assert!(
        md.contains("```\nstreamcheck drift --target a --target b\n```"),
        "{md}"
    );
    assert!(md.contains("| cli@1.5 | — | | | | | | not available: cli@1.5 is not available: the installer failed |"), "{md}");
    assert!(md.contains("## cli@1.0 → cli@2.0"), "{md}");
    assert!(
        md.contains("### Protocol: cli@2.0 against what cli@1.0 printed\n\n"),
        "{md}"
    );
    assert!(
        md.contains("- new key `assistant.y` (string), in 1 trial (basics/text)\n"),
        "{md}"
    );
    assert!(
        md.contains("### Protocol: cli@1.0 against what cli@2.0 printed: what only cli@1.0 printed\n\n- new frame kind `result/error_during_execution`"),
        "{md}"
    );
    assert!(md.contains("- `tools/order` (reordered):"), "{md}");
}

#[test]
fn replay_writes_drift_md_and_json_from_a_run_folder() {
    let dir = tempfile::tempdir().unwrap();
    let outputs = dir.path().join("run");
    run_folder::write(&outputs, &[old(), new()]);
    let report = dir.path().join("report");
    let root = dir.path().join("root");
    std::fs::create_dir_all(root.join("scenarios")).unwrap();
    let out = streamcheck_at(&root)
        .arg("drift")
        .arg("--replay")
        .arg(&outputs)
        .arg("--report-dir")
        .arg(&report)
        .output()
        .unwrap();
    // The fixture loses a tool between the versions: breaking, so exit 1.
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let md = std::fs::read_to_string(report.join("drift.md")).unwrap();
    assert!(
        md.starts_with("# Protocol drift across versions\n\nProduced by:\n\n```\n"),
        "{md}"
    );
    assert!(md.contains("drift --replay"), "{md}");
    let json = read_json(&report.join("drift.json"));
    let printed = json["pairs"][0]["printed"].as_array().unwrap();
    assert!(
        printed.contains(&json!({
            "finding": {"change": "new", "what": "name", "list": "init.tools", "name": "Write"},
            "scenarios": ["basics/text", "errors/fatal", "tools/order"]
        })),
        "{printed:#?}"
    );
    assert_eq!(json["versions"][1]["failed"], 2);
}

#[test]
fn replay_of_a_run_folder_missing_a_saved_trial_is_a_setup_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    run_folder::write(&run, &[old(), new()]);
    std::fs::remove_dir_all(run.join("outputs")).unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir_all(root.join("scenarios")).unwrap();
    let out = Command::cargo_bin("streamcheck")
        .unwrap()
        .arg("--root")
        .arg(&root)
        .args(["drift", "--replay"])
        .arg(&run)
        .arg("--report-dir")
        .arg(dir.path().join("report"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("outputs/basics/text.cli@1.0.json"),
        "{stderr}"
    );
}
