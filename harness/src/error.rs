//! The one error type of streamcheck. Every command maps it to the same exit code
//! (see `cli::Verdict`): an error is a usage, scenario-file or setup problem, never a
//! divergence of the CLI under test.

use crate::client::ClientError;
use crate::config::{ConfigError, EntryError};
use crate::dialect::NotFromNpm;
use crate::file_error::FileError;
use crate::install::InstallError;
use crate::known::KnownError;
use crate::protocol::{ProtocolError, SchemaError, SdkError};
use crate::scenario::ScenarioError;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The command line asks for something that cannot be done.
    #[error("{0}")]
    Usage(String),
    /// Scenario files that do not load; each was already shown with its file and line.
    #[error("{0} scenario file(s) could not be loaded (see above)")]
    ScenarioFiles(usize),
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    #[error(transparent)]
    Io(#[from] FileError<std::io::Error>),
    /// Naming, looking up or installing a target.
    #[error(transparent)]
    Install(#[from] InstallError),
    /// A scripted client (`client:`) that does not load, or cannot write a line.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// A typed error of a seam on a floor above this file's (`store::StoreError`,
    /// `recording::RecordError`), which this file may not name (the layers test):
    /// each converts itself into this beside its own type.
    #[error(transparent)]
    Seam(Box<dyn std::error::Error + Send + Sync>),
    /// The project file (`streamcheck.toml`) that does not load or hold.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A dialect's `rules.yaml` that does not load.
    #[error(transparent)]
    Rules(#[from] crate::expectation::rules::RulesError),
    /// A known-divergence list that does not load.
    #[error(transparent)]
    Known(#[from] KnownError),
    /// A protocol inventory, its examples or the SDK's schema that does not load or fit.
    #[error(transparent)]
    Protocol(#[from] ProtocolError),
    /// Anything else a command reports as a sentence (installing a target, writing a report).
    #[error("{0}")]
    Failed(String),
}

/// `From<$seam> for Error` through [`Error::Seam`]: for a seam's error type above this
/// floor, declared beside that type.
macro_rules! seam_error {
    ($seam:ty) => {
        impl From<$seam> for $crate::error::Error {
            fn from(e: $seam) -> Self {
                $crate::error::Error::Seam(Box::new(e))
            }
        }
    };
}
pub(crate) use seam_error;

impl From<String> for Error {
    fn from(message: String) -> Self {
        Error::Failed(message)
    }
}

impl From<EntryError> for Error {
    fn from(e: EntryError) -> Self {
        Error::Config(e.into())
    }
}

impl From<SchemaError> for Error {
    fn from(e: SchemaError) -> Self {
        Error::Protocol(e.into())
    }
}

impl From<SdkError> for Error {
    fn from(e: SdkError) -> Self {
        Error::Protocol(SchemaError::from(e).into())
    }
}

impl From<NotFromNpm> for Error {
    fn from(e: NotFromNpm) -> Self {
        Error::Install(e.into())
    }
}

impl Error {
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io(FileError::new(path, source))
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
