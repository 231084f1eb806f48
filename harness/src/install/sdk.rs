//! The packages consumers are made of (the Agent SDKs, community parsers), installed into
//! the cache beside the CLI releases: a pinned one from its lockfile (`requirements.txt`
//! with hashes, `package-lock.json`), or any published version of one from its registry.
//! A folder is reinstalled when what it was installed from changed.

use super::Project;
use crate::file_error::FileError;
use crate::process_group;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Why a consumer's package could not be installed.
#[derive(Debug, thiserror::Error)]
pub enum SdkInstallError {
    #[error(transparent)]
    Io(#[from] FileError<std::io::Error>),
    /// The lockfile does not name the package.
    #[error("{file}: no `{package}` pinned there")]
    NoPin { file: PathBuf, package: String },
    #[error("Python packages need Python 3.10 or later: none on PATH (set STREAMCHECK_PYTHON)")]
    NoPython,
    /// An install step (venv, pip, npm) failed; its stderr says why.
    #[error("{what}: {why}")]
    Step { what: String, why: String },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> SdkInstallError + '_ {
    move |source| SdkInstallError::Io(FileError::new(path, source))
}

/// Which version of a package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Wanted {
    /// The one its lockfile in the project pins.
    Pinned,
    /// A published version, from the registry.
    Exact(String),
}

/// A Python package installed in a venv of the cache.
#[derive(Debug, Clone)]
pub struct PythonInstall {
    pub python: PathBuf,
    /// The venv's `bin/`, where the package's scripts are.
    pub bin: PathBuf,
    pub version: String,
}

/// An npm package installed under a prefix of the cache.
#[derive(Debug, Clone)]
pub struct NpmInstall {
    /// `<prefix>/node_modules/<package>`.
    pub package_dir: PathBuf,
    pub version: String,
}

/// The version `requirements` pins `package` at (`package==VERSION`, hashes after it).
pub fn python_pin<'a>(requirements: &'a str, package: &str) -> Option<&'a str> {
    let lead = format!("{package}==");
    requirements
        .lines()
        .find_map(|l| l.trim().strip_prefix(lead.as_str()))
        .map(|v| v.trim_end_matches(['\\', ' ']).trim())
}

/// The version `package.json` pins `package` at.
pub fn npm_pin(package_json: &str, package: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(package_json).ok()?;
    Some(v["dependencies"][package].as_str()?.to_string())
}

/// The cache folder's name for a package's version: `sdk-py-claude-agent-sdk@0.1.37`.
fn folder(kind: &str, package: &str, version: &str) -> String {
    let short = package.rsplit('/').next().unwrap_or(package);
    format!("sdk-{kind}-{short}@{version}")
}

/// Where one version of an SDK goes in the cache, and the stamp that says it is installed
/// there: the pinned version's is its lock file, any other's its exact requirement
/// (`package==1.0`, `package@1.0`).
struct Slot {
    version: String,
    dir: PathBuf,
    pinned: bool,
    marker: PathBuf,
    stamp: String,
}

impl Slot {
    fn new(
        project: &Project,
        kind: &str,
        package: &str,
        pinned: &str,
        wanted: &Wanted,
        (lock_name, lock): (&str, &str),
        exact: &str,
    ) -> Slot {
        let version = match wanted {
            Wanted::Exact(v) => v.clone(),
            Wanted::Pinned => pinned.to_string(),
        };
        let dir = project.cache_dir().join(folder(kind, package, &version));
        let is_pinned = version == pinned;
        let (marker, stamp) = match is_pinned {
            true => (format!("streamcheck-{lock_name}"), lock.to_string()),
            false => (
                "streamcheck-installed.txt".to_string(),
                format!("{package}{exact}{version}\n"),
            ),
        };
        Slot {
            marker: dir.join(marker),
            dir,
            pinned: is_pinned,
            version,
            stamp,
        }
    }

    fn installed(&self) -> bool {
        std::fs::read_to_string(&self.marker).ok().as_deref() == Some(self.stamp.as_str())
    }

    fn stamp(&self) -> Result<(), SdkInstallError> {
        std::fs::write(&self.marker, &self.stamp).map_err(io(&self.marker))
    }
}

/// `package` (PyPI) in a venv: the version `pin_dir/requirements.txt` pins with hashes,
/// or any published one (`pip install package==VERSION` with what it depends on).
pub fn python(
    project: &Project,
    pin_dir: &str,
    package: &str,
    wanted: &Wanted,
) -> Result<PythonInstall, SdkInstallError> {
    let req_path = project.root.join(pin_dir).join("requirements.txt");
    let requirements = std::fs::read_to_string(&req_path).map_err(io(&req_path))?;
    let pinned = python_pin(&requirements, package)
        .ok_or_else(|| SdkInstallError::NoPin {
            file: req_path.clone(),
            package: package.into(),
        })?
        .to_string();
    let lock = ("requirements.txt", requirements.as_str());
    let slot = Slot::new(project, "py", package, &pinned, wanted, lock, "==");
    let (version, venv) = (slot.version.clone(), slot.dir.clone());
    if !slot.installed() {
        fresh_venv(&venv)?;
        let mut pip = process_group::piped(venv.join("bin/pip"));
        pip.args(["install", "--quiet", "--disable-pip-version-check"]);
        match slot.pinned {
            true => pip
                .args(["--no-deps", "--require-hashes", "-r"])
                .arg(&req_path),
            false => pip.arg(format!("{package}=={version}")),
        };
        run(pip, &format!("pip install {package}=={version}"))?;
        drop_bundled_clis(&venv)?;
        slot.stamp()?;
    }
    super::cache::touch(&venv).map_err(io(&venv))?;
    Ok(PythonInstall {
        python: venv.join("bin/python"),
        bin: venv.join("bin"),
        version,
    })
}

