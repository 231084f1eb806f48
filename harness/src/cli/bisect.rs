//! `streamcheck bisect`: the first release whose output matches a later version's expectation.

use super::args::ExecArgs;
use super::{Context, Verdict};
use std::path::PathBuf;
use streamcheck::commands::bisect::{self, render, BisectOptions};
use streamcheck::error::{Error, Result};
use streamcheck::target::{NpmPin, TargetSpec};

pub struct BisectArgs {
    pub target: String,
    pub from: String,
    pub to: String,
    pub versions: Vec<String>,
    pub report_dir: Option<PathBuf>,
}

pub fn bisect(ctx: Context, exec: &ExecArgs, args: BisectArgs) -> Result<Verdict> {
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
            streamcheck::supported::published_on_npm(NpmPin::of(spec.dialect)?.package)?
        }
    };
    let opts = BisectOptions {
        target: args.target,
        from: args.from,
        to: args.to,
        published,
        jobs: ctx.jobs(exec),
        run: exec.run_options(),
        report_dir: args
            .report_dir
            .unwrap_or_else(|| ctx.default_report_dir("bisect")),
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
        opts.report_dir.join("bisect.md").display()
    );
    Ok(ctx.verdict(Verdict::divergence_if(!found.all_bisected())))
}
