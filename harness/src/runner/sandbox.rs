//! A trial's sandbox: a fresh temp dir holding the CLI's working directory (`work`), its
//! HOME (`home`) and TMPDIR (`tmp`), with the scenario's files written in, and the stub
//! script as this sandbox needs it. The benchmark builds its bare runs with it too, so a
//! bare run and a trial see the same layout.

use crate::dialect::Dialect;
use crate::pattern::Vars;
use crate::plan::launch as invocation;
use crate::process_group;
use crate::scenario::{FileContent, Scenario};
use crate::toolmap::ToolMap;
use std::fmt;
use std::path::{Path, PathBuf};
use stub_api::Script;
use tempfile::TempDir;

/// How long one `setup:` command may take.
const SETUP_LIMIT: std::time::Duration = std::time::Duration::from_secs(120);

/// The sandbox on disk; removed when dropped.
#[derive(Debug)]
pub struct SandboxDir {
    _dir: TempDir,
    pub workspace: PathBuf,
    pub home: PathBuf,
    pub tmp: PathBuf,
}

/// A sandbox that could not be made: what was being done, and why it failed.
#[derive(Debug)]
pub struct SandboxError {
    pub what: String,
    pub source: std::io::Error,
}

impl fmt::Display for SandboxError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}: {}", self.what, self.source)
    }
}

impl std::error::Error for SandboxError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

fn failed(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> SandboxError {
    let what = what.into();
    move |source| SandboxError { what, source }
}

impl SandboxDir {
    /// Makes the temp dir and its three folders, and writes the scenario's `files` into
    /// `work` and its `home_files` into `home`.
    pub fn create(scenario: &Scenario) -> Result<SandboxDir, SandboxError> {
        let dir = tempfile::Builder::new()
            .prefix("streamcheck-")
            .tempdir()
            .map_err(failed("cannot create the trial's temp dir"))?;
        // The CLI reports its cwd resolved; compare against the same spelling.
        let base = dir.path().canonicalize().map_err(failed("temp dir"))?;
        let sandbox = SandboxDir {
            workspace: base.join("work"),
            home: base.join("home"),
            tmp: base.join("tmp"),
            _dir: dir,
        };
        for d in [&sandbox.workspace, &sandbox.home, &sandbox.tmp] {
            std::fs::create_dir_all(d).map_err(failed("cannot create the sandbox"))?;
        }
        let files = scenario
            .file
            .files
            .iter()
            .map(|f| (&sandbox.workspace, "files", f));
        let home_files =
            (scenario.file.home_files.iter()).map(|f| (&sandbox.home, "home_files", f));
        for (dir, field, (name, content)) in files.chain(home_files) {
            write_file(dir, field, name, content)?;
        }
        for command in &scenario.file.setup {
            sandbox.run_setup(command)?;
        }
        Ok(sandbox)
    }

    /// One `setup:` command, in the workspace, with the sandbox's HOME and TMPDIR. Anything
    /// it leaves running is killed when it exits.
    fn run_setup(&self, command: &str) -> Result<(), SandboxError> {
        let what = format!("setup command `{command}`");
        let mut sh = process_group::piped("sh");
        sh.args(["-c", command])
            .current_dir(&self.workspace)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("TMPDIR", &self.tmp);
        let out =
            process_group::run_blocking(sh, Some(SETUP_LIMIT)).map_err(failed(what.clone()))?;
        let why = match out.status {
            Some(status) if status.success() => return Ok(()),
            Some(status) => status.to_string(),
            None => format!("not done within {}s (killed)", SETUP_LIMIT.as_secs()),
        };
        let stderr = String::from_utf8_lossy(&out.stderr);
        Err(SandboxError {
            what,
            source: std::io::Error::other(format!("{why}; stderr: {}", stderr.trim())),
        })
    }

    /// The paths patterns and the stub script name as `$WORKSPACE` and `$HOME`.
    pub fn vars(&self) -> Vars {
        Vars {
            workspace: self.workspace.display().to_string(),
            home: self.home.display().to_string(),
        }
    }

    /// The scenario's stub script for this sandbox: its paths substituted, its tools named
    /// as the target names them, and the built-in rule that answers the dialect's own side
    /// request (Claude Code's session title, Qwen Code's memory extraction).
    pub fn stub_script(&self, scenario: &Scenario, dialect: Dialect, tools: &ToolMap) -> Script {
        with_paths(
            &crate::plan::stub::script(scenario, dialect, tools),
            &self.vars(),
        )
    }

    /// What a target's invocation needs of the sandbox, with the stub's address.
    pub fn for_target<'a>(&'a self, base_url: &'a str) -> invocation::Sandbox<'a> {
        invocation::Sandbox {
            workspace: &self.workspace,
            home: &self.home,
            tmp: &self.tmp,
            base_url,
        }
    }
}

fn write_file(
    dir: &Path,
    field: &str,
    name: &str,
    content: &FileContent,
) -> Result<(), SandboxError> {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(failed("cannot create a scenario file's folder"))?;
    }
    std::fs::write(&path, content.bytes()).map_err(failed(format!("cannot write {field}.{name}")))
}