/// Removes the CLI builds the Agent SDK wheels bundle (`<package>/_bundled/`, 200 MB and
/// more each): a consumer is given saved output, it never starts them.
fn drop_bundled_clis(venv: &Path) -> Result<(), SdkInstallError> {
    let lib = venv.join("lib");
    let pythons = std::fs::read_dir(&lib).map_err(io(&lib))?;
    for site in pythons.flatten().map(|e| e.path().join("site-packages")) {
        for package in std::fs::read_dir(&site).into_iter().flatten().flatten() {
            let bundled = package.path().join("_bundled");
            if bundled.is_dir() {
                std::fs::remove_dir_all(&bundled).map_err(io(&bundled))?;
            }
        }
    }
    Ok(())
}

/// A new venv at `venv` (`$STREAMCHECK_PYTHON`, else python3.11, else python3).
fn fresh_venv(venv: &Path) -> Result<(), SdkInstallError> {
    let interpreter = std::env::var_os("STREAMCHECK_PYTHON")
        .map(PathBuf::from)
        .or_else(|| which::which("python3.11").ok())
        .or_else(|| which::which("python3").ok())
        .ok_or(SdkInstallError::NoPython)?;
    let _ = std::fs::remove_dir_all(venv);
    log::info!("installing a Python consumer into {}", venv.display());
    let mut python = process_group::piped(&interpreter);
    python.args(["-m", "venv"]).arg(venv);
    run(python, &format!("{} -m venv", interpreter.display()))
}

/// `package` (npm) under a prefix: the version `pin_dir/package-lock.json` pins (`npm ci`),
/// or any published one (`npm install package@VERSION`). Optional dependencies are left
/// out: the SDKs' native CLI builds are never run.
pub fn npm(
    project: &Project,
    pin_dir: &str,
    package: &str,
    wanted: &Wanted,
) -> Result<NpmInstall, SdkInstallError> {
    let dir = project.root.join(pin_dir);
    let read = |name: &str| {
        let p = dir.join(name);
        std::fs::read_to_string(&p).map_err(io(&p))
    };
    let (manifest, lock) = (read("package.json")?, read("package-lock.json")?);
    let pinned = npm_pin(&manifest, package).ok_or_else(|| SdkInstallError::NoPin {
        file: dir.join("package.json"),
        package: package.into(),
    })?;
    let lock = ("package-lock.json", lock.as_str());
    let slot = Slot::new(project, "ts", package, &pinned, wanted, lock, "@");
    let (version, prefix) = (slot.version.clone(), slot.dir.clone());
    if !slot.installed() {
        let _ = std::fs::remove_dir_all(&prefix);
        std::fs::create_dir_all(&prefix).map_err(io(&prefix))?;
        log::info!("installing {package} {version} into {}", prefix.display());
        let mut npm = process_group::piped("npm");
        let common = ["--omit=optional", "--no-audit", "--no-fund", "--prefix"];
        if slot.pinned {
            for name in ["package.json", "package-lock.json"] {
                let to = prefix.join(name);
                std::fs::copy(dir.join(name), &to).map_err(io(&to))?;
            }
            npm.arg("ci").args(common).arg(&prefix);
        } else {
            let to = prefix.join("package.json");
            std::fs::write(&to, "{\"private\":true}\n").map_err(io(&to))?;
            (npm.args(["install", "--save-exact"]).args(common))
                .arg(&prefix)
                .arg(format!("{package}@{version}"));
        }
        run(npm, &format!("npm install {package}@{version}"))?;
        slot.stamp()?;
    }
    super::cache::touch(&prefix).map_err(io(&prefix))?;
    Ok(NpmInstall {
        package_dir: prefix.join("node_modules").join(package),
        version,
    })
}

/// How long one install step (npm, a venv, pip) may take.
const INSTALL_LIMIT: Duration = Duration::from_secs(30 * 60);

/// Runs an install step; its stderr is the error when it fails.
fn run(mut cmd: std::process::Command, what: &str) -> Result<(), SdkInstallError> {
    cmd.stdin(std::process::Stdio::null());
    let step = |why: String| SdkInstallError::Step {
        what: what.to_string(),
        why,
    };
    process_group::run_blocking(cmd, Some(INSTALL_LIMIT))
        .map_err(|e| step(e.to_string()))?
        .success(what, Some(INSTALL_LIMIT))
        .map(drop)
        .map_err(|e| step(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_are_read_from_the_lockfiles() {
        let req = "# comment\nanyio==4 \\\n    --hash=sha256:x\nclaude-agent-sdk==0.2.189 \\\n    --hash=sha256:y\n";
        assert_eq!(python_pin(req, "claude-agent-sdk"), Some("0.2.189"));
        assert_eq!(python_pin(req, "anyio"), Some("4"));
        assert_eq!(python_pin("anyio==4\n", "claude-agent-sdk"), None);
        let manifest = r#"{"dependencies": {"@a/b": "1.2.3"}}"#;
        assert_eq!(npm_pin(manifest, "@a/b").as_deref(), Some("1.2.3"));
        assert_eq!(npm_pin(manifest, "c"), None);
    }

    #[test]
    fn a_version_has_a_cache_folder_of_its_own() {
        assert_eq!(
            folder("py", "claude-agent-sdk", "0.1.37"),
            "sdk-py-claude-agent-sdk@0.1.37"
        );
        assert_eq!(
            folder("ts", "@anthropic-ai/claude-agent-sdk", "0.3.330"),
            "sdk-ts-claude-agent-sdk@0.3.330"
        );
    }
}
