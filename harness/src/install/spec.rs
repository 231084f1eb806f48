//! What a target is: its name and where its binary comes from ([`TargetSpec`]), and the
//! same once installed ([`Target`]). Data only: installing and invoking are beside it.

use super::error::InstallError;
use crate::dialect::{Dialect, Distribution};
use crate::trial_id::TargetName;
use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

/// A key that looks real enough for the CLI, and is worth nothing anywhere.
pub const DUMMY_API_KEY: &str = "sk-ant-streamcheck-dummy-key";

/// Where a target's binary comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The version pinned in `targets/<name>/package-lock.json`.
    PinnedNpm,
    /// Another version from npm, installed side by side in the cache ([`crate::install::Project::cache_dir`]).
    Npm { version: String },
    /// A crate from crates.io, built with `cargo install` into the cache.
    Cargo { version: String },
    /// Any executable that follows the dialect's conventions, with extra environment.
    Command {
        path: PathBuf,
        env: Vec<(String, String)>,
        /// The dialect's release whose expectations and version blocks it is held to;
        /// default: the dialect's pin (never what the command's `--version` says).
        conforms_to: Option<String>,
    },
}

/// A target as named on the command line: `claude-code`, `claude-code@2.1.330`,
/// `caliban`, `caliban@0.15.0`, or a command given with `--target-command`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetSpec {
    pub name: TargetName,
    pub dialect: Dialect,
    pub source: Source,
}

impl TargetSpec {
    pub fn parse(s: &str) -> Result<TargetSpec, InstallError> {
        if s.ends_with(".yaml") || s.ends_with(".yml") {
            return TargetSpec::from_file(Path::new(s));
        }
        let (base, version) = match s.split_once('@') {
            Some((b, v)) if !v.is_empty() => (b, Some(v.to_string())),
            Some(_) => {
                return Err(InstallError::NoVersionAfterAt {
                    name: s.to_string(),
                })
            }
            None => (s, None),
        };
        let dialect = Dialect::from_key(base).ok_or_else(|| InstallError::UnknownTarget {
            base: base.to_string(),
        })?;
        let (name, source) = match (dialect.conventions().distribution(), version) {
            (Distribution::Npm(_), None) => (s.to_string(), Source::PinnedNpm),
            (Distribution::Npm(_), Some(version)) => (s.to_string(), Source::Npm { version }),
            // The default version is the pin: it goes without saying.
            (Distribution::Cargo(pin), version) => {
                let version = version.unwrap_or_else(|| pin.version.to_string());
                let name = match version == pin.version {
                    true => base.to_string(),
                    false => format!("{base}@{version}"),
                };
                (name, Source::Cargo { version })
            }
        };
        Ok(TargetSpec {
            name: name.into(),
            dialect,
            source,
        })
    }

    /// A target file: `{name, command, dialect: claude-code|caliban|qwen-code, env: {..},
    /// conforms_to: VERSION}`, the command relative to the file.
    pub fn from_file(path: &Path) -> Result<TargetSpec, InstallError> {
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct TargetFile {
            name: String,
            command: PathBuf,
            #[serde(default)]
            dialect: Option<Dialect>,
            #[serde(default)]
            env: std::collections::BTreeMap<String, String>,
            /// The release whose expectations it is held to (`2.1.197` or `claude-code@2.1.197`).
            #[serde(default)]
            conforms_to: Option<String>,
        }
        let text = std::fs::read_to_string(path).map_err(|e| InstallError::io(path, e))?;
        let file: TargetFile =
            serde_yaml::from_str(&text).map_err(|e| InstallError::yaml(path, e))?;
        let dialect = file.dialect.unwrap_or_default();
        let base = path.parent().unwrap_or(Path::new("."));
        Ok(TargetSpec {
            name: file.name.into(),
            dialect,
            source: Source::Command {
                path: base.join(file.command),
                env: file.env.into_iter().collect(),
                conforms_to: file.conforms_to.map(|v| match v.split_once('@') {
                    Some((_, version)) => version.to_string(),
                    None => v,
                }),
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
            name: format!("command:{stem}").into(),
            dialect,
            source: Source::Command {
                path: path.to_path_buf(),
                env: Vec::new(),
                conforms_to: None,
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
    pub name: TargetName,
    pub dialect: Dialect,
    pub program: PathBuf,
    /// Arguments before the CLI's own (the entry script when `program` is its runtime).
    pub lead_args: Vec<String>,
    pub version: String,
    pub features: BTreeSet<String>,
    /// Its dialect's data in the project (known divergences, rules, tool names, ...), the
    /// same value for every target of the dialect.
    pub data: std::sync::Arc<super::data::DialectData>,
    /// The divergences this target is known to have: its dialect's list (`data.known`), with
    /// the project file's when the project file says so (see `streamcheck run`).
    pub known: std::sync::Arc<crate::known::KnownList>,
    /// Extra environment from a target file.
    pub env: Vec<(String, String)>,
    /// The version whose expectations hold for it, when not its own (a wrapper or a
    /// re-implementation conforming to a Claude Code release).
    pub conforms_to: Option<String>,
    /// The project it was resolved in: its data, and the fixtures `$FIXTURES` names.
    pub project: super::project::Project,
    /// What the project file declares about it (`[targets.NAME]`).
    pub declared: Declared,
}

/// What a project file's `[targets.NAME]` declares about a target beyond how to start it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Declared {
    /// The features it has (`supports`); `None`: all its dialect offers.
    pub supports: Option<BTreeSet<String>>,
    /// The protocol policy of its trials (`protocol`, or `--protocol` over it).
    pub protocol: Option<crate::protocol::check::Policy>,
}

impl Target {
    /// The version that picks the scenario's expectation and version blocks.
    pub fn expect_version(&self) -> &str {
        self.conforms_to.as_deref().unwrap_or(&self.version)
    }
}

/// Why a target cannot run; its trials are unavailable with this.
#[derive(Debug, Clone)]
pub struct NotInstalled {
    pub target: TargetName,
    pub cause: Cause,
    pub reason: String,
    /// The command that installs it.
    pub install: String,
}

/// What kind of reason a target cannot run for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// Its CLI is not installed and installing was not allowed: `install` says how. The
    /// only cause `cargo test` may ignore a target's trials for.
    NotInstalled,
    /// Anything else: a data file of its dialect that does not load, an install that
    /// failed, a command that cannot start.
    Broken,
}

impl NotInstalled {
    /// A target that cannot run for a reason installing would not fix.
    pub fn broken(target: &str, reason: String) -> NotInstalled {
        NotInstalled {
            target: target.into(),
            cause: Cause::Broken,
            reason,
            install: "-".into(),
        }
    }
}

impl fmt::Display for NotInstalled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} is not available: {}", self.target, self.reason)?;
        match self.install.as_str() {
            "-" | "" => Ok(()),
            install => write!(f, " (install: {install})"),
        }
    }
}

