//! The real TypeScript Agent SDK (`targets/claude-code/sdk/`, npm, paired with the pinned
//! CLI) against the pinned Claude Code and stub-api, through a wrapper that records the
//! argv, environment and stdin the SDK gives the CLI:
//! - `profile::sdk-ts`: what the SDK does equals the `sdk-ts` client profile;
//! - `e2e::query-can-use-tool-sdk-mcp`: `query()` with a `canUseTool` callback and an
//!   in-process MCP tool gets the scripted answer.
//!
//! The SDK and the pinned Claude Code are installed first when missing (`npm ci`, as
//! `.ci/run` would); both fail, naming why, when that install fails.

mod common;

use common::{repo, write_executable};
use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use streamcheck::client::profile;
use stub_api::{Script, StubServer};

fn sdk_dir() -> PathBuf {
    repo().join("targets/claude-code/sdk/node_modules")
}

fn missing() -> Option<String> {
    let sdk = sdk_dir().join("@anthropic-ai/claude-agent-sdk/sdk.mjs");
    let cli = repo().join("targets/claude-code/node_modules/.bin/claude");
    if !sdk.exists() {
        return Some("the TypeScript SDK is not installed: npm ci --omit=optional --prefix targets/claude-code/sdk".into());
    }
    if !cli.exists() {
        return Some("Claude Code is not installed: npm ci --prefix targets/claude-code".into());
    }
    None
}

/// What one SDK run left: argv, env, the ordered stdin/stdout transcript, the driver's summary.
struct SdkRun {
    argv: Vec<String>,
    env: BTreeMap<String, String>,
    transcript: Vec<Value>,
    summary: Value,
}

