//! `streamcheck run`: the suite on its targets, reports written as trials finish.

use super::args::{ExecArgs, TargetArgs};
use super::{term, Context, Verdict};
use std::path::PathBuf;
use streamcheck::error::Result;
use streamcheck::report::ReportWriter;
use streamcheck::suite;

pub fn run(
    ctx: Context,
    targets: &TargetArgs,
    exec: &ExecArgs,
    report_dir: Option<PathBuf>,
) -> Result<Verdict> {
    let resolved = exec.resolve(&targets.specs(&ctx.project)?, &ctx.project);
    let dir = report_dir.unwrap_or_else(|| ReportWriter::default_dir(&ctx.project.root));
    let mut progress = term::Progress::new(ctx.scenarios.len() * resolved.len());
    let rt = super::args::runtime()?;
    let run = rt.block_on(suite::run_and_report(
        &dir,
        ctx.scenarios.clone(),
        &resolved,
        exec.jobs(),
        exec.run_options(),
        ctx.errors.iter().map(|e| e.to_string()).collect(),
        |t, _| progress.trial(t),
    ))?;
    progress.finish();
    let rules = run.results.rules_held();
    term::run_summary(&dir, ctx.errors.len(), &run.results.counts, &rules);
    let (counts, finished) = (run.results.counts.clone(), run.end.finished());
    Ok(ctx.verdict(Verdict::divergence_if(counts.failed > 0 || !finished)))
}
