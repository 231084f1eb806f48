//! The harness against the CLI's own run time: per scenario, `streamcheck run --jobs 1`,
//! the same invocation run bare (same sandbox layout, a stub already listening), and the
//! trial in this process, in paired repetitions; plus the fixed cost of one invocation.

use crate::procfs::{children_cpu, self_cpu};
use crate::render::{max, median, min, ms, spread_pct, tick};
use crate::Options;
use anyhow::{anyhow, Context, Result};
use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use streamcheck::catalogue;
use streamcheck::install::{self, Project, Target, TargetSpec};
use streamcheck::plan::launch::Invocation;
use streamcheck::process_group;
use streamcheck::runner::process;
use streamcheck::runner::sandbox::SandboxDir;
use streamcheck::runner::{RunOptions, Status};
use streamcheck::scenario::{CloseStdin, OutputFormat, Scenario, StdinLine};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// How long a bare run may take before the bench gives up on it.
const BARE_LIMIT: Duration = Duration::from_secs(120);

/// One timed run: wall time, the CPU it cost, and whether it did what it should.
struct Sample {
    wall: Duration,
    cpu: Duration,
    ok: bool,
}

fn walls(samples: &[Sample]) -> Vec<f64> {
    samples.iter().map(|s| ms(s.wall)).collect()
}

/// `streamcheck run --jobs 1` in a project, its reports under `tmp`.
struct Harness<'a> {
    bin: &'a Path,
    tmp: &'a Path,
}

impl Harness<'_> {
    /// One run, timed from spawn to reaping; `ok` when it exited 0.
    fn run(&self, root: &Path, args: &[&str], report_dir: &str) -> Result<Sample> {
        let cpu = children_cpu();
        let t = Instant::now();
        let status = Command::new(self.bin)
            .arg("--root")
            .arg(root)
            .args(["run", "--jobs", "1", "--report-dir"])
            .arg(self.tmp.join(report_dir))
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .with_context(|| format!("cannot start {}", self.bin.display()))?;
        Ok(Sample {
            wall: t.elapsed(),
            cpu: children_cpu().saturating_sub(cpu),
            ok: status.success(),
        })
    }
}

/// What one `streamcheck run` costs when its filter takes nothing (ms).
struct Fixed {
    wall: f64,
    cpu: f64,
    /// The same in a project holding only one scenario file.
    one_file: f64,
}

/// The three kinds of run of one scenario, one of each per repetition.
struct Measured {
    harness: Vec<Sample>,
    bare: Vec<Sample>,
    in_process: Vec<Sample>,
}

impl Measured {
    fn bare_median(&self) -> f64 {
        median(walls(&self.bare))
    }

    /// Harness minus bare wall time of each repetition.
    fn paired_diffs(&self) -> Vec<f64> {
        (self.harness.iter().zip(&self.bare))
            .map(|(h, b)| ms(h.wall) - ms(b.wall))
            .collect()
    }

    /// The in-process trial's CPU (the harness's own work), as a share of a bare run.
    fn own_share(&self) -> f64 {
        median(self.in_process.iter().map(|s| ms(s.cpu)).collect()) / self.bare_median()
    }

    fn failures(&self, id: &str) -> Option<String> {
        let failed = |s: &[Sample]| s.iter().filter(|x| !x.ok).count();
        let (h, b, i) = (
            failed(&self.harness),
            failed(&self.bare),
            failed(&self.in_process),
        );
        (h + b + i > 0).then(|| {
            format!("{id}: {h} harness run(s) and {i} in-process trial(s) failed, {b} bare run(s) printed no result")
        })
    }

    fn row(&self, id: &str) -> String {
        let bare = walls(&self.bare);
        let d = self.paired_diffs();
        let (bm, dm) = (median(bare.clone()), median(d.clone()));
        let cpu = median(self.in_process.iter().map(|s| ms(s.cpu)).collect());
        format!(
            "| {id} | {bm:.0} | {:.0}..{:.0} | {:.0} | {dm:+.0} ({:+.0}..{:+.0}) | {:+.1} % {} | {:.0} | {cpu:.1} ({:.2} %) |\n",
            min(&bare),
            max(&bare),
            median(walls(&self.harness)),
            min(&d),
            max(&d),
            100.0 * dm / bm,
            tick(dm / bm <= 0.02),
            median(walls(&self.in_process)),
            100.0 * cpu / bm,
        )
    }
}

