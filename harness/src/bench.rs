//! `streamcheck bench`: the harness measured against the physical limit of a suite (the
//! CLI's own run time) and against its peers, in one run, printed as Markdown tables.
//!
//! - overhead: `streamcheck run --jobs 1` per scenario against the same CLI invocation
//!   run bare (same args, env and sandbox layout, a stub already listening), paired
//!   repetitions, median and spread.
//! - scaling: a fixed subset of the suite at `--jobs 1, 2, 4`: speed-up, and the CPU the
//!   CLI itself burns per run (getrusage of reaped children), which is where it saturates.
//! - matcher: synthetic stream-json outputs of 1k..100k frames through
//!   [`matcher::match_frames`] and [`report::frame_diff`], and pathological any_order groups.
//! - stub: req/s, p99 and RSS of the stub-api binary beside aimock (npm
//!   `@copilotkit/aimock`, installed into a temp dir), same reply, same load generator
//!   ([`stub_api::loadgen`]), same connection count.
//!
//! All load is bounded in count and time; the only network used is loopback and, for
//! the aimock install, the npm registry.

use crate::divergence::Kind;
use crate::matcher::{self, Expected, FrameRules, Mode};
use crate::output::Frame;
use crate::pattern::{Captures, Pattern, Vars};
use crate::report;
use crate::scenario::{self, CloseStdin, Scenario, StdinLine};
use crate::target::{self, Dialect, Project, Sandbox, Target, TargetSpec};
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use stub_api::loadgen::{self, Load};

/// The parts of the bench, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Overhead,
    Scaling,
    Matcher,
    Stub,
}

impl Part {
    pub const ALL: [Part; 4] = [Part::Overhead, Part::Scaling, Part::Matcher, Part::Stub];

    /// The parts named (comma-separated or repeated); none named: all of them.
    pub fn parse_list(names: &[String]) -> Result<Vec<Part>, String> {
        if names.is_empty() {
            return Ok(Part::ALL.to_vec());
        }
        names.iter().map(|n| Part::parse(n.trim())).collect()
    }

    pub fn parse(s: &str) -> Result<Part, String> {
        match s {
            "overhead" => Ok(Part::Overhead),
            "scaling" => Ok(Part::Scaling),
            "matcher" => Ok(Part::Matcher),
            "stub" => Ok(Part::Stub),
            other => Err(format!(
                "unknown bench part `{other}`: use overhead, scaling, matcher, stub"
            )),
        }
    }
}

/// Ten varied scenarios (text, thinking, partial messages, tools, files, faults, stdin,
/// formats) that run to their end without stdin pauses.
pub const OVERHEAD_SCENARIOS: &[&str] = &[
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

/// The recorded Claude Code requests whose first body is the "real 87 KB" load.
pub const OBSERVED_REQUESTS: &str = "/work/shared/observed/claude-code-2.1.197/text.requests.jsonl";
pub const AIMOCK_PACKAGE: &str = "@copilotkit/aimock";
pub const AIMOCK_VERSION: &str = "1.43";

#[derive(Debug, Clone)]
pub struct Options {
    pub parts: Vec<Part>,
    /// Paired repetitions per scenario in the overhead part.
    pub reps: usize,
    pub scenarios: Vec<String>,
    /// `--jobs` levels of the scaling part.
    pub jobs: Vec<usize>,
    /// The scaling subset: this many scenarios runnable on the target, spread over the
    /// suite (every k-th by id), or the whole suite.
    pub subset: Option<usize>,
    /// Synthetic output sizes (frames) for the matcher part.
    pub sizes: Vec<usize>,
    /// Request counts of the stub part (small bodies, 87 KB bodies) and its time limit per load.
    pub small_requests: usize,
    pub large_requests: usize,
    pub load_time_limit: Duration,
    pub connections: usize,
    pub observed: PathBuf,
    pub aimock_version: String,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            parts: Part::ALL.to_vec(),
            reps: 5,
            scenarios: OVERHEAD_SCENARIOS.iter().map(|s| s.to_string()).collect(),
            jobs: vec![1, 2, 4],
            subset: Some(20),
            sizes: vec![1_000, 10_000, 100_000],
            small_requests: 100_000,
            large_requests: 10_000,
            load_time_limit: Duration::from_secs(15),
            connections: 4,
            observed: PathBuf::from(OBSERVED_REQUESTS),
            aimock_version: AIMOCK_VERSION.into(),
        }
    }
}

impl Options {
    /// The overhead part's scenarios, when any are named.
    pub fn with_scenarios(mut self, ids: Vec<String>) -> Options {
        if !ids.is_empty() {
            self.scenarios = ids;
        }
        self
    }
}

/// `all` or a number of scenarios.
pub fn parse_subset(s: &str) -> Result<Option<usize>, String> {
    match s {
        "all" => Ok(None),
        n => n
            .parse()
            .map(Some)
            .map_err(|_| format!("--subset `{n}`: give a number of scenarios or `all`")),
    }
}

/// Runs the chosen parts; progress goes to stderr, the returned Markdown is the result.
pub fn run(project: &Project, opts: &Options) -> Result<String, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find my own binary: {e}"))?;
    let mut md = String::new();
    let started = Meter::start();
    let load_before = loadavg();
    for part in &opts.parts {
        let meter = Meter::start();
        let mut section = match part {
            Part::Overhead => overhead(project, &exe, opts),
            Part::Scaling => scaling(project, &exe, opts),
            Part::Matcher => Ok(matcher_part(opts)),
            Part::Stub => Ok(stub_part(&exe, opts)),
        }
        .unwrap_or_else(|e| format!("could not run: {e}\n"));
        let _ = writeln!(
            section,
            "\n_{:.0} s; other processes kept {:.0} % of the machine busy meanwhile._\n",
            meter.elapsed().as_secs_f64(),
            meter.others_busy() * 100.0
        );
        eprint!("{section}");
        md.push_str(&section);
    }
    let machine = machine_facts(
        &load_before,
        &loadavg(),
        started.elapsed(),
        started.others_busy(),
    );
    Ok(format!("{machine}\n{md}"))
}

// ---------------------------------------------------------------- overhead

struct Sample {
    wall: Duration,
    cpu: Duration,
    ok: bool,
}

