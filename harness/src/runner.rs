//! Runs one scenario against one target: its own stub, sandbox and process group.

use crate::divergence::{Divergence, Kind};
use crate::invariants::{self, Invariant};
use crate::matcher::{self, FrameRules};
use crate::output::{LineSplitter, Output};
use crate::pattern::{Captures, Vars};
use crate::scenario::{
    CloseStdin, FileExpect, OutputFormat, Scenario, SignalAt, StdinLine, TargetExpect,
};
use crate::target::{Dialect, Invocation, Sandbox, Target};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};
use stub_api::{Answer, JournalEntry, Script, StubServer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::watch;
use tokio::time::{sleep_until, Instant as TokioInstant};

#[derive(Debug, Clone)]
pub struct RunOptions {
    /// How long a CLI may keep running after its last expected result.
    pub grace: Duration,
    /// Per-trial timeout when the scenario sets none.
    pub timeout: Duration,
    /// Run a target the scenario has no expectation for, as written (an empty
    /// expectation), and run despite features the target lacks: for `compare`, which
    /// looks at what the CLI does, not at an expectation. An explicit `skip` still skips.
    pub without_expectation: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            grace: Duration::from_secs(3),
            timeout: Duration::from_secs(60),
            without_expectation: false,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", content = "reason", rename_all = "snake_case")]
pub enum Status {
    Passed,
    Failed,
    Skipped(String),
    /// Failed, as the target's known-divergence list says it does (the reason).
    Known(String),
}

/// How the process ended.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Exit {
    pub code: Option<i32>,
    pub signal: Option<i32>,
    /// Set when the harness killed it: `timeout` or `grace` (hung after its last result).
    pub killed: Option<String>,
}

/// stderr, capped at both ends so a 100 MB flood costs little.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Stderr {
    pub head: String,
    pub tail: String,
    pub total_bytes: u64,
}

impl Stderr {
    const HEAD: usize = 32 * 1024;
    const TAIL: usize = 32 * 1024;

    fn push(&mut self, chunk: &[u8], head: &mut Vec<u8>, tail: &mut Vec<u8>) {
        self.total_bytes += chunk.len() as u64;
        let room = Self::HEAD.saturating_sub(head.len());
        head.extend_from_slice(&chunk[..chunk.len().min(room)]);
        let rest = &chunk[chunk.len().min(room)..];
        if !rest.is_empty() {
            tail.extend_from_slice(rest);
            if tail.len() > 2 * Self::TAIL {
                tail.drain(..tail.len() - Self::TAIL);
            }
        }
    }

    /// The text kept, with a marker where the middle was dropped.
    pub fn text(&self) -> String {
        let kept = (self.head.len() + self.tail.len()) as u64;
        if kept >= self.total_bytes {
            format!("{}{}", self.head, self.tail)
        } else {
            format!(
                "{}\n[… {} bytes of stderr dropped …]\n{}",
                self.head,
                self.total_bytes - kept,
                self.tail
            )
        }
    }

    pub fn last_lines(&self, n: usize) -> Vec<String> {
        let text = self.text();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(n)..]
            .iter()
            .map(|s| s.to_string())
            .collect()
    }
}

/// Everything one trial produced.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Trial {
    pub scenario: String,
    pub scenario_path: String,
    pub description: String,
    pub target: String,
    pub target_version: String,
    #[serde(flatten)]
    pub status: Status,
    pub divergences: Vec<Divergence>,
    /// Things worth knowing that are not divergences (e.g. the CLI closed stdin early).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    pub duration_ms: u64,
    pub command_line: String,
    pub exit: Exit,
    #[serde(skip)]
    pub output: Output,
    #[serde(skip)]
    pub stderr: Stderr,
    #[serde(skip)]
    pub journal: Vec<JournalEntry>,
    /// The expected frames as written (for the report's diff).
    #[serde(skip)]
    pub expected_frames: Vec<serde_json::Value>,
    /// Paths to redact in reports.
    #[serde(skip)]
    pub vars: Vars,
}

