//! The protocol as printed: one inventory per dialect (`targets/<dialect>/protocol.yaml`)
//! of every frame kind, key path, JSON type and named list the catalogue makes the CLI
//! print, per release; every trial is checked against it (`runner::protocol`). Building it
//! and judging a release are commands (`commands::protocol`).
//!
//! - [`observe`]: what one trial printed, as the inventory counts it
//! - [`inventory`]: the inventory, built and widened one release at a time, and its file
//! - [`check`](mod@check): a trial against the inventory (findings), a run's findings grouped;
//!   [`against`]: the inventories a planned trial is checked against, read before it runs
//! - [`parity`]: a re-implementation's parity table (`protocol = "parity"`)
//! - [`render`]: the reference (`docs/protocol/<dialect>.md`)
//! - [`html`]: the reference as an HTML page with a search box
//! - [`requests`]: what a trial sent to the model API, as the request inventory
//!   (`targets/<dialect>/requests.yaml`) counts it; [`requests_render`]: the reference page
//!   (`render`'s) with its Requests part
//! - [`schema`]: a release's JSON Schema
//! - [`sdk`]: the Agent SDK's declared message types against the inventory
//! - [`error`]: why any of these could not be read or made

pub mod against;
pub mod check;
pub mod error;
pub mod html;
pub mod inventory;
pub mod observe;
pub mod parity;
pub mod render;
pub mod requests;
pub mod requests_render;
pub mod schema;
pub mod sdk;

pub use against::ProtocolCheck;
pub use check::{Change, Direction, Finding, Policy, What};
pub use error::{InventoryError, ProtocolError, SchemaError, SdkError};
pub use inventory::Inventory;
pub use observe::Observed;
