//! [`DriftError`]: why a drift could not be run, read back or written. Each message is the
//! sentence a user sees (after `streamcheck: `).

use crate::commands::record::RecordError;
use crate::file_error::FileError;
use crate::store::StoreError;
use std::path::PathBuf;

/// Why running, reading or writing a drift failed.
#[derive(Debug, thiserror::Error)]
pub enum DriftError {
    /// Fewer than two targets named.
    #[error("drift: name at least two targets (--target A --target B)")]
    TooFewTargets,
    /// The run folder of the runs cannot be created.
    #[error("cannot write reports to {}: {source}", .dir.display())]
    CreateReports {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The runs could not write their reports.
    #[error("cannot write reports: {source}")]
    WriteReports {
        #[source]
        source: std::io::Error,
    },
    /// The runs could not write their closing run files.
    #[error("{source}")]
    FinishReports {
        #[source]
        source: std::io::Error,
    },
    /// The runs were interrupted.
    #[error("interrupted: no drift report written")]
    Interrupted,
    /// The run folder that cannot be read back.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A pending version block that cannot be opened.
    #[error(transparent)]
    Pending(#[from] RecordError),
    /// drift.md or drift.json that cannot be written.
    #[error(transparent)]
    Write(#[from] FileError<std::io::Error>),
    /// drift.json that cannot be made.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
}

impl From<DriftError> for crate::error::Error {
    fn from(e: DriftError) -> Self {
        crate::error::Error::Seam(Box::new(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// Each message is the one the `String` errors it replaced printed, word for word.
    #[test]
    fn messages_read_as_before() {
        let p = Path::new("/r/reports/runs/x");
        let io = || std::io::Error::new(std::io::ErrorKind::NotFound, "gone");
        let cases: Vec<(DriftError, String)> = vec![
            (
                DriftError::TooFewTargets,
                "drift: name at least two targets (--target A --target B)".into(),
            ),
            (
                DriftError::CreateReports {
                    dir: p.into(),
                    source: io(),
                },
                format!("cannot write reports to {}: {}", p.display(), io()),
            ),
            (
                DriftError::WriteReports { source: io() },
                format!("cannot write reports: {}", io()),
            ),
            (DriftError::FinishReports { source: io() }, io().to_string()),
            (
                DriftError::Interrupted,
                "interrupted: no drift report written".into(),
            ),
            (
                FileError::new(p.join("drift.md"), io()).into(),
                format!("{}/drift.md: {}", p.display(), io()),
            ),
        ];
        for (error, before) in cases {
            assert_eq!(error.to_string(), before);
            assert_eq!(crate::error::Error::from(error).to_string(), before);
        }
    }
}