impl Trial {
    fn new(scenario: &Scenario, target: &Target) -> Trial {
        Trial {
            scenario: scenario.id.clone(),
            scenario_path: scenario.display_path(),
            description: scenario.file.description.clone(),
            target: target.name.clone(),
            target_version: target.version.clone(),
            status: Status::Passed,
            divergences: Vec::new(),
            notes: Vec::new(),
            duration_ms: 0,
            command_line: String::new(),
            exit: Exit::default(),
            output: Output::default(),
            stderr: Stderr::default(),
            journal: Vec::new(),
            expected_frames: Vec::new(),
            vars: Vars::default(),
        }
    }

    pub fn skipped(scenario: &Scenario, target_name: &str, version: &str, reason: String) -> Trial {
        let mut t = Trial::new(
            scenario,
            &Target {
                name: target_name.to_string(),
                dialect: Dialect::ClaudeCode,
                program: Default::default(),
                version: version.to_string(),
                features: Default::default(),
                known: Default::default(),
                env: Default::default(),
            },
        );
        t.status = Status::Skipped(reason);
        t
    }
}

/// Runs `scenario` on `target`. Never panics on anything the CLI does.
pub async fn run(scenario: &Scenario, target: &Target, opts: &RunOptions) -> Trial {
    let resolved = crate::fixtures::resolve(scenario);
    let scenario = &*resolved;
    let mut trial = Trial::new(scenario, target);
    let empty: TargetExpect;
    let expect = match crate::expectation::for_version(
        &scenario.file.expect,
        target.dialect.expect_key(),
        &target.version,
    ) {
        Some(expect) => expect,
        None if opts.without_expectation => {
            empty = serde_json::from_value(serde_json::json!({}))
                .expect("every expectation field has a default");
            trial.notes.push(format!(
                "no expectation for {}: ran as written, for comparison",
                target.dialect.expect_key()
            ));
            &empty
        }
        None => {
            trial.status = Status::Skipped(format!(
                "the scenario has no expectation for {}",
                target.dialect.expect_key()
            ));
            return trial;
        }
    };
    if let Some(reason) = target.unmet(scenario, expect) {
        if !opts.without_expectation || expect.skip.is_some() {
            trial.status = Status::Skipped(reason);
            return trial;
        }
        trial
            .notes
            .push(format!("ran for comparison although: {reason}"));
    }
    trial.expected_frames = expect
        .frames
        .iter()
        .map(|e| match &e.0 {
            matcher::Expected::Frame(p) => p.source().clone(),
            matcher::Expected::AnyOrder(runs) => serde_json::json!({"any_order": runs
                .iter()
                .map(|r| r.iter().map(|p| p.source().clone()).collect::<Vec<_>>())
                .collect::<Vec<_>>()}),
        })
        .collect();
    let started = Instant::now();
    if let Err(d) = execute(scenario, expect, target, opts, &mut trial).await {
        trial.divergences.push(d);
    }
    trial.duration_ms = started.elapsed().as_millis() as u64;
    trial.status = match (trial.divergences.is_empty(), target.known.get(&scenario.id)) {
        (true, None) => Status::Passed,
        (false, None) => Status::Failed,
        (false, Some(why)) => Status::Known(why.clone()),
        (true, Some(_)) => {
            trial.divergences.push(Divergence::new(
                Kind::KnownDivergencePasses,
                format!(
                    "listed in {} as a known divergence, but it passes now: remove it from the list",
                    target.known_file()
                ),
            ));
            Status::Failed
        }
    };
    trial
}

