use super::*;
use crate::matcher::{self, FrameRules};
use serde_json::json;

const RULES: &str = r#"
rules:
  - name: api-retry-anywhere
    versions: ">=2.1.100"
    note: "2.1.100: system/api_retry while a request is retried"
    anywhere: {type: system, subtype: api_retry}
    shape: {type: system, subtype: api_retry, attempt: $number}
  - name: result-fast-mode
    versions: ">=2.1.100, <2.1.200"
    note: "2.1.100: every result carries fast_mode_state; gone again in 2.1.200"
    every: {type: result}
    shape: {fast_mode_state: $string}
  - name: user-id-json
    versions: ">=2.1.150"
    note: "2.1.150: metadata.user_id is a JSON string"
    request_keys: {metadata: {user_id: {$regex: "^\\{"}}}
"#;

fn frames(values: &[serde_json::Value]) -> Vec<Frame> {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| Frame {
            index: i,
            line: i + 1,
            at_ms: 0,
            value: v.clone(),
        })
        .collect()
}

fn expect(yaml: &str) -> TargetExpect {
    serde_yaml::from_str(yaml).unwrap()
}

fn matches(expect: &TargetExpect, printed: &[Frame]) -> bool {
    let ignore: Vec<_> = expect.ignore.iter().map(|p| p.0.clone()).collect();
    let expected: Vec<_> = expect.frames.iter().map(|e| e.0.clone()).collect();
    let rules = FrameRules {
        expected: &expected,
        ignore: &ignore,
        absent: &[],
        mode: expect.mode,
    };
    let mut caps = Captures::new();
    matcher::match_frames(&rules, printed, &Vars::default(), &mut caps).is_empty()
}

const PLAIN: &str = "frames: [{type: system, subtype: init}, {type: result, subtype: success}]";

fn run_with_retry(attempt: serde_json::Value) -> Vec<Frame> {
    frames(&[
        json!({"type": "system", "subtype": "init"}),
        json!({"type": "system", "subtype": "api_retry", "attempt": attempt}),
        json!({"type": "result", "subtype": "success", "fast_mode_state": "off"}),
    ])
}

#[test]
fn a_frame_printed_anywhere_passes_only_in_the_rules_range() {
    let rules = Rules::parse(RULES).unwrap();
    let printed = run_with_retry(json!(1));
    let (old, applied) = rules.apply(&expect(PLAIN), "2.1.99");
    assert!(applied.is_empty());
    assert!(
        !matches(&old, &printed),
        "before 2.1.100 the frame is a divergence"
    );
    let (new, applied) = rules.apply(&expect(PLAIN), "2.1.120");
    let names: Vec<&str> = applied.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["api-retry-anywhere", "result-fast-mode"]);
    assert!(matches(&new, &printed));
    for a in &applied {
        let (broken, used) = check_shapes(a, &printed, &Vars::default());
        assert!(broken.is_empty() && used, "{} held", a.name);
    }
}

#[test]
fn a_frame_let_through_must_still_have_the_rules_shape() {
    let rules = Rules::parse(RULES).unwrap();
    let printed = run_with_retry(json!("one"));
    let (new, applied) = rules.apply(&expect(PLAIN), "2.1.120");
    assert!(matches(&new, &printed), "the sequence matches");
    let (broken, _) = check_shapes(&applied[0], &printed, &Vars::default());
    assert_eq!(broken.len(), 1);
    assert_eq!(broken[0].kind, Kind::Invariant);
    assert!(broken[0].message.contains("api-retry-anywhere"));
    assert_eq!(broken[0].frame, Some(1));
}

#[test]
fn keys_added_to_every_frame_of_a_kind_are_checked_in_range_and_can_end() {
    let rules = Rules::parse(RULES).unwrap();
    let printed = frames(&[json!({"type": "result", "subtype": "success"})]);
    let (_, applied) = rules.apply(&expect(PLAIN), "2.1.150");
    let every = applied
        .iter()
        .find(|a| a.name == "result-fast-mode")
        .unwrap();
    let (broken, used) = check_shapes(every, &printed, &Vars::default());
    assert!(used);
    assert_eq!(
        broken.len(),
        1,
        "a result without fast_mode_state breaks it"
    );
    let (_, applied) = rules.apply(&expect(PLAIN), "2.1.200");
    assert!(applied.iter().all(|a| a.name != "result-fast-mode"));
}

#[test]
fn a_scenario_naming_the_frame_kind_keeps_its_own_pins() {
    let rules = Rules::parse(RULES).unwrap();
    let own = "frames: [{type: system, subtype: init}, {any_order: [[{type: system, subtype: api_retry, attempt: 1}]]}, {type: result}]";
    let (new, _) = rules.apply(&expect(own), "2.1.120");
    assert!(new.ignore.is_empty());
    let absent = "frames: [{type: result}]\nabsent: [{type: system, subtype: api_retry}]";
    let (new, _) = rules.apply(&expect(absent), "2.1.120");
    assert!(new.ignore.is_empty());
}

