//! Turning what a CLI printed into an expectation, insta-style: the engine under
//! `streamcheck record` and `drift`'s pending blocks.
//!
//! What the CLI printed becomes frame patterns ([`generalise`](mod@generalise): uuids,
//! session ids, durations, timestamps, sandbox paths and the CLI version are generalised,
//! the rest is kept exact). Nothing is written into a scenario: each recording goes to a
//! pending file ([`pending`]), `reports/pending/<id>.<target>.yaml`, which `streamcheck
//! review` applies with [`yaml_edit`], textually, so comments and other targets stay as
//! written. A scenario with no expectation for the target gets its first block
//! ([`first`]), a version other than the pinned one a version block ([`block`]).
//! [`frames`] makes the frames a recording holds, [`model`] holds what a recording comes
//! to, [`profile`] the keys a dialect's recording keeps.
//!
//! [`recorded`] is one run as the comparison and a first block see it, and
//! [`as_written`] says when a CLI refused a scenario written for another dialect.

pub mod as_written;
pub mod block;
mod error;
pub mod first;
pub mod frames;
pub mod generalise;
pub mod model;
pub mod pending;
pub mod profile;
pub mod recorded;
pub mod yaml_edit;

pub use error::RecordError;
pub use model::{Outcome, PendingFile, Recorder, Recording};
pub use pending::{pending_files, Pending, PendingPlace};

use crate::runner::{Status, Trial};
use crate::scenario::{Scenario, TargetExpect};
use frames::{frames_of, kept_frames, runs_agree};
use generalise::covers;
use serde_json::Value;
use std::collections::BTreeMap;

/// Turns the runs of one scenario on one target into a pending expectation, or says
/// why not. Pure but for the clock (`recorded_at`): `trials` are the runs (at least one).
pub fn pending_for(
    rec: &Recorder,
    scenario: &Scenario,
    expect_key: &str,
    trials: &[Trial],
) -> Outcome<Box<Pending>> {
    let Some(first) = trials.first() else {
        return Outcome::NotRecorded("no run".into());
    };
    if let Some(why) = first.status.did_not_run() {
        return Outcome::Skipped(why.to_string());
    }
    if let Some(case) = &scenario.case {
        // A version block of the case's own (`expect:` in its item) says what this case
        // does on another release; the expectation shared through parameters is not
        // rewritten from one case.
        if rec.is_other_version(first.expect_version())
            && !first::has_none_for(&scenario.file.expect, expect_key)
        {
            return match block_pending(rec, scenario, expect_key, trials) {
                Outcome::Pending(mut p) => {
                    p.case = Some(case.clone());
                    Outcome::Pending(p)
                }
                other => other,
            };
        }
        return Outcome::NotRecorded(format!(
            "case `{case}` of a `cases:` matrix: its expectation is shared with the other cases through `{{{{parameters}}}}`, so a recording of one case on the pinned release is not written back; edit `expect:` in {} by hand (this run is in the report; on another release a recording becomes a version block of the case's own)",
            scenario.display_path()
        ));
    }
    if first::has_none_for(&scenario.file.expect, expect_key) {
        return first::first_block(rec, scenario, expect_key, trials);
    }
    if rec.is_other_version(first.expect_version()) {
        return block_pending(rec, scenario, expect_key, trials);
    }
    let Some(expect) = scenario.file.expect.get(expect_key) else {
        return Outcome::Skipped(format!("no expectation for {expect_key}"));
    };
    if let Err(why) = runs_agree(trials) {
        return Outcome::NotRecorded(why.to_string());
    }
    let mut notes = Vec::new();
    let frames = match frames_of(rec, scenario, trials, expect) {
        Ok(frames) => frames,
        Err(why) => return Outcome::NotRecorded(why.to_string()),
    };
    if frames.is_some() && has_any_order(first) {
        notes.push("the current expectation has any_order groups; this recording pins the order of one run".into());
    }
    if unchanged(first, expect, frames.as_deref()) {
        return Outcome::Unchanged;
    }
    if first.status == Status::Passed {
        notes.push("the current expectation passes; this recording pins the full frames".into());
    }
    let mut p = Pending::new(rec.project, scenario, expect_key, first);
    p.notes = notes;
    p.exit_code = first.exit.code;
    p.frames = frames;
    Outcome::Pending(Box::new(p))
}

/// A recording on a version other than the pinned one: a version block holding what
/// differs from the expectation that version gets without it.
fn block_pending(
    rec: &Recorder,
    scenario: &Scenario,
    target: &str,
    trials: &[Trial],
) -> Outcome<Box<Pending>> {
    let first = &trials[0];
    let version = first.expect_version();
    let expect = &scenario.file.expect;
    let key = block::block_key(expect, target, version);
    let Some((parent_key, parent)) = block::parent(expect, &key, target, version) else {
        return Outcome::Skipped(format!("no expectation for {target}"));
    };
    if first.status == Status::Passed {
        return Outcome::Unchanged;
    }
    if let Err(why) = runs_agree(trials) {
        return Outcome::NotRecorded(why.to_string());
    }
    let recorded = match frames_of(rec, scenario, trials, parent) {
        Ok(frames) => frames,
        Err(why) => return Outcome::NotRecorded(why.to_string()),
    };
    let delta = match recorded {
        None => BTreeMap::new(),
        Some(recorded) => {
            let actual = kept_frames(first, parent);
            let parent_frames: Vec<Value> = parent.frames.iter().map(|e| e.0.source()).collect();
            // Expectations `{$ref: initialize}` the scripted client's request ids.
            let seed = match &first.client {
                Some(log) => log.captures(),
                None => block::infer_refs(&parent_frames, &actual),
            };
            let (mode, vars) = (parent.mode, &first.vars);
            let patch = block::frames_patch(&parent_frames, mode, &recorded, &actual, vars, &seed);
            if let Err(why) = block::verify(parent, &patch, &first.output.frames, vars, &seed) {
                return Outcome::NotRecorded(why.to_string());
            }
            patch
        }
    };
    let exit_code = first.exit.code.filter(|c| Some(*c) != parent.exit_code);
    if delta.is_empty() && exit_code.is_none() {
        return Outcome::Unchanged;
    }
    let mut p = Pending::new(rec.project, scenario, &key, first);
    p.refines = Some(parent_key);
    p.exit_code = exit_code;
    p.frames_patch = Some(delta);
    Outcome::Pending(Box::new(p))
}

fn has_any_order(trial: &Trial) -> bool {
    trial
        .expected_frames
        .iter()
        .any(|f| f.get("any_order").is_some())
}

/// True when the recording says nothing the current expectation does not.
fn unchanged(first: &Trial, expect: &TargetExpect, frames: Option<&[Value]>) -> bool {
    let unchanged_frames = frames.is_none_or(|f| {
        f.len() == first.expected_frames.len()
            && first
                .expected_frames
                .iter()
                .zip(f)
                .all(|(c, n)| covers(c, n))
    });
    let unchanged_exit = first.exit.code.is_none() || first.exit.code == expect.exit_code;
    unchanged_frames && unchanged_exit
}
