//! Unit tests of `matcher`.
use super::*;
use serde_json::{json, Value};

fn frames(values: Vec<Value>) -> Vec<Frame> {
    values
        .into_iter()
        .enumerate()
        .map(|(i, value)| Frame {
            index: i,
            line: i + 1,
            at_ms: 0,
            value,
        })
        .collect()
}

fn p(v: Value) -> Pattern {
    Pattern::compile(&v).unwrap()
}

fn one(v: Value) -> Expected {
    Expected::Frame(p(v))
}

fn run(expected: &[Expected], ignore: &[Pattern], mode: Mode, fs: Vec<Value>) -> Vec<Divergence> {
    let rules = FrameRules {
        expected,
        ignore,
        absent: &[],
        mode,
    };
    match_frames(&rules, &frames(fs), &Vars::default(), &mut Captures::new())
}

fn exact(expected: &[Expected], fs: Vec<Value>) -> Vec<Divergence> {
    run(expected, &[], Mode::Exact, fs)
}

#[test]
fn exact_sequence_passes() {
    let e = [
        one(json!({"type": "system"})),
        one(json!({"type": "result"})),
    ];
    assert!(exact(
        &e,
        vec![json!({"type": "system"}), json!({"type": "result"})]
    )
    .is_empty());
}

#[test]
fn field_mismatch_names_frame_and_path() {
    let e = [
        one(json!({"type": "system"})),
        one(json!({"type": "result", "result": "Hello!"})),
    ];
    let d = exact(
        &e,
        vec![
            json!({"type": "system"}),
            json!({"type": "result", "result": "Hello?"}),
        ],
    );
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].kind, Kind::FieldMismatch);
    assert_eq!(d[0].frame, Some(1));
    assert_eq!(d[0].line, Some(2));
    assert_eq!(d[0].path.as_deref(), Some("$.result"));
    assert_eq!(d[0].expected, Some(json!("Hello!")));
    assert_eq!(d[0].actual, Some(json!("Hello?")));
}

#[test]
fn a_duplicated_frame_is_unexpected() {
    let e = [
        one(json!({"type": "assistant"})),
        one(json!({"type": "result"})),
    ];
    let d = exact(
        &e,
        vec![
            json!({"type": "assistant"}),
            json!({"type": "assistant"}),
            json!({"type": "result"}),
        ],
    );
    assert_eq!(d[0].kind, Kind::UnexpectedFrame);
    assert_eq!(d[0].frame, Some(1));
}

#[test]
fn a_skipped_frame_is_missing() {
    let e = [
        one(json!({"type": "system"})),
        one(json!({"type": "assistant"})),
        one(json!({"type": "result"})),
    ];
    let d = exact(
        &e,
        vec![json!({"type": "system"}), json!({"type": "result"})],
    );
    assert_eq!(d[0].kind, Kind::MissingFrame);
    assert_eq!(d[0].frame, Some(1));
}

#[test]
fn trailing_frames_are_unexpected_and_early_end_is_missing() {
    let e = [one(json!({"type": "result"}))];
    let d = exact(
        &e,
        vec![json!({"type": "result"}), json!({"type": "assistant"})],
    );
    assert_eq!(d[0].kind, Kind::UnexpectedFrame);
    assert_eq!(d[0].frame, Some(1));
    let d = exact(
        &[
            one(json!({"type": "system"})),
            one(json!({"type": "result"})),
        ],
        vec![json!({"type": "system"})],
    );
    assert_eq!(d[0].kind, Kind::MissingFrame);
    let d = exact(&e, vec![]);
    assert!(d[0].message.contains("printed no frame"), "{}", d[0]);
}

#[test]
fn ignored_frames_are_skipped_in_exact_mode() {
    let e = [
        one(json!({"type": "system"})),
        one(json!({"type": "result"})),
    ];
    let ignore = [p(json!({"type": "rate_limit_event"}))];
    let fs = vec![
        json!({"type": "system"}),
        json!({"type": "rate_limit_event"}),
        json!({"type": "result"}),
    ];
    assert!(run(&e, &ignore, Mode::Exact, fs.clone()).is_empty());
    assert_eq!(run(&e, &[], Mode::Exact, fs)[0].kind, Kind::UnexpectedFrame);
}

