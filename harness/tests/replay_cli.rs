//! `streamcheck replay-cli` standing in for `claude` under the real Python Agent SDK: its
//! own `query()`, with `cli_path` pointed at a one-line wrapper, over the pinned CLI's
//! recorded control/ trials (the SDK's handshake, can_use_tool, hooks, SDK MCP servers)
//! completes each and yields the recorded result, also with a probe applied.

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};
use streamcheck::commands::consume::sdk::python_sdk;
use streamcheck::install::Project;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// A trial the SDK's query() can drive: the recorded client sent `initialize` and one user
/// message, and the CLI printed one result and exited 0.
fn replayable(trial: &Value) -> bool {
    let client = &trial["client"];
    let requests = client["requests"].as_array().cloned().unwrap_or_default();
    let users = (client["written"].as_array().into_iter().flatten())
        .filter_map(|w| w[1].as_str())
        .filter(|l| l.starts_with(r#"{"type":"user""#))
        .count();
    let results = (trial["stdout"].as_str().unwrap_or("").lines())
        .filter(|l| serde_json::from_str::<Value>(l).is_ok_and(|f| f["type"] == "result"))
        .count();
    requests.len() == 1
        && requests[0]["subtype"] == "initialize"
        && users == 1
        && results == 1
        && trial["exit"]["code"] == 0
}

fn sdk_query(python: &Path, work: &Path, trials: &[PathBuf], probe: Option<&str>) -> Vec<Value> {
    let mut cmd = std::process::Command::new(python);
    cmd.arg(root().join("harness/tests/replay/sdk_query.py"))
        .arg(env!("CARGO_BIN_EXE_streamcheck"))
        .arg(work)
        .args(trials);
    if let Some(p) = probe {
        cmd.env("REPLAY_PROBE", p);
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn the_python_sdks_query_completes_over_recorded_control_trials_and_yields_their_result() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let out = Command::cargo_bin("streamcheck")
        .unwrap()
        .current_dir(root())
        .args([
            "run",
            "--filter",
            "control/",
            "--jobs",
            "2",
            "--report",
            "json",
            "--report-dir",
        ])
        .arg(&run)
        .output()
        .unwrap();
    assert!(
        run.join("outputs/control").is_dir(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut trials = Vec::new();
    for entry in std::fs::read_dir(run.join("outputs/control")).unwrap() {
        let path = entry.unwrap().path();
        let saved: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        if replayable(&saved) {
            trials.push(path);
        }
    }
    trials.sort();
    assert!(
        trials.len() >= 20,
        "only {} replayable control/ trials",
        trials.len()
    );
    let (python, _) = python_sdk(&Project::at(root())).unwrap();
    let work = tmp.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let results = sdk_query(&python, &work, &trials, None);
    assert_eq!(results.len(), trials.len());
    let failed: Vec<&Value> = results.iter().filter(|r| r["ok"] != true).collect();
    assert!(
        failed.is_empty(),
        "the SDK did not yield the recorded result: {failed:#?}"
    );
    // A frame type the SDK does not know, after init: 0.2.189 skips it and goes on.
    let probed = sdk_query(&python, &work, &trials[..3], Some("new-frame-type"));
    assert!(probed.iter().all(|r| r["ok"] == true), "{probed:#?}");
}
