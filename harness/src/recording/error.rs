//! [`RecordError`]: why a recording could not be made or written, or why a pending file
//! could not be written back into its scenario. Each message is the sentence a user sees
//! (after `streamcheck: `, on a `review` line, or as the reason a scenario was not recorded).

use crate::divergence::Divergence;
use crate::file_error::FileError;
use crate::runner::Exit;
use crate::scenario::ScenarioError;
use crate::trial_id::{ScenarioId, TargetName};
use std::path::PathBuf;

/// Why recording, or editing a scenario file with a recording, failed.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// A file (a scenario, a record profile) that cannot be read or written.
    #[error(transparent)]
    Io(#[from] FileError<std::io::Error>),
    /// A YAML file (a scenario, a record profile) that does not parse.
    #[error(transparent)]
    Yaml(#[from] FileError<serde_yaml::Error>),
    /// A pending file that cannot be read or removed; `review` names the file on the line.
    #[error("{source}")]
    PendingFile {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A pending file that does not parse.
    #[error("{source}")]
    PendingYaml {
        #[source]
        source: serde_yaml::Error,
    },
    /// A pending file that cannot be written.
    #[error("cannot write {path}: {source}")]
    WritePending {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Recorded values that do not convert to YAML.
    #[error("{source}")]
    ToYaml {
        #[source]
        source: serde_yaml::Error,
    },
    /// A scenario file that does not load after an edit.
    #[error(transparent)]
    Scenario(#[from] ScenarioError),

    /// The run folder that cannot be created or written.
    #[error(transparent)]
    Reports(#[from] crate::suite::ReportsError),
    /// A dialect's data files (versions.yaml, ...) that do not load.
    #[error(transparent)]
    Data(#[from] crate::install::InstallError),
    /// A recording's run was interrupted.
    #[error("interrupted: nothing recorded")]
    Interrupted,
    /// A drift trial saved without its dialect.
    #[error(
        "{scenario} on {target}: the trial does not say its target's dialect: no pending block can be written for it"
    )]
    NoDialect {
        scenario: ScenarioId,
        target: TargetName,
    },

    /// A run whose CLI did not start, as its spawn divergence says.
    #[error("{0}")]
    DidNotStart(String),
    /// A run the harness killed.
    #[error("the CLI was {0}: nothing stable to record")]
    Killed(Exit),
    /// Runs that ended with different exit codes.
    #[error("the runs exited differently ({first} and {other})")]
    ExitedDifferently { first: Exit, other: Exit },
    /// Runs that printed different numbers of frames.
    #[error("the runs printed different numbers of frames ({first} and {other})")]
    FrameCounts { first: usize, other: usize },
    /// A recorded frame that does not compile as a pattern, as the pattern compiler says it.
    #[error("recorded an invalid pattern: {0}")]
    InvalidPattern(String),
    /// A recording that does not match a run it came from.
    #[error("the recording does not match its own run: {0}")]
    NoSelfMatch(Box<Divergence>),
    /// A version block's frames patch that does not apply to its parent's frames.
    #[error(transparent)]
    BlockPatch(#[from] crate::expectation::PatchError),
    /// A version block whose patched frames do not compile, as the pattern compiler says.
    #[error("the version block holds an invalid pattern: {0}")]
    BlockPattern(serde_json::Error),
    /// A version block that does not match the run it was recorded from.
    #[error("the version block does not match its own run: {0}")]
    BlockNoSelfMatch(Box<Divergence>),

    /// A scenario file without a top-level `expect:`.
    #[error("the file has no top-level `expect:` line")]
    NoExpect,
    /// `expect: {...}` on one line.
    #[error("`expect:` is written in flow style ({{...}}); write it as a block to record into it")]
    ExpectFlowStyle,
    /// `expect:` with nothing under it.
    #[error("`expect:` is empty")]
    ExpectEmpty,
    /// No `<key>:` under `expect:`: a block to be added, unless one must be there.
    #[error("no `{key}:` under `expect:`")]
    NoBlock { key: String },
    /// `expect: <key>: {...}` on one line.
    #[error(
        "`expect: {key}:` is written in flow style ({{...}}); write it as a block to record into it"
    )]
    BlockFlowStyle { key: String },
    /// `expect: <key>:` with nothing under it.
    #[error("`expect: {key}:` is empty")]
    BlockEmpty { key: String },
    /// A first block for a target that has one since it was recorded.
    #[error("the scenario has an `expect: {key}:` block by now: record it again")]
    BlockExists { key: String },
    /// An edited block that does not hold what was recorded.
    #[error("after the rewrite `expect.{key}.{field}` does not hold what was recorded")]
    NotHeld { key: String, field: &'static str },
    /// An edit that changes more of the file than the recorded fields.
    #[error("the rewrite would change more than `expect.{key}`'s {}", .fields.join(" and "))]
    ChangesMore {
        key: String,
        fields: Vec<&'static str>,
    },

    /// A case named by no one-line item of `cases:`, or by several.
    #[error(
        "case `{case}`: {found} one-line items `- {{name: ...}}` name it in `cases:`; write its version block `{key}` by hand"
    )]
    CaseItems {
        case: String,
        found: usize,
        key: String,
    },
    /// A case item that has the block being written.
    #[error("case `{case}` has a block `{key}` already: edit it by hand")]
    CaseBlockExists { case: String, key: String },
    /// A recording of a case that is not a version block.
    #[error("case `{case}`: only a version block of a case is written back")]
    CaseNotBlock { case: String },
    /// An edit that changed which cases the file has.
    #[error("case `{case}`: the rewrite changed the file's cases")]
    CasesChanged { case: String },
    /// A case the edited file does not have.
    #[error("case `{case}` is not in the file")]
    CaseMissing { case: String },
    /// A case that has no block `key` after the edit.
    #[error("case `{case}`: after the rewrite it has no block `{key}`")]
    CaseNoBlock { case: String, key: String },
    /// A case whose block does not hold the recorded exit code after the edit.
    #[error("case `{case}`: after the rewrite its block `{key}` does not hold what was recorded")]
    CaseNotHeld { case: String, key: String },
}

impl RecordError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        RecordError::Io(FileError::new(path, source))
    }

    pub(crate) fn yaml(path: impl Into<PathBuf>, source: serde_yaml::Error) -> Self {
        RecordError::Yaml(FileError::new(path, source))
    }

    pub(crate) fn write_pending(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        RecordError::WritePending {
            path: path.into(),
            source,
        }
    }
}

