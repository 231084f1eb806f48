//! [`InstallError`]: why a target could not be named, looked up or installed. Each message
//! is the sentence a user sees (after `streamcheck: `, or as a target's reason for being
//! unavailable).

use crate::dialect::NotFromNpm;
use crate::file_error::FileError;
use crate::known::KnownError;
use crate::process_group::HelperError;
use std::path::PathBuf;

/// Why naming, looking up or installing a target failed.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// A file or path that cannot be read or resolved.
    #[error(transparent)]
    Io(#[from] FileError<std::io::Error>),
    /// An installed package's `package.json` that cannot be read.
    #[error("cannot read {path}: {source}")]
    Unreadable {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A YAML file (`versions.yaml`, a target file) that does not parse.
    #[error(transparent)]
    Yaml(#[from] FileError<serde_yaml::Error>),
    /// A JSON file (`package.json`) that does not parse.
    #[error(transparent)]
    Json(#[from] FileError<serde_json::Error>),
    /// `targets/<target>/versions.yaml` is missing or unreadable.
    #[error("{path}: {source} (`{target}@supported` needs the list of supported versions there)")]
    NoVersionsFile {
        path: PathBuf,
        target: String,
        #[source]
        source: std::io::Error,
    },
    /// `versions.yaml` with an empty `supported` list.
    #[error("{path}: `supported` lists no version")]
    NoSupportedVersion { path: PathBuf },
    /// `NAME@` with nothing after the `@`.
    #[error("`{name}`: give a version after `@`")]
    NoVersionAfterAt { name: String },
    /// A target name that is no dialect.
    #[error(
        "unknown target `{base}`: use {}, or --target-command PATH",
        known_targets()
    )]
    UnknownTarget { base: String },
    /// `NAME@latest` for a target that is not published on npm.
    #[error("`{name}`: only a target from npm knows where to look up its latest release")]
    LatestNotOnNpm { name: String },
    /// A dialect whose CLIs are not installed from npm.
    #[error(transparent)]
    NotFromNpm(#[from] NotFromNpm),
    /// `npm view` could not be started.
    #[error("cannot run npm view {package} {field}: {source}")]
    NpmViewCannotRun {
        package: String,
        field: String,
        #[source]
        source: std::io::Error,
    },
    /// `npm view` answered nothing.
    #[error("npm view {package} {field} printed nothing")]
    NpmViewPrintedNothing { package: String, field: String },
    /// `npm view PACKAGE versions` printed something other than a JSON list.
    #[error("npm view {package} versions --json: {source}")]
    NpmVersionsNotJson {
        package: String,
        #[source]
        source: serde_json::Error,
    },
    /// A helper (`npm view`, an installer) that failed or ran out of time.
    #[error(transparent)]
    Helper(#[from] HelperError),
    /// An installer (npm, cargo) that could not be started.
    #[error("cannot run the installer: {source}")]
    InstallerCannotRun {
        #[source]
        source: std::io::Error,
    },
    /// A `package.json` whose dependencies do not pin the package.
    #[error("{path} pins no {package}")]
    NoPin { path: PathBuf, package: String },
    /// An installed package's `package.json` without a version.
    #[error("{path} has no version")]
    NoVersion { path: PathBuf },
    /// A command target named by a bare name that is neither here nor on `PATH`.
    #[error("{path}: no such file here, and no executable of that name on PATH")]
    NotOnPath { path: PathBuf },
    /// A command target that is not a file.
    #[error("{path}: cannot start: not a file")]
    NotAFile { path: PathBuf },
    /// A command target without an execute bit.
    #[error("{path}: cannot start: not executable (chmod +x {path})")]
    NotExecutable { path: PathBuf },
    /// A command target that cannot be inspected or started.
    #[error("{path}: cannot start: {source}")]
    CannotStart {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A dialect's known-divergence list that does not load.
    #[error(transparent)]
    Known(#[from] KnownError),
    /// A dialect's `tools.yaml` that does not load.
    #[error(transparent)]
    Tools(#[from] crate::toolmap::ToolMapError),
    /// A dialect's `rules.yaml` that does not load.
    #[error(transparent)]
    Rules(#[from] crate::expectation::rules::RulesError),
}

impl InstallError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        InstallError::Io(FileError::new(path, source))
    }

    pub(crate) fn yaml(path: impl Into<PathBuf>, source: serde_yaml::Error) -> Self {
        InstallError::Yaml(FileError::new(path, source))
    }

    pub(crate) fn json(path: impl Into<PathBuf>, source: serde_json::Error) -> Self {
        InstallError::Json(FileError::new(path, source))
    }
}

/// The target names `--target` takes: `claude-code, claude-code@VERSION, ...`.
fn known_targets() -> String {
    let names: Vec<String> = (crate::dialect::Dialect::ALL.iter())
        .map(|d| format!("{d}, {d}@VERSION"))
        .collect();
    names.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// Each message is the one the `String` errors it replaced printed, word for word.
    #[test]
    fn messages_read_as_before() {
        let p = Path::new("/p/targets/x/versions.yaml");
        let io = || std::io::Error::new(std::io::ErrorKind::NotFound, "gone");
        let cases: Vec<(InstallError, String)> = vec![
            (
                InstallError::io(p, io()),
                format!("{}: {}", p.display(), io()),
            ),
            (
                InstallError::Unreadable {
                    path: p.into(),
                    source: io(),
                },
                format!("cannot read {}: {}", p.display(), io()),
            ),
            (
                InstallError::NoVersionsFile {
                    path: p.into(),
                    target: "caliban".into(),
                    source: io(),
                },
                format!(
                    "{}: {} (`caliban@supported` needs the list of supported versions there)",
                    p.display(),
                    io()
                ),
            ),
            (
                InstallError::NoSupportedVersion { path: p.into() },
                format!("{}: `supported` lists no version", p.display()),
            ),
            (
                InstallError::NoVersionAfterAt {
                    name: "claude-code@".into(),
                },
                "`claude-code@`: give a version after `@`".into(),
            ),
            (
                InstallError::UnknownTarget {
                    base: "gemini".into(),
                },
                format!(
                    "unknown target `gemini`: use {}, or --target-command PATH",
                    (crate::dialect::Dialect::ALL.iter())
                        .map(|d| format!("{d}, {d}@VERSION"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ),
            (
                InstallError::LatestNotOnNpm {
                    name: "caliban@latest".into(),
                },
                "`caliban@latest`: only a target from npm knows where to look up its latest release"
                    .into(),
            ),
            (
                InstallError::NpmViewCannotRun {
                    package: "pkg".into(),
                    field: "version".into(),
                    source: io(),
                },
                format!("cannot run npm view pkg version: {}", io()),
            ),
            (
                InstallError::NpmViewPrintedNothing {
                    package: "pkg".into(),
                    field: "versions".into(),
                },
                "npm view pkg versions printed nothing".into(),
            ),
            (
                InstallError::InstallerCannotRun { source: io() },
                format!("cannot run the installer: {}", io()),
            ),
            (
                InstallError::NoPin {
                    path: p.into(),
                    package: "pkg".into(),
                },
                format!("{} pins no pkg", p.display()),
            ),
            (
                InstallError::NoVersion { path: p.into() },
                format!("{} has no version", p.display()),
            ),
            (
                InstallError::NotOnPath { path: "mycli".into() },
                "mycli: no such file here, and no executable of that name on PATH".into(),
            ),
            (
                InstallError::NotAFile { path: p.into() },
                format!("{}: cannot start: not a file", p.display()),
            ),
            (
                InstallError::NotExecutable { path: p.into() },
                format!(
                    "{}: cannot start: not executable (chmod +x {})",
                    p.display(),
                    p.display()
                ),
            ),
            (
                InstallError::CannotStart {
                    path: p.into(),
                    source: io(),
                },
                format!("{}: cannot start: {}", p.display(), io()),
            ),
        ];
        for (error, before) in cases {
            assert_eq!(error.to_string(), before);
        }
    }
}
