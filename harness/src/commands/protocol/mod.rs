//! The protocol inventory's commands: building it from run folders
//! (`streamcheck protocol build|add`, [`build`]) and judging a release from one run
//! (`streamcheck verdict`, [`verdict`]); [`error`]: why run folders could not be read for them.

pub mod build;
pub mod error;
pub mod verdict;

pub use error::BuildError;
