//! The verdict's classifier: each kind of change, from a two-version fixture, lands
//! breaking or additive; and `drift --replay` exits 1 on a breaking change, 0 without.

mod common;
mod run_folder;

use common::streamcheck_at;
use serde_json::{json, Value};
use streamcheck::commands::drift::{self, Change, ScenarioOutput, VersionOutputs, What};
use streamcheck::divergence::{Divergence, Kind};
use streamcheck::runner::Status;

use run_folder::passed as out;

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
        What::NameGone,
        What::OrderChanged,
        What::ExitCodeChanged,
        What::ResultChanged,
    ] {
        assert!(find(v, what).is_breaking(), "{what:?} should be breaking");
    }
    for what in [
        What::FrameTypeAdded,
        What::FieldAdded,
        What::NameAdded,
        What::FramesInserted,
    ] {
        assert!(!find(v, what).is_breaking(), "{what:?} should be additive");
    }
    let tool = find(v, What::NameGone).finding();
    assert_eq!(
        (
            tool.frame.as_str(),
            tool.path.as_str(),
            tool.all_scenarios().len()
        ),
        ("init.tools", "Glob", 5)
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
        let outputs = dir.path().join(format!("{name}-run"));
        run_folder::write(&outputs, &versions);
        let report = dir.path().join(name);
        let status = streamcheck_at(&root)
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
                md.contains("- name gone: 5 scenarios (s/fields, s/insert, s/kind, s/order, s/result), init.tools `Glob`\n"),
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

fn ran(id: &str, a: ScenarioOutput, b: ScenarioOutput) -> Vec<Change> {
    let (x, y) = (version("a", vec![(id, a)]), version("b", vec![(id, b)]));
    drift::diff_pair(&x, &y).verdict
}

fn result(is_error: bool, extra: Value) -> Value {
    let mut r = json!({"type": "result", "subtype": "success", "is_error": is_error});
    r.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    r
}

#[test]
fn a_field_widened_to_a_union_holding_its_old_type_is_additive_a_new_type_breaking() {
    let frames = |parent: Value, content: Value, n: Value| json!([{"type": "user", "parent_tool_use_id": parent, "content": content, "n": n}]);
    let v = ran(
        "s/widen",
        out(0, frames(json!(null), json!("a"), json!(1))),
        out(0, frames(json!(null), json!("a"), json!("1"))),
    );
    let v2 = ran(
        "s/widen2",
        out(0, frames(json!(null), json!("a"), json!(1))),
        out(
            0,
            frames(json!("toolu_1"), json!([{"type": "text"}]), json!(1)),
        ),
    );
    let all: Vec<&Change> = v.iter().chain(&v2).collect();
    let at = |path: &str| {
        all.iter()
            .find(|c| c.finding().path == path)
            .unwrap_or_else(|| panic!("no change at {path}: {all:#?}"))
    };
    // Each scenario alone: one version saw null, the other a string.
    assert_eq!(at("n").finding().what, What::FieldTypeChanged);
    assert!(at("n").is_breaking());
    let mixed_from = out(
        0,
        json!([{"type": "user", "p": null}, {"type": "user", "c": "x"}]),
    );
    let mixed_to = out(
        0,
        json!([{"type": "user", "p": null}, {"type": "user", "p": "t", "c": ["x"]}, {"type": "user", "c": "y"}]),
    );
    let w = ran("s/mixed", mixed_from, mixed_to);
    let p = w.iter().find(|c| c.finding().path == "p").unwrap();
    assert_eq!(
        (p.finding().what, p.is_breaking(), p.finding().to.as_str()),
        (What::FieldWidened, false, "null|string")
    );
    let c = w.iter().find(|c| c.finding().path == "c").unwrap();
    assert_eq!(
        (c.finding().what, c.is_breaking(), c.finding().to.as_str()),
        (What::FieldWidened, false, "array|string")
    );
    // The other way round: seen with fewer types, nothing a client handled is gone.
    let back = ran(
        "s/narrow",
        out(
            0,
            json!([{"type": "user", "p": null}, {"type": "user", "p": "t"}]),
        ),
        out(0, json!([{"type": "user", "p": null}])),
    );
    let p = back.iter().find(|c| c.finding().path == "p").unwrap();
    assert_eq!(
        (p.finding().what, p.is_breaking()),
        (What::FieldNarrowed, false)
    );
}

#[test]
fn a_scenario_the_older_version_refused_runs_now_and_is_additive_the_reverse_breaking() {
    let refused = ScenarioOutput {
        stderr: Some("error: unknown option '--include-hook-events'".into()),
        ..out(1, json!([]))
    };
    let runs = out(0, json!([init(&["Bash"]), result(false, json!({}))]));
    let v = ran("hooks/new-flag", refused.clone(), runs.clone());
    let now = find(&v, What::NowRuns);
    assert!(!now.is_breaking());
    assert!(now
        .finding()
        .to_string()
        .starts_with("runs now (printed no frame before): hooks/new-flag"));
    assert!(v.iter().all(|c| !c.is_breaking()), "{v:#?}");
    assert!(v.iter().all(|c| c.finding().what != What::NoOutputAnyMore));
    let back = ran("hooks/new-flag", runs, refused);
    let gone = find(&back, What::NoOutputAnyMore);
    assert!(gone.is_breaking());
    assert!(gone
        .finding()
        .to_string()
        .starts_with("no output any more: hooks/new-flag"));
    assert!(find(&back, What::ExitCodeChanged).is_breaking());
}

#[test]
fn a_tool_gone_from_init_is_named_even_when_another_scenario_still_enables_it() {
    let tools = [
        "Bash",
        "Glob",
        "Grep",
        "TodoWrite",
        "AskUserQuestion",
        "EnterPlanMode",
    ];
    let a = version(
        "a",
        vec![
            ("s/plain", out(0, json!([init(&tools)]))),
            (
                "s/enables",
                out(
                    0,
                    json!([init(&["Bash", "AskUserQuestion", "EnterPlanMode"])]),
                ),
            ),
        ],
    );
    let b = version(
        "b",
        vec![
            ("s/plain", out(0, json!([init(&["Bash"])]))),
            (
                "s/enables",
                out(
                    0,
                    json!([init(&["Bash", "AskUserQuestion", "EnterPlanMode"])]),
                ),
            ),
        ],
    );
    let p = drift::diff_pair(&a, &b);
    let gone: Vec<&str> = p
        .verdict
        .iter()
        .filter(|c| c.is_breaking() && c.finding().what == What::NameGone)
        .map(|c| c.finding().path.as_str())
        .collect();
    assert_eq!(
        gone,
        [
            "AskUserQuestion",
            "EnterPlanMode",
            "Glob",
            "Grep",
            "TodoWrite"
        ]
    );
    let line = find(&p.verdict, What::NameGone).finding().to_string();
    assert_eq!(line, "name gone: s/plain, init.tools `AskUserQuestion`");
}

#[test]
fn error_results_that_changed_are_breaking_lines_naming_what_is_new() {
    let max_turns = |is_error: bool, errors: Value| json!([init(&["Bash"]), {"type": "result", "subtype": "error_max_turns", "is_error": is_error, "errors": errors, "duration_ms": 5}]);
    let v = ran(
        "basics/max-turns-exhausted",
        out(0, max_turns(false, json!([]))),
        out(
            1,
            max_turns(true, json!(["Reached maximum number of turns (1)"])),
        ),
    );
    let line = find(&v, What::ResultChanged).finding().to_string();
    assert!(find(&v, What::ResultChanged).is_breaking());
    assert_eq!(
        line,
        "result changed: basics/max-turns-exhausted, result `is_error`: error_max_turns → error_max_turns (is_error) with new errors[]"
    );
    let sse = ran(
        "errors/sse-error-event",
        out(
            0,
            json!([
                init(&["Bash"]),
                result(false, json!({"result": "never delivered"}))
            ]),
        ),
        out(
            1,
            json!([
                init(&["Bash"]),
                result(
                    true,
                    json!({"result": "API Error: API returned an empty or malformed response", "api_error_status": null})
                )
            ]),
        ),
    );
    let line = find(&sse, What::ResultChanged).finding().to_string();
    assert!(find(&sse, What::ResultChanged).is_breaking());
    assert!(
        line.starts_with("result changed: errors/sse-error-event, result `is_error`: success → success (is_error) with new api_error_status, result \"API Error: API returned"),
        "{line}"
    );
}

#[test]
fn drift_opens_a_pending_version_block_for_a_breaking_change() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir_all(root.join("scenarios/s")).unwrap();
    std::fs::create_dir_all(root.join("targets/claude-code")).unwrap();
    std::fs::write(
        root.join("targets/claude-code/versions.yaml"),
        "pinned: 1.0.0\nsupported: [1.0.0, 2.0.0]\n",
    )
    .unwrap();
    let scenario = "description: d\nprompt: p\nexpect:\n  claude-code:\n    frames:\n      - {type: system, subtype: init}\n      - {type: result, subtype: success, is_error: false}\n    exit_code: 0\n";
    std::fs::write(root.join("scenarios/s/x.yaml"), scenario).unwrap();
    let old = out(0, json!([init(&["Bash"]), result(false, json!({}))]));
    let new = ScenarioOutput {
        status: Status::Failed,
        first_divergence: Some(Divergence::new(Kind::FieldMismatch, "field mismatch")),
        ..out(
            1,
            json!([init(&["Bash"]), result(true, json!({"errors": ["x"]}))]),
        )
    };
    let mut a = version("claude-code@1.0.0", vec![("s/x", old)]);
    let mut b = version("claude-code@2.0.0", vec![("s/x", new)]);
    a.version = Some("1.0.0".into());
    b.version = Some("2.0.0".into());
    let outputs = dir.path().join("run");
    run_folder::write(&outputs, &[a, b]);
    let report = dir.path().join("report");
    streamcheck_at(&root)
        .args(["drift", "--replay"])
        .arg(&outputs)
        .arg("--report-dir")
        .arg(&report)
        .assert()
        .code(1);
    let pending = root.join("reports/pending/s/x.claude-code@2.0.0.yaml");
    let text = std::fs::read_to_string(&pending).unwrap();
    assert!(text.contains("expect: \"claude-code@2.0.0\"\n"), "{text}");
    assert!(
        text.ends_with("exit_code: 1\nframes_patch:\n  1: {$merge: {is_error: true}}\n"),
        "{text}"
    );
    let md = std::fs::read_to_string(report.join("drift.md")).unwrap();
    assert!(
        md.contains("Opened 1 pending version block(s) for claude-code@2.0.0")
            && md.contains("`reports/pending/s/x.claude-code@2.0.0.yaml`"),
        "{md}"
    );
    // Review accepts it into the scenario; the general expectation stays as it was.
    streamcheck_at(&root)
        .args(["review", "--accept-all"])
        .assert()
        .code(0);
    let after = std::fs::read_to_string(root.join("scenarios/s/x.yaml")).unwrap();
    assert_eq!(
        after,
        format!("{scenario}  claude-code@2.0.0:\n    exit_code: 1\n    frames_patch:\n      1: {{$merge: {{is_error: true}}}}\n")
    );
}

