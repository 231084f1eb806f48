//! The commands that run nothing: `list`, `check`, `schema`, `merge`.

use super::args::{ReportArgs, SelectArgs, TargetArgs};
use super::setup::Location;
use super::{Context, Verdict};
use std::path::{Path, PathBuf};
use streamcheck::dialect::Dialect;
use streamcheck::error::{Error, Result};
use streamcheck::install::Target;
use streamcheck::known::KnownList;
use streamcheck::plan::{Decision, Planner, SkipReason};
use streamcheck::runner::RunOptions;
use streamcheck::scenario;

/// List scenarios (id, the targets they have expectations for, description); with
/// `--target`, what will run on that target and what is skipped, and why.
#[derive(clap::Args)]
pub struct ListArgs {
    #[command(flatten)]
    select: SelectArgs,
    /// A target (a project file's `[targets.NAME]`, or as `run --target` takes it, not
    /// installed here): each scenario's plan on it. Repeatable.
    #[arg(long = "target", short = 't')]
    targets: Vec<String>,
}

impl ListArgs {
    pub fn exec(self, loc: &Location) -> Result<Verdict> {
        let ctx = Context::load(loc, &self.select)?;
        if self.targets.is_empty() {
            return Ok(list(&ctx));
        }
        let args = TargetArgs {
            targets: self.targets.clone(),
            target_command: None,
            conforms_to: None,
        };
        let mut verdict = Verdict::AllGood;
        for spec in args.specs(&ctx.setup)? {
            match streamcheck::install::resolve(&spec, &ctx.setup.project, false) {
                Ok(mut target) => {
                    super::args::declare(&mut target, &ctx.setup, None)?;
                    plans(&ctx, &target);
                }
                Err(e) => {
                    super::term::error(&Error::Failed(format!("target {e}")));
                    verdict = Verdict::SetupError;
                }
            }
        }
        Ok(ctx.verdict(verdict))
    }
}

/// What each selected scenario does on `target`: runs, skipped (why), or is no trial of it.
fn plans(ctx: &Context, target: &Target) {
    let planner = Planner::for_target(target);
    let (mut run, mut skipped, mut unsupported) = (0, 0, 0);
    for s in &ctx.scenarios {
        let plan = planner.plan(s, target, &RunOptions::default());
        match &plan.decision {
            Decision::Skip(SkipReason::NoExpectation(_)) => continue,
            Decision::Skip(why) => {
                skipped += 1;
                unsupported += usize::from(matches!(why, SkipReason::Unsupported(_)));
                println!("{:<48} skipped: {why}", s.id);
            }
            _ => {
                run += 1;
                println!("{:<48} runs", s.id);
            }
        }
    }
    println!(
        "{}: {run} trial(s) run, {skipped} skipped ({unsupported} unsupported)",
        target.name
    );
}

fn list(ctx: &Context) -> Verdict {
    for s in &ctx.scenarios {
        let targets: Vec<&str> = s.file.expect.keys().map(String::as_str).collect();
        println!(
            "{:<48} [{}] {}",
            s.id,
            targets.join(", "),
            s.file.description
        );
    }
    ctx.verdict(Verdict::AllGood)
}

/// Every scenario file, whatever a filter says: the files that do not load are errors.
pub fn check(loc: &Location) -> Result<Verdict> {
    let ctx = Context::load(loc, &Default::default())?;
    println!(
        "{} scenario file(s) valid, {} with errors",
        ctx.scenarios.len(),
        ctx.errors.len()
    );
    let known = if known_lists_hold(&ctx) {
        Verdict::AllGood
    } else {
        Verdict::SetupError
    };
    Ok(ctx.verdict(known))
}

/// Every dialect's known-divergence list and the project's load, and name scenarios of the
/// catalogue; each problem is printed.
fn known_lists_hold(ctx: &Context) -> bool {
    let project_file = (ctx.setup.config.as_ref())
        .and_then(|c| c.known_divergences.as_ref().map(|k| c.resolve(k)));
    let loaded = (Dialect::ALL.iter())
        .map(|d| (ctx.project.data(*d).map(|d| (*d.known).clone())).map_err(Error::from))
        .chain(
            project_file
                .map(|p| KnownList::load(&p, &p.display().to_string()).map_err(Error::from)),
        );
    let (mut lists, mut good) = (Vec::new(), true);
    for list in loaded {
        match list {
            Ok(list) => lists.push(list),
            Err(e) => {
                super::term::error(&e);
                good = false;
            }
        }
    }
    if let Err(e) = super::args::known_scenarios_exist(lists.iter(), &ctx.setup) {
        super::term::error(&e);
        good = false;
    }
    if good {
        println!("{} known-divergence list(s) valid", lists.len());
    }
    good
}

pub fn schema() -> Verdict {
    print!("{}", scenario::json_schema_string());
    Verdict::AllGood
}

/// Merge the results of several runs (e.g. CI shards) into one report folder.
#[derive(clap::Args)]
pub struct MergeArgs {
    #[arg(required = true)]
    dirs: Vec<PathBuf>,
    #[arg(long)]
    out: PathBuf,
    #[command(flatten)]
    report: ReportArgs,
}

impl MergeArgs {
    pub fn exec(self) -> Result<Verdict> {
        merge(&self.dirs, &self.out, &self.report)
    }
}

fn merge(dirs: &[PathBuf], out: &Path, report: &ReportArgs) -> Result<Verdict> {
    let merged = streamcheck::report::merge_as(dirs, out, &report.options())?;
    println!("merged {} run(s) into {}", dirs.len(), out.display());
    println!("{}", merged.counts.line());
    Ok(Verdict::divergence_if(merged.counts.failed > 0))
}
