//! streamcheck: conformance tests for the stream-json protocol of agent CLIs.
//!
//! - [`client`]: the scripted client (SDK profiles, responders to control requests)
//! - [`scenario`]: scenario files (what to send, what the stub answers, what must come out)
//! - [`pattern`] and [`matcher`]: partial JSON patterns and frame-sequence matching
//! - [`invariants`]: protocol rules checked in every scenario
//! - [`target`]: the CLIs under test (install, version, flags, environment)
//! - [`runner`]: one scenario on one target, in its own sandbox and stub
//! - [`suite`]: many trials in parallel, sharding, filters
//! - [`dialect`] and [`compare`]: parity of two targets (neutral events per dialect, parity.md)
//! - [`report`]: summary.md, junit.xml, results.json and one report per divergence
//! - [`bench`]: `streamcheck bench`, the harness against the CLI's own run time and its peers

pub mod bench;
pub mod client;
pub mod compare;
pub mod dialect;
pub mod divergence;
pub mod drift;
pub mod invariants;
pub mod matcher;
pub mod output;
pub mod pattern;
pub mod record;
pub mod report;
pub mod runner;
pub mod scenario;
pub mod sdk_contract;
pub mod suite;
pub mod target;
