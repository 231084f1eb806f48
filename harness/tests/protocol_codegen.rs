//! A standard code generator turns a release's JSON Schema into types that parse its
//! frames: `streamcheck protocol schema` writes the schema, quicktype (pinned in
//! `tests/quicktype/`) generates JavaScript with its runtime type check from it, and node
//! parses every example frame of the release with them (and, with `STREAMCHECK_PIN_RUN`,
//! every frame of a saved run of the pin). Only the commands are committed, not the types.
//!
//! quicktype merges the kinds' definitions into one `Frame` type (a union of objects is one
//! class to it): every key is optional and the check is on each key's JSON type and on the
//! closed list of `type`s, not on a kind's required keys (the jsonschema tests check those).

mod common;

use common::{repo, streamcheck, text};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use streamcheck::protocol::render;

/// The pinned quicktype (`npm ci` of `tests/quicktype/`), installed once into the cache.
fn quicktype() -> PathBuf {
    let src = common::crate_dir().join("tests/quicktype");
    let files = ["package.json", "package-lock.json", "parse.cjs"];
    common::installed_once("quicktype", &src, &files, |dir| {
        let out = Command::new("npm")
            .args(["ci", "--ignore-scripts", "--no-audit", "--no-fund"])
            .current_dir(dir)
            .output()
            .expect("npm runs");
        assert!(out.status.success(), "{}", common::printed(&out));
    })
}

/// The types quicktype generates from the schema `protocol schema` writes for `release`.
fn types(dir: &Path, dialect: &str, release: &str) -> PathBuf {
    let schema = dir.join(format!("{dialect}-{release}.schema.json"));
    let out = streamcheck()
        .current_dir(repo())
        .args([
            "protocol",
            "schema",
            "--dialect",
            dialect,
            "--release",
            release,
        ])
        .arg("--out")
        .arg(&schema)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let types = dir.join(format!("{dialect}-{release}.js"));
    let out = Command::new("node")
        .arg(quicktype().join("node_modules/quicktype/dist/index.js"))
        .args(["--src-lang", "schema", "--lang", "javascript"])
        .args(["--runtime-typecheck", "--top-level", "Frame", "-o"])
        .arg(&types)
        .arg(&schema)
        .output()
        .expect("node runs");
    assert!(out.status.success(), "quicktype: {}", common::printed(&out));
    types
}

