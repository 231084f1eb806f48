//! `streamcheck record` and `streamcheck review` (what they print is in [`super::review`]).

use super::args::{ExecArgs, TargetArgs};
use super::review::{self, ReviewMode};
use super::{Context, Verdict};
use std::io::IsTerminal;
use streamcheck::commands::record::{self as rec, RecordOptions};
use streamcheck::error::Result;

pub struct RecordArgs {
    pub runs: usize,
    pub failing_only: bool,
    pub full: bool,
    pub report_dir: Option<std::path::PathBuf>,
}

pub fn record(
    ctx: Context,
    targets: &TargetArgs,
    exec: &ExecArgs,
    args: RecordArgs,
) -> Result<Verdict> {
    let resolved = exec.resolve(&targets.specs(&ctx.setup)?, &ctx.setup)?;
    let opts = RecordOptions {
        jobs: ctx.jobs(exec),
        run: exec.run_options(),
        runs: args.runs,
        failing_only: args.failing_only,
        full: args.full,
        // A target named on the command line gets first blocks; the default one does not.
        first_blocks: !targets.targets.is_empty() || targets.target_command.is_some(),
        report_dir: args
            .report_dir
            .unwrap_or_else(|| ctx.default_report_dir("runs")),
    };
    let runs = opts.runs.max(1);
    let scenarios = ctx.scenarios.clone();
    let outcomes = super::args::runtime()?.block_on(rec::record(
        &ctx.project,
        scenarios,
        &resolved,
        &opts,
        |t, run| review::print_trial(t, run, runs),
    ))?;
    review::print_outcomes(&outcomes, &ctx.project.root);
    Ok(ctx.verdict(Verdict::AllGood))
}

pub fn review(
    loc: &super::Location,
    filters: &[String],
    accept_all: bool,
    reject_all: bool,
) -> Result<Verdict> {
    let project = loc.setup()?.project;
    let mode = match (accept_all, reject_all) {
        (true, _) => ReviewMode::AcceptAll,
        (_, true) => ReviewMode::RejectAll,
        _ if std::io::stdin().is_terminal() => ReviewMode::Ask,
        _ => ReviewMode::List,
    };
    let sum = review::review(&project, filters, mode);
    if sum.errors > 0 {
        return Err(format!("{} pending file(s) could not be applied", sum.errors).into());
    }
    Ok(Verdict::AllGood)
}
