//! streamcheck: conformance tests for the stream-json protocol of agent CLIs.
//!
//! - [`scenario`]: scenario files (what to send, what the stub answers, what must come out)
//! - [`pattern`] and [`matcher`]: partial JSON patterns and frame-sequence matching
//! - [`invariants`]: protocol rules checked in every scenario
//! - [`target`]: the CLIs under test (install, version, flags, environment)
//! - [`runner`]: one scenario on one target, in its own sandbox and stub
//! - [`suite`]: many trials in parallel, sharding, filters
//! - [`report`]: summary.md, junit.xml, results.json and one report per divergence

pub mod divergence;
pub mod invariants;
pub mod matcher;
pub mod output;
pub mod pattern;
pub mod report;
pub mod runner;
pub mod scenario;
pub mod suite;
pub mod target;