fn overhead(project: &Project, exe: &Path, opts: &Options) -> Result<String, String> {
    let target = target::resolve(&TargetSpec::parse("claude-code")?, project, false)
        .map_err(|e| e.to_string())?;
    let (all, _) = scenario::load_all(&project.scenarios_dir());
    let rt = runtime()?;
    let tmp = tempfile::Builder::new()
        .prefix("streamcheck-bench-")
        .tempdir()
        .map_err(|e| e.to_string())?;
    let mut md = String::new();
    let _ = writeln!(
        md,
        "### Harness overhead\n\n`streamcheck run --jobs 1 -f ID` (the whole process: start, scenario loading, stub, sandbox, checks, reports) against the same {} {} invocation run bare (same args, env and sandbox layout; its stub already listening when the clock starts). {} repetitions per scenario, each a harness run, a bare run and an in-process trial (`runner::run` inside the bench) in rotating order; overhead = median of the paired differences (harness − bare of the same repetition).\n",
        target.name, target.version, opts.reps
    );
    md.push_str("| scenario | bare (ms) | bare min..max | harness (ms) | paired diff (ms) min..max | overhead | in-process trial (ms) | harness's own CPU per trial (ms, share of bare) |\n|---|---:|---:|---:|---:|---:|---:|---:|\n");

    // The fixed cost of one invocation, without a trial: a filter that takes nothing;
    // and the same in a project holding one scenario file (what parsing only the
    // selected files would cost).
    let one = tmp.path().join("one-scenario");
    if let Some(first) = opts.scenarios.first() {
        let to = one.join("scenarios").join(format!("{first}.yaml"));
        std::fs::create_dir_all(to.parent().unwrap_or(&one)).map_err(|e| e.to_string())?;
        let from = project.scenarios_dir().join(format!("{first}.yaml"));
        std::fs::copy(&from, &to).map_err(|e| format!("{}: {e}", from.display()))?;
        std::os::unix::fs::symlink(project.root.join("targets"), one.join("targets"))
            .map_err(|e| e.to_string())?;
    }
    let (mut empty, mut empty_one) = (Vec::new(), Vec::new());
    for i in 0..opts.reps.max(5) {
        let none = ["-f", "no-such-scenario-id"];
        let dir = tmp.path().join(format!("empty-{i}"));
        empty.push(harness_run(exe, &project.root, &none, &dir)?);
        empty_one.push(harness_run(exe, &one, &none, &dir)?);
    }
    let fixed_one = median(empty_one.iter().map(|x| ms(x.wall)).collect());

    let mut warmed = false;
    let (mut sum_b, mut sum_h, mut sum_d, mut n_ok) = (0.0, 0.0, Vec::new(), 0);
    let (mut own_share, mut sum_d_all, mut sum_i) = (Vec::new(), Vec::new(), 0.0);
    let mut notes = Vec::new();
    for id in &opts.scenarios {
        let Some(s) = all.iter().find(|s| &s.id == id) else {
            notes.push(format!("{id}: no such scenario, left out"));
            continue;
        };
        if all.iter().filter(|o| o.id.contains(id.as_str())).count() != 1 {
            notes.push(format!(
                "{id}: `-f {id}` would take more than one scenario, left out"
            ));
            continue;
        }
        if let Some(why) = not_bare_runnable(s, &target) {
            notes.push(format!("{id}: {why}, left out"));
            continue;
        }
        eprintln!("bench: overhead of {id} ...");
        if !warmed {
            // Page cache and first-run effects of the CLI: one unmeasured pair.
            let _ = harness_run(exe, &project.root, &["-f", id], &tmp.path().join("warm"))?;
            let _ = bare_run(&rt, s, &target)?;
            warmed = true;
        }
        let (mut b, mut h, mut own) = (Vec::new(), Vec::new(), Vec::new());
        for rep in 0..opts.reps {
            let dir = tmp.path().join(format!("{}-{rep}", id.replace('/', "_")));
            // The three kinds of run take turns at going first.
            for k in 0..3 {
                match (rep + k) % 3 {
                    0 => h.push(harness_run(exe, &project.root, &["-f", id], &dir)?),
                    1 => b.push(bare_run(&rt, s, &target)?),
                    _ => own.push(in_process(&rt, s, &target)),
                }
            }
        }
        let failed_h = h.iter().filter(|x| !x.ok).count();
        let failed_b = b.iter().filter(|x| !x.ok).count();
        let failed_i = own.iter().filter(|x| !x.ok).count();
        if failed_h + failed_b + failed_i > 0 {
            notes.push(format!(
                "{id}: {failed_h} harness run(s) and {failed_i} in-process trial(s) failed, {failed_b} bare run(s) printed no result"
            ));
        }
        let d: Vec<f64> = h
            .iter()
            .zip(&b)
            .map(|(x, y)| ms(x.wall) - ms(y.wall))
            .collect();
        let bw: Vec<f64> = b.iter().map(|x| ms(x.wall)).collect();
        let bm = median(bw.clone());
        let hm = median(h.iter().map(|x| ms(x.wall)).collect());
        let dm = median(d.clone());
        let om = median(own.iter().map(|x| ms(x.cpu)).collect());
        let im = median(own.iter().map(|x| ms(x.wall)).collect());
        sum_i += own.iter().map(|x| ms(x.wall)).sum::<f64>();
        sum_b += bw.iter().sum::<f64>();
        sum_h += h.iter().map(|x| ms(x.wall)).sum::<f64>();
        sum_d.push(dm / bm);
        sum_d_all.extend(bw.iter().map(|x| x / bm - 1.0));
        own_share.push(om / bm);
        n_ok += 1;
        let _ = writeln!(
            md,
            "| {id} | {bm:.0} | {:.0}..{:.0} | {hm:.0} | {dm:+.0} ({:+.0}..{:+.0}) | {:+.1} % {} | {im:.0} | {om:.1} ({:.2} %) |",
            min(&bw),
            max(&bw),
            min(&d),
            max(&d),
            100.0 * dm / bm,
            mark(dm / bm <= 0.02),
            100.0 * om / bm,
        );
    }
    let e: Vec<f64> = empty.iter().map(|x| ms(x.wall)).collect();
    let fixed = median(e.clone());
    if n_ok > 0 {
        let total = (sum_h - sum_b) / sum_b;
        let _ = writeln!(
            md,
            "| **all {n_ok}** (one pass, mean) | {:.0} | | {:.0} | {:+.0} | **{:+.1} %** {} | {:.0} ({:+.1} %) | median {:.2} % |",
            sum_b / opts.reps as f64,
            sum_h / opts.reps as f64,
            (sum_h - sum_b) / opts.reps as f64,
            100.0 * total,
            mark(total <= 0.02),
            sum_i / opts.reps as f64,
            100.0 * (sum_i - sum_b) / sum_b,
            100.0 * median(own_share.clone()),
        );
        let mean_bare = sum_b / opts.reps as f64 / n_ok as f64;
        let own = median(own_share) * mean_bare;
        let _ = writeln!(
            md,
            "\nThe CLI's own run time varies by ±{:.0} % between identical runs, so single-scenario differences of a few % are noise at {} repetitions (median per-scenario difference: {:+.1} %). Measured exactly instead, the harness costs {own:.1} ms CPU per trial (in-process around `runner::run`: sandbox, stub, reading, matching; the CLI excluded) plus a fixed {fixed:.1} ms per `streamcheck run` invocation (a run whose filter takes nothing: process start, parsing all {} scenario files, resolving the target, writing the reports; {:.1} ms CPU). Counted as if none of it overlapped the CLI, that is {:.1} % of a mean bare run ({mean_bare:.0} ms) for a one-scenario invocation {}, and {:.2} % per trial in a whole-suite run, where the fixed cost is paid once {}. In-process trials took {:+.1} % longer than bare runs overall. Most of the fixed cost is parsing every scenario file before the filter applies: with only the selected file present it is {fixed_one:.1} ms, which would make a one-scenario invocation cost {:.1} %. Goal: <= 2 %.",
            spread_pct(&sum_d_all),
            opts.reps,
            100.0 * median(sum_d),
            all.len(),
            median(empty.iter().map(|x| ms(x.cpu)).collect()),
            100.0 * (own + fixed) / mean_bare,
            mark((own + fixed) / mean_bare <= 0.02),
            100.0 * (own + fixed / all.len() as f64) / mean_bare,
            mark((own + fixed / all.len() as f64) / mean_bare <= 0.02),
            100.0 * (sum_i - sum_b) / sum_b,
            100.0 * (own + fixed_one) / mean_bare,
        );
    }
    for n in notes {
        let _ = writeln!(md, "- {n}");
    }
    Ok(md)
}

