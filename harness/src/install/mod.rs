//! Targets: naming one (`spec.rs`: [`TargetSpec`], [`Target`]), the project's folders
//! (`project.rs`: [`Project`]), the releases a dialect supports (`supported.rs`), and
//! a dialect's data read once per project (`data.rs`), installing a target (`resolve.rs`), and the release cache kept
//! under a size cap (`cache.rs`); why any of it fails: [`InstallError`] (`error.rs`). What differs between
//! families of CLIs is in [`crate::dialect`]; a trial's command line is decided in
//! [`crate::plan`].

pub mod cache;
pub mod data;
mod error;
pub mod project;
mod resolve;
pub mod sdk;
pub mod spec;
pub mod supported;

pub use data::DialectData;
pub use error::InstallError;
pub use project::{Project, CLAUDE_CODE_DIR};
pub use resolve::{features, resolve};
pub use spec::{
    version_lt, Cause, Declared, NotInstalled, Source, Target, TargetSpec, DUMMY_API_KEY,
};
