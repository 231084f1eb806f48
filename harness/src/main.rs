//! The `streamcheck` binary: its command line and the dispatch to `cli::<command>`.
//! What each command prints lives in `cli/`; exit codes follow `cli::Verdict`.

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

mod cli;

use cli::args::{ExecArgs, ReportArgs, SelectArgs, TargetArgs};
use cli::{Context, Verdict};
use streamcheck::error::Result;

/// Conformance tests for the stream-json protocol of agent CLIs.
#[derive(Parser)]
#[command(name = "streamcheck", version)]
struct Cli {
    /// The project folder (holding scenarios/ and targets/); found from the current folder by default.
    #[arg(long, global = true)]
    root: Option<PathBuf>,
    /// The project file (default: $STREAMCHECK_CONFIG, else streamcheck.toml in the current folder or above it).
    #[arg(long, global = true)]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run scenarios against targets and write reports.
    Run {
        #[command(flatten)]
        select: SelectArgs,
        #[command(flatten)]
        targets: TargetArgs,
        #[command(flatten)]
        exec: ExecArgs,
        /// Where reports go (default reports/runs/<timestamp>/).
        #[arg(long)]
        report_dir: Option<PathBuf>,
        #[command(flatten)]
        report: ReportArgs,
        /// Check each trial against the expectation this version of the target gets
        /// instead of its own (e.g. a release's output against the last good release's).
        #[arg(long, value_name = "VERSION")]
        expect_for: Option<String>,
    },
    /// List scenarios (id, the targets they have expectations for, description).
    List {
        #[command(flatten)]
        select: SelectArgs,
    },
    /// Validate every scenario file without running anything.
    Check,
    /// Write a project file (streamcheck.toml), an example scenario, an empty
    /// known-divergences file and a CI workflow into the current folder.
    Init {
        /// The CI the workflow is for.
        #[arg(long, value_enum, default_value = "github")]
        ci: cli::init::Ci,
        /// Overwrite files that exist.
        #[arg(long)]
        force: bool,
    },
    /// Serve one scenario's stub script for a person to point a CLI at.
    Stub {
        file: PathBuf,
        #[arg(long, default_value_t = 0)]
        port: u16,
    },
    /// Merge the results of several runs (e.g. CI shards) into one report folder.
    Merge {
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        #[arg(long)]
        out: PathBuf,
        #[command(flatten)]
        report: ReportArgs,
    },
    /// Run each scenario on two targets and report where they differ in substance
    /// (parity.md, parity.json); or compare two folders of captured runs (--observed).
    Compare {
        #[command(flatten)]
        select: SelectArgs,
        #[command(flatten)]
        targets: TargetArgs,
        #[command(flatten)]
        exec: ExecArgs,
        /// Where parity.md, parity.json and the runs' reports go (default reports/parity/<timestamp>/).
        #[arg(long)]
        report_dir: Option<PathBuf>,
        /// Compare two capture folders, each named DIALECT-VERSION (claude-code-2.1.197) and holding NAME.stdout.jsonl, NAME.exit_code, ..., instead of running anything.
        #[arg(long, num_args = 2, value_names = ["DIR_A", "DIR_B"])]
        observed: Option<Vec<PathBuf>>,
        #[command(flatten)]
        report: ReportArgs,
    },
    /// Install targets into place (npm ci, or build caliban into the cache) without running anything.
    Install {
        #[command(flatten)]
        targets: TargetArgs,
    },
    /// Print the JSON Schema of scenario files.
    Schema,
    /// Run scenarios and record what the CLI printed as pending expectations (reports/pending/).
    Record {
        #[command(flatten)]
        select: SelectArgs,
        #[command(flatten)]
        targets: TargetArgs,
        #[command(flatten)]
        exec: ExecArgs,
        /// Where the runs' reports go (default reports/runs/<timestamp>/).
        #[arg(long)]
        report_dir: Option<PathBuf>,
        /// Run each scenario this many times; values that differ between runs are generalised.
        #[arg(long, default_value_t = 1)]
        runs: usize,
        /// Record only scenarios whose current expectation fails.
        #[arg(long)]
        failing_only: bool,
        /// Record every key the CLI printed (catalogues, usage, model names...), not only
        /// the protocol `targets/<dialect>/record-profile.yaml` keeps.
        #[arg(long)]
        full: bool,
    },
    /// Show pending recordings as diffs and accept or reject them.
    Review {
        /// Accept every pending recording (rewrites the scenario files).
        #[arg(long, conflicts_with = "reject_all")]
        accept_all: bool,
        /// Reject (delete) every pending recording.
        #[arg(long)]
        reject_all: bool,
        /// Review only scenarios whose id contains this. Repeatable.
        #[arg(long = "filter", short = 'f')]
        filters: Vec<String>,
    },
    /// Grade the suite: mutate saved CLI output and re-check each scenario against it
    /// (audit.md, audit.json), without running the CLI again per mutation.
    Audit {
        #[command(flatten)]
        select: SelectArgs,
        #[command(flatten)]
        targets: TargetArgs,
        #[command(flatten)]
        exec: ExecArgs,
        /// Audit the saved outputs of an earlier run (its report folder) instead of running.
        #[arg(long)]
        from: Option<PathBuf>,
        /// Where audit.md and audit.json go (default reports/audit/<timestamp>/).
        #[arg(long)]
        report_dir: Option<PathBuf>,
        #[command(flatten)]
        report: ReportArgs,
    },
    /// Feed each trial's stdout (run now, or --from earlier runs) to a consumer's parser,
    /// as printed and with --probes changed the ways releases change it.
    Consume(cli::consume::ConsumeArgs),
    /// Play a saved trial back as the CLI for an SDK host's tests: answers --version as its
    /// release, replays stdout, follows the control protocol on stream-json input.
    ReplayCli(cli::replay_cli::ReplayCliArgs),
    /// Run the suite on several versions and report protocol drift between neighbours.
    Drift {
        #[command(flatten)]
        select: SelectArgs,
        #[command(flatten)]
        targets: TargetArgs,
        #[command(flatten)]
        exec: ExecArgs,
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
    },
    /// Find, per scenario, the first published version whose output matches the
    /// expectation `--to` gets rather than the one `--from` gets (bisect.md, bisect.json).
    Bisect {
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
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match dispatch(cli) {
        Ok(verdict) => verdict.exit_code(),
        Err(e) => cli::error_exit(&e),
    }
}

fn dispatch(cli: Cli) -> Result<Verdict> {
    let loc = cli::setup::Location {
        root: cli.root,
        config: cli.config,
    };
    let root = &loc;
    match cli.command {
        Cmd::Run {
            select,
            targets,
            exec,
            report_dir,
            report,
            expect_for,
        } => {
            let ctx = Context::load(root, &select)?;
            cli::run::run(ctx, &targets, &exec, report_dir, &report, expect_for)
        }
        Cmd::List { select } => Ok(cli::inspect::list(&Context::load(root, &select)?)),
        Cmd::Check => cli::inspect::check(root),
        Cmd::Init { ci, force } => {
            let cwd = std::env::current_dir().map_err(|e| streamcheck::error::Error::io(".", e))?;
            cli::init::init(root, &cwd, ci, force)
        }
        Cmd::Schema => Ok(cli::inspect::schema()),
        Cmd::Install { targets } => cli::install::install(&loc.setup()?, &targets),
        Cmd::Merge { dirs, out, report } => cli::inspect::merge(&dirs, &out, &report),
        Cmd::Stub { file, port } => cli::stub::serve(&file, port),
        Cmd::Compare {
            select,
            observed: Some(dirs),
            report_dir,
            report,
            ..
        } => cli::compare::observed(root, &dirs, &select.filters, report_dir, &report),
        Cmd::Compare {
            select,
            targets,
            exec,
            report_dir,
            observed: None,
            report,
        } => {
            let ctx = Context::load(root, &select)?;
            cli::compare::live(ctx, &targets, &exec, report_dir, &report)
        }
        Cmd::Record {
            select,
            targets,
            exec,
            report_dir,
            runs,
            failing_only,
            full,
        } => {
            let args = cli::record::RecordArgs {
                runs,
                failing_only,
                full,
                report_dir,
            };
            cli::record::record(Context::load(root, &select)?, &targets, &exec, args)
        }
        Cmd::Review {
            accept_all,
            reject_all,
            filters,
        } => cli::record::review(root, &filters, accept_all, reject_all),
        Cmd::Audit {
            select,
            targets,
            exec,
            from,
            report_dir,
            report,
        } => cli::audit::audit(
            Context::load(root, &select)?,
            &targets,
            &exec,
            from,
            report_dir,
            &report,
        ),
        Cmd::Drift {
            select,
            targets,
            exec,
            report_dir,
            run_dir,
            replay,
            notes,
            report,
        } => {
            // A replay re-diffs saved outputs: scenarios only add pending blocks.
            let select = SelectArgs {
                allow_empty: select.allow_empty || replay.is_some(),
                ..select
            };
            let args = cli::drift::DriftArgs {
                report_dir,
                run_dir,
                replay,
                notes,
                formats: report.formats,
            };
            cli::drift::drift(Context::load(root, &select)?, &targets, &exec, args)
        }
        Cmd::Consume(args) => args.exec(root),
        Cmd::ReplayCli(args) => args.exec(),
        Cmd::Bisect {
            select,
            exec,
            target,
            from,
            to,
            versions,
            report_dir,
        } => {
            let args = cli::bisect::BisectArgs {
                target,
                from,
                to,
                versions,
                report_dir,
            };
            cli::bisect::bisect(Context::load(root, &select)?, &exec, args)
        }
    }
}
