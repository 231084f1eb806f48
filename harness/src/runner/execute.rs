//! One CLI run in a sandbox: the stub started, the CLI driven to its end, the result checked.

use super::check;
use super::process::{self, Input};
use super::sandbox::SandboxDir;
use super::trial::{Trial, JOURNAL_BUDGET};
use crate::client::Client;
use crate::divergence::{Divergence, Kind};
use crate::install::Target;
use crate::plan::RunPlan;
use std::time::Instant;
use stub_api::{ServeOptions, StubServer};

/// One run of a plan in a sandbox of its own.
pub(super) async fn execute(
    run: &RunPlan,
    target: &Target,
    trial: &mut Trial,
) -> Result<(), Divergence> {
    trial.expected_frames = run.expect.frames.iter().map(|e| e.0.source()).collect();
    let sandbox = SandboxDir::create(&run.scenario).map_err(|e| spawn_error(&e))?;
    execute_in(&sandbox, run, target, trial).await
}

pub(super) fn spawn_error(e: &dyn std::fmt::Display) -> Divergence {
    Divergence::new(Kind::Spawn, e.to_string())
}

/// One CLI run in an existing sandbox (a multi-run scenario calls it once per run).
pub(super) async fn execute_in(
    sandbox: &SandboxDir,
    run: &RunPlan,
    target: &Target,
    trial: &mut Trial,
) -> Result<(), Divergence> {
    drive(sandbox, run, target, trial).await?;
    trial.divergences.extend(check::run(run, trial));
    crate::runner::protocol::check_trial(&run.protocol, trial);
    trial.rules = check::rules_held(&run.expect, trial);
    Ok(())
}

/// One CLI run of a plan in a sandbox of its own, its output kept and not checked: the
/// run that confirms a skip's reason.
pub(super) async fn probe(
    run: &RunPlan,
    target: &Target,
    trial: &mut Trial,
) -> Result<(), Divergence> {
    let sandbox = SandboxDir::create(&run.scenario).map_err(|e| spawn_error(&e))?;
    drive(&sandbox, run, target, trial).await
}

/// Runs the CLI in `sandbox` to its end and keeps what it did in `trial`.
async fn drive(
    sandbox: &SandboxDir,
    run: &RunPlan,
    target: &Target,
    trial: &mut Trial,
) -> Result<(), Divergence> {
    let scenario = &run.scenario;
    let launch = run.launch.as_ref().ok_or_else(|| {
        Divergence::new(
            Kind::HarnessError,
            "harness error (a bug in streamcheck, not in the CLI): a run planned without its launch (a plan made again from a finished trial) was run",
        )
    })?;
    trial.vars = sandbox.vars();
    target
        .prepare_home(&sandbox.home)
        .map_err(|e| spawn_error(&format!("cannot prepare the CLI's HOME: {e}")))?;
    let script = sandbox.stub_script(scenario, target.dialect, &target.data.tools);
    let options = ServeOptions {
        journal_max_bytes: Some(JOURNAL_BUDGET),
        journal_keep_first: true,
        ..ServeOptions::default()
    };
    let server = StubServer::start_with(script, options)
        .await
        .map_err(|e| spawn_error(&format!("cannot start the stub: {e}")))?;
    let stub_started = Instant::now();
    let base_url = server.base_url();
    let inv = launch.fill(&sandbox.for_target(&base_url));
    trial.command_line = inv.display();

    let input = Input {
        client: run.client().map(|p| Client::new(p, trial.vars.clone())),
        signal: scenario.file.signal.clone(),
        reader: scenario.file.stdout_reader,
    };
    let process = process::drive(input, &inv, &sandbox.workspace, &run.limits).await;
    trial.journal = server.journal();
    trial.requests_dropped = server.journal_dropped();
    server.shutdown().await;

    let process = process?;
    let lead = process.started.saturating_duration_since(stub_started);
    trial.stub_lead_ms = lead.as_micros().div_ceil(1000) as u64;
    trial.exit = process.exit;
    trial.output = process.output;
    trial.stderr = process.stderr;
    trial.client = process.client;
    if let Some(e) = &process.stdin_error {
        trial.notes.push(format!(
            "writing stdin failed: {e} (the CLI closed it early)"
        ));
    }
    Ok(())
}