fn run_sdk(prompt: &str, mcp: bool, partial: bool, script: &str) -> Result<SdkRun, Failed> {
    // The stub serves from its own worker threads while node runs.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let script = Script::from_yaml(script).map_err(|e| e.to_string())?;
    let server = rt
        .block_on(StubServer::start(script))
        .map_err(|e| e.to_string())?;
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let base = dir.path().canonicalize().unwrap();
    let (home, ws) = (base.join("home"), base.join("ws"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&ws).unwrap();
    let wrapper = write_wrapper(&base);
    let driver = json!({
        "sdk": sdk_dir().join("@anthropic-ai/claude-agent-sdk").display().to_string(),
        "zod": sdk_dir().join("zod/index.js").display().to_string(),
        "cli": wrapper.display().to_string(),
        "cwd": ws.display().to_string(),
        "prompt": prompt, "mcp": mcp, "partial": partial,
        "env": {
            "PATH": std::env::var("PATH").unwrap_or_default(),
            "HOME": home.display().to_string(),
            "ANTHROPIC_BASE_URL": server.base_url(),
            "ANTHROPIC_API_KEY": "sk-ant-streamcheck-dummy-key",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "IS_SANDBOX": "1",
        },
    });
    // A hung SDK or CLI must not hang the test run.
    let out = std::process::Command::new("timeout")
        .args(["--kill-after=5", "120", "node"])
        .arg(common::fixture_root("sdk").join("drive.mjs"))
        .env("DRIVER", driver.to_string())
        .current_dir(&ws)
        .output()
        .map_err(|e| format!("node: {e}"))?;
    rt.block_on(server.shutdown());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let summary: Value = stdout
        .lines()
        .last()
        .and_then(|l| serde_json::from_str(l).ok())
        .ok_or_else(|| {
            format!(
                "driver failed: {stdout}\n{}",
                String::from_utf8_lossy(&out.stderr)
            )
        })?;
    Ok(read_run(&base, summary))
}

/// A CLI wrapper that records its argv and env into `base`, then runs the pinned CLI
/// under the transcript recorder.
fn write_wrapper(base: &Path) -> PathBuf {
    let wrapper = base.join("claude-wrapper.sh");
    let recorder = common::fixture_root("control").join("record-cli.py");
    write_executable(
        &wrapper,
        &format!(
            "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\0' \"$a\"; done > '{b}/argv'\nenv -0 > '{b}/env'\nexport RECORD_CLI='{cli}' RECORD_OUT='{b}/transcript.jsonl'\nexec python3 '{rec}' \"$@\"\n",
            b = base.display(),
            cli = repo().join("targets/claude-code/node_modules/.bin/claude").display(),
            rec = recorder.display(),
        ),
    );
    wrapper
}

/// What the wrapper and the recorder left in `base`.
fn read_run(base: &Path, summary: Value) -> SdkRun {
    let read = |name: &str| std::fs::read(base.join(name)).unwrap_or_default();
    let split0 = |b: Vec<u8>| -> Vec<String> {
        b.split(|c| *c == 0)
            .filter(|s| !s.is_empty())
            .map(|s| String::from_utf8_lossy(s).into_owned())
            .collect()
    };
    let env = split0(read("env"))
        .into_iter()
        .filter_map(|kv| {
            kv.split_once('=')
                .map(|(k, v)| (k.to_string(), v.to_string()))
        })
        .collect();
    let transcript = String::from_utf8_lossy(&read("transcript.jsonl"))
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    SdkRun {
        argv: split0(read("argv")),
        env,
        transcript,
        summary,
    }
}

const HELLO: &str = "steps:\n  - message: {content: [{text: \"Hello!\"}]}\nbuiltin_rules: [claude-code-session-title]\n";

fn profile_matches_the_real_sdk() -> Result<(), Failed> {
    let run = run_sdk("say hello", false, true, HELLO)?;
    let p = profile::get("sdk-ts")?;
    let opts: BTreeMap<String, Value> = [
        ("max_turns".to_string(), json!(3)),
        ("can_use_tool".to_string(), json!(true)),
        ("include_partial_messages".to_string(), json!(true)),
    ]
    .into();
    let mut problems = Vec::new();
    let want = p.argv(&opts)?;
    if run.argv != want {
        problems.push(format!(
            "argv:\n  SDK:     {:?}\n  profile: {want:?}",
            run.argv
        ));
    }
    for (k, v) in &p.env {
        if run.env.get(k) != Some(v) {
            problems.push(format!("env {k}: SDK {:?}, profile {v:?}", run.env.get(k)));
        }
    }
    let ins: Vec<Value> = run
        .transcript
        .iter()
        .filter(|e| e["dir"] == "in")
        .filter_map(|e| serde_json::from_str(e["line"].as_str()?).ok())
        .collect();
    let init = ins.first().cloned().unwrap_or_default();
    if init["request"] != p.initialize(None) {
        problems.push(format!(
            "initialize: SDK {}, profile {}",
            init["request"],
            p.initialize(None)
        ));
    }
    let user = ins.get(1).cloned().unwrap_or_default();
    if user != p.user_frame(&json!("say hello")) {
        problems.push(format!(
            "user frame: SDK {user}, profile {}",
            p.user_frame(&json!("say hello"))
        ));
    }
    problems.extend(transcript_problems(&run, p));
    if run.summary["result"]["subtype"] != "success" {
        problems.push(format!("the SDK's run did not succeed: {}", run.summary));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n").into())
    }
}

/// How the SDK ordered its first lines and named its request ids, against the profile.
fn transcript_problems(run: &SdkRun, p: &profile::Profile) -> Vec<String> {
    let mut problems = Vec::new();
    let first_out = run.transcript.iter().position(|e| e["dir"] == "out");
    let second_in = run
        .transcript
        .iter()
        .enumerate()
        .filter(|(_, e)| e["dir"] == "in")
        .nth(1)
        .map(|(i, _)| i);
    let pipelined = matches!((second_in, first_out), (Some(i), Some(o)) if i < o);
    if pipelined != (p.handshake == profile::Handshake::Pipelined) {
        problems.push(format!(
            "handshake: the SDK pipelined the prompt: {pipelined}, profile {:?}",
            p.handshake
        ));
    }
    let id = run
        .transcript
        .last()
        .and_then(|e| e["client_ids"][0].as_str())
        .unwrap_or_default();
    let ts_id = !id.is_empty()
        && id.len() <= 13
        && id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    if ts_id != (p.request_id == profile::RequestIdStyle::Typescript) {
        problems.push(format!(
            "request id {id:?} does not have the profile's {:?} form",
            p.request_id
        ));
    }
    problems
}

fn query_gets_the_scripted_answer() -> Result<(), Failed> {
    let script = "steps:\n  - message: {content: [{tool_use: {id: toolu_1, name: mcp__calc__add, input: {a: 40, b: 2}}}]}\n  - match: {tool_results: [toolu_1]}\n    message: {content: [{text: \"The sum is 42.\"}]}\nbuiltin_rules: [claude-code-session-title]\n";
    let run = run_sdk("CALC please", true, false, script)?;
    let s = &run.summary;
    let want = json!({
        "result": {"subtype": "success", "is_error": false, "result": "The sum is 42."},
        "canUseTool": [{"name": "mcp__calc__add", "input": {"a": 40, "b": 2}}],
        "toolCalls": [{"a": 40, "b": 2}],
        "toolResult": [{"type": "text", "text": "42"}],
    });
    for key in ["result", "canUseTool", "toolCalls", "toolResult"] {
        if s[key] != want[key] {
            return Err(format!("{key}: got {}, want {}\n{s}", s[key], want[key]).into());
        }
    }
    Ok(())
}

/// Installs what [`missing`] names; listing the tests installs nothing.
fn install() -> Result<(), String> {
    let npm = |args: &[&str]| {
        let status = std::process::Command::new("npm")
            .args(args)
            .current_dir(repo())
            .status()
            .map_err(|e| format!("npm {args:?}: {e}"))?;
        status
            .success()
            .then_some(())
            .ok_or(format!("npm {args:?} failed ({status})"))
    };
    if missing().is_some_and(|m| m.contains("SDK")) {
        npm(&[
            "ci",
            "--omit=optional",
            "--no-audit",
            "--no-fund",
            "--prefix",
            "targets/claude-code/sdk",
        ])?;
    }
    if missing().is_some() {
        npm(&[
            "ci",
            "--no-audit",
            "--no-fund",
            "--prefix",
            "targets/claude-code",
        ])?;
    }
    missing().map_or(Ok(()), Err)
}

fn main() {
    let args = Arguments::from_args();
    let unusable = if args.list { None } else { install().err() };
    if let Some(why) = &unusable {
        eprintln!("sdk_ts: cannot run: {why}");
    }
    let wrap = |f: fn() -> Result<(), Failed>| {
        let why = unusable.clone();
        move || match &why {
            Some(why) => Err(Failed::from(format!("not installed: {why}"))),
            None => f(),
        }
    };
    let trials = vec![
        Trial::test("profile::sdk-ts", wrap(profile_matches_the_real_sdk)),
        Trial::test(
            "e2e::query-can-use-tool-sdk-mcp",
            wrap(query_gets_the_scripted_answer),
        ),
    ];
    libtest_mimic::run(&args, trials).exit();
}
