//! The real Agent SDKs as consumers (`consume --sdk python`): the pinned package installed
//! into the cache as the CLIs are, and a small script feeding each line to its own parser.

use super::worker::{Protocol, Serve};
use super::Consumer;
use crate::install::Project;
use crate::process_group;
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

/// An SDK `consume --sdk` takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Sdk {
    /// PyPI `claude-agent-sdk`: `parse_message` of the pinned version.
    Python,
    /// npm `@anthropic-ai/claude-agent-sdk`: its `query()` driving `replay-cli`.
    Typescript,
}

impl Sdk {
    /// Installs the SDK if needed and returns it as a consumer.
    pub fn consumer(self, project: &Project, timeout: Duration) -> Result<Consumer, String> {
        match self {
            Sdk::Python => python(project, timeout),
            Sdk::Typescript => typescript(project, timeout),
        }
    }
}

fn typescript(project: &Project, timeout: Duration) -> Result<Consumer, String> {
    let (sdk, version) = typescript_sdk(project)?;
    let dir = project.root.join(TS_DIR);
    let exe = std::env::current_exe().map_err(|e| format!("streamcheck's own path: {e}"))?;
    let command = format!(
        "node {} {} {}",
        shell_quote(&dir.join("host.mjs")),
        shell_quote(&sdk),
        shell_quote(&exe)
    );
    Ok(Consumer {
        name: format!("{TS_PACKAGE} (npm) {version}"),
        serve: Some(Arc::new(Serve::new(
            Protocol::Host,
            command.clone(),
            dir.clone(),
        ))),
        command,
        dir,
        timeout,
        each: None,
    })
}

/// The version `package.json` pins the TypeScript SDK at.
pub fn typescript_pin(package_json: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(package_json).ok()?;
    Some(v["dependencies"][TS_PACKAGE].as_str()?.to_string())
}

/// The folder of the pinned TypeScript SDK (installed with `npm ci` from the lockfile into
/// the cache if needed), and its version.
pub fn typescript_sdk(project: &Project) -> Result<(PathBuf, String), String> {
    let dir = project.root.join(TS_DIR);
    let read = |name: &str| {
        let p = dir.join(name);
        std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))
    };
    let (package, lock) = (read("package.json")?, read("package-lock.json")?);
    let version = typescript_pin(&package).ok_or_else(|| {
        format!(
            "{}: no `{TS_PACKAGE}` dependency",
            dir.join("package.json").display()
        )
    })?;
    let prefix = project
        .cache_dir()
        .join(format!("sdk-ts-claude-agent-sdk@{version}"));
    let sdk = prefix.join("node_modules").join(TS_PACKAGE);
    let marker = prefix.join("streamcheck-package-lock.json");
    if std::fs::read_to_string(&marker).ok().as_deref() != Some(lock.as_str()) {
        let _ = std::fs::remove_dir_all(&prefix);
        std::fs::create_dir_all(&prefix).map_err(|e| format!("{}: {e}", prefix.display()))?;
        for name in ["package.json", "package-lock.json"] {
            std::fs::copy(dir.join(name), prefix.join(name))
                .map_err(|e| format!("{}: {e}", prefix.join(name).display()))?;
        }
        eprintln!(
            "installing the TypeScript Agent SDK into {}",
            prefix.display()
        );
        let mut npm = process_group::piped("npm");
        npm.args([
            "ci",
            "--omit=optional",
            "--no-audit",
            "--no-fund",
            "--prefix",
        ])
        .arg(&prefix);
        run(npm, "npm ci (the TypeScript Agent SDK)")?;
        std::fs::write(&marker, &lock).map_err(|e| format!("{}: {e}", marker.display()))?;
    }
    Ok((sdk, version))
}

/// The version `requirements.txt` pins `claude-agent-sdk` at.
pub fn python_pin(requirements: &str) -> Option<&str> {
    requirements
        .lines()
        .find_map(|l| l.trim().strip_prefix("claude-agent-sdk=="))
        .map(|v| v.trim_end_matches(['\\', ' ']).trim())
}

