//! One scenario for CLIs whose tools differ: the catalogue names tools the way Claude Code
//! does (`Bash`, `Read`, `Write`, `Edit`, `Glob`, `Grep`: the neutral names), and a target
//! whose tools are called otherwise lists them in `targets/<target>/tools.yaml`:
//!
//! ```yaml
//! Bash: {name: run_shell_command}
//! Read: {name: read_file, input: {file_path: absolute_path}}   # neutral key -> its key
//! Edit: {name: edit, absolute: [file_path]}   # its tools take absolute paths only
//! ```
//!
//! When the stub is built for that target, the script's `tool_use` blocks are translated
//! (name and input keys), `features: [tool:Bash]` holds when the map has `Bash`, and tool
//! names in flags (`--allowedTools Bash`) are translated by the dialect. What the CLI prints
//! and sends is the target's own: each expectation is written in its target's names.

use crate::file_error::FileError;
use std::collections::BTreeMap;
use std::path::Path;
use stub_api::{Block, Response, Script};

/// Why a target's `tools.yaml` does not load.
#[derive(Debug, thiserror::Error)]
pub enum ToolMapError {
    /// The file exists but cannot be read.
    #[error(transparent)]
    Unreadable(#[from] FileError<std::io::Error>),
    /// The file is not a map of neutral names to tools.
    #[error(transparent)]
    Yaml(#[from] FileError<serde_yaml::Error>),
}

/// How one neutral tool is called by a target.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolName {
    pub name: String,
    /// Neutral input key -> the target's key; keys not listed are kept.
    #[serde(default)]
    pub input: BTreeMap<String, String>,
    /// Neutral input keys holding a path this target's tool takes only absolute: a relative
    /// path there (as Claude Code takes it, against the cwd) is put under `$WORKSPACE`.
    #[serde(default)]
    pub absolute: Vec<String>,
}

/// A target's tool map; empty for a target that uses the neutral names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolMap {
    tools: BTreeMap<String, ToolName>,
}

impl ToolMap {
    pub const FILE: &'static str = "tools.yaml";

    /// `targets/<target>/tools.yaml` under `root`; no file is the empty map.
    pub fn load(root: &Path, target: &str) -> Result<ToolMap, ToolMapError> {
        let path = root.join("targets").join(target).join(Self::FILE);
        match std::fs::read_to_string(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(ToolMap::default()),
            Err(source) => Err(ToolMapError::Unreadable(FileError::new(path, source))),
            Ok(text) => ToolMap::parse(&text)
                .map_err(|source| ToolMapError::Yaml(FileError::new(path, source))),
        }
    }