/// `frames` through the generated `toFrame`: the failures (frame index, error).
fn parse(dir: &Path, types: &Path, frames: &[Value]) -> Vec<(usize, String)> {
    let file = dir.join("frames.jsonl");
    let lines: Vec<String> = frames.iter().map(Value::to_string).collect();
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let out = Command::new("node")
        .arg(quicktype().join("parse.cjs"))
        .arg(types)
        .arg(&file)
        .output()
        .expect("node runs");
    assert!(out.status.success(), "parse.cjs: {}", common::printed(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["frames"], frames.len(), "{report}");
    (report["failures"].as_array().unwrap().iter())
        .map(|f| {
            let line = f["line"].as_u64().unwrap() as usize;
            (line - 1, f["error"].as_str().unwrap().to_string())
        })
        .collect()
}

/// A dialect's example frames (whole frames, not content blocks) by release.
fn examples(dialect: &str) -> BTreeMap<String, Vec<(String, Value)>> {
    let path = repo().join(render::examples_file(dialect));
    let examples = render::Examples::load(&path).unwrap();
    let mut by: BTreeMap<String, Vec<(String, Value)>> = BTreeMap::new();
    for (kind, (release, frame)) in examples.0 {
        if !kind.contains('[') {
            by.entry(release.to_string())
                .or_default()
                .push((kind, frame));
        }
    }
    by
}

/// Every example frame of `dialect` parses with the types of its release's schema; the
/// releases' types, by release.
fn examples_parse(dir: &Path, dialect: &str) -> BTreeMap<String, PathBuf> {
    let mut out = BTreeMap::new();
    let mut checked = 0;
    for (release, frames) in examples(dialect) {
        let types = types(dir, dialect, &release);
        let values: Vec<Value> = frames.iter().map(|(_, f)| f.clone()).collect();
        let failures = parse(dir, &types, &values);
        let named: Vec<String> = (failures.iter())
            .map(|(i, e)| format!("{}: {e}", frames[*i].0))
            .collect();
        assert!(named.is_empty(), "{dialect} {release}: {named:#?}");
        checked += frames.len();
        out.insert(release, types);
    }
    assert!(checked > 5, "{dialect}: only {checked} example frames");
    out
}

#[test]
fn types_generated_from_a_releases_schema_parse_its_frames_and_reject_a_wrong_type() {
    let dir = tempfile::tempdir().unwrap();
    let generated = examples_parse(dir.path(), "claude-code");
    let (release, types) = generated.iter().next_back().unwrap();
    let frames: BTreeMap<String, Value> =
        examples("claude-code")[release].iter().cloned().collect();
    let init = &frames["system/init"];
    let mut unknown_key = init.clone();
    unknown_key["a_key_no_release_printed"] = json!({"x": 1});
    let mut wrong_type = init.clone();
    wrong_type["session_id"] = json!(5);
    let mut no_kind = frames["result/success"].clone();
    no_kind["type"] = json!("no_such_frame");
    let failures = parse(
        dir.path(),
        types,
        &[init.clone(), unknown_key, wrong_type, no_kind],
    );
    let lines: Vec<usize> = failures.iter().map(|(i, _)| *i).collect();
    assert_eq!(
        lines,
        [2, 3],
        "an unknown key is accepted (objects are open), a wrong type and an unknown `type` are not: {failures:#?}"
    );
    assert!(failures[0].1.contains("session_id"), "{failures:?}");
}

#[test]
fn the_other_dialects_schemas_generate_types_that_parse_their_frames() {
    let dir = tempfile::tempdir().unwrap();
    for dialect in ["caliban", "qwen-code"] {
        examples_parse(dir.path(), dialect);
    }
}

/// Every frame of a saved run of the pin (`STREAMCHECK_PIN_RUN`: its run folder) parses
/// with the types generated from the pin's schema.
#[test]
fn every_frame_of_a_saved_pin_run_parses_with_the_generated_types() {
    let Some(run) = std::env::var_os("STREAMCHECK_PIN_RUN") else {
        eprintln!("skipped: STREAMCHECK_PIN_RUN names no run folder of the pin (a run is ~80 MB, not committed)");
        return;
    };
    let run = Path::new(&run);
    let results = streamcheck::store::RunReader::open(run).results().unwrap();
    let release = (results.targets[0].version.clone()).expect("the run names its release");
    let saved = streamcheck::store::RunReader::open(run).saved().unwrap();
    let other: std::collections::BTreeSet<&str> = (results.trials.iter())
        .filter(|t| streamcheck::runner::protocol::other_output(&t.command_line))
        .map(|t| t.key.scenario.as_str())
        .collect();
    let mut frames = Vec::new();
    let mut from = Vec::new();
    for s in saved
        .iter()
        .filter(|s| !other.contains(s.key.scenario.as_str()))
    {
        for line in s.stdout.lines() {
            if let Ok(frame @ Value::Object(_)) = serde_json::from_str::<Value>(line) {
                frames.push(frame);
                from.push(s.key.scenario.clone());
            }
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let types = types(dir.path(), "claude-code", &release);
    let failures = parse(dir.path(), &types, &frames);
    eprintln!("{} frames, {} failures", frames.len(), failures.len());
    assert!(frames.len() > 1000, "only {} frames", frames.len());
    let named: Vec<String> = (failures.iter().take(10))
        .map(|(i, e)| format!("{}: {e}", from[*i]))
        .collect();
    assert!(
        failures.is_empty(),
        "{} failures: {named:#?}",
        failures.len()
    );
}
