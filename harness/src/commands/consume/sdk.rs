//! The real Agent SDKs as consumers (`consume --sdk python`): the pinned package installed
//! into the cache as the CLIs are, and a small script feeding each line to its own parser.

use super::worker::{Protocol, Serve};
use super::Consumer;
use crate::file_error::FileError;
use crate::install::{self, sdk::SdkInstallError, sdk::Wanted, Project};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Where the Python SDK's pin and its consumer script live.
pub const PYTHON_DIR: &str = "targets/claude-code/sdk-py";

/// What the SDK matrix says besides its cells: how each SDK is fed.
pub const NOTES: &str = "## How each SDK is fed\n\n\
- **Python** (`claude-agent-sdk`, pinned with hashes in `targets/claude-code/sdk-py/requirements.txt`, \
installed into a venv in the streamcheck cache): `targets/claude-code/sdk-py/consumer.py` routes \
`control_*` and `transcript_mirror` frames as the SDK's `Query` does (they are never parsed) and \
gives every other frame to `claude_agent_sdk._internal.message_parser.parse_message`; a frame it \
cannot parse raises and ends the consumer with exit 1, as it ends the SDK's message generator. \
One `consumer.py --serve` per job takes feed after feed (a header line, then the feed's writes, a \
split write still split); a feed it does not pass is fed again to `consumer.py` in a fresh \
process, whose exit, stderr and located line are the finding.\n\
- **TypeScript** (`@anthropic-ai/claude-agent-sdk`, pinned in `targets/claude-code/sdk/package-lock.json`, \
installed with `npm ci` into the streamcheck cache): it has no runtime parser (`SDKMessage` is a \
compile-time type; `JSON.parse`d lines are yielded unchecked), so it is tested as a host: \
`targets/claude-code/sdk/host.mjs` runs its own `query()` (a streamed prompt and a `canUseTool` \
callback) with `pathToClaudeCodeExecutable` pointed at `streamcheck replay-cli --trial T --probe P`, \
which answers the SDK's `initialize` under the SDK's own request id, waits for its user message and \
for its answer to each recorded `can_use_tool`. A feed passes when `query()` ends as the recorded CLI \
did (it completes, or throws for an `is_error` result or for the recorded exit code, after yielding \
it) and the last result it yielded equals the feed's last `result` frame (subtype, is_error, result, \
session_id). A trial whose recorded client sent a control request `query()` does not send unasked \
(`interrupt`, `set_permission_mode`, ...) or `initialize` twice is not replayable (listed above with \
the request). `split-write` cuts the longest line in two writes 20 ms apart.\n";

/// Where the TypeScript SDK's pin (package.json, package-lock.json) and host.mjs live.
pub const TS_DIR: &str = "targets/claude-code/sdk";
/// The TypeScript SDK's npm package.
pub const TS_PACKAGE: &str = "@anthropic-ai/claude-agent-sdk";
/// The Python SDK's PyPI package.
pub const PY_PACKAGE: &str = "claude-agent-sdk";
/// Where the community parsers' pins, drivers and the `claude` they start live.
pub const COMMUNITY_DIR: &str = "targets/claude-code/consumers";

/// A consumer package `consume --sdk` takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Sdk {
    /// PyPI `claude-agent-sdk`: its `parse_message`.
    Python,
    /// npm `@anthropic-ai/claude-agent-sdk`: its `query()` driving `replay-cli`.
    Typescript,
    /// PyPI `claude-code-pretty` (community): `claudep stream -p ...`.
    ClaudeCodePretty,
    /// npm `@instantlyeasy/claude-code-sdk-ts` (community): `claude().query(..).asText()`.
    ClaudeCodeSdkTs,
}

impl Sdk {
    pub const ALL: [Sdk; 4] = [
        Sdk::Python,
        Sdk::Typescript,
        Sdk::ClaudeCodePretty,
        Sdk::ClaudeCodeSdkTs,
    ];

