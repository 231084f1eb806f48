//! Every trial is checked against the protocol inventory (`targets/<dialect>/protocol.yaml`):
//! a wrapper around the pinned CLI that changes its frames gets the change named once
//! per run; a key gone fails the trial, a new one only under `--protocol strict`; a
//! dialect without an inventory says so.

mod common;

use common::{repo, streamcheck, streamcheck_at, text};
use std::path::Path;
use streamcheck::install::{self, Project, TargetSpec};

/// A scenario whose CLI prints `assistant` and `result` frames.
const SCENARIO: &str = "basics/multiple-text-blocks";

/// A target file for the wrapper around the pinned CLI with `mutation`.
fn wrapper(dir: &Path, mutation: &str) -> std::path::PathBuf {
    let project = Project::at(repo());
    let pinned = TargetSpec::parse("claude-code").unwrap();
    let t = install::resolve(&pinned, &project, true).expect("the pinned Claude Code installs");
    let mut argv = vec![t.program.display().to_string()];
    argv.extend(t.lead_args.iter().cloned());
    let wrap = common::crate_dir().join("tests/fixtures/protocol/wrap.js");
    let file = dir.join(format!("{mutation}.yaml"));
    let env = serde_json::json!({"WRAPPED": serde_json::to_string(&argv).unwrap(), "PROTOCOL_MUTATION": mutation});
    let yaml = format!(
        "name: wrapped\ncommand: {}\ndialect: claude-code\nenv: {env}\n",
        serde_json::to_string(&wrap.display().to_string()).unwrap()
    );
    std::fs::write(&file, yaml).unwrap();
    file
}

fn run(target: &Path, reports: &Path, extra: &[&str]) -> (Option<i32>, String, String) {
    let out = streamcheck()
        .current_dir(repo())
        .args(["run", "--filter", SCENARIO, "--jobs", "1", "--report-dir"])
        .arg(reports)
        .arg("--target")
        .arg(target)
        .args(extra)
        .output()
        .unwrap();
    let summary = std::fs::read_to_string(reports.join("summary.md")).unwrap_or_default();
    (
        out.status.code(),
        text(&out.stdout) + &text(&out.stderr),
        summary,
    )
}

#[test]
fn a_key_added_to_every_result_is_named_once_and_fails_only_under_strict() {
    let dir = tempfile::tempdir().unwrap();
    let target = wrapper(dir.path(), "add-result-key");
    let (code, out, summary) = run(&target, &dir.path().join("report"), &[]);
    assert_eq!(code, Some(0), "a new key is reported, not a failure: {out}");
    let line = "new key `result/success.streamcheck_extra` (string), in 1 trial (basics/multiple-text-blocks)";
    assert_eq!(summary.matches(line).count(), 1, "{summary}");
    assert_eq!(
        summary.matches("streamcheck_extra").count(),
        1,
        "named once: {summary}"
    );
    let junit = std::fs::read_to_string(dir.path().join("report/junit.xml")).unwrap();
    assert!(junit.contains("streamcheck_extra"), "{junit}");
    let html = std::fs::read_to_string(dir.path().join("report/index.html")).unwrap();
    assert!(
        html.contains("Protocol (1 findings")
            && html.contains("success.streamcheck_extra` (string), in 1 trial"),
        "{html}"
    );

    let (code, out, summary) = run(
        &target,
        &dir.path().join("strict"),
        &["--protocol", "strict"],
    );
    assert_eq!(code, Some(1), "strict fails on a new key: {out}");
    assert!(summary.contains(line), "{summary}");
    let (code, out, summary) = run(&target, &dir.path().join("off"), &["--protocol", "off"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        !summary.contains("streamcheck_extra"),
        "off checks nothing: {summary}"
    );
}

#[test]
fn strict_in_the_project_file_fails_on_a_new_key() {
    let dir = tempfile::tempdir().unwrap();
    let target = wrapper(dir.path(), "add-result-key");
    let config = dir.path().join("streamcheck.toml");
    std::fs::write(&config, "protocol = \"strict\"\n").unwrap();
    let reports = dir.path().join("report");
    let out = streamcheck()
        .current_dir(repo())
        .env("STREAMCHECK_CONFIG", &config)
        .args(["run", "--filter", SCENARIO, "--jobs", "1", "--report-dir"])
        .arg(&reports)
        .arg("--target")
        .arg(&target)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
}

#[test]
fn an_assistant_frame_without_its_uuid_fails_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let target = wrapper(dir.path(), "drop-assistant-uuid");
    let (code, out, summary) = run(&target, &dir.path().join("report"), &[]);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        summary.contains(
            "gone key `assistant.uuid` (string; every `assistant` carried it), in 1 trial"
        ),
        "{summary}"
    );
    let results = common::read_json(&dir.path().join("report/results.json"));
    let messages: Vec<&str> = results["trials"][0]["divergences"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["kind"] == "protocol")
        .filter_map(|d| d["message"].as_str())
        .collect();
    assert_eq!(
        messages,
        ["gone key `assistant.uuid` (string; every `assistant` carried it)"]
    );
}

