#![warn(unreachable_pub)]
//! streamcheck: conformance tests for the stream-json protocol of agent CLIs.
//!
//! The rooms, ground floor first (a room reads its own floor and those below it; the
//! floors are checked by `harness/tests/layers.rs`):
//! - words: [`text`] (clipping, escaping, Markdown tables), [`frame`] (a frame's kind and
//!   the JSON types in it), [`pattern`] (partial JSON patterns), [`toolmap`] (tool names per
//!   dialect), [`version_range`] (ranges and the one version order), [`trial_id`] (a
//!   trial's scenario id and target name), [`process_group`] (starting any process,
//!   killed with its group); [`divergence`] (what a divergence is: its kind, frame, line,
//!   JSON path) and [`normalize`] (what changes from run to run, in one place)
//! - [`printed`]: what a CLI printed and how it ended, as data; [`dialect`]: the families
//!   of CLIs, one file each, their facts and their [`dialect::Conventions`]
//! - [`matcher`] (frame-sequence matching), [`invariants`] (protocol rules checked in
//!   every scenario), [`client`] (the scripted client on the CLI's stdin),
//!   [`sdk_contract`] (what the Agent SDKs require of the output)
//! - the formats: [`scenario`] (scenario files), [`expectation`] (version blocks and
//!   release-wide rules), [`catalogue`] (finding scenario files), [`known`] (known
//!   divergences), [`config`] (`streamcheck.toml`), [`error`] (the one error type)
//! - [`install`]: targets (names, the project's folders, supported releases, installing);
//!   [`fixtures`]: `$FIXTURES` and installing test fixtures
//! - [`plan`]: everything decided for a trial, once ([`plan::Planner`], [`plan::TrialPlan`])
//! - [`runner`]: executing a plan in a sandbox and checking what came out
//! - [`store`]: a run folder as stored, and [`store::RunReader`]
//! - [`report`]: summary.md, junit.xml, results.json, index.html and one report per
//!   divergence; [`suite`]: many trials in parallel, sharding, filters
//! - [`boundary`]: searching the published releases for where a behaviour changes
//!   (installing each once, the cache under its cap; `bisect` and `ranges --prove`);
//!   [`recording`]: turning what a CLI printed into an expectation (`record`, `drift`)
//! - [`commands`]: `record` (and `review`), `drift`, `compare`, `bisect`, `ranges`, `audit`,
//!   `consume` (and `replay-cli`), `protocol` and `verdict`; no command imports another
//!
//! What a person reads on a terminal lives in the binary (`cli/`).

pub mod boundary;
pub mod catalogue;
pub mod client;
pub mod commands;
pub mod config;
pub mod dialect;
pub mod divergence;
pub mod error;
pub mod expectation;
pub mod file_error;
pub mod findings;
pub mod fixtures;
pub mod frame;
pub mod install;
pub mod invariants;
pub mod known;
pub mod matcher;
pub mod normalize;
pub mod pattern;
pub mod plan;
pub mod printed;
pub mod process_group;
pub mod protocol;
pub mod recording;
pub mod report;
pub mod runner;
pub mod scenario;
pub mod sdk_contract;
pub mod store;
pub mod suite;
pub mod text;
pub mod toolmap;
pub mod trial_id;
pub mod version_range;
