//! End to end with the real Claude Code CLI (targets/claude-code, `npm ci --prefix
//! targets/claude-code`). No network: the CLI talks to the stub on loopback only.

mod common;

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use common::script;
use serde_json::Value;
use stub_api::{Answer, JournalEntry, StubServer};
use tokio::process::Command;

/// The pinned Claude Code, installed with `npm ci` on first use (once per test binary).
fn claude() -> PathBuf {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../targets/claude-code");
    let path = dir.join("node_modules/.bin/claude");
    INSTALL.call_once(|| {
        if !path.exists() {
            eprintln!(
                "installing the pinned Claude Code (npm ci --prefix targets/claude-code) ..."
            );
            let status = std::process::Command::new("npm")
                .args(["ci", "--no-audit", "--no-fund", "--prefix"])
                .arg(&dir)
                .status()
                .expect("npm runs");
            assert!(
                status.success(),
                "npm ci --prefix targets/claude-code failed"
            );
        }
    });
    assert!(
        path.exists(),
        "Claude Code is not installed at {}; run `npm ci --prefix targets/claude-code` in the workspace root",
        path.display()
    );
    path
}

struct Run {
    status: std::process::ExitStatus,
    frames: Vec<Value>,
    stderr: String,
}

async fn run_claude(server: &StubServer, args: &[&str]) -> Run {
    let home = tempfile::tempdir().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let child = Command::new(claude())
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .env("ANTHROPIC_API_KEY", "sk-test-dummy")
        .env("IS_SANDBOX", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .current_dir(cwd.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn claude");
    // On timeout the future (and with it the child, kill_on_drop) is dropped.
    let out = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .unwrap_or_else(|_| {
            panic!(
                "claude {args:?} did not finish within 60 s; journal: {:#?}",
                server.journal()
            )
        })
        .expect("wait for claude");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let frames = stdout
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str(l).unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {l}"))
        })
        .collect();
    Run {
        status: out.status,
        frames,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn scripted(journal: &[JournalEntry]) -> Vec<&JournalEntry> {
    journal
        .iter()
        .filter(|e| matches!(e.answer, Answer::Step { .. }))
        .collect()
}

#[tokio::test]
async fn claude_says_the_scripted_text() {
    let server = StubServer::start(script(
        r#"
builtin_rules: [claude-code-session-title]
steps:
  - message: {content: [{text: "Hello from the stub!"}]}
"#,
    ))
    .await
    .unwrap();
    let run = run_claude(
        &server,
        &[
            "-p",
            "say hello",
            "--output-format",
            "stream-json",
            "--verbose",
        ],
    )
    .await;
    let result = run
        .frames
        .iter()
        .find(|f| f["type"] == "result")
        .unwrap_or_else(|| {
            panic!(
                "no result frame; frames {:#?}\nstderr {}",
                run.frames, run.stderr
            )
        });
    assert_eq!(result["result"], "Hello from the stub!", "{result:#}");
    assert_eq!(result["is_error"], false);
    assert!(run.status.success(), "{}: {}", run.status, run.stderr);
    assert!(server.unscripted().is_empty(), "{:#?}", server.unscripted());
    let journal = server.journal();
    let main = scripted(&journal);
    assert_eq!(main.len(), 1);
    assert_eq!(main[0].header("x-api-key"), Some("[redacted]"));
    let text = main[0].body()["messages"].to_string();
    assert!(text.contains("say hello"), "{text}");
}

#[tokio::test]
async fn claude_runs_the_scripted_tool_and_sends_back_its_output() {
    let server = StubServer::start(script(
        r#"
builtin_rules: [claude-code-session-title]
steps:
  - message:
      content:
        - text: "Running it."
        - tool_use: {id: toolu_e2e_1, name: Bash, input: {command: "echo tool-use-test-output", description: "echo"}}
  - match: {tool_results: [toolu_e2e_1], tool_result_contains: tool-use-test-output}
    message: {content: [{text: "The command printed: tool-use-test-output"}]}
"#,
    ))
    .await
    .unwrap();
    let run = run_claude(
        &server,
        &[
            "-p",
            "run echo",
            "--output-format",
            "stream-json",
            "--verbose",
            "--allowedTools",
            "Bash",
        ],
    )
    .await;
    assert!(
        run.status.success(),
        "{}: {}\nunscripted: {:#?}",
        run.status,
        run.stderr,
        server.unscripted()
    );
    assert!(server.unscripted().is_empty(), "{:#?}", server.unscripted());
    let journal = server.journal();
    let main = scripted(&journal);
    assert_eq!(main.len(), 2);
    let messages = main[1].body()["messages"].as_array().unwrap().clone();
    let last_user = messages.iter().rev().find(|m| m["role"] == "user").unwrap();
    let result = last_user["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "tool_result" && b["tool_use_id"] == "toolu_e2e_1")
        .unwrap_or_else(|| panic!("no tool_result for toolu_e2e_1 in {last_user:#}"));
    assert!(
        result["content"]
            .to_string()
            .contains("tool-use-test-output"),
        "{result:#}"
    );
    let final_result = run.frames.iter().find(|f| f["type"] == "result").unwrap();
    assert_eq!(
        final_result["result"],
        "The command printed: tool-use-test-output"
    );
}
