//! `streamcheck-bench`: streamcheck measured against the physical limit of a suite (the
//! CLI's own run time) and against its peers, in one run, printed as Markdown tables.
//!
//! - [`overhead`]: `streamcheck run --jobs 1` per scenario against the same CLI invocation
//!   run bare (same args, env and sandbox layout, a stub already listening), paired
//!   repetitions, median and spread.
//! - [`scaling`]: a fixed subset of the suite at `--jobs 1, 2, 4`: speed-up, and the CPU the
//!   CLI itself burns per run (getrusage of reaped children), which is where it saturates.
//! - [`matcher`]: synthetic stream-json outputs of 1k..100k frames through
//!   `matcher::match_frames` and `report::frame_diff`, and pathological any_order groups;
//!   `--part differ` diffs 100k frames once each, to count instructions under callgrind.
//! - [`stub`]: req/s, p99 and RSS of the stub-api binary beside aimock (npm
//!   `@copilotkit/aimock`, installed into a temp dir), same reply, same load generator
//!   (`stub_api::loadgen`), same connection count.
//! - [`procfs`]: CPU and memory of this process, its children and the machine;
//!   [`render`]: statistics and the bits of Markdown every part uses.
//!
//! All load is bounded in count and time; the only network used is loopback and, for
//! the aimock install, the npm registry.

mod matcher;
mod overhead;
mod procfs;
mod render;
mod scaling;
mod stub;

use anyhow::{bail, Context, Result};
use clap::{Parser, ValueEnum};
use procfs::Meter;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::str::FromStr;
use streamcheck::install::Project;

/// Measure streamcheck against the CLI's own run time, and stub-api against aimock.
/// Use release builds: `cargo build --release --workspace`.
#[derive(Parser)]
#[command(name = "streamcheck-bench", version)]
struct Cli {
    /// The project folder (holding scenarios/ and targets/); found from the current folder by default.
    #[arg(long)]
    root: Option<PathBuf>,
    /// Parts to run (default: all but `differ`). Comma-separated or repeated.
    #[arg(long = "part", value_enum, value_delimiter = ',')]
    parts: Vec<Part>,
    /// Paired repetitions per scenario in the overhead part.
    #[arg(long, default_value_t = 5)]
    reps: usize,
    /// --jobs levels of the scaling part.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4")]
    jobs: Vec<usize>,
    /// Scenarios of the overhead part (default: ten varied ones). Repeatable.
    #[arg(long = "scenario")]
    scenarios: Vec<String>,
    /// The scaling part's subset: N scenarios runnable on Claude Code, or `all`.
    #[arg(long, default_value = "20")]
    subset: Subset,
    /// A recorded Claude Code `*.requests.jsonl`: its first request body is the stub
    /// part's large (real, about 87 KB) load. Without it that load is left out.
    #[arg(long, env = "STREAMCHECK_OBSERVED_REQUESTS")]
    observed_requests: Option<PathBuf>,
    /// The streamcheck binary the overhead and scaling parts run (default: beside this one).
    #[arg(long, env = "STREAMCHECK_BIN")]
    streamcheck: Option<PathBuf>,
    /// The stub-api binary the stub part loads (default: beside this one).
    #[arg(long, env = "STUB_API_BIN")]
    stub_api: Option<PathBuf>,
    /// Also write the Markdown tables to this file.
    #[arg(long)]
    out: Option<PathBuf>,
}

/// The parts of the bench, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Part {
    Overhead,
    Scaling,
    Matcher,
    Stub,
    /// Only the differ at 100k frames, each diff once: small enough to count its
    /// instructions under `valgrind --tool=callgrind` (not part of the default run).
    Differ,
}

/// Which scenarios the scaling part runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subset {
    /// This many scenarios runnable on the target, spread over the suite by id.
    Spread(usize),
    All,
}

impl FromStr for Subset {
    type Err = String;

    fn from_str(s: &str) -> Result<Subset, String> {
        match s {
            "all" => Ok(Subset::All),
            n => n
                .parse()
                .map(Subset::Spread)
                .map_err(|_| format!("`{n}`: give a number of scenarios or `all`")),
        }
    }
}

/// Ten varied scenarios (text, thinking, partial messages, tools, files, faults, stdin,
/// formats) that run to their end without stdin pauses.
const OVERHEAD_SCENARIOS: &[&str] = &[
    "basics/text-reply",
    "basics/thinking-then-tool",
    "streaming/partial-text",
    "tools/bash-single-call",
    "tools/bash-parallel-calls",
    "files/edit-file",
    "faults/split-deltas-20",
    "stdin/content-string",
    "stdin/multi-turn",
    "formats/output-json",
];

