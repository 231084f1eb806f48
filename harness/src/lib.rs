//! streamcheck: conformance tests for the stream-json protocol of agent CLIs.
//!
//! - [`scenario`]: scenario files (what to send, what the stub answers, what must come out)
//! - [`pattern`] and [`matcher`]: partial JSON patterns and frame-sequence matching
//! - [`invariants`]: protocol rules checked in every scenario
//! - [`target`]: the CLIs under test (install, version, flags, environment)
//! - [`runner`]: one scenario on one target, in its own sandbox and stub; [`output`] is
//!   what the CLI printed (re-exported from [`runner::output`])
//! - [`suite`]: many trials in parallel, sharding, filters
//! - [`dialect`] and [`compare`]: parity of two targets (neutral events per dialect, parity.md)
//! - [`report`]: summary.md, junit.xml, results.json and one report per divergence

pub mod compare;
pub mod dialect;
pub mod divergence;
pub mod drift;
pub mod invariants;
pub mod matcher;
pub mod pattern;
pub mod record;
pub mod report;
pub mod runner;
pub mod scenario;
pub mod suite;
pub mod target;

pub use runner::output;
