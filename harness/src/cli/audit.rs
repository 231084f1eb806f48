//! `streamcheck audit`: how many protocol mutations each scenario would catch.

use super::args::{ExecArgs, ReportArgs, TargetArgs};
use super::{Context, Verdict};
use std::path::PathBuf;
use streamcheck::commands::audit::{self, AuditOptions};
use streamcheck::error::{Error, Result};

pub fn audit(
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
        command: super::command_line(),
    };
    let summary = super::args::runtime()?.block_on(audit::command(
        ctx.scenarios.clone(),
        &resolved,
        &opts,
    ))?;
    if report.formats.html {
        streamcheck::commands::audit::html::write_audit(&opts.report_dir)
            .map_err(|e| Error::io(&opts.report_dir, e))?;
    }
    print!("{summary}");
    Ok(ctx.verdict(Verdict::AllGood))
}
