use clap::{Parser, Subcommand};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;
use streamcheck::commands::{compare, drift, record};
use streamcheck::report::{self, ReportWriter};
use streamcheck::runner::{RunOptions, Status, Trial};
use streamcheck::scenario::{self, Scenario};
use streamcheck::suite::{self, Selection};
use streamcheck::target::{self, Dialect, Project, TargetSpec};

mod cli;

/// Conformance tests for the stream-json protocol of agent CLIs.
#[derive(Parser)]
#[command(name = "streamcheck", version)]
struct Cli {
    /// The project folder (holding scenarios/ and targets/); found from the current folder by default.
    #[arg(long, global = true)]
    root: Option<PathBuf>,
    #[command(subcommand)]
    command: Cmd,
}

#[derive(clap::Args, Clone)]
struct Pick {
    /// Target to run: claude-code (default), claude-code@VERSION, claude-code@supported (every version in targets/claude-code/versions.yaml), claude-code@latest (asks npm), caliban, caliban@VERSION. Repeatable.
    #[arg(long = "target", short = 't')]
    targets: Vec<String>,
    /// An executable that speaks Claude Code's conventions (a wrapper, a fork).
    #[arg(long)]
    target_command: Option<PathBuf>,
    /// Run only scenarios whose id contains this. Repeatable.
    #[arg(long = "filter", short = 'f')]
    filters: Vec<String>,
    /// Run only shard K of N (e.g. 2/4), for CI matrices.
    #[arg(long)]
    shard: Option<String>,
}

/// How trials run: shared by every command that runs scenarios.
#[derive(clap::Args, Clone)]
struct Exec {
    /// Trials at once (default: number of CPUs).
    #[arg(long, short = 'j')]
    jobs: Option<usize>,
    /// Per-trial timeout in seconds when a scenario sets none.
    #[arg(long, default_value_t = 60)]
    timeout: u64,
    /// Do not install missing targets: skip them with the install command instead.
    #[arg(long)]
    no_install: bool,
}

impl Exec {
    fn jobs(&self) -> usize {
        self.jobs
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
    }

    fn run_options(&self) -> RunOptions {
        RunOptions {
            timeout: Duration::from_secs(self.timeout),
            ..RunOptions::default()
        }
    }

    fn resolve(
        &self,
        specs: &[TargetSpec],
        project: &Project,
    ) -> Vec<Result<target::Target, target::NotInstalled>> {
        specs
            .iter()
            .map(|s| target::resolve(s, project, !self.no_install))
            .collect()
    }
}

