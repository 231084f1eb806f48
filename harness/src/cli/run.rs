//! `streamcheck run`: the suite on its targets, reports written as trials finish.

use super::args::{ExecArgs, ReportArgs, SuiteArgs, TargetArgs};
use super::setup::Location;
use super::{term, Context, Verdict};
use std::path::PathBuf;
use streamcheck::error::{Error, Result};
use streamcheck::report::ReportWriter;
use streamcheck::runner::RunOptions;
use streamcheck::suite;

/// Run scenarios against targets and write reports.
#[derive(clap::Args)]
pub struct RunArgs {
    #[command(flatten)]
    suite: SuiteArgs,
    /// Where reports go (default reports/runs/<timestamp>/).
    #[arg(long)]
    report_dir: Option<PathBuf>,
    #[command(flatten)]
    report: ReportArgs,
    /// Check each trial against the expectation this version of the target gets
    /// instead of its own (e.g. a release's output against the last good release's).
    #[arg(long, value_name = "VERSION")]
    expect_for: Option<String>,
}

impl RunArgs {
    pub fn exec(self, loc: &Location) -> Result<Verdict> {
        let ctx = Context::load(loc, &self.suite.select)?;
        let SuiteArgs { targets, exec, .. } = &self.suite;
        run(
            ctx,
            targets,
            exec,
            self.report_dir,
            &self.report,
            self.expect_for,
        )
    }
}

fn run(
    ctx: Context,
    targets: &TargetArgs,
    exec: &ExecArgs,
    report_dir: Option<PathBuf>,
    report: &ReportArgs,
    expect_for: Option<String>,
) -> Result<Verdict> {
    let resolved = exec.resolve(&targets.specs(&ctx.setup)?, &ctx.setup)?;
    let dir = report_dir.unwrap_or_else(|| ctx.default_report_dir("runs"));
    let mut progress = term::Progress::new(ctx.scenarios.len() * resolved.len());
    let rt = super::args::runtime()?;
    let errors = ctx.errors.iter().map(|e| e.to_string()).collect();
    let infos = suite::target_infos(&resolved);
    let writer = ReportWriter::create_with(&dir, infos, errors, report.options())
        .map_err(|e| Error::io(&dir, e))?;
    let run = rt.block_on(suite::run_and_report_as(
        writer,
        ctx.scenarios.clone(),
        &resolved,
        ctx.jobs(exec),
        RunOptions {
            expect_for,
            protocol: exec.protocol(&ctx.setup),
            ..exec.run_options()
        },
        |t, _| progress.trial(t),
    ))?;
    progress.finish();
    let rules = run.results.rules_held();
    term::causes_first(&run.results);
    for (id, trials) in run.results.findings_met() {
        println!("{}", streamcheck::findings::met_line(&id, &trials));
    }
    term::run_summary(&dir, ctx.errors.len(), &run.results.counts, &rules);
    let (counts, finished) = (run.results.counts.clone(), run.end.finished());
    let unavailable: Vec<_> = resolved
        .iter()
        .filter_map(|t| t.as_ref().err())
        .cloned()
        .collect();
    let own = Verdict::divergence_if(counts.failed > 0 || !finished);
    Ok(ctx.run_verdict(own, &unavailable, run.results.trials.len()))
}
