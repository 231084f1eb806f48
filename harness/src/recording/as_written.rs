//! A scenario run as written on a dialect it was not written for: what may not suit it,
//! and whether the CLI refused the command line itself.

use super::recorded::Recorded;
use crate::dialect::{Dialect, Written};
use crate::scenario::{Scenario, StdinLine};
use crate::text::clip_line;
use serde_json::Value;

/// Why a scenario written for another dialect may not suit `dialect`.
pub fn as_written_hints(scenario: &Scenario, dialect: Dialect) -> Vec<String> {
    let user_frames = (scenario.file.stdin.iter().flatten())
        .filter_map(|l| match l {
            StdinLine::Frame(v) if v.get("type").and_then(Value::as_str) == Some("user") => Some(v),
            _ => None,
        })
        .collect();
    dialect.conventions().as_written_hints(&Written {
        user_frames,
        args: &scenario.file.args,
        default_args: scenario.file.default_args,
    })
}

/// How the CLI refused the invocation itself (`exit 2: <its first stderr line>`), if it did.
pub fn refusal(dialect: Dialect, r: &Recorded) -> Option<String> {
    rejected(dialect, r).then(|| {
        let stderr = r
            .stderr_headline()
            .map_or(String::new(), |l| clip_line(l, 200));
        format!("exit {}: {stderr}", r.exit)
    })
}

/// The CLI refused the invocation itself: a usage error before any model request.
fn rejected(dialect: Dialect, r: &Recorded) -> bool {
    let usage = r
        .exit
        .code
        .is_some_and(|code| dialect.conventions().is_usage_exit(code));
    usage && r.requests.unwrap_or(0) == 0 && !r.stderr.trim().is_empty()
}