/// The stub script with `$WORKSPACE` and `$HOME` replaced in its strings, so a
/// scripted tool call can name an absolute path inside the trial's sandbox.
pub fn with_paths(script: &Script, vars: &Vars) -> Script {
    fn walk(v: &mut serde_json::Value, vars: &Vars) {
        match v {
            serde_json::Value::String(s) if s.contains('$') => *s = vars.substitute(s),
            serde_json::Value::Array(a) => a.iter_mut().for_each(|x| walk(x, vars)),
            serde_json::Value::Object(m) => m.values_mut().for_each(|x| walk(x, vars)),
            _ => {}
        }
    }
    let Ok(mut value) = serde_json::to_value(script) else {
        return script.clone();
    };
    walk(&mut value, vars);
    serde_json::from_value(value).unwrap_or_else(|_| script.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use stub_api::BuiltinRule;

    fn bash_scenario() -> Scenario {
        Scenario::parse(
            "description: d\nprompt: p\nstub:\n  steps:\n    - message: {content: [{tool_use: {id: t1, name: Bash, input: {command: ls}}}]}\nexpect: {qwen-code: {}}\n",
            Path::new("scenarios/x.yaml"),
            Path::new("scenarios"),
        )
        .unwrap()
    }

    #[test]
    fn the_stub_script_names_the_sandbox_paths() {
        let scenario = Scenario::parse(
            "description: d\nprompt: p\nfiles: {a/b.txt: hi}\nhome_files: {.cfg: x}\nstub:\n  steps:\n    - message: {content: [{text: \"open $WORKSPACE/a/b.txt in $HOME\"}]}\nexpect: {claude-code: {}}\n",
            Path::new("scenarios/x.yaml"),
            Path::new("scenarios"),
        )
        .unwrap();
        let sandbox = SandboxDir::create(&scenario).unwrap();
        assert_eq!(
            std::fs::read_to_string(sandbox.workspace.join("a/b.txt")).unwrap(),
            "hi"
        );
        assert!(sandbox.home.join(".cfg").exists() && sandbox.tmp.is_dir());
        let script = serde_json::to_string(&sandbox.stub_script(
            &scenario,
            Dialect::ClaudeCode,
            &ToolMap::default(),
        ))
        .unwrap();
        let vars = sandbox.vars();
        assert!(script.contains(&format!("open {}/a/b.txt in {}", vars.workspace, vars.home)));
        let title = BuiltinRule::ClaudeCodeSessionTitle;
        assert!(sandbox
            .stub_script(&scenario, Dialect::ClaudeCode, &ToolMap::default())
            .builtin_rules
            .contains(&title));
        assert!(!sandbox
            .stub_script(&scenario, Dialect::Caliban, &ToolMap::default())
            .builtin_rules
            .contains(&title));
        let qwen = ToolMap::parse("Bash: {name: run_shell_command}").unwrap();
        let script = sandbox.stub_script(&bash_scenario(), Dialect::QwenCode, &qwen);
        let json = serde_json::to_string(&script).unwrap();
        assert!(json.contains(r#""name":"run_shell_command""#) && !json.contains("Bash"));
        assert!(script
            .builtin_rules
            .contains(&BuiltinRule::QwenCodeMemoryExtraction));
        let root = sandbox.workspace.parent().unwrap().to_path_buf();
        drop(sandbox);
        assert!(!root.exists(), "the sandbox is removed with its owner");
    }

    fn with_setup(setup: &str) -> Result<Scenario, crate::scenario::ScenarioError> {
        Scenario::parse(
            &format!("description: d\nprompt: p\nfiles: {{a.txt: hi}}\nsetup: {setup}\nexpect: {{claude-code: {{}}}}\n"),
            Path::new("scenarios/x.yaml"),
            Path::new("scenarios"),
        )
    }

    #[test]
    fn setup_commands_run_in_the_workspace_after_the_files_with_the_sandbox_home() {
        let scenario = with_setup(r#"["cat a.txt > b.txt", "echo \"$HOME\" > home.txt"]"#).unwrap();
        let sandbox = SandboxDir::create(&scenario).unwrap();
        let read = |name: &str| std::fs::read_to_string(sandbox.workspace.join(name)).unwrap();
        assert_eq!(read("b.txt"), "hi");
        assert_eq!(read("home.txt").trim(), sandbox.home.display().to_string());
    }

    #[test]
    fn a_setup_command_that_leaves_a_process_running_does_not_hold_the_trial() {
        // Its sleep holds the pipes the setup's stderr is read from.
        let scenario = with_setup(r#"["sleep 994.5678 & echo started"]"#).unwrap();
        SandboxDir::create(&scenario).unwrap();
        let left = crate::process_group::testing::left_running("sleep 994.5678");
        assert_eq!(left, Vec::<String>::new());
    }

    #[test]
    fn a_failing_setup_command_is_an_error_naming_it_and_its_stderr() {
        let scenario = with_setup(r#"["true", "echo broken >&2; exit 3", "touch never"]"#).unwrap();
        let err = SandboxDir::create(&scenario).unwrap_err().to_string();
        assert!(
            err.starts_with(
                "setup command `echo broken >&2; exit 3`: exit status: 3; stderr: broken"
            ),
            "{err}"
        );
        let err = with_setup(r#"["true", " "]"#).unwrap_err().to_string();
        assert!(err.contains("setup[1]: an empty command"), "{err}");
    }
}
