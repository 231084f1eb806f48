//! [`StoreError`]: why a run folder (or a folder of captured runs) could not be read,
//! merged or compared. Each message is the sentence a user sees (after `streamcheck: `).

use crate::dialect::Dialect;
use crate::file_error::FileError;
use crate::trial_id::{ScenarioId, TargetName};
use std::path::PathBuf;

/// Why reading, writing or comparing run folders failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A file or folder of a run that cannot be read, written or listed.
    #[error(transparent)]
    Io(#[from] FileError<std::io::Error>),
    /// `results.json` or a saved trial that does not parse.
    #[error(transparent)]
    Json(#[from] FileError<serde_json::Error>),
    /// `results.json` written by a streamcheck with another schema.
    #[error("{path}: schema_version {found} (this streamcheck reads {reads})")]
    SchemaVersion {
        path: PathBuf,
        found: u32,
        reads: u32,
    },
    /// A line of the index (`results.jsonl`) that does not parse and is not a last line
    /// cut off mid-write.
    #[error("{path}:{line}: {source}")]
    IndexLine {
        path: PathBuf,
        line: usize,
        #[source]
        source: serde_json::Error,
    },
    /// A saved trial written by a streamcheck with a newer format.
    #[error("{path}: format_version {found} (this streamcheck reads {reads} and older)")]
    SavedFormat {
        path: PathBuf,
        found: u32,
        reads: u32,
    },
    /// Writing the merged run into `path`: the message has only ever named the cause.
    #[error("{source}")]
    MergeWrite {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// `merge` with no folder.
    #[error("merge: name the report folders to merge")]
    MergeNothing,
    /// Two folders holding the same trial.
    #[error(
        "merge: {first} and {second} both hold {scenario} on {target}: the same run (or shard) named twice would count it twice"
    )]
    MergeTwice {
        first: PathBuf,
        second: PathBuf,
        scenario: ScenarioId,
        target: TargetName,
    },
    /// Folders holding no trial at all.
    #[error("merge: the {folders} folder(s) hold no trial: nothing to merge")]
    MergeEmpty { folders: usize },
    /// A capture folder whose name does not say its target.
    #[error(
        "{dir}: name a capture folder <dialect>-<version>, the dialect one of {}",
        Dialect::known_keys()
    )]
    CaptureName { dir: PathBuf },
    /// A captured case's `NAME.exit_code` that cannot be read.
    #[error("{dir}/{name}.exit_code: {source}")]
    ExitCodeUnreadable {
        dir: PathBuf,
        name: String,
        #[source]
        source: std::io::Error,
    },
    /// A captured case's `NAME.exit_code` that holds no number.
    #[error("{dir}/{name}.exit_code: `{code}` is not an exit code")]
    NotAnExitCode {
        dir: PathBuf,
        name: String,
        code: String,
    },
    /// A run folder without `outputs/`.
    #[error("{dir}: no saved trials (outputs/)")]
    NoSavedTrials { dir: PathBuf },
    /// A run folder holding the trials of more than one target.
    #[error(
        "{dir}: trials of two targets ({first} and {other}); compare takes one target's run per folder"
    )]
    TwoTargets {
        dir: PathBuf,
        first: String,
        other: String,
    },
    /// Two run folders of the same target.
    #[error("compare needs two different targets, both folders hold {target}")]
    SameTargetFolders { target: String },
    /// `compare` run with other than two targets.
    #[error("compare takes exactly two targets (--target A --target B)")]
    NotTwoTargets,
    /// `compare` run with the same target twice.
    #[error("compare needs two different targets, got {target} twice")]
    SameTargetTwice { target: String },
}

impl StoreError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        StoreError::Io(FileError::new(path, source))
    }

    pub(crate) fn json(path: impl Into<PathBuf>, source: serde_json::Error) -> Self {
        StoreError::Json(FileError::new(path, source))
    }
}

crate::error::seam_error!(StoreError);

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// Each message is the one the `String` errors it replaced printed, word for word.
    #[test]
    fn messages_read_as_before() {
        let p = Path::new("/r/runs/x");
        let io = || std::io::Error::new(std::io::ErrorKind::NotFound, "gone");
        let json = || serde_json::from_str::<u32>("x").unwrap_err();
        let cases: Vec<(StoreError, String)> = vec![
            (
                StoreError::io(p, io()),
                format!("{}: {}", p.display(), io()),
            ),
            (
                StoreError::json(p, json()),
                format!("{}: {}", p.display(), json()),
            ),
            (
                StoreError::SchemaVersion {
                    path: p.join("results.json"),
                    found: 9,
                    reads: 1,
                },
                format!(
                    "{}/results.json: schema_version 9 (this streamcheck reads 1)",
                    p.display()
                ),
            ),
            (
                StoreError::MergeWrite {
                    path: p.into(),
                    source: io(),
                },
                io().to_string(),
            ),
            (
                StoreError::MergeNothing,
                "merge: name the report folders to merge".into(),
            ),
            (
                StoreError::MergeTwice {
                    first: "a".into(),
                    second: "b".into(),
                    scenario: "t/x".into(),
                    target: "claude-code".into(),
                },
                "merge: a and b both hold t/x on claude-code: the same run (or shard) named twice would count it twice".into(),
            ),
            (
                StoreError::MergeEmpty { folders: 2 },
                "merge: the 2 folder(s) hold no trial: nothing to merge".into(),
            ),
            (
                StoreError::CaptureName { dir: p.into() },
                format!(
                    "{}: name a capture folder <dialect>-<version>, the dialect one of {}",
                    p.display(),
                    Dialect::known_keys()
                ),
            ),
            (
                StoreError::ExitCodeUnreadable {
                    dir: "caps/".into(),
                    name: "bash".into(),
                    source: io(),
                },
                format!("caps//bash.exit_code: {}", io()),
            ),
            (
                StoreError::NotAnExitCode {
                    dir: p.into(),
                    name: "bash".into(),
                    code: "x".into(),
                },
                format!("{}/bash.exit_code: `x` is not an exit code", p.display()),
            ),
            (
                StoreError::NoSavedTrials { dir: p.into() },
                format!("{}: no saved trials (outputs/)", p.display()),
            ),
            (
                StoreError::TwoTargets {
                    dir: p.into(),
                    first: "a".into(),
                    other: "b".into(),
                },
                format!(
                    "{}: trials of two targets (a and b); compare takes one target's run per folder",
                    p.display()
                ),
            ),
            (
                StoreError::SameTargetFolders { target: "a".into() },
                "compare needs two different targets, both folders hold a".into(),
            ),
            (
                StoreError::NotTwoTargets,
                "compare takes exactly two targets (--target A --target B)".into(),
            ),
            (
                StoreError::SameTargetTwice { target: "a".into() },
                "compare needs two different targets, got a twice".into(),
            ),
        ];
        for (error, before) in cases {
            assert_eq!(error.to_string(), before);
            assert_eq!(crate::error::Error::from(error).to_string(), before);
        }
    }
}