    /// Its name on the command line.
    pub fn key(self) -> &'static str {
        match self {
            Sdk::Python => "python",
            Sdk::Typescript => "typescript",
            Sdk::ClaudeCodePretty => "claude-code-pretty",
            Sdk::ClaudeCodeSdkTs => "claude-code-sdk-ts",
        }
    }

    /// Its package, and the registry it comes from.
    pub fn package(self) -> (&'static str, &'static str) {
        match self {
            Sdk::Python => (PY_PACKAGE, "PyPI"),
            Sdk::Typescript => (TS_PACKAGE, "npm"),
            Sdk::ClaudeCodePretty => ("claude-code-pretty", "PyPI"),
            Sdk::ClaudeCodeSdkTs => ("@instantlyeasy/claude-code-sdk-ts", "npm"),
        }
    }

    /// Anthropic's own (any published version may be asked for), or a community one.
    pub fn official(self) -> bool {
        matches!(self, Sdk::Python | Sdk::Typescript)
    }

    /// The folder of its lockfile.
    fn pin_dir(self) -> String {
        match self {
            Sdk::Python => PYTHON_DIR.into(),
            Sdk::Typescript => TS_DIR.into(),
            other => format!("{COMMUNITY_DIR}/{}", other.key()),
        }
    }
}

/// Why an `--sdk NAME[@VERSION]` names no consumer package.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SdkSpecError {
    #[error(
        "unknown SDK `{name}`: use one of {} (python@VERSION, typescript@VERSION for a published version)",
        Sdk::ALL.map(Sdk::key).join(", ")
    )]
    Unknown { name: String },
    #[error("`{spec}`: give a version after `@`")]
    NoVersion { spec: String },
    #[error(
        "`{spec}`: {} is a community parser, tried at its pin only (not @{version})",
        .sdk.key()
    )]
    CommunityVersion {
        spec: String,
        sdk: Sdk,
        version: String,
    },
}

/// `--sdk NAME[@VERSION]`: a consumer package at its pin or at a published version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SdkSpec {
    pub sdk: Sdk,
    pub version: Wanted,
}

impl SdkSpec {
    pub fn parse(s: &str) -> Result<SdkSpec, SdkSpecError> {
        let (name, version) = match s.split_once('@') {
            Some((n, v)) => (n, Some(v)),
            None => (s, None),
        };
        let sdk = (Sdk::ALL.into_iter().find(|k| k.key() == name)).ok_or_else(|| {
            SdkSpecError::Unknown {
                name: name.to_string(),
            }
        })?;
        let version = match version {
            None | Some("pinned") => Wanted::Pinned,
            Some("") => {
                return Err(SdkSpecError::NoVersion {
                    spec: s.to_string(),
                })
            }
            Some(v) if !sdk.official() => {
                return Err(SdkSpecError::CommunityVersion {
                    spec: s.to_string(),
                    sdk,
                    version: v.to_string(),
                })
            }
            Some(v) => Wanted::Exact(v.to_string()),
        };
        Ok(SdkSpec { sdk, version })
    }

    /// As it is written on the command line: `python@0.1.37`, `claude-code-pretty`.
    pub fn label(&self) -> String {
        match &self.version {
            Wanted::Pinned => self.sdk.key().to_string(),
            Wanted::Exact(v) => format!("{}@{v}", self.sdk.key()),
        }
    }

