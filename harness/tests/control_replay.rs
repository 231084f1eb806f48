//! The control scenarios against a fake CLI (fixtures/control/replay-cli.py) that replays
//! a transcript recorded from the real Claude Code 2.1.197: unaltered it passes; with one
//! control frame changed, dropped or answered with the wrong request_id it fails. A CLI
//! that never answers initialize, or prints a non-JSON line, is reported as such within
//! the trial timeout.

mod common;

use common::{read_json, repo, streamcheck_at};
use serde_json::Value;
use std::path::PathBuf;

fn fixtures() -> PathBuf {
    common::fixture_root("control")
}

/// Runs `control/<scenario>` on the replaying CLI; returns (passed, divergence kinds).
fn run(scenario: &str, alter: &str, frame: usize) -> (bool, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("replay.yaml");
    let transcript = fixtures().join(format!("transcripts/{scenario}.jsonl"));
    std::fs::write(
        &target,
        format!(
            "name: replay\ncommand: {}\nconforms_to: 2.1.197\nenv: {{REPLAY_TRANSCRIPT: {}, REPLAY_ALTER: {alter}, REPLAY_FRAME: \"{frame}\"}}\n",
            fixtures().join("replay-cli.py").display(),
            transcript.display()
        ),
    )
    .unwrap();
    let out = streamcheck_at(&repo())
        .args([
            "run",
            "--jobs",
            "1",
            "--no-install",
            "--timeout",
            "8",
            "--filter",
        ])
        .arg(format!("control/{scenario}"))
        .arg("--target")
        .arg(&target)
        .arg("--report-dir")
        .arg(dir.path().join("reports"))
        .output()
        .unwrap();
    let results = read_json(&dir.path().join("reports/results.json"));
    let trials = results["trials"].as_array().unwrap();
    assert_eq!(trials.len(), 1, "{scenario}: {trials:?}");
    let kinds = trials[0]["divergences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["kind"].as_str().unwrap().to_string())
        .collect();
    (out.status.code() == Some(0), kinds)
}

/// Indices (among stdout frames) and types of the control frames in a transcript.
fn control_frames(scenario: &str) -> Vec<(usize, String)> {
    let text =
        std::fs::read_to_string(fixtures().join(format!("transcripts/{scenario}.jsonl"))).unwrap();
    text.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["dir"] == "out")
        .enumerate()
        .filter_map(|(i, e)| {
            let frame: Value = serde_json::from_str(e["line"].as_str()?).ok()?;
            let ty = frame["type"].as_str()?.to_string();
            ty.starts_with("control_").then_some((i, ty))
        })
        .collect()
}

#[test]
fn every_altered_control_frame_fails_its_scenario() {
    let scenarios = [
        "unknown-subtype-errors",
        "interrupt-idle",
        "mcp-status",
        "can-use-tool-deny-interrupt",
        "interrupt-cancels-pending-permission",
    ];
    let mut jobs = Vec::new();
    for s in scenarios {
        jobs.push((s, "none", usize::MAX));
        for (i, ty) in control_frames(s) {
            let alterations: &[&str] = match ty.as_str() {
                "control_response" => &["change", "drop", "wrong_id"],
                _ => &["change", "drop"],
            };
            jobs.extend(alterations.iter().map(|a| (s, *a, i)));
        }
    }
    assert!(jobs.len() > 30, "{} runs", jobs.len());
    let results: Vec<_> = std::thread::scope(|scope| {
        let chunks: Vec<_> = jobs.chunks(jobs.len().div_ceil(3)).collect();
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| {
                scope.spawn(move || {
                    chunk
                        .iter()
                        .map(|(s, a, i)| ((*s, *a, *i), run(s, a, *i)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let mut wrong = Vec::new();
    for ((s, alter, frame), (passed, kinds)) in results {
        let should_pass = alter == "none";
        if passed != should_pass {
            wrong.push(format!(
                "{s} {alter} frame {frame}: passed={passed} {kinds:?}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn a_cli_that_never_answers_initialize_is_reported_as_a_timeout() {
    // The trial ends at its own timeout (its first divergence says so); how long that takes
    // on a loaded machine is not asserted.
    let (passed, kinds) = run("handshake-py", "silent", 0);
    assert!(!passed);
    assert_eq!(kinds[0], "timeout", "{kinds:?}");
    assert!(kinds.contains(&"sdk_contract".to_string()), "{kinds:?}");
}

#[test]
fn one_non_json_line_in_sdk_mode_is_reported() {
    let (passed, kinds) = run("unknown-subtype-errors", "noise", 1);
    assert!(!passed);
    assert!(kinds.contains(&"non_json".to_string()), "{kinds:?}");
    assert!(kinds.contains(&"sdk_contract".to_string()), "{kinds:?}");
}
