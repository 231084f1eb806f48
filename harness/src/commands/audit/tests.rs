use super::*;
use crate::printed::exit::Exit;
use crate::runner::{Stderr, TrialKey};
use std::path::Path;

/// The project the test scenarios are of (nothing is read from it).
const ROOT: &str = "proj";

fn planner() -> crate::plan::Planner {
    let project = crate::install::Project::at(ROOT);
    crate::plan::Planner::new(&project).unwrap()
}

const STDOUT: &str = concat!(
    r#"{"type":"system","subtype":"init","session_id":"s1","cwd":"/w"}"#,
    "\n",
    r#"{"type":"assistant","message":{"content":[{"type":"text","text":"Running it."}]},"session_id":"s1"}"#,
    "\n",
    r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"toolu_001","name":"Bash"}]},"session_id":"s1"}"#,
    "\n",
    r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_001"}]},"session_id":"s1"}"#,
    "\n",
    r#"{"type":"result","subtype":"success","is_error":false,"result":"Retried 3 times","session_id":"s1"}"#,
    "\n"
);

fn scenario(expect: &str) -> Scenario {
    let text = format!(
        "description: x\nprompt: p\nexpect:\n  claude-code:\n{}",
        expect
            .lines()
            .map(|l| format!("    {l}\n"))
            .collect::<String>()
    );
    Scenario::parse(
        &text,
        Path::new("proj/scenarios/t/x.yaml"),
        Path::new("proj/scenarios"),
    )
    .unwrap()
}

fn saved() -> SavedTrial {
    SavedTrial {
        format_version: 1,
        key: TrialKey {
            dialect: Some(crate::dialect::Dialect::ClaudeCode),
            ..TrialKey::new("t/x", "claude-code", "1.0.0")
        },
        status: Status::Passed,
        exit: Exit {
            code: Some(0),
            ..Exit::default()
        },
        stdout: STDOUT.into(),
        stdout_truncated: false,
        stderr: Stderr::default(),
        workspace: "/w".into(),
        home: "/h".into(),
        journal: Vec::new(),
        requests_dropped: 0,
        run: None,
        client: None,
        line_ms: Vec::new(),
        stub_lead_ms: 0,
        expected_frames: Vec::new(),
    }
}

fn parse(text: &str) -> Scenario {
    Scenario::parse(
        text,
        Path::new("proj/scenarios/t/x.yaml"),
        Path::new("proj/scenarios"),
    )
    .unwrap()
}

fn outcome(a: &ScenarioAudit, m: Mutation) -> &Outcome {
    &a.results.iter().find(|t| t.mutation == m).unwrap().outcome
}

/// Pins only the result, in subsequence mode, with an unanchored regex.
const LOOSE: &str = "mode: subsequence
frames:
  - {type: result, result: {$regex: Retried}}
invariants: {skip: [exit_code_matches_result], reason: a loose fixture}
";

/// Every frame, in order, with ids, names, texts, is_error and the exit code.
const TIGHT: &str = "frames:
  - {type: system, subtype: init, session_id: {$capture: sid}}
  - {type: assistant, message: {content: [{type: text, text: Running it.}]}}
  - {type: assistant, message: {content: [{type: tool_use, id: toolu_001, name: Bash}]}}
  - {type: user, message: {content: [{type: tool_result, tool_use_id: toolu_001}]}}
  - {type: result, subtype: success, is_error: false, result: {$regex: '^Retried 3 times$'}, session_id: {$ref: sid}}
exit_code: 0
stderr: {not_contains: [panicked]}
";

