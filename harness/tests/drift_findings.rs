//! One finding per change: the same change seen in many scenarios (same frame kind, same
//! path, same before and after) is one finding listing them, and the verdict counts it once.

mod run_folder;

use run_folder::exit_code;

use serde_json::{json, Value};
use streamcheck::commands::drift::{self, ScenarioOutput, VersionOutputs, What};

use run_folder::passed as out;

fn version(target: &str, scenarios: Vec<(String, ScenarioOutput)>) -> VersionOutputs {
    VersionOutputs {
        target: target.into(),
        version: Some(target.into()),
        scenarios: scenarios.into_iter().collect(),
        ..VersionOutputs::default()
    }
}

const IDS: [&str; 8] = ["a/1", "a/2", "b/1", "b/2", "c/1", "c/2", "d/1", "d/2"];

/// Eight scenarios whose runs differ (one or two tool turns); `newer` prints one more
/// frame in each, gives each result a new key and changes every exit code 0 -> 1.
fn suite(newer: bool) -> Vec<(String, ScenarioOutput)> {
    IDS.iter()
        .enumerate()
        .map(|(i, id)| {
            let mut frames = vec![json!({"type": "system", "subtype": "init"})];
            for _ in 0..=(i % 2) {
                frames.push(json!({"type": "assistant"}));
                frames.push(json!({"type": "user"}));
            }
            if newer {
                frames.insert(1, json!({"type": "system", "subtype": "status"}));
            }
            let mut result = json!({"type": "result", "subtype": "success", "is_error": false});
            if newer {
                result["fast_mode_state"] = json!("off");
            }
            frames.push(result);
            (id.to_string(), out(i32::from(newer), Value::from(frames)))
        })
        .collect()
}

#[test]
fn a_frame_added_to_every_run_is_one_finding_listing_the_scenarios() {
    let (a, b) = (version("a", suite(false)), version("b", suite(true)));
    let d = drift::diff(&[a, b]);
    let verdict = &d.pairs[0].verdict;
    let of = |what: What| {
        verdict
            .iter()
            .filter(|c| c.finding().what == what)
            .collect::<Vec<_>>()
    };
    for what in [
        What::FramesInserted,
        What::ExitCodeChanged,
        What::FieldAdded,
    ] {
        let found = of(what);
        assert_eq!(found.len(), 1, "{what}: one finding, not one per scenario");
        let f = found[0].finding();
        assert_eq!(f.all_scenarios().len(), IDS.len(), "{what}: {f}");
    }
    let inserted = of(What::FramesInserted)[0].finding();
    assert_eq!(inserted.to, "+system/status", "{inserted:?}");
    let exit = of(What::ExitCodeChanged)[0];
    assert!(exit.is_breaking());
    assert!(
        exit.finding().to_string().contains("8 scenarios (a/1, a/2"),
        "{}",
        exit.finding()
    );
    let breaking = verdict.iter().filter(|c| c.is_breaking()).count();
    assert_eq!(breaking, 1, "the verdict counts findings: {verdict:#?}");

    let md = drift::render_md(&d, "drift", &[]);
    let lines: Vec<&str> = md.lines().filter(|l| l.contains("system/status")).collect();
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("- frames inserted (+system/status) in 8 scenario(s)")),
        "{md}"
    );
    let per_scenario = md
        .lines()
        .filter(|l| l.starts_with("- `a/1` (changed)"))
        .count();
    assert_eq!(
        per_scenario, 0,
        "no per-scenario line for the insertion: {md}"
    );
    assert!(md.contains("### a → b: BREAKING, 1 breaking"), "{md}");
}

#[test]
fn different_changes_stay_apart() {
    let mut newer = suite(false);
    newer[0].1.exit = exit_code(1);
    newer[1].1.exit = exit_code(2);
    let d = drift::diff(&[version("a", suite(false)), version("b", newer)]);
    let exits: Vec<_> = d.pairs[0]
        .verdict
        .iter()
        .filter(|c| c.finding().what == What::ExitCodeChanged)
        .collect();
    assert_eq!(exits.len(), 2, "0 -> 1 and 0 -> 2 are two changes");
    assert!(exits.iter().all(|c| c.finding().all_scenarios().len() == 1));
}
