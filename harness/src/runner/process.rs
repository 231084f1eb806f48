//! Runs the CLI to its end, or kills it: spawned in a process group of its own, its stdin
//! fed, stdout and stderr read as they come, the trial's timeout enforced and, once the
//! last expected result is out, a grace period for it to exit. Nothing it starts
//! outlives the trial.

use crate::client::pump::{self, Pump};
use crate::client::{Client, ClientLog};
use crate::divergence::{Divergence, Kind};
use crate::plan::launch::Invocation;
pub use crate::plan::Limits;
use crate::printed::exit::{Exit, Termination};
use crate::printed::output::{LineSplitter, Output, Stderr, StderrCapture};
use crate::process_group::{self, Group, Spawned};
use crate::scenario::{SignalAt, StdoutReader, SLOW_READ_BYTES, SLOW_READ_PAUSE};
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;
use tokio::io::AsyncReadExt;
use tokio::process::{Child, ChildStderr, ChildStdout, Command};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::{sleep_until, timeout, Instant};

/// How long the readers get to finish once the process group is dead.
const DRAIN: Duration = Duration::from_secs(2);
/// How long the stdin writer gets to report once the process is gone.
const STDIN_DRAIN: Duration = Duration::from_secs(1);

/// Who writes the CLI's stdin (`None`: stdin is /dev/null), a signal to send it, and how
/// its stdout is read.
pub struct Input {
    pub client: Option<Client>,
    pub signal: Option<SignalAt>,
    pub reader: StdoutReader,
}

/// Everything the process left: how it ended and what it printed.
pub struct Process {
    pub exit: Exit,
    pub output: Output,
    pub stderr: Stderr,
    /// Why writing its stdin failed (it closed stdin early), if it did.
    pub stdin_error: Option<String>,
    /// What the scripted client sent and what it could not answer.
    pub client: Option<ClientLog>,
    /// When the clock of its frames' `at_ms` started (just after the spawn).
    pub started: std::time::Instant,
}

/// Runs `inv` in `workspace` to its end or until a limit kills it.
pub async fn drive(
    input: Input,
    inv: &Invocation,
    workspace: &Path,
    limits: &Limits,
) -> Result<Process, Divergence> {
    // The group is killed however this function ends, even when the trial is aborted
    // (Ctrl-C): grandchildren must not outlive it.
    let Spawned { mut child, group } =
        process_group::spawn(&mut command(inv, workspace, input.client.is_some())).map_err(
            |e| {
                let program = inv.program.display();
                Divergence::new(Kind::Spawn, format!("cannot start {program}: {e}"))
            },
        )?;
    let started = Instant::now();
    let (frames_tx, frames_rx) = watch::channel(0usize);
    let (results_tx, results_rx) = watch::channel(0usize);
    if let Some(at) = input.signal {
        signal_after(at, group.id(), frames_rx);
    }
    // The scripted client is fed every stdout frame and writes stdin (see `client::pump`).
    let (client, stdin, waiting) = match (input.client, child.stdin.take()) {
        (Some(c), Some(pipe)) => {
            let (p, w) = pump::start(c, pipe);
            let waiting = p.waiting();
            (Some(p), Some(w), Some(waiting))
        }
        _ => (None, None, None),
    };
    let stdout = pump_stdout(
        child.stdout.take().expect("stdout is piped"),
        input.reader,
        started,
        Watchers {
            frames: frames_tx,
            results: results_tx,
            client,
        },
    );
    let stderr = pump_stderr(child.stderr.take().expect("stderr is piped"));

    let (status, termination) =
        wait(&mut child, &group, started, limits, results_rx, waiting).await;
    let ((output, client), termination) =
        drain_stdout(stdout, &group, limits.grace, termination).await;
    group.kill();
    let stderr = match timeout(DRAIN, stderr).await {
        Ok(Ok(s)) => s,
        _ => Stderr::default(),
    };
    let stdin_error = match stdin {
        Some(writer) => timeout(STDIN_DRAIN, writer).await.ok().and_then(Result::ok),
        None => None,
    }
    .flatten();
    use std::os::unix::process::ExitStatusExt;
    Ok(Process {
        exit: Exit {
            code: status.and_then(|s| s.code()),
            signal: status.and_then(|s| s.signal()),
            termination,
        },
        output,
        stderr,
        stdin_error,
        client,
        started: started.into_std(),
    })
}