#[test]
fn a_loose_scenario_misses_what_a_tight_one_catches() {
    let loose = audit_one(&scenario(LOOSE), &saved(), &planner()).unwrap();
    let tight = audit_one(&scenario(TIGHT), &saved(), &planner()).unwrap();
    for m in [
        Mutation::DropFrame,
        Mutation::SwapFramesAfterInit,
        Mutation::FlipIsError,
        Mutation::ChangeResultText,
        Mutation::ChangeToolName,
        Mutation::ChangeToolUseId,
        Mutation::ChangeExitCode,
    ] {
        assert_eq!(outcome(&loose, m), &Outcome::Missed, "loose, {m}");
        assert!(
            matches!(outcome(&tight, m), Outcome::Caught(_)),
            "tight, {m}: {:?}",
            outcome(&tight, m)
        );
    }
    // The invariants catch these whatever the frames say.
    for m in [
        Mutation::InsertNonJson,
        Mutation::FrameAfterResult,
        Mutation::HangAfterResult,
    ] {
        assert!(
            matches!(outcome(&loose, m), Outcome::Caught(_)),
            "loose, {m}"
        );
    }
}

#[test]
fn controls_never_fail_a_passing_scenario() {
    for expect in [LOOSE, TIGHT] {
        let a = audit_one(&scenario(expect), &saved(), &planner()).unwrap();
        for m in Mutation::ALL.into_iter().filter(|m| m.is_control()) {
            assert_eq!(outcome(&a, m), &Outcome::Held, "{m}");
        }
    }
}

#[test]
fn a_stderr_rule_that_reads_everything_is_a_false_alarm() {
    let a = audit_one(
        &scenario("mode: subsequence\nstderr: {empty: true}\n"),
        &saved(),
        &planner(),
    )
    .unwrap();
    assert!(matches!(
        outcome(&a, Mutation::UnrelatedStderr),
        Outcome::FalseAlarm(_)
    ));
    let audit = audit(
        &[scenario("mode: subsequence\nstderr: {empty: true}\n")],
        &[saved()],
        &planner(),
    );
    assert_eq!(audit.false_alarms, 1);
    assert!(render::render_md(&audit).contains("false alarm: control: unrelated stderr"));
}

#[test]
fn a_trial_that_did_not_pass_is_not_audited() {
    let mut s = saved();
    s.status = Status::Failed;
    assert!(audit_one(&scenario(TIGHT), &s, &planner()).is_err());
    let a = audit(
        &[scenario("frames: [{type: result, is_error: true}]\n")],
        &[saved()],
        &planner(),
    );
    assert_eq!(a.not_audited.len(), 1);
    assert!(a.not_audited[0].reason.contains("no longer passes"));
}

#[test]
fn the_score_counts_caught_out_of_applied() {
    let a = audit(&[scenario(TIGHT)], &[saved()], &planner());
    assert_eq!(
        a.missed + a.caught,
        a.scenarios[0].count(|o| matches!(o, Outcome::Caught(_) | Outcome::Missed))
    );
    assert!(a.score > 0.0 && a.score <= 100.0);
    assert!(render::render_md(&a).contains("| t/x | claude-code |"));
}

/// A saved trial is re-checked against the version block that held for its version, as
/// the run did: here the general expectation wants exit 1, the block for 1.x wants 0.
#[test]
fn the_version_block_of_the_saved_version_is_used() {
    let text = "description: x\nprompt: p\nexpect:\n  claude-code:\n    mode: subsequence\n    frames: [{type: result}]\n    exit_code: 1\n  claude-code@>=1.0.0:\n    exit_code: 0\n";
    let s = parse(text);
    assert!(audit_one(&s, &saved(), &planner()).is_ok());
    let mut older = saved();
    older.key.target_version = "0.9.0".into();
    let err = audit_one(&s, &older, &planner()).unwrap_err().to_string();
    assert!(err.contains("no longer passes"), "{err}");
}

/// The dialect and the release a trial was held to come from the saved trial, never from
/// the target's name: a project file's `[targets.mycc]` (claude-code@1.0.0), and a
/// wrapper held to 1.0.0 whatever its own version says.
#[test]
fn the_dialect_and_the_held_to_release_come_from_the_trial_not_its_name() {
    let text = "description: x\nprompt: p\nexpect:\n  claude-code:\n    mode: subsequence\n    frames: [{type: result}]\n    exit_code: 1\n  claude-code@>=1.0.0:\n    exit_code: 0\n";
    let s = parse(text);
    let mut mycc = saved();
    mycc.key.target = "mycc".into();
    assert!(audit_one(&s, &mycc, &planner()).is_ok());
    let mut wrapper = saved();
    wrapper.key = TrialKey {
        target: "my-wrapper".into(),
        target_version: "0.3.0".into(),
        held_to: Some("1.0.0".into()),
        conforms_to: Some("1.0.0".into()),
        ..saved().key
    };
    assert!(audit_one(&s, &wrapper, &planner()).is_ok());
    let mut unsaid = saved();
    unsaid.key.dialect = None;
    let err = audit_one(&s, &unsaid, &planner()).unwrap_err().to_string();
    assert!(err.contains("dialect"), "{err}");
}