pub fn part(project: &Project, opts: &Options) -> Result<String> {
    crate::built(&opts.streamcheck, "streamcheck", "STREAMCHECK_BIN")?;
    let target = claude_code(project)?;
    let (all, _) = catalogue::load_all(&project.scenarios_dir());
    let rt = crate::runtime()?;
    let tmp = crate::temp_dir()?;
    let harness = Harness {
        bin: &opts.streamcheck,
        tmp: tmp.path(),
    };
    let mut md = header(&target, opts.reps);
    let fixed = fixed_cost(&harness, project, opts)?;
    let (mut measured, mut notes) = (Vec::new(), Vec::new());
    for id in &opts.scenarios {
        let s = match bare_runnable(&all, id, &target) {
            Ok(s) => s,
            Err(why) => {
                notes.push(format!("{id}: {why}, left out"));
                continue;
            }
        };
        eprintln!("bench: overhead of {id} ...");
        if measured.is_empty() {
            // Page cache and first-run effects of the CLI: one unmeasured pair.
            harness.run(&project.root, &["-f", id], "warm")?;
            bare_run(&rt, s, &target)?;
        }
        let m = measure(&rt, &harness, &project.root, s, &target, opts.reps)?;
        notes.extend(m.failures(id));
        md.push_str(&m.row(id));
        measured.push(m);
    }
    if !measured.is_empty() {
        md.push_str(&totals(&measured, &fixed, opts.reps, all.len()));
    }
    for n in notes {
        let _ = writeln!(md, "- {n}");
    }
    Ok(md)
}

/// The pinned Claude Code, installed already.
pub fn claude_code(project: &Project) -> Result<Target> {
    let spec = TargetSpec::parse("claude-code").map_err(|e| anyhow!("{e}"))?;
    install::resolve(&spec, project, false).map_err(|e| anyhow!("{e}"))
}

fn header(target: &Target, reps: usize) -> String {
    format!(
        "### Harness overhead\n\n`streamcheck run --jobs 1 -f ID` (the whole process: start, scenario loading, stub, sandbox, checks, reports) against the same {} {} invocation run bare (same args, env and sandbox layout; its stub already listening when the clock starts). {reps} repetitions per scenario, each a harness run, a bare run and an in-process trial (`runner::run` inside the bench) in rotating order; overhead = median of the paired differences (harness − bare of the same repetition).\n\n\
         | scenario | bare (ms) | bare min..max | harness (ms) | paired diff (ms) min..max | overhead | in-process trial (ms) | harness's own CPU per trial (ms, share of bare) |\n|---|---:|---:|---:|---:|---:|---:|---:|\n",
        target.name, target.version
    )
}

/// The cost of an invocation without a trial: a filter that takes nothing; and the same
/// in a project holding one scenario file (what parsing only the selected files costs).
fn fixed_cost(harness: &Harness, project: &Project, opts: &Options) -> Result<Fixed> {
    let one = harness.tmp.join("one-scenario");
    if let Some(first) = opts.scenarios.first() {
        let to = one.join("scenarios").join(format!("{first}.yaml"));
        std::fs::create_dir_all(to.parent().unwrap_or(&one))?;
        let from = project.scenarios_dir().join(format!("{first}.yaml"));
        std::fs::copy(&from, &to).with_context(|| from.display().to_string())?;
        std::os::unix::fs::symlink(project.root.join("targets"), one.join("targets"))?;
    }
    let (mut all_files, mut one_file) = (Vec::new(), Vec::new());
    for i in 0..opts.reps.max(5) {
        let none = ["-f", "no-such-scenario-id"];
        let dir = format!("empty-{i}");
        all_files.push(harness.run(&project.root, &none, &dir)?);
        one_file.push(harness.run(&one, &none, &dir)?);
    }
    Ok(Fixed {
        wall: median(walls(&all_files)),
        cpu: median(all_files.iter().map(|s| ms(s.cpu)).collect()),
        one_file: median(walls(&one_file)),
    })
}