    /// Installs the package if needed and returns it as a consumer.
    pub fn consumer(
        &self,
        project: &Project,
        timeout: Duration,
    ) -> Result<Consumer, SdkInstallError> {
        let (package, registry) = self.sdk.package();
        let dir = project.root.join(self.sdk.pin_dir());
        let at = |version: &str| format!("{package} ({registry}) {version}");
        let consumer = |name: String, command: String, serve: Option<Arc<Serve>>| Consumer {
            name,
            command,
            dir: dir.clone(),
            timeout,
            each: None,
            serve,
        };
        let pin_dir = self.sdk.pin_dir();
        Ok(match self.sdk {
            Sdk::Python => {
                let py = install::sdk::python(project, &pin_dir, package, &self.version)?;
                let script = shell_quote(&dir.join("consumer.py"));
                let python = shell_quote(&py.python);
                let serve = Serve::new(
                    Protocol::Feeds,
                    format!("{python} {script} --serve"),
                    dir.clone(),
                );
                consumer(
                    at(&py.version),
                    format!("{python} {script}"),
                    Some(Arc::new(serve)),
                )
            }
            Sdk::Typescript => {
                let ts = install::sdk::npm(project, &pin_dir, package, &self.version)?;
                let exe = std::env::current_exe().map_err(|source| {
                    SdkInstallError::Io(FileError::new("streamcheck's own path", source))
                })?;
                let command = format!(
                    "node {} {} {}",
                    shell_quote(&dir.join("host.mjs")),
                    shell_quote(&ts.package_dir),
                    shell_quote(&exe)
                );
                let serve = Serve::new(Protocol::Host, command.clone(), dir.clone());
                consumer(at(&ts.version), command, Some(Arc::new(serve)))
            }
            Sdk::ClaudeCodePretty => {
                let py = install::sdk::python(project, &pin_dir, package, &self.version)?;
                let run = format!("{} stream -p hi", shell_quote(&py.bin.join("claudep")));
                consumer(at(&py.version), community(project, &run), None)
            }
            Sdk::ClaudeCodeSdkTs => {
                let ts = install::sdk::npm(project, &pin_dir, package, &self.version)?;
                let run = format!(
                    "node {} {}",
                    shell_quote(&dir.join("driver.mjs")),
                    shell_quote(&ts.package_dir)
                );
                consumer(at(&ts.version), community(project, &run), None)
            }
        })
    }
}

/// A community parser's command: `run` with the `claude` it starts on PATH being
/// `consumers/bin/claude`, which prints the feed (this shell's stdin) to it, and a home
/// with no `claude` of its own.
fn community(project: &Project, run: &str) -> String {
    let bin = project.root.join(COMMUNITY_DIR).join("bin");
    format!(
        "STREAMCHECK_FEED=/proc/$$/fd/0 HOME={home} PATH={bin}:\"$PATH\" {run}",
        home = shell_quote(&bin),
        bin = shell_quote(&bin),
    )
}

/// The version the TypeScript SDK's `package.json` pins.
pub fn typescript_pin(package_json: &str) -> Option<String> {
    install::sdk::npm_pin(package_json, TS_PACKAGE)
}

/// The version the Python SDK's `requirements.txt` pins.
pub fn python_pin(requirements: &str) -> Option<&str> {
    install::sdk::python_pin(requirements, PY_PACKAGE)
}

/// The interpreter of a venv holding the pinned Python SDK (installed if needed), and
/// the SDK's version.
pub fn python_sdk(project: &Project) -> Result<(PathBuf, String), SdkInstallError> {
    let py = install::sdk::python(project, PYTHON_DIR, PY_PACKAGE, &Wanted::Pinned)?;
    Ok((py.python, py.version))
}

fn shell_quote(p: &Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_sdk_is_named_with_its_version_or_its_pin() {
        let spec = |s: &str| SdkSpec::parse(s);
        assert_eq!(
            spec("python@0.1.37").unwrap(),
            SdkSpec {
                sdk: Sdk::Python,
                version: Wanted::Exact("0.1.37".into())
            }
        );
        assert_eq!(spec("typescript").unwrap().version, Wanted::Pinned);
        assert_eq!(spec("python@pinned").unwrap().version, Wanted::Pinned);
        assert_eq!(
            spec("claude-code-pretty").unwrap().sdk,
            Sdk::ClaudeCodePretty
        );
        assert!(spec("claude-code-pretty@0.1.0")
            .unwrap_err()
            .to_string()
            .contains("community parser"));
        assert!(spec("python@").is_err());
        assert!(spec("go")
            .unwrap_err()
            .to_string()
            .contains("claude-code-sdk-ts"));
    }
}
