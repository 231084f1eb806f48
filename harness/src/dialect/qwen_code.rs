//! Qwen Code: Claude Code's frames (read by Claude Code's adapter, tool names mapped back
//! to neutral ones), its own flags, Anthropic auth from the environment, and a settings
//! file in its HOME that keeps it on loopback. Needs Node 22 or newer: the npm package
//! `node` ships the binary.

use super::claude_code;
use super::conventions::Conventions;
use super::distribution::{Distribution, NpmPin};
use super::launch::{PrintMode, Written};
use super::neutral::{Event, Neutral};
use crate::frame::frame_kind;
use crate::toolmap::ToolMap;
use serde_json::Value;
use std::path::Path;
use std::sync::OnceLock;
use stub_api::BuiltinRule;

pub(crate) const PIN: NpmPin = NpmPin {
    target: "qwen-code",
    title: "Qwen Code",
    dir: "targets/qwen-code",
    package: "@qwen-code/qwen-code",
    bin: "qwen",
    node_entry: Some("cli-entry.js"),
    runtime: &["node@22.23.3"],
};

/// The model a trial names (`-m` and `ANTHROPIC_MODEL`); the stub answers any.
const MODEL: &str = "claude-sonnet-4-6";

/// `~/.qwen/settings.json`: no telemetry, no usage statistics, no update check.
const SETTINGS: &str = r#"{
  "general": {"enableAutoUpdate": false, "disableAutoUpdate": true, "disableUpdateNag": true},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false}
}
"#;

pub(crate) struct QwenCode;

impl Conventions for QwenCode {
    fn expect_key(&self) -> &'static str {
        PIN.target
    }

    fn title(&self) -> &'static str {
        PIN.title
    }

    fn distribution(&self) -> Distribution {
        Distribution::Npm(&PIN)
    }

    /// Its tools all have other names: `targets/qwen-code/tools.yaml` adds them.
    fn builtin_tools(&self) -> &'static [&'static str] {
        &[]
    }

    fn flags(&self) -> &'static [&'static str] {
        &[
            "partial-messages",
            "input-stream-json",
            "output-json",
            "output-text",
            "max-turns",
        ]
    }

    fn speaks_control_protocol(&self) -> bool {
        true
    }

    /// The Anthropic API, and the model unless the scenario names one.
    fn lead_args(&self, own: &[String]) -> Vec<String> {
        let mut args = vec!["--auth-type".to_string(), "anthropic".to_string()];
        if !own.iter().any(|a| a == "--model" || a == "-m") {
            args.extend(["-m".to_string(), MODEL.to_string()]);
        }
        args
    }

    fn default_args(&self, mode: &PrintMode) -> Vec<String> {
        mode.common_args()
    }

    fn translate_args(&self, args: &[String], tools: &ToolMap) -> Vec<String> {
        translate_args(args, tools)
    }

    fn env(&self, _home: &Path) -> Vec<(String, String)> {
        let mut env = vec![("ANTHROPIC_MODEL".to_string(), MODEL.to_string())];
        env.extend(
            (self.forced_env().iter()).map(|(k, v)| (k.to_string(), v.to_string())),
        );
        env
    }

    /// No preconnect to the API host at startup.
    fn forced_env(&self) -> &'static [(&'static str, &'static str)] {
        &[("QWEN_CODE_DISABLE_PRECONNECT", "1")]
    }

    fn shown_env(&self) -> &'static [&'static str] {
        &["QWEN"]
    }

    /// Writes [`SETTINGS`] unless the scenario's `home_files` hold a settings file.
    fn prepare_home(&self, home: &Path) -> std::io::Result<()> {
        let path = home.join(".qwen/settings.json");
        if path.exists() {
            return Ok(());
        }
        std::fs::create_dir_all(home.join(".qwen"))?;
        std::fs::write(path, SETTINGS)
    }

    /// Its memory-extraction request after a turn.
    fn side_request_rule(&self) -> Option<BuiltinRule> {
        Some(BuiltinRule::QwenCodeMemoryExtraction)
    }

    fn is_usage_exit(&self, code: i32) -> bool {
        code == 1
    }

    /// Its flags are translated from Claude Code's, and it reads Claude Code's frames.
    fn as_written_hints(&self, _written: &Written) -> Vec<String> {
        Vec::new()
    }

    /// Claude Code's subtypes.
    fn neutral_subtype<'a>(&self, raw: &'a str) -> &'a str {
        claude_code::neutral_subtype(raw)
    }

    fn neutral(&self, frames: &[Value]) -> Neutral {
        adapt(claude_code::Reader::default().read(frames), frames)
    }

    fn shape_differences(&self) -> &'static str {
        include_str!("qwen_code_shape.md")
    }
}

