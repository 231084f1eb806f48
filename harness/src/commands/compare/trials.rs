//! Two live trials of one scenario, compared, with what the trials say besides their
//! output: a side skipped or not started, a side the scenario has no expectation for
//! (it ran it as written, and may have refused the other dialect's flags or stdin, or
//! stalled on them), a side failing its own expectation or going off the stub's script.

use super::aspects::Side;
use super::parity::{Compared, ScenarioParity};
use crate::dialect::Dialect;
use crate::divergence::Kind;
use crate::recording::as_written::{as_written_hints, refusal};
use crate::recording::recorded::Recorded;
use crate::runner::{Status, Trial};
use crate::scenario::{CloseStdin, Scenario, StdinLine};
use crate::text::clip_line;

/// One side's trial, its dialect and its output as the comparison reads it.
struct Ran<'a> {
    trial: &'a Trial,
    dialect: Dialect,
    recorded: Recorded,
}

/// Compares two trials of one scenario, saying when one could not run it as written.
pub fn compare_trials(
    scenario: &Scenario,
    (x, dx): (&Trial, Dialect),
    (y, dy): (&Trial, Dialect),
) -> Compared {
    let no_protocol: Vec<&Trial> = [(x, dx), (y, dy)]
        .into_iter()
        .filter(|(_, d)| {
            scenario.file.client.is_some() && !d.conventions().speaks_control_protocol()
        })
        .map(|(t, _)| t)
        .collect();
    if let Some(t) = no_protocol.first() {
        let (mut sp, unmapped) = ScenarioParity::not_compared(&scenario.id, no_control_protocol(t));
        sp.no_control_protocol = no_protocol
            .iter()
            .map(|t| t.key.target.to_string())
            .collect();
        return (sp, unmapped);
    }
    if let Some(why) = [x, y].into_iter().find_map(why_not_compared) {
        return ScenarioParity::not_compared(&scenario.id, why);
    }
    let ran = [(x, dx), (y, dy)].map(|(trial, dialect)| Ran {
        trial,
        dialect,
        recorded: Recorded::from_trial(trial),
    });
    let [a, b] = ran.each_ref().map(|r| Side {
        name: &r.trial.key.target,
        dialect: r.dialect,
        run: &r.recorded,
    });
    let (mut sp, unmapped) = ScenarioParity::of(&scenario.id, a, b);
    let mut notes = Vec::new();
    for (this, other) in [(&ran[0], &ran[1]), (&ran[1], &ran[0])] {
        let t = this.trial;
        if scenario
            .file
            .expect
            .contains_key(this.dialect.conventions().expect_key())
        {
            notes.extend(own_expectation_note(t));
        } else {
            notes.push(as_written_note(scenario, this));
            if let Some(why) = cannot_run_as_written(scenario, this, other) {
                sp.cannot_run_as_written.push(t.key.target.to_string());
                sp.differences = vec![why];
            }
        }
        notes.extend(off_script_note(scenario, t));
        notes.extend(
            t.notes
                .iter()
                // Said above, with the reasons.
                .filter(|n| !is_ran_as_written_note(n))
                .map(|n| format!("{}: {n}", t.key.target)),
        );
    }
    notes.append(&mut sp.notes);
    sp.notes = notes;
    (sp, unmapped)
}

/// The runner's note that it ran a target without an expectation (said here with reasons).
fn is_ran_as_written_note(note: &str) -> bool {
    note.contains("ran as written, for comparison")
}

/// Why a control/ scenario (one with a `client:` section, a conversation in the control
/// protocol) is not compared: side `t` cannot run it at all, however its trial turned out.
fn no_control_protocol(t: &Trial) -> String {
    format!(
        "{} cannot run control/ scenarios: this scenario scripts an SDK client (`client:`) that talks the control protocol (control_request / control_response on stdin and stdout), which {} does not implement",
        t.key.target, t.key.target
    )
}

/// A side that was skipped or could not be started leaves nothing to compare.
fn why_not_compared(t: &Trial) -> Option<String> {
    match &t.status {
        Status::Skipped(why) => Some(format!("{} skipped it: {why}", t.key.target)),
        Status::Unavailable(why) => Some(format!("{} is unavailable: {why}", t.key.target)),
        _ => t
            .divergences
            .iter()
            .find(|d| d.kind == Kind::Spawn)
            .map(|d| format!("{} could not be started: {}", t.key.target, d.message)),
    }
}

/// A side with an expectation that it fails, or fails in a known way.
fn own_expectation_note(t: &Trial) -> Option<String> {
    match &t.status {
        Status::Failed => Some(format!(
            "{} fails its own expectation here ({} divergence(s); first: {})",
            t.key.target,
            t.divergences.len(),
            t.divergences
                .first()
                .map(|d| clip_line(&d.message, 160))
                .unwrap_or_default()
        )),
        Status::Known(why) => Some(format!("{}: a known divergence: {why}", t.key.target)),
        _ => None,
    }
}

/// A side without an expectation ran the scenario as written: why that may not suit it.
fn as_written_note(scenario: &Scenario, this: &Ran) -> String {
    let hints = as_written_hints(scenario, this.dialect);
    format!(
        "{} has no expectation in this scenario: it ran it as written{}",
        this.trial.key.target,
        if hints.is_empty() {
            String::new()
        } else {
            format!(" ({})", hints.join("; "))
        }
    )
}

/// The one difference to report when `this` refused the scenario or stalled on it while
/// `other` got going: everything else follows from that.
fn cannot_run_as_written(scenario: &Scenario, this: &Ran, other: &Ran) -> Option<String> {
    let r = &this.recorded;
    if never_started(&other.recorded) {
        return None;
    }
    let why = match stalled(r) {
        true => stall_reason(scenario).to_string(),
        false => refusal(this.dialect, r)?,
    };
    Some(format!(
        "{} cannot run this scenario as written ({why}); {} exits {}. The other aspects follow from that and are not differences in substance.",
        this.trial.key.target,
        other.trial.key.target,
        other.recorded.exit
    ))
}

fn stall_reason(scenario: &Scenario) -> &'static str {
    let paused = scenario.file.close_stdin != CloseStdin::Immediately
        || scenario.file.stdin.as_ref().is_some_and(|l| {
            l.iter()
                .any(|l| matches!(l, StdinLine::AfterResults { .. }))
        });
    if paused {
        "it printed nothing and sent no request while stdin stayed open (the scenario sends or closes stdin only after a result): it seems to read stdin to EOF before it starts"
    } else {
        "it printed nothing and sent no request before the timeout"
    }
}

/// The side asked the stub for something its script (written for other targets) lacks.
fn off_script_note(scenario: &Scenario, t: &Trial) -> Option<String> {
    let d = t
        .divergences
        .iter()
        .find(|d| d.kind == Kind::UnscriptedRequest)?;
    Some(format!(
        "{} went off the stub's script (written for {}): {}",
        t.key.target,
        scenario
            .file
            .expect
            .keys()
            .cloned()
            .collect::<Vec<_>>()
            .join(", "),
        clip_line(&d.message, 200)
    ))
}

/// It printed nothing, sent no request and was killed at the timeout.
fn stalled(r: &Recorded) -> bool {
    r.killed_at_timeout() && r.frames.is_empty() && r.requests == Some(0)
}

/// It sent no request and did not succeed: the scenario is about refusing the input.
fn never_started(r: &Recorded) -> bool {
    r.requests == Some(0) && r.exit.code != Some(0)
}