/// Half the 10..90 % range of relative deviations, in %.
fn spread_pct(rel: &[f64]) -> f64 {
    let mut v = rel.to_vec();
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let q = |p: f64| v[((v.len() - 1) as f64 * p).round() as usize];
    100.0 * (q(0.9) - q(0.1)) / 2.0
}

/// The trial through `runner::run` in this process: the CPU this process spent on it
/// (sandbox, stub, reading, matching: the harness's own work), the CLI excluded.
fn in_process(rt: &tokio::runtime::Runtime, s: &Scenario, target: &Target) -> Sample {
    let cpu = self_cpu();
    let t = Instant::now();
    let trial = rt.block_on(crate::runner::run(
        s,
        target,
        &crate::runner::RunOptions::default(),
    ));
    Sample {
        wall: t.elapsed(),
        cpu: self_cpu().saturating_sub(cpu),
        ok: trial.status == crate::runner::Status::Passed,
    }
}

/// Why a scenario cannot be replayed by the bare driver (which writes stdin in one go).
fn not_bare_runnable(s: &Scenario, target: &Target) -> Option<String> {
    let expect = s.file.expect.get(target.dialect.expect_key())?;
    if let Some(why) = target.unmet(s, expect) {
        return Some(format!("skipped on {}: {why}", target.name));
    }
    let paused = s
        .stdin(expect)
        .into_iter()
        .flatten()
        .any(|l| matches!(l, StdinLine::AfterResults { .. }));
    if paused || s.file.close_stdin != CloseStdin::Immediately {
        return Some("its stdin waits for results".into());
    }
    if s.file.signal.is_some() {
        return Some("it signals the CLI".into());
    }
    None
}

/// One `streamcheck run --jobs 1 ARGS` process, timed from spawn to reaping.
fn harness_run(exe: &Path, root: &Path, args: &[&str], dir: &Path) -> Result<Sample, String> {
    let cpu = children_cpu();
    let t = Instant::now();
    let status = Command::new(exe)
        .arg("--root")
        .arg(root)
        .args(["run", "--jobs", "1", "--report-dir"])
        .arg(dir)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|e| format!("cannot start {}: {e}", exe.display()))?;
    Ok(Sample {
        wall: t.elapsed(),
        cpu: children_cpu().saturating_sub(cpu),
        ok: status.success(),
    })
}

