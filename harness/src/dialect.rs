//! The families of CLIs streamcheck knows: their names in scenario files (`expect:` keys,
//! `features:`), spelled once. A leaf: it imports nothing of the harness.

use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

/// The flag and environment conventions of a family of CLIs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Dialect {
    ClaudeCode,
    Caliban,
    /// Qwen Code: Claude Code's frames, its own flags, tool names and settings file.
    QwenCode,
}

impl Dialect {
    pub const ALL: [Dialect; 3] = [Dialect::ClaudeCode, Dialect::Caliban, Dialect::QwenCode];

    /// The key a scenario's `expect` uses for this dialect.
    pub fn expect_key(self) -> &'static str {
        match self {
            Dialect::ClaudeCode => "claude-code",
            Dialect::Caliban => "caliban",
            Dialect::QwenCode => "qwen-code",
        }
    }

    /// The dialect a target file or an expectation key names.
    pub fn from_key(key: &str) -> Option<Dialect> {
        Dialect::ALL.into_iter().find(|d| d.expect_key() == key)
    }

    /// Every dialect's key, for messages that list the known names.
    pub fn known_keys() -> String {
        Dialect::ALL.map(Dialect::expect_key).join(", ")
    }

    /// Tools its CLIs ship under these names (a tool map adds the ones it renames).
    pub fn builtin_tools(self) -> &'static [&'static str] {
        match self {
            Dialect::ClaudeCode => &[
                "Task",
                "Bash",
                "Edit",
                "NotebookEdit",
                "Read",
                "SendMessage",
                "Skill",
                "TaskCreate",
                "TaskGet",
                "TaskList",
                "TaskOutput",
                "TaskStop",
                "TaskUpdate",
                "WebFetch",
                "WebSearch",
                "Write",
            ],
            Dialect::Caliban => &[
                "AgentTool",
                "Bash",
                "BashOutput",
                "Edit",
                "EnterPlanMode",
                "ExitPlanMode",
                "Glob",
                "Grep",
                "KillShell",
                "MultiEdit",
                "NotebookEdit",
                "Read",
                "Skill",
                "TodoWrite",
                "ToolSearch",
                "WebFetch",
                "WebSearch",
                "Write",
            ],
            Dialect::QwenCode => &[],
        }
    }

    /// The flag features its CLIs offer (`features: [partial-messages]`).
    pub fn flags(self) -> &'static [&'static str] {
        match self {
            Dialect::ClaudeCode => &[
                "partial-messages",
                "replay-user-messages",
                "input-stream-json",
                "output-json",
                "output-text",
                "max-turns",
                "api-retry",
            ],
            Dialect::Caliban => &[
                "partial-messages",
                "replay-user-messages",
                "input-stream-json",
                "output-json",
                "output-text",
                "max-turns",
                "max-budget",
            ],
            Dialect::QwenCode => &[
                "partial-messages",
                "input-stream-json",
                "output-json",
                "output-text",
                "max-turns",
            ],
        }
    }

    /// Every feature name some dialect offers: what a scenario's `features:` may say.
    /// Tools a tool map renames keep their neutral (Claude Code or caliban) names.
    pub fn known_features() -> BTreeSet<String> {
        Dialect::ALL
            .into_iter()
            .flat_map(|d| {
                let tools = d.builtin_tools().iter().map(|t| format!("tool:{t}"));
                tools.chain(d.flags().iter().map(|f| f.to_string()))
            })
            .collect()
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.expect_key())
    }
}

impl FromStr for Dialect {
    type Err = String;

    fn from_str(s: &str) -> Result<Dialect, String> {
        Dialect::from_key(s)
            .ok_or_else(|| format!("unknown dialect `{s}` (known: {})", Dialect::known_keys()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_every_spelling() {
        for d in Dialect::ALL {
            assert_eq!(d.to_string().parse::<Dialect>(), Ok(d));
            let json = serde_json::to_string(&d).unwrap();
            assert_eq!(json, format!("\"{d}\""));
            assert_eq!(serde_json::from_str::<Dialect>(&json).unwrap(), d);
        }
        assert!("claude"
            .parse::<Dialect>()
            .unwrap_err()
            .contains("claude-code, caliban, qwen-code"));
    }

    #[test]
    fn known_features_hold_every_dialects_tools_and_flags() {
        let known = Dialect::known_features();
        for f in [
            "tool:Bash",
            "tool:Glob",
            "tool:Task",
            "partial-messages",
            "max-budget",
            "api-retry",
        ] {
            assert!(known.contains(f), "{f}");
        }
        assert!(!known.contains("tool:Bsh"));
    }
}
