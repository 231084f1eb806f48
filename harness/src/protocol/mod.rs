//! The protocol as printed: one inventory per dialect (`targets/<dialect>/protocol.yaml`)
//! of every frame kind, key path, JSON type and named list the catalogue makes the CLI
//! print, per release; every trial is checked against it.
//!
//! - [`observe`]: what one trial printed, as the inventory counts it
//! - [`inventory`]: the inventory, built and widened one release at a time, and its file
//! - [`check`](mod@check): a trial against the inventory (findings), a run's findings grouped
//! - [`build`]: the inventory from run folders (`streamcheck protocol build|add`)
//! - [`render`]: the reference (`docs/protocol/<dialect>.md`) and a release's JSON Schema
//! - [`trial`](mod@trial): a runner's trial against the inventory, a run's findings grouped
//! - [`sdk`]: the Agent SDK's declared message types against the inventory
//! - [`verdict`](mod@verdict): a release judged from one run (`streamcheck verdict`)

pub mod build;
pub mod check;
pub mod inventory;
pub mod observe;
pub mod render;
pub mod sdk;
pub mod trial;
pub mod verdict;

pub use check::{Change, Finding, Policy, What};
pub use inventory::Inventory;
pub use observe::Observed;
pub use trial::{check_trial, observed, run_findings};
