//! Scenario files as data: the committed JSON Schema is current, every scenario in
//! the catalogue loads and validates against it, and no input makes the parser panic.

mod common;

use common::repo as root;
use proptest::prelude::*;
use std::path::Path;
use streamcheck::catalogue;
use streamcheck::scenario::{self, Scenario};

#[test]
fn committed_schema_is_up_to_date() {
    let path = root().join("scenarios/schema.json");
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    let current = scenario::json_schema_string();
    if std::env::var_os("UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &current).unwrap();
        return;
    }
    assert!(
        committed == current,
        "scenarios/schema.json is stale: run `cargo run -p streamcheck -- schema > scenarios/schema.json`"
    );
}

#[test]
fn every_scenario_loads_and_validates_against_the_schema() {
    let schema: serde_json::Value = serde_json::from_str(&scenario::json_schema_string()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let (ok, errors) = catalogue::load_all(&root().join("scenarios"));
    assert!(
        errors.is_empty(),
        "broken scenario files:\n{}",
        errors
            .iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(!ok.is_empty());
    for s in &ok {
        let text = std::fs::read_to_string(&s.path).unwrap();
        let value: serde_json::Value = match &s.case {
            // A case of a matrix: the file with this case's parameters put in.
            Some(name) => {
                let (cases, body) =
                    scenario::cases::split(serde_yaml::from_str(&text).unwrap()).unwrap();
                let case = cases.iter().find(|c| &c.name == name).unwrap();
                serde_yaml::from_value(scenario::cases::substitute(&body, case)).unwrap()
            }
            None => serde_yaml::from_str(&text).unwrap(),
        };
        let problems: Vec<String> = validator
            .iter_errors(&value)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(
            problems.is_empty(),
            "{}: {}",
            s.path.display(),
            problems.join("; ")
        );
    }
}

fn parse(text: &str) -> Result<Scenario, scenario::ScenarioError> {
    Scenario::parse(
        text,
        Path::new("scenarios/fuzz/x.yaml"),
        Path::new("scenarios"),
    )
}

fn catalogue_texts() -> Vec<String> {
    let mut texts: Vec<String> = catalogue::discover(&root().join("scenarios"))
        .paths
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    texts.truncate(40);
    texts
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, .. ProptestConfig::default() })]

    #[test]
    fn random_text_never_panics(text in "\\PC{0,400}") {
        let _ = parse(&text);
    }

    #[test]
    fn random_yaml_like_text_never_panics(text in "([a-z_$]{1,8}: ?(\\{|\\[|\"|'|-|[a-z$0-9]{0,6}|\\}|\\]|, ){0,6}\n {0,4}){0,20}") {
        let _ = parse(&text);
    }

    #[test]
    fn mutated_scenarios_never_panic(
        pick in any::<prop::sample::Index>(),
        cuts in prop::collection::vec((any::<prop::sample::Index>(), 0usize..40, "[\\PC\n]{0,12}"), 1..6),
    ) {
        let texts = catalogue_texts();
        let mut text = pick.get(&texts).clone().into_bytes();
        for (at, len, insert) in cuts {
            if text.is_empty() { break; }
            let start = at.index(text.len());
            let end = (start + len).min(text.len());
            text.splice(start..end, insert.into_bytes());
        }
        let text = String::from_utf8_lossy(&text);
        let _ = parse(&text);
    }
}

#[test]
fn error_names_file_line_and_what_is_wrong() {
    let e = parse("description: x\nprompt: hi\nexpect:\n  claude-code:\n    frames:\n      - {type: result}\n    exitcode: 0\n").unwrap_err();
    let msg = e.to_string();
    assert!(msg.starts_with("scenarios/fuzz/x.yaml:7:"), "{msg}");
    assert!(msg.contains("unknown field `exitcode`"), "{msg}");
}
