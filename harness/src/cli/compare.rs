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
    /// Compare two run folders' saved trials (`streamcheck run --report-dir DIR`, one target each) instead of running anything.
    #[arg(long, num_args = 2, value_names = ["DIR_A", "DIR_B"], conflicts_with = "observed")]
    runs: Option<Vec<PathBuf>>,
    /// Also write the key-path table across the scenarios to FILE.md and FILE.json (what docs/parity/ commits).
    #[arg(long, value_name = "FILE.md")]
    table: Option<PathBuf>,
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
        let table = self.table.as_deref();
        let saved = match (self.observed, self.runs) {
            (Some(dirs), _) => Some((Folders::Observed, dirs)),
            (None, Some(dirs)) => Some((Folders::Runs, dirs)),
            (None, None) => None,
        };
        match saved {
            Some((kind, dirs)) => folders(
                kind,
                loc,
                &dirs,
                &select.filters,
                self.report_dir,
                &self.report,
                table,
            ),
            None => live(
                Context::load(loc, select)?,
                targets,
                exec,
                self.report_dir,
                &self.report,
                table,
            ),
        }
    }
}

/// Two folders compared without running anything, so no project is needed.
#[derive(Clone, Copy)]
enum Folders {
    /// Capture folders (`--observed`): the comparison is reported, it does not gate.
    Observed,
    /// Run folders' saved trials (`--runs`): a parity gate, exit 1 when anything differs.
    Runs,
}

fn folders(
    kind: Folders,
    loc: &Location,
    dirs: &[PathBuf],
    filters: &[String],
    report_dir: Option<PathBuf>,
    report: &ReportArgs,
    table: Option<&Path>,
) -> Result<Verdict> {
    let flag = match kind {
        Folders::Observed => "--observed",
        Folders::Runs => "--runs",
    };
    let [a, b] = dirs else {
        return Err(Error::Usage(format!("{flag} takes two folders")));
    };
    let dir = match report_dir {
        Some(dir) => dir,
        None => loc.setup()?.report_dir("parity"),
    };
    let line = super::provenance::command_line();
    let parity = match kind {
        Folders::Observed => compare::observed(a, b, filters, line)?,
        Folders::Runs => compare::saved_runs(a, b, filters, line)?,
    };
    write(&dir, &parity, report, table)?;
    Ok(match kind {
        Folders::Observed => Verdict::AllGood,
        Folders::Runs => Verdict::divergence_if(parity.counts.differ > 0),
    })
}

fn live(
    ctx: Context,
    targets: &TargetArgs,
    exec: &ExecArgs,
    report_dir: Option<PathBuf>,
    report: &ReportArgs,
    table: Option<&Path>,
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
    write(&dir, &parity, report, table)?;
    let unavailable: Vec<_> = resolved
        .iter()
        .filter_map(|t| t.as_ref().err())
        .cloned()
        .collect();
    let own = Verdict::divergence_if(parity.counts.fail_own_expectation > 0);
    Ok(ctx.run_verdict(own, &unavailable, parity.counts.scenarios))
}

fn write(
    dir: &Path,
    parity: &compare::Parity,
    report: &ReportArgs,
    table: Option<&Path>,
) -> Result<()> {
    compare::write(dir, parity).map_err(|e| Error::io(dir, e))?;
    if let Some(md) = table {
        let t = compare::ParityTable::of(parity);
        let json = md.with_extension("json");
        let text = serde_json::to_string_pretty(&t)
            .map_err(|e| Error::io(&json, std::io::Error::other(e)))?;
        std::fs::write(&json, text + "\n").map_err(|e| Error::io(&json, e))?;
        std::fs::write(md, t.render_md()).map_err(|e| Error::io(md, e))?;
        println!("parity table: {} ({} rows)", md.display(), t.rows.len());
    }
    if report.formats.html {
        streamcheck::commands::compare::html::write_parity(dir, parity)
            .map_err(|e| Error::io(dir, e))?;
    }
    print!("{}", compare::summary(parity));
    println!("parity report: {}", dir.join("parity.md").display());
    Ok(())
}
