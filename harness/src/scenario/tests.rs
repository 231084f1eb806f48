//! Unit tests of `scenario`.
use super::*;
use crate::matcher::Expected;

fn parse(text: &str) -> Result<Scenario, ScenarioError> {
    Scenario::parse(
        text,
        Path::new("scenarios/t/x.yaml"),
        Path::new("scenarios"),
    )
}

const MINIMAL: &str = r#"
description: a text reply
prompt: say hello
stub:
  steps:
    - message: {content: [{text: "Hello!"}]}
expect:
  claude-code:
    frames:
      - {type: system, subtype: init}
      - any_order:
          - {type: a}
          - [{type: b}, {type: c}]
      - {type: result, result: "Hello!"}
    exit_code: 0
"#;

#[test]
fn a_bad_regex_is_a_file_error_with_its_line() {
    let text = "prompt: hi\nexpect:\n  claude-code:\n    stderr: {regex: \"(\"}\n";
    let e = parse(text).expect_err("a bad regex must not load");
    assert_eq!(e.line, Some(4), "{e}");
    assert!(e.kind.to_string().contains("bad regex"), "{e}");
}

#[test]
fn minimal_scenario_parses_with_id_from_path() {
    let s = parse(MINIMAL).unwrap();
    assert_eq!(s.id, "t/x");
    let exp = &s.file.expect["claude-code"];
    assert_eq!(exp.frames.len(), 3);
    assert!(
        matches!(&exp.frames[1].0, Expected::AnyOrder(runs) if runs.len() == 2 && runs[1].len() == 2)
    );
    assert_eq!(s.turns(exp), 1);
}

#[test]
fn unknown_key_names_line_and_column() {
    let text = MINIMAL.replace("    exit_code: 0", "    exit_cod: 0");
    let e = parse(&text).unwrap_err();
    assert_eq!(e.line, Some(15), "{e}");
    assert!(
        e.kind.to_string().contains("unknown field `exit_cod`"),
        "{e}"
    );
    assert!(e.to_string().starts_with("scenarios/t/x.yaml:15:"), "{e}");
}

#[test]
fn bad_placeholder_is_reported_with_its_line() {
    let text = MINIMAL.replace("result: \"Hello!\"", "result: \"$uid\"");
    let e = parse(&text).unwrap_err();
    assert!(
        e.kind.to_string().contains("unknown placeholder `$uid`"),
        "{e}"
    );
    assert!(e.line.is_some(), "{e}");
}

#[test]
fn files_cannot_escape_the_workspace() {
    let text = MINIMAL.replace(
        "prompt: say hello",
        "prompt: x\nfiles: {\"../../etc/passwd\": owned}",
    );
    let e = parse(&text).unwrap_err();
    assert!(
        e.kind
            .to_string()
            .contains("`..` would leave the working directory"),
        "{e}"
    );
    let text = MINIMAL.replace(
        "prompt: say hello",
        "prompt: x\nfiles: {\"/etc/passwd\": owned}",
    );
    assert!(parse(&text)
        .unwrap_err()
        .kind
        .to_string()
        .contains("relative"));
}

#[test]
fn stdin_lines_raw_and_frames_and_turns() {
    let text = MINIMAL.replace(
            "prompt: say hello",
            "stdin:\n  - {type: user, message: {role: user, content: a}}\n  - {raw: \"not json\"}\n  - {type: user, message: {role: user, content: b}}",
        );
    let s = parse(&text).unwrap();
    let lines = s.file.stdin.as_ref().unwrap();
    assert_eq!(lines[1].to_line().as_deref(), Some("not json"));
    assert!(lines[0]
        .to_line()
        .unwrap()
        .starts_with("{\"type\":\"user\""));
    assert_eq!(s.turns(&s.file.expect["claude-code"]), 2);
}

#[test]
fn an_expectation_is_required() {
    let e = parse("description: x\nexpect: {}\n").unwrap_err();
    assert!(e.kind.to_string().contains("names no target"), "{e}");
}

