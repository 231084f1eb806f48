//! Targets: how to install, version, point at the stub and invoke one CLI.
//!
//! To add a target: give it a [`Dialect`] (how its flags and env look) and a
//! [`Source`] (where its binary comes from), then parse its name in [`TargetSpec::parse`].

use crate::scenario::{OutputFormat, Scenario, TargetExpect};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The pinned Claude Code lives here (package.json + package-lock.json, `npm ci`).
pub const CLAUDE_CODE_DIR: &str = "targets/claude-code";
pub const CLAUDE_CODE_PACKAGE: &str = "@anthropic-ai/claude-code";
pub const CALIBAN_VERSION: &str = "0.15.0";
/// A key that looks real enough for the CLI, and is worth nothing anywhere.
pub const DUMMY_API_KEY: &str = "sk-ant-streamcheck-dummy-key";

/// The flag and environment conventions of a family of CLIs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    ClaudeCode,
    Caliban,
}

impl Dialect {
    /// The key a scenario's `expect` uses for this dialect.
    pub fn expect_key(self) -> &'static str {
        match self {
            Dialect::ClaudeCode => "claude-code",
            Dialect::Caliban => "caliban",
        }
    }
}

/// Where a target's binary comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The Claude Code pinned in `targets/claude-code/package-lock.json`.
    PinnedNpm,
    /// Another Claude Code version from npm, installed side by side in the cache ([`Project::cache_dir`]).
    Npm { version: String },
    /// caliban from crates.io, built with `cargo install` into the cache.
    Cargo { version: String },
    /// Any executable that follows the dialect's conventions, with extra environment.
    Command {
        path: PathBuf,
        env: Vec<(String, String)>,
    },
}

/// A target as named on the command line: `claude-code`, `claude-code@2.1.330`,
/// `caliban`, `caliban@0.15.0`, or a command given with `--target-command`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetSpec {
    pub name: String,
    pub dialect: Dialect,
    pub source: Source,
}

impl TargetSpec {
    pub fn parse(s: &str) -> Result<TargetSpec, String> {
        if s.ends_with(".yaml") || s.ends_with(".yml") {
            return TargetSpec::from_file(Path::new(s));
        }
        let (base, version) = match s.split_once('@') {
            Some((b, v)) if !v.is_empty() => (b, Some(v.to_string())),
            Some(_) => return Err(format!("`{s}`: give a version after `@`")),
            None => (s, None),
        };
        match base {
            "claude-code" => Ok(TargetSpec {
                name: s.to_string(),
                dialect: Dialect::ClaudeCode,
                source: match version {
                    None => Source::PinnedNpm,
                    Some(version) => Source::Npm { version },
                },
            }),
            "caliban" => {
                let version = version.unwrap_or_else(|| CALIBAN_VERSION.to_string());
                Ok(TargetSpec {
                    name: format!("caliban@{version}").replace(&format!("@{CALIBAN_VERSION}"), ""),
                    dialect: Dialect::Caliban,
                    source: Source::Cargo { version },
                })
            }
            other => Err(format!(
                "unknown target `{other}`: use claude-code, claude-code@VERSION, caliban, caliban@VERSION, or --target-command PATH"
            )),
        }
    }

    /// A target file: `{name, command, dialect: claude-code|caliban, env: {..}}`, the
    /// command relative to the file.
    pub fn from_file(path: &Path) -> Result<TargetSpec, String> {
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct TargetFile {
            name: String,
            command: PathBuf,
            #[serde(default)]
            dialect: Option<String>,
            #[serde(default)]
            env: std::collections::BTreeMap<String, String>,
        }
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let file: TargetFile =
            serde_yaml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        let dialect = match file.dialect.as_deref() {
            None | Some("claude-code") => Dialect::ClaudeCode,
            Some("caliban") => Dialect::Caliban,
            Some(other) => {
                return Err(format!(
                    "{}: unknown dialect `{other}` (claude-code, caliban)",
                    path.display()
                ))
            }
        };
        let base = path.parent().unwrap_or(Path::new("."));
        Ok(TargetSpec {
            name: file.name,
            dialect,
            source: Source::Command {
                path: base.join(file.command),
                env: file.env.into_iter().collect(),
            },
        })
    }

    /// A CLI at `path` that speaks Claude Code's conventions (a wrapper, a fork).
    pub fn command(path: &Path, dialect: Dialect) -> TargetSpec {
        let stem = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "command".into());
        TargetSpec {
            name: format!("command:{stem}"),
            dialect,
            source: Source::Command {
                path: path.to_path_buf(),
                env: Vec::new(),
            },
        }
    }
}

impl fmt::Display for TargetSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

