//! `answer_within`: a control request the CLI never answers is a hang found in seconds,
//! not at the trial's timeout. Against a fake CLI that answers `initialize` and nothing
//! else, and never exits.

mod common;

use common::{outcome, streamcheck_at, write_executable};

const FAKE: &str = r#"#!/usr/bin/env python3
import json, sys
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("type") == "control_request" and m["request"].get("subtype") == "initialize":
        print(json.dumps({"type": "control_response", "response": {"subtype": "success", "request_id": m["request_id"], "response": {}}}), flush=True)
# stdin closed: stay up, as a CLI stuck on an unanswered request does
import time
time.sleep(3600)
"#;

fn scenario(timeout: u64, deadline: &str) -> String {
    format!("description: d\nclient:\n  profile: sdk-py\n  conversation:\n    - request: {{subtype: mcp_status}}\n      as: status\nexpect:\n  claude-code:\n    frames: []\n    mode: subsequence\n    timeout: {timeout}\n{deadline}")
}

fn run(text: &str) -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("targets/claude-code")).unwrap();
    std::fs::create_dir_all(dir.path().join("scenarios/control")).unwrap();
    std::fs::write(dir.path().join("scenarios/control/silent.yaml"), text).unwrap();
    let fake = dir.path().join("fake.py");
    write_executable(&fake, FAKE);
    let mut cmd = streamcheck_at(dir.path());
    cmd.args(["run", "--target-command"])
        .arg(&fake)
        .arg("--report-dir")
        .arg(dir.path().join("reports"));
    let (code, out, err) = outcome(&mut cmd);
    assert_eq!(code, 1, "{out}{err}");
    let results = common::read_json(&dir.path().join("reports/results.json"));
    results["trials"][0].clone()
}

#[test]
fn an_unanswered_request_is_a_hang_once_its_deadline_passed() {
    let trial = run(&scenario(60, "    answer_within: 2\n"));
    assert_eq!(trial["exit"]["killed"], "unanswered", "{trial:#}");
    let text = trial["divergences"].to_string();
    assert!(text.contains("no answer within"), "{text}");
    // The request is named (the SDK contract: every request answered).
    assert!(text.contains("mcp_status"), "{text}");

    // Without a deadline the same run is only stopped by the timeout.
    let trial = run(&scenario(3, ""));
    assert_eq!(trial["exit"]["killed"], "timeout", "{trial:#}");
}