#[test]
fn a_scenario_that_ignores_the_kind_itself_still_gets_the_rules_shape_checked() {
    let rules = Rules::parse(RULES).unwrap();
    let ignoring = "frames: [{type: system, subtype: init}, {type: result}]\nignore: [{type: system, subtype: api_retry}]";
    let (new, applied) = rules.apply(&expect(ignoring), "2.1.120");
    assert_eq!(
        new.ignore.len(),
        1,
        "the scenario's own ignore, not the rule's"
    );
    let anywhere = applied
        .iter()
        .find(|a| a.name == "api-retry-anywhere")
        .expect("the rule applies: its shape is checked");
    let (broken, used) = check_shapes(anywhere, &run_with_retry(json!("one")), &Vars::default());
    assert!(used);
    assert_eq!(broken.len(), 1, "attempt is not a number");
}

#[test]
fn a_rule_lets_through_only_the_frames_its_pattern_names() {
    let notice = r#"
rules:
  - name: billing-notice
    versions: ">=2"
    note: "2.0.0: one notice"
    anywhere: {type: system, subtype: informational, content: {$regex: "billing"}}
    shape: {type: system, subtype: informational, content: $string}
"#;
    let rules = Rules::parse(notice).unwrap();
    let (new, _) = rules.apply(&expect(PLAIN), "2.1.0");
    let with = |content: &str| {
        frames(&[
            json!({"type": "system", "subtype": "init"}),
            json!({"type": "system", "subtype": "informational", "content": content}),
            json!({"type": "result", "subtype": "success"}),
        ])
    };
    assert!(matches(&new, &with("auto mode billing changed")));
    assert!(
        !matches(&new, &with("something else entirely")),
        "another informational frame is not let through"
    );
}

#[test]
fn a_request_shape_change_replaces_the_path_a_scenario_pins() {
    let rules = Rules::parse(RULES).unwrap();
    let pinned = r#"
frames: []
requests:
  bodies: {0: {metadata: {user_id: {$regex: "^user_"}}, stream: true}}
  all: [{stream: true}]
"#;
    let body = json!({"metadata": {"user_id": "{\"device\":1}"}, "stream": true});
    let check = |e: &TargetExpect| {
        let p = &e.requests.as_ref().unwrap().bodies[&0].0;
        p.is_match(&body, &Vars::default(), &Captures::new())
    };
    let (old, _) = rules.apply(&expect(pinned), "2.1.149");
    assert!(!check(&old));
    let (new, applied) = rules.apply(&expect(pinned), "2.1.150");
    assert!(check(&new));
    let replaced = applied.iter().find(|a| a.name == "user-id-json").unwrap();
    assert_eq!(replaced.replaced, 1, "`all` does not name the path");
    let (_, applied) = rules.apply(&expect(PLAIN), "2.1.150");
    assert!(applied.iter().all(|a| a.name != "user-id-json"));
}

#[test]
fn runs_of_a_multi_run_scenario_get_the_rules_too() {
    let rules = Rules::parse(RULES).unwrap();
    let multi = format!("runs: [{{{PLAIN}}}, {{{PLAIN}}}]");
    let (new, _) = rules.apply(&expect(&multi), "2.1.120");
    assert!(new
        .runs
        .iter()
        .all(|r| r.ignore.len() == 1 && r.rules.len() == 2));
}

#[test]
fn bad_rules_are_refused_with_their_name() {
    let bad =
        |body: &str| (Rules::parse(&format!("rules:\n  - {body}\n")).unwrap_err()).to_string();
    let e = bad(
        "{name: r, versions: '>=2', note: n, anywhere: {type: x}, every: {type: y}, shape: {}}",
    );
    assert!(e.contains("rule `r`") && e.contains("exactly one"), "{e}");
    assert!(bad("{name: r, versions: '>=2', note: '', anywhere: {type: x}}").contains("note"));
    assert!(bad("{name: r, versions: '>=2', note: n, every: {type: x}}").contains("shape"));
    assert!(bad("{name: r, versions: '>=2', note: n, anywhere: {type: x}}").contains("shape"));
    assert!(
        bad("{name: r, versions: 'soon', note: n, anywhere: {}, shape: {}}").contains("version")
    );
    assert!(
        bad("{name: r, versions: '>=2', note: n, anywhere: {a: $nope}, shape: {}}")
            .contains("$nope")
    );
    let twice = "rules:\n  - {name: r, versions: '>=2', note: n, anywhere: {}, shape: {}}\n  - {name: r, versions: '>=3', note: n, anywhere: {}, shape: {}}\n";
    assert!(matches!(
        Rules::parse(twice).unwrap_err(),
        InvalidRules::Twice { name } if name == "r"
    ));
}

