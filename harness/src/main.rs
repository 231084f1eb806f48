//! The `streamcheck` binary: its command line and the dispatch to `cli::<command>`, one
//! room per command, each with its own arguments. Exit codes follow `cli::Verdict`.

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

mod cli;

use cli::setup::Location;
use cli::Verdict;
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
    Run(cli::run::RunArgs),
    Plan(cli::plan::PlanArgs),
    List(cli::inspect::ListArgs),
    /// Validate every scenario file without running anything.
    Check,
    Init(cli::init::InitArgs),
    Stub(cli::stub::StubArgs),
    Merge(cli::inspect::MergeArgs),
    Compare(cli::compare::CompareArgs),
    Install(cli::install::InstallArgs),
    Show(cli::show::ShowArgs),
    /// Print the JSON Schema of scenario files.
    Schema,
    /// docs/findings.md from the findings (CLI bugs) and the entries that name them.
    Findings(cli::findings::FindingsArgs),
    Record(cli::record::RecordArgs),
    Review(cli::record::ReviewArgs),
    Audit(cli::audit::AuditArgs),
    /// Feed each trial's stdout (run now, or --from earlier runs) to a consumer's parser,
    /// as printed and with --probes changed the ways releases change it.
    Consume(cli::consume::ConsumeArgs),
    /// Play a saved trial back as the CLI for an SDK host's tests: answers --version as its
    /// release, replays stdout, follows the control protocol on stream-json input.
    ReplayCli(cli::replay_cli::ReplayCliArgs),
    Drift(cli::drift::DriftArgs),
    /// Judge a release from one run of the catalogue: changes to what the scenarios pin,
    /// other protocol changes (breaking, additive), pending blocks and inventory entries.
    Verdict(cli::judge::VerdictArgs),
    /// The protocol inventory (targets/<dialect>/protocol.yaml): build it from run folders,
    /// add a release, write the reference or a release's JSON Schema.
    Protocol(cli::protocol::ProtocolArgs),
    Bisect(cli::bisect::BisectArgs),
    Ranges(cli::ranges::RangesArgs),
}

fn main() -> ExitCode {
    cli::term::log_to_stderr();
    let cli = Cli::parse();
    match dispatch(cli) {
        Ok(verdict) => verdict.exit_code(),
        Err(e) => cli::error_exit(&e),
    }
}

fn dispatch(cli: Cli) -> Result<Verdict> {
    let loc = Location {
        root: cli.root,
        config: cli.config,
    };
    match cli.command {
        Cmd::Run(args) => args.exec(&loc),
        Cmd::Plan(args) => args.exec(&loc),
        Cmd::List(args) => args.exec(&loc),
        Cmd::Check => cli::inspect::check(&loc),
        Cmd::Init(args) => args.exec(&loc),
        Cmd::Stub(args) => args.exec(&loc),
        Cmd::Merge(args) => args.exec(),
        Cmd::Compare(args) => args.exec(&loc),
        Cmd::Install(args) => args.exec(&loc),
        Cmd::Show(args) => args.exec(&loc),
        Cmd::Schema => Ok(cli::inspect::schema()),
        Cmd::Findings(args) => args.exec(&loc),
        Cmd::Record(args) => args.exec(&loc),
        Cmd::Review(args) => args.exec(&loc),
        Cmd::Audit(args) => args.exec(&loc),
        Cmd::Consume(args) => args.exec(&loc),
        Cmd::ReplayCli(args) => args.exec(&loc),
        Cmd::Drift(args) => args.exec(&loc),
        Cmd::Verdict(args) => args.exec(&loc),
        Cmd::Protocol(args) => args.exec(&loc),
        Cmd::Bisect(args) => args.exec(&loc),
        Cmd::Ranges(args) => args.exec(&loc),
    }
}