fn python(project: &Project, timeout: Duration) -> Result<Consumer, String> {
    let (python, version) = python_sdk(project)?;
    let dir = project.root.join(PYTHON_DIR);
    let script = dir.join("consumer.py");
    Ok(Consumer {
        name: format!("claude-agent-sdk (PyPI) {version}"),
        command: format!("{} {}", shell_quote(&python), shell_quote(&script)),
        serve: Some(Arc::new(Serve::new(
            Protocol::Feeds,
            format!("{} {} --serve", shell_quote(&python), shell_quote(&script)),
            dir.clone(),
        ))),
        dir,
        timeout,
        each: None,
    })
}

/// The interpreter of a venv holding the pinned Python SDK (installed if needed), and
/// the SDK's version.
pub fn python_sdk(project: &Project) -> Result<(PathBuf, String), String> {
    let dir = project.root.join(PYTHON_DIR);
    let req_path = dir.join("requirements.txt");
    let requirements =
        std::fs::read_to_string(&req_path).map_err(|e| format!("{}: {e}", req_path.display()))?;
    let version = python_pin(&requirements)
        .ok_or_else(|| {
            format!(
                "{}: no `claude-agent-sdk==VERSION` line",
                req_path.display()
            )
        })?
        .to_string();
    let venv = project
        .cache_dir()
        .join(format!("sdk-py-claude-agent-sdk@{version}"));
    let python = venv.join("bin/python");
    let marker = venv.join("streamcheck-requirements.txt");
    if std::fs::read_to_string(&marker).ok().as_deref() != Some(requirements.as_str()) {
        install_python(&venv, &req_path)?;
        std::fs::write(&marker, &requirements).map_err(|e| format!("{}: {e}", marker.display()))?;
    }
    Ok((python, version))
}

/// A fresh venv (`$STREAMCHECK_PYTHON`, else python3.11, else python3) holding exactly
/// the hash-pinned requirements.
fn install_python(venv: &Path, requirements: &Path) -> Result<(), String> {
    let interpreter = std::env::var_os("STREAMCHECK_PYTHON")
        .map(PathBuf::from)
        .or_else(|| which::which("python3.11").ok())
        .or_else(|| which::which("python3").ok())
        .ok_or(
            "the Python SDK needs Python 3.11 or later: none on PATH (set STREAMCHECK_PYTHON)",
        )?;
    let _ = std::fs::remove_dir_all(venv);
    eprintln!("installing the Python Agent SDK into {}", venv.display());
    let mut python = process_group::piped(&interpreter);
    python.args(["-m", "venv"]).arg(venv);
    run(python, &format!("{} -m venv", interpreter.display()))?;
    let mut pip = process_group::piped(venv.join("bin/pip"));
    pip.args(["install", "--quiet", "--no-deps", "--require-hashes", "-r"])
        .arg(requirements);
    run(pip, &format!("pip install -r {}", requirements.display()))
}

/// How long one install step (npm ci, a venv, pip install) may take.
const INSTALL_LIMIT: Duration = Duration::from_secs(30 * 60);

/// Runs an install step; its stderr is the error when it fails.
fn run(cmd: std::process::Command, what: &str) -> Result<(), String> {
    process_group::run_blocking(cmd, Some(INSTALL_LIMIT))
        .map_err(|e| format!("{what}: {e}"))?
        .success(what, Some(INSTALL_LIMIT))
        .map(drop)
        .map_err(|e| e.to_string())
}

fn shell_quote(p: &Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pin_is_read_from_its_requirement_line() {
        let req = "# comment\nanyio==4 \\\n    --hash=sha256:x\nclaude-agent-sdk==0.2.189 \\\n    --hash=sha256:y\n";
        assert_eq!(python_pin(req), Some("0.2.189"));
        assert_eq!(python_pin("anyio==4\n"), None);
    }
}
