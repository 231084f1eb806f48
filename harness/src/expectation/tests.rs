use super::*;
use crate::matcher::Expected;
use crate::scenario::{Scenario, ScenarioError};
use std::path::Path;

fn parse(text: &str) -> Result<Scenario, ScenarioError> {
    Scenario::parse(
        text,
        Path::new("scenarios/t/v.yaml"),
        Path::new("scenarios"),
    )
}

const VERSIONED: &str = r#"description: versions
prompt: hi
expect:
  claude-code:
    frames:
      - {type: system, subtype: init}
      - {type: assistant}
      - {type: result, subtype: success, is_error: false}
    exit_code: 0
    requests: {count: 1, background: 0, bodies: {0: {stream: true, model: $string}}}
  claude-code@>=2.1.300:
    exit_code: 1
    frames_patch:
      2: {type: result, subtype: success, is_error: true}
    requests: {count: 2, bodies: {0: {stream: false}}}
  claude-code@<2.1.200:
    frames_patch: {1: null}
  claude-code@2.1.74:
    exit_code: 3
  caliban:
    frames: [{type: result}]
"#;

fn frame_sources(exp: &TargetExpect) -> Vec<String> {
    exp.frames
        .iter()
        .map(|f| match &f.0 {
            Expected::Frame(p) => p.source().to_string(),
            Expected::AnyOrder(_) => "any_order".into(),
        })
        .collect()
}

#[test]
fn the_innermost_matching_block_wins_and_plain_covers_the_rest() {
    let s = parse(VERSIONED).unwrap();
    let at = |v: &str| for_version(&s.file.expect, "claude-code", v).unwrap();
    assert_eq!(at("2.1.197").exit_code, Some(0), "general");
    assert_eq!(at("2.1.250").exit_code, Some(0), "between the ranges");
    assert_eq!(at("2.1.330").exit_code, Some(1));
    assert_eq!(
        at("2.1.100").exit_code,
        Some(0),
        "<2.1.200 keeps the general exit code"
    );
    assert_eq!(at("2.1.74").exit_code, Some(3), "2.1.74 refines <2.1.200");
    assert_eq!(at("not a version").exit_code, Some(0));
    let caliban = for_version(&s.file.expect, "caliban", "0.15.0").unwrap();
    assert_eq!(caliban.frames.len(), 1);
    assert!(for_version(&s.file.expect, "qwen", "1.0.0").is_none());
}

#[test]
fn a_version_block_states_only_what_differs() {
    let s = parse(VERSIONED).unwrap();
    let new = for_version(&s.file.expect, "claude-code", "2.1.330").unwrap();
    let frames = frame_sources(new);
    assert_eq!(frames.len(), 3);
    assert!(frames[0].contains("init"), "{frames:?}");
    assert!(frames[2].contains("\"is_error\":true"), "{frames:?}");
    let requests = new.requests.as_ref().unwrap();
    assert_eq!(requests.count, Some(2), "overridden");
    assert_eq!(
        requests.background,
        Some(0),
        "merged from the general block"
    );
    assert!(new.frames_patch.is_empty());
}

#[test]
fn nested_blocks_refine_the_block_that_holds_them() {
    let s = parse(VERSIONED).unwrap();
    let old = for_version(&s.file.expect, "claude-code", "2.1.74").unwrap();
    let frames = frame_sources(old);
    assert_eq!(frames.len(), 2, "frame 1 dropped by <2.1.200: {frames:?}");
    assert!(frames[1].contains("result"), "{frames:?}");
    assert_eq!(old.exit_code, Some(3));
}

#[test]
fn a_version_block_without_a_general_one_is_its_whole_expectation() {
    let text = "description: x\nprompt: hi\nexpect:\n  claude-code@>=2.1.300:\n    exit_code: 0\n";
    let s = parse(text).unwrap();
    assert!(for_version(&s.file.expect, "claude-code", "2.1.330").is_some());
    assert!(for_version(&s.file.expect, "claude-code", "2.1.197").is_none());
}

fn refusal(text: &str) -> ScenarioError {
    parse(text).expect_err("must be refused")
}

