//! `streamcheck compare`: parity of two targets, live or from captured runs.

use super::args::{ExecArgs, ReportArgs, TargetArgs};
use super::{term, Context, Verdict};
use std::path::{Path, PathBuf};
use streamcheck::commands::compare;
use streamcheck::error::{Error, Result};

/// Two capture folders: nothing runs, so no project is needed.
pub fn observed(
    loc: &super::Location,
    dirs: &[PathBuf],
    filters: &[String],
    report_dir: Option<PathBuf>,
    report: &ReportArgs,
) -> Result<Verdict> {
    let [a, b] = dirs else {
        return Err(Error::Usage("--observed takes two folders".into()));
    };
    let dir = match report_dir {
        Some(dir) => dir,
        None => loc.setup()?.report_dir("parity"),
    };
    let parity = compare::observed(a, b, filters, super::provenance::command_line())?;
    write(&dir, &parity, report)?;
    Ok(Verdict::AllGood)
}

pub fn live(
    ctx: Context,
    targets: &TargetArgs,
    exec: &ExecArgs,
    report_dir: Option<PathBuf>,
    report: &ReportArgs,
) -> Result<Verdict> {
    let resolved = exec.resolve(&targets.specs(&ctx.setup)?, &ctx.setup)?;
    let dir = report_dir.unwrap_or_else(|| ctx.default_report_dir("parity"));
    let live = compare::LiveRun {
        scenarios: ctx.scenarios.clone(),
        targets: &resolved,
        jobs: ctx.jobs(exec),
        opts: exec.run_options(),
        report_dir: dir.clone(),
        command: super::provenance::command_line(),
        report: report.options(),
    };
    let parity = super::args::runtime()?.block_on(compare::run(live, |t| {
        anstream::println!("{}", term::trial_line(t))
    }))?;
    write(&dir, &parity, report)?;
    let unavailable: Vec<_> = resolved
        .iter()
        .filter_map(|t| t.as_ref().err())
        .cloned()
        .collect();
    let own = Verdict::divergence_if(parity.counts.fail_own_expectation > 0);
    Ok(ctx.run_verdict(own, &unavailable, parity.counts.scenarios))
}

fn write(dir: &Path, parity: &compare::Parity, report: &ReportArgs) -> Result<()> {
    compare::write(dir, parity).map_err(|e| Error::io(dir, e))?;
    if report.formats.html {
        streamcheck::commands::compare::html::write_parity(dir, parity)
            .map_err(|e| Error::io(dir, e))?;
    }
    print!("{}", compare::summary(parity));
    println!("parity report: {}", dir.join("parity.md").display());
    Ok(())
}