#[test]
fn a_dialect_without_an_inventory_says_so_and_is_not_silently_checked() {
    let root = tempfile::tempdir().unwrap();
    common::copy_dir(&common::fixture_root("runs"), root.path());
    let reports = root.path().join("reports");
    let out = streamcheck_at(root.path())
        .args(["run", "--target-command"])
        .arg(root.path().join("fake-cli.sh"))
        .args(["--filter", "one-run", "--report-dir"])
        .arg(&reports)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    let summary = std::fs::read_to_string(reports.join("summary.md")).unwrap();
    assert!(
        summary.contains("not checked: no inventory (targets/claude-code/protocol.yaml), in "),
        "{}\n{summary}",
        text(&out.stdout)
    );
}

#[test]
fn an_inventory_that_does_not_load_fails_the_trials_naming_the_file() {
    let root = tempfile::tempdir().unwrap();
    common::copy_dir(&common::fixture_root("runs"), root.path());
    let file = root.path().join("targets/claude-code/protocol.yaml");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, "dialect: claude-code\nreleases: [\"2.1.x\"]\n").unwrap();
    let reports = root.path().join("reports");
    let out = streamcheck_at(root.path())
        .args(["run", "--target-command"])
        .arg(root.path().join("fake-cli.sh"))
        .args(["--filter", "one-run", "--report-dir"])
        .arg(&reports)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let results = std::fs::read_to_string(reports.join("results.json")).unwrap();
    assert!(
        results.contains("the protocol inventory does not load")
            && results.contains("protocol.yaml"),
        "{results}"
    );
}

#[test]
fn a_verdict_tells_a_protocol_change_from_a_change_to_what_the_scenarios_pin() {
    let dir = tempfile::tempdir().unwrap();
    let target = wrapper(dir.path(), "drop-init-output-style");
    let reports = dir.path().join("verdict");
    let out = streamcheck()
        .current_dir(repo())
        .args([
            "verdict",
            "--filter",
            SCENARIO,
            "--jobs",
            "1",
            "--report-dir",
        ])
        .arg(&reports)
        .arg("--target")
        .arg(&target)
        .output()
        .unwrap();
    let md = std::fs::read_to_string(reports.join("verdict.md")).unwrap_or_default();
    assert_eq!(
        out.status.code(),
        Some(0),
        "the scenario still passes: the gate holds\n{md}"
    );
    assert!(md.contains("None: every scenario passes."), "{md}");
    assert!(
        md.contains("- breaking: gone key `system/init.output_style` (string; every `system/init` carried it), in 1 trial (basics/multiple-text-blocks)"),
        "{md}"
    );
    assert!(
        md.contains("\"system/init\": \"output_style\": {type: \"string\", every: "),
        "the inventory entry it would accept: {md}"
    );
    let pending = std::fs::read_to_string(reports.join("protocol.yaml")).unwrap();
    streamcheck::protocol::Inventory::parse(&pending).unwrap();
    let sent = std::fs::read_to_string(reports.join("requests.yaml")).unwrap();
    let sent = streamcheck::protocol::Inventory::parse(&sent).unwrap();
    assert!(
        sent.kinds.contains_key("POST /v1/messages"),
        "the request inventory with this run added: {:?}",
        sent.kinds.keys()
    );
}
