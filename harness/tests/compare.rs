//! Parity: the per-dialect adapters and the comparison, on real captures of Claude Code
//! 2.1.197, caliban 0.15.0 and Qwen Code 0.24.4 (copied from the project's observed captures into
//! tests/fixtures/observed), plus the runner's run-without-expectation mode.

mod common;

use common::{fixture_root, streamcheck, text, write_executable};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use streamcheck::commands::compare::{
    self, compare, Aspect, Comparison, Parity, ScenarioParity, Side, TargetSide, Verdict,
};
use streamcheck::dialect::{Dialect, Event, Neutral};
use streamcheck::install::{Project, Target};
use streamcheck::recording::recorded::Recorded;
use streamcheck::runner::{AsWritten, Exit, RunOptions, Status, Termination, Trial};
use streamcheck::scenario::Scenario;

const CLAUDE: &str = "claude-code-2.1.197";
const CALIBAN: &str = "caliban-0.15.0";

fn dir(which: &str) -> PathBuf {
    fixture_root("observed").join(which)
}

fn capture(which: &str, case: &str) -> Recorded {
    Recorded::from_capture(&dir(which), case).unwrap()
}

fn claude(case: &str) -> Recorded {
    capture(CLAUDE, case)
}

fn caliban(case: &str) -> Recorded {
    capture(CALIBAN, case)
}

fn adapt(dialect: Dialect, r: &Recorded) -> Neutral {
    dialect.conventions().neutral(&r.frames)
}

/// Compares one case captured on both CLIs.
fn both(case: &str) -> Comparison {
    compare_cases(case, case)
}

fn compare_cases(claude_case: &str, caliban_case: &str) -> Comparison {
    let (a, b) = (claude(claude_case), caliban(caliban_case));
    compare(
        Side {
            name: "claude-code",
            dialect: Dialect::ClaudeCode,
            run: &a,
        },
        Side {
            name: "caliban",
            dialect: Dialect::Caliban,
            run: &b,
        },
    )
}

/// A compact picture of an event sequence.
fn kinds(n: &Neutral) -> Vec<String> {
    n.events
        .iter()
        .map(|e| match e {
            Event::Init { .. } => "init".to_string(),
            Event::Text { text, .. } => format!("text {text}"),
            Event::Thinking { text, .. } => format!("thinking {text}"),
            Event::ToolCall { id, name, .. } => format!("call {name} {id}"),
            Event::ToolResult {
                tool_use_id,
                is_error,
                ..
            } => format!("result {tool_use_id} error={is_error}"),
            Event::Retry { status, .. } => format!("retry {}", status.unwrap_or(0)),
            Event::Warning { .. } => "warning".to_string(),
            Event::UserEcho { text } => format!("echo {text}"),
            Event::Result {
                subtype, is_error, ..
            } => format!("end {subtype} error={is_error}"),
        })
        .collect()
}

fn differing(c: &Comparison) -> Vec<Aspect> {
    c.rows
        .iter()
        .filter(|r| r.verdict == Verdict::Differs)
        .map(|r| r.aspect)
        .collect()
}

// ---------------------------------------------------------------------------
// Adapters
// ---------------------------------------------------------------------------

#[test]
fn claude_code_bash_round_trip() {
    let n = adapt(Dialect::ClaudeCode, &claude("bash_tool"));
    assert_eq!(
        kinds(&n),
        [
            "init",
            "text Running it.",
            "call Bash toolu_001",
            "result toolu_001 error=false",
            "text The command printed: tool-use-test-output",
            "end success error=false",
        ]
    );
    let Some(Event::ToolResult { text, .. }) = n.events.get(3) else {
        panic!("a tool result: {:?}", n.events)
    };
    assert_eq!(text, "tool-use-test-output");
}

#[test]
fn caliban_counts_each_tool_call_once_in_claude_order() {
    // tool_use and tool_result progress frames, then the message frame repeating the tool_use.
    let r = caliban("bash_tool");
    let types: Vec<&str> = r
        .frames
        .iter()
        .map(|f| f["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        [
            "system",
            "tool_use",
            "tool_result",
            "message",
            "message",
            "result"
        ]
    );
    let n = adapt(Dialect::Caliban, &r);
    assert_eq!(
        kinds(&n),
        [
            "init",
            "text Running it.",
            "call Bash toolu_001",
            "result toolu_001 error=false",
            "text The command printed: tool-use-test-output",
            "end success error=false",
        ]
    );
}

