//! `streamcheck consume`: the selected trials' stdout (run now, or saved by earlier runs)
//! fed to a consumer's parser, as printed and through the probes.

use super::args::{ExecArgs, ReportArgs, SelectArgs, TargetArgs};
use super::setup::Location;
use super::{Context, Verdict};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use streamcheck::commands::consume::probe::Probe;
use streamcheck::commands::consume::{self, render, Consumed, Consumer, Input, ProbeInfo};
use streamcheck::error::{Error, Result};
use streamcheck::pattern::Pattern;
use streamcheck::store::saved::SavedTrial;
use streamcheck::suite;

#[derive(clap::Args)]
pub struct ConsumeArgs {
    #[command(flatten)]
    select: SelectArgs,
    #[command(flatten)]
    targets: TargetArgs,
    #[command(flatten)]
    exec: ExecArgs,
    #[command(flatten)]
    report: ReportArgs,
    /// A shell command reading stream-json on stdin, one line per frame (run with `sh -c`).
    #[arg(long)]
    command: Option<String>,
    /// A consumer of the project file (`[consumers.NAME]`). Repeatable; default: all of
    /// them when no --command is given.
    #[arg(long = "consumer")]
    consumers: Vec<String>,
    /// A real Agent SDK, its pinned version installed into the cache (python: PyPI
    /// claude-agent-sdk's parser, targets/claude-code/sdk-py/; typescript: npm
    /// @anthropic-ai/claude-agent-sdk's query() over replay-cli, targets/claude-code/sdk/).
    /// Repeatable.
    #[arg(long = "sdk", value_enum)]
    sdks: Vec<consume::sdk::Sdk>,
    /// A pattern (JSON, as in scenario files) each line --command prints must match.
    #[arg(long)]
    each: Option<String>,
    /// Seconds a consumer may take on one feed. Its process group is killed then: a
    /// consumer still running is a timeout, one that exited leaving a process behind a
    /// finding.
    #[arg(long, default_value_t = 30)]
    consumer_timeout: u64,
    /// Stop at the first feed a consumer fails (the feeds not run are counted).
    #[arg(long)]
    fail_fast: bool,
    /// Feed the saved trials of an earlier run (its report folder) instead of running.
    /// Repeatable: one folder per release.
    #[arg(long)]
    from: Vec<PathBuf>,
    /// Also feed each output changed by every probe (new frame types, keys, ...).
    #[arg(long)]
    probes: bool,
    /// Feed these probes only (implies --probes). Repeatable.
    #[arg(long = "probe", value_parser = parse_probe)]
    only: Vec<Probe>,
    /// Where consume.md, consume.json, junit.xml and index.html go (default reports/consume/<timestamp>/).
    #[arg(long)]
    report_dir: Option<PathBuf>,
    /// Also write the consumer x release x probe matrix and its findings to FILE, without
    /// command lines or paths (docs/consumers/sdk-matrix.md is written so).
    #[arg(long, value_name = "FILE")]
    matrix: Option<PathBuf>,
    /// Where a fresh run's own reports and saved trials go (default reports/runs/<timestamp>/).
    #[arg(long)]
    run_dir: Option<PathBuf>,
}

fn parse_probe(s: &str) -> Result<Probe, String> {
    Probe::parse(s)
}