#[test]
fn text_expectations() {
    assert!(TextExpect::Equals("hi".into()).check("hi\n").is_ok());
    let e = TextExpect::Equals("hi".into()).check("ho").unwrap_err();
    assert_eq!(e.to_string(), r#"expected "hi", found "ho""#);
    let rules = TextExpect::Rules(TextRules {
        contains: vec!["Error".into()],
        ..Default::default()
    });
    assert!(rules.check("Error parsing").is_ok());
    let e = rules.check("fine").unwrap_err();
    assert_eq!(
        e.to_string(),
        r#"expected it to contain "Error", found "fine""#
    );
    let empty = TextExpect::Rules(TextRules {
        empty: Some(true),
        ..Default::default()
    });
    assert!(empty.check("  \n").is_ok());
    let e = empty.check("x").unwrap_err();
    assert_eq!(e.to_string(), r#"expected nothing, found "x""#);
}

const TWO_RUNS: &str = r#"
description: resume
runs:
  - args: [--session-id, 5e55a1d0-0000-4000-8000-000000000001]
    prompt: one
    stub: {steps: [{message: {content: [{text: "a"}]}}]}
  - args: [--resume, 5e55a1d0-0000-4000-8000-000000000001]
    prompt: two
    stub: {steps: []}
expect:
  claude-code:
    runs:
      - {exit_code: 0}
      - {exit_code: 1}
  claude-code@2.1.74:
    runs:
      - {exit_code: 0}
      - {exit_code: 0}
"#;

#[test]
fn runs_parse_in_order_and_a_version_block_replaces_them() {
    let s = parse(TWO_RUNS).unwrap();
    assert_eq!(s.file.runs.len(), 2);
    assert_eq!(s.file.runs[1].args[0], "--resume");
    let general = &s.file.expect["claude-code"];
    assert_eq!(general.runs[1].exit_code, Some(1));
    let old = crate::expectation::for_version(&s.file.expect, "claude-code", "2.1.74").unwrap();
    assert_eq!(old.runs[1].exit_code, Some(0));
}

#[test]
fn an_expectation_needs_one_block_per_run() {
    let one = TWO_RUNS.replace("      - {exit_code: 1}\n", "");
    let e = parse(&one).unwrap_err().to_string();
    assert!(e.contains("1 expectations for 2 runs"), "{e}");
}

#[test]
fn a_ref_needs_a_capture_of_its_target_or_a_named_client_request() {
    let with = |client: &str, frames: &str| {
        let client = match client {
            "" => String::new(),
            c => format!("client: {c}\n"),
        };
        parse(&format!(
            "description: d\n{client}expect:\n  claude-code:\n    frames: {frames}\n  claude-code@>=2:\n    frames_patch: {{0: {{$merge: {{id: {{$ref: late}}}}}}}}\n  caliban:\n    frames: [{{id: {{$capture: late}}}}]\n"
        ))
    };
    let err = with("", "[{id: {$ref: nope}}]").unwrap_err();
    assert!(
        err.kind
            .to_string()
            .contains("`{$ref: nope}` refers to nothing"),
        "{err}"
    );
    assert_eq!(err.line, Some(4), "{err}");
    // `late` is captured by caliban's expectation only: not this target's.
    let err = with("", "[{id: {$capture: x}}]").unwrap_err();
    assert!(
        err.kind.to_string().starts_with("expect.claude-code@>=2:"),
        "{err}"
    );
    with("", "[{id: {$capture: late}}]").unwrap();
    let named = "{conversation: [{request: {subtype: interrupt}, as: late}]}";
    with(named, "[{id: {$ref: late}}]").unwrap();
    let profile = "{profile: sdk-ts}";
    with(
        profile,
        "[{id: {$ref: initialize}}, {id: {$capture: late}}]",
    )
    .unwrap();
    let none = "{profile: sdk-ts, initialize: false}";
    let err = with(none, "[{id: {$ref: initialize}}, {id: {$capture: late}}]").unwrap_err();
    assert!(err.kind.to_string().contains("initialize"), "{err}");
}

fn with_block(block: &str) -> String {
    format!("{MINIMAL}  claude-code@<1.0.0:\n{block}\n")
}

#[test]
fn a_plain_string_skip_is_refused_naming_the_file_and_the_reasons_to_write() {
    let e = parse(&with_block("    skip: \"no such flag\"")).unwrap_err();
    assert_eq!(e.path, Path::new("scenarios/t/x.yaml"));
    assert!(e.line.is_some(), "{e}");
    for form in [
        "not free text",
        "flag_refused",
        "tool_absent",
        "frame_absent",
    ] {
        assert!(e.kind.to_string().contains(form), "{form}: {e}");
    }
}

#[test]
fn a_skip_takes_exactly_one_reason_and_says_why() {
    let two = parse(&with_block(
        "    skip: {flag_refused: --x, tool_absent: T, because: both}",
    ))
    .unwrap_err();
    assert!(two.kind.to_string().contains("exactly one reason"), "{two}");
    let no_because = parse(&with_block("    skip: {tool_absent: T}")).unwrap_err();
    assert!(
        no_because.kind.to_string().contains("needs `because`"),
        "{no_because}"
    );
    let unknown = parse(&with_block("    skip: {os: windows, because: x}")).unwrap_err();
    assert!(
        unknown
            .kind
            .to_string()
            .contains("`skip.os` is not a skip reason"),
        "{unknown}"
    );
    let ok = parse(&with_block(
        "    skip: {flag_refused: \"--permission-mode manual\", because: an older release}",
    ))
    .unwrap();
    let skip = ok.file.expect["claude-code@<1.0.0"].skip.clone().unwrap();
    assert!(matches!(skip.reason, SkipReason::FlagRefused(f) if f == "--permission-mode manual"));
}

#[test]
fn a_pinned_hang_has_no_exit_code() {
    let e = parse(&with_block("    hangs: after_result")).unwrap_err();
    assert!(
        e.kind.to_string().contains("`hangs` and `exit_code`"),
        "{e}"
    );
    let ok = parse(&with_block("    hangs: after_result\n    exit_code: null")).unwrap();
    assert_eq!(
        ok.file.expect["claude-code@<1.0.0"].hangs,
        Some(Hang::AfterResult)
    );
}
