//! Targets: how to install, version, point at the stub and invoke one CLI.
//!
//! What differs between families of CLIs is in [`dialect`], one file per [`Dialect`];
//! this folder holds what is the same for all: naming a target (`spec.rs`: [`TargetSpec`],
//! [`Target`], [`Project`]), installing it (`install.rs`), and its command line and
//! environment for one trial (`invocation.rs`).

pub mod dialect;
mod install;
mod invocation;
mod spec;

pub use dialect::{Dialect, NpmPin};
pub use install::resolve;
pub use invocation::{shell_quote, Invocation, Sandbox};
pub use spec::{
    version_lt, NotInstalled, Project, Source, Target, TargetSpec, CLAUDE_CODE_DIR, DUMMY_API_KEY,
};