/// A target ready to run: its binary exists and its version is known.
#[derive(Debug, Clone)]
pub struct Target {
    pub name: String,
    pub dialect: Dialect,
    pub program: PathBuf,
    pub version: String,
    pub features: BTreeSet<String>,
    /// Scenario id -> why this target is known to diverge there (WPT-style expectations).
    pub known: BTreeMap<String, String>,
    /// Extra environment from a target file.
    pub env: Vec<(String, String)>,
}

/// Why a target cannot run; its scenarios are skipped with this.
#[derive(Debug, Clone)]
pub struct NotInstalled {
    pub target: String,
    pub reason: String,
    /// The command that installs it.
    pub install: String,
}

impl fmt::Display for NotInstalled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} is not available: {} (install: {})",
            self.target, self.reason, self.install
        )
    }
}

/// Where the project keeps targets and caches.
#[derive(Debug, Clone)]
pub struct Project {
    pub root: PathBuf,
}

impl Project {
    /// The folder holding `scenarios/`, from `start` upwards.
    pub fn discover(start: &Path) -> Option<Project> {
        start
            .ancestors()
            .find(|d| d.join("scenarios").is_dir() && d.join(CLAUDE_CODE_DIR).is_dir())
            .map(|d| Project {
                root: d.to_path_buf(),
            })
    }

    pub fn scenarios_dir(&self) -> PathBuf {
        self.root.join("scenarios")
    }

    /// Where other CLI versions and caliban are installed, shared by every checkout on
    /// the machine: `$STREAMCHECK_CACHE`, else `$XDG_CACHE_HOME/streamcheck`, else
    /// `~/.cache/streamcheck` (`.cache/` in the project when there is no home at all).
    pub fn cache_dir(&self) -> PathBuf {
        let var = |name: &str| std::env::var_os(name).map(PathBuf::from);
        cache_dir_of(var("STREAMCHECK_CACHE"), var("XDG_CACHE_HOME"), var("HOME"))
            .unwrap_or_else(|| self.root.join(".cache"))
    }
}

/// [`Project::cache_dir`] from its environment variables. An empty or relative
/// `XDG_CACHE_HOME` is ignored, as the XDG specification says.
fn cache_dir_of(
    own: Option<PathBuf>,
    xdg: Option<PathBuf>,
    home: Option<PathBuf>,
) -> Option<PathBuf> {
    let set = |p: Option<PathBuf>| p.filter(|p| !p.as_os_str().is_empty());
    set(own)
        .or_else(|| {
            set(xdg)
                .filter(|p| p.is_absolute())
                .map(|p| p.join("streamcheck"))
        })
        .or_else(|| set(home).map(|h| h.join(".cache/streamcheck")))
}

/// Installs a target when `install` allows it and it is missing, then reads its version.
pub fn resolve(
    spec: &TargetSpec,
    project: &Project,
    install: bool,
) -> Result<Target, NotInstalled> {
    let not = |reason: String, cmd: String| NotInstalled {
        target: spec.name.clone(),
        reason,
        install: cmd,
    };
    let (program, version) = match &spec.source {
        Source::PinnedNpm => {
            let dir = project.root.join(CLAUDE_CODE_DIR);
            let cmd = format!("npm ci --prefix {CLAUDE_CODE_DIR}");
            let program = dir.join("node_modules/.bin/claude");
            if !program.exists() {
                if !install {
                    return Err(not("not installed".into(), cmd));
                }
                eprintln!("streamcheck: installing the pinned Claude Code ({cmd}) ...");
                run_install(
                    Command::new("npm")
                        .args(["ci", "--no-audit", "--no-fund", "--prefix"])
                        .arg(&dir),
                )
                .map_err(|e| not(e, cmd.clone()))?;
            }
            let version = npm_package_version(&dir).map_err(|e| not(e, cmd))?;
            (program, version)
        }
        Source::Npm { version } => {
            let dir = project.cache_dir().join(format!("claude-code@{version}"));
            let cmd =
                format!("streamcheck run --target claude-code@{version} (without --no-install)");
            let program = dir.join("node_modules/.bin/claude");
            if !program.exists() {
                if !install {
                    return Err(not("not installed".into(), cmd));
                }
                eprintln!(
                    "streamcheck: installing Claude Code {version} from npm into {} ...",
                    dir.display()
                );
                std::fs::create_dir_all(&dir).map_err(|e| not(e.to_string(), cmd.clone()))?;
                std::fs::write(dir.join("package.json"), "{\"private\":true}\n")
                    .map_err(|e| not(e.to_string(), cmd.clone()))?;
                run_install(
                    Command::new("npm")
                        .args([
                            "install",
                            "--no-audit",
                            "--no-fund",
                            "--save-exact",
                            "--prefix",
                        ])
                        .arg(&dir)
                        .arg(format!("{CLAUDE_CODE_PACKAGE}@{version}")),
                )
                .map_err(|e| not(e, cmd.clone()))?;
            }
            let installed = npm_package_version(&dir).map_err(|e| not(e, cmd))?;
            (program, installed)
        }
        Source::Cargo { version } => {
            let dir = project.cache_dir().join(format!("caliban@{version}"));
            let cmd = format!(
                "cargo install caliban --version {version} --locked --no-default-features --root {}",
                dir.display()
            );
            let program = dir.join("bin/caliban");
            if !program.exists() {
                if !install {
                    return Err(not("not built yet".into(), cmd));
                }
                eprintln!("streamcheck: building caliban {version} from crates.io (20-25 minutes on 2 cores, once) ...");
                run_install(
                    Command::new("cargo")
                        .args([
                            "install",
                            "caliban",
                            "--version",
                            version,
                            "--locked",
                            "--no-default-features",
                            "--root",
                        ])
                        .arg(&dir),
                )
                .map_err(|e| not(e, cmd.clone()))?;
            }
            (program, version.clone())
        }
        Source::Command { path, .. } => {
            // Trials run in their own working directory: make the path absolute.
            let path = std::fs::canonicalize(path)
                .map_err(|e| not(format!("{}: {e}", path.display()), "-".into()))?;
            let version = command_version(&path).unwrap_or_else(|| "unknown".into());
            (path, version)
        }
    };
    let known = load_known(project, spec.dialect).map_err(|e| not(e, "-".into()))?;
    Ok(Target {
        name: spec.name.clone(),
        dialect: spec.dialect,
        program,
        version,
        features: features(spec.dialect),
        known,
        env: match &spec.source {
            Source::Command { env, .. } => env.clone(),
            _ => Vec::new(),
        },
    })
}