#[test]
fn drift_finds_what_verdict_finds_against_an_inventory_of_the_older_release() {
    use std::sync::Arc;
    use streamcheck::protocol::against::{Against, ProtocolCheck};
    use streamcheck::protocol::check::{Direction, Policy};

    let dir = tempfile::tempdir().unwrap();
    let (mut a, mut b) = pair();
    (a.target, a.version) = ("claude-code@1.0.0".into(), Some("1.0.0".into()));
    (b.target, b.version) = ("claude-code@2.0.0".into(), Some("2.0.0".into()));
    let (older, newer) = (dir.path().join("older"), dir.path().join("newer"));
    run_folder::write(&older, std::slice::from_ref(&a));
    run_folder::write(&newer, std::slice::from_ref(&b));

    // What `protocol build` makes of the older run, and `verdict` of the newer one
    // checked against it.
    let runs = streamcheck::commands::protocol::build::Runs::read(&[&older]).unwrap();
    let inventory = runs.inventory("claude-code", None);
    let check = ProtocolCheck {
        policy: Policy::Report,
        inventories: vec![Against {
            direction: Direction::Printed,
            file: "older.yaml".into(),
            loaded: Ok(Some(Arc::new(inventory))),
        }],
    };
    let (_, mut trials) = drift::read_run(&newer).unwrap();
    for t in &mut trials {
        streamcheck::runner::protocol::check_trial(&check, t);
    }
    let verdict = streamcheck::commands::protocol::verdict::classify(
        "claude-code@2.0.0",
        "2.0.0",
        vec![],
        &trials,
    );
    assert!(verdict.unchecked.is_empty(), "{:#?}", verdict.unchecked);
    let said: Vec<_> = (verdict.breaking.iter().chain(&verdict.additive))
        .cloned()
        .collect();

    let p = drift::diff_pair(&a, &b);
    let found: Vec<_> = (p.printed.iter())
        .map(|c| (c.finding.clone(), c.scenarios.clone()))
        .collect();
    assert!(!found.is_empty());
    assert_eq!(
        found, said,
        "drift's findings on the newer release are verdict's"
    );
    // And drift sees what verdict cannot: what the newer release prints nowhere.
    assert!(
        (p.not_printed.iter()).any(|c| c.finding.to_string() == "new frame kind `system/status`"),
        "{:#?}",
        p.not_printed
    );
}