#[test]
fn the_projects_rule_files_load() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    for dialect in ["claude-code", "caliban", "qwen-code"] {
        Rules::load(root, dialect).unwrap();
    }
}

const OLDER: &str = r#"
rules:
  - name: no-terminal-reason
    versions: "<2.1.88"
    note: "before 2.1.88 a result carries no terminal_reason"
    every: {type: result}
    frame_keys: {terminal_reason: $absent}
  - name: no-api-retry
    versions: "<2.1.77"
    note: "before 2.1.77 no system/api_retry frame"
    missing: {type: system, subtype: api_retry}
"#;

const RETRIED: &str = r#"
frames:
  - {type: system, subtype: init}
  - {type: system, subtype: api_retry, attempt: 1}
  - {any_order: [[{type: system, subtype: api_retry, attempt: 2}, {type: assistant}], {type: system, subtype: status}]}
  - {type: result, subtype: success, terminal_reason: completed}
"#;

#[test]
fn a_key_a_later_release_added_is_absent_before_it_where_a_scenario_pins_it() {
    let rules = Rules::parse(OLDER).unwrap();
    let old = frames(&[
        json!({"type": "system", "subtype": "init"}),
        json!({"type": "result", "subtype": "success"}),
    ]);
    let pinned = "frames: [{type: system, subtype: init}, {type: result, subtype: success, terminal_reason: completed}]";
    assert!(!matches(&expect(pinned), &old));
    let (before, applied) = rules.apply(&expect(pinned), "2.1.87");
    assert!(matches(&before, &old));
    assert_eq!(applied.len(), 1);
    assert_eq!(
        (applied[0].name.as_str(), applied[0].replaced),
        ("no-terminal-reason", 1)
    );
    let (_, applied) = rules.apply(&expect(PLAIN), "2.1.87");
    assert!(
        applied.is_empty(),
        "a scenario not pinning the key is left alone"
    );
    let (after, applied) = rules.apply(&expect(pinned), "2.1.88");
    assert!(applied.is_empty() && !matches(&after, &old));
}

#[test]
fn frames_a_later_release_added_are_left_out_and_must_be_absent_before_it() {
    let rules = Rules::parse(OLDER).unwrap();
    let (before, applied) = rules.apply(&expect(RETRIED), "2.1.76");
    let missing = applied.iter().find(|a| a.name == "no-api-retry").unwrap();
    assert_eq!(missing.replaced, 2);
    assert_eq!(
        before.frames.len(),
        3,
        "the plain entry goes, the group keeps its others"
    );
    let old = frames(&[
        json!({"type": "system", "subtype": "init"}),
        json!({"type": "system", "subtype": "status"}),
        json!({"type": "assistant"}),
        json!({"type": "result", "subtype": "success"}),
    ]);
    assert!(matches(&before, &old));
    assert_eq!(
        before.absent.len(),
        1,
        "an api_retry frame there is a divergence"
    );
    let (after, _) = rules.apply(&expect(RETRIED), "2.1.77");
    assert_eq!(after.frames.len(), 4);
    assert!(after.absent.is_empty());
}

#[test]
fn frame_keys_need_every() {
    let e = Rules::parse(
        "rules:\n  - {name: r, versions: '<2', note: n, missing: {type: x}, frame_keys: {a: 1}}\n",
    )
    .unwrap_err();
    assert!(
        matches!(
            &e,
            InvalidRules::Rule {
                source: RuleError::FrameKeysWithoutEvery,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn output_held_to_an_older_expectation_keeps_the_frames_its_own_release_lets_through() {
    let rules = Rules::parse(RULES).unwrap();
    let printed = run_with_retry(json!(1));
    let (held, applied) = rules.apply_printed_by(&expect(PLAIN), "2.1.99", "2.1.120");
    let names: Vec<_> = applied.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["api-retry-anywhere", "result-fast-mode"]);
    assert!(
        matches(&held, &printed),
        "2.1.120's api_retry frame is let through"
    );

    let pinned = "{frames: [], requests: {all: [{metadata: {user_id: x}}]}}";
    let (_, applied) = rules.apply_printed_by(&expect(pinned), "2.1.99", "2.1.160");
    assert!(
        applied.iter().all(|a| a.name != "user-id-json"),
        "a rule that rewrites the expectation follows the version held to, not the printer"
    );
    let (_, applied) = rules.apply(&expect(pinned), "2.1.160");
    assert!(applied.iter().any(|a| a.name == "user-id-json"));
}