#[test]
fn subsequence_mode_allows_frames_between() {
    let e = [
        one(json!({"type": "system"})),
        one(json!({"type": "result"})),
    ];
    let fs = vec![
        json!({"type": "system"}),
        json!({"type": "x"}),
        json!({"type": "result"}),
        json!({"type": "y"}),
    ];
    assert!(run(&e, &[], Mode::Subsequence, fs).is_empty());
    let fs = vec![json!({"type": "result"}), json!({"type": "system"})];
    let d = run(&e, &[], Mode::Subsequence, fs);
    assert_eq!(d[0].kind, Kind::MissingFrame);
}

fn tool_result(id: &str) -> Value {
    json!({"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": id}]}})
}

#[test]
fn any_order_group_accepts_both_orders() {
    let group = Expected::AnyOrder(vec![vec![p(tool_result("a"))], vec![p(tool_result("b"))]]);
    let e = [group, one(json!({"type": "result"}))];
    assert!(exact(
        &e,
        vec![
            tool_result("a"),
            tool_result("b"),
            json!({"type": "result"})
        ]
    )
    .is_empty());
    assert!(exact(
        &e,
        vec![
            tool_result("b"),
            tool_result("a"),
            json!({"type": "result"})
        ]
    )
    .is_empty());
    let d = exact(
        &e,
        vec![
            tool_result("a"),
            tool_result("a"),
            json!({"type": "result"}),
        ],
    );
    assert_eq!(d[0].kind, Kind::Order, "{}", d[0]);
    let d = exact(
        &e,
        vec![
            tool_result("a"),
            tool_result("c"),
            json!({"type": "result"}),
        ],
    );
    assert_eq!(d[0].kind, Kind::UnexpectedFrame);
    assert_eq!(d[0].frame, Some(1));
}

#[test]
fn any_order_runs_may_interleave_but_keep_their_order() {
    let tu = |id: &str| json!({"type": "tool_use", "id": id});
    let tr = |id: &str| json!({"type": "tool_result", "tool_use_id": id});
    let group = Expected::AnyOrder(vec![
        vec![p(tu("a")), p(tr("a"))],
        vec![p(tu("b")), p(tr("b"))],
    ]);
    let e = [group];
    assert!(exact(&e, vec![tu("a"), tu("b"), tr("b"), tr("a")]).is_empty());
    assert!(exact(&e, vec![tu("b"), tr("b"), tu("a"), tr("a")]).is_empty());
    let d = exact(&e, vec![tr("a"), tu("a"), tu("b"), tr("b")]);
    assert_eq!(d[0].kind, Kind::Order);
}

#[test]
fn pathological_any_order_group_is_bounded() {
    // 39 interchangeable two-frame runs and one that needs `y` followed by `x`;
    // the only `y` comes last, so no interleaving exists. The state space is
    // exponential in the number of runs: the search budget bounds it.
    let mut runs: Vec<Vec<Pattern>> = (0..39)
        .map(|_| vec![p(json!({"t": "x"})), p(json!({"t": "x"}))])
        .collect();
    runs.push(vec![p(json!({"t": "y"})), p(json!({"t": "x"}))]);
    let mut fs: Vec<Value> = (0..79).map(|_| json!({"t": "x"})).collect();
    fs.push(json!({"t": "y"}));
    let d = exact(&[Expected::AnyOrder(runs)], fs);
    assert_eq!(d[0].kind, Kind::Order, "{}", d[0]);
}

#[test]
fn captures_carry_across_frames() {
    let e = [
        one(json!({"type": "system", "session_id": {"$capture": "sid"}})),
        one(json!({"type": "result", "session_id": {"$ref": "sid"}})),
    ];
    assert!(exact(
        &e,
        vec![
            json!({"type": "system", "session_id": "s1"}),
            json!({"type": "result", "session_id": "s1"})
        ]
    )
    .is_empty());
    let d = exact(
        &e,
        vec![
            json!({"type": "system", "session_id": "s1"}),
            json!({"type": "result", "session_id": "s2"}),
        ],
    );
    assert_eq!(d[0].kind, Kind::FieldMismatch);
    assert_eq!(d[0].path.as_deref(), Some("$.session_id"));
}