async fn execute(
    scenario: &Scenario,
    expect: &TargetExpect,
    target: &Target,
    opts: &RunOptions,
    trial: &mut Trial,
) -> Result<(), Divergence> {
    let spawn_err =
        |what: &str, e: std::io::Error| Divergence::new(Kind::Spawn, format!("{what}: {e}"));
    let dir = tempfile::Builder::new()
        .prefix("streamcheck-")
        .tempdir()
        .map_err(|e| spawn_err("cannot create the trial's temp dir", e))?;
    // The CLI reports its cwd resolved; compare against the same spelling.
    let base = dir
        .path()
        .canonicalize()
        .map_err(|e| spawn_err("temp dir", e))?;
    let (workspace, home, tmp) = (base.join("work"), base.join("home"), base.join("tmp"));
    for d in [&workspace, &home, &tmp] {
        std::fs::create_dir_all(d).map_err(|e| spawn_err("cannot create the sandbox", e))?;
    }
    let files = scenario
        .file
        .files
        .iter()
        .map(|(n, c)| (&workspace, "files", n, c));
    let home_files = scenario
        .file
        .home_files
        .iter()
        .map(|(n, c)| (&home, "home_files", n, c));
    for (dir, field, name, content) in files.chain(home_files) {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| spawn_err("cannot create a scenario file's folder", e))?;
        }
        std::fs::write(&path, content.bytes())
            .map_err(|e| spawn_err(&format!("cannot write {field}.{name}"), e))?;
    }
    trial.vars = Vars {
        workspace: workspace.display().to_string(),
        home: home.display().to_string(),
    };

    let mut script = with_paths(&scenario.file.stub, &trial.vars);
    let title = stub_api::BuiltinRule::ClaudeCodeSessionTitle;
    if target.dialect == Dialect::ClaudeCode && !script.builtin_rules.contains(&title) {
        script.builtin_rules.push(title);
    }
    let server = StubServer::start(script)
        .await
        .map_err(|e| spawn_err("cannot start the stub", e))?;
    let base_url = server.base_url();
    let inv = target.invocation(
        scenario,
        expect,
        &Sandbox {
            workspace: &workspace,
            home: &home,
            tmp: &tmp,
            base_url: &base_url,
        },
    );
    trial.command_line = inv.display();

    let timeout = expect
        .timeout
        .map(Duration::from_secs)
        .unwrap_or(opts.timeout);
    let turns = scenario.turns(expect);
    let input = Input {
        lines: scenario.stdin(expect).cloned(),
        close: scenario.file.close_stdin.clone(),
        signal: scenario.file.signal.clone(),
    };
    let process = drive(input, &inv, &workspace, timeout, opts.grace, turns).await;
    trial.journal = server.journal();
    server.shutdown().await;

    let process = process?;
    trial.exit = process.exit.clone();
    trial.output = process.output;
    trial.stderr = process.stderr;
    if let Some(e) = &process.stdin_error {
        trial.notes.push(format!(
            "writing stdin failed: {e} (the CLI closed it early)"
        ));
    }

    match process.exit.killed.as_deref() {
        Some("timeout") => trial.divergences.push(Divergence::new(
            Kind::Timeout,
            format!("the CLI did not finish within {}s and was killed", timeout.as_secs()),
        )),
        Some("stdout-open") => trial.divergences.push(Divergence::new(
            Kind::Hang,
            "the CLI exited but its stdout stayed open (a child process kept it); the process group was killed",
        )),
        _ => {}
    }
    let hung_after_result = process.exit.killed.as_deref() == Some("grace");
    trial
        .divergences
        .extend(check(scenario, expect, trial, hung_after_result));
    // What stopped the process explains everything after it: say it first.
    let signalled = trial.exit.signal.is_some();
    trial.divergences.sort_by_key(|d| match d.kind {
        Kind::Spawn => 0,
        Kind::Timeout => 1,
        Kind::Hang => 2,
        Kind::ExitCode if signalled => 3,
        _ => 4,
    });
    Ok(())
}

