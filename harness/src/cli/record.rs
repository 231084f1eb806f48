//! `streamcheck record` and `streamcheck review` (what they print is in [`super::review`]).

use super::args::{ExecArgs, SuiteArgs, TargetArgs};
use super::review::{self, ReviewMode};
use super::setup::Location;
use super::{Context, Verdict};
use std::io::IsTerminal;
use std::path::PathBuf;
use streamcheck::commands::record::{self as rec, RecordOptions};
use streamcheck::error::Result;

/// Run scenarios and record what the CLI printed as pending expectations (reports/pending/).
#[derive(clap::Args)]
pub struct RecordArgs {
    #[command(flatten)]
    suite: SuiteArgs,
    /// Where the runs' reports go (default reports/runs/<timestamp>/).
    #[arg(long)]
    report_dir: Option<PathBuf>,
    /// Run each scenario this many times; values that differ between runs are generalised.
    #[arg(long, default_value_t = 1)]
    runs: usize,
    /// Record only scenarios whose current expectation fails.
    #[arg(long)]
    failing_only: bool,
    /// Record every key the CLI printed (catalogues, usage, model names...), not only
    /// the protocol `targets/<dialect>/record-profile.yaml` keeps.
    #[arg(long)]
    full: bool,
}

impl RecordArgs {
    pub fn exec(self, loc: &Location) -> Result<Verdict> {
        let ctx = Context::load(loc, &self.suite.select)?;
        record(ctx, &self.suite.targets, &self.suite.exec, &self)
    }
}

fn record(
    ctx: Context,
    targets: &TargetArgs,
    exec: &ExecArgs,
    args: &RecordArgs,
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
        report_dir: (args.report_dir.clone()).unwrap_or_else(|| ctx.default_report_dir("runs")),
        pending: ctx.setup.pending_place(),
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
    review::print_outcomes(&outcomes, &ctx.setup.home);
    Ok(ctx.verdict(Verdict::AllGood))
}

/// Show pending recordings as diffs and accept or reject them.
#[derive(clap::Args)]
pub struct ReviewArgs {
    /// Accept every pending recording (rewrites the scenario files).
    #[arg(long, conflicts_with = "reject_all")]
    accept_all: bool,
    /// Reject (delete) every pending recording.
    #[arg(long)]
    reject_all: bool,
    /// Review only scenarios whose id contains this. Repeatable.
    #[arg(long = "filter", short = 'f')]
    filters: Vec<String>,
}

impl ReviewArgs {
    pub fn exec(self, loc: &Location) -> Result<Verdict> {
        review(loc, &self.filters, self.accept_all, self.reject_all)
    }
}

fn review(
    loc: &Location,
    filters: &[String],
    accept_all: bool,
    reject_all: bool,
) -> Result<Verdict> {
    let setup = loc.setup()?;
    let mode = match (accept_all, reject_all) {
        (true, _) => ReviewMode::AcceptAll,
        (_, true) => ReviewMode::RejectAll,
        _ if std::io::stdin().is_terminal() => ReviewMode::Ask,
        _ => ReviewMode::List,
    };
    let sum = review::review(&setup.project, &setup.pending_place(), filters, mode);
    if sum.errors > 0 {
        return Err(format!("{} pending file(s) could not be applied", sum.errors).into());
    }
    Ok(Verdict::AllGood)
}
