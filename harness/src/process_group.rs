//! Every process the harness starts is started here: the CLI under test, its `--version`,
//! npm, cargo, pip, a Node fixture, a consumer, a `setup:` command. Each leads a process
//! group of its own, and the whole group is killed when it ends, when its time is up, or
//! when its handle is dropped (a trial aborted): a background child it leaves behind, or
//! one holding its pipes open, neither outlives it nor keeps the harness waiting.
//!
//! [`spawn`] gives the process and its [`Group`] to code that drives it (a trial, a
//! consumer); [`run`] and [`run_blocking`] run a helper to its end, reading its output.

use std::io;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// How much of each of a helper's stdout and stderr [`run`] keeps; the rest is read and
/// dropped, so a helper printing without end never blocks on a full pipe.
pub const KEEP: usize = 1 << 20;
/// How long the readers of a helper's pipes get once its group is dead: only a process
/// that left the group (`setsid`) can hold them open longer, and it is not waited for.
const DRAIN: Duration = Duration::from_secs(2);
/// How often [`Group::emptied_by`] looks.
const POLL: Duration = Duration::from_millis(20);

/// The process group a spawned process leads (its id is the leader's pid). Dropping it
/// kills every process of the group.
#[derive(Debug)]
pub struct Group(i32);

impl Group {
    /// The group's id, which is its leader's pid.
    pub fn id(&self) -> i32 {
        self.0
    }

    /// SIGKILL to every process of the group; nothing happens when it is empty.
    pub fn kill(&self) {
        // SAFETY: kill(2) with a negative pid signals the process group we created.
        unsafe {
            libc::kill(-self.0, libc::SIGKILL);
        }
    }

    /// Whether a living process is in the group. A zombie is not: once its leader is
    /// reaped, an orphan that exited may wait for an init that does not reap it.
    pub fn is_occupied(&self) -> bool {
        // SAFETY: kill(2) with signal 0 only checks that the group has a process.
        if unsafe { libc::kill(-self.0, 0) } != 0 {
            return false;
        }
        living_member(self.0).unwrap_or(true)
    }