    pub fn parse(text: &str) -> Result<ToolMap, serde_yaml::Error> {
        let tools: Option<BTreeMap<String, ToolName>> = serde_yaml::from_str(text)?;
        Ok(ToolMap {
            tools: tools.unwrap_or_default(),
        })
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The neutral names this target has a tool for.
    pub fn neutral_names(&self) -> impl Iterator<Item = &str> {
        self.tools.keys().map(String::as_str)
    }

    /// The target's name for a neutral tool name; other names are kept as written.
    pub fn name<'a>(&'a self, neutral: &'a str) -> &'a str {
        self.tools.get(neutral).map_or(neutral, |t| t.name.as_str())
    }

    /// The neutral name of one of this target's tools.
    pub fn neutral_name(&self, target_name: &str) -> Option<&str> {
        let mut all = self.tools.iter();
        all.find(|(_, t)| t.name == target_name)
            .map(|(neutral, _)| neutral.as_str())
    }

    /// A comma-separated tool list (`Bash,Read`, `Bash(git:*)`) in the target's names.
    pub fn list(&self, neutral: &str) -> String {
        let one = |t: &str| match t.split_once('(') {
            Some((name, rest)) => format!("{}({rest}", self.name(name.trim())),
            None => self.name(t.trim()).to_string(),
        };
        neutral.split(',').map(one).collect::<Vec<_>>().join(",")
    }

    /// The script with every `tool_use` block naming a mapped tool renamed, its input
    /// keys too, and its relative paths made `$WORKSPACE/...` where the target wants them
    /// absolute (so translate before the sandbox paths are substituted).
    pub fn translate(&self, script: &Script) -> Script {
        let mut script = script.clone();
        if self.is_empty() {
            return script;
        }
        let steps = script.steps.iter_mut().map(|s| &mut s.response);
        let rules = script.background.iter_mut().map(|r| &mut r.response);
        for response in steps.chain(rules) {
            let Response::Message(message) = response else {
                continue;
            };
            for block in &mut message.content {
                if let Block::ToolUse(tool) = block {
                    if let Some(to) = self.tools.get(&tool.name) {
                        tool.name = to.name.clone();
                        under_workspace(&mut tool.input, &to.absolute);
                        rename_keys(&mut tool.input, &to.input);
                    }
                }
            }
        }
        script
    }
}

fn under_workspace(input: &mut serde_json::Value, keys: &[String]) {
    for key in keys {
        if let Some(serde_json::Value::String(path)) = input.get_mut(key) {
            if !path.starts_with('/') && !path.starts_with('$') {
                *path = format!("$WORKSPACE/{path}");
            }
        }
    }
}

fn rename_keys(input: &mut serde_json::Value, renames: &BTreeMap<String, String>) {
    let Some(object) = input.as_object_mut() else {
        return;
    };
    for (from, to) in renames {
        if let Some(value) = object.remove(from) {
            object.insert(to.clone(), value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAP: &str = "Bash: {name: run_shell_command}\nRead: {name: read_file, input: {file_path: absolute_path}}\n";

    #[test]
    fn tool_use_blocks_take_the_targets_names_and_input_keys() {
        let map = ToolMap::parse(MAP).unwrap();
        let script = Script::from_yaml(
            "steps:\n  - message: {content: [{text: hi}, {tool_use: {id: t1, name: Bash, input: {command: ls}}}, {tool_use: {id: t2, name: Read, input: {file_path: /a, limit: 2}}}, {tool_use: {id: t3, name: Other, input: {file_path: /b}}}]}\nbackground:\n  - name: r\n    match: {has_tools: false}\n    message: {content: [{tool_use: {id: t4, name: Bash}}]}\n",
        )
        .unwrap();
        let out = serde_json::to_value(map.translate(&script)).unwrap();
        let blocks = &out["steps"][0]["message"]["content"];
        assert_eq!(blocks[0]["text"], "hi");
        assert_eq!(blocks[1]["tool_use"]["name"], "run_shell_command");
        assert_eq!(blocks[1]["tool_use"]["input"]["command"], "ls");
        assert_eq!(blocks[2]["tool_use"]["name"], "read_file");
        assert_eq!(
            blocks[2]["tool_use"]["input"],
            serde_json::json!({"absolute_path": "/a", "limit": 2})
        );
        assert_eq!(
            blocks[3]["tool_use"]["name"], "Other",
            "unmapped names stay"
        );
        assert_eq!(blocks[3]["tool_use"]["input"]["file_path"], "/b");
        let rule = &out["background"][0]["message"]["content"][0]["tool_use"];
        assert_eq!(rule["name"], "run_shell_command");
    }

    #[test]
    fn the_empty_map_changes_nothing_and_lists_are_translated_name_by_name() {
        let script =
            Script::from_yaml("steps: [{message: {content: [{tool_use: {id: t, name: Bash}}]}}]\n")
                .unwrap();
        assert_eq!(ToolMap::default().translate(&script), script);
        let map = ToolMap::parse(MAP).unwrap();
        assert_eq!(map.list("Bash,Read"), "run_shell_command,read_file");
        assert_eq!(
            map.list("Bash(git:*),Write"),
            "run_shell_command(git:*),Write"
        );
        assert_eq!(map.neutral_names().collect::<Vec<_>>(), ["Bash", "Read"]);
        assert!(ToolMap::parse("Bash: {name: x, extra: 1}").is_err());
    }

    #[test]
    fn relative_paths_go_under_the_workspace_where_the_target_wants_them_absolute() {
        let map = ToolMap::parse("Read: {name: read_file, absolute: [file_path]}\n").unwrap();
        let script = Script::from_yaml(
            "steps:\n  - message: {content: [{tool_use: {id: a, name: Read, input: {file_path: notes.txt}}}, {tool_use: {id: b, name: Read, input: {file_path: /etc/x}}}, {tool_use: {id: c, name: Read, input: {file_path: $HOME/y}}}, {tool_use: {id: d, name: Write, input: {file_path: w.txt}}}]}\n",
        )
        .unwrap();
        let out = serde_json::to_value(map.translate(&script)).unwrap();
        let path = |i: usize| {
            out["steps"][0]["message"]["content"][i]["tool_use"]["input"]["file_path"].clone()
        };
        assert_eq!(path(0), "$WORKSPACE/notes.txt");
        assert_eq!(path(1), "/etc/x", "absolute paths stay");
        assert_eq!(path(2), "$HOME/y", "paths named by a variable stay");
        assert_eq!(path(3), "w.txt", "tools without the rule stay");
    }
}
