//! [`DriftError`]: why a drift could not be run, read back or written. Each message is the
//! sentence a user sees (after `streamcheck: `).

use crate::file_error::FileError;
use crate::recording::RecordError;
use crate::store::StoreError;

/// Why running, reading or writing a drift failed.
#[derive(Debug, thiserror::Error)]
pub enum DriftError {
    /// Fewer than two targets named.
    #[error("drift: name at least two targets (--target A --target B)")]
    TooFewTargets,
    /// The run folder that cannot be created or written.
    #[error(transparent)]
    Reports(#[from] crate::suite::ReportsError),
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

crate::error::seam_error!(DriftError);

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