/// `targets/qwen-code/tools.yaml`, built in so a comparison of saved runs needs no checkout.
fn tools() -> &'static ToolMap {
    static MAP: OnceLock<ToolMap> = OnceLock::new();
    MAP.get_or_init(|| {
        ToolMap::parse(include_str!("../../../targets/qwen-code/tools.yaml"))
            .expect("targets/qwen-code/tools.yaml parses")
    })
}

/// Qwen Code's frames in neutral terms, given what the Claude Code adapter made of them:
/// tool calls named by the catalogue's neutral names (its `tools.yaml` read backwards), and
/// its own stream events listed by their event type.
fn adapt(mut n: Neutral, frames: &[Value]) -> Neutral {
    for event in &mut n.events {
        if let Event::ToolCall { name, .. } = event {
            if let Some(neutral) = tools().neutral_name(name) {
                *name = neutral.to_string();
            }
        }
    }
    let streamed = frames
        .iter()
        .filter(|f| frame_kind(f) == "stream_event")
        .filter_map(|f| f.pointer("/event/type").and_then(Value::as_str));
    let kinds: Vec<String> = streamed.map(|t| format!("stream_event/{t}")).collect();
    if !kinds.is_empty() {
        n.unmapped.remove("stream_event");
        n.unmapped.extend(kinds);
    }
    n
}

/// A scenario's Claude Code flags in Qwen Code's spelling: skipping permissions is
/// `--yolo`, permission modes are approval modes, tool lists name its tools, `--max-turns`
/// is `--max-session-turns`; `--verbose` and the bypass acknowledgement have no
/// counterpart. Other flags are passed as written.
fn translate_args(args: &[String], tools: &ToolMap) -> Vec<String> {
    let mut out = Vec::new();
    let mut it = args.iter().peekable();
    while let Some(arg) = it.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (arg.as_str(), None),
        };
        let value = |it: &mut std::iter::Peekable<std::slice::Iter<String>>| {
            inline
                .clone()
                .or_else(|| it.next().cloned())
                .unwrap_or_default()
        };
        match flag {
            "--dangerously-skip-permissions" => out.push("--yolo".into()),
            "--allow-dangerously-skip-permissions" | "--verbose" => {}
            "--permission-mode" => out.extend(approval_mode(&value(&mut it))),
            "--allowedTools" | "--allowed-tools" => {
                out.extend(["--allowed-tools".into(), tools.list(&value(&mut it))])
            }
            "--disallowedTools" | "--disallowed-tools" => {
                out.extend(["--exclude-tools".into(), tools.list(&value(&mut it))])
            }
            "--max-turns" => out.extend(["--max-session-turns".into(), value(&mut it)]),
            _ => out.push(arg.clone()),
        }
    }
    out
}

fn approval_mode(mode: &str) -> Vec<String> {
    let qwen = match mode {
        "bypassPermissions" => return vec!["--yolo".into()],
        "acceptEdits" => "auto-edit",
        "plan" => "plan",
        "auto" => "auto",
        _ => "default",
    };
    vec!["--approval-mode".into(), qwen.into()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(s: &[&str]) -> Vec<String> {
        s.iter().map(|a| a.to_string()).collect()
    }

    #[test]
    fn claude_code_flags_become_qwen_codes() {
        let map =
            ToolMap::parse("Bash: {name: run_shell_command}\nRead: {name: read_file}\n").unwrap();
        let t = |a: &[&str]| translate_args(&strings(a), &map);
        assert_eq!(t(&["--dangerously-skip-permissions"]), ["--yolo"]);
        assert_eq!(
            t(&[
                "--permission-mode",
                "bypassPermissions",
                "--allow-dangerously-skip-permissions"
            ]),
            ["--yolo"]
        );
        assert_eq!(
            t(&["--permission-mode=acceptEdits"]),
            ["--approval-mode", "auto-edit"]
        );
        assert_eq!(
            t(&["--allowedTools", "Bash,Read", "--max-turns", "1"]),
            [
                "--allowed-tools",
                "run_shell_command,read_file",
                "--max-session-turns",
                "1"
            ]
        );
        assert_eq!(
            t(&["--include-partial-messages", "--model", "m"]),
            ["--include-partial-messages", "--model", "m"]
        );
    }

    #[test]
    fn the_model_is_named_once() {
        assert_eq!(QwenCode.lead_args(&[]), ["--auth-type", "anthropic", "-m", MODEL]);
        assert_eq!(
            QwenCode.lead_args(&strings(&["--model", "x"])),
            ["--auth-type", "anthropic"]
        );
    }
}