impl ConsumeArgs {
    pub fn exec(self, loc: &Location) -> Result<Verdict> {
        let started = Instant::now();
        let ctx = Context::load(loc, &self.select)?;
        let consumers = self.consumers(&ctx)?;
        let probes: Vec<Probe> = match (self.only.is_empty(), self.probes) {
            (false, _) => self.only.clone(),
            (true, true) => Probe::ALL.to_vec(),
            (true, false) => Vec::new(),
        };
        let rt = super::args::runtime()?;
        let (dirs, unavailable) = if self.from.is_empty() {
            let resolved = self
                .exec
                .resolve(&self.targets.specs(&ctx.setup)?, &ctx.setup)?;
            let dir = (self.run_dir.clone()).unwrap_or_else(|| ctx.default_report_dir("runs"));
            let errors = ctx.errors.iter().map(|e| e.to_string()).collect();
            rt.block_on(suite::run_and_report(
                &dir,
                ctx.scenarios.clone(),
                &resolved,
                ctx.jobs(&self.exec),
                self.exec.run_options(),
                errors,
                |_, _| {},
            ))?;
            let unavailable: Vec<_> = (resolved.iter())
                .filter_map(|t| t.as_ref().err())
                .cloned()
                .collect();
            (vec![dir], unavailable)
        } else {
            (self.from.clone(), Vec::new())
        };
        let selected: BTreeSet<&str> = ctx.scenarios.iter().map(|s| s.id.as_str()).collect();
        let mut inputs = Vec::new();
        for dir in &dirs {
            let saved = SavedTrial::read_files(dir).map_err(Error::Usage)?;
            let taken = saved
                .into_iter()
                .filter(|(_, s)| selected.contains(s.scenario.as_str()));
            inputs.extend(taken.map(|(file, s)| Input::of(&s, Some(file))));
        }
        let fed_count = inputs.iter().filter(|i| i.not_fed.is_none()).count();
        let fed = rt.block_on(consume::consume(
            &consumers,
            &inputs,
            &probes,
            ctx.jobs(&self.exec),
            self.fail_fast,
        ))?;
        let planned = inputs.len() * consumers.len() * (1 + probes.len());
        let consumed = Consumed {
            command: super::provenance::command_line(),
            duration_ms: started.elapsed().as_millis() as u64,
            consumers,
            probes: (probes.iter())
                .map(|&probe| ProbeInfo {
                    probe,
                    models: probe.models(),
                })
                .collect(),
            fed,
        };
        let dir = (self.report_dir.clone()).unwrap_or_else(|| ctx.default_report_dir("consume"));
        render::write(&dir, &consumed, self.report.formats).map_err(|e| Error::io(&dir, e))?;
        if let Some(file) = &self.matrix {
            let notes = match self.sdks.is_empty() {
                true => "",
                false => consume::sdk::NOTES,
            };
            let doc =
                render::matrix_doc(&consumed, "Agent SDKs against the CLI's real output", notes);
            std::fs::write(file, doc).map_err(|e| Error::io(file, e))?;
        }
        for c in &consumed.consumers {
            println!("{}\n", c.name);
            println!("{}", render::matrix_table(&consumed, &c.name));
        }
        println!(
            "{} feeds, {} failed, in {:.1}s; reports in {}",
            consumed.fed_count(),
            consumed.failed(),
            started.elapsed().as_secs_f64(),
            dir.display()
        );
        if consumed.fed.len() < planned {
            println!(
                "stopped at the first failure (--fail-fast): {} of {planned} feeds not run",
                planned - consumed.fed.len()
            );
        }
        let mut own = Verdict::divergence_if(consumed.failed() > 0);
        if fed_count == 0 && !inputs.is_empty() && !ctx.allow_empty {
            super::term::error(&Error::Usage(format!(
                "nothing fed: none of the {} selected trial(s) printed stream-json",
                inputs.len()
            )));
            own = Verdict::SetupError;
        }
        Ok(ctx.run_verdict(own, &unavailable, inputs.len()))
    }

    /// `--command`, the `--sdk`s, then the project file's consumers `--consumer` names
    /// (all of them if nothing else is given).
    fn consumers(&self, ctx: &Context) -> Result<Vec<Consumer>> {
        let timeout = Duration::from_secs(self.consumer_timeout);
        let mut out = Vec::new();
        if let Some(command) = &self.command {
            let each = match &self.each {
                Some(text) => Some(pattern(text, "--each")?),
                None => None,
            };
            let dir = std::env::current_dir().map_err(|e| Error::io(".", e))?;
            out.push(Consumer {
                name: "command".into(),
                command: command.clone(),
                dir,
                timeout,
                each,
                serve: None,
            });
        } else if self.each.is_some() {
            return Err(Error::Usage("--each applies to --command".into()));
        }
        for sdk in &self.sdks {
            out.push(sdk.consumer(&ctx.project, timeout)?);
        }
        let configured = ctx.setup.config.as_ref().map(|c| &c.consumers);
        let explicit = self.command.is_some() || !self.sdks.is_empty();
        let names: Vec<String> = match (self.consumers.is_empty(), explicit) {
            (false, _) => self.consumers.clone(),
            (true, false) => configured
                .into_iter()
                .flat_map(|c| c.keys().cloned())
                .collect(),
            (true, true) => Vec::new(),
        };
        for name in names {
            let (config, entry) = match ctx.setup.config.as_ref() {
                Some(c) => match c.consumers.get(&name) {
                    Some(entry) => (c, entry),
                    None => {
                        let known: Vec<&String> = c.consumers.keys().collect();
                        return Err(Error::Usage(format!(
                            "--consumer {name}: {} has no [consumers.{name}] (it has: {known:?})",
                            c.path.display()
                        )));
                    }
                },
                None => {
                    return Err(Error::Usage(format!(
                        "--consumer {name}: there is no project file (streamcheck.toml) to take it from"
                    )))
                }
            };
            let each = match &entry.each {
                Some(v) => Some(Pattern::compile(v).map_err(|e| {
                    Error::Usage(format!(
                        "{}: consumers.{name}.each: {e}",
                        config.path.display()
                    ))
                })?),
                None => None,
            };
            out.push(Consumer {
                name: name.clone(),
                command: entry.command.clone(),
                dir: config.dir.clone(),
                timeout: entry.timeout.map_or(timeout, Duration::from_secs),
                each,
                serve: None,
            });
        }
        if out.is_empty() {
            return Err(Error::Usage(
                "consume: name a consumer: --command CMD, --sdk python, or --consumer NAME of a [consumers.NAME] in streamcheck.toml".into(),
            ));
        }
        Ok(out)
    }
}

fn pattern(text: &str, what: &str) -> Result<Pattern> {
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| Error::Usage(format!("{what}: not JSON: {e}")))?;
    Pattern::compile(&v).map_err(|e| Error::Usage(format!("{what}: {e}")))
}