#[test]
fn absent_patterns_flag_every_matching_frame() {
    let rules = FrameRules {
        expected: &[],
        ignore: &[],
        absent: &[p(json!({"type": "system", "subtype": "api_retry"}))],
        mode: Mode::Subsequence,
    };
    let fs = frames(vec![
        json!({"type": "system", "subtype": "init"}),
        json!({"type": "system", "subtype": "api_retry"}),
    ]);
    let d = match_frames(&rules, &fs, &Vars::default(), &mut Captures::new());
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].kind, Kind::UnexpectedFrame);
    assert_eq!(d[0].frame, Some(1));
    let fs = frames(vec![json!({"type": "system", "subtype": "init"})]);
    assert!(match_frames(&rules, &fs, &Vars::default(), &mut Captures::new()).is_empty());
}
#[test]
fn a_capture_conflict_inside_any_order_is_a_divergence() {
    let group = Expected::AnyOrder(vec![
        vec![p(json!({"type": "user", "id": {"$capture": "t"}}))],
        vec![p(json!({"type": "user", "id": {"$capture": "t"}}))],
    ]);
    let d = run(
        &[group],
        &[],
        Mode::Exact,
        vec![
            json!({"type": "user", "id": "a"}),
            json!({"type": "user", "id": "b"}),
        ],
    );
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0].kind, Kind::FieldMismatch);
    assert!(
        d[0].message.contains("conflicts with a capture"),
        "{}",
        d[0].message
    );
}

#[test]
fn a_member_may_ref_what_another_member_captured() {
    let group = Expected::AnyOrder(vec![
        vec![p(json!({"type": "a", "id": {"$capture": "t"}}))],
        vec![p(json!({"type": "b", "id": {"$ref": "t"}}))],
    ]);
    let d = run(
        &[group],
        &[],
        Mode::Exact,
        vec![
            json!({"type": "a", "id": "x"}),
            json!({"type": "b", "id": "x"}),
        ],
    );
    assert!(d.is_empty(), "{d:?}");
}

#[test]
fn every_sequence_divergence_is_listed_after_realigning() {
    let e = [
        one(json!({"type": "system", "subtype": "init"})),
        one(json!({"type": "assistant", "text": "a"})),
        one(json!({"type": "user"})),
        one(json!({"type": "result", "result": "b"})),
    ];
    // A stray frame, then a wrong field further on: both listed.
    let d = exact(
        &e,
        vec![
            json!({"type": "system", "subtype": "init"}),
            json!({"type": "stray"}),
            json!({"type": "assistant", "text": "a"}),
            json!({"type": "user", "x": 1}),
            json!({"type": "result", "result": "WRONG"}),
        ],
    );
    let kinds: Vec<Kind> = d.iter().map(|d| d.kind).collect();
    assert_eq!(
        kinds,
        [Kind::UnexpectedFrame, Kind::FieldMismatch],
        "{d:#?}"
    );
    assert_eq!(d[0].frame, Some(1));
    assert_eq!(d[1].frame, Some(4));
    assert_eq!(d[1].path.as_deref(), Some("$.result"));
}

#[test]
fn subsequence_lists_every_missing_entry() {
    let e = [
        one(json!({"type": "a"})),
        one(json!({"type": "nope1"})),
        one(json!({"type": "b"})),
        one(json!({"type": "nope2"})),
    ];
    let d = run(
        &e,
        &[],
        Mode::Subsequence,
        vec![json!({"type": "a"}), json!({"type": "b"})],
    );
    assert_eq!(d.len(), 2, "{d:#?}");
    assert!(
        d[0].message.contains("entry 1") && d[1].message.contains("entry 3"),
        "{d:#?}"
    );
}

#[test]
fn a_completely_different_output_is_cut_at_the_cap() {
    let e: Vec<Expected> = (0..50).map(|i| one(json!({"type": "x", "n": i}))).collect();
    let fs = (0..50)
        .map(|i| json!({"type": "x", "n": i + 100}))
        .collect();
    assert_eq!(exact(&e, fs).len(), MAX_SEQUENCE_DIVERGENCES);
}

