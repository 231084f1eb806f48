//! `streamcheck drift`: the suite on several versions, drift between neighbours.

use super::args::{ExecArgs, ReportArgs, SelectArgs, SuiteArgs, TargetArgs};
use super::setup::Location;
use super::{Context, Verdict};
use std::path::PathBuf;
use streamcheck::commands::drift::{self, DriftOptions};
use streamcheck::error::{Error, Result};
use streamcheck::report::Formats;

/// Run the suite on several versions and report protocol drift between neighbours.
#[derive(clap::Args)]
pub struct DriftArgs {
    #[command(flatten)]
    suite: SuiteArgs,
    /// Where drift.md and drift.json go (default reports/drift/<timestamp>/).
    #[arg(long)]
    report_dir: Option<PathBuf>,
    /// Where the runs' own reports and saved trials go (default reports/runs/<timestamp>/).
    #[arg(long)]
    run_dir: Option<PathBuf>,
    /// Diff the run folder of an earlier drift (its --run-dir) instead of running anything.
    #[arg(long)]
    replay: Option<PathBuf>,
    /// A line to add to the report's notes. Repeatable.
    #[arg(long = "note")]
    notes: Vec<String>,
    #[command(flatten)]
    report: ReportArgs,
}

impl DriftArgs {
    pub fn exec(self, loc: &Location) -> Result<Verdict> {
        // A replay re-diffs saved outputs: scenarios only add pending blocks.
        let select = SelectArgs {
            allow_empty: self.suite.select.allow_empty || self.replay.is_some(),
            ..self.suite.select.clone()
        };
        let ctx = Context::load(loc, &select)?;
        let (targets, exec) = (self.suite.targets.clone(), self.suite.exec.clone());
        drift(ctx, &targets, &exec, self)
    }
}

fn drift(ctx: Context, targets: &TargetArgs, exec: &ExecArgs, args: DriftArgs) -> Result<Verdict> {
    let formats: Formats = args.report.formats;
    let opts = DriftOptions {
        jobs: ctx.jobs(exec),
        run: exec.run_options(),
        install: !exec.no_install,
        report_dir: args
            .report_dir
            .unwrap_or_else(|| ctx.default_report_dir("drift")),
        run_dir: args
            .run_dir
            .unwrap_or_else(|| ctx.default_report_dir("runs")),
        command: super::provenance::command_line(),
        notes: args.notes,
        pending: ctx.setup.pending_place(),
    };
    let file = match &args.replay {
        Some(run_dir) => drift::replay(run_dir, Some((&ctx.project, &ctx.scenarios)), &opts)?,
        None => {
            let specs = targets.specs(&ctx.setup)?;
            super::args::runtime()?.block_on(drift::run(
                &ctx.project,
                ctx.scenarios.clone(),
                &specs,
                &opts,
                |t| println!("{}", super::term::trial_line(t)),
            ))?
        }
    };
    if formats.html {
        let run_page = args.replay.is_none().then(|| {
            streamcheck::report::html::relative_link(
                &opts.report_dir,
                &opts.run_dir.join("index.html"),
            )
        });
        streamcheck::commands::drift::html::write_drift(
            &opts.report_dir,
            &file,
            run_page.as_deref(),
        )
        .map_err(|e| Error::io(&opts.report_dir, e))?;
    }
    let mut breaking = false;
    for p in &file.drift.pairs {
        let n = drift::verdict::counts(&p.verdict);
        breaking |= n.breaking > 0;
        println!(
            "{} -> {}: {} breaking, {} additive; {} flip(s), {} protocol finding(s), {} sequence change(s), {} exit-code change(s)",
            p.from,
            p.to,
            n.breaking,
            n.additive,
            p.status_flips.len(),
            p.printed.len() + p.not_printed.len(),
            p.sequences.len(),
            p.exit_codes.len()
        );
        for c in p.verdict.iter().filter(|c| c.is_breaking()) {
            println!("  breaking: {}", c.finding());
        }
    }
    println!(
        "drift report: {}",
        opts.report_dir.join("drift.md").display()
    );
    // Exit 1 when a pair has a breaking change, so a nightly job on @latest fails on it.
    Ok(ctx.verdict(Verdict::divergence_if(breaking)))
}
