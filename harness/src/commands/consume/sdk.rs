//! The real Agent SDKs as consumers (`consume --sdk python`): the pinned package installed
//! into the cache as the CLIs are, and a small script feeding each line to its own parser.

use super::Consumer;
use crate::install::Project;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Where the Python SDK's pin and its consumer script live.
pub const PYTHON_DIR: &str = "targets/claude-code/sdk-py";

/// What the SDK matrix says besides its cells: how each SDK is fed, and why the
/// TypeScript SDK has no column.
pub const NOTES: &str = "## How each SDK is fed\n\n\
- **Python** (`claude-agent-sdk`, pinned with hashes in `targets/claude-code/sdk-py/requirements.txt`, \
installed into a venv in the streamcheck cache): `targets/claude-code/sdk-py/consumer.py` routes \
`control_*` and `transcript_mirror` frames as the SDK's `Query` does (they are never parsed) and \
gives every other frame to `claude_agent_sdk._internal.message_parser.parse_message`; a frame it \
cannot parse raises and ends the consumer with exit 1, as it ends the SDK's message generator.\n\
- **TypeScript** (`@anthropic-ai/claude-agent-sdk` 0.3.330, pinned in \
`targets/claude-code/sdk/package-lock.json`): it has no runtime parser. `sdk.mjs` reads each \
stdout line with `JSON.parse` and yields the object as an `SDKMessage` without checking it \
(`SDKMessage` is a compile-time type only; the package ships no schema of it), so every JSON line \
\"parses\" and a probe cannot fail it at runtime. What the TS SDK does with the output as a \
host is tested by `harness/tests/sdk_ts.rs` (the real SDK driving the pinned CLI).\n";

/// An SDK `consume --sdk` takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Sdk {
    /// PyPI `claude-agent-sdk`: `parse_message` of the pinned version.
    Python,
}

impl Sdk {
    /// Installs the SDK if needed and returns it as a consumer.
    pub fn consumer(self, project: &Project, timeout: Duration) -> Result<Consumer, String> {
        match self {
            Sdk::Python => python(project, timeout),
        }
    }
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
    Ok(Consumer {
        name: format!("claude-agent-sdk (PyPI) {version}"),
        command: format!(
            "{} {}",
            shell_quote(&python),
            shell_quote(&dir.join("consumer.py"))
        ),
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
    let run = |cmd: &mut Command, what: &str| -> Result<(), String> {
        let out = cmd.output().map_err(|e| format!("{what}: {e}"))?;
        if out.status.success() {
            return Ok(());
        }
        Err(format!(
            "{what} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    };
    run(
        Command::new(&interpreter).args(["-m", "venv"]).arg(venv),
        &format!("{} -m venv", interpreter.display()),
    )?;
    run(
        Command::new(venv.join("bin/pip"))
            .args(["install", "--quiet", "--no-deps", "--require-hashes", "-r"])
            .arg(requirements),
        &format!("pip install -r {}", requirements.display()),
    )
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
