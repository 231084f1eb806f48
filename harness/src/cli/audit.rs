//! `streamcheck audit`: how many protocol mutations each scenario would catch.

use super::args::{ExecArgs, ReportArgs, SuiteArgs, TargetArgs};
use super::setup::Location;
use super::{term, Context, Verdict};
use std::path::PathBuf;
use streamcheck::commands::audit::{self, AuditOptions};
use streamcheck::error::{Error, Result};

/// Grade the suite: mutate saved CLI output and re-check each scenario against it
/// (audit.md, audit.json), without running the CLI again per mutation.
#[derive(clap::Args)]
pub struct AuditArgs {
    #[command(flatten)]
    suite: SuiteArgs,
    /// Audit the saved outputs of an earlier run (its report folder) instead of running.
    #[arg(long)]
    from: Option<PathBuf>,
    /// Where audit.md and audit.json go (default reports/audit/<timestamp>/).
    #[arg(long)]
    report_dir: Option<PathBuf>,
    #[command(flatten)]
    report: ReportArgs,
}

impl AuditArgs {
    pub fn exec(self, loc: &Location) -> Result<Verdict> {
        let ctx = Context::load(loc, &self.suite.select)?;
        let SuiteArgs { targets, exec, .. } = &self.suite;
        audit(ctx, targets, exec, self.from, self.report_dir, &self.report)
    }
}

fn audit(
    ctx: Context,
    targets: &TargetArgs,
    exec: &ExecArgs,
    from: Option<PathBuf>,
    report_dir: Option<PathBuf>,
    report: &ReportArgs,
) -> Result<Verdict> {
    let resolved = match from {
        Some(_) => Vec::new(),
        None => exec.resolve(&targets.specs(&ctx.setup)?, &ctx.setup)?,
    };
    let opts = AuditOptions {
        from,
        run_dir: ctx.default_report_dir("runs"),
        report_dir: report_dir.unwrap_or_else(|| ctx.default_report_dir("audit")),
        jobs: ctx.jobs(exec),
        run: exec.run_options(),
        command: super::provenance::command_line(),
        project: ctx.project.clone(),
    };
    let (audited, summary) = super::args::runtime()?.block_on(audit::command(
        ctx.scenarios.clone(),
        &resolved,
        &opts,
    ))?;
    if report.formats.html {
        streamcheck::commands::audit::html::write_audit(&opts.report_dir)
            .map_err(|e| Error::io(&opts.report_dir, e))?;
    }
    print!("{summary}");
    if audited.scenarios.is_empty() {
        // A score of nothing is no score: say why the first trials were left out.
        let reasons: Vec<String> = (audited.not_audited.iter().take(3))
            .map(|n| format!("{} on {}: {}", n.scenario, n.target, n.reason))
            .collect();
        let why = match reasons.is_empty() {
            true => "no passing saved trial of the selected scenarios".to_string(),
            false => reasons.join("; "),
        };
        term::error(&Error::Failed(format!("audit: nothing audited ({why})")));
        return Ok(Verdict::SetupError);
    }
    Ok(ctx.verdict(Verdict::AllGood))
}