/// The stub script with `$WORKSPACE` and `$HOME` replaced in its strings, so a
/// scripted tool call can name an absolute path inside the trial's sandbox.
fn with_paths(script: &Script, vars: &Vars) -> Script {
    fn walk(v: &mut serde_json::Value, vars: &Vars) {
        match v {
            serde_json::Value::String(s) if s.contains('$') => {
                *s = s
                    .replace("$WORKSPACE", &vars.workspace)
                    .replace("$HOME", &vars.home)
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(|x| walk(x, vars)),
            serde_json::Value::Object(m) => m.values_mut().for_each(|x| walk(x, vars)),
            _ => {}
        }
    }
    let Ok(mut value) = serde_json::to_value(script) else {
        return script.clone();
    };
    walk(&mut value, vars);
    serde_json::from_value(value).unwrap_or_else(|_| script.clone())
}

/// Runs the process to its end (or kills it), feeding stdin and reading stdout/stderr.
struct Process {
    exit: Exit,
    output: Output,
    stderr: Stderr,
    stdin_error: Option<String>,
}

/// What to write to the CLI's stdin, and when to close it.
struct Input {
    lines: Option<Vec<StdinLine>>,
    close: CloseStdin,
    signal: Option<SignalAt>,
}

async fn drive(
    input: Input,
    inv: &Invocation,
    workspace: &Path,
    timeout: Duration,
    grace: Duration,
    turns: usize,
) -> Result<Process, Divergence> {
    let mut cmd = tokio::process::Command::new(&inv.program);
    cmd.args(&inv.args)
        .env_clear()
        .envs(inv.env.iter().map(|(k, v)| (k, v)))
        .current_dir(workspace)
        .stdin(if input.lines.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = cmd.spawn().map_err(|e| {
        Divergence::new(
            Kind::Spawn,
            format!("cannot start {}: {e}", inv.program.display()),
        )
    })?;
    let pgid = child.id().map(|p| p as i32);
    // Kills the whole group however this function ends, even when the trial is aborted
    // (Ctrl-C): grandchildren must not outlive it.
    let _group = GroupGuard(pgid);
    let started = TokioInstant::now();
    let (results_tx, mut results_rx) = watch::channel(0usize);
    let (frames_tx, frames_rx) = watch::channel(0usize);
    if let (Some(at), Some(pid)) = (input.signal.clone(), child.id()) {
        let mut frames = frames_rx.clone();
        tokio::spawn(async move {
            if frames.wait_for(|n| *n >= at.after_frames).await.is_ok() {
                // SAFETY: kill(2) on the pid of the child we spawned and still hold.
                unsafe {
                    libc::kill(pid as i32, at.send.number());
                }
            }
        });
    }

    let mut stdout = child.stdout.take().expect("stdout is piped");
    let reader = tokio::spawn(async move {
        let mut out = Output::default();
        let mut splitter = LineSplitter::default();
        let mut buf = vec![0u8; 64 * 1024];
        let mut results = 0;
        loop {
            match stdout.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let at = started.elapsed().as_millis() as u64;
                    let before = out.frames.len();
                    splitter.push(&buf[..n], at, &mut out);
                    if out.frames.len() > before {
                        let _ = frames_tx.send(out.frames.len());
                    }
                    let new = out.frames[before..]
                        .iter()
                        .filter(|f| f.value.get("type").and_then(|t| t.as_str()) == Some("result"))
                        .count();
                    if new > 0 {
                        results += new;
                        let _ = results_tx.send(results);
                    }
                }
            }
        }
        splitter.finish(started.elapsed().as_millis() as u64, &mut out);
        out
    });

    let mut stderr_pipe = child.stderr.take().expect("stderr is piped");
    let err_reader = tokio::spawn(async move {
        let mut kept = Stderr::default();
        let (mut head, mut tail) = (Vec::new(), Vec::new());
        let mut buf = vec![0u8; 64 * 1024];
        while let Ok(n) = stderr_pipe.read(&mut buf).await {
            if n == 0 {
                break;
            }
            kept.push(&buf[..n], &mut head, &mut tail);
        }
        if tail.len() > Stderr::TAIL {
            tail.drain(..tail.len() - Stderr::TAIL);
        }
        kept.head = String::from_utf8_lossy(&head).into_owned();
        kept.tail = String::from_utf8_lossy(&tail).into_owned();
        kept
    });

    let stdin_writer = child.stdin.take().map(|mut pipe| {
        let lines = input.lines.unwrap_or_default();
        let close = input.close;
        let mut results = results_rx.clone();
        tokio::spawn(async move {
            let mut error = None;
            for line in lines {
                let Some(line) = line.to_line() else {
                    if let StdinLine::AfterResults { after_results: n } = line {
                        let _ = pipe.flush().await;
                        let _ = results.wait_for(|r| *r >= n).await;
                    }
                    continue;
                };
                let mut bytes = line.into_bytes();
                bytes.push(b'\n');
                if let Err(e) = pipe.write_all(&bytes).await {
                    error = Some(e.to_string());
                    break;
                }
            }
            if error.is_none() {
                if let Err(e) = pipe.flush().await {
                    error = Some(e.to_string());
                }
            }
            if let CloseStdin::AfterResults { after_results: n } = close {
                let _ = results.wait_for(|r| *r >= n).await;
            }
            drop(pipe);
            error
        })
    });

    let mut deadline = started + timeout;
    let mut killed = None;
    let mut in_grace = false;
    let status = loop {
        tokio::select! {
            status = child.wait() => break status.ok(),
            _ = sleep_until(deadline) => {
                killed = Some(if in_grace { "grace" } else { "timeout" });
                kill_group(pgid);
                break child.wait().await.ok();
            }
            changed = results_rx.changed(), if !in_grace => {
                if changed.is_err() || *results_rx.borrow() >= turns {
                    in_grace = true;
                    deadline = deadline.min(TokioInstant::now() + grace);
                }
            }
        }
    };

    // stdout may stay open in a grandchild after the CLI exits: give it the grace
    // period, then kill the whole group so nothing outlives the trial.
    let mut reader = reader;
    let output = match tokio::time::timeout(grace, &mut reader).await {
        Ok(out) => out.unwrap_or_default(),
        Err(_) => {
            if killed.is_none() {
                killed = Some("stdout-open");
            }
            kill_group(pgid);
            match tokio::time::timeout(Duration::from_secs(2), &mut reader).await {
                Ok(out) => out.unwrap_or_default(),
                Err(_) => {
                    reader.abort();
                    Output::default()
                }
            }
        }
    };
    kill_group(pgid);
    let stderr = match tokio::time::timeout(Duration::from_secs(2), err_reader).await {
        Ok(Ok(s)) => s,
        _ => Stderr::default(),
    };
    let stdin_error = match stdin_writer {
        Some(h) => match tokio::time::timeout(Duration::from_secs(1), h).await {
            Ok(Ok(e)) => e,
            _ => None,
        },
        None => None,
    };
    use std::os::unix::process::ExitStatusExt;
    Ok(Process {
        exit: Exit {
            code: status.and_then(|s| s.code()),
            signal: status.and_then(|s| s.signal()),
            killed: killed.map(str::to_string),
        },
        output,
        stderr,
        stdin_error,
    })
}

