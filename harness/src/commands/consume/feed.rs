//! One consumer given one feed: spawned through `sh -c`, the feed written to its stdin,
//! how it ended and what it printed. A failure is located: the shortest prefix of the
//! feed it still fails on names the line it was last given.

use super::error::ConsumeError;
use super::probe::Feed;
use super::worker::{unread, SPLIT_POLL};
use crate::pattern::Pattern;
use crate::pattern::{Captures, Vars};
use crate::process_group::{self, Spawned};
use serde::Serialize;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::Instant;

/// A consumer: a shell command reading stream-json on stdin.
#[derive(Debug, Clone, Serialize)]
pub struct Consumer {
    pub name: String,
    pub command: String,
    /// Where the command runs (the project file's folder for a configured one).
    #[serde(skip)]
    pub dir: PathBuf,
    #[serde(skip)]
    pub timeout: Duration,
    /// What each line it prints must match (one JSON object per frame it understood).
    #[serde(skip)]
    pub each: Option<Pattern>,
    /// A long-lived form of the same consumer, given feed after feed (the SDKs).
    #[serde(skip)]
    pub serve: Option<std::sync::Arc<super::worker::Serve>>,
}

/// How a consumer failed on a feed.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Failure {
    /// It exited with a status other than 0.
    Exit { code: i32 },
    /// A signal ended it (a crash: SIGSEGV, SIGABRT, an uncaught panic's abort).
    Signal { signal: i32 },
    /// It did not exit within its timeout after its stdin was closed.
    Timeout { seconds: u64 },
    /// It exited 0, but a process it started was still running at its timeout (killed
    /// then, with the consumer's whole process group).
    LeftRunning { seconds: u64 },
    /// A line it printed is not a JSON object matching its `each` pattern.
    Output { line: usize, why: String },
    /// An SDK host's `query()` over the replayed trial threw, or yielded another result.
    Host { why: String },
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Exit { code } => write!(f, "exited {code}"),
            Failure::Signal { signal } => write!(f, "killed by signal {signal}"),
            Failure::Timeout { seconds } => {
                write!(f, "still running {seconds}s after its input ended")
            }
            Failure::LeftRunning { seconds } => write!(
                f,
                "left a background process running (still there {seconds}s after it started; killed)"
            ),
            Failure::Output { line, why } => write!(f, "its output line {line} {why}"),
            Failure::Host { why } => write!(f, "{why}"),
        }
    }
}

/// What one run of a consumer left.
#[derive(Debug, Clone, PartialEq)]
pub struct Ran {
    pub failure: Option<Failure>,
    /// The JSON objects it printed (one per frame it understood, if it says so).
    pub understood: usize,
    /// The end of what it wrote to stderr.
    pub stderr: String,
}

/// The end of stderr a finding keeps.
const STDERR_TAIL: usize = 2000;
/// How much of stdout is kept for `each` (a consumer printing more is not checked further).
const STDOUT_MAX: usize = 4 << 20;

/// Exit codes of `sh -c` that mean the command itself could not run, not that it failed
/// on the input.
const CANNOT_RUN: [i32; 2] = [126, 127];