/// A subsequence entry with one wrong value names the frame of its kind that comes closest,
/// the path that differs and both values, as exact mode does.
#[test]
fn a_missing_subsequence_entry_names_its_closest_frame_and_the_path_that_differs() {
    let e = [
        one(json!({"type": "system", "subtype": "init"})),
        one(
            json!({"type": "assistant", "message": {"content": [{"type": "tool_use", "name": "Bash", "input": {"command": "echo mybot-OK"}}]}}),
        ),
    ];
    let call = |name: &str, command: &str| json!({"type": "assistant", "message": {"content": [{"type": "tool_use", "name": name, "input": {"command": command}}]}});
    let fs = vec![
        json!({"type": "system", "subtype": "init"}),
        call("Read", "x"),
        call("Bash", "echo mybot-ok"),
        json!({"type": "user", "message": {"content": [{"type": "tool_use", "name": "Bash", "input": {"command": "echo mybot-OK"}}]}}),
        json!({"type": "result"}),
    ];
    let d = run(&e, &[], Mode::Subsequence, fs);
    assert_eq!(d.len(), 1, "{d:#?}");
    let d = &d[0];
    assert_eq!(d.kind, Kind::MissingFrame);
    assert_eq!(
        (d.frame, d.line),
        (Some(2), Some(3)),
        "the Bash call, not the Read nor the user frame: {d:#?}"
    );
    assert_eq!(
        d.path.as_deref(),
        Some("$.message.content[0].input.command")
    );
    assert_eq!(d.expected, Some(json!("echo mybot-OK")));
    assert_eq!(d.actual, Some(json!("echo mybot-ok")));
    assert!(
        d.message.contains("the closest is frame 2")
            && d.message
                .contains(r#"expected "echo mybot-OK", found "echo mybot-ok""#),
        "{}",
        d.message
    );

    // Two values wrong in the one frame of that kind: both are named.
    let fs = vec![call("Read", "echo mybot-ok")];
    let d = run(&e[1..], &[], Mode::Subsequence, fs);
    assert!(
        d[0].message
            .contains("$.message.content[0].name: expected \"Bash\", found \"Read\"")
            && d[0].message.contains("$.message.content[0].input.command"),
        "{}",
        d[0].message
    );
    // No frame of its kind: the entry is only missing.
    let d = run(
        &e[1..],
        &[],
        Mode::Subsequence,
        vec![json!({"type": "result"})],
    );
    assert_eq!(d[0].path, None, "{d:#?}");
}

#[test]
fn a_failed_frame_lists_every_path_and_its_captures_hold_for_the_frames_after_it() {
    let e = [
        one(
            json!({"type": "system", "tools": {"$contains": ["Bash"]}, "model": "m", "session_id": {"$capture": "sid"}}),
        ),
        one(json!({"type": "result", "session_id": {"$ref": "sid"}})),
    ];
    let d = exact(
        &e,
        vec![
            json!({"type": "system", "tools": [], "model": "x", "session_id": "s1"}),
            json!({"type": "result", "session_id": "s1"}),
        ],
    );
    assert_eq!(
        d.len(),
        1,
        "the capture was made though the frame failed: {d:?}"
    );
    assert_eq!(d[0].path.as_deref(), Some("$.tools"));
    assert!(
        d[0].message
            .starts_with("frame 0 vs expected entry 0: no element matches"),
        "the message names the first path as before: {}",
        d[0].message
    );
    assert_eq!(d[0].also, ["$.model: expected \"m\", found \"x\""]);
    assert!(
        d[0].to_string().contains("also differs: $.model"),
        "{}",
        d[0]
    );
}

#[test]
fn a_capture_a_frame_failed_to_make_is_reported_there_once() {
    let e = [
        one(json!({"type": "system", "session_id": {"$capture": "sid"}})),
        one(json!({"type": "assistant", "session_id": {"$ref": "sid"}})),
        one(json!({"type": "result", "session_id": {"$ref": "sid"}})),
    ];
    let d = exact(
        &e,
        vec![
            json!({"type": "system"}),
            json!({"type": "assistant", "session_id": "s1"}),
            json!({"type": "result", "session_id": "s1"}),
        ],
    );
    assert_eq!(d.len(), 3, "{d:?}");
    assert_eq!(d[0].path.as_deref(), Some("$.session_id"));
    assert_eq!(d[0].depends_on, None);
    for later in &d[1..] {
        assert_eq!(later.depends_on.as_deref(), Some("sid"), "{later:?}");
        assert!(
            later
                .message
                .contains("depends on `sid` (not captured at frame 0)"),
            "{}",
            later.message
        );
    }
}