    /// Waits until no living process is left in the group, or `deadline`: true when
    /// the group emptied.
    pub async fn emptied_by(&self, deadline: Instant) -> bool {
        loop {
            if !self.is_occupied() {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(POLL.min(deadline - Instant::now())).await;
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Whether /proc shows a process of group `pgid` that is not a zombie (`None`: no /proc).
fn living_member(pgid: i32) -> Option<bool> {
    let entries = std::fs::read_dir("/proc").ok()?;
    let living = entries.flatten().any(|e| {
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        // `pid (comm) state ppid pgrp ...`; comm may hold spaces and parentheses.
        let fields: Vec<&str> = (stat.rsplit_once(')'))
            .map_or(Vec::new(), |(_, rest)| rest.split_whitespace().collect());
        fields.get(2).and_then(|g| g.parse::<i32>().ok()) == Some(pgid) && fields[0] != "Z"
    });
    Some(living)
}

/// A process the harness spawned, and its group. Dropped, both are killed.
pub struct Spawned {
    pub child: tokio::process::Child,
    pub group: Group,
}

/// Spawns `cmd` as the leader of a new process group, killed with its group when dropped.
pub fn spawn(cmd: &mut Command) -> io::Result<Spawned> {
    let child = cmd.process_group(0).kill_on_drop(true).spawn()?;
    let pid = child
        .id()
        .ok_or_else(|| io::Error::other("the process has no pid"))?;
    Ok(Spawned {
        child,
        group: Group(pid as i32),
    })
}

/// How a helper ended and what it printed on the pipes it was given (the first [`KEEP`]
/// bytes of each).
#[derive(Debug)]
pub struct Ended {
    /// `None`: it was killed at its time limit.
    pub status: Option<ExitStatus>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// A helper that did not succeed, with the end of its stderr when it was piped.
#[derive(Debug, thiserror::Error)]
pub enum HelperError {
    #[error("cannot start {what}: {source}")]
    Spawn {
        what: String,
        #[source]
        source: io::Error,
    },
    #[error("{what} did not finish within {}s (killed)", .limit.as_secs())]
    TimedOut { what: String, limit: Duration },
    #[error("{what} failed ({status}){}", stderr_suffix(.stderr))]
    Failed {
        what: String,
        status: ExitStatus,
        stderr: String,
    },
}

fn stderr_suffix(stderr: &str) -> String {
    match stderr.trim() {
        "" => String::new(),
        text => format!(": {text}"),
    }
}

impl Ended {
    /// Itself when it exited 0, else why not, naming it `what`.
    pub fn success(self, what: &str, limit: Option<Duration>) -> Result<Ended, HelperError> {
        match self.status {
            Some(s) if s.success() => Ok(self),
            Some(status) => Err(HelperError::Failed {
                what: what.to_string(),
                status,
                stderr: String::from_utf8_lossy(&self.stderr).into_owned(),
            }),
            None => Err(HelperError::TimedOut {
                what: what.to_string(),
                limit: limit.unwrap_or_default(),
            }),
        }
    }
}

/// Runs a helper to its end or to `limit`, reading its piped stdout and stderr as they
/// come (see [`piped`]). Once its leader has exited,
/// or at the limit, its group is killed: whatever it left running goes with it.
pub async fn run(cmd: &mut Command, limit: Option<Duration>) -> io::Result<Ended> {
    let Spawned { mut child, group } = spawn(cmd)?;
    let stdout = child.stdout.take().map(|p| read_kept(p, KEEP));
    let stderr = child.stderr.take().map(|p| read_kept(p, KEEP));
    let status = match limit {
        None => Some(child.wait().await?),
        Some(limit) => match tokio::time::timeout(limit, child.wait()).await {
            Ok(status) => Some(status?),
            Err(_) => None,
        },
    };
    group.kill();
    if status.is_none() {
        let _ = child.wait().await;
    }
    Ok(Ended {
        status,
        stdout: drained(stdout).await,
        stderr: drained(stderr).await,
    })
}

/// [`run`] for code outside a runtime, or on a runtime's thread: on a thread of its own.
pub fn run_blocking(cmd: std::process::Command, limit: Option<Duration>) -> io::Result<Ended> {
    let mut cmd = Command::from(cmd);
    std::thread::scope(|s| {
        s.spawn(|| {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            rt.block_on(run(&mut cmd, limit))
        })
        .join()
        .unwrap_or_else(|_| Err(io::Error::other("the helper's thread panicked")))
    })
}

/// A `std` command with stdin `/dev/null` and stdout and stderr piped, as [`run`] reads
/// them.
pub fn piped(program: impl AsRef<std::ffi::OsStr>) -> std::process::Command {
    let mut cmd = std::process::Command::new(program);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// Reads `pipe` to its end, keeping the first `keep` bytes.
pub fn read_kept<R>(mut pipe: R, keep: usize) -> JoinHandle<Vec<u8>>
where
    R: AsyncRead + Unpin + Send + 'static,
{
    tokio::spawn(async move {
        let mut kept = Vec::new();
        let _ = (&mut pipe).take(keep as u64).read_to_end(&mut kept).await;
        let _ = tokio::io::copy(&mut pipe, &mut tokio::io::sink()).await;
        kept
    })
}

/// What a reader kept, once its pipe closed or [`DRAIN`] passed (nothing when a process
/// that left the group still holds it).
pub async fn drained<T: Default>(reader: Option<JoinHandle<T>>) -> T {
    let Some(mut reader) = reader else {
        return T::default();
    };
    match tokio::time::timeout(DRAIN, &mut reader).await {
        Ok(kept) => kept.unwrap_or_default(),
        Err(_) => {
            reader.abort();
            T::default()
        }
    }
}

/// What tests of code that starts processes look for.
#[cfg(test)]
pub(crate) mod testing {
    use std::time::{Duration, Instant};

    /// Living processes whose command line holds `marker` (a zombie's reads empty), once
    /// a SIGKILL already sent has had time to land: the bound is generous and not what
    /// is tested (a process still there after it was not killed).
    pub(crate) fn left_running(marker: &str) -> Vec<String> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let left = with_marker(marker);
            if left.is_empty() || Instant::now() > deadline {
                return left;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn with_marker(marker: &str) -> Vec<String> {
        let mut found = Vec::new();
        for e in std::fs::read_dir("/proc").unwrap().flatten() {
            let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
            let cmd = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            if cmd.contains(marker) {
                found.push(format!("{}: {cmd}", e.file_name().to_string_lossy()));
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> std::process::Command {
        let mut cmd = piped("sh");
        cmd.args(["-c", script]);
        cmd
    }

    use testing::left_running as gone;

    #[test]
    fn a_helper_that_prints_a_megabyte_and_leaves_a_child_is_read_and_its_child_killed() {
        let marker = "sleep 999.1357";
        let ended = run_blocking(
            sh(&format!(
                "{marker} & head -c 1500000 /dev/zero | tr '\\0' x; echo oops >&2"
            )),
            Some(Duration::from_secs(600)),
        )
        .unwrap();
        assert!(ended.status.unwrap().success());
        assert_eq!(ended.stdout.len(), KEEP, "the first KEEP bytes are kept");
        assert_eq!(ended.stderr, b"oops\n");
        assert_eq!(gone(marker), Vec::<String>::new());
    }

    #[test]
    fn a_helper_past_its_limit_is_killed_with_its_group() {
        let marker = "sleep 998.2468";
        let ended = run_blocking(
            sh(&format!("{marker} & echo started; exec sleep 997")),
            Some(Duration::from_millis(200)),
        )
        .unwrap();
        assert!(ended.status.is_none(), "{:?}", ended.status);
        assert_eq!(ended.stdout, b"started\n");
        let err = ended.success("the helper", Some(Duration::from_secs(1)));
        assert!(matches!(err, Err(HelperError::TimedOut { .. })), "{err:?}");
        assert_eq!(gone(marker), Vec::<String>::new());
    }

    #[test]
    fn a_failed_helper_names_its_status_and_stderr() {
        let ended = run_blocking(sh("echo broken >&2; exit 3"), None).unwrap();
        let err = ended.success("npm ci", None).unwrap_err().to_string();
        assert_eq!(err, "npm ci failed (exit status: 3): broken");
    }

    /// No process is started but by [`spawn`]: `.spawn()` is called here only, and a
    /// file that builds a command hands it to this module.
    #[test]
    fn every_process_is_started_here() {
        let crate_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut wrong = Vec::new();
        for dir in [crate_dir.join("src"), crate_dir.join("../stub-api/src")] {
            let files = walkdir::WalkDir::new(&dir).into_iter().flatten();
            for file in files.filter(|f| f.path().extension().is_some_and(|e| e == "rs")) {
                let text = std::fs::read_to_string(file.path()).unwrap();
                let name = file.path().display().to_string();
                if name.ends_with("src/process_group.rs") {
                    continue;
                }
                if text.contains(".spawn()") {
                    wrong.push(format!("{name}: calls .spawn()"));
                }
                let builds = text.contains("Command::new(") || text.contains("Command::from(");
                if builds && !text.contains("process_group::") {
                    wrong.push(format!("{name}: builds a command it does not start here"));
                }
            }
        }
        assert!(wrong.is_empty(), "{wrong:#?}");
    }

    #[tokio::test]
    async fn a_group_is_occupied_while_a_background_child_lives() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "sleep 996.1122 & exit 0"]);
        let Spawned { mut child, group } = spawn(&mut cmd).unwrap();
        assert!(child.wait().await.unwrap().success());
        assert!(group.is_occupied(), "its sleep is still in the group");
        group.kill();
        let emptied = group
            .emptied_by(Instant::now() + Duration::from_secs(30))
            .await;
        assert!(emptied);
        assert!(!group.is_occupied());
    }
}
