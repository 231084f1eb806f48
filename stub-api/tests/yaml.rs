//! The script format: shape rules, error messages with locations, round trips.

use stub_api::{Block, BuiltinRule, Faults, Match, Response, Rule, Script, Times};

fn err(yaml: &str) -> String {
    match Script::from_yaml(yaml) {
        Ok(s) => panic!("expected an error, parsed {s:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_step_needs_exactly_one_response() {
    let both = err("steps:\n  - message: {content: []}\n    http_error: {status: 529}\n");
    assert_eq!(
        both,
        "steps[0]: a step needs exactly one of `message`, `http_error`; found both at line 2 column 5"
    );
    let neither = err("steps:\n  - message: {content: []}\n  - times: 2\n");
    assert!(
        neither.contains("a step needs exactly one of `message`, `http_error`; found neither"),
        "{neither}"
    );
    assert!(
        neither.starts_with("steps[1]: ") && neither.contains("line 3 column 5"),
        "{neither}"
    );
    let rule = err("background:\n  - name: x\n    match: {}\n");
    assert!(
        rule.contains(
            "a background rule needs exactly one of `message`, `http_error`; found neither"
        ),
        "{rule}"
    );
}

#[test]
fn unknown_keys_are_rejected_with_a_location() {
    let e = err("steps:\n  - message: {content: [{text: hi}]}\n  - match: {modle_contains: x}\n    message: {}\n");
    assert!(
        e.contains("steps[1].match: unknown field `modle_contains`"),
        "{e}"
    );
    assert!(e.contains("line 3 column 13"), "{e}");
    let e = err("steps:\n  - message:\n      content: []\n      stop: end_turn\n");
    assert!(
        e.contains("unknown field `stop`") && e.contains("line 4"),
        "{e}"
    );
    let e = err("stepz: []\n");
    assert!(e.contains("unknown field `stepz`"), "{e}");
    let e = err("steps:\n  - message: {content: [{text: a}]}\n    faults: {chunk_size: 3}\n");
    assert!(
        e.contains("unknown field `chunk_size`") && e.contains("line 3"),
        "{e}"
    );
}

#[test]
fn block_shape_rules() {
    let e = err("steps:\n  - message:\n      content:\n        - text: a\n          tool_use: {id: a, name: b}\n");
    assert!(e.contains("exactly one of `text`, `thinking`, `redacted_thinking`, `tool_use`, `server_tool_use`, `web_search_tool_result`; found text, tool_use"), "{e}");
    assert!(e.contains("line 4"), "{e}");
    let e = err("steps:\n  - message: {content: [{text: a, signature: s}]}\n");
    assert!(
        e.contains("`signature` only goes with a `thinking` block"),
        "{e}"
    );
    let e = err("steps:\n  - message: {content: [{}]}\n");
    assert!(e.contains("found none"), "{e}");
}

#[test]
fn value_rules() {
    assert!(err("steps:\n  - times: 0\n    message: {}\n").contains("`times` must be at least 1"));
    assert!(err("steps:\n  - times: always\n    message: {}\n").contains("`forever`"));
    assert!(err("steps:\n  - message: {stop_reason: done}\n").contains("unknown variant `done`"));
    assert!(err("steps:\n  - http_error: {status: 42}\n").contains("200..=599"));
    assert!(
        err("steps:\n  - http_error: {status: 500, headers: {\"bad header\": x}}\n")
            .contains("invalid header name")
    );
    assert!(
        err("steps:\n  - http_error: {status: 500}\n    faults: {chunk_bytes: 3}\n")
            .contains("`faults` only apply to a `message` response")
    );
    let e = err(
        "steps:\n  - message: {content: [{text: hi}]}\n    faults: {disconnect_after_events: 99}\n",
    );
    assert!(
        e.contains("faults.disconnect_after_events is 99 but this message streams only 7 events"),
        "{e}"
    );
    assert!(err("steps:\n  - message: {}\n    faults: {split_deltas: 0}\n").contains("at least 1"));
    assert!(err("builtin_rules: [nope]\n").contains("unknown variant `nope`"));
}

#[test]
fn the_documented_example_parses() {
    let yaml = r#"
steps:
  - match:
      model_contains: opus
      last_user_text_contains: "second"
      tool_results: [toolu_p1, toolu_p2]
      tool_result_contains: "hello"
      message_count: 3
      has_tools: false
      output_format_property: title
      system_contains: "..."
    times: 3
    message:
      content:
        - text: "Hello!"
        - thinking: "Let me think"
          signature: "sigABC"
        - redacted_thinking: "opaque-data"
        - tool_use: {id: toolu_001, name: Bash, input: {command: "echo hi"}}
      stop_reason: end_turn
      stop_sequence: null
      model: null
      id: null
      usage: {input_tokens: 5, output_tokens: 7, cache_creation_input_tokens: 0, cache_read_input_tokens: 0}
    faults:
      delay_before_headers_ms: 0
      delay_between_events_ms: 0
      split_deltas: 5
      chunk_bytes: 7
      disconnect_after_events: 4
      stream_error: {after_events: 1, type: overloaded_error, message: "Overloaded"}
      malformed_data_after_events: 2
  - times: forever
    http_error:
      status: 529
      type: overloaded_error
      message: "Overloaded"
      headers: {retry-after: "0", x-should-retry: "true", request-id: "req_stub_1"}
background:
  - name: title
    match: {output_format_property: title, has_tools: false}
    message: {content: [{text: '{"title": "Test session"}'}]}
builtin_rules: [claude-code-session-title]
"#;
    let s = Script::from_yaml(yaml).unwrap();
    assert_eq!(s.steps_len(), 2);
    let step = &s.steps[0];
    assert_eq!(step.times, Times::Count(3));
    assert_eq!(step.matcher.message_count, Some(3));
    let Response::Message(m) = &step.response else {
        panic!()
    };
    assert_eq!(m.content.len(), 4);
    assert_eq!(
        m.content[1],
        Block::Thinking {
            thinking: "Let me think".into(),
            signature: "sigABC".into()
        }
    );
    assert_eq!(step.faults.as_ref().unwrap().chunk_bytes, Some(7));
    assert_eq!(s.steps[1].times, Times::Forever);
    assert_eq!(s.background[0].times, Times::Forever);
    assert_eq!(s.builtin_rules, [BuiltinRule::ClaudeCodeSessionTitle]);
    assert_eq!(s.all_rules().len(), 2);

    // Serializing gives YAML that parses back to the same script.
    let again = Script::from_yaml(&serde_yaml::to_string(&s).unwrap()).unwrap();
    assert_eq!(again, s);
}

#[test]
fn scenario_files_use_their_stub_key() {
    let scenario = r#"
name: parallel-bash-tools
prompt: "run both commands"
expect: {anything: [goes, here]}
stub:
  steps:
    - message: {content: [{text: hi}]}
"#;
    let s = Script::from_yaml_or_scenario(scenario).unwrap();
    assert_eq!(s.steps_len(), 1);
    let bare = Script::from_yaml_or_scenario("steps: []").unwrap();
    assert_eq!(bare, Script::default());
    let e = Script::from_yaml_or_scenario("name: x\nstub:\n  steps:\n    - bogus: 1\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("stub.steps[0]: unknown field `bogus`") && e.contains("line 4"),
        "{e}"
    );
}

#[test]
fn builtin_title_rule_shape() {
    let rule = Rule::claude_code_session_title();
    assert_eq!(rule.name, "claude-code-session-title");
    assert_eq!(
        rule.matcher,
        Match {
            has_tools: Some(false),
            output_format_property: Some("title".into()),
            ..Match::default()
        }
    );
    assert_eq!(rule.times, Times::Forever);
}

#[test]
fn json_schema_describes_the_wire_form() {
    let schema = serde_json::to_value(Script::json_schema()).unwrap();
    let step = &schema["definitions"]["Step"];
    for key in ["match", "times", "message", "http_error", "faults"] {
        assert!(
            step["properties"].get(key).is_some(),
            "Step schema lacks {key}: {step}"
        );
    }
    assert_eq!(step["additionalProperties"], false);
    let block = &schema["definitions"]["Block"]["properties"];
    assert!(block.get("tool_use").is_some() && block.get("signature").is_some());
    let _ = Faults::default();
}
