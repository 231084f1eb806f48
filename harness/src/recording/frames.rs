//! The frames a recording holds: the runs' frames the expectation does not ignore,
//! through the record profile, generalised, merged across runs and checked against every
//! run they came from.

use super::error::RecordError;
use super::generalise::{generalise, merge_runs, session_capture_name, Volatile};
use super::model::Recorder;
use super::profile::Contract;
use crate::divergence::Kind;
use crate::matcher::{self, Expected, FrameRules, Mode};
use crate::pattern::{Captures, Pattern};
use crate::runner::Trial;
use crate::scenario::{OutputFormat, Scenario, TargetExpect};
use serde_json::Value;

/// The recorded frames, or `None` for an output format without frames.
pub fn frames_of(
    rec: &Recorder,
    scenario: &Scenario,
    trials: &[Trial],
    expect: &TargetExpect,
) -> Result<Option<Vec<Value>>, RecordError> {
    if scenario.file.output_format == OutputFormat::Text {
        return Ok(None);
    }
    let named: Vec<Value> = expect.frames.iter().map(|e| e.0.source()).collect();
    let contract = rec.profile.map(|p| p.contract(&named, &scenario.file.tags));
    recorded_frames(trials, expect, contract.as_ref()).map(Some)
}

/// Fails when a run did not start, was killed, or exited unlike the first.
pub fn runs_agree(trials: &[Trial]) -> Result<(), RecordError> {
    let first = &trials[0];
    for t in trials {
        if let Some(d) = t.divergences.iter().find(|d| d.kind == Kind::Spawn) {
            return Err(RecordError::DidNotStart(d.message.clone()));
        }
        if t.exit.termination.by_harness() {
            return Err(RecordError::Killed(t.exit.clone()));
        }
        if t.exit.code != first.exit.code {
            return Err(RecordError::ExitedDifferently {
                first: first.exit.clone(),
                other: t.exit.clone(),
            });
        }
    }
    Ok(())
}

/// The runs' frames (those `ignore` does not drop), generalised and merged; checked to
/// match every run they came from.
fn recorded_frames(
    trials: &[Trial],
    expect: &TargetExpect,
    contract: Option<&Contract>,
) -> Result<Vec<Value>, RecordError> {
    let ignore: Vec<Pattern> = expect.ignore.iter().map(|p| p.0.clone()).collect();
    let session =
        session_capture_name(&trials[0].expected_frames).unwrap_or_else(|| "session".into());
    let mut merged: Option<Vec<Value>> = None;
    for t in trials {
        let kept: Vec<Value> = kept_frames(t, expect)
            .iter()
            .map(|f| contract.map_or_else(|| f.clone(), |c| c.apply(f)))
            .collect();
        let version = (!t.key.target_version.is_empty()).then_some(t.expect_version());
        let this = generalise(
            &kept,
            &Volatile {
                vars: &t.vars,
                version,
                session_capture: &session,
            },
        );
        merged = Some(match merged {
            None => this,
            Some(m) => merge_runs(&m, &this)?,
        });
    }
    let frames = merged.unwrap_or_default();
    let compiled: Vec<Expected> = frames
        .iter()
        .map(|f| Pattern::compile(f).map(Expected::Frame))
        .collect::<Result<_, _>>()
        .map_err(|e| RecordError::InvalidPattern(e.to_string()))?;
    let rules = FrameRules {
        expected: &compiled,
        ignore: &ignore,
        absent: &[],
        mode: Mode::Exact,
    };
    for t in trials {
        let found = matcher::match_frames(&rules, &t.output.frames, &t.vars, &mut Captures::new());
        if let Some(d) = found.first() {
            return Err(RecordError::NoSelfMatch(Box::new(d.clone())));
        }
    }
    Ok(frames)
}

/// The frames of a run that the expectation's `ignore` does not drop.
pub fn kept_frames(t: &Trial, expect: &TargetExpect) -> Vec<Value> {
    let ignore: Vec<Pattern> = expect.ignore.iter().map(|p| p.0.clone()).collect();
    t.output
        .frames
        .iter()
        .filter(|f| {
            !ignore
                .iter()
                .any(|p| p.is_match(&f.value, &t.vars, &Captures::new()))
        })
        .map(|f| f.value.clone())
        .collect()
}
