//! Multi-run scenarios: the CLI runs several times in one sandbox (one HOME, one
//! workspace), each run with its own args, input, stub and expectation.

use super::execute::{execute_in, spawn_error};
use super::sandbox::SandboxDir;
use super::trial::Trial;
use crate::divergence::Divergence;
use crate::install::Target;
use crate::plan::RunPlan;
use crate::scenario::Scenario;

/// Runs every entry of `scenario.runs` in order; divergences name their run (1-based).
/// The trial keeps the output of the first run that diverged, else of the last run.
pub(super) async fn execute_all(
    scenario: &Scenario,
    runs: &[RunPlan],
    target: &Target,
    trial: &mut Trial,
) -> Result<(), Divergence> {
    let sandbox = SandboxDir::create(scenario).map_err(|e| spawn_error(&e))?;
    let total = runs.len();
    let mut commands = Vec::new();
    let mut kept: Option<(usize, Trial)> = None;
    for (index, run) in runs.iter().enumerate() {
        let mut run_trial = trial.clone();
        run_trial.divergences.clear();
        run_trial.protocol.clear();
        run_trial.expected_frames = run.expect.frames.iter().map(|e| e.0.source()).collect();
        let result = execute_in(&sandbox, run, target, &mut run_trial).await;
        if let Err(d) = result {
            run_trial.divergences.push(d);
        }
        commands.push(format!("run {}: {}", index + 1, run_trial.command_line));
        let number = index + 1;
        for d in &mut run_trial.divergences {
            d.run = Some(number);
            d.message = format!("run {number} of {total}: {}", d.message);
        }
        trial
            .divergences
            .extend(run_trial.divergences.iter().cloned());
        trial.notes.extend(run_trial.notes.iter().cloned());
        trial.protocol.extend(run_trial.protocol.iter().cloned());
        for rule in &run_trial.rules {
            if !trial.rules.contains(rule) {
                trial.rules.push(rule.clone());
            }
        }
        let keep = kept.as_ref().is_none_or(|(_, k)| k.divergences.is_empty());
        if keep {
            kept = Some((number, run_trial));
        }
    }
    if let Some((number, k)) = kept {
        adopt(trial, k);
        trial.run = Some(number);
    }
    trial.command_line = commands.join("\n");
    Ok(())
}

/// The run's output, journal and expected frames become the trial's (for its report).
fn adopt(trial: &mut Trial, run: Trial) {
    trial.exit = run.exit;
    trial.output = run.output;
    trial.stderr = run.stderr;
    trial.journal = run.journal;
    trial.expected_frames = run.expected_frames;
    trial.vars = run.vars;
    trial.client = run.client;
}