#[derive(Subcommand)]
enum Cmd {
    /// Run scenarios against targets and write reports.
    Run {
        #[command(flatten)]
        pick: Pick,
        #[command(flatten)]
        exec: Exec,
        /// Where reports go (default reports/runs/<timestamp>/).
        #[arg(long)]
        report_dir: Option<PathBuf>,
    },
    /// List scenarios (id, description).
    List {
        #[command(flatten)]
        pick: Pick,
    },
    /// Validate every scenario file without running anything.
    Check,
    /// Serve one scenario's stub script for a person to point a CLI at.
    Stub {
        file: PathBuf,
        #[arg(long, default_value_t = 0)]
        port: u16,
    },
    /// Merge the results of several runs (e.g. CI shards) into one report folder.
    Merge {
        dirs: Vec<PathBuf>,
        #[arg(long)]
        out: PathBuf,
    },
    /// Run each scenario on two targets and report where they differ in substance
    /// (parity.md, parity.json); or compare two folders of captured runs (--observed).
    Compare {
        #[command(flatten)]
        pick: Pick,
        #[command(flatten)]
        exec: Exec,
        /// Where parity.md, parity.json and the runs' reports go (default reports/parity/<timestamp>/).
        #[arg(long)]
        report_dir: Option<PathBuf>,
        /// Compare two capture folders (NAME.stdout.jsonl, NAME.exit_code, ...) instead of running anything.
        #[arg(long, num_args = 2, value_names = ["DIR_A", "DIR_B"])]
        observed: Option<Vec<PathBuf>>,
    },
    /// Print the JSON Schema of scenario files.
    Schema,
    /// Measure the harness against the CLI's own run time, and the stub against aimock.
    /// Use a release build: `cargo build --release --workspace`.
    Bench {
        /// Parts: overhead, scaling, matcher, stub (default: all). Comma-separated or repeated.
        #[arg(long = "part", value_delimiter = ',')]
        parts: Vec<String>,
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
        subset: String,
        /// Also write the Markdown tables to this file.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Run scenarios and record what the CLI printed as pending expectations (reports/pending/).
    Record {
        #[command(flatten)]
        pick: Pick,
        #[command(flatten)]
        exec: Exec,
        /// Where the runs' reports go (default reports/runs/<timestamp>/).
        #[arg(long)]
        report_dir: Option<PathBuf>,
        /// Run each scenario this many times; values that differ between runs are generalised.
        #[arg(long, default_value_t = 1)]
        runs: usize,
        /// Record only scenarios whose current expectation fails.
        #[arg(long)]
        failing_only: bool,
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
    /// Run the suite on several versions and report protocol drift between neighbours.
    Drift {
        #[command(flatten)]
        pick: Pick,
        #[command(flatten)]
        exec: Exec,
        /// Where drift.md and drift.json go (default reports/drift/<timestamp>/).
        #[arg(long)]
        report_dir: Option<PathBuf>,
        /// Where the runs' own reports and outputs.json go (default reports/runs/<timestamp>/).
        #[arg(long)]
        run_dir: Option<PathBuf>,
        /// Diff the outputs.json of an earlier drift run instead of running anything.
        #[arg(long)]
        replay: Option<PathBuf>,
        /// A line to add to the report's notes. Repeatable.
        #[arg(long = "note")]
        notes: Vec<String>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match real_main(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("streamcheck: {e}");
            ExitCode::from(2)
        }
    }
}

fn project(root: Option<PathBuf>) -> Result<Project, String> {
    match root {
        // Absolute, since trials run in their own working directories.
        Some(root) => Ok(Project {
            root: root
                .canonicalize()
                .map_err(|e| format!("--root {}: {e}", root.display()))?,
        }),
        None => {
            let cwd = std::env::current_dir().map_err(|e| e.to_string())?;
            Project::discover(&cwd).ok_or_else(|| {
                "no streamcheck project here (a folder with scenarios/ and targets/claude-code/): run from the repository or pass --root".into()
            })
        }
    }
}

fn real_main(cli: Cli) -> Result<ExitCode, String> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    match cli.command {
        Cmd::Record {
            pick,
            exec,
            report_dir,
            runs,
            failing_only,
        } => {
            let project = project(cli.root)?;
            let (scenarios, errors) = load(&project, &pick)?;
            for e in &errors {
                eprintln!("error: {e}");
            }
            let targets: Vec<_> = exec.resolve(&specs(&pick, &project)?, &project);
            let opts = record::RecordOptions {
                jobs: exec.jobs(),
                run: exec.run_options(),
                runs,
                failing_only,
                report_dir: report_dir.unwrap_or_else(|| ReportWriter::default_dir(&project.root)),
            };
            let runs = opts.runs.max(1);
            let outcomes = rt.block_on(record::record(
                &project,
                scenarios,
                &targets,
                &opts,
                |t, run| cli::review::print_trial(t, run, runs),
            ))?;
            cli::review::print_outcomes(&outcomes, &project.root);
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Review {
            accept_all,
            reject_all,
            filters,
        } => {
            let project = project(cli.root)?;
            let mode = match (accept_all, reject_all) {
                (true, _) => cli::review::ReviewMode::AcceptAll,
                (_, true) => cli::review::ReviewMode::RejectAll,
                _ if std::io::stdin().is_terminal() => cli::review::ReviewMode::Ask,
                _ => cli::review::ReviewMode::List,
            };
            let sum = cli::review::review(&project, &filters, mode);
            Ok(if sum.errors > 0 {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            })
        }
        Cmd::Drift {
            pick,
            exec,
            report_dir,
            run_dir,
            replay,
            notes,
        } => {
            let project = project(cli.root)?;
            let command = std::env::args()
                .map(|a| target::shell_quote(&a))
                .collect::<Vec<_>>()
                .join(" ");
            let stamp = report::timestamp(std::time::SystemTime::now()).replace(':', "");
            let opts = drift::DriftOptions {
                jobs: exec.jobs(),
                run: exec.run_options(),
                install: !exec.no_install,
                report_dir: report_dir
                    .unwrap_or_else(|| project.root.join("reports/drift").join(&stamp)),
                run_dir: run_dir.unwrap_or_else(|| ReportWriter::default_dir(&project.root)),
                command,
                notes,
            };
            let file = match replay {
                Some(outputs) => drift::replay(&outputs, &opts)?,
                None => {
                    let (scenarios, errors) = load(&project, &pick)?;
                    for e in &errors {
                        eprintln!("error: {e}");
                    }
                    rt.block_on(drift::run(
                        &project,
                        scenarios,
                        &specs(&pick, &project)?,
                        &opts,
                    ))?
                }
            };
            for p in &file.drift.pairs {
                println!(
                    "{} -> {}: {} flip(s), {} field change(s), {} sequence change(s), {} exit-code change(s)",
                    p.from,
                    p.to,
                    p.status_flips.len(),
                    p.fields.len(),
                    p.sequences.len(),
                    p.exit_codes.len()
                );
            }
            println!(
                "drift report: {}",
                opts.report_dir.join("drift.md").display()
            );
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Compare {
            pick,
            exec,
            report_dir,
            observed,
        } => {
            let command = std::env::args()
                .enumerate()
                .map(|(i, a)| {
                    if i == 0 {
                        "streamcheck".into()
                    } else {
                        target::shell_quote(&a)
                    }
                })
                .collect::<Vec<_>>()
                .join(" ");
            let stamp = report::timestamp(std::time::SystemTime::now()).replace(':', "");
            let (parity, dir) = match observed.as_deref() {
                Some([a, b]) => {
                    let root = project(cli.root).map_or_else(|_| PathBuf::from("."), |p| p.root);
                    let dir =
                        report_dir.unwrap_or_else(|| root.join("reports/parity").join(&stamp));
                    (compare::observed(a, b, &pick.filters, command)?, dir)
                }
                Some(_) => return Err("--observed takes two folders".into()),
                None => {
                    let project = project(cli.root)?;
                    let (scenarios, errors) = load(&project, &pick)?;
                    for e in &errors {
                        eprintln!("error: {e}");
                    }
                    let targets: Vec<_> = exec.resolve(&specs(&pick, &project)?, &project);
                    let dir = report_dir
                        .unwrap_or_else(|| project.root.join("reports/parity").join(&stamp));
                    let live = compare::LiveRun {
                        scenarios,
                        targets: &targets,
                        jobs: exec.jobs(),
                        opts: exec.run_options(),
                        report_dir: dir.clone(),
                        command,
                    };
                    let color = std::io::stdout().is_terminal();
                    let parity =
                        rt.block_on(compare::run(live, |t| println!("{}", trial_line(t, color))))?;
                    (parity, dir)
                }
            };
            compare::write(&dir, &parity)
                .map_err(|e| format!("cannot write {}: {e}", dir.display()))?;
            print!("{}", compare::summary(&parity));
            println!("parity report: {}", dir.join("parity.md").display());
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Bench {
            parts,
            reps,
            scenarios,
            jobs,
            subset,
            out,
        } => {
            let project = project(cli.root)?;
            let opts = streamcheck::bench::Options {
                parts: streamcheck::bench::Part::parse_list(&parts)?,
                reps,
                jobs,
                subset: streamcheck::bench::parse_subset(&subset)?,
                ..Default::default()
            }
            .with_scenarios(scenarios);
            let md = streamcheck::bench::run(&project, &opts)?;
            println!("{md}");
            if let Some(out) = out {
                std::fs::write(&out, &md).map_err(|e| format!("{}: {e}", out.display()))?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Schema => {
            print!("{}", streamcheck::scenario::json_schema_string());
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Check => {
            let project = project(cli.root)?;
            let (ok, errors) = scenario::load_all(&project.scenarios_dir());
            for e in &errors {
                eprintln!("error: {e}");
            }
            println!(
                "{} scenario file(s) valid, {} with errors",
                ok.len(),
                errors.len()
            );
            Ok(if errors.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(2)
            })
        }
        Cmd::List { pick } => {
            let project = project(cli.root)?;
            let (scenarios, errors) = load(&project, &pick)?;
            for s in &scenarios {
                let targets: Vec<&str> = s.file.expect.keys().map(String::as_str).collect();
                println!(
                    "{:<48} [{}] {}",
                    s.id,
                    targets.join(", "),
                    s.file.description
                );
            }
            for e in &errors {
                eprintln!("error: {e}");
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Stub { file, port } => rt.block_on(serve_stub(file, port)),
        Cmd::Merge { dirs, out } => merge(&dirs, &out),
        Cmd::Run {
            pick,
            exec,
            report_dir,
        } => {
            let project = project(cli.root)?;
            let (scenarios, errors) = load(&project, &pick)?;
            let specs = specs(&pick, &project)?;
            let targets: Vec<_> = exec.resolve(&specs, &project);
            let dir = report_dir.unwrap_or_else(|| ReportWriter::default_dir(&project.root));
            let mut writer = ReportWriter::create(
                &dir,
                suite::target_infos(&targets),
                errors.iter().map(|e| e.to_string()).collect(),
            )
            .map_err(|e| format!("cannot write reports to {}: {e}", dir.display()))?;
            for e in &errors {
                eprintln!("error: {e}");
            }
            let jobs = exec.jobs();
            let opts = exec.run_options();
            let total = scenarios.len() * targets.len();
            let color = std::io::stdout().is_terminal();
            let bar = (std::io::stderr().is_terminal() && total > 8).then(|| {
                let b = indicatif::ProgressBar::new(total as u64);
                b.set_style(
                    indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} {elapsed} {msg}")
                        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
                );
                b
            });
            let mut failures: Vec<Trial> = Vec::new();
            let finished = rt
                .block_on(suite::run(
                    scenarios,
                    &targets,
                    jobs,
                    opts,
                    &mut writer,
                    |t| {
                        let line = trial_line(t, color);
                        match &bar {
                            Some(b) => {
                                b.println(line);
                                b.inc(1);
                            }
                            None => println!("{line}"),
                        }
                        if t.status == Status::Failed {
                            failures.push(t.clone());
                        }
                    },
                ))
                .map_err(|e| format!("cannot write reports: {e}"))?;
            if let Some(b) = &bar {
                b.finish_and_clear();
            }
            let results = if finished {
                writer.finish().map_err(|e| e.to_string())?.clone()
            } else {
                writer.results().clone()
            };
            print_failures(&failures, color);
            println!("\nreports: {}", dir.display());
            if !errors.is_empty() {
                println!(
                    "{} scenario file(s) could not be loaded (see above)",
                    errors.len()
                );
            }
            if results.counts.known > 0 {
                println!("{} known divergence(s) (listed per target in targets/*/known-divergences.yaml)", results.counts.known);
            }
            println!("{}", results.counts.line());
            Ok(if !errors.is_empty() {
                ExitCode::from(2)
            } else if results.counts.failed > 0 || !finished {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            })
        }
    }
}

fn specs(pick: &Pick, project: &Project) -> Result<Vec<TargetSpec>, String> {
    let mut specs = Vec::new();
    for t in &pick.targets {
        specs.extend(streamcheck::supported::expand(t, project)?);
    }
    if let Some(path) = &pick.target_command {
        specs.push(TargetSpec::command(path, Dialect::ClaudeCode));
    }
    if specs.is_empty() {
        specs.push(TargetSpec::parse("claude-code")?);
    }
    Ok(specs)
}

fn load(
    project: &Project,
    pick: &Pick,
) -> Result<(Vec<Scenario>, Vec<scenario::ScenarioError>), String> {
    let selection = Selection {
        filters: pick.filters.clone(),
        shard: pick.shard.as_deref().map(suite::parse_shard).transpose()?,
    };
    // Parse only what the selection takes: a one-scenario run should not pay for the
    // whole catalogue, and a broken file outside it is `check`'s business, not this run's.
    let dir = project.scenarios_dir();
    let paths =
        scenario::discover(&dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    let (mut scenarios, mut errors) = (Vec::new(), Vec::new());
    for path in paths
        .iter()
        .filter(|p| selection.takes(&scenario::id_of(p, &dir)))
    {
        match Scenario::load(path, &dir) {
            Ok(s) => scenarios.push(s),
            Err(e) => errors.push(e),
        }
    }
    Ok((scenarios, errors))
}

fn paint(s: &str, code: &str, color: bool) -> String {
    if color {
        format!("\x1b[{code}m{s}\x1b[0m")
    } else {
        s.to_string()
    }
}

fn trial_line(t: &Trial, color: bool) -> String {
    let name = format!("{} ({})", t.scenario, t.target);
    match &t.status {
        Status::Passed => format!(
            "{} {name} {:.1}s",
            paint("ok     ", "32", color),
            t.duration_ms as f64 / 1000.0
        ),
        Status::Failed => format!(
            "{} {name}: {}",
            paint("FAILED ", "31;1", color),
            t.divergences.first().map(|d| d.kind.as_str()).unwrap_or("")
        ),
        Status::Skipped(why) => format!("{} {name}: {why}", paint("skipped", "33", color)),
        Status::Known(why) => format!("{} {name}: {why}", paint("known  ", "35", color)),
    }
}

fn print_failures(failures: &[Trial], color: bool) {
    for t in failures {
        println!(
            "\n{}",
            paint(
                &format!(
                    "---- {} on {} {} ----",
                    t.scenario, t.target, t.target_version
                ),
                "1",
                color
            )
        );
        for d in &t.divergences {
            println!("{d}");
        }
        let spawn_failed = t
            .divergences
            .iter()
            .any(|d| d.kind == streamcheck::divergence::Kind::Spawn);
        if !t.expected_frames.is_empty() && !spawn_failed {
            let frames: Vec<_> = t.output.frames.iter().map(|f| f.value.clone()).collect();
            let diff = report::frame_diff(&t.expected_frames, &frames, &t.vars);
            for line in diff.lines() {
                let code = match line.chars().next() {
                    Some('-') => "31",
                    Some('+') => "32",
                    Some('@') => "36",
                    _ => "0",
                };
                println!("{}", paint(line, code, color));
            }
        }
        let last: Vec<String> = t
            .stderr
            .last_lines(5)
            .into_iter()
            .filter(|l| !l.trim().is_empty())
            .map(|l| clip_line(&l, 200))
            .collect();
        if !last.is_empty() {
            println!("stderr (last lines):\n  {}", last.join("\n  "));
        }
        for note in &t.notes {
            println!("note: {note}");
        }
    }
}

async fn serve_stub(file: PathBuf, port: u16) -> Result<ExitCode, String> {
    let text = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    let script = stub_api::Script::from_yaml_or_scenario(&text)
        .map_err(|e| format!("{}: {e}", file.display()))?;
    let on_request: std::sync::Arc<dyn Fn(&stub_api::JournalEntry) + Send + Sync> =
        std::sync::Arc::new(|e| {
            let b = report::request_brief(e);
            println!(
                "#{} {} model={} -> {} ({})",
                b["seq"],
                b["request"].as_str().unwrap_or(""),
                b["model"],
                b["answered_by"].as_str().unwrap_or(""),
                b["status"]
            );
        });
    let server = stub_api::StubServer::start_with(
        script,
        stub_api::ServeOptions {
            port,
            on_request: Some(on_request),
            ..Default::default()
        },
    )
    .await
    .map_err(|e| format!("cannot start the stub: {e}"))?;
    println!("stub listening on {} (Ctrl-C to stop)", server.base_url());
    println!(
        "point a CLI at it: ANTHROPIC_BASE_URL={} ANTHROPIC_API_KEY=dummy claude -p ...",
        server.base_url()
    );
    let _ = tokio::signal::ctrl_c().await;
    server.shutdown().await;
    Ok(ExitCode::SUCCESS)
}

fn merge(dirs: &[PathBuf], out: &std::path::Path) -> Result<ExitCode, String> {
    let merged = report::merge(dirs, out)?;
    println!("merged {} run(s) into {}", dirs.len(), out.display());
    println!("{}", merged.counts.line());
    Ok(if merged.counts.failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn clip_line(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}… ({} bytes)", &s[..i], s.len()),
        None => s.to_string(),
    }
}
