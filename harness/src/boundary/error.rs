//! [`ProbeError`]: why a release could not be probed, or a probe's trial cannot be judged
//! against another release's expectation. Each message is the sentence a user sees (as a
//! release's reason for not being run, or a harness divergence of the trial).

use crate::install::{InstallError, NotInstalled};
use std::path::PathBuf;
use std::sync::Arc;

/// Why a release could not be probed, or a trial judged; cloned, as each release's result
/// is kept for the run.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ProbeError {
    /// The release's target that cannot be named (its versions file, its spec).
    #[error(transparent)]
    Spec(Arc<InstallError>),
    /// A release that cannot be installed.
    #[error("{0}")]
    NotInstalled(NotInstalled),
    /// The release cache that cannot be kept under its cap.
    #[error("cannot keep {} under its cap: {source}", .cache.display())]
    CacheCap {
        cache: PathBuf,
        #[source]
        source: Arc<std::io::Error>,
    },
    /// A trial's plan that cannot be made again, as the planner says it.
    #[error("{0}")]
    Replanned(crate::plan::PlanError),
    /// A trial held to an expectation pinning other workspace files than its run was
    /// checked against.
    #[error(
        "cannot check it against {held_to}'s expectation: it pins workspace files other than those {own}'s run was checked against, and a finished run keeps none"
    )]
    OtherWorkspaceFiles { held_to: String, own: String },
}

impl From<InstallError> for ProbeError {
    fn from(e: InstallError) -> Self {
        ProbeError::Spec(Arc::new(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::install::Cause;
    use std::path::Path;

    /// Each message is the one the `String` errors it replaced printed, word for word.
    #[test]
    fn messages_read_as_before() {
        let p = Path::new("/c/cache");
        let io = || std::io::Error::new(std::io::ErrorKind::NotFound, "gone");
        let not = NotInstalled {
            target: "claude-code@2.1.0".into(),
            cause: Cause::Broken,
            reason: "npm failed".into(),
            install: "-".into(),
        };
        let cases: Vec<(ProbeError, String)> = vec![
            (
                InstallError::NoVersionAfterAt {
                    name: "claude-code@".into(),
                }
                .into(),
                "`claude-code@`: give a version after `@`".into(),
            ),
            (ProbeError::NotInstalled(not.clone()), not.to_string()),
            (
                ProbeError::CacheCap {
                    cache: p.into(),
                    source: Arc::new(io()),
                },
                format!("cannot keep {} under its cap: {}", p.display(), io()),
            ),
            (
                ProbeError::OtherWorkspaceFiles {
                    held_to: "2.1.5".into(),
                    own: "2.1.0".into(),
                },
                "cannot check it against 2.1.5's expectation: it pins workspace files other than those 2.1.0's run was checked against, and a finished run keeps none".into(),
            ),
        ];
        for (error, before) in cases {
            assert_eq!(error.to_string(), before);
        }
    }
}
