//! `streamcheck consume`: the selected trials' stdout (run now, or saved by earlier runs)
//! fed to a consumer's parser, as printed and through the probes.

use super::args::{ReportArgs, SuiteArgs};
use super::setup::Location;
use super::{Context, Verdict};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use streamcheck::commands::consume::probe::{Probe, ProbeParseError};
use streamcheck::commands::consume::sdk::SdkSpec;
use streamcheck::commands::consume::{self, history, render, Consumed, Consumer, Input, ProbeInfo};
use streamcheck::error::{Error, Result};
use streamcheck::pattern::Pattern;
use streamcheck::store::{RunReader, SavedTrial};
use streamcheck::suite;

#[derive(clap::Args)]
pub struct ConsumeArgs {
    #[command(flatten)]
    suite: SuiteArgs,
    #[command(flatten)]
    report: ReportArgs,
    /// A shell command reading stream-json on stdin, one line per frame (run with `sh -c`).
    #[arg(long)]
    command: Option<String>,
    /// A consumer of the project file (`[consumers.NAME]`). Repeatable; default: all of
    /// them when no --command is given.
    #[arg(long = "consumer")]
    consumers: Vec<String>,
    /// A real Agent SDK or community parser, installed into the cache: python (PyPI
    /// claude-agent-sdk's parser, targets/claude-code/sdk-py/), typescript (npm
    /// @anthropic-ai/claude-agent-sdk's query() over replay-cli, targets/claude-code/sdk/),
    /// at their pin or `@VERSION` (any published version); claude-code-pretty,
    /// claude-code-sdk-ts (community, targets/claude-code/consumers/). Repeatable.
    #[arg(long = "sdk", value_parser = SdkSpec::parse)]
    sdks: Vec<SdkSpec>,
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
    /// Probe only the trials of this release (the others are fed as printed only): the
    /// history matrix probes the newest.
    #[arg(long, value_name = "RELEASE")]
    probes_on: Option<String>,
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

fn parse_probe(s: &str) -> Result<Probe, ProbeParseError> {
    Probe::parse(s)
}

impl ConsumeArgs {
    pub fn exec(self, loc: &Location) -> Result<Verdict> {
        let started = Instant::now();
        let ctx = Context::load(loc, &self.suite.select)?;
        let consumers = self.consumers(&ctx)?;
        let probes: Vec<Probe> = match (self.only.is_empty(), self.probes) {
            (false, _) => self.only.clone(),
            (true, true) => Probe::ALL.to_vec(),
            (true, false) => Vec::new(),
        };
        let rt = super::args::runtime()?;
        let (dirs, unavailable) = if self.from.is_empty() {
            let resolved = self
                .suite
                .exec
                .resolve(&self.suite.targets.specs(&ctx.setup)?, &ctx.setup)?;
            let dir = (self.run_dir.clone()).unwrap_or_else(|| ctx.default_report_dir("runs"));
            let errors = ctx.errors.iter().map(|e| e.to_string()).collect();
            rt.block_on(suite::run_and_report(
                &dir,
                ctx.scenarios.clone(),
                &resolved,
                ctx.jobs(&self.suite.exec),
                self.suite.exec.run_options(),
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
            let saved = read_run(dir, self.from.is_empty())?;
            let taken = saved
                .into_iter()
                .filter(|(_, s)| selected.contains(s.key.scenario.as_str()));
            inputs.extend(taken.map(|(file, s)| Input::of(&s, Some(file))));
        }
        let fed_count = inputs.iter().filter(|i| i.not_fed.is_none()).count();
        let fed = rt.block_on(consume::consume(
            &consumers,
            &inputs,
            &probes,
            self.probes_on.as_deref(),
            ctx.jobs(&self.suite.exec),
            self.fail_fast,
        ))?;
        let probed = (inputs.iter())
            .filter(|i| self.probes_on.as_ref().is_none_or(|r| *r == i.release))
            .count();
        let planned = (inputs.len() + probed * probes.len()) * consumers.len();
        let consumed = Consumed {
            command: super::provenance::command_line(),
            duration_ms: started.elapsed().as_millis() as u64,
            consumers,
            probes: probes.iter().map(|&probe| ProbeInfo::of(probe)).collect(),
            fed,
        };
        let dir = (self.report_dir.clone()).unwrap_or_else(|| ctx.default_report_dir("consume"));
        render::write(&dir, &consumed, self.report.formats).map_err(|e| Error::io(&dir, e))?;
        if let Some(file) = &self.matrix {
            let notes = match self.sdks.is_empty() {
                true => "",
                false => consume::sdk::NOTES,
            };
            let doc = match history::has_versions(&consumed) {
                true => history::doc(
                    &consumed,
                    "Agent SDKs and community parsers across releases",
                    &history_command(&self, file),
                    notes,
                ),
                false => {
                    render::matrix_doc(&consumed, "Agent SDKs against the CLI's real output", notes)
                }
            };
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
        print_failing(&consumed);
        if consumed.fed.len() < planned {
            println!(
                "stopped at the first failure (--fail-fast): {} of {planned} feeds not run",
                planned - consumed.fed.len()
            );
        }
        let mut own = Verdict::divergence_if(consumed.failed() > 0);
        if inputs.is_empty() && !self.from.is_empty() && !ctx.allow_empty {
            super::term::error(&Error::Usage(format!(
                "nothing to feed: the --from run folder(s) hold no saved trial of the {} selected scenario(s) ({})",
                ctx.scenarios.len(),
                (self.from.iter()).map(|d| d.display().to_string()).collect::<Vec<_>>().join(", ")
            )));
            return Ok(Verdict::SetupError);
        }
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
            out.push(
                (sdk.consumer(&ctx.project, timeout))
                    .map_err(|e| Error::Failed(format!("--sdk {}: {e}", sdk.sdk.key())))?,
            );
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

/// How many failing feeds the terminal names before it counts the rest.
const NAMED: usize = 10;

/// The failing feeds, by consumer, release, probe and trial: the first [`NAMED`], then a count.
fn print_failing(c: &Consumed) {
    let failing: Vec<&consume::Fed> = (c.fed.iter())
        .filter(|f| matches!(f.outcome, consume::Outcome::Failed(_)))
        .collect();
    if failing.is_empty() {
        return;
    }
    println!("failing:");
    for f in failing.iter().take(NAMED) {
        let probe = f
            .probe
            .map_or("as printed".to_string(), |p| format!("probe {}", p.name()));
        println!("  {} on {}, {probe}: {}", f.consumer, f.release, f.trial);
    }
    if failing.len() > NAMED {
        println!(
            "  and {} more (consume.md lists them)",
            failing.len() - NAMED
        );
    }
}

/// The saved trials of a run folder. `Err` (a usage error) says what a run folder holds
/// when `dir` is not one; `fresh`: the run was made just now.
fn read_run(dir: &Path, fresh: bool) -> Result<Vec<(PathBuf, SavedTrial)>> {
    let run = RunReader::open(dir);
    if !fresh && !run.keeps_saved() {
        let what = if !dir.exists() {
            "does not exist".to_string()
        } else if !dir.is_dir() {
            "is a file".to_string()
        } else if dir.join("consume.json").is_file() {
            "is a consume report, not a run".to_string()
        } else if dir.join("latest").is_dir() {
            format!("holds runs: did you mean {}?", dir.join("latest").display())
        } else {
            "has no outputs/ folder".to_string()
        };
        return Err(Error::Usage(format!(
            "--from {}: {what}. --from takes a run folder: the report folder of `streamcheck run` \
             or `consume` without --from (results.json and outputs/<topic>/<scenario>.<target>.json), \
             by default reports/runs/<timestamp>/ (reports/runs/latest is the newest); \
             `consume --run-dir DIR` runs the CLI and keeps its run in DIR",
            dir.display()
        )));
    }
    run.saved_files().map_err(|e| Error::Usage(e.to_string()))
}

/// The command line a committed history page names: the flags that made it, no paths
/// of this machine (run folders by their release).
fn history_command(args: &ConsumeArgs, file: &Path) -> String {
    let mut parts = vec!["streamcheck consume".to_string()];
    for f in &args.suite.select.filters {
        parts.push(format!("-f {f}"));
    }
    for s in &args.sdks {
        parts.push(format!("--sdk {}", s.label()));
    }
    for d in &args.from {
        let name = d
            .file_name()
            .map_or("RUN".into(), |n| n.to_string_lossy().into_owned());
        parts.push(format!("--from RUN-{name}"));
    }
    if args.probes && args.only.is_empty() {
        parts.push("--probes".into());
    }
    for p in &args.only {
        parts.push(format!("--probe {}", p.name()));
    }
    if let Some(r) = &args.probes_on {
        parts.push(format!("--probes-on {r}"));
    }
    let file = file
        .file_name()
        .map_or(String::new(), |n| n.to_string_lossy().into_owned());
    parts.push(format!("--matrix docs/consumers/{file}"));
    parts.join(" ")
}

fn pattern(text: &str, what: &str) -> Result<Pattern> {
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| Error::Usage(format!("{what}: not JSON: {e}")))?;
    Pattern::compile(&v).map_err(|e| Error::Usage(format!("{what}: {e}")))
}
