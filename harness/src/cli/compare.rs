//! `streamcheck compare`: parity of two targets, live or from captured runs.

use super::args::{ExecArgs, ReportArgs, SuiteArgs, TargetArgs};
use super::setup::Location;
use super::{term, Context, Verdict};
use std::path::{Path, PathBuf};
use streamcheck::commands::compare;
use streamcheck::error::{Error, Result};

/// Run each scenario on two targets and report where they differ in substance
/// (parity.md, parity.json); or compare two folders of captured runs (--observed).
#[derive(clap::Args)]
pub struct CompareArgs {
    #[command(flatten)]
    suite: SuiteArgs,
    /// Where parity.md, parity.json and the runs' reports go (default reports/parity/<timestamp>/).
    #[arg(long)]
    report_dir: Option<PathBuf>,
    /// Compare two capture folders, each named DIALECT-VERSION (claude-code-2.1.197) and holding NAME.stdout.jsonl, NAME.exit_code, ..., instead of running anything.
    #[arg(long, num_args = 2, value_names = ["DIR_A", "DIR_B"])]
    observed: Option<Vec<PathBuf>>,
    #[command(flatten)]
    report: ReportArgs,
}

impl CompareArgs {
    pub fn exec(self, loc: &Location) -> Result<Verdict> {
        let SuiteArgs {
            select,
            targets,
            exec,
        } = &self.suite;
        match self.observed {
            Some(dirs) => observed(loc, &dirs, &select.filters, self.report_dir, &self.report),
            None => live(
                Context::load(loc, select)?,
                targets,
                exec,
                self.report_dir,
                &self.report,
            ),
        }
    }
}

/// Two capture folders: nothing runs, so no project is needed.
fn observed(
    loc: &Location,
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

fn live(
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