/// Whether version `a` comes before `b`, in the one order streamcheck uses (semver, as
/// version blocks read them: `2.1.0-beta.1` < `2.1.0` < `2.1.197`). Unreadable: never.
pub fn version_lt(a: &str, b: &str) -> bool {
    use crate::version_range::parse_version;
    matches!((parse_version(a), parse_version(b)), (Some(x), Some(y)) if x < y)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let t = TargetSpec::parse("qwen-code").unwrap();
        assert_eq!(
            (t.dialect, t.source),
            (Dialect::QwenCode, Source::PinnedNpm)
        );
        let t = TargetSpec::parse("qwen-code@0.24.0").unwrap();
        assert_eq!(t.name, "qwen-code@0.24.0");
        let t = TargetSpec::parse("caliban").unwrap();
        assert_eq!(t.dialect, Dialect::Caliban);
        assert_eq!(t.name, "caliban");
        assert!(TargetSpec::parse("gemini")
            .unwrap_err()
            .to_string()
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
                conforms_to: None,
            }
        );
        std::fs::write(&file, "name: x\ncommand: y\ndialect: gemini\n").unwrap();
        assert!(TargetSpec::parse(file.to_str().unwrap())
            .unwrap_err()
            .to_string()
            .contains("unknown dialect `gemini`"));
    }

    #[test]
    fn qwen_code_runs_on_its_pinned_node() {
        let qwen = crate::dialect::NpmPin::of(Dialect::QwenCode).unwrap();
        let (program, lead) = qwen.launch(Path::new("p"));
        assert_eq!(program, Path::new("p/node_modules/node/bin/node"));
        assert_eq!(lead, ["p/node_modules/@qwen-code/qwen-code/cli-entry.js"]);
        let (program, lead) = crate::dialect::NpmPin::of(Dialect::ClaudeCode)
            .unwrap()
            .launch(Path::new("p"));
        assert_eq!(program, Path::new("p/node_modules/.bin/claude"));
        assert!(lead.is_empty());
        // The runtime installed beside another version is the one the lockfile pins.
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let lock = std::fs::read_to_string(root.join(qwen.dir).join("package-lock.json"));
        let lock: serde_json::Value = serde_json::from_str(&lock.unwrap()).unwrap();
        let node = &lock["packages"]["node_modules/node"]["version"];
        assert_eq!(qwen.runtime, [format!("node@{}", node.as_str().unwrap())]);
    }

    #[test]
    fn versions_compare_numerically() {
        assert!(version_lt("2.1.74", "2.1.197"));
        assert!(!version_lt("2.1.197", "2.1.197"));
        assert!(version_lt("1.0.100", "2.0"));
        assert!(!version_lt("2.1.330", "2.1.197"));
        // The same order as version blocks: a pre-release before its release.
        assert!(version_lt("2.1.0-beta.1", "2.1.0"));
        assert!(!version_lt("2.1.0", "2.1.0-beta.1"));
    }
}
