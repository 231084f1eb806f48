//! What a target offers ([`features`]) and the process one trial starts ([`Invocation`]).

use super::{qwen, version_lt, Dialect, Target};
use crate::scenario::{OutputFormat, Scenario, TargetExpect};
use crate::toolmap::ToolMap;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// What a dialect's CLIs offer: its flags, and its tools (by the neutral names of its
/// tool map where it has one). Versions that differ are told apart by the scenario's
/// version blocks (`expect.claude-code@RANGE`), not here.
pub(super) fn features(dialect: Dialect, tools: &ToolMap) -> BTreeSet<String> {
    let builtin = dialect.builtin_tools().iter().map(|t| t.to_string());
    (builtin.chain(tools.neutral_names().map(str::to_string)))
        .map(|t| format!("tool:{t}"))
        .chain(dialect.flags().iter().map(|f| f.to_string()))
        .collect()
}

/// The process to start for one trial.
#[derive(Debug, Clone)]
pub struct Invocation {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
}

impl Invocation {
    /// The command line as a person would type it (for reports).
    pub fn display(&self) -> String {
        let env: Vec<String> = self
            .env
            .iter()
            .filter(|(k, _)| {
                k.starts_with("ANTHROPIC")
                    || k == "IS_SANDBOX"
                    || k.starts_with("CLAUDE")
                    || k.starts_with("QWEN")
            })
            .map(|(k, v)| format!("{k}={}", shell_quote(v)))
            .collect();
        let mut parts = env;
        parts.push(shell_quote(&self.program.to_string_lossy()));
        parts.extend(self.args.iter().map(|a| shell_quote(a)));
        parts.join(" ")
    }
}

pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@,+%".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// Paths of one trial's sandbox.
pub struct Sandbox<'a> {
    pub workspace: &'a Path,
    pub home: &'a Path,
    pub tmp: &'a Path,
    pub base_url: &'a str,
}

impl Target {
    /// Skip reason, if this target cannot run `scenario` as expected by `expect`.
    pub fn unmet(&self, scenario: &Scenario, expect: &TargetExpect) -> Option<String> {
        if let Some(reason) = &expect.skip {
            return Some(reason.clone());
        }
        if let Some(min) = &expect.min_version {
            if version_lt(&self.version, min) {
                return Some(format!(
                    "needs {} >= {min}, have {}",
                    self.name, self.version
                ));
            }
        }
        if let Some(max) = &expect.max_version {
            if version_lt(max, &self.version) {
                return Some(format!(
                    "needs {} <= {max}, have {}",
                    self.name, self.version
                ));
            }
        }
        let missing: Vec<&String> = scenario
            .file
            .features
            .iter()
            .chain(&expect.features)
            .filter(|f| !self.features.contains(*f))
            .collect();
        if !missing.is_empty() {
            let list: Vec<&str> = missing.iter().map(|s| s.as_str()).collect();
            return Some(format!("{} lacks {}", self.name, list.join(", ")));
        }
        None
    }

