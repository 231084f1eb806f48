//! [`AuditError`]: why a trial could not be audited (its reason in the report), or why the
//! audit could not be run or written (after `streamcheck: `).

use crate::file_error::FileError;
use crate::store::StoreError;

/// Why auditing a trial, or the audit, failed.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// A trial that did not pass.
    #[error("the trial did not pass, so there is nothing to mutate")]
    NotPassed,
    /// A trial's plan that cannot be made again, as the planner says it.
    #[error("{0}")]
    Replanned(crate::plan::PlanError),
    /// A trial whose saved output fails its scenario now, with the first divergence.
    #[error("its saved output no longer passes: {divergence}")]
    NoLongerPasses { divergence: String },
    /// The planner that cannot be made (a dialect's data), as it says it.
    #[error(transparent)]
    Planner(#[from] crate::install::InstallError),
    /// The fresh run that could not be made or reported.
    #[error(transparent)]
    Run(#[from] crate::error::Error),
    /// The fresh run's report folder that cannot be written.
    #[error(transparent)]
    Reports(#[from] crate::suite::ReportsError),
    /// The run folder whose saved trials cannot be read.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// audit.md or audit.json that cannot be written (the report folder named).
    #[error(transparent)]
    Write(#[from] FileError<std::io::Error>),
}

impl From<AuditError> for crate::error::Error {
    fn from(e: AuditError) -> Self {
        match e {
            AuditError::Run(e) => e,
            e => crate::error::Error::Seam(Box::new(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// Each message is the one the `String` errors it replaced printed, word for word.
    #[test]
    fn messages_read_as_before() {
        let p = Path::new("/r/reports/audit");
        let io = || std::io::Error::new(std::io::ErrorKind::NotFound, "gone");
        let cases: Vec<(AuditError, String)> = vec![
            (
                AuditError::NotPassed,
                "the trial did not pass, so there is nothing to mutate".into(),
            ),
            (
                AuditError::NoLongerPasses {
                    divergence: "exit code 1, expected 0".into(),
                },
                "its saved output no longer passes: exit code 1, expected 0".into(),
            ),
            (
                FileError::new(p, io()).into(),
                format!("{}: {}", p.display(), io()),
            ),
            (
                crate::error::Error::io(p, io()).into(),
                format!("{}: {}", p.display(), io()),
            ),
        ];
        for (error, before) in cases {
            assert_eq!(error.to_string(), before);
            assert_eq!(crate::error::Error::from(error).to_string(), before);
        }
    }
}