/// `reps` repetitions of a harness run, a bare run and an in-process trial, taking turns
/// at going first.
fn measure(
    rt: &tokio::runtime::Runtime,
    harness: &Harness,
    root: &Path,
    s: &Scenario,
    target: &Target,
    reps: usize,
) -> Result<Measured> {
    let mut m = Measured {
        harness: Vec::new(),
        bare: Vec::new(),
        in_process: Vec::new(),
    };
    for rep in 0..reps {
        let dir = format!("{}-{rep}", s.id.replace('/', "_"));
        for k in 0..3 {
            match (rep + k) % 3 {
                0 => m.harness.push(harness.run(root, &["-f", &s.id], &dir)?),
                1 => m.bare.push(bare_run(rt, s, target)?),
                _ => m.in_process.push(in_process(rt, s, target)),
            }
        }
    }
    Ok(m)
}

/// The line over all scenarios and the paragraph that reads the numbers.
fn totals(measured: &[Measured], fixed: &Fixed, reps: usize, suite: usize) -> String {
    let sum = |f: fn(&Measured) -> &Vec<Sample>| -> f64 {
        measured.iter().flat_map(|m| walls(f(m))).sum()
    };
    let (bare, harness, in_process) = (
        sum(|m| &m.bare),
        sum(|m| &m.harness),
        sum(|m| &m.in_process),
    );
    let n = measured.len();
    let per_pass = |total: f64| total / reps as f64;
    let overhead = (harness - bare) / bare;
    let own_share = median(measured.iter().map(Measured::own_share).collect());
    let mut md = format!(
        "| **all {n}** (one pass, mean) | {:.0} | | {:.0} | {:+.0} | **{:+.1} %** {} | {:.0} ({:+.1} %) | median {:.2} % |\n",
        per_pass(bare),
        per_pass(harness),
        per_pass(harness - bare),
        100.0 * overhead,
        tick(overhead <= 0.02),
        per_pass(in_process),
        100.0 * (in_process - bare) / bare,
        100.0 * own_share,
    );
    let mean_bare = per_pass(bare) / n as f64;
    let own = own_share * mean_bare;
    let spread: Vec<f64> = (measured.iter())
        .flat_map(|m| {
            walls(&m.bare)
                .into_iter()
                .map(|w| w / m.bare_median() - 1.0)
        })
        .collect();
    let per_scenario = median(
        (measured.iter())
            .map(|m| median(m.paired_diffs()) / m.bare_median())
            .collect(),
    );
    let one_invocation = (own + fixed.wall) / mean_bare;
    let per_trial = (own + fixed.wall / suite as f64) / mean_bare;
    let _ = writeln!(
        md,
        "\nThe CLI's own run time varies by ±{:.0} % between identical runs, so single-scenario differences of a few % are noise at {reps} repetitions (median per-scenario difference: {:+.1} %). Measured exactly instead, the harness costs {own:.1} ms CPU per trial (in-process around `runner::run`: sandbox, stub, reading, matching; the CLI excluded) plus a fixed {:.1} ms per `streamcheck run` invocation (a run whose filter takes nothing: process start, parsing all {suite} scenario files, resolving the target, writing the reports; {:.1} ms CPU). Counted as if none of it overlapped the CLI, that is {:.1} % of a mean bare run ({mean_bare:.0} ms) for a one-scenario invocation {}, and {:.2} % per trial in a whole-suite run, where the fixed cost is paid once {}. In-process trials took {:+.1} % longer than bare runs overall. Most of the fixed cost is parsing every scenario file before the filter applies: with only the selected file present it is {:.1} ms, which would make a one-scenario invocation cost {:.1} %. Goal: <= 2 %.",
        spread_pct(&spread),
        100.0 * per_scenario,
        fixed.wall,
        fixed.cpu,
        100.0 * one_invocation,
        tick(one_invocation <= 0.02),
        100.0 * per_trial,
        tick(per_trial <= 0.02),
        100.0 * (in_process - bare) / bare,
        fixed.one_file,
        100.0 * (own + fixed.one_file) / mean_bare,
    );
    md
}