    /// The command line and a from-scratch environment for one trial.
    pub fn invocation(
        &self,
        scenario: &Scenario,
        expect: &TargetExpect,
        sb: &Sandbox,
    ) -> Invocation {
        let file = &scenario.file;
        let mut args = self.lead_args.clone();
        let own = expect.args.as_ref().unwrap_or(&file.args);
        if self.dialect == Dialect::QwenCode {
            args.extend(qwen::lead_args(own));
        }
        let profile = file.client.as_ref().and_then(|c| {
            let p = crate::client::profile::get(c.profile.as_deref()?).ok()?;
            Some((p, p.argv(&c.options).ok()?))
        });
        if let Some((_, sdk_args)) = &profile {
            // The SDK's exact command line; the scenario's args come after it.
            match self.dialect {
                Dialect::QwenCode => args.extend(qwen::translate_args(sdk_args, &self.tools)),
                _ => args.extend(sdk_args.iter().cloned()),
            }
        } else if file.default_args {
            args.extend(self.default_args(scenario, expect));
        }
        match self.dialect {
            Dialect::QwenCode if expect.args.is_none() => {
                args.extend(qwen::translate_args(own, &self.tools))
            }
            _ => args.extend(own.iter().cloned()),
        }
        let mut env = self.base_env(sb);
        let sdk_env = profile.iter().flat_map(|(p, _)| &p.env);
        let target_env = self.env.iter().map(|(k, v)| (k, v)).chain(sdk_env);
        for (k, v) in target_env.chain(&file.env).chain(&expect.env) {
            env.retain(|(key, _)| key != k);
            env.push((k.clone(), v.clone()));
        }
        // Whatever a scenario says, no trial may leave loopback.
        let forced: &[(&str, &str)] = match self.dialect {
            // Without it Claude Code looks up and calls external hosts (telemetry, title
            // generation).
            Dialect::ClaudeCode => &[("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")],
            Dialect::QwenCode => qwen::FORCED_ENV,
            Dialect::Caliban => &[],
        };
        for (k, v) in forced {
            env.retain(|(key, _)| key != k);
            env.push((k.to_string(), v.to_string()));
        }
        Invocation {
            program: self.program.clone(),
            args,
            env,
        }
    }

    /// `-p PROMPT`, the input and output formats, and what the dialect needs with them.
    fn default_args(&self, scenario: &Scenario, expect: &TargetExpect) -> Vec<String> {
        let file = &scenario.file;
        let mut args = vec!["-p".to_string()];
        if let Some(prompt) = scenario.prompt(expect) {
            args.push(prompt.clone());
        }
        if scenario.uses_stdin(expect) {
            args.extend(["--input-format".into(), "stream-json".into()]);
        }
        args.extend([
            "--output-format".into(),
            file.output_format.as_flag().into(),
        ]);
        if self.dialect == Dialect::ClaudeCode && file.output_format == OutputFormat::StreamJson {
            args.push("--verbose".into());
        }
        args
    }

    /// The environment every trial of this dialect starts from, built from scratch.
    fn base_env(&self, sb: &Sandbox) -> Vec<(String, String)> {
        let mut env: Vec<(String, String)> = vec![
            (
                "PATH".into(),
                std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".into()),
            ),
            ("HOME".into(), sb.home.display().to_string()),
            ("TMPDIR".into(), sb.tmp.display().to_string()),
            ("LANG".into(), "C.UTF-8".into()),
            ("SHELL".into(), "/bin/bash".into()),
            ("TERM".into(), "dumb".into()),
            ("NO_COLOR".into(), "1".into()),
            ("USER".into(), "streamcheck".into()),
            ("ANTHROPIC_BASE_URL".into(), sb.base_url.to_string()),
            ("ANTHROPIC_API_KEY".into(), super::DUMMY_API_KEY.into()),
        ];
        match self.dialect {
            Dialect::ClaudeCode => env.extend([
                // Root may only skip permission prompts inside a declared sandbox.
                ("IS_SANDBOX".into(), "1".into()),
                (
                    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC".into(),
                    "1".into(),
                ),
                ("DISABLE_AUTOUPDATER".into(), "1".into()),
            ]),
            Dialect::Caliban => {
                for (var, sub) in [
                    ("XDG_CONFIG_HOME", ".config"),
                    ("XDG_DATA_HOME", ".local/share"),
                    ("XDG_STATE_HOME", ".local/state"),
                    ("XDG_CACHE_HOME", ".cache"),
                ] {
                    env.push((var.into(), sb.home.join(sub).display().to_string()));
                }
            }
            Dialect::QwenCode => env.extend(qwen::env()),
        }
        env
    }

    /// Writes what the CLI needs in its HOME before a trial (Qwen Code's settings file),
    /// unless the scenario wrote it itself.
    pub fn prepare_home(&self, home: &Path) -> std::io::Result<()> {
        match self.dialect {
            Dialect::QwenCode => qwen::write_settings(home),
            Dialect::ClaudeCode | Dialect::Caliban => Ok(()),
        }
    }
}