/// A multi-run trial saved run 2's output: it is checked against run 2's expectation, not
/// the whole scenario's (which has no frames of its own) nor run 1's.
#[test]
fn a_multi_run_trial_is_checked_against_the_run_it_saved() {
    let text = "description: x\nruns:\n  - {prompt: a}\n  - {prompt: b}\nexpect:\n  claude-code:\n    runs:\n      - {frames: [{type: result, result: other}], exit_code: 1}\n      - frames:\n          - {type: system, subtype: init}\n          - {type: assistant}\n          - {type: assistant}\n          - {type: user}\n          - {type: result, result: Retried 3 times}\n        exit_code: 0\n";
    let s = parse(text);
    let run2 = SavedTrial {
        run: Some(2),
        ..saved()
    };
    let a = audit_one(&s, &run2, &planner()).unwrap();
    assert!(matches!(
        outcome(&a, Mutation::DropFrame),
        Outcome::Caught(_)
    ));
    let run1 = SavedTrial {
        run: Some(1),
        ..saved()
    };
    assert!(audit_one(&s, &run1, &planner())
        .unwrap_err()
        .to_string()
        .contains("no longer passes"));
    let unknown = audit_one(&s, &saved(), &planner()).unwrap_err().to_string();
    assert!(unknown.contains("does not say which one"), "{unknown}");
    let gone = SavedTrial {
        run: Some(3),
        ..saved()
    };
    assert!(audit_one(&s, &gone, &planner())
        .unwrap_err()
        .to_string()
        .contains("run 3"));
}

/// The scripted client's request ids are saved with the trial, so an expectation that
/// `{$ref: initialize}`s them can be checked again.
#[test]
fn a_saved_client_log_seeds_the_request_captures() {
    let stdout = concat!(
        r#"{"type":"control_response","response":{"subtype":"success","request_id":"req_1"}}"#,
        "\n",
        r#"{"type":"system","subtype":"init","session_id":"s1"}"#,
        "\n",
        r#"{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"s1"}"#,
        "\n"
    );
    let s = parse(
        "description: x\nclient: {profile: sdk-ts}\nexpect:\n  claude-code:\n    frames:\n      - {type: control_response, response: {subtype: success, request_id: {$ref: initialize}}}\n      - {type: system, subtype: init}\n      - {type: result, result: ok}\n    turns: 1\n    exit_code: 0\n",
    );
    let without = SavedTrial {
        stdout: stdout.into(),
        ..saved()
    };
    let err = audit_one(&s, &without, &planner()).unwrap_err().to_string();
    assert!(err.contains("initialize"), "{err}");
    let log: crate::client::ClientLog = serde_json::from_value(serde_json::json!({
        "requests": [{"name": "initialize", "id": "req_1", "subtype": "initialize"}],
        "unanswered": [], "errors": [], "written": [], "sdk": null
    }))
    .unwrap();
    let with = SavedTrial {
        client: Some(log),
        ..without
    };
    let a = audit_one(&s, &with, &planner()).unwrap();
    assert!(matches!(
        outcome(&a, Mutation::ChangeResultText),
        Outcome::Caught(_)
    ));
    let round_trip: SavedTrial =
        serde_json::from_str(&serde_json::to_string(&with).unwrap()).unwrap();
    assert!(audit_one(&s, &round_trip, &planner()).is_ok());
}