#[test]
fn overlapping_ranges_are_refused_with_file_line_and_column() {
    let text = VERSIONED.replace("claude-code@2.1.74:", "claude-code@>=2.1.150, <2.1.250:");
    let e = refusal(&text);
    assert!(e.kind.to_string().contains("overlaps"), "{e}");
    assert!(
        e.kind.to_string().contains("neither holds the other"),
        "{e}"
    );
    let shown = e.to_string();
    assert!(
        shown.starts_with("scenarios/t/v.yaml:") && e.line.is_some() && e.column == Some(3),
        "{shown}"
    );
    let line = text.lines().nth(e.line.unwrap() - 1).unwrap();
    assert!(line.contains("claude-code@"), "{line}");
}

#[test]
fn empty_duplicate_and_unreachable_ranges_are_refused() {
    let empty = VERSIONED.replace("claude-code@2.1.74:", "claude-code@>=2.1.300, <2.1.100:");
    assert!(refusal(&empty)
        .kind
        .to_string()
        .contains("names no version"));
    let twice = VERSIONED.replace("claude-code@2.1.74:", "claude-code@<=2.1.199:");
    assert!(refusal(&twice).kind.to_string().contains("same versions"));
    let hidden = VERSIONED.replace(
        "claude-code@2.1.74:",
        "claude-code@>=2.1.300, <2.2.0:\n    exit_code: 4\n  claude-code@>=2.2.0:",
    );
    let e = refusal(&hidden);
    assert!(
        e.kind
            .to_string()
            .contains("`claude-code@>=2.1.300` is unreachable"),
        "{e}"
    );
    assert_eq!(e.line, Some(11), "{e}");
}

#[test]
fn bad_keys_and_patches_are_refused() {
    let bad = VERSIONED.replace("claude-code@2.1.74:", "claude-code@latest:");
    assert!(refusal(&bad)
        .kind
        .to_string()
        .contains("not a version range"));
    let past = VERSIONED.replace("2: {type: result", "7: {type: result");
    assert!(refusal(&past).kind.to_string().contains("no frame 7"));
    let general = VERSIONED.replace(
        "    exit_code: 0\n",
        "    exit_code: 0\n    frames_patch: {0: null}\n",
    );
    assert!(refusal(&general)
        .kind
        .to_string()
        .contains("belongs in a version block"));
    let bad_pattern = VERSIONED.replace("2: {type: result", "2: {type: \"$uid\"");
    assert!(refusal(&bad_pattern).kind.to_string().contains("$uid"));
}

#[test]
fn keys_are_located_under_expect() {
    assert_eq!(locate_key(VERSIONED, "claude-code@<2.1.200"), Some((16, 3)));
    assert_eq!(locate_key(VERSIONED, "caliban"), Some((20, 3)));
    assert_eq!(locate_key(VERSIONED, "claude-code@9"), None);
}

#[test]
fn frames_can_be_merged_spliced_and_appended() {
    let text = VERSIONED.replace(
        "    frames_patch: {1: null}\n",
        "    frames_patch:\n      0: {$merge: {model: claude-sonnet-4-6}}\n      1: [{type: system, subtype: status}, {type: assistant}]\n      3: [{type: system, subtype: session_end}]\n",
    );
    let s = parse(&text).unwrap();
    let old = for_version(&s.file.expect, "claude-code", "2.1.100").unwrap();
    let frames = frame_sources(old);
    assert_eq!(frames.len(), 5, "{frames:?}");
    assert!(
        frames[0].contains("init") && frames[0].contains("claude-sonnet-4-6"),
        "{frames:?}"
    );
    assert!(
        frames[1].contains("status") && frames[2].contains("assistant"),
        "{frames:?}"
    );
    assert!(
        frames[3].contains("result") && frames[4].contains("session_end"),
        "{frames:?}"
    );
    let bad_merge = VERSIONED.replace("{1: null}", "{1: {$merge: {type: \"$uid\"}}}");
    assert!(refusal(&bad_merge).kind.to_string().contains("$uid"));
}
