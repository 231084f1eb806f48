//! A re-implementer's gate: `mycli` (tests/fixtures/reimpl), a small re-implementation of
//! Claude Code's headless stream-json (text and thinking replies, one turn, no tools, no
//! control protocol), against the bundled `basics` with its project file's `supports = []`,
//! `exclude` and `protocol = "parity"`. It is green, lists what it lacks in the parity
//! table and the scenarios it skips as unsupported; a key it prints correctly left out
//! (`MYCLI_DROP_KEY`) turns it red, naming that key first.

mod common;

use common::{fixture_root, outcome, read_json, repo};
use std::path::Path;

/// `streamcheck run` of the gate with the project file `config`: exit code, terminal output.
fn gate(config: &Path, reports: &Path) -> (i32, String) {
    let (code, out, err) = outcome(
        common::streamcheck_at(&repo())
            .current_dir(config.parent().unwrap())
            .env("STREAMCHECK_CONFIG", config)
            .args(["run", "--jobs", "2", "--report-dir"])
            .arg(reports),
    );
    (code, out + &err)
}

#[test]
fn the_fixture_re_implementation_is_green_with_a_parity_table_and_its_unsupported_listed() {
    let reports = tempfile::tempdir().unwrap();
    let (code, out) = gate(
        &fixture_root("reimpl").join("streamcheck.toml"),
        reports.path(),
    );
    assert_eq!(code, 0, "{out}");
    let results = read_json(&reports.path().join("results.json"));
    let counts = &results["counts"];
    assert_eq!(
        (&counts["failed"], &counts["unsupported"]),
        (&0.into(), &4.into()),
        "{counts}"
    );
    assert!(counts["passed"].as_u64().unwrap() >= 9, "{counts}");
    let skipped: Vec<&serde_json::Value> = (results["trials"].as_array().unwrap().iter())
        .filter(|t| t["status"] == "skipped")
        .collect();
    assert!(
        (skipped.iter()).all(|t| t["skip_reason"]["unsupported"]
            .as_array()
            .is_some_and(|f| f.iter().any(|f| f == "tool:Bash"))),
        "{skipped:?}"
    );
    assert!(
        out.contains("basics/thinking-then-tool (mycli): needs tool:Bash"),
        "{out}"
    );
    let parity = results["parity"].as_array().unwrap();
    let row = |kind: &str, path: &str| {
        parity
            .iter()
            .find(|r| r["kind"] == kind && r["path"] == path)
    };
    let lacks = row("system/init", "fast_mode_state").expect("a key only Claude Code prints");
    assert_eq!(lacks["side"], "reference_only", "{lacks}");
    assert!(
        row("system/init", "permissionMode").is_none(),
        "mycli prints it"
    );
    let summary = std::fs::read_to_string(reports.path().join("summary.md")).unwrap();
    assert!(
        summary.contains("## Parity (")
            && summary
                .contains("`system/init.fast_mode_state` | reference prints / target does not")
            && summary.contains("## Skipped as unsupported (4"),
        "{summary}"
    );
    let html = std::fs::read_to_string(reports.path().join("index.html")).unwrap();
    assert!(html.contains("id=\"parity\"") && html.contains("fast_mode_state"));
}

#[test]
fn a_key_it_prints_correctly_left_out_turns_the_gate_red_naming_it_first() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = fixture_root("reimpl");
    let text = std::fs::read_to_string(fixture.join("streamcheck.toml")).unwrap();
    let command = fixture.join("mycli").display().to_string();
    let text = text.replace("\"./mycli\"", &serde_json::to_string(&command).unwrap())
        + "env = { MYCLI_DROP_KEY = \"is_error\" }\n";
    let config = dir.path().join("streamcheck.toml");
    std::fs::write(&config, text).unwrap();
    let (code, out) = gate(&config, &dir.path().join("reports"));
    assert_eq!(code, 1, "{out}");
    let first = out
        .lines()
        .skip_while(|l| !l.starts_with("what to fix first"))
        .nth(1)
        .unwrap_or_default();
    assert!(
        first.contains("field mismatch at `$.is_error`")
            && first.contains("streamcheck run --filter basics/"),
        "the first cause names the key: {out}"
    );
    let summary = std::fs::read_to_string(dir.path().join("reports/summary.md")).unwrap();
    let causes = summary
        .split("## What to fix first")
        .nth(1)
        .unwrap_or_default();
    assert!(causes.contains("`$.is_error`"), "{summary}");
}
