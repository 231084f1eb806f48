//! The `stub-api` binary: serve a scenario file, log requests, write the journal on SIGTERM.

mod common;

use std::process::Stdio;
use std::time::Duration;

use common::{body, post};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_stub-api");

#[tokio::test]
async fn serve_logs_requests_and_writes_the_journal_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("scenario.yaml");
    std::fs::write(
        &scenario,
        "name: demo\nprompt: hi\nstub:\n  steps:\n    - message: {content: [{text: from-binary}]}\n",
    )
    .unwrap();
    let journal = dir.path().join("journal.ndjson");
    let mut child = Command::new(BIN)
        .args(["serve", "--script"])
        .arg(&scenario)
        .arg("--journal")
        .arg(&journal)
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let run = async {
        let first = lines.next_line().await.unwrap().unwrap();
        let url = first
            .strip_prefix("stub-api listening on ")
            .expect(&first)
            .to_string();
        let addr: std::net::SocketAddr = url.strip_prefix("http://").unwrap().parse().unwrap();
        assert!(addr.ip().is_loopback());
        let resp = post(addr, &body(false, "hi")).await;
        assert_eq!(resp.json()["content"][0]["text"], "from-binary");
        let logged = lines.next_line().await.unwrap().unwrap();
        assert_eq!(
            logged,
            "#0 POST /v1/messages?beta=true model=claude-test-1 -> step 0 [200]"
        );
        let resp = post(addr, &body(false, "again")).await;
        assert_eq!(resp.status, 400);
        let logged = lines.next_line().await.unwrap().unwrap();
        assert!(
            logged.contains("UNSCRIPTED: stub-api: no scripted response for request #2"),
            "{logged}"
        );

        let pid = child.id().unwrap().to_string();
        let killed = Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .await
            .unwrap();
        assert!(killed.success());
        let status = child.wait().await.unwrap();
        assert!(status.success(), "{status}");
    };
    tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .expect("binary test hung");
    let entries =
        stub_api::journal::read_ndjson(&std::fs::read_to_string(&journal).unwrap()).unwrap();
    assert_eq!(entries.len(), 2);
    assert_eq!(
        entries[0].answer,
        stub_api::Answer::Step { step: 0, repeat: 0 }
    );
    assert!(entries[1].is_unscripted());
}

#[tokio::test]
async fn check_reports_errors_with_locations() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.yaml");
    std::fs::write(
        &bad,
        "steps:\n  - message: {content: []}\n    http_error: {status: 500}\n",
    )
    .unwrap();
    let out = Command::new(BIN)
        .arg("check")
        .arg(&bad)
        .output()
        .await
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("found both at line 2 column 5"), "{stderr}");
    let schema = Command::new(BIN).arg("schema").output().await.unwrap();
    let schema: serde_json::Value = serde_json::from_slice(&schema.stdout).unwrap();
    assert!(schema["definitions"]["Step"].is_object());
}