/// The command for `inv`: environment from scratch, `workspace` as its cwd, stdout and
/// stderr piped (spawned by [`process_group::spawn`], in a group of its own).
pub fn command(inv: &Invocation, workspace: &Path, piped_stdin: bool) -> Command {
    let mut cmd = Command::new(&inv.program);
    cmd.args(&inv.args)
        .env_clear()
        .envs(inv.env.iter().map(|(k, v)| (k, v)))
        .current_dir(workspace)
        .stdin(if piped_stdin {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// Sends the scenario's signal to the CLI once it has printed `after_frames` frames.
fn signal_after(at: SignalAt, pid: i32, mut frames: watch::Receiver<usize>) {
    tokio::spawn(async move {
        if frames.wait_for(|n| *n >= at.after_frames).await.is_ok() {
            // SAFETY: kill(2) on the pid of the child we spawned and still hold.
            unsafe {
                libc::kill(pid, at.send.number());
            }
        }
    });
}

/// Who hears of new stdout frames: the signal task (a count), the grace clock (a count
/// of results) and the scripted client (the frames themselves).
struct Watchers {
    frames: watch::Sender<usize>,
    results: watch::Sender<usize>,
    client: Option<Pump>,
}

/// What stdout left: the frames and, when a client wrote stdin, its log.
type Stdout = (Output, Option<ClientLog>);

/// Reads stdout until it closes, splitting it into frames, and tells the watchers.
fn pump_stdout(
    mut stdout: ChildStdout,
    reader: StdoutReader,
    started: Instant,
    w: Watchers,
) -> JoinHandle<Stdout> {
    let Watchers {
        frames,
        results,
        mut client,
    } = w;
    tokio::spawn(async move {
        let mut out = Output::default();
        let mut splitter = LineSplitter::default();
        let mut buf = vec![
            0u8;
            match reader {
                StdoutReader::Fast => 64 * 1024,
                StdoutReader::Slow => SLOW_READ_BYTES,
            }
        ];
        while let Ok(n @ 1..) = stdout.read(&mut buf).await {
            if reader == StdoutReader::Slow {
                tokio::time::sleep(SLOW_READ_PAUSE).await;
            }
            let before = out.frames.len();
            splitter.push(&buf[..n], millis_since(started), &mut out);
            let new = &out.frames[before..];
            if !new.is_empty() {
                let _ = frames.send(out.frames.len());
                if let Some(c) = &mut client {
                    c.feed(new);
                }
            }
            let new_results = new.iter().filter(|f| f.is_result()).count();
            if new_results > 0 {
                results.send_modify(|r| *r += new_results);
            }
        }
        splitter.finish(millis_since(started), &mut out);
        (out, client.map(Pump::end))
    })
}

fn millis_since(started: Instant) -> u64 {
    started.elapsed().as_millis() as u64
}

/// Reads stderr until it closes, keeping its head and tail.
fn pump_stderr(mut pipe: ChildStderr) -> JoinHandle<Stderr> {
    tokio::spawn(async move {
        let mut capture = StderrCapture::default();
        let mut buf = vec![0u8; 64 * 1024];
        while let Ok(n @ 1..) = pipe.read(&mut buf).await {
            capture.push(&buf[..n]);
        }
        capture.finish()
    })
}

/// Waits for the process to exit. Kills its group at the timeout, or once the grace
/// period has passed after its `turns`-th result (or after its stdout closed).
async fn wait(
    child: &mut Child,
    group: &Group,
    started: Instant,
    limits: &Limits,
    mut results: watch::Receiver<usize>,
    mut waiting: Option<watch::Receiver<Option<Instant>>>,
) -> (Option<ExitStatus>, Termination) {
    let mut deadline = started + limits.timeout;
    let mut in_grace = false;
    loop {
        // The oldest unanswered client request's deadline, if there is one to keep.
        let unanswered = match (&waiting, limits.answer_within) {
            (Some(w), Some(within)) => w.borrow().map(|since| since + within),
            _ => None,
        };
        tokio::select! {
            status = child.wait() => return (status.ok(), Termination::Exited),
            _ = sleep_until(unanswered.unwrap_or(deadline)), if unanswered.is_some_and(|u| u < deadline) => {
                group.kill();
                return (child.wait().await.ok(), Termination::Unanswered);
            }
            changed = async { waiting.as_mut().expect("guarded").changed().await }, if waiting.is_some() => {
                if changed.is_err() {
                    waiting = None;
                }
            }
            _ = sleep_until(deadline) => {
                group.kill();
                let why = if in_grace { Termination::HungAfterResult } else { Termination::Timeout };
                return (child.wait().await.ok(), why);
            }
            changed = results.changed(), if !in_grace => {
                if changed.is_err() || *results.borrow() >= limits.turns {
                    in_grace = true;
                    deadline = deadline.min(Instant::now() + limits.grace);
                }
            }
        }
    }
}

/// Collects stdout. A grandchild may hold it open after the CLI exited: it gets the
/// grace period, then the whole group is killed so nothing outlives the trial.
async fn drain_stdout(
    mut reader: JoinHandle<Stdout>,
    group: &Group,
    grace: Duration,
    termination: Termination,
) -> (Stdout, Termination) {
    if let Ok(out) = timeout(grace, &mut reader).await {
        return (out.unwrap_or_default(), termination);
    }
    let termination = match termination {
        Termination::Exited => Termination::StdoutHeldOpen,
        killed => killed,
    };
    group.kill();
    match timeout(DRAIN, &mut reader).await {
        Ok(out) => (out.unwrap_or_default(), termination),
        Err(_) => {
            reader.abort();
            ((Output::default(), None), termination)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A slow reader gets every byte a fast one gets: a 600 KB frame (the pipe holds 64 KB,
    /// so the writer waits on the slow reader) and the result after it.
    #[tokio::test]
    async fn a_slow_reader_receives_what_a_fast_one_does() {
        let dir = tempfile::tempdir().unwrap();
        let script = r#"printf '{"type":"assistant","text":"'; head -c 600000 /dev/zero | tr '\0' x; printf '"}\n{"type":"result","subtype":"success"}\n'"#;
        let inv = Invocation {
            program: "/bin/sh".into(),
            args: vec!["-c".into(), script.into()],
            env: vec![],
            dialect: crate::dialect::Dialect::ClaudeCode,
        };
        let limits = Limits {
            timeout: Duration::from_secs(60),
            grace: Duration::from_secs(5),
            turns: 1,
            answer_within: None,
        };
        let mut seen = Vec::new();
        for reader in [StdoutReader::Fast, StdoutReader::Slow] {
            let input = Input {
                client: None,
                signal: None,
                reader,
            };
            let p = drive(input, &inv, dir.path(), &limits).await.unwrap();
            assert_eq!(p.exit.termination, Termination::Exited, "{reader:?}");
            let kinds: Vec<String> = (p.output.frames.iter())
                .map(|f| crate::frame::frame_kind(&f.value))
                .collect();
            seen.push((p.output.total_bytes, kinds, p.output.bad_lines.len()));
        }
        assert_eq!(seen[0], seen[1]);
        assert!(seen[0].0 > 600_000, "{:?}", seen[0].0);
        assert_eq!(seen[0].1, ["assistant", "result/success"]);
    }

    #[test]
    fn exit_is_saved_with_the_names_it_always_had() {
        let cases = [
            (Termination::Exited, serde_json::Value::Null),
            (Termination::Timeout, "timeout".into()),
            (Termination::HungAfterResult, "grace".into()),
            (Termination::StdoutHeldOpen, "stdout-open".into()),
        ];
        for (termination, killed) in cases {
            let exit = Exit {
                code: Some(0),
                signal: None,
                termination,
            };
            let json = serde_json::to_value(&exit).unwrap();
            assert_eq!(
                json,
                serde_json::json!({"code": 0, "signal": null, "killed": killed})
            );
            assert_eq!(serde_json::from_value::<Exit>(json).unwrap(), exit);
        }
        let old: Exit = serde_json::from_str(r#"{"code": 1, "signal": null}"#).unwrap();
        assert_eq!(old.termination, Termination::Exited);
        assert!(serde_json::from_str::<Exit>(r#"{"code":1,"signal":null,"killed":"x"}"#).is_err());
    }

    #[test]
    fn exit_reads_as_the_report_says_it() {
        let exit = |code, signal, termination| Exit {
            code,
            signal,
            termination,
        };
        let text = |e: Exit| e.to_string();
        assert_eq!(text(exit(Some(3), None, Termination::Exited)), "3");
        assert_eq!(
            text(exit(None, Some(11), Termination::Exited)),
            "killed by signal 11"
        );
        assert_eq!(
            text(exit(None, Some(9), Termination::HungAfterResult)),
            "killed by streamcheck (grace)"
        );
        assert_eq!(text(exit(None, None, Termination::Exited)), "unknown");
    }
}