/// The scenario's CLI invocation without the harness: a fresh sandbox and a listening
/// stub are made first, then the clock runs from spawn until the CLI exited and its
/// stdout and stderr closed. `ok` means it printed a result (or, for text, anything).
fn bare_run(rt: &tokio::runtime::Runtime, s: &Scenario, target: &Target) -> Result<Sample, String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let expect = s
        .file
        .expect
        .get(target.dialect.expect_key())
        .ok_or("no expectation for the target")?;
    let dir = tempfile::Builder::new()
        .prefix("streamcheck-")
        .tempdir()
        .map_err(|e| e.to_string())?;
    let base = dir.path().canonicalize().map_err(|e| e.to_string())?;
    let (workspace, home, tmp) = (base.join("work"), base.join("home"), base.join("tmp"));
    for d in [&workspace, &home, &tmp] {
        std::fs::create_dir_all(d).map_err(|e| e.to_string())?;
    }
    let files = s.file.files.iter().map(|(n, c)| (&workspace, n, c));
    let home_files = s.file.home_files.iter().map(|(n, c)| (&home, n, c));
    for (dir, name, content) in files.chain(home_files) {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
        }
        std::fs::write(&path, content.bytes()).map_err(|e| e.to_string())?;
    }
    let vars = Vars {
        workspace: workspace.display().to_string(),
        home: home.display().to_string(),
    };
    let mut script = substitute_paths(&s.file.stub, &vars);
    let title = stub_api::BuiltinRule::ClaudeCodeSessionTitle;
    if target.dialect == Dialect::ClaudeCode && !script.builtin_rules.contains(&title) {
        script.builtin_rules.push(title);
    }
    let stdin: Vec<u8> = s
        .stdin(expect)
        .into_iter()
        .flatten()
        .filter_map(StdinLine::to_line)
        .flat_map(|l| (l + "\n").into_bytes())
        .collect();
    let has_stdin = s.stdin(expect).is_some();
    rt.block_on(async {
        let server = stub_api::StubServer::start(script)
            .await
            .map_err(|e| format!("cannot start the stub: {e}"))?;
        let base_url = server.base_url();
        let inv = target.invocation(
            s,
            expect,
            &Sandbox {
                workspace: &workspace,
                home: &home,
                tmp: &tmp,
                base_url: &base_url,
            },
        );
        let mut cmd = tokio::process::Command::new(&inv.program);
        cmd.args(&inv.args)
            .env_clear()
            .envs(inv.env.iter().map(|(k, v)| (k, v)))
            .current_dir(&workspace)
            .stdin(if has_stdin {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        let cpu = children_cpu();
        let t = Instant::now();
        let mut child = cmd.spawn().map_err(|e| e.to_string())?;
        let pgid = child.id();
        if let Some(mut pipe) = child.stdin.take() {
            tokio::spawn(async move {
                let _ = pipe.write_all(&stdin).await;
            });
        }
        let mut out = child.stdout.take().ok_or("stdout")?;
        let mut err = child.stderr.take().ok_or("stderr")?;
        let run = async {
            let (mut o, mut e) = (Vec::new(), Vec::new());
            let _ = tokio::join!(out.read_to_end(&mut o), err.read_to_end(&mut e));
            let _ = child.wait().await;
            o
        };
        let stdout = tokio::time::timeout(Duration::from_secs(120), run).await;
        let wall = t.elapsed();
        if let Some(pgid) = pgid {
            // SAFETY: kill(2) with a negative pid signals the process group we created.
            unsafe {
                libc::kill(-(pgid as i32), libc::SIGKILL);
            }
        }
        server.shutdown().await;
        let stdout = stdout.map_err(|_| "the bare run did not end within 120 s".to_string())?;
        let ok = match s.file.output_format {
            scenario::OutputFormat::Text => !stdout.is_empty(),
            _ => String::from_utf8_lossy(&stdout).contains("\"type\":\"result\""),
        };
        Ok(Sample {
            wall,
            cpu: children_cpu().saturating_sub(cpu),
            ok,
        })
    })
}

/// The stub script with `$WORKSPACE` and `$HOME` replaced in its strings, as the runner does.
fn substitute_paths(script: &stub_api::Script, vars: &Vars) -> stub_api::Script {
    fn walk(v: &mut Value, vars: &Vars) {
        match v {
            Value::String(s) if s.contains('$') => {
                *s = s
                    .replace("$WORKSPACE", &vars.workspace)
                    .replace("$HOME", &vars.home)
            }
            Value::Array(a) => a.iter_mut().for_each(|x| walk(x, vars)),
            Value::Object(m) => m.values_mut().for_each(|x| walk(x, vars)),
            _ => {}
        }
    }
    let Ok(mut value) = serde_json::to_value(script) else {
        return script.clone();
    };
    walk(&mut value, vars);
    serde_json::from_value(value).unwrap_or_else(|_| script.clone())
}

// ---------------------------------------------------------------- scaling

fn scaling(project: &Project, exe: &Path, opts: &Options) -> Result<String, String> {
    let cores = cores();
    let tmp = tempfile::Builder::new()
        .prefix("streamcheck-bench-")
        .tempdir()
        .map_err(|e| e.to_string())?;
    let (all, _) = scenario::load_all(&project.scenarios_dir());
    let target = target::resolve(&TargetSpec::parse("claude-code")?, project, false)
        .map_err(|e| e.to_string())?;
    let (subset_args, subset) = match opts.subset {
        Some(n) => {
            let (ids, runnable) = spread_subset(&all, &target, n);
            let args = ids
                .iter()
                .flat_map(|id| ["-f".to_string(), id.clone()])
                .collect();
            let text = format!(
                "{} scenarios spread evenly by id over the {runnable} of the suite's {} that run on {} {} ({})",
                ids.len(),
                all.len(),
                target.name,
                target.version,
                ids.join(", ")
            );
            (args, text)
        }
        None => (
            Vec::new(),
            format!("the whole suite ({} scenarios)", all.len()),
        ),
    };
    let mut md = String::new();
    let _ = writeln!(
        md,
        "### Suite scaling\n\n`streamcheck run --jobs N{}`: {subset}; on {cores} cores. CPU = user + system time of the whole process tree (getrusage of reaped children); busy = CPU / (wall × cores), beside what other processes on the machine used meanwhile.\n",
        if subset_args.is_empty() { "" } else { " -f ID ..." }
    );
    md.push_str("| jobs | wall (s) | speed-up | CPU (s) | CPU per trial (s) | wall per trial (s) | busy: suite + others | passed / failed / skipped |\n|---:|---:|---:|---:|---:|---:|---:|---|\n");
    let mut base: Option<f64> = None;
    let mut cpu_per_wall_1 = None;
    for &jobs in &opts.jobs {
        eprintln!("bench: suite subset at --jobs {jobs} ...");
        let dir = tmp.path().join(format!("jobs-{jobs}"));
        let meter = Meter::start();
        let cpu = children_cpu();
        let t = Instant::now();
        let out = Command::new(exe)
            .arg("--root")
            .arg(&project.root)
            .args(["run", "--jobs", &jobs.to_string(), "--report-dir"])
            .arg(&dir)
            .args(&subset_args)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .map_err(|e| e.to_string())?;
        let wall = t.elapsed().as_secs_f64();
        let cpu = children_cpu().saturating_sub(cpu).as_secs_f64();
        let text = String::from_utf8_lossy(&out.stdout);
        let (passed, failed, skipped) = counts(&text);
        let trials = (passed + failed).max(1) as f64;
        let b = *base.get_or_insert(wall);
        if jobs == 1 {
            cpu_per_wall_1 = Some(cpu / wall);
        }
        let _ = writeln!(
            md,
            "| {jobs} | {wall:.1} | {:.2}x | {cpu:.1} | {:.2} | {:.2} | {:.0} % + {:.0} % | {passed} / {failed} / {skipped} |",
            b / wall,
            cpu / trials,
            wall / trials,
            100.0 * cpu / (wall * cores as f64),
            100.0 * meter.others_busy(),
        );
    }
    if let Some(r) = cpu_per_wall_1 {
        let _ = writeln!(
            md,
            "\nAt --jobs 1 the tree keeps {r:.2} cores busy: the CLI alone saturates this {cores}-core machine at about {:.1} trials in parallel, so the speed-up cannot exceed {:.1}x here whatever --jobs says.",
            cores as f64 / r,
            cores as f64 / r,
        );
    }
    Ok(md)
}

/// `n` scenarios that run on `target` (not skipped), spread evenly over the suite by id,
/// each named by an id that `-f` takes alone (not part of another id).
fn spread_subset(all: &[Scenario], target: &Target, n: usize) -> (Vec<String>, usize) {
    let runnable: Vec<&str> = all
        .iter()
        .filter(|s| {
            s.file
                .expect
                .get(target.dialect.expect_key())
                .is_some_and(|e| target.unmet(s, e).is_none())
        })
        .map(|s| s.id.as_str())
        .filter(|id| all.iter().filter(|o| o.id.contains(id)).count() == 1)
        .collect();
    let step = (runnable.len() as f64 / n.max(1) as f64).max(1.0);
    let ids = (0..n.min(runnable.len()))
        .map(|i| runnable[(i as f64 * step) as usize].to_string())
        .collect();
    (ids, runnable.len())
}

/// `N passed, N failed, N skipped` from `streamcheck run`'s last line.
fn counts(stdout: &str) -> (usize, usize, usize) {
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.contains(" passed, "))
        .unwrap_or("");
    let num = |word: &str| {
        line.split(", ")
            .find_map(|p| p.strip_suffix(word))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or(0)
    };
    (num(" passed"), num(" failed"), num(" skipped"))
}

