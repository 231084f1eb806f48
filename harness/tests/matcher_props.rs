//! The matcher returns on any input: random frame sequences against random patterns
//! (any_order groups, captures, refs, `$not`, `$one_of`) never panic.

use proptest::prelude::*;
use serde_json::{json, Value};
use streamcheck::matcher::{match_frames, Expected, FrameRules, Mode};
use streamcheck::pattern::{Captures, Pattern, Vars};
use streamcheck::printed::output::Frame;

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!("a")),
        Just(json!("b")),
        Just(json!(1)),
        Just(json!(true)),
        Just(json!(null)),
    ]
}

fn frame_value() -> impl Strategy<Value = Value> {
    (
        prop_oneof![Just("user"), Just("assistant"), Just("result")],
        leaf(),
        leaf(),
    )
        .prop_map(|(t, id, x)| json!({"type": t, "id": id, "x": x}))
}

fn field_pattern() -> impl Strategy<Value = Value> {
    let name = prop_oneof![Just("c1"), Just("c2")];
    prop_oneof![
        leaf(),
        Just(json!("$any")),
        Just(json!("$string")),
        name.clone().prop_map(|n| json!({"$capture": n})),
        name.prop_map(|n| json!({"$ref": n})),
        leaf().prop_map(|v| json!({"$not": v})),
        (leaf(), leaf()).prop_map(|(a, b)| json!({"$one_of": [a, b]})),
    ]
}

fn frame_pattern() -> impl Strategy<Value = Pattern> {
    (
        prop_oneof![
            Just("user"),
            Just("assistant"),
            Just("result"),
            Just("$string")
        ],
        field_pattern(),
        field_pattern(),
    )
        .prop_map(|(t, id, x)| Pattern::compile(&json!({"type": t, "id": id, "x": x})).unwrap())
}

fn expected() -> impl Strategy<Value = Expected> {
    prop_oneof![
        frame_pattern().prop_map(Expected::Frame),
        prop::collection::vec(prop::collection::vec(frame_pattern(), 1..3), 1..4)
            .prop_map(Expected::AnyOrder),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, .. ProptestConfig::default() })]

    #[test]
    fn the_matcher_never_panics(
        values in prop::collection::vec(frame_value(), 0..8),
        expected in prop::collection::vec(expected(), 0..5),
        ignore in prop::collection::vec(frame_pattern(), 0..2),
        subsequence in any::<bool>(),
    ) {
        let frames: Vec<Frame> = values
            .into_iter()
            .enumerate()
            .map(|(index, value)| Frame { index, line: index + 1, at_ms: 0, value })
            .collect();
        let rules = FrameRules {
            expected: &expected,
            ignore: &ignore,
            absent: &[],
            mode: if subsequence { Mode::Subsequence } else { Mode::Exact },
        };
        let divergences = match_frames(&rules, &frames, &Vars::default(), &mut Captures::new());
        // A divergence always says where it is or what was expected.
        for d in divergences {
            prop_assert!(!d.message.is_empty());
        }
    }
}