#[test]
fn caliban_message_tool_use_without_progress_frame_still_counts_once() {
    let frames = vec![
        json!({"type": "message", "role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}]}),
        json!({"type": "message", "role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}]}),
        json!({"type": "result", "subtype": "max_turns", "is_error": true}),
    ];
    let n = Dialect::Caliban.conventions().neutral(&frames);
    assert_eq!(kinds(&n), ["call Bash t1", "end max_turns error=true"]);
}

#[test]
fn parallel_calls_pair_results_by_id() {
    let a = adapt(Dialect::ClaudeCode, &claude("parallel_tools"));
    let b = adapt(Dialect::Caliban, &caliban("parallel_tools"));
    // Claude Code reports the second call's result first.
    assert_eq!(
        kinds(&a)[1..5],
        [
            "call Bash toolu_p1",
            "call Bash toolu_p2",
            "result toolu_p2 error=false",
            "result toolu_p1 error=false"
        ]
    );
    assert_eq!(
        kinds(&b)[1..5],
        [
            "call Bash toolu_p1",
            "call Bash toolu_p2",
            "result toolu_p1 error=false",
            "result toolu_p2 error=false"
        ]
    );
    let c = both("parallel_tools");
    assert_eq!(differing(&c), [], "{c:#?}");
    assert_eq!(c.verdict(Aspect::ToolCalls), Verdict::Same);
    // caliban's Bash wraps the same stdout in more lines: shape, not substance.
    assert_eq!(c.verdict(Aspect::ToolResults), Verdict::Shape);
}

#[test]
fn foreign_input_shapes() {
    // Claude Code fed caliban's frame: stderr only, exit 1, no frame at all.
    let a = claude("input_caliban_shape");
    assert!(a.frames.is_empty());
    assert_eq!(a.exit.code, Some(1));
    assert!(a.stderr.contains("t.message.role"));
    // caliban fed Claude Code's frame: init, then a result with subtype error; exit 64.
    let b = caliban("input_claude_shape");
    let n = adapt(Dialect::Caliban, &b);
    assert_eq!(kinds(&n), ["init", "end error error=true"]);
    let Event::Result { text, .. } = &n.events[1] else {
        unreachable!()
    };
    assert_eq!(
        text.as_deref(),
        Some("unknown field `message`, expected `content`")
    );
    let c = compare_cases("input_caliban_shape", "input_claude_shape");
    let exit = c.row(Aspect::Exit).unwrap();
    assert_eq!((exit.a.as_str(), exit.b.as_str()), ("1", "64"));
    assert_eq!(exit.verdict, Verdict::Differs);
    assert_eq!(
        differing(&c),
        [
            Aspect::Exit,
            Aspect::Init,
            Aspect::Turns,
            Aspect::Result,
            Aspect::ResultText
        ]
    );
}

#[test]
fn multi_turn_stdin() {
    let a = adapt(Dialect::ClaudeCode, &claude("multi_turn_stdin"));
    assert_eq!(
        kinds(&a),
        [
            "init",
            "text First answer.",
            "end success error=false",
            "init",
            "text Second answer.",
            "end success error=false"
        ]
    );
    let b = adapt(Dialect::Caliban, &caliban("multi_turn_stdin"));
    assert_eq!(
        kinds(&b),
        [
            "init",
            "text First answer.",
            "text Second answer.",
            "end success error=false"
        ]
    );
    let c = both("multi_turn_stdin");
    // An init per turn is shape; one result for two turns is substance.
    assert_eq!(c.verdict(Aspect::Init), Verdict::Shape);
    assert_eq!(c.verdict(Aspect::Turns), Verdict::Differs);
    assert_eq!(c.verdict(Aspect::Text), Verdict::Same);
    assert_eq!(c.verdict(Aspect::FinalText), Verdict::Same);
}

#[test]
fn thinking_blocks() {
    let a = adapt(Dialect::ClaudeCode, &claude("thinking"));
    let b = adapt(Dialect::Caliban, &caliban("thinking"));
    let expected = [
        "init",
        "thinking Let me think about this step by step...",
        "text The answer is 42.",
        "end success error=false",
    ];
    assert_eq!(kinds(&a), expected);
    assert_eq!(kinds(&b), expected);
    assert!(a.unmapped.contains("system/thinking_tokens"));
    let c = both("thinking");
    assert_eq!(c.verdict(Aspect::Thinking), Verdict::Same);
    assert_eq!(differing(&c), []);
}

#[test]
fn partial_messages() {
    // Claude Code: stream_event deltas plus the full assistant frame; caliban: a text delta only.
    let a = adapt(Dialect::ClaudeCode, &claude("partial_messages"));
    assert!(a.unmapped.contains("stream_event"));
    let b = adapt(Dialect::Caliban, &caliban("partial_messages"));
    assert_eq!(
        caliban("partial_messages").frames[1],
        json!({"type": "text", "delta": "Hello!"})
    );
    assert_eq!(kinds(&a), kinds(&b));
    assert_eq!(
        kinds(&b),
        ["init", "text Hello!", "end success error=false"]
    );
    assert_eq!(differing(&both("partial_messages")), []);
}

#[test]
fn text_is_the_same_in_substance() {
    let c = both("text");
    assert_eq!(differing(&c), []);
    assert_eq!(c.row(Aspect::FinalText).unwrap().a, "\"Hello!\"");
    // Shape alone (session ids, field names, frame names) never shows as a row.
    assert!(c.rows.iter().all(|r| r.verdict != Verdict::Shape));
}

#[test]
fn retry_that_caliban_does_not_announce() {
    let a = adapt(Dialect::ClaudeCode, &claude("overloaded_529_then_ok"));
    assert!(a.events.contains(&Event::Retry {
        attempt: Some(1),
        status: Some(529)
    }));
    let b = adapt(Dialect::Caliban, &caliban("overloaded_529_then_ok"));
    assert!(!b.events.iter().any(|e| matches!(e, Event::Retry { .. })));
    let c = both("overloaded_529_then_ok");
    assert_eq!(differing(&c), [Aspect::Retries]);
    let row = c.row(Aspect::Retries).unwrap();
    assert_eq!(row.a, "529 (attempt 1)");
    assert_eq!(row.b, "none");
    // Both sent two requests: caliban retried, silently.
    assert_eq!(c.verdict(Aspect::Requests), Verdict::Same);
    assert!(row
        .note
        .as_deref()
        .unwrap()
        .contains("caliban announces no retry in 2 request(s)"));
    let diffs = c.differences("claude-code", "caliban");
    assert_eq!(diffs.len(), 1);
    assert!(diffs[0].starts_with("retries: claude-code 529 (attempt 1), caliban none"));
}

#[test]
fn max_tokens() {
    let a = adapt(Dialect::ClaudeCode, &claude("max_tokens"));
    // Claude Code's synthetic assistant message is a notice, not model text.
    assert_eq!(
        kinds(&a).iter().filter(|k| *k == "warning").count(),
        1,
        "{:?}",
        kinds(&a)
    );
    assert_eq!(kinds(&a).last().unwrap(), "end success error=true");
    let b = adapt(Dialect::Caliban, &caliban("max_tokens"));
    assert_eq!(kinds(&b).last().unwrap(), "end max_tokens error=true");
    let c = both("max_tokens");
    let d = differing(&c);
    assert!(d.contains(&Aspect::Result), "{d:?}");
    assert!(d.contains(&Aspect::ResultText), "{d:?}");
    assert!(d.contains(&Aspect::Warnings), "{d:?}");
    assert!(!d.contains(&Aspect::Exit), "both exit 1: {d:?}");
    assert_eq!(c.verdict(Aspect::FinalText), Verdict::Same);
}

#[test]
fn read_missing_file_tool_error_differs() {
    let c = both("read_missing_file");
    assert_eq!(differing(&c), [Aspect::ToolResults]);
    let row = c.row(Aspect::ToolResults).unwrap();
    assert!(
        row.a.starts_with("Read: error \"File does not exist."),
        "{}",
        row.a
    );
    assert!(row.b.contains("missing field `path`"), "{}", row.b);
}

#[test]
fn multi_text_blocks_result_text_differs() {
    let b = adapt(Dialect::Caliban, &caliban("multi_text_blocks"));
    assert_eq!(
        b.events[1..3],
        [
            Event::Text {
                text: "First paragraph.".into(),
                message: 0
            },
            Event::Text {
                text: "Second paragraph.".into(),
                message: 0
            }
        ]
    );
    let c = both("multi_text_blocks");
    assert_eq!(differing(&c), [Aspect::ResultText]);
    assert_eq!(
        c.row(Aspect::ResultText).unwrap().b,
        "\"First paragraph.Second paragraph.\""
    );
}

fn exited(code: i32) -> Exit {
    Exit {
        code: Some(code),
        ..Exit::default()
    }
}

#[test]
fn missing_tool_result_and_exit_code() {
    let call = json!({"type": "assistant", "message": {"id": "m", "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "x"}}]}});
    let result = json!({"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok", "is_error": false}]}});
    let end = json!({"type": "result", "subtype": "success", "is_error": false, "result": "done"});
    let a = Recorded {
        frames: vec![call.clone(), result, end.clone()],
        exit: exited(0),
        ..Recorded::default()
    };
    let b = Recorded {
        frames: vec![call, end],
        exit: exited(2),
        ..Recorded::default()
    };
    let c = compare(
        Side {
            name: "x",
            dialect: Dialect::ClaudeCode,
            run: &a,
        },
        Side {
            name: "y",
            dialect: Dialect::ClaudeCode,
            run: &b,
        },
    );
    assert_eq!(differing(&c), [Aspect::Exit, Aspect::ToolResults]);
    assert_eq!(
        c.row(Aspect::ToolResults).unwrap().note.as_deref(),
        Some("y gives no result for Bash (t1)")
    );
    assert_eq!(
        c.row(Aspect::Exit).unwrap().note.as_deref(),
        Some("for the same outcome: success with is_error false")
    );
    // Identical runs: nothing differs.
    let same = compare(
        Side {
            name: "x",
            dialect: Dialect::ClaudeCode,
            run: &a,
        },
        Side {
            name: "y",
            dialect: Dialect::ClaudeCode,
            run: &a,
        },
    );
    assert!(same.rows.iter().all(|r| r.verdict <= Verdict::Same));
}

// ---------------------------------------------------------------------------
// Whole reports
// ---------------------------------------------------------------------------

#[test]
fn observed_folders_make_a_report() {
    let p = compare::observed(
        &dir(CLAUDE),
        &dir(CALIBAN),
        &[],
        "streamcheck compare --observed A B".into(),
    )
    .unwrap();
    assert_eq!(
        (p.a.name.as_str(), p.a.version.as_str()),
        ("claude-code", "2.1.197")
    );
    assert_eq!(
        (p.b.name.as_str(), p.b.dialect),
        ("caliban", Some(Dialect::Caliban))
    );
    let ids: Vec<&str> = p.scenarios.iter().map(|s| s.scenario.as_str()).collect();
    assert!(ids.contains(&"input_foreign_shape"), "{ids:?}");
    assert!(!ids.contains(&"input_claude_shape"), "{ids:?}");
    assert_eq!(p.counts.not_compared, 0);
    let by_id =
        |id: &str| -> &ScenarioParity { p.scenarios.iter().find(|s| s.scenario == id).unwrap() };
    assert!(by_id("text").differences.is_empty());
    assert!(by_id("bash_tool").differences.is_empty());
    assert_eq!(by_id("overloaded_529_then_ok").differences.len(), 1);
    assert!(!p.known_shape_differences.is_empty());
    assert!(p.unmapped_frames["claude-code"].contains(&"stream_event".to_string()));

    let out = tempfile::tempdir().unwrap();
    compare::write(out.path(), &p).unwrap();
    let md = std::fs::read_to_string(out.path().join("parity.md")).unwrap();
    assert!(md.starts_with(
        "# Parity: claude-code 2.1.197 vs caliban 0.15.0\n\n```\nstreamcheck compare --observed A B\n```"
    ));
    assert!(md.contains("| [overloaded_529_then_ok](#overloaded_529_then_ok) |"));
    assert!(md.contains("## Known shape differences"));
    // Shape differences are listed once, not per scenario.
    assert_eq!(md.matches("session_id: Claude Code puts a UUID").count(), 1);
    let back: Parity =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("parity.json")).unwrap())
            .unwrap();
    assert_eq!(back, p);
}

#[test]
fn compare_subcommand_over_captures_needs_no_cli() {
    let out = tempfile::tempdir().unwrap();
    let run = streamcheck()
        .current_dir(out.path())
        .arg("compare")
        .arg("--observed")
        .arg(dir(CLAUDE))
        .arg(dir(CALIBAN))
        .args(["--filter", "529", "--report-dir"])
        .arg(out.path())
        .output()
        .unwrap();
    let stdout = text(&run.stdout);
    assert!(run.status.success(), "{stdout}\n{}", text(&run.stderr));
    assert!(
        stdout.contains("differs     overloaded_529_then_ok: retries"),
        "{stdout}"
    );
    let json: Value =
        serde_json::from_slice(&std::fs::read(out.path().join("parity.json")).unwrap()).unwrap();
    assert_eq!(json["scenarios"].as_array().unwrap().len(), 1);
    assert!(json["command"]
        .as_str()
        .unwrap()
        .starts_with("streamcheck compare --observed "));
}

// ---------------------------------------------------------------------------
// Live runs: the runner's mode for targets without an expectation
// ---------------------------------------------------------------------------

const CLAUDE_ONLY: &str = r#"
description: a scenario written for Claude Code only
features: [input-stream-json]
stdin:
  - {type: user, message: {role: user, content: "hi"}}
args: [--dangerously-skip-permissions]
expect:
  claude-code:
    exit_code: 0
"#;

fn scenario(text: &str) -> Scenario {
    let root = Path::new("/nonexistent/scenarios");
    Scenario::parse(text, &root.join("demo/claude-only.yaml"), root).unwrap()
}

/// A stand-in for caliban that rejects Claude Code's stdin frame like the real one.
fn fake_caliban(dir: &Path) -> Target {
    let program = dir.join("fake-caliban.sh");
    write_executable(
        &program,
        "#!/bin/sh\ncat >/dev/null\necho '[caliban] input parse error: unknown field `message`, expected `content`' >&2\necho '{\"type\":\"result\",\"subtype\":\"error\",\"is_error\":true,\"error\":\"unknown field `message`, expected `content`\",\"session_id\":\"ephemeral\"}'\nexit 64\n",
    );
    Target {
        name: "caliban".into(),
        dialect: Dialect::Caliban,
        program,
        lead_args: Vec::new(),
        version: "0.15.0".into(),
        features: Default::default(),
        known: Default::default(),
        data: std::sync::Arc::new(streamcheck::install::DialectData::empty(
            dir,
            Dialect::Caliban,
        )),
        env: Default::default(),
        conforms_to: None,
        project: Project::at(dir),
        declared: Default::default(),
    }
}

#[test]
fn runner_runs_a_target_without_expectation_only_when_asked() {
    let tmp = tempfile::tempdir().unwrap();
    let s = scenario(CLAUDE_ONLY);
    let target = fake_caliban(tmp.path());
    let rt = tokio::runtime::Runtime::new().unwrap();
    let skipped = rt.block_on(streamcheck::suite::run_one(
        &s,
        &target,
        &RunOptions::default(),
    ));
    assert!(
        matches!(&skipped.status, Status::Skipped(why) if why.contains("no expectation for caliban")),
        "{:?}",
        skipped.status
    );
    let opts = RunOptions {
        without_expectation: AsWritten::ToCompare,
        ..RunOptions::default()
    };
    let ran = rt.block_on(streamcheck::suite::run_one(&s, &target, &opts));
    assert_eq!(
        ran.exit.code,
        Some(64),
        "{:?} {:?}",
        ran.status,
        ran.divergences
    );
    assert_eq!(ran.output.frames.len(), 1);
    assert!(
        ran.notes.iter().any(|n| n.contains("ran as written")),
        "{:?}",
        ran.notes
    );
    // It lacks input-stream-json in this stand-in's feature list, and still ran.
    assert!(
        ran.notes
            .iter()
            .any(|n| n.contains("ran for comparison although")),
        "{:?}",
        ran.notes
    );
    // To record a first block it runs as written too, but a feature it lacks still skips.
    let opts = RunOptions {
        without_expectation: AsWritten::ToRecord,
        ..RunOptions::default()
    };
    let to_record = rt.block_on(streamcheck::suite::run_one(&s, &target, &opts));
    assert!(
        matches!(&to_record.status, Status::Skipped(why) if why.contains("lacks input-stream-json")),
        "{:?}",
        to_record.status
    );
}

fn trial(target: &str, frames: Vec<Value>, code: i32, stderr: &str) -> Trial {
    let s = scenario(CLAUDE_ONLY);
    let mut t = Trial::skipped(&s, target, "1", String::new());
    t.status = Status::Passed;
    t.exit = Exit {
        code: Some(code),
        ..Exit::default()
    };
    t.output = streamcheck::printed::output::Output::parse(
        frames
            .iter()
            .map(|f| format!("{f}\n"))
            .collect::<String>()
            .as_bytes(),
    );
    t.stderr.head = stderr.to_string();
    t.stderr.total_bytes = stderr.len() as u64;
    t
}

#[test]
fn parity_says_when_a_target_cannot_run_the_scenario_as_written() {
    let s = scenario(CLAUDE_ONLY);
    let a = trial(
        "claude-code",
        vec![
            json!({"type": "system", "subtype": "init"}),
            json!({"type": "assistant", "message": {"id": "m", "content": [{"type": "text", "text": "Hello!"}]}}),
            json!({"type": "result", "subtype": "success", "is_error": false, "result": "Hello!"}),
        ],
        0,
        "",
    );
    let b = trial(
        "caliban",
        vec![
            json!({"type": "result", "subtype": "error", "is_error": true, "error": "unknown field `message`, expected `content`"}),
        ],
        64,
        "[caliban] input parse error: unknown field `message`, expected `content`\n",
    );
    let (sp, _) = compare::compare_trials(&s, (&a, Dialect::ClaudeCode), (&b, Dialect::Caliban));
    assert_eq!(sp.cannot_run_as_written, ["caliban"]);
    let notes = sp.notes.join("\n");
    assert!(
        notes.contains("caliban has no expectation in this scenario"),
        "{notes}"
    );
    assert!(notes.contains("Claude Code's shape"), "{notes}");
    assert!(
        notes.contains("--permission-mode bypassPermissions"),
        "{notes}"
    );
    assert!(
        notes.contains("caliban stderr: [caliban] input parse error"),
        "{notes}"
    );
    // What follows from not running is not listed as differences in substance.
    assert_eq!(sp.differences.len(), 1, "{:?}", sp.differences);
    assert!(sp.differences[0].starts_with(
        "caliban cannot run this scenario as written (exit 64: [caliban] input parse error"
    ));
    assert!(sp.differences[0].contains("claude-code exits 0"));
    assert_eq!(
        sp.aspects
            .iter()
            .find(|r| r.aspect == Aspect::Exit)
            .unwrap()
            .verdict,
        Verdict::Differs
    );

    // A skipped side is not compared.
    let mut skipped = b.clone();
    skipped.status = Status::Skipped("caliban lacks tool:Task".into());
    let (sp, _) =
        compare::compare_trials(&s, (&a, Dialect::ClaudeCode), (&skipped, Dialect::Caliban));
    assert_eq!(
        sp.not_compared.as_deref(),
        Some("caliban skipped it: caliban lacks tool:Task")
    );
}

#[test]
fn a_side_stalled_on_open_stdin_cannot_run_it_as_written() {
    let s = scenario(
        r#"
description: stdin stays open until the first result
stdin:
  - {type: user, message: {role: user, content: "hi"}}
close_stdin: {after_results: 1}
expect:
  claude-code: {}
"#,
    );
    let a = trial(
        "claude-code",
        vec![
            json!({"type": "result", "subtype": "success", "is_error": false, "result": "Hello!"}),
        ],
        0,
        "",
    );
    let mut b = trial("caliban", vec![], 0, "");
    b.exit = Exit {
        code: None,
        signal: Some(9),
        termination: Termination::Timeout,
    };
    let (sp, _) = compare::compare_trials(&s, (&a, Dialect::ClaudeCode), (&b, Dialect::Caliban));
    assert_eq!(sp.cannot_run_as_written, ["caliban"]);
    assert!(
        sp.differences[0].contains("seems to read stdin to EOF before it starts"),
        "{:?}",
        sp.differences
    );
    assert!(sp.differences[0].contains("claude-code exits 0"));
}

const QWEN: &str = "qwen-code-0.24.4";

/// Real Qwen Code 0.24.4 captures (`qwen-code-0.24.4/`), read by its adapter: its tool is
/// named by the neutral name, its own stream events are listed by type, and the shape
/// differences the parity baseline names hold in the captures themselves.
#[test]
fn qwen_code_captures_read_as_claude_code_with_neutral_tool_names() {
    let run = capture(QWEN, "bash_tool");
    let n = adapt(Dialect::QwenCode, &run);
    let calls: Vec<&str> = n
        .events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCall { name, .. } => Some(name.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        calls,
        ["Bash"],
        "run_shell_command is Bash in neutral terms"
    );
    assert!(n
        .events
        .iter()
        .any(|e| matches!(e, Event::ToolResult { text, .. } if text == "hi-from-tool")));
    assert!(n.unmapped.contains("stream_event/goal_state"));
    let init = &run.frames[0];
    assert_eq!(init["subtype"], "init");
    assert!(init.get("permission_mode").is_some() && init.get("permissionMode").is_none());
    assert!(init.get("qwen_code_version").is_some() && init.get("claude_code_version").is_none());
    let result = run.frames.last().unwrap();
    for absent in ["total_cost_usd", "modelUsage", "stop_reason"] {
        assert!(
            result.get(absent).is_none(),
            "{absent} in Qwen Code's result"
        );
    }
}

#[test]
fn qwen_code_streams_no_message_delta_and_prints_assistant_after_block_stop() {
    let kinds = |r: &Recorded| -> Vec<String> {
        r.frames
            .iter()
            .map(|f| match f["type"].as_str() {
                Some("stream_event") => f["event"]["type"].as_str().unwrap_or("").to_string(),
                other => other.unwrap_or("").to_string(),
            })
            .collect()
    };
    let qwen = kinds(&capture(QWEN, "partial_tool"));
    let claude = kinds(&capture("claude-code-2.1.328", "partial_tool"));
    assert!(claude.contains(&"message_delta".to_string()));
    assert!(!qwen.contains(&"message_delta".to_string()));
    let after = |k: &[String], a: &str, b: &str| {
        k.iter().position(|x| x == a).unwrap() < k.iter().position(|x| x == b).unwrap()
    };
    assert!(after(&claude, "assistant", "content_block_stop"));
    assert!(after(&qwen, "content_block_stop", "assistant"));
    // Both adapters still see one call, its result and the final text.
    let a = adapt(
        Dialect::ClaudeCode,
        &capture("claude-code-2.1.328", "partial_tool"),
    );
    let b = adapt(Dialect::QwenCode, &capture(QWEN, "partial_tool"));
    let names = |n: &Neutral| -> Vec<String> {
        n.events
            .iter()
            .filter_map(|e| match e {
                Event::ToolCall { name, .. } => Some(name.clone()),
                Event::Result { subtype, .. } => Some(subtype.clone()),
                _ => None,
            })
            .collect()
    };
    assert_eq!(names(&b), ["Bash", "success"]);
    assert_eq!(names(&a).last(), names(&b).last());
}

#[test]
fn caliban_is_said_plainly_to_have_no_control_protocol() {
    let s = scenario(
        r#"
description: a control/ scenario
client:
  profile: sdk-py
  conversation:
    - user: hi
stub:
  steps:
    - message: {content: [{text: "Hello!"}]}
expect:
  claude-code:
    frames: [{type: result}]
"#,
    );
    let a = trial(
        "claude-code",
        vec![
            json!({"type": "result", "subtype": "success", "is_error": false, "result": "Hello!"}),
        ],
        0,
        "",
    );
    // However caliban's trial ended (here: a usage error), the reason is the protocol.
    let b = trial("caliban", vec![], 64, "[caliban] input parse error\n");
    let (sp, unmapped) =
        compare::compare_trials(&s, (&a, Dialect::ClaudeCode), (&b, Dialect::Caliban));
    assert_eq!(sp.no_control_protocol, ["caliban"]);
    assert!(sp.cannot_run_as_written.is_empty());
    let why = sp.not_compared.clone().unwrap();
    assert!(
        why.starts_with("caliban cannot run control/ scenarios: this scenario scripts an SDK client (`client:`)"),
        "{why}"
    );
    let side = |name: &str, dialect: &str| TargetSide {
        name: name.into(),
        version: "1".into(),
        dialect: dialect.parse().ok(),
    };
    let parity = Parity::new(
        "streamcheck compare".into(),
        side("claude-code", "claude-code"),
        side("caliban", "caliban"),
        vec![(sp, unmapped)],
    );
    assert_eq!(parity.counts.no_control_protocol, 1);
    assert_eq!(parity.counts.not_compared, 1);
    let plain = "caliban cannot run control/ scenarios (no control protocol): 1 scenario(s) with a `client:` section not compared.";
    assert!(compare::render_md(&parity).contains(plain));
    assert!(compare::summary(&parity).contains(plain));
    assert!(
        compare::render_md(&parity).contains("Not compared: caliban cannot run control/ scenarios")
    );

    // The same scenario between two Claude Codes is compared as usual.
    let (sp, _) = compare::compare_trials(&s, (&a, Dialect::ClaudeCode), (&a, Dialect::ClaudeCode));
    assert!(sp.no_control_protocol.is_empty());
    assert!(sp.not_compared.is_none());
}

// ---------------------------------------------------------------------------
// Field-level parity: two saved runs, one target each
// ---------------------------------------------------------------------------

/// `compare-runs/`: a reference run and a re-implementation's of the same two scenarios.
/// In `basics/one` the re-implementation leaves out `permissionMode` (presence), prints
/// `num_turns` as a string (type) and another `stop_reason` (value); its other session id,
/// duration and sandbox folder are no difference. `basics/two` is the same on both.
#[test]
fn saved_runs_name_each_key_path_that_differs_in_presence_type_or_value() {
    let root = fixture_root("compare-runs");
    let p = compare::saved_runs(
        &root.join("reference"),
        &root.join("mycli"),
        &[],
        String::new(),
    )
    .unwrap();
    let one = p
        .scenarios
        .iter()
        .find(|s| s.scenario == "basics/one")
        .unwrap();
    let lines: Vec<String> = one
        .fields
        .iter()
        .map(|f| f.sentence("Claude Code", "mycli"))
        .collect();
    assert_eq!(
        lines,
        [
            "`num_turns` in result/success is number in Claude Code, string in mycli",
            "`stop_reason` in result/success: Claude Code printed \"end_turn\", mycli printed \"max_tokens\"",
            "Claude Code printed `permissionMode: \"default\"` in system/init, mycli printed nothing",
        ]
    );
    let two = p
        .scenarios
        .iter()
        .find(|s| s.scenario == "basics/two")
        .unwrap();
    assert!(two.fields.is_empty(), "{:?}", two.fields);
    assert_eq!(
        (
            p.counts.compared,
            p.counts.differ,
            p.counts.differ_in_fields
        ),
        (2, 1, 1)
    );
    let rows: Vec<(&str, &str, &str)> = (p.fields_by_path.iter())
        .map(|r| (r.kind.as_str(), r.path.as_str(), r.differs.as_str()))
        .collect();
    assert_eq!(
        rows,
        [
            ("result/success", "num_turns", "type"),
            ("result/success", "stop_reason", "value"),
            ("system/init", "permissionMode", "only claude-code"),
        ]
    );
}

/// Today's neutral comparison alone said "0 differ in substance" for a re-implementation
/// that differs from Claude Code in its fields; the count names them now, and the gate
/// (`compare --runs`) exits 1 on them and 0 only when nothing differs.
#[test]
fn compare_runs_says_0_differ_only_when_nothing_differs() {
    let root = fixture_root("compare-runs");
    let out = tempfile::tempdir().unwrap();
    let table = out.path().join("t.md");
    let run = |filter: &str| {
        streamcheck()
            .current_dir(out.path())
            .arg("compare")
            .arg("--runs")
            .arg(root.join("reference"))
            .arg(root.join("mycli"))
            .args(["--filter", filter, "--report-dir"])
            .arg(out.path())
            .arg("--table")
            .arg(&table)
            .output()
            .unwrap()
    };
    let differs = run("basics/");
    let stdout = text(&differs.stdout);
    assert_eq!(
        differs.status.code(),
        Some(1),
        "{stdout}{}",
        text(&differs.stderr)
    );
    assert!(
        stdout.contains("1 differ (0 in substance, 1 in key paths)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("differs     basics/one: 3 key path(s)"),
        "{stdout}"
    );
    let md = std::fs::read_to_string(&table).unwrap();
    assert!(
        md.contains("| `system/init` | `permissionMode` | only claude-code | 1 (basics/one) |"),
        "{md}"
    );
    let html = std::fs::read_to_string(out.path().join("index.html")).unwrap();
    assert!(html.contains("Key paths that differ (3)"), "{html}");
    assert!(
        html.contains("<code>permissionMode</code>: presence only in claude-code"),
        "{html}"
    );
    let same = run("basics/two");
    let stdout = text(&same.stdout);
    assert_eq!(
        same.status.code(),
        Some(0),
        "{stdout}{}",
        text(&same.stderr)
    );
    assert!(
        stdout.contains("0 differ (0 in substance, 0 in key paths)"),
        "{stdout}"
    );
}

/// docs/parity/caliban.md is what its JSON (written by the same `compare --runs ... --table`)
/// renders: regenerated from the committed rows, no CLI runs. The rows themselves come from
/// a catalogue run of each side; the README's "Parity with Claude Code" says how to remake them.
#[test]
fn the_committed_parity_tables_are_what_their_rows_render() {
    let docs = common::crate_dir().join("../docs/parity");
    let mut seen = 0;
    for entry in std::fs::read_dir(&docs).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            let table: compare::ParityTable =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            let md = path.with_extension("md");
            assert_eq!(
                std::fs::read_to_string(&md).unwrap(),
                table.render_md(),
                "{} is stale: run `streamcheck compare --runs A B --table {}`",
                md.display(),
                md.display()
            );
            assert!(!table.rows.is_empty() && !table.compared.is_empty());
            seen += 1;
        }
    }
    assert!(seen >= 1, "no table in {}", docs.display());
}
