//! Qwen Code's launch conventions: Anthropic auth from the environment, its own flags for
//! Claude Code's, and a settings file in its HOME that keeps it on loopback.

use crate::toolmap::ToolMap;
use std::path::Path;

/// The model a trial names (`-m` and `ANTHROPIC_MODEL`); the stub answers any.
pub const MODEL: &str = "claude-sonnet-4-6";

/// Set last, whatever a scenario says: no preconnect to the API host at startup.
pub const FORCED_ENV: &[(&str, &str)] = &[("QWEN_CODE_DISABLE_PRECONNECT", "1")];

/// `~/.qwen/settings.json`: no telemetry, no usage statistics, no update check.
pub const SETTINGS: &str = r#"{
  "general": {"enableAutoUpdate": false, "disableAutoUpdate": true, "disableUpdateNag": true},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false}
}
"#;

/// The environment a trial adds to the common one.
pub fn env() -> Vec<(String, String)> {
    let mut env = vec![("ANTHROPIC_MODEL".to_string(), MODEL.to_string())];
    env.extend(
        FORCED_ENV
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string())),
    );
    env
}

/// Arguments before the scenario's: the Anthropic API, and the model unless they name one.
pub fn lead_args(own: &[String]) -> Vec<String> {
    let mut args = vec!["--auth-type".to_string(), "anthropic".to_string()];
    if !own.iter().any(|a| a == "--model" || a == "-m") {
        args.extend(["-m".to_string(), MODEL.to_string()]);
    }
    args
}

/// Writes [`SETTINGS`] unless the scenario's `home_files` hold a settings file.
pub fn write_settings(home: &Path) -> std::io::Result<()> {
    let path = home.join(".qwen/settings.json");
    if path.exists() {
        return Ok(());
    }
    std::fs::create_dir_all(home.join(".qwen"))?;
    std::fs::write(path, SETTINGS)
}

/// A scenario's Claude Code flags in Qwen Code's spelling: skipping permissions is
/// `--yolo`, permission modes are approval modes, tool lists name its tools, `--max-turns`
/// is `--max-session-turns`; `--verbose` and the bypass acknowledgement have no
/// counterpart. Other flags are passed as written.
pub fn translate_args(args: &[String], tools: &ToolMap) -> Vec<String> {
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
        assert_eq!(lead_args(&[]), ["--auth-type", "anthropic", "-m", MODEL]);
        assert_eq!(
            lead_args(&strings(&["--model", "x"])),
            ["--auth-type", "anthropic"]
        );
    }
}
