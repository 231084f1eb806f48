//! Argument groups shared by the commands that run scenarios.

use std::path::PathBuf;
use std::time::Duration;
use streamcheck::error::Result;
use streamcheck::report::{Formats, ReportOptions};
use streamcheck::runner::RunOptions;
use streamcheck::target::{self, Dialect, NotInstalled, Project, Target, TargetSpec};

/// Which scenarios a command takes.
#[derive(clap::Args, Clone, Default)]
pub struct SelectArgs {
    /// Run only scenarios whose id contains this. Repeatable.
    #[arg(long = "filter", short = 'f')]
    pub filters: Vec<String>,
    /// Run only shard K of N (e.g. 2/4), for CI matrices.
    #[arg(long, value_parser = parse_shard)]
    pub shard: Option<(usize, usize)>,
}

fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    streamcheck::suite::parse_shard(s)
}

/// Which targets a command runs.
#[derive(clap::Args, Clone)]
pub struct TargetArgs {
    /// Target to run: claude-code (default), claude-code@VERSION, claude-code@supported (every version in targets/claude-code/versions.yaml), claude-code@latest (asks npm), caliban, caliban@VERSION, qwen-code, qwen-code@VERSION. Repeatable.
    #[arg(long = "target", short = 't')]
    pub targets: Vec<String>,
    /// An executable that speaks Claude Code's conventions (a wrapper, a fork).
    #[arg(long)]
    pub target_command: Option<PathBuf>,
}

impl TargetArgs {
    pub fn specs(&self, project: &Project) -> Result<Vec<TargetSpec>> {
        let mut specs = Vec::new();
        for t in &self.targets {
            specs.extend(streamcheck::supported::expand(t, project)?);
        }
        if let Some(path) = &self.target_command {
            specs.push(TargetSpec::command(path, Dialect::ClaudeCode));
        }
        if specs.is_empty() {
            specs.push(TargetSpec::parse("claude-code")?);
        }
        Ok(specs)
    }
}

/// How trials run: shared by every command that runs scenarios.
#[derive(clap::Args, Clone)]
pub struct ExecArgs {
    /// Trials at once (default: number of CPUs).
    #[arg(long, short = 'j')]
    pub jobs: Option<usize>,
    /// Per-trial timeout in seconds when a scenario sets none.
    #[arg(long, default_value_t = 60)]
    pub timeout: u64,
    /// Seconds a CLI may keep running after its last expected result before it counts as hung.
    #[arg(long, default_value_t = 3)]
    pub grace: u64,
    /// Do not install missing targets: skip them with the install command instead.
    #[arg(long)]
    pub no_install: bool,
}

impl ExecArgs {
    pub fn jobs(&self) -> usize {
        self.jobs
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
    }

    pub fn run_options(&self) -> RunOptions {
        RunOptions {
            timeout: Duration::from_secs(self.timeout),
            grace: Duration::from_secs(self.grace),
            ..RunOptions::default()
        }
    }

    pub fn resolve(
        &self,
        specs: &[TargetSpec],
        project: &Project,
    ) -> Vec<Result<Target, NotInstalled>> {
        specs
            .iter()
            .map(|s| target::resolve(s, project, !self.no_install))
            .collect()
    }
}

/// Which report files a command writes.
#[derive(clap::Args, Clone)]
pub struct ReportArgs {
    /// Report formats, comma-separated: html (index.html), md (summary.md, per-trial .md),
    /// junit (junit.xml), json (results.json, per-trial .json); default all.
    #[arg(long = "report", value_name = "FORMATS", default_value = "all", value_parser = parse_formats)]
    pub formats: Formats,
}

fn parse_formats(s: &str) -> Result<Formats, String> {
    s.parse()
}

impl ReportArgs {
    /// The formats, with this process's command line to show in index.html.
    pub fn options(&self) -> ReportOptions {
        ReportOptions {
            formats: self.formats,
            command: Some(super::command_line()),
        }
    }
}

/// A tokio runtime for the commands that run trials or serve the stub.
pub fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| streamcheck::error::Error::Failed(format!("cannot start tokio: {e}")))
}
