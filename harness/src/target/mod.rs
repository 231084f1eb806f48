//! Targets: how to install, version, point at the stub and invoke one CLI.
//!
//! What differs between families of CLIs is in [`dialect`], one file per [`Dialect`];
//! this folder holds what is the same for all: naming a target (`spec.rs`: [`TargetSpec`],
//! [`Target`]), the project's folders (`project.rs`: [`Project`]), installing it
//! (`install.rs`), and its command line and environment for one trial (`invocation.rs`).
//! Modules that a target's own files depend on import those files directly, not this one.

pub mod dialect;
mod install;
pub mod invocation;
pub mod project;
pub mod spec;

pub use dialect::{Dialect, NpmPin};
pub use install::resolve;
pub use invocation::{shell_quote, Invocation, Sandbox};
pub use project::{Project, CLAUDE_CODE_DIR};
pub use spec::{version_lt, Cause, NotInstalled, Source, Target, TargetSpec, DUMMY_API_KEY};
