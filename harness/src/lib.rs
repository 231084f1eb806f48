//! streamcheck: conformance tests for the stream-json protocol of agent CLIs.
//!
//! The core, leaf first:
//! - [`pattern`] and [`matcher`]: partial JSON patterns and frame-sequence matching
//! - [`divergence`]: what a divergence is (its kind, frame, line, JSON path); [`error`]:
//!   the one error type (usage, scenario files, setup), never a divergence
//! - [`invariants`]: protocol rules checked in every scenario
//! - [`frame`]: a frame's kind and the JSON types in it; [`text`]: clipping, escaping and
//!   Markdown tables
//! - [`normalize`]: what changes from run to run (volatile values, sandbox paths), in one place
//! - [`scenario`]: scenario files (what to send, what the stub answers, what must come out)
//! - [`expectation`] and [`version_range`]: which expectation holds at a target's version
//! - [`client`]: the scripted client on the CLI's stdin (SDK profiles, responders to control
//!   requests); [`sdk_contract`]: what the Agent SDKs require of the output
//! - [`fixtures`]: `$FIXTURES` (the project's test fixtures) in a scenario's args, env and files
//! - [`target`]: the CLIs under test (install, version, flags, environment)
//! - [`runner`]: one scenario on one target: sandbox, process, output, check;
//!   [`output`] is what the CLI printed (re-exported from [`runner::output`])
//! - [`suite`]: many trials in parallel, sharding, filters; every planned trial reports
//! - [`report`]: summary.md, junit.xml, results.json and one report per divergence
//!
//! Commands built on the core, one folder each in [`commands`]: `record` (and `review`),
//! `drift`, `compare`, `bisect`, `audit`. What a person reads on a terminal lives in the
//! binary (`cli/`).

pub mod catalogue;
pub mod client;
pub mod commands;
pub mod config;
pub mod consume;
pub mod divergence;
pub mod error;
pub mod expectation;
pub mod fixtures;
pub mod frame;
pub mod invariants;
pub mod known;
pub mod matcher;
pub mod normalize;
pub mod pattern;
pub mod report;
pub mod runner;
pub mod scenario;
pub mod sdk_contract;
pub mod suite;
pub mod supported;
pub mod target;
pub mod text;
pub mod toolmap;
pub mod version_range;

pub use runner::output;