/// What the parts measure with.
pub struct Options {
    /// Paired repetitions per scenario in the overhead part.
    pub reps: usize,
    pub scenarios: Vec<String>,
    /// `--jobs` levels of the scaling part.
    pub jobs: Vec<usize>,
    pub subset: Subset,
    /// Synthetic output sizes (frames) for the matcher part.
    pub sizes: Vec<usize>,
    pub stub: stub::Loads,
    /// The streamcheck binary.
    pub streamcheck: PathBuf,
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("streamcheck-bench: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> Result<()> {
    let start = match &cli.root {
        Some(root) => root.clone(),
        None => std::env::current_dir().context("no current folder")?,
    };
    let Some(project) = Project::discover(&start) else {
        bail!(
            "no project (a folder holding scenarios/) at or above {}",
            start.display()
        );
    };
    let exe = std::env::current_exe().context("cannot find my own binary")?;
    let beside = |name: &str| exe.with_file_name(name);
    let opts = Options {
        reps: cli.reps,
        scenarios: if cli.scenarios.is_empty() {
            OVERHEAD_SCENARIOS.iter().map(|s| s.to_string()).collect()
        } else {
            cli.scenarios
        },
        jobs: cli.jobs,
        subset: cli.subset,
        sizes: vec![1_000, 10_000, 100_000],
        stub: stub::Loads {
            observed: cli.observed_requests,
            stub_api: cli.stub_api.unwrap_or_else(|| beside("stub-api")),
            ..stub::Loads::default()
        },
        streamcheck: cli.streamcheck.unwrap_or_else(|| beside("streamcheck")),
    };
    let parts = if cli.parts.is_empty() {
        let all = Part::value_variants().iter();
        all.copied().filter(|p| *p != Part::Differ).collect()
    } else {
        cli.parts
    };
    let md = run_parts(&project, &parts, &opts);
    println!("{md}");
    if let Some(out) = cli.out {
        std::fs::write(&out, &md).with_context(|| out.display().to_string())?;
    }
    Ok(())
}

/// Runs the chosen parts; progress goes to stderr, the returned Markdown is the result.
fn run_parts(project: &Project, parts: &[Part], opts: &Options) -> String {
    let mut md = String::new();
    let started = Meter::start();
    let load_before = procfs::loadavg();
    for part in parts {
        let meter = Meter::start();
        let mut section = match part {
            Part::Overhead => overhead::part(project, opts),
            Part::Scaling => scaling::part(project, opts),
            Part::Matcher => Ok(matcher::part(&opts.sizes)),
            Part::Stub => Ok(stub::part(&opts.stub)),
            Part::Differ => Ok(matcher::differ_once(100_000)),
        }
        .unwrap_or_else(|e| format!("could not run: {e:#}\n"));
        let _ = writeln!(
            section,
            "\n_{:.0} s; other processes kept {:.0} % of the machine busy meanwhile._\n",
            meter.elapsed().as_secs_f64(),
            meter.others_busy() * 100.0
        );
        eprint!("{section}");
        md.push_str(&section);
    }
    let machine = procfs::machine_facts(
        &load_before,
        &procfs::loadavg(),
        started.elapsed(),
        started.others_busy(),
    );
    format!("{machine}\n{md}")
}

/// `path`, or a message saying how to build it.
fn built(path: &Path, package: &str, env: &str) -> Result<()> {
    if !path.exists() {
        bail!(
            "{} not found: build it with `cargo build --release -p {package}` (or set {env})",
            path.display()
        );
    }
    Ok(())
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?)
}

/// A bench part's temp dir.
fn temp_dir() -> Result<tempfile::TempDir> {
    Ok(tempfile::Builder::new()
        .prefix("streamcheck-bench-")
        .tempdir()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_and_subsets_parse_as_the_flags_say() {
        let cli = Cli::try_parse_from([
            "streamcheck-bench",
            "--part",
            "stub,matcher",
            "--subset",
            "all",
        ])
        .unwrap();
        assert_eq!(cli.parts, [Part::Stub, Part::Matcher]);
        assert_eq!(cli.subset, Subset::All);
        let cli = Cli::try_parse_from(["streamcheck-bench"]).unwrap();
        assert_eq!(cli.subset, Subset::Spread(20));
        assert!(Cli::try_parse_from(["streamcheck-bench", "--part", "all"]).is_err());
        assert!(Cli::try_parse_from(["streamcheck-bench", "--subset", "many"]).is_err());
    }
}
