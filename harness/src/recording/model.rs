//! What `record` comes to per scenario and target, and what it needs besides the runs.

use super::profile::RecordProfile;
use crate::install::Project;
use crate::trial_id::{ScenarioId, TargetName};
use crate::version_range::parse_version;
use std::path::PathBuf;

/// What the runs of one scenario on one target come to. `P` is how a pending recording
/// is carried: first the [`Pending`](super::Pending) itself, then, once `record` wrote it,
/// its file.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome<P = PendingFile> {
    /// The recording differs from the current expectation.
    Pending(P),
    /// The recording equals the current expectation.
    Unchanged,
    Skipped(String),
    /// Could not be recorded (the CLI was killed, did not start, runs disagree...).
    NotRecorded(String),
}

/// Where a pending recording was written.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingFile {
    pub path: PathBuf,
    /// An unreviewed pending file was there before.
    pub replaced: bool,
    /// It adds the target's first block to the scenario.
    pub first_block: bool,
}

/// One scenario on one target after `record`.
#[derive(Debug, Clone, PartialEq)]
pub struct Recording {
    pub scenario: ScenarioId,
    pub target: TargetName,
    pub outcome: Outcome,
}

/// What `record` needs besides the runs.
#[derive(Debug, Clone, Copy)]
pub struct Recorder<'a> {
    pub project: &'a Project,
    /// The dialect's record profile; `None` records every key (`--full`).
    pub profile: Option<&'a RecordProfile>,
    /// The version the general expectation is written for (`targets/<dialect>/versions.yaml`);
    /// a recording on another version becomes a version block.
    pub pinned: Option<&'a str>,
}

impl Recorder<'_> {
    /// True when a recording on `version` goes into a version block.
    pub fn is_other_version(&self, version: &str) -> bool {
        self.pinned.is_some_and(|p| p != version) && parse_version(version).is_some()
    }
}
