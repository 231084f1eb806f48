//! Argument groups shared by the commands that run scenarios.

use super::setup::Setup;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use streamcheck::config::{Config, TargetEntry};
use streamcheck::dialect::Dialect;
use streamcheck::error::{Error, Result};
use streamcheck::install::{self, NotInstalled, Source, Target, TargetSpec};
use streamcheck::known::KnownList;
use streamcheck::report::{Formats, ReportOptions};
use streamcheck::runner::RunOptions;

/// What every command that runs trials takes: which scenarios, on which targets, and how.
#[derive(clap::Args, Clone)]
pub struct SuiteArgs {
    #[command(flatten)]
    pub select: SelectArgs,
    #[command(flatten)]
    pub targets: TargetArgs,
    #[command(flatten)]
    pub exec: ExecArgs,
}

/// Which scenarios a command takes.
#[derive(clap::Args, Clone, Default)]
pub struct SelectArgs {
    /// Run only scenarios whose id contains this. Repeatable.
    #[arg(long = "filter", short = 'f')]
    pub filters: Vec<String>,
    /// Run only shard K of N (e.g. 2/4), for CI matrices.
    #[arg(long)]
    pub shard: Option<streamcheck::suite::Shard>,
    /// Succeed when the filters or the shard select no scenario (otherwise exit 2).
    #[arg(long)]
    pub allow_empty: bool,
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
    /// The Claude Code release whose expectations --target-command is held to (default: the pin;
    /// never what the command's --version says).
    #[arg(long, requires = "target_command")]
    pub conforms_to: Option<String>,
}

impl TargetArgs {
    /// The targets named (a project file's `[targets.NAME]` first), else the project
    /// file's targets, else the pinned Claude Code.
    pub fn specs(&self, setup: &Setup) -> Result<Vec<TargetSpec>> {
        let config = setup.config.as_ref();
        let mut specs = Vec::new();
        for t in &self.targets {
            match config.and_then(|c| c.targets.get(t).map(|entry| (c, entry))) {
                Some((c, entry)) => specs.push(configured(c, t, entry)?),
                None => specs.extend(streamcheck::install::supported::expand(t, &setup.project)?),
            }
        }
        if let Some(path) = &self.target_command {
            let mut spec = TargetSpec::command(path, Dialect::default());
            if let Source::Command { conforms_to, .. } = &mut spec.source {
                conforms_to.clone_from(&self.conforms_to);
            }
            specs.push(spec);
        }
        if specs.is_empty() {
            match config.filter(|c| !c.targets.is_empty()) {
                Some(c) => {
                    for (name, entry) in &c.targets {
                        specs.push(configured(c, name, entry)?);
                    }
                }
                None => specs.push(TargetSpec::parse("claude-code")?),
            }
        }
        Ok(specs)
    }
}