/// Frames the scenario ignores are not what a mutation changes: swapping an ignored
/// frame with the next one would change nothing the scenario looks at.
#[test]
fn mutations_leave_ignored_frames_alone() {
    let stdout = concat!(
        r#"{"type":"system","subtype":"init","session_id":"s1"}"#,
        "\n",
        r#"{"type":"system","subtype":"noise","session_id":"s1"}"#,
        "\n",
        r#"{"type":"assistant","message":{"content":[{"type":"text","text":"a"}]},"session_id":"s1"}"#,
        "\n",
        r#"{"type":"system","subtype":"noise","session_id":"s1"}"#,
        "\n",
        r#"{"type":"user","message":{"content":[{"type":"text","text":"b"}]},"session_id":"s1"}"#,
        "\n",
        r#"{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"s1"}"#,
        "\n"
    );
    let s = scenario(
        "ignore: [{type: system, subtype: noise}]\nframes:\n  - {type: system, subtype: init}\n  - {type: assistant}\n  - {type: user}\n  - {type: result, result: ok}\nexit_code: 0\n",
    );
    let t = SavedTrial {
        stdout: stdout.into(),
        ..saved()
    };
    let a = audit_one(&s, &t, &planner()).unwrap();
    for m in [
        Mutation::SwapFramesAfterInit,
        Mutation::DropFrame,
        Mutation::DuplicateFrame,
        Mutation::ChangeType,
    ] {
        assert!(
            matches!(outcome(&a, m), Outcome::Caught(_)),
            "{m}: {:?}",
            outcome(&a, m)
        );
    }
}

#[test]
fn audit_md_starts_with_the_command_that_made_it() {
    let a = Audit {
        command: "streamcheck audit --filter tools/".into(),
        ..audit(&[scenario(TIGHT)], &[saved()], &planner())
    };
    let md = render::render_md(&a);
    assert!(
        md.starts_with("# Suite audit\n\n```\nstreamcheck audit --filter tools/\n```\n"),
        "{md}"
    );
    assert!(!render::render_md(&audit(&[scenario(TIGHT)], &[saved()], &planner())).contains("```"));
}

#[test]
fn the_protocol_inventory_catches_a_key_added_or_dropped_and_a_new_frame_type() {
    use crate::protocol::{inventory, Inventory, Observed};
    let root = tempfile::tempdir().unwrap();
    let stdout = STDOUT.replace(
        r#""result":"Retried 3 times","#,
        r#""result":"Retried 3 times","num_turns":2,"#,
    );
    let frames: Vec<serde_json::Value> = (stdout.lines())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut inv = Inventory::new("claude-code");
    inv.add(
        &semver::Version::new(1, 0, 0),
        &Observed::of("t/x", &frames, &[]),
    );
    let file = root.path().join(inventory::file_of("claude-code"));
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, inv.to_yaml()).unwrap();
    let saved = SavedTrial { stdout, ..saved() };
    let planner_in = |root: &Path| {
        let project = crate::install::Project::at(root);
        crate::plan::Planner::new(&project).unwrap()
    };
    let with = audit_one(&scenario(LOOSE), &saved, &planner_in(root.path())).unwrap();
    let without = audit_one(&scenario(LOOSE), &saved, &planner()).unwrap();
    for (m, says) in [
        (
            Mutation::AddKeyToKind,
            "new key `result/success.streamcheck_audit_key` (bool)",
        ),
        (
            Mutation::DropKeyFromKind,
            "gone key `result/success.session_id`",
        ),
        (
            Mutation::NewFrameType,
            "new frame kind `streamcheck_audit_frame`",
        ),
        (
            Mutation::ChangeJsonType,
            "new type of `result/success.num_turns`: string (the inventory has number)",
        ),
    ] {
        match outcome(&with, m) {
            Outcome::Caught(d) => assert!(d.contains(says), "{m}: {d}"),
            other => panic!("{m}: {other:?}"),
        }
        assert_eq!(
            outcome(&without, m),
            &Outcome::Missed,
            "{m} without an inventory"
        );
    }
    for control in [
        Mutation::KeyOrder,
        Mutation::Whitespace,
        Mutation::StringEscapes,
    ] {
        assert_eq!(outcome(&with, control), &Outcome::Held, "{control}");
    }
}