struct GroupGuard(Option<i32>);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        kill_group(self.0);
    }
}

fn kill_group(pgid: Option<i32>) {
    if let Some(pgid) = pgid.filter(|p| *p > 0) {
        // SAFETY: kill(2) with a negative pid signals the process group we created.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
}

/// Compares a finished run against the expectation.
fn check(
    scenario: &Scenario,
    expect: &TargetExpect,
    trial: &Trial,
    hung_after_result: bool,
) -> Vec<Divergence> {
    let mut out = Vec::new();
    let vars = &trial.vars;
    let mut caps = Captures::new();
    let format = scenario.file.output_format;

    if format != OutputFormat::Text {
        let skip = expect
            .invariants
            .as_ref()
            .map(|o| o.skip.as_slice())
            .unwrap_or(&[]);
        let mut enabled: Vec<Invariant> = Invariant::ALL
            .into_iter()
            .filter(|i| !skip.contains(i))
            .collect();
        if format == OutputFormat::Json {
            enabled.retain(|i| matches!(i, Invariant::NdjsonOnly | Invariant::ExitsAfterResult));
        }
        out.extend(invariants::check(
            &trial.output,
            &enabled,
            hung_after_result,
        ));

        let ignore: Vec<_> = expect.ignore.iter().map(|p| p.0.clone()).collect();
        let absent: Vec<_> = expect.absent.iter().map(|p| p.0.clone()).collect();
        let expected: Vec<_> = expect.frames.iter().map(|e| e.0.clone()).collect();
        let rules = FrameRules {
            expected: &expected,
            ignore: &ignore,
            absent: &absent,
            mode: expect.mode,
        };
        out.extend(matcher::match_frames(
            &rules,
            &trial.output.frames,
            vars,
            &mut caps,
        ));
    }

    if let (Some(turns), true) = (expect.turns, format == OutputFormat::StreamJson) {
        let results = trial
            .output
            .frames
            .iter()
            .filter(|f| f.value.get("type").and_then(|t| t.as_str()) == Some("result"))
            .count();
        if results != turns {
            out.push(
                Divergence::new(
                    Kind::MissingFrame,
                    format!("expected {turns} turn(s) (result frames), the CLI printed {results}"),
                )
                .expected(turns.into())
                .actual(results.into()),
            );
        }
    }
    if let Some(want) = expect.exit_code {
        if trial.exit.code != Some(want) && trial.exit.killed.is_none() {
            let got = match (trial.exit.code, trial.exit.signal) {
                (Some(c), _) => c.to_string(),
                (None, Some(s)) => format!("killed by signal {s}"),
                _ => "unknown".into(),
            };
            out.push(
                Divergence::new(
                    Kind::ExitCode,
                    format!("expected exit code {want}, got {got}"),
                )
                .expected(want.into())
                .actual(
                    trial
                        .exit
                        .code
                        .map_or(serde_json::Value::String(got), Into::into),
                ),
            );
        }
    }
    if let Some(rule) = &expect.stderr {
        if let Err(why) = rule.check(&trial.stderr.text()) {
            out.push(Divergence::new(Kind::Stderr, format!("stderr: {why}")));
        }
    }
    if let Some(rule) = &expect.text {
        if let Err(why) = rule.check(&trial.output.text()) {
            out.push(Divergence::new(Kind::Text, format!("stdout text: {why}")));
        }
    }
    out.extend(check_requests(expect, &trial.journal, vars, &mut caps));
    for entry in &trial.journal {
        if let Answer::Unscripted { message } = &entry.answer {
            out.push(Divergence::new(
                Kind::UnscriptedRequest,
                format!(
                    "{} {} was not scripted: {message}",
                    entry.method, entry.path
                ),
            ));
        }
    }
    for (name, want) in &expect.files {
        let path = Path::new(&vars.workspace).join(name);
        let content = std::fs::read(&path).ok();
        let problem = match (want, &content) {
            (FileExpect::Exists(true), None) => Some("does not exist".to_string()),
            (FileExpect::Exists(false), Some(_)) => Some("exists".to_string()),
            (FileExpect::Text(_), None) => Some("does not exist".to_string()),
            (FileExpect::Text(rule), Some(bytes)) => {
                rule.check(&String::from_utf8_lossy(bytes)).err()
            }
            _ => None,
        };
        if let Some(p) = problem {
            out.push(Divergence::new(
                Kind::Workspace,
                format!("workspace file {name}: {p}"),
            ));
        }
    }
    out
}

fn check_requests(
    expect: &TargetExpect,
    journal: &[JournalEntry],
    vars: &Vars,
    caps: &mut Captures,
) -> Vec<Divergence> {
    let Some(req) = &expect.requests else {
        return Vec::new();
    };
    let scripted: Vec<&JournalEntry> = journal
        .iter()
        .filter(|e| {
            matches!(e.answer, Answer::Step { .. } | Answer::Unscripted { .. })
                && e.path.ends_with("/v1/messages")
        })
        .collect();
    let background = journal
        .iter()
        .filter(|e| matches!(e.answer, Answer::Background { .. }))
        .count();
    let mut out = Vec::new();
    let div = |msg: String| Divergence::new(Kind::Request, msg);
    if let Some(n) = req.count {
        if scripted.len() != n {
            out.push(
                div(format!(
                    "expected {n} scripted request(s), the CLI sent {}",
                    scripted.len()
                ))
                .expected(n.into())
                .actual(scripted.len().into()),
            );
        }
    }
    if let Some(n) = req.background {
        if background != n {
            out.push(div(format!(
                "expected {n} background request(s), the CLI sent {background}"
            )));
        }
    }
    for (idx, pat) in &req.bodies {
        match scripted.get(*idx) {
            None => out.push(div(format!(
                "request {idx} was never sent ({} in all)",
                scripted.len()
            ))),
            Some(e) => {
                if let Err(m) = pat.0.check(e.body(), vars, caps) {
                    out.push(
                        div(format!("request {idx}: {}", m.reason))
                            .at_path(m.path)
                            .expected(m.expected)
                            .actual(m.actual.unwrap_or(serde_json::Value::Null)),
                    );
                }
            }
        }
    }
    for (i, pat) in req.all.iter().enumerate() {
        for (idx, e) in scripted.iter().enumerate() {
            if let Err(m) = pat.0.check(e.body(), vars, caps) {
                out.push(
                    div(format!(
                        "request {idx} does not match requests.all[{i}]: {}",
                        m.reason
                    ))
                    .at_path(m.path),
                );
                break;
            }
        }
    }
    for (i, pat) in req.some.iter().enumerate() {
        if !scripted
            .iter()
            .any(|e| pat.0.is_match(e.body(), vars, caps))
        {
            out.push(
                div(format!("no request matches requests.some[{i}]"))
                    .expected(pat.0.source().clone()),
            );
        }
    }
    out
}