/// `targets/<dialect>/known-divergences.yaml`: scenario id -> reason. Missing file: none.
fn load_known(project: &Project, dialect: Dialect) -> Result<BTreeMap<String, String>, String> {
    let path = project.root.join(known_file(dialect));
    match std::fs::read_to_string(&path) {
        Err(_) => Ok(BTreeMap::new()),
        Ok(text) if text.trim().is_empty() => Ok(BTreeMap::new()),
        Ok(text) => serde_yaml::from_str(&text).map_err(|e| {
            format!(
                "{}: {e} (write `scenario/id: reason` lines)",
                path.display()
            )
        }),
    }
}

fn known_file(dialect: Dialect) -> String {
    format!("targets/{}/known-divergences.yaml", dialect.expect_key())
}

fn run_install(cmd: &mut Command) -> Result<(), String> {
    let status = cmd
        .stdin(std::process::Stdio::null())
        .status()
        .map_err(|e| format!("cannot run the installer: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("the installer failed ({status})"))
    }
}

fn npm_package_version(prefix: &Path) -> Result<String, String> {
    let manifest = prefix
        .join("node_modules")
        .join(CLAUDE_CODE_PACKAGE)
        .join("package.json");
    let text = std::fs::read_to_string(&manifest)
        .map_err(|e| format!("cannot read {}: {e}", manifest.display()))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", manifest.display()))?;
    v["version"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| format!("{} has no version", manifest.display()))
}

fn command_version(path: &Path) -> Option<String> {
    let out = Command::new(path)
        .arg("--version")
        .env_clear()
        .stdin(std::process::Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.split_whitespace()
        .find(|w| w.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .map(str::to_string)
}

/// What a dialect's CLIs offer. Versions that differ are told apart with
/// `min_version` / `max_version` in the scenario, not here.
fn features(dialect: Dialect) -> BTreeSet<String> {
    let (tools, flags): (&[&str], &[&str]) = match dialect {
        Dialect::ClaudeCode => (
            &[
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
            &[
                "partial-messages",
                "replay-user-messages",
                "input-stream-json",
                "output-json",
                "output-text",
                "max-turns",
                "api-retry",
            ],
        ),
        Dialect::Caliban => (
            &[
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
            &[
                "partial-messages",
                "replay-user-messages",
                "input-stream-json",
                "output-json",
                "output-text",
                "max-turns",
                "max-budget",
            ],
        ),
    };
    tools
        .iter()
        .map(|t| format!("tool:{t}"))
        .chain(flags.iter().map(|f| f.to_string()))
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
                k.starts_with("ANTHROPIC") || k == "IS_SANDBOX" || k.starts_with("CLAUDE")
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
    /// Where this target's known divergences are listed.
    pub fn known_file(&self) -> String {
        known_file(self.dialect)
    }

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
        let mut args = Vec::new();
        let profile = file.client.as_ref().and_then(|c| {
            let p = crate::client::profile::get(c.profile.as_deref()?).ok()?;
            Some((p, p.argv(&c.options).ok()?))
        });
        if let Some((_, sdk_args)) = &profile {
            // The SDK's exact command line; the scenario's args come after it.
            args.extend(sdk_args.iter().cloned());
        } else if file.default_args {
            args.push("-p".to_string());
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
            if self.dialect == Dialect::ClaudeCode && file.output_format == OutputFormat::StreamJson
            {
                args.push("--verbose".into());
            }
        }
        args.extend(expect.args.as_ref().unwrap_or(&file.args).iter().cloned());

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
            ("ANTHROPIC_API_KEY".into(), DUMMY_API_KEY.into()),
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
        }
        let sdk_env = profile.iter().flat_map(|(p, _)| &p.env);
        let target_env = self.env.iter().map(|(k, v)| (k, v)).chain(sdk_env);
        for (k, v) in target_env.chain(&file.env).chain(&expect.env) {
            env.retain(|(key, _)| key != k);
            env.push((k.clone(), v.clone()));
        }
        if self.dialect == Dialect::ClaudeCode {
            // Without it Claude Code looks up and calls external hosts (telemetry, title
            // generation); no trial may leave loopback, whatever a scenario says.
            env.retain(|(key, _)| key != "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC");
            env.push((
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC".into(),
                "1".into(),
            ));
        }
        Invocation {
            program: self.program.clone(),
            args,
            env,
        }
    }
}

/// Compares dotted numeric versions (`2.1.197` < `2.1.330`); a non-numeric part compares as 0.
pub fn version_lt(a: &str, b: &str) -> bool {
    let parse = |v: &str| -> Vec<u64> {
        v.split(['.', '-', '+'])
            .map(|p| p.parse().unwrap_or(0))
            .collect()
    };
    let (mut x, mut y) = (parse(a), parse(b));
    let n = x.len().max(y.len());
    x.resize(n, 0);
    y.resize(n, 0);
    x < y
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_is_per_user_unless_streamcheck_cache_says_otherwise() {
        let p = |s: &str| Some(PathBuf::from(s));
        assert_eq!(cache_dir_of(p("/c"), p("/x"), p("/h")), p("/c"));
        assert_eq!(cache_dir_of(None, p("/x"), p("/h")), p("/x/streamcheck"));
        assert_eq!(
            cache_dir_of(p(""), p("rel"), p("/h")),
            p("/h/.cache/streamcheck")
        );
        assert_eq!(cache_dir_of(None, None, None), None);
    }

    #[test]
    fn target_names() {
        let t = TargetSpec::parse("claude-code").unwrap();
        assert_eq!(t.source, Source::PinnedNpm);
        let t = TargetSpec::parse("claude-code@2.1.330").unwrap();
        assert_eq!(
            t.source,
            Source::Npm {
                version: "2.1.330".into()
            }
        );
        assert_eq!(t.name, "claude-code@2.1.330");
        let t = TargetSpec::parse("caliban").unwrap();
        assert_eq!(t.dialect, Dialect::Caliban);
        assert_eq!(t.name, "caliban");
        assert!(TargetSpec::parse("gemini")
            .unwrap_err()
            .contains("unknown target `gemini`"));
        assert!(TargetSpec::parse("claude-code@").is_err());
    }

    #[test]
    fn target_files_name_a_command_its_dialect_and_env() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("wrapper.yaml");
        std::fs::write(
            &file,
            "name: my-wrapper\ncommand: bin/wrap.sh\nenv: {WRAP_MODE: strict}\n",
        )
        .unwrap();
        let spec = TargetSpec::parse(file.to_str().unwrap()).unwrap();
        assert_eq!(spec.name, "my-wrapper");
        assert_eq!(spec.dialect, Dialect::ClaudeCode);
        assert_eq!(
            spec.source,
            Source::Command {
                path: dir.path().join("bin/wrap.sh"),
                env: vec![("WRAP_MODE".into(), "strict".into())],
            }
        );
        std::fs::write(&file, "name: x\ncommand: y\ndialect: gemini\n").unwrap();
        assert!(TargetSpec::parse(file.to_str().unwrap())
            .unwrap_err()
            .contains("unknown dialect `gemini`"));
    }

    #[test]
    fn versions_compare_numerically() {
        assert!(version_lt("2.1.74", "2.1.197"));
        assert!(!version_lt("2.1.197", "2.1.197"));
        assert!(version_lt("1.0.100", "2.0"));
        assert!(!version_lt("2.1.330", "2.1.197"));
    }

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("say hello"), "'say hello'");
        assert_eq!(shell_quote("--verbose"), "--verbose");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
    }
}
