//! [`BuildError`]: why run folders could not be read into an inventory, or checked against
//! it again. Each message is the sentence a user sees (after `streamcheck: `).

use crate::store::StoreError;
use crate::trial_id::ScenarioId;
use std::path::PathBuf;

/// Why reading run folders for the inventory failed.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// A run folder (its saved trials, its `results.json`) that cannot be read.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A saved trial written before trials said their dialect.
    #[error(
        "{}: the saved trial of {scenario} does not say its dialect (saved by an older streamcheck)",
        .dir.display()
    )]
    NoDialect { dir: PathBuf, scenario: ScenarioId },
    /// A trial whose release is no version.
    #[error("{}: {scenario} ran on `{release}`: {source}", .dir.display())]
    Release {
        dir: PathBuf,
        scenario: ScenarioId,
        release: String,
        #[source]
        source: semver::Error,
    },
}

crate::error::seam_error!(BuildError);

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// Each message is the one the `String` errors it replaced printed, word for word.
    #[test]
    fn messages_read_as_before() {
        let p = Path::new("/r/runs/x");
        let semver = || semver::Version::parse("one").unwrap_err();
        let cases: Vec<(BuildError, String)> = vec![
            (
                StoreError::NoSavedTrials { dir: p.into() }.into(),
                format!("{}: no saved trials (outputs/)", p.display()),
            ),
            (
                BuildError::NoDialect {
                    dir: p.into(),
                    scenario: "t/x".into(),
                },
                format!(
                    "{}: the saved trial of t/x does not say its dialect (saved by an older streamcheck)",
                    p.display()
                ),
            ),
            (
                BuildError::Release {
                    dir: p.into(),
                    scenario: "t/x".into(),
                    release: "one".into(),
                    source: semver(),
                },
                format!("{}: t/x ran on `one`: {}", p.display(), semver()),
            ),
        ];
        for (error, before) in cases {
            assert_eq!(error.to_string(), before);
            assert_eq!(crate::error::Error::from(error).to_string(), before);
        }
    }
}
