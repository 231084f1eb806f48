//! What a run's output is checked for, beyond its expectation's own patterns.

use crate::invariants::Invariant;
use crate::scenario::{Hang, OutputFormat, TargetExpect};

/// The invariants checked on a run held to `expect` printing `format`: none on text
/// output, the few a single JSON object can break on `json`, else all the expectation
/// does not turn off (and not `exits_after_result` where it pins a hang).
pub fn enabled_invariants(expect: &TargetExpect, format: OutputFormat) -> Vec<Invariant> {
    if format == OutputFormat::Text {
        return Vec::new();
    }
    let skip = expect
        .invariants
        .as_ref()
        .map(|o| o.skip.as_slice())
        .unwrap_or(&[]);
    let pinned = |i: &Invariant| {
        *i == Invariant::ExitsAfterResult && expect.hangs == Some(Hang::AfterResult)
    };
    let mut enabled: Vec<Invariant> = Invariant::ALL
        .into_iter()
        .filter(|i| !skip.contains(i) && !pinned(i))
        .collect();
    if format == OutputFormat::Json {
        enabled.retain(|i| {
            matches!(
                i,
                Invariant::NdjsonOnly
                    | Invariant::ExitsAfterResult
                    | Invariant::ExitCodeMatchesResult
                    | Invariant::SessionMatchesRequest
                    | Invariant::NoReplacementCharacter
            )
        });
    }
    enabled
}
