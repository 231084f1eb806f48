//! `streamcheck bisect`: the first release whose output matches a later version's expectation.

use super::args::{ExecArgs, SelectArgs};
use super::setup::Location;
use super::{Context, Verdict};
use std::path::PathBuf;
use streamcheck::boundary::ProbeOptions;
use streamcheck::commands::bisect::{self, render, BisectOptions};
use streamcheck::dialect::NpmPin;
use streamcheck::error::{Error, Result};
use streamcheck::install::TargetSpec;

/// Find, per scenario, the first published version whose output matches the
/// expectation `--to` gets rather than the one `--from` gets (bisect.md, bisect.json).
#[derive(clap::Args)]
pub struct BisectArgs {
    #[command(flatten)]
    select: SelectArgs,
    #[command(flatten)]
    exec: ExecArgs,
    /// The target, without a version.
    #[arg(long, short = 't', default_value = "claude-code")]
    target: String,
    /// The older version (behaves as its expectation says).
    #[arg(long)]
    from: String,
    /// The newer version (behaves as its expectation says).
    #[arg(long)]
    to: String,
    /// The published versions to search, comma-separated (default: asks npm).
    #[arg(long, value_delimiter = ',')]
    versions: Vec<String>,
    /// Where bisect.md, bisect.json and the probes' runs go (default reports/bisect/<timestamp>/).
    #[arg(long)]
    report_dir: Option<PathBuf>,
}

impl BisectArgs {
    pub fn exec(self, loc: &Location) -> Result<Verdict> {
        let ctx = Context::load(loc, &self.select)?;
        let exec = self.exec.clone();
        bisect(ctx, &exec, self)
    }
}

fn bisect(ctx: Context, exec: &ExecArgs, args: BisectArgs) -> Result<Verdict> {
    if args.target.contains('@') {
        return Err(Error::Usage(format!(
            "--target {}: name the target without a version (--from and --to give them)",
            args.target
        )));
    }
    if ctx.scenarios.is_empty() {
        return Err(Error::Usage("no scenario selected: pass --filter".into()));
    }
    let published = match args.versions.is_empty() {
        false => args.versions,
        true => {
            let spec = TargetSpec::parse(&args.target)?;
            streamcheck::install::supported::published_on_npm(NpmPin::of(spec.dialect)?.package)?
        }
    };
    let opts = BisectOptions {
        from: args.from,
        to: args.to,
        published,
        probe: ProbeOptions {
            target: args.target.into(),
            jobs: ctx.jobs(exec),
            run: exec.run_options(),
            report_dir: args
                .report_dir
                .unwrap_or_else(|| ctx.default_report_dir("bisect")),
            cache_cap: None,
        },
    };
    let found = super::args::runtime()?.block_on(bisect::command(
        &ctx.scenarios,
        &ctx.project,
        &opts,
        |line| println!("{line}"),
    ))?;
    println!("{}", render::summary(&found));
    println!(
        "bisect report: {}",
        opts.probe.report_dir.join("bisect.md").display()
    );
    Ok(ctx.verdict(Verdict::divergence_if(!found.all_bisected())))
}