// ---------------------------------------------------------------- matcher

/// A synthetic `--include-partial-messages` run of about `n` frames, with what a scenario
/// would expect of it: exact mode, an ignore list, an any_order group, captures.
pub struct Synthetic {
    pub frames: Vec<Frame>,
    pub expected: Vec<Expected>,
    pub sources: Vec<Value>,
    pub ignore: Vec<Pattern>,
}

pub fn synthetic(n: usize) -> Synthetic {
    const SID: &str = "7f0c9a3e-2b1d-4c55-9e41-0d6c2a7b8e90";
    let mut values = vec![json!({
        "type": "system", "subtype": "init", "session_id": SID, "cwd": "/tmp/w",
        "model": "claude-opus-4-8", "permissionMode": "default",
        "tools": ["Task", "Bash", "Edit", "Read", "Write", "WebFetch"],
        "uuid": "00000000-0000-4000-8000-000000000000"
    })];
    let mut sources = vec![
        json!({"type": "system", "subtype": "init", "session_id": {"$capture": "sid"}, "model": "$string", "tools": {"$contains": ["Bash"]}}),
    ];
    let delta_pattern = json!({"type": "stream_event", "session_id": {"$ref": "sid"}, "event": {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "$string"}}});
    let tail = 2 + 6; // any_order group, assistant, result
    let mut i = 0;
    while values.len() + tail < n.max(tail + 2) {
        if i % 100 == 99 {
            values.push(json!({"type": "rate_limit_event", "rate_limit_info": {"status": "allowed"}, "session_id": SID}));
        } else {
            values.push(json!({
                "type": "stream_event", "session_id": SID,
                "uuid": format!("00000000-0000-4000-8000-{i:012}"),
                "event": {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": format!("word{i} ")}}
            }));
            sources.push(delta_pattern.clone());
        }
        i += 1;
    }
    // Three parallel tool calls whose results arrive out of order.
    let tu = |k: usize| json!({"type": "assistant", "session_id": SID, "message": {"role": "assistant", "content": [{"type": "tool_use", "id": format!("toolu_{k}"), "name": "Bash", "input": {"command": format!("echo {k}")}}]}});
    let tr = |k: usize| json!({"type": "user", "session_id": SID, "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("toolu_{k}"), "content": format!("{k}")}]}});
    for v in [tu(0), tu(1), tr(1), tu(2), tr(0), tr(2)] {
        values.push(v);
    }
    let run_of = |k: usize| {
        vec![
            json!({"type": "assistant", "message": {"content": [{"type": "tool_use", "id": format!("toolu_{k}"), "name": "Bash"}]}}),
            json!({"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": format!("toolu_{k}")}]}}),
        ]
    };
    let group: Vec<Vec<Value>> = (0..3).map(run_of).collect();
    sources.push(json!({"any_order": group}));
    values.push(json!({"type": "assistant", "session_id": SID, "message": {"role": "assistant", "content": [{"type": "text", "text": "done"}]}}));
    sources.push(
        json!({"type": "assistant", "message": {"content": [{"type": "text", "text": "done"}]}}),
    );
    values.push(json!({"type": "result", "subtype": "success", "is_error": false, "result": "done", "session_id": SID, "num_turns": 2}));
    sources.push(json!({"type": "result", "subtype": "success", "is_error": false, "result": "$string", "session_id": {"$ref": "sid"}}));

    let expected = sources
        .iter()
        .map(|s| match s.get("any_order").and_then(Value::as_array) {
            Some(runs) => Expected::AnyOrder(
                runs.iter()
                    .map(|r| {
                        r.as_array()
                            .into_iter()
                            .flatten()
                            .map(|p| Pattern::compile(p).expect("a valid pattern"))
                            .collect()
                    })
                    .collect(),
            ),
            None => Expected::Frame(Pattern::compile(s).expect("a valid pattern")),
        })
        .collect();
    let ignore = [
        json!({"type": "rate_limit_event"}),
        json!({"type": "system", "subtype": "status"}),
    ]
    .iter()
    .map(|p| Pattern::compile(p).expect("a valid pattern"))
    .collect();
    Synthetic {
        frames: frames(values),
        expected,
        sources,
        ignore,
    }
}

fn frames(values: Vec<Value>) -> Vec<Frame> {
    values
        .into_iter()
        .enumerate()
        .map(|(i, value)| Frame {
            index: i,
            line: i + 1,
            at_ms: i as u64,
            value,
        })
        .collect()
}

/// Median wall time of `f` over up to `reps` calls (fewer once 2 s went by: at least one).
fn time<T>(reps: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut times = Vec::new();
    let started = Instant::now();
    let mut last = None;
    while times.len() < reps.max(1)
        && (times.is_empty() || started.elapsed() < Duration::from_secs(2))
    {
        let t = Instant::now();
        let out = std::hint::black_box(f());
        times.push(t.elapsed());
        last = Some(out);
    }
    times.sort();
    (times[times.len() / 2], last.expect("ran at least once"))
}