/// A project file's `[targets.NAME]` as a target.
fn configured(config: &Config, name: &str, entry: &TargetEntry) -> Result<TargetSpec> {
    let in_file = |what: &str, e: &dyn std::fmt::Display| {
        Error::Usage(format!(
            "{}: targets.{name}.{what}: {e}",
            config.path.display()
        ))
    };
    if let Some(package) = &entry.package {
        let spec = TargetSpec::parse(package).map_err(|e| in_file("package", &e))?;
        return Ok(TargetSpec {
            name: name.into(),
            ..spec
        });
    }
    let command = entry
        .command
        .as_ref()
        .expect("checked when the file was read");
    Ok(TargetSpec {
        name: name.into(),
        dialect: entry.dialect.unwrap_or_default(),
        source: Source::Command {
            path: config.resolve(command),
            env: entry.env.clone().into_iter().collect(),
            conforms_to: entry.conforms_to_version(name)?,
        },
    })
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
    /// A known-divergence entry that matches nothing any more fails its trial.
    #[arg(long)]
    pub strict: bool,
    /// Trials against the protocol inventory (targets/<dialect>/protocol.yaml): `report`
    /// (default: a key gone fails the trial, a new one is reported), `strict` (new fails
    /// too), `parity` (a re-implementation: keys only one side prints go to the parity
    /// table, a changed JSON type fails), `off`. Default: the target's `protocol` in the
    /// project file, else the file's, else report.
    #[arg(long, value_enum)]
    pub protocol: Option<streamcheck::protocol::Policy>,
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
            strict_known: self.strict,
            protocol: self.protocol.unwrap_or_default(),
            ..RunOptions::default()
        }
    }

    /// The protocol policy: the flag, else the project file's, else report.
    pub fn protocol(&self, setup: &Setup) -> streamcheck::protocol::Policy {
        (self.protocol)
            .or_else(|| setup.config.as_ref().and_then(|c| c.protocol))
            .unwrap_or_default()
    }

    /// Installs and resolves the targets. A command target (a wrapper, a re-implementation)
    /// is held to the project file's known divergences only; a published CLI to its
    /// dialect's list and the project's.
    pub fn resolve(
        &self,
        specs: &[TargetSpec],
        setup: &Setup,
    ) -> Result<Vec<Result<Target, NotInstalled>>> {
        let project_known = match setup
            .config
            .as_ref()
            .and_then(|c| c.known_divergences.as_ref().map(|k| c.resolve(k)))
        {
            Some(path) => KnownList::load(&path, &path.display().to_string())?,
            None => KnownList::default(),
        };
        let mut resolved: Vec<Result<Target, NotInstalled>> = (specs.iter())
            .map(|s| install::resolve(s, &setup.project, !self.no_install))
            .collect();
        let lists = (resolved.iter().flatten().map(|t| &*t.known)).chain([&project_known]);
        known_scenarios_exist(lists, setup)?;
        for (t, s) in resolved
            .iter_mut()
            .zip(specs)
            .filter_map(|(t, s)| Some((t.as_mut().ok()?, s)))
        {
            declare(t, setup, self.protocol)?;
            if matches!(s.source, Source::Command { .. }) {
                t.known = Arc::new(project_known.clone());
            } else {
                Arc::make_mut(&mut t.known).extend(&project_known);
            }
        }
        Ok(resolved)
    }
}

/// What the project file's `[targets.NAME]` declares (`supports`, `protocol`) onto the
/// resolved target of that name; `--protocol` (`flag`) over its `protocol`.
pub fn declare(
    t: &mut Target,
    setup: &Setup,
    flag: Option<streamcheck::protocol::Policy>,
) -> Result<()> {
    let entry = (setup.config.as_ref()).and_then(|c| c.targets.get(t.name.as_str()));
    t.declared = streamcheck::install::Declared {
        supports: match entry {
            Some(e) => e.supported(&t.name)?,
            None => None,
        },
        protocol: flag.or(entry.and_then(|e| e.protocol)),
    };
    Ok(())
}

/// Which report files a command writes.
#[derive(clap::Args, Clone)]
pub struct ReportArgs {
    /// Report formats, comma-separated: html (index.html), md (summary.md, per-trial .md),
    /// junit (junit.xml), json (results.json, per-trial .json); default all.
    #[arg(long = "report", value_name = "FORMATS", default_value = "all")]
    pub formats: Formats,
}

impl ReportArgs {
    /// The formats, with this process's command line to show in index.html.
    pub fn options(&self) -> ReportOptions {
        ReportOptions {
            formats: self.formats,
            command: Some(super::provenance::command_line()),
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

/// Every entry of `lists` names a scenario (or case) of the catalogue `setup` runs: an entry
/// naming none would hide nothing and never be checked. A setup error lists each.
pub fn known_scenarios_exist<'a>(
    lists: impl Iterator<Item = &'a KnownList>,
    setup: &Setup,
) -> Result<()> {
    let mut seen = std::collections::HashSet::new();
    let lists: Vec<&KnownList> = lists.filter(|l| seen.insert(l.file.clone())).collect();
    let named = lists
        .iter()
        .flat_map(|l| l.entries.iter().map(|e| e.scenario.as_str()));
    let ids = streamcheck::catalogue::ids(&setup.scenario_roots(), named);
    let unknown: Vec<String> = (lists.iter())
        .flat_map(|l| l.unknown_scenarios(|id| ids.contains(id)))
        .collect();
    if unknown.is_empty() {
        Ok(())
    } else {
        Err(Error::Usage(unknown.join("\n")))
    }
}