/// The scenario `id`, if the bare driver (which writes stdin in one go) can run it alone.
fn bare_runnable<'a>(
    all: &'a [Scenario],
    id: &str,
    target: &Target,
) -> Result<&'a Scenario, String> {
    let s = (all.iter().find(|s| s.id == id)).ok_or("no such scenario")?;
    if all.iter().filter(|o| o.id.contains(id)).count() != 1 {
        return Err(format!("`-f {id}` would take more than one scenario"));
    }
    let expect = s
        .file
        .expect
        .get(target.dialect.conventions().expect_key())
        .ok_or_else(|| format!("no expectation for {}", target.name))?;
    if let Some(why) = target.unmet(s, expect) {
        return Err(format!("skipped on {}: {why}", target.name));
    }
    let paused = (s.stdin(expect).into_iter().flatten())
        .any(|l| matches!(l, StdinLine::AfterResults { .. }));
    if paused || s.file.close_stdin != CloseStdin::Immediately {
        return Err("its stdin waits for results".into());
    }
    if s.file.signal.is_some() {
        return Err("it signals the CLI".into());
    }
    Ok(s)
}

/// The trial through `suite::run_one` in this process: the CPU this process spent on it
/// (sandbox, stub, reading, matching: the harness's own work), the CLI excluded.
fn in_process(rt: &tokio::runtime::Runtime, s: &Scenario, target: &Target) -> Sample {
    let cpu = self_cpu();
    let t = Instant::now();
    let trial = rt.block_on(streamcheck::suite::run_one(
        s,
        target,
        &RunOptions::default(),
    ));
    Sample {
        wall: t.elapsed(),
        cpu: self_cpu().saturating_sub(cpu),
        ok: trial.status == Status::Passed,
    }
}

/// The scenario's CLI invocation without the harness: the trial's sandbox and a listening
/// stub are made first, then the clock runs from spawn until the CLI exited and its
/// stdout and stderr closed. `ok` means it printed a result (or, for text, anything).
fn bare_run(rt: &tokio::runtime::Runtime, s: &Scenario, target: &Target) -> Result<Sample> {
    let expect = (s.file.expect.get(target.dialect.conventions().expect_key()))
        .context("no expectation for the target")?;
    let sandbox = SandboxDir::create(s)?;
    let script = sandbox.stub_script(s, target.dialect, &target.data.tools);
    let stdin = s.stdin(expect).map(|lines| {
        (lines.iter().filter_map(StdinLine::to_line))
            .flat_map(|l| (l + "\n").into_bytes())
            .collect::<Vec<u8>>()
    });
    rt.block_on(async {
        let server = stub_api::StubServer::start(script)
            .await
            .context("cannot start the stub")?;
        let base_url = server.base_url();
        let inv = target.invocation(s, expect, &sandbox.for_target(&base_url));
        let timed = time_bare(&inv, &sandbox.workspace, stdin).await;
        server.shutdown().await;
        let (wall, cpu, stdout) = timed?;
        let ok = match s.file.output_format {
            OutputFormat::Text => !stdout.is_empty(),
            _ => String::from_utf8_lossy(&stdout).contains("\"type\":\"result\""),
        };
        Ok(Sample { wall, cpu, ok })
    })
}

/// Runs `inv` to the end of its output: wall time, the CPU of the reaped CLI, stdout.
async fn time_bare(
    inv: &Invocation,
    workspace: &Path,
    stdin: Option<Vec<u8>>,
) -> Result<(Duration, Duration, Vec<u8>)> {
    let mut cmd = process::command(inv, workspace, stdin.is_some());
    let cpu = children_cpu();
    let t = Instant::now();
    let process_group::Spawned { mut child, group } = process_group::spawn(&mut cmd)?;
    if let (Some(mut pipe), Some(bytes)) = (child.stdin.take(), stdin) {
        tokio::spawn(async move {
            let _ = pipe.write_all(&bytes).await;
        });
    }
    let mut out = child.stdout.take().context("stdout")?;
    let mut err = child.stderr.take().context("stderr")?;
    let run = async {
        let (mut o, mut e) = (Vec::new(), Vec::new());
        let _ = tokio::join!(out.read_to_end(&mut o), err.read_to_end(&mut e));
        let _ = child.wait().await;
        o
    };
    let stdout = tokio::time::timeout(BARE_LIMIT, run).await;
    let wall = t.elapsed();
    drop(group);
    let stdout = stdout.map_err(|_| anyhow!("the bare run did not end within 120 s"))?;
    Ok((wall, children_cpu().saturating_sub(cpu), stdout))
}