fn matcher_part(opts: &Options) -> String {
    let vars = Vars::default();
    let mut md = String::new();
    let _ = writeln!(
        md,
        "### Matcher and differ\n\nSynthetic partial-message outputs (stream_event deltas, a rate_limit_event every 100 frames under `ignore`, a 3-run any_order group of parallel tool calls, captures): `match_frames` in exact mode (passing), and `frame_diff` of a run with one wrong frame in the middle, against the full expectation (aligned) and against a short one (8 entries, as when a scenario ignores the deltas). Median of several calls.\n"
    );
    md.push_str("| frames | match | µs/frame | diff aligned | diff vs 8 entries | µs/frame (aligned) |\n|---:|---:|---:|---:|---:|---:|\n");
    let mut per_frame = Vec::new();
    for &n in &opts.sizes {
        eprintln!("bench: matcher on {n} frames ...");
        let s = synthetic(n);
        let reps = (200_000 / n.max(1)).clamp(3, 50);
        let rules = FrameRules {
            expected: &s.expected,
            ignore: &s.ignore,
            absent: &[],
            mode: Mode::Exact,
        };
        let (t_match, divs) = time(reps, || {
            matcher::match_frames(&rules, &s.frames, &vars, &mut Captures::new())
        });
        let mut actual: Vec<Value> = s.frames.iter().map(|f| f.value.clone()).collect();
        let mid = (actual.len() / 2..actual.len())
            .find(|&i| actual[i]["type"] == "stream_event")
            .unwrap_or(0);
        actual[mid]["event"]["delta"] = json!({"type": "input_json_delta", "partial_json": "{"});
        let (t_diff, diff) = time(reps.min(10), || {
            report::frame_diff(&s.sources, &actual, &vars)
        });
        let short: Vec<Value> = s
            .sources
            .iter()
            .filter(|v| v.get("type") != Some(&json!("stream_event")))
            .cloned()
            .collect();
        let (t_short, _) = time(reps.min(10), || report::frame_diff(&short, &actual, &vars));
        let frames = s.frames.len();
        let ok = divs.is_empty() && diff.contains("input_json_delta");
        per_frame.push((frames, t_match, t_diff.max(t_short)));
        let _ = writeln!(
            md,
            "| {frames} | {} | {:.2} | {} | {} | {:.2} |{}",
            fmt_d(t_match),
            t_match.as_secs_f64() * 1e6 / frames as f64,
            fmt_d(t_diff),
            fmt_d(t_short),
            t_diff.as_secs_f64() * 1e6 / frames as f64,
            if ok { "" } else { " (unexpected result!)" }
        );
    }
    if let (Some(first), Some(last)) = (per_frame.first(), per_frame.last()) {
        let growth = last.0 as f64 / first.0 as f64;
        let _ = writeln!(
            md,
            "\n{}x the frames: match {:.0}x the time, diff {:.0}x (linear = {:.0}x). Goal: < 1 s at 100k frames {}.",
            growth,
            last.1.as_secs_f64() / first.1.as_secs_f64(),
            last.2.as_secs_f64() / first.2.as_secs_f64(),
            growth,
            mark(last.1 + last.2 < Duration::from_secs(1)),
        );
    }

    md.push_str("\nPathological any_order groups (each must end in an order divergence, not run away):\n\n| group | frames | time | result |\n|---|---:|---:|---|\n");
    let x = || Pattern::compile(&json!({"t": "x"})).expect("pattern");
    let y = || Pattern::compile(&json!({"t": "y"})).expect("pattern");
    for k in [10, 20, 40, 80] {
        // k-1 interchangeable two-frame runs and one needing `y` then `x`; the only `y`
        // comes last, so no interleaving exists and the state space is exponential.
        let mut runs: Vec<Vec<Pattern>> = (1..k).map(|_| vec![x(), x()]).collect();
        runs.push(vec![y(), x()]);
        let mut vs: Vec<Value> = (0..2 * k - 1).map(|_| json!({"t": "x"})).collect();
        vs.push(json!({"t": "y"}));
        md.push_str(&pathological(
            &format!("{k} two-frame runs, no solution"),
            vec![Expected::AnyOrder(runs)],
            frames(vs),
        ));
    }
    for k in [100, 300, 1000] {
        // k single-frame runs: bipartite matching; all but one pattern accept every
        // frame but the last, which only the odd one accepts: long augmenting paths.
        let mut runs: Vec<Vec<Pattern>> = (1..k).map(|_| vec![x()]).collect();
        runs.push(vec![Pattern::compile(&json!("$any")).expect("pattern")]);
        let mut vs: Vec<Value> = (0..k - 1).map(|_| json!({"t": "x"})).collect();
        vs.push(json!({"t": "y"}));
        md.push_str(&pathological(
            &format!("{k} single-frame runs, solvable"),
            vec![Expected::AnyOrder(runs)],
            frames(vs),
        ));
    }
    md
}

fn pathological(label: &str, expected: Vec<Expected>, frames: Vec<Frame>) -> String {
    let rules = FrameRules {
        expected: &expected,
        ignore: &[],
        absent: &[],
        mode: Mode::Exact,
    };
    let (t, divs) = time(1, || {
        matcher::match_frames(&rules, &frames, &Vars::default(), &mut Captures::new())
    });
    let result = match divs.first() {
        None => "passes".to_string(),
        Some(d) if d.kind == Kind::Order => "order divergence".to_string(),
        Some(d) => d.kind.as_str().to_string(),
    };
    format!(
        "| {label} | {} | {} {} | {result} |\n",
        frames.len(),
        fmt_d(t),
        mark(t < Duration::from_secs(1))
    )
}

// ---------------------------------------------------------------- stub

struct Server {
    name: String,
    child: Child,
    addr: SocketAddr,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `cmd` with stdout piped, waits for a line holding `http://127.0.0.1:PORT`, and
/// keeps draining its output.
fn start_server(name: &str, mut cmd: Command, within: Duration) -> Result<Server, String> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {name}: {e}"))?;
    let (tx, rx) = std::sync::mpsc::channel();
    for pipe in [
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn std::io::Read + Send>),
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn std::io::Read + Send>),
    ]
    .into_iter()
    .flatten()
    {
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
    }
    let mut server = Server {
        name: name.into(),
        child,
        addr: SocketAddr::from(([127, 0, 0, 1], 0)),
    };
    let deadline = Instant::now() + within;
    let mut said = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) => {
                if let Some(addr) = line
                    .split("http://")
                    .nth(1)
                    .and_then(|r| r.split(|c: char| c.is_whitespace() || c == '/').next())
                    .and_then(|a| a.parse().ok())
                {
                    server.addr = addr;
                    return Ok(server);
                }
                said.push(line);
            }
            Err(_) => {
                return Err(format!(
                    "{name} printed no address within {} s{}",
                    within.as_secs(),
                    if said.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", said.join(" / "))
                    }
                ))
            }
        }
    }
}

struct LoadRow {
    server: String,
    body: &'static str,
    report: loadgen::LoadReport,
    cpu_us: f64,
    client_us: f64,
    peak_kb: u64,
}

fn load_server(s: &Server, body: &'static str, request: &[u8], load: &Load) -> LoadRow {
    let pid = s.child.id();
    let cpu = loadgen::cpu_ticks(pid);
    let report = loadgen::run_blocking(s.addr, request, load);
    let cpu_us = (loadgen::cpu_ticks(pid) - cpu) as f64 * 1e6
        / clock_ticks()
        / report.completed.max(1) as f64;
    let client_us =
        report.client_cpu_ticks as f64 * 1e6 / clock_ticks() / report.completed.max(1) as f64;
    LoadRow {
        server: s.name.clone(),
        body,
        report,
        cpu_us,
        client_us,
        peak_kb: loadgen::status_kb(pid, "VmHWM:"),
    }
}

