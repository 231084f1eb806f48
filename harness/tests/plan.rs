//! `streamcheck plan` prints what each selected trial will do and runs nothing: the fixture
//! project's CLI answers only `--version`, and fails any other run.

mod common;

use common::{fixture_root, outcome, streamcheck_at};
use serde_json::Value;
use std::collections::BTreeSet;

/// `streamcheck plan ARGS` in the `plan` fixture, with its project file: exit code, stdout,
/// stderr.
fn plan(args: &[&str]) -> (i32, String, String) {
    let root = fixture_root("plan");
    let cache = tempfile::tempdir().unwrap();
    let mut cmd = streamcheck_at(&root);
    cmd.arg("--config")
        .arg(root.join("streamcheck.toml"))
        .env("STREAMCHECK_CACHE", cache.path())
        .arg("plan")
        .args(args);
    outcome(&mut cmd)
}

/// `plan ARGS --target fake --json`: one object per trial.
fn planned(args: &[&str]) -> Vec<Value> {
    let (code, stdout, stderr) = plan(&[args, &["--target", "fake", "--json"]].concat());
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    (stdout.lines())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn strings(v: &Value) -> Vec<&str> {
    (v.as_array().unwrap().iter())
        .map(|s| s.as_str().unwrap())
        .collect()
}

#[test]
fn a_skipped_trial_says_its_typed_reason_and_plans_no_run() {
    let trials = planned(&["lacks-feature"]);
    assert_eq!(trials.len(), 1);
    let t = &trials[0];
    assert_eq!(t["id"]["scenario"], "lacks-feature");
    assert_eq!(t["id"]["version"], "1.2.3");
    assert_eq!(t["decision"]["kind"], "skip");
    assert_eq!(
        t["decision"]["reason"],
        serde_json::json!({"unsupported": ["tool:Bash"]})
    );
    assert_eq!(t["runs"], serde_json::json!([]));

    let (code, stdout, _) = plan(&["lacks-feature", "--target", "fake"]);
    assert_eq!(code, 0);
    assert!(
        stdout.contains("decision: skip: unsupported: needs tool:Bash"),
        "{stdout}"
    );
}

#[test]
fn a_skip_expectation_plans_the_one_run_that_confirms_it() {
    let trials = planned(&["skip-confirmed"]);
    let t = &trials[0];
    assert_eq!(t["decision"]["kind"], "run");
    assert_eq!(t["confirms_skip"]["reason"], "--refused-flag refused");
    let runs = t["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1);
    assert!(strings(&runs[0]["command"]["args"]).contains(&"--refused-flag"));
    assert_eq!(
        runs[0]["signal"],
        serde_json::json!({"send": "TERM", "after_frames": 2})
    );
}

#[test]
fn a_multi_run_scenario_plans_each_run_with_its_own_command_stub_and_checks() {
    let trials = planned(&["two-runs"]);
    assert_eq!(trials.len(), 1);
    let t = &trials[0];
    let runs = t["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    let args = |i: usize| strings(&runs[i]["command"]["args"]);
    assert_eq!(runs[0]["run"], 1);
    assert_eq!(runs[1]["run"], 2);
    assert!(args(0).contains(&"--session-id") && !args(0).contains(&"--resume"));
    assert!(args(1).contains(&"--resume") && args(1).contains(&"which word?"));
    let reply = |i: usize| runs[i]["stub"]["steps"][0]["message"]["content"][0]["text"].clone();
    assert_eq!(reply(0), "Noted: apricot.");
    assert_eq!(reply(1), "It was apricot.");
    assert_eq!(runs[0]["checks"]["frames"], 2);
    assert_eq!(runs[1]["checks"]["frames"], 3);
    assert_eq!(runs[0]["limits"]["timeout_ms"], 60_000);
    assert_eq!(runs[1]["limits"]["timeout_ms"], 30_000);
    // The sandbox's paths are placeholders: nothing was made.
    let env: Vec<(&str, &str)> = (runs[0]["command"]["env"].as_array().unwrap().iter())
        .map(|p| (p[0].as_str().unwrap(), p[1].as_str().unwrap()))
        .collect();
    assert!(env.contains(&("HOME", "$HOME")), "{env:?}");
    assert!(
        env.contains(&("ANTHROPIC_BASE_URL", "$STUB_URL")),
        "{env:?}"
    );
    assert_eq!(
        strings(&runs[0]["stub"]["builtin_rules"]),
        ["claude-code-session-title"]
    );
    // The project's known entry for it, where it is written.
    let known = t["known"].as_array().unwrap();
    assert_eq!(known.len(), 1, "{known:?}");
    assert!(known[0]["at"]
        .as_str()
        .unwrap()
        .ends_with("known-divergences.yaml:1"));

    let (_, stdout, _) = plan(&["two-runs", "--target", "fake"]);
    assert!(
        stdout.contains("run 1 of 2:") && stdout.contains("run 2 of 2:"),
        "{stdout}"
    );
    assert!(stdout.contains("known: two-runs exit code"), "{stdout}");
}

#[test]
fn each_case_is_a_trial_with_its_own_input_and_checks() {
    let trials = planned(&["cases"]);
    let ids: Vec<&str> = trials
        .iter()
        .map(|t| t["id"]["scenario"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["cases[one]", "cases[two]"]);
    for (t, word, frames) in [(&trials[0], "one", 1), (&trials[1], "two", 2)] {
        let run = &t["runs"][0];
        let client = &run["client"];
        let lines = strings(&client["lines"]);
        assert_eq!(lines.len(), 1);
        assert!(
            lines[0].contains(&format!(r#"\"content\":\"{word}\""#)),
            "{lines:?}"
        );
        assert_eq!(client["close"], serde_json::json!({"after_results": 1}));
        assert_eq!(run["checks"]["frames"], frames);
        assert_eq!(run["limits"]["answer_within_ms"], 5_000);
        let invariants = strings(&run["checks"]["invariants"]);
        assert!(!invariants.contains(&"result_text_kept") && invariants.contains(&"init_first"));
        assert_eq!(run["checks"]["invariants_off"][0][0], "result_text_kept");
    }
}

/// Every field printed is in docs/plan.md, and every field it lists without *optional* is
/// printed by some trial of the fixture.
#[test]
fn the_json_shape_is_the_documented_one() {
    let doc = std::fs::read_to_string(common::repo().join("docs/plan.md")).unwrap();
    let shape = doc.split("## The JSON shape").nth(1).unwrap();
    let fields: Vec<(&str, &str)> = (shape.lines())
        .filter_map(|l| {
            let rest = l.trim_start().strip_prefix("- `")?;
            let (name, text) = rest.split_once('`')?;
            Some((name, text))
        })
        .collect();
    let documented: BTreeSet<&str> = fields.iter().map(|(n, _)| *n).collect();
    let marked = |mark: &str| -> BTreeSet<&str> {
        (fields.iter())
            .filter(|(_, t)| t.contains(mark))
            .map(|(n, _)| *n)
            .collect()
    };
    let (optional, whole) = (marked("*optional*"), marked("*value*"));

    let mut seen = BTreeSet::new();
    for t in planned(&[]) {
        assert_eq!(t["format_version"], 1);
        fields_of(&t, "", &whole, &mut seen);
    }
    let undocumented: Vec<&String> = (seen.iter())
        .filter(|f| !documented.contains(f.as_str()))
        .collect();
    assert!(
        undocumented.is_empty(),
        "printed, not in docs/plan.md: {undocumented:?}"
    );
    let under_optional = |f: &str| {
        optional
            .iter()
            .any(|o| f == *o || f.starts_with(&format!("{o}.")))
    };
    let missing: Vec<&&str> = (documented.iter())
        .filter(|f| !under_optional(f) && !seen.contains(**f))
        .collect();
    assert!(
        missing.is_empty(),
        "in docs/plan.md, printed by no trial: {missing:?}"
    );
}

/// The dotted paths of `v`'s fields (`runs[].command.args`), not below a *value* field.
fn fields_of(v: &Value, at: &str, whole: &BTreeSet<&str>, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(map) => {
            for (k, x) in map {
                let path = if at.is_empty() {
                    k.clone()
                } else {
                    format!("{at}.{k}")
                };
                if !whole.contains(path.as_str()) {
                    fields_of(x, &path, whole, out);
                }
                out.insert(path);
            }
        }
        Value::Array(items) => {
            for x in items.iter().filter(|x| x.is_object()) {
                fields_of(x, &format!("{at}[]"), whole, out);
            }
        }
        _ => {}
    }
}

#[test]
fn a_selection_without_a_trial_exits_2() {
    let (code, stdout, stderr) = plan(&["no-such-scenario", "--target", "fake"]);
    assert_eq!((code, stdout.as_str()), (2, ""), "{stderr}");
    assert!(stderr.contains("no trial selected"), "{stderr}");
    // Selected, but written for another dialect only: no trial of this target.
    let (code, stdout, stderr) = plan(&["qwen-only", "--target", "fake"]);
    assert_eq!((code, stdout.as_str()), (2, ""), "{stderr}");
    assert!(stderr.contains("no trial ran"), "{stderr}");
}

#[test]
fn a_release_not_installed_is_not_installed_and_exits_2_naming_how_to() {
    let (code, stdout, stderr) = plan(&["two-runs", "--target", "claude-code@9.9.9"]);
    assert_eq!((code, stdout.as_str()), (2, ""), "{stderr}");
    assert!(
        stderr.contains("claude-code@9.9.9 is not available") && stderr.contains("install: "),
        "{stderr}"
    );
}