crate::error::seam_error!(RecordError);

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// Each message is the one the `String` errors it replaced printed, word for word.
    #[test]
    fn messages_read_as_before() {
        let p = Path::new("/p/scenarios/t/x.yaml");
        let io = || std::io::Error::new(std::io::ErrorKind::NotFound, "gone");
        let yaml = || serde_yaml::from_str::<u32>("x").unwrap_err();
        let exit = |code| Exit {
            code: Some(code),
            ..Exit::default()
        };
        let case = || "b".to_string();
        let key = || "claude-code@2.1.74".to_string();
        let cases: Vec<(RecordError, String)> = vec![
            (
                RecordError::io(p, io()),
                format!("{}: {}", p.display(), io()),
            ),
            (
                RecordError::yaml(p, yaml()),
                format!("{}: {}", p.display(), yaml()),
            ),
            (
                RecordError::PendingFile {
                    path: p.into(),
                    source: io(),
                },
                io().to_string(),
            ),
            (
                RecordError::PendingYaml { source: yaml() },
                yaml().to_string(),
            ),
            (
                RecordError::write_pending(p, io()),
                format!("cannot write {}: {}", p.display(), io()),
            ),
            (RecordError::ToYaml { source: yaml() }, yaml().to_string()),
            (
                RecordError::Interrupted,
                "interrupted: nothing recorded".into(),
            ),
            (
                RecordError::NoDialect {
                    scenario: "t/x".into(),
                    target: "claude-code@2".into(),
                },
                "t/x on claude-code@2: the trial does not say its target's dialect: no pending block can be written for it".into(),
            ),
            (
                RecordError::DidNotStart("cannot start x".into()),
                "cannot start x".into(),
            ),
            (
                RecordError::Killed(Exit {
                    termination: crate::printed::exit::Termination::Timeout,
                    ..Exit::default()
                }),
                "the CLI was killed by streamcheck (timeout): nothing stable to record".into(),
            ),
            (
                RecordError::ExitedDifferently {
                    first: exit(0),
                    other: exit(1),
                },
                "the runs exited differently (0 and 1)".into(),
            ),
            (
                RecordError::FrameCounts { first: 3, other: 4 },
                "the runs printed different numbers of frames (3 and 4)".into(),
            ),
            (
                RecordError::InvalidPattern("bad".into()),
                "recorded an invalid pattern: bad".into(),
            ),
            (
                RecordError::NoExpect,
                "the file has no top-level `expect:` line".into(),
            ),
            (
                RecordError::ExpectFlowStyle,
                "`expect:` is written in flow style ({...}); write it as a block to record into it"
                    .into(),
            ),
            (RecordError::ExpectEmpty, "`expect:` is empty".into()),
            (
                RecordError::NoBlock { key: key() },
                "no `claude-code@2.1.74:` under `expect:`".into(),
            ),
            (
                RecordError::BlockFlowStyle { key: key() },
                "`expect: claude-code@2.1.74:` is written in flow style ({...}); write it as a block to record into it".into(),
            ),
            (
                RecordError::BlockEmpty { key: key() },
                "`expect: claude-code@2.1.74:` is empty".into(),
            ),
            (
                RecordError::BlockExists { key: key() },
                "the scenario has an `expect: claude-code@2.1.74:` block by now: record it again"
                    .into(),
            ),
            (
                RecordError::NotHeld {
                    key: key(),
                    field: "exit_code",
                },
                "after the rewrite `expect.claude-code@2.1.74.exit_code` does not hold what was recorded".into(),
            ),
            (
                RecordError::ChangesMore {
                    key: key(),
                    fields: vec!["frames", "exit_code"],
                },
                "the rewrite would change more than `expect.claude-code@2.1.74`'s frames and exit_code".into(),
            ),
            (
                RecordError::CaseItems {
                    case: case(),
                    found: 0,
                    key: key(),
                },
                "case `b`: 0 one-line items `- {name: ...}` name it in `cases:`; write its version block `claude-code@2.1.74` by hand".into(),
            ),
            (
                RecordError::CaseBlockExists {
                    case: case(),
                    key: key(),
                },
                "case `b` has a block `claude-code@2.1.74` already: edit it by hand".into(),
            ),
            (
                RecordError::CaseNotBlock { case: case() },
                "case `b`: only a version block of a case is written back".into(),
            ),
            (
                RecordError::CasesChanged { case: case() },
                "case `b`: the rewrite changed the file's cases".into(),
            ),
            (
                RecordError::CaseMissing { case: case() },
                "case `b` is not in the file".into(),
            ),
            (
                RecordError::CaseNoBlock {
                    case: case(),
                    key: key(),
                },
                "case `b`: after the rewrite it has no block `claude-code@2.1.74`".into(),
            ),
            (
                RecordError::CaseNotHeld {
                    case: case(),
                    key: key(),
                },
                "case `b`: after the rewrite its block `claude-code@2.1.74` does not hold what was recorded".into(),
            ),
        ];
        for (error, before) in cases {
            assert_eq!(error.to_string(), before);
            assert_eq!(crate::error::Error::from(error).to_string(), before);
        }
    }
}
