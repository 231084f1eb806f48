//! [`Conventions`]: everything that differs between dialects, one method each. Every
//! method is required, so a new dialect's file that forgets one does not compile. A leaf
//! beside the dialect files: they implement it, `mod.rs` hands them out.

use super::distribution::Distribution;
use super::launch::{PrintMode, Written};
use super::neutral::Neutral;
use crate::toolmap::ToolMap;
use serde_json::Value;
use std::path::Path;
use stub_api::BuiltinRule;

/// How one family of CLIs is named, installed, launched and read.
pub trait Conventions: Sync {
    // Names.

    /// Its name everywhere: `--target`, a scenario's `expect` key, `targets/<key>/`,
    /// `dialect:` in a target file, `parity.json`.
    fn expect_key(&self) -> &'static str;
    /// Its name in prose (`Claude Code`).
    fn title(&self) -> &'static str;
    /// Where its CLI comes from.
    fn distribution(&self) -> Distribution;
    /// Tools its CLIs ship under these names (a tool map adds the ones it renames).
    fn builtin_tools(&self) -> &'static [&'static str];
    /// The flag features its CLIs offer (`features: [partial-messages]`).
    fn flags(&self) -> &'static [&'static str];
    /// Whether it speaks the SDK control protocol (control_request and control_response
    /// on stdin and stdout, `initialize`, can_use_tool, hooks, SDK MCP).
    fn speaks_control_protocol(&self) -> bool;

    // Launch.

    /// Arguments before everything else, given the scenario's own (`own`).
    fn lead_args(&self, own: &[String]) -> Vec<String>;
    /// The command line for a scenario that leaves it to the harness.
    fn default_args(&self, mode: &PrintMode) -> Vec<String>;
    /// Flags written in Claude Code's spelling (a scenario's shared `args:`, an SDK's
    /// command line), in this dialect's.
    fn translate_args(&self, args: &[String], tools: &ToolMap) -> Vec<String>;
    /// The environment it adds to the common one (HOME, PATH, the stub's address, ...).
    fn env(&self, home: &Path) -> Vec<(String, String)>;
    /// Set last, whatever a scenario says: what keeps it on loopback.
    fn forced_env(&self) -> &'static [(&'static str, &'static str)];
    /// Prefixes of the environment variables a report shows beside the command line.
    fn shown_env(&self) -> &'static [&'static str];
    /// Writes what it needs in its HOME before a trial, unless the scenario wrote it.
    fn prepare_home(&self, home: &Path) -> std::io::Result<()>;
    /// The stub's built-in rule that answers its own side request, if it makes one.
    fn side_request_rule(&self) -> Option<BuiltinRule>;

    // Compare.

    /// Whether exit `code` is how it refuses a command line or stdin it cannot use.
    fn is_usage_exit(&self, code: i32) -> bool;
    /// Why a scenario written for another dialect may not suit this one.
    fn as_written_hints(&self, written: &Written) -> Vec<String>;
    /// A result subtype in neutral terms: caliban's names, which say what happened
    /// (`success`, `error`, `max_turns`, `budget_exceeded`, `cancelled`, `max_tokens`,
    /// `time_budget`).
    fn neutral_subtype<'a>(&self, raw: &'a str) -> &'a str;
    /// Its frames as neutral events.
    fn neutral(&self, frames: &[Value]) -> Neutral;
    /// How its stream-json differs in shape from Claude Code's (a Markdown `- ` list,
    /// the items said once in `parity.md`); empty for Claude Code itself.
    fn shape_differences(&self) -> &'static str;
}
