//! streamcheck: conformance tests for the stream-json protocol of agent CLIs.
//!
//! - [`scenario`]: scenario files (what to send, what the stub answers, what must come out)
//! - [`expectation`] and [`version_range`]: which expectation holds at a target's version
//! - [`pattern`] and [`matcher`]: partial JSON patterns and frame-sequence matching
//! - [`invariants`]: protocol rules checked in every scenario
//! - [`target`]: the CLIs under test (install, version, flags, environment)
//! - [`supported`]: `targets/<target>/versions.yaml`, `claude-code@supported` and `@latest`
//! - [`fixtures`]: `$FIXTURES` (the project's test fixtures) in a scenario's args, env and files
//! - [`runner`]: one scenario on one target, in its own sandbox and stub
//! - [`suite`]: many trials in parallel, sharding, filters
//! - [`commands::compare`]: parity of two targets (neutral events per dialect, parity.md)
//! - [`report`]: summary.md, junit.xml, results.json and one report per divergence
//! - [`bench`]: `streamcheck bench`, the harness against the CLI's own run time and its peers
//! - [`normalize`]: what changes from run to run (volatile values, sandbox paths), in one place
//! - [`frame`]: a frame's kind and the JSON types in it; [`text`]: clipping and escaping
//! - [`commands`]: `record` (and `review`), `drift`

pub mod bench;
pub mod commands;
pub mod divergence;
pub mod expectation;
pub mod fixtures;
pub mod frame;
pub mod invariants;
pub mod matcher;
pub mod normalize;
pub mod output;
pub mod pattern;
pub mod report;
pub mod runner;
pub mod scenario;
pub mod suite;
pub mod supported;
pub mod target;
pub mod text;
pub mod version_range;
