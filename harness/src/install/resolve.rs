//! Installing a target and reading its version: [`resolve`], one function per [`Source`].

use super::error::InstallError;
use super::project::Project;
use super::spec::{Cause, NotInstalled, Source, Target, TargetSpec};
use crate::dialect::{CargoPin, Dialect, Distribution, NpmPin};
use crate::process_group;
use crate::toolmap::ToolMap;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// A missing target's cause, reason and the command that installs it.
type Missing = (Cause, String, String);

/// Installs a target when `install` allows it and it is missing, then reads its version.
/// Its dialect's data files are read first: one that does not load makes the target
/// [`Cause::Broken`] whether or not its CLI is installed.
pub fn resolve(
    spec: &TargetSpec,
    project: &Project,
    install: bool,
) -> Result<Target, NotInstalled> {
    let broken = |reason: String| NotInstalled::broken(&spec.name, reason);
    let not = |(cause, reason, install): Missing| NotInstalled {
        target: spec.name.clone(),
        cause,
        reason,
        install,
    };
    let data = project
        .data(spec.dialect)
        .map_err(|e| broken(e.to_string()))?;
    let (program, lead_args, version) = match &spec.source {
        Source::PinnedNpm => {
            let pin = NpmPin::of(spec.dialect).map_err(|e| broken(e.to_string()))?;
            pinned_npm(pin, project, install).map_err(not)?
        }
        Source::Npm { version } => {
            let pin = NpmPin::of(spec.dialect).map_err(|e| broken(e.to_string()))?;
            cached_npm(pin, version, project, install).map_err(not)?
        }
        Source::Cargo { version } => {
            let Distribution::Cargo(pin) = spec.dialect.conventions().distribution() else {
                return Err(broken(format!(
                    "{} is not built from crates.io",
                    spec.dialect
                )));
            };
            let program = cargo_install(pin, version, project, install).map_err(not)?;
            (program, Vec::new(), version.clone())
        }
        Source::Command { path, .. } => {
            // Trials run in their own working directory: make the path absolute.
            let path = command_path(path).map_err(|e| broken(e.to_string()))?;
            let version = command_version(&path).map_err(|e| broken(e.to_string()))?;
            (
                path,
                Vec::new(),
                version.unwrap_or_else(|| "unknown".into()),
            )
        }
    };
    Ok(Target {
        name: spec.name.clone(),
        dialect: spec.dialect,
        program,
        lead_args,
        version,
        features: features(spec.dialect, &data.tools),
        env: match &spec.source {
            Source::Command { env, .. } => env.clone(),
            _ => Vec::new(),
        },
        conforms_to: match &spec.source {
            Source::Command { conforms_to, .. } => conforms_to
                .clone()
                .or_else(|| data.versions.as_ref().map(|v| v.pinned.clone())),
            _ => None,
        },
        known: data.known.clone(),
        data,
        project: project.clone(),
        declared: Default::default(),
    })
}

/// A command target's program as an absolute path: `path` as it is when it names a file
/// (`./mycli`, `bin/mycli`), else a bare name (`claude`) looked up on `PATH`, as a shell
/// would.
fn command_path(path: &Path) -> Result<PathBuf, InstallError> {
    let bare = path.components().count() == 1 && !path.exists();
    if bare {
        return which::which(path).map_err(|_| InstallError::NotOnPath {
            path: path.to_path_buf(),
        });
    }
    std::fs::canonicalize(path).map_err(|e| InstallError::io(path, e))
}

type Installed = (PathBuf, Vec<String>, String);

/// The CLI pinned in `targets/<name>/package-lock.json`, installed with `npm ci`.
fn pinned_npm(pin: &NpmPin, project: &Project, install: bool) -> Result<Installed, Missing> {
    let dir = project.root.join(pin.dir);
    let cmd = format!("npm ci --prefix {}", pin.dir);
    let (program, lead_args) = pin.launch(&dir);
    if !program.exists() {
        if !install {
            return Err((Cause::NotInstalled, "not installed".into(), cmd));
        }
        log::info!("installing the pinned {} ({cmd}) ...", pin.title);
        let mut npm = Command::new("npm");
        npm.args(["ci", "--no-audit", "--no-fund", "--prefix"])
            .arg(&dir);
        run_install(npm).map_err(|e| (Cause::Broken, e.to_string(), cmd.clone()))?;
    }
    let version =
        npm_package_version(&dir, pin.package).map_err(|e| (Cause::Broken, e.to_string(), cmd))?;
    Ok((program, lead_args, version))
}