fn stub_part(exe: &Path, opts: &Options) -> String {
    let mut md = String::new();
    let small = loadgen::messages_request(loadgen::SMALL_BODY);
    let large = loadgen::observed_body(&opts.observed).map(|b| loadgen::messages_request(&b));
    let _ = writeln!(
        md,
        "### Stub against aimock\n\nBoth serve the same reply (`{}`: one text block in one delta) on loopback, driven by the same client (`stub_api::loadgen`: {} keep-alive connections on one thread, one request in flight each), each load bounded to N requests or {} s. Bodies: a {}-byte streaming request, and the first real Claude Code request body ({}). Peak RSS = VmHWM after the load. Server CPU from /proc.\n",
        loadgen::REPLY_TEXT,
        opts.connections,
        opts.load_time_limit.as_secs(),
        loadgen::SMALL_BODY.len(),
        match &large {
            Ok(r) => format!("{} bytes", r.len()),
            Err(e) => format!("unavailable: {e}"),
        }
    );
    let tmp = match tempfile::Builder::new()
        .prefix("streamcheck-bench-")
        .tempdir()
    {
        Ok(t) => t,
        Err(e) => return format!("{md}cannot make a temp dir: {e}\n"),
    };
    let mut notes = Vec::new();
    let mut servers = Vec::new();

    // stub-api: the release binary beside this one, as `cargo build --release` leaves it.
    let stub_bin = std::env::var_os("STUB_API_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| exe.with_file_name("stub-api"));
    let script = tmp.path().join("script.yaml");
    let stub = if !stub_bin.exists() {
        Err(format!(
            "{} not found: build it with `cargo build --release -p stub-api` (or set STUB_API_BIN)",
            stub_bin.display()
        ))
    } else {
        std::fs::write(&script, loadgen::REPLY_SCRIPT)
            .map_err(|e| e.to_string())
            .and_then(|()| {
                let mut cmd = Command::new(&stub_bin);
                // --quiet: no line per request, as aimock prints none at its default level.
                cmd.args(["serve", "--quiet", "--script"]).arg(&script);
                start_server("stub-api", cmd, Duration::from_secs(10))
            })
    };
    match stub {
        Ok(s) => servers.push(s),
        Err(e) => notes.push(format!("stub-api: {e}")),
    }
    eprintln!(
        "bench: installing {AIMOCK_PACKAGE}@{} into a temp dir ...",
        opts.aimock_version
    );
    match start_aimock(tmp.path(), &opts.aimock_version) {
        Ok(s) => servers.push(s),
        Err(e) => notes.push(format!("aimock could not be compared: {e}")),
    }

    let mut rows = Vec::new();
    let mut idle = Vec::new();
    for s in &servers {
        idle.push((s.name.clone(), loadgen::status_kb(s.child.id(), "VmRSS:")));
        match loadgen::fetch_blocking(s.addr, &small) {
            Ok((status, body)) => {
                let body = String::from_utf8_lossy(&body);
                let deltas = body
                    .lines()
                    .filter(|l| l.trim() == "event: content_block_delta")
                    .count();
                if !status.starts_with("http/1.1 200") || !body.contains(loadgen::REPLY_TEXT) {
                    notes.push(format!("{}: answered {status} without the reply", s.name));
                    continue;
                }
                if deltas != 1 {
                    notes.push(format!("{}: the reply came in {deltas} deltas", s.name));
                }
            }
            Err(e) => {
                notes.push(format!("{}: {e}", s.name));
                continue;
            }
        }
        eprintln!("bench: loading {} ...", s.name);
        let warm = Load {
            requests: 2_000,
            connections: opts.connections,
            time_limit: Duration::from_secs(5),
        };
        let _ = loadgen::run_blocking(s.addr, &small, &warm);
        let load = |n| Load {
            requests: n,
            connections: opts.connections,
            time_limit: opts.load_time_limit,
        };
        rows.push(load_server(s, "small", &small, &load(opts.small_requests)));
        if let Ok(large) = &large {
            rows.push(load_server(s, "87 KB", large, &load(opts.large_requests)));
        }
    }

    md.push_str("| server | body | requests | req/s | p50 (µs) | p99 (µs) | server CPU (µs/req) | client CPU (µs/req) | idle RSS (MB) | peak RSS (MB) |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for r in &rows {
        let idle_kb = idle
            .iter()
            .find(|(n, _)| *n == r.server)
            .map_or(0, |(_, kb)| *kb);
        let _ = writeln!(
            md,
            "| {} | {} | {}{} | {:.0} | {} | {} | {:.1} | {:.1} | {:.1} | {:.1} |",
            r.server,
            r.body,
            r.report.completed,
            match (&r.report.error, r.report.stopped_at_time_limit) {
                (Some(e), _) => format!(" (stopped: {e})"),
                (None, true) => " (time limit)".into(),
                _ => String::new(),
            },
            r.report.req_per_sec(),
            r.report.percentile(0.5),
            r.report.percentile(0.99),
            r.cpu_us,
            r.client_us,
            idle_kb as f64 / 1024.0,
            r.peak_kb as f64 / 1024.0,
        );
    }
    let find = |server: &str, body: &str| {
        rows.iter()
            .find(|r| r.server.starts_with(server) && r.body == body)
    };
    let mut ratios = Vec::new();
    for (body, goal) in [("small", 10.0), ("87 KB", 5.0)] {
        if let (Some(s), Some(a)) = (find("stub-api", body), find("aimock", body)) {
            let x = s.report.req_per_sec() / a.report.req_per_sec().max(1e-9);
            let p = a.report.percentile(0.99) as f64 / s.report.percentile(0.99).max(1) as f64;
            ratios.push(format!(
                "{body} bodies: {x:.1}x aimock's req/s {} (goal >= {goal:.0}x), p99 {p:.1}x lower",
                mark(x >= goal)
            ));
        }
    }
    let peak = |server: &str| {
        rows.iter()
            .filter(|r| r.server.starts_with(server))
            .map(|r| r.peak_kb)
            .max()
    };
    if let (Some(s), Some(a)) = (peak("stub-api"), peak("aimock")) {
        let f = s as f64 / a.max(1) as f64;
        ratios.push(format!(
            "peak RSS {:.1} MB vs {:.1} MB = 1/{:.1} of aimock's {} (goal <= 1/5)",
            s as f64 / 1024.0,
            a as f64 / 1024.0,
            1.0 / f.max(1e-9),
            mark(f <= 0.2)
        ));
    }
    if !ratios.is_empty() {
        let _ = writeln!(md, "\nstub-api: {}.", ratios.join("; "));
    }
    for n in notes {
        let _ = writeln!(md, "\n- {n}");
    }
    drop(servers);
    md
}

/// Installs aimock with npm into `dir` and starts its server on a free loopback port,
/// answering every request with the bench's reply in one delta.
fn start_aimock(dir: &Path, version: &str) -> Result<Server, String> {
    let prefix = dir.join("aimock");
    std::fs::create_dir_all(&prefix).map_err(|e| e.to_string())?;
    let out = Command::new("npm")
        .args([
            "install",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            "--prefix",
        ])
        .arg(&prefix)
        .arg(format!("{AIMOCK_PACKAGE}@{version}"))
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run npm: {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(format!(
            "`npm install {AIMOCK_PACKAGE}@{version}` failed ({}): {}",
            out.status,
            err.lines().last().unwrap_or("")
        ));
    }
    let pkg = prefix.join("node_modules").join(AIMOCK_PACKAGE);
    let manifest: Value = std::fs::read_to_string(pkg.join("package.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .ok_or("aimock's package.json is unreadable")?;
    // The `llmock` bin is the fixture server (the `aimock` one takes a config file).
    let bin = manifest["bin"]["llmock"]
        .as_str()
        .ok_or("aimock's package.json names no `llmock` bin")?;
    let installed = manifest["version"].as_str().unwrap_or("?").to_string();
    let fixtures = dir.join("aimock-fixtures.json");
    let fixture =
        json!({"fixtures": [{"match": {}, "response": {"content": loadgen::REPLY_TEXT}}]});
    std::fs::write(&fixtures, fixture.to_string()).map_err(|e| e.to_string())?;
    let mut cmd = Command::new("node");
    cmd.arg(pkg.join(bin))
        .args(["--port", "0", "--host", "127.0.0.1", "--fixtures"])
        .arg(&fixtures)
        // One delta, as the stub sends it (aimock's default splits every 20 characters).
        .args(["--chunk-size", "65536"]);
    start_server(&format!("aimock {installed}"), cmd, Duration::from_secs(30))
}

// ---------------------------------------------------------------- machine and helpers

/// CPU time of this process and of its reaped children, and of the whole machine.
struct Meter {
    at: Instant,
    ours: Duration,
    machine_busy: f64,
}

impl Meter {
    fn start() -> Meter {
        Meter {
            at: Instant::now(),
            ours: self_cpu() + children_cpu(),
            machine_busy: machine_busy_secs(),
        }
    }

    fn elapsed(&self) -> Duration {
        self.at.elapsed()
    }

    /// Share of the machine (0..1) busy with processes other than this one and its children.
    fn others_busy(&self) -> f64 {
        let ours = (self_cpu() + children_cpu()).saturating_sub(self.ours);
        let all = machine_busy_secs() - self.machine_busy;
        ((all - ours.as_secs_f64()) / (self.elapsed().as_secs_f64() * cores() as f64)).max(0.0)
    }
}

fn rusage(who: libc::c_int) -> Duration {
    // SAFETY: getrusage fills the struct we own.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(who, &mut ru);
        ru
    };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

fn self_cpu() -> Duration {
    rusage(libc::RUSAGE_SELF)
}

/// CPU of every child (and their descendants) reaped so far.
fn children_cpu() -> Duration {
    rusage(libc::RUSAGE_CHILDREN)
}

fn clock_ticks() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if hz > 0 {
        hz as f64
    } else {
        100.0
    }
}

/// Busy CPU seconds of the whole machine since boot (all but idle and iowait).
fn machine_busy_secs() -> f64 {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let Some(line) = stat.lines().next() else {
        return 0.0;
    };
    let f: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|v| v.parse().ok())
        .collect();
    // user nice system idle iowait irq softirq steal
    let busy: u64 = [0, 1, 2, 5, 6, 7].iter().filter_map(|&i| f.get(i)).sum();
    busy as f64 / clock_ticks()
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

fn machine_facts(before: &str, after: &str, took: Duration, others: f64) -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .map(|m| m.trim_start_matches([' ', '\t', ':']).to_string())
        .unwrap_or_else(|| "unknown CPU".into());
    let mem = std::fs::read_to_string("/proc/meminfo")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .map_or("?".into(), |kb| {
            format!("{:.0} GB", kb as f64 / 1024.0 / 1024.0)
        });
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let node = Command::new("node")
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|_| "none".into());
    format!(
        "Machine: {} cores ({model}), {mem} RAM, Linux {}, node {node}; {} build. Load average {before} before, {after} after; the bench took {:.0} s, during which other processes kept {:.0} % of the machine busy.\n",
        cores(),
        kernel.trim(),
        if cfg!(debug_assertions) {
            "DEBUG (numbers are not representative: use --release)"
        } else {
            "release"
        },
        took.as_secs_f64(),
        others * 100.0,
    )
}

fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn min(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::INFINITY, f64::min)
}

fn max(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::NEG_INFINITY, f64::max)
}

fn mark(ok: bool) -> &'static str {
    if ok {
        "✓"
    } else {
        "✗"
    }
}

fn fmt_d(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 1.0 {
        format!("{s:.2} s")
    } else if s >= 1e-3 {
        format!("{:.1} ms", s * 1e3)
    } else {
        format!("{:.0} µs", s * 1e6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synthetic_runs_pass_their_own_expectation() {
        for n in [20, 1_000] {
            let s = synthetic(n);
            assert_eq!(s.frames.len(), n);
            let rules = FrameRules {
                expected: &s.expected,
                ignore: &s.ignore,
                absent: &[],
                mode: Mode::Exact,
            };
            let d =
                matcher::match_frames(&rules, &s.frames, &Vars::default(), &mut Captures::new());
            assert!(d.is_empty(), "{}", d[0]);
        }
    }

    #[test]
    fn counts_line() {
        assert_eq!(
            counts("ok x\n\n19 passed, 1 failed, 2 skipped\n"),
            (19, 1, 2)
        );
        assert_eq!(counts(""), (0, 0, 0));
    }

    #[test]
    fn medians() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
    }

    #[test]
    fn parts() {
        assert_eq!(Part::parse("stub"), Ok(Part::Stub));
        assert!(Part::parse("all").is_err());
    }
}