/// Runs `consumer` once on `feed`. `Err` is a setup error naming the command.
pub async fn run_once(
    consumer: &Consumer,
    feed: &Feed,
    pause: bool,
    env: &[(&str, String)],
) -> Result<Ran, ConsumeError> {
    let mut cmd = tokio::process::Command::new("sh");
    cmd.arg("-c")
        .arg(&consumer.command)
        .current_dir(&consumer.dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    // `sh -c` may start the consumer as a child, and the consumer children of its own: the
    // whole group is killed when this ends.
    let Spawned { mut child, group } =
        process_group::spawn(&mut cmd).map_err(|source| ConsumeError::Spawn {
            consumer: consumer.name.clone(),
            source,
        })?;
    let deadline = Instant::now() + consumer.timeout;
    let mut stdin = child.stdin.take().expect("piped");
    let stdout = process_group::read_kept(child.stdout.take().expect("piped"), STDOUT_MAX);
    let mut stderr = child.stderr.take().expect("piped");
    let writes = feed.writes.clone();
    // A consumer that stops reading early (it failed, or it read all it wanted) closes
    // the pipe: the rest of the feed is not written, and that is not an error of ours.
    let writer = tokio::spawn(async move {
        for w in writes {
            if stdin.write_all(&w).await.is_err() || stdin.flush().await.is_err() {
                return;
            }
            if pause && !w.ends_with(b"\n") {
                // The rest only once the consumer has read all of this: the frame then
                // reaches it in two reads however slowly it starts.
                while unread(&stdin) > 0 {
                    tokio::time::sleep(SPLIT_POLL).await;
                }
            }
        }
    });
    let err = tokio::spawn(async move {
        let mut buf = Vec::new();
        let _ = stderr.read_to_end(&mut buf).await;
        buf
    });
    let status = match tokio::time::timeout_at(deadline, child.wait()).await {
        Ok(status) => Some(status.map_err(|source| ConsumeError::Wait {
            consumer: consumer.name.clone(),
            source,
        })?),
        Err(_) => None,
    };
    // It exited 0: what it started in the background gets until the same deadline, then
    // goes with the group (it may hold stdout open, which must not keep us waiting). One
    // that failed is judged by its exit, at once (locating its line runs it again).
    let passed = status.is_some_and(|s| s.success());
    let left_running = passed && !group.emptied_by(deadline).await;
    group.kill();
    if status.is_none() {
        let _ = child.wait().await;
    }
    writer.abort();
    let stdout = process_group::drained(Some(stdout)).await;
    let stderr = process_group::drained(Some(err)).await;
    let stderr = String::from_utf8_lossy(&stderr);
    let tail = tail_of(&stderr, STDERR_TAIL);
    let (checked, understood) = check_output(consumer, &stdout);
    let failure = match status {
        None => Some(Failure::Timeout {
            seconds: consumer.timeout.as_secs(),
        }),
        Some(s) => {
            use std::os::unix::process::ExitStatusExt;
            match (s.code(), s.signal()) {
                (Some(0), _) if left_running => Some(Failure::LeftRunning {
                    seconds: consumer.timeout.as_secs(),
                }),
                (Some(0), _) => checked,
                (Some(code), _) if CANNOT_RUN.contains(&code) => {
                    return Err(ConsumeError::CannotRun {
                        consumer: consumer.name.clone(),
                        command: consumer.command.clone(),
                        code,
                        stderr: tail.trim().to_string(),
                    })
                }
                (Some(code), _) => Some(Failure::Exit { code }),
                (None, Some(signal)) => Some(Failure::Signal { signal }),
                (None, None) => Some(Failure::Exit { code: -1 }),
            }
        }
    };
    Ok(Ran {
        failure,
        understood,
        stderr: tail,
    })
}

/// The first line of stdout that is not a JSON object matching `each`, and the number of
/// JSON objects printed. Without `each`, stdout is not looked at.
fn check_output(consumer: &Consumer, stdout: &[u8]) -> (Option<Failure>, usize) {
    let Some(each) = &consumer.each else {
        return (None, 0);
    };
    let text = String::from_utf8_lossy(stdout);
    let mut understood = 0;
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let why = match serde_json::from_str::<serde_json::Value>(line) {
            Ok(v) if v.is_object() => {
                understood += 1;
                match each.check(&v, &Vars::default(), &mut Captures::new()) {
                    Ok(()) => continue,
                    Err(m) => format!("does not match `each` {m}"),
                }
            }
            _ => format!(
                "is not a JSON object: {}",
                crate::text::clip_line(line, 120)
            ),
        };
        return (Some(Failure::Output { line: i + 1, why }), understood);
    }
    (None, understood)
}

/// The 1-based line of `feed` the consumer was last given when it failed: the end of the
/// shortest prefix it still fails on (0: it fails on no input at all). `hint` (the first
/// line a probe changed) is tried first. Assumes a consumer that failed on a prefix
/// fails on a longer one, as a line-by-line reader does; `None` when the whole feed,
/// given again, no longer fails (a flaky consumer).
pub async fn locate(
    consumer: &Consumer,
    feed: &Feed,
    pause: bool,
    hint: Option<usize>,
    env: &[(&str, String)],
) -> Result<Option<usize>, ConsumeError> {
    let n = feed.line_count();
    let fails = |k: usize| async move {
        let ran = run_once(consumer, &feed.prefix(k), pause, env).await?;
        Ok::<bool, ConsumeError>(matches!(
            ran.failure,
            Some(Failure::Exit { .. } | Failure::Signal { .. })
        ))
    };
    if !fails(n).await? {
        return Ok(None);
    }
    if fails(0).await? {
        return Ok(Some(0));
    }
    let (mut lo, mut hi) = (0, n);
    if let Some(h) = hint.filter(|h| *h > 0 && *h < n) {
        if fails(h).await? {
            if !fails(h - 1).await? {
                return Ok(Some(h));
            }
            hi = h - 1;
        } else {
            lo = h;
        }
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fails(mid).await? {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok(Some(hi))
}

/// At most the last `max` characters of `s`, with `…` where it was cut.
fn tail_of(s: &str, max: usize) -> String {
    let count = s.chars().count();
    match count.checked_sub(max).filter(|skip| *skip > 0) {
        Some(skip) => format!("…{}", s.chars().skip(skip).collect::<String>()),
        None => s.to_string(),
    }
}