/// Another version from npm, installed side by side in the cache beside its runtime.
fn cached_npm(
    pin: &NpmPin,
    version: &str,
    project: &Project,
    install: bool,
) -> Result<Installed, Missing> {
    let dir = project
        .cache_dir()
        .join(format!("{}@{version}", pin.target));
    let cmd = format!(
        "streamcheck run --target {}@{version} (without --no-install)",
        pin.target
    );
    let (program, lead_args) = pin.launch(&dir);
    if !program.exists() {
        if !install {
            return Err((Cause::NotInstalled, "not installed".into(), cmd));
        }
        log::info!(
            "installing {} {version} from npm into {} ...",
            pin.title,
            dir.display()
        );
        std::fs::create_dir_all(&dir).map_err(|e| (Cause::Broken, e.to_string(), cmd.clone()))?;
        std::fs::write(dir.join("package.json"), "{\"private\":true}\n")
            .map_err(|e| (Cause::Broken, e.to_string(), cmd.clone()))?;
        let mut npm = Command::new("npm");
        npm.args([
            "install",
            "--no-audit",
            "--no-fund",
            "--save-exact",
            "--prefix",
        ])
        .arg(&dir)
        .arg(format!("{}@{version}", pin.package))
        .args(pin.runtime);
        run_install(npm).map_err(|e| (Cause::Broken, e.to_string(), cmd.clone()))?;
    }
    let installed = npm_package_version(&dir, pin.package)
        .map_err(|e| (Cause::Broken, e.to_string(), cmd.clone()))?;
    super::cache::touch(&dir).map_err(|e| (Cause::Broken, e.to_string(), cmd))?;
    Ok((program, lead_args, installed))
}

/// A crate from crates.io, built with `cargo install` into the cache.
fn cargo_install(
    pin: &CargoPin,
    version: &str,
    project: &Project,
    install: bool,
) -> Result<PathBuf, Missing> {
    let dir = project.cache_dir().join(format!("{}@{version}", pin.krate));
    let cmd = format!(
        "cargo install {} --version {version} --locked {} --root {}",
        pin.krate,
        pin.install_args.join(" "),
        dir.display()
    );
    let program = dir.join("bin").join(pin.bin);
    if !program.exists() {
        if !install {
            return Err((Cause::NotInstalled, "not built yet".into(), cmd));
        }
        log::info!(
            "building {} {version} from crates.io (can take 20 minutes or more, once) ...",
            pin.krate
        );
        let mut cargo = Command::new("cargo");
        cargo
            .args(["install", pin.krate, "--version", version, "--locked"])
            .args(pin.install_args)
            .arg("--root")
            .arg(&dir);
        run_install(cargo).map_err(|e| (Cause::Broken, e.to_string(), cmd.clone()))?;
    }
    Ok(program)
}

/// How long an installer (npm, cargo) may run before it is killed: building a crate takes
/// 20 minutes or more on a small machine.
const INSTALL_LIMIT: Duration = Duration::from_secs(2 * 60 * 60);

/// Runs an installer to its end, its output shown as it comes, in a process group of its
/// own (see [`process_group`]).
fn run_install(mut cmd: Command) -> Result<(), InstallError> {
    let program = cmd.get_program().to_string_lossy().into_owned();
    cmd.stdin(std::process::Stdio::null());
    process_group::run_blocking(cmd, Some(INSTALL_LIMIT))
        .map_err(|source| InstallError::InstallerCannotRun { source })?
        .success(&format!("the installer ({program})"), Some(INSTALL_LIMIT))?;
    Ok(())
}

fn npm_package_version(prefix: &Path, package: &str) -> Result<String, InstallError> {
    let manifest = prefix
        .join("node_modules")
        .join(package)
        .join("package.json");
    let text = match std::fs::read_to_string(&manifest) {
        Ok(text) => text,
        Err(source) => {
            return Err(InstallError::Unreadable {
                path: manifest,
                source,
            })
        }
    };
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| InstallError::json(&manifest, e))?;
    match v["version"].as_str() {
        Some(version) => Ok(version.to_string()),
        None => Err(InstallError::NoVersion { path: manifest }),
    }
}

/// How long a command target may take to print its version.
const VERSION_LIMIT: Duration = Duration::from_secs(5);

/// What a command's `--version` prints first that looks like a version (none: unknown).
/// Err when the command cannot be started at all: not a file, not executable, a missing
/// interpreter. Its output is read as it comes (a CLI that ignores `--version` may print
/// without end); once it exits, or after [`VERSION_LIMIT`], its group is killed, with
/// anything it left running.
fn command_version(path: &Path) -> Result<Option<String>, InstallError> {
    use std::process::Stdio;
    let cannot = |source| InstallError::CannotStart {
        path: path.to_path_buf(),
        source,
    };
    if !path.is_file() {
        return Err(InstallError::NotAFile {
            path: path.to_path_buf(),
        });
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = path.metadata().map_err(cannot)?.permissions().mode();
        if mode & 0o111 == 0 {
            return Err(InstallError::NotExecutable {
                path: path.to_path_buf(),
            });
        }
    }
    let mut cmd = process_group::piped(path);
    cmd.arg("--version").env_clear().stderr(Stdio::null());
    let ended = process_group::run_blocking(cmd, Some(VERSION_LIMIT)).map_err(cannot)?;
    if ended.status.is_none() {
        return Ok(None);
    }
    let text = String::from_utf8_lossy(&ended.stdout);
    Ok(text
        .split_whitespace()
        .find(|w| w.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .map(str::to_string))
}

/// What a dialect's CLIs offer: its flags, and its tools (by the neutral names of its
/// tool map where it has one). Versions that differ are told apart by the scenario's
/// version blocks (`expect.claude-code@RANGE`), not here.
pub fn features(dialect: Dialect, tools: &ToolMap) -> BTreeSet<String> {
    let builtin = dialect
        .conventions()
        .builtin_tools()
        .iter()
        .map(|t| t.to_string());
    (builtin.chain(tools.neutral_names().map(str::to_string)))
        .map(|t| format!("tool:{t}"))
        .chain(dialect.conventions().flags().iter().map(|f| f.to_string()))
        .collect()
}
