//! A target's first expectation in a scenario that has none for it: the run as written
//! (`RunOptions::without_expectation`) becomes a pending new block `expect: <target>:`
//! holding its frames and exit code. Notes tell the reviewer when the CLI refused the
//! command line or the run broke something a block of frames does not state.

use super::as_written::{as_written_hints, refusal};
use super::frames::{frames_of, runs_agree};
use super::model::{Outcome, Recorder};
use super::pending::Pending;
use super::recorded::Recorded;
use crate::dialect::Dialect;
use crate::divergence::Kind;
use crate::expectation::ExpectKey;
use crate::normalize::redact_str;
use crate::runner::Trial;
use crate::scenario::{OutputFormat, Scenario, TargetExpect};
use std::collections::BTreeMap;

/// True when no key under `expect:` is for `target` (neither `target` nor `target@...`).
pub fn has_none_for(expect: &BTreeMap<String, TargetExpect>, target: &str) -> bool {
    !expect
        .keys()
        .any(|k| ExpectKey::parse(k).is_ok_and(|p| p.target == target))
}

/// The pending first block for `target` (on any version: a version block would need a
/// block to refine), from `trials`, the runs as written.
pub fn first_block(
    rec: &Recorder,
    scenario: &Scenario,
    target: &str,
    trials: &[Trial],
) -> Outcome<Box<Pending>> {
    if !scenario.file.runs.is_empty() {
        return Outcome::NotRecorded(format!(
            "a multi-run scenario (`runs:`): its first `{target}:` block (one expectation per run) is written by hand"
        ));
    }
    if let Err(why) = runs_agree(trials) {
        return Outcome::NotRecorded(why.to_string());
    }
    let first = &trials[0];
    let frames = match frames_of(rec, scenario, trials, &TargetExpect::default()) {
        Ok(frames) => frames,
        Err(why) => return Outcome::NotRecorded(why.to_string()),
    };
    if frames.is_none() && first.exit.code.is_none() {
        return Outcome::NotRecorded(format!("nothing to record: no frames and {}", first.exit));
    }
    let mut p = Pending::new(rec.project, scenario, target, first);
    p.new_block = true;
    p.notes = notes(scenario, target, first);
    p.exit_code = first.exit.code;
    p.frames = frames;
    Outcome::Pending(Box::new(p))
}

/// What the reviewer should know about a run as written.
fn notes(scenario: &Scenario, target: &str, t: &Trial) -> Vec<String> {
    let mut notes = vec![format!(
        "the scenario had no expectation for {target}: this is what {} did with it as written",
        t.key.target
    )];
    if let Some(dialect) = Dialect::from_key(target) {
        let run = Recorded::from_trial(t);
        if let Some(why) = refusal(dialect, &run) {
            notes.push(format!(
                "the CLI refused the command line ({why}): reject this, or give the block the `args:` (or `stdin:`) it takes"
            ));
        }
        let hints = as_written_hints(scenario, dialect);
        notes.extend(hints.into_iter().map(|h| format!("as written: {h}")));
    }
    if scenario.file.output_format == OutputFormat::Text {
        notes.push(
            "output_format text: only the exit code is recorded; `text:` is written by hand".into(),
        );
    }
    if let Some(d) = t.divergences.iter().find(|d| !block_states(d.kind)) {
        notes.push(format!(
            "the run also broke what this block does not state, so it fails there as recorded: {}",
            redact_str(&d.message, &t.vars)
        ));
    }
    notes
}

/// Divergences from the empty expectation that the recorded frames and exit code settle.
fn block_states(kind: Kind) -> bool {
    matches!(
        kind,
        Kind::MissingFrame
            | Kind::UnexpectedFrame
            | Kind::FieldMismatch
            | Kind::Order
            | Kind::ExitCode
    )
}
