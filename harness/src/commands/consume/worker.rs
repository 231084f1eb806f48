//! Long-lived consumers: one process per job, given feed after feed, so an SDK whose import
//! alone takes seconds can read the whole catalogue.
//!
//! - [`Serve::Feeds`] (the Python SDK's `consumer.py --serve`): each feed is a header line
//!   `{"lines": K}` and then the feed's writes as the one-shot consumer gets them (a split
//!   write still in two writes); the worker answers one line, `{"ok": true, "understood": N}`
//!   or `{"ok": false, "at_line": L, "error": "..."}`. Only a pass is taken from the worker:
//!   a feed it fails (or a worker that dies or hangs) is fed again to the one-shot command
//!   in a fresh process, whose exit, stderr and located line are the finding, exactly as
//!   `--command` gives them.
//! - [`Serve::Host`] (the TypeScript SDK's `host.mjs`): the SDK drives `replay-cli` over the
//!   saved trial; see [`super::host`].

use super::error::ConsumeError;
use crate::process_group::{self, Spawned};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Mutex;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout};

/// How a long-lived consumer is spoken to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    Feeds,
    Host,
}

/// A long-lived consumer: its command, and the idle processes the jobs share.
pub struct Serve {
    pub protocol: Protocol,
    /// Started with `sh -c` in the consumer's folder.
    pub command: String,
    pub dir: PathBuf,
    idle: Mutex<Vec<Worker>>,
}

impl std::fmt::Debug for Serve {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Serve")
            .field("protocol", &self.protocol)
            .field("command", &self.command)
            .finish()
    }
}

/// One running worker; dropped, its process group is killed.
pub struct Worker {
    _process: Spawned,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Serve {
    pub fn new(protocol: Protocol, command: String, dir: PathBuf) -> Serve {
        Serve {
            protocol,
            command,
            dir,
            idle: Mutex::new(Vec::new()),
        }
    }

    /// An idle worker, or a new one.
    fn take(&self) -> Result<Worker, ConsumeError> {
        if let Some(w) = self.idle.lock().expect("not poisoned").pop() {
            return Ok(w);
        }
        let mut sh = tokio::process::Command::new("sh");
        sh.arg("-c")
            .arg(&self.command)
            .current_dir(&self.dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut process =
            process_group::spawn(&mut sh).map_err(|source| ConsumeError::ServeSpawn {
                command: self.command.clone(),
                source,
            })?;
        Ok(Worker {
            stdin: process.child.stdin.take().expect("piped"),
            stdout: BufReader::new(process.child.stdout.take().expect("piped")),
            _process: process,
        })
    }

    /// Sends `header` and then `writes` to a worker and reads its one-line answer within
    /// `timeout`. `Ok(None)`: the worker died, hung or answered what is not the answer (it
    /// is dropped, and killed with it).
    pub async fn ask<A: DeserializeOwned>(
        &self,
        header: &impl Serialize,
        writes: &[Vec<u8>],
        pause: bool,
        timeout: Duration,
    ) -> Result<Option<A>, ConsumeError> {
        let mut worker = self.take()?;
        let header = serde_json::to_string(header).expect("serializable") + "\n";
        let exchange = async {
            worker.stdin.write_all(header.as_bytes()).await.ok()?;
            for w in writes {
                worker.stdin.write_all(w).await.ok()?;
                worker.stdin.flush().await.ok()?;
                if pause && !w.ends_with(b"\n") {
                    // As the one-shot feed does: the rest once the worker read this.
                    while unread(&worker.stdin) > 0 {
                        tokio::time::sleep(SPLIT_POLL).await;
                    }
                }
            }
            worker.stdin.flush().await.ok()?;
            let mut line = String::new();
            match worker.stdout.read_line(&mut line).await {
                Ok(n) if n > 0 => serde_json::from_str::<A>(&line).ok(),
                _ => None,
            }
        };
        let answer = tokio::time::timeout(timeout, exchange).await.ok().flatten();
        if answer.is_some() {
            self.idle.lock().expect("not poisoned").push(worker);
        }
        Ok(answer)
    }
}

/// A `Feeds` worker's answer.
#[derive(Debug, serde::Deserialize)]
pub struct FeedAnswer {
    pub ok: bool,
    #[serde(default)]
    pub understood: usize,
}

/// How often a split write looks whether the consumer has read its first half.
pub(super) const SPLIT_POLL: Duration = Duration::from_millis(2);

/// Bytes written to the consumer's stdin that it has not read yet (FIONREAD, which a
/// pipe answers on either end).
pub(super) fn unread(stdin: &tokio::process::ChildStdin) -> i32 {
    use std::os::fd::AsRawFd;
    let mut n: libc::c_int = 0;
    // SAFETY: FIONREAD writes one int through the pointer.
    match unsafe { libc::ioctl(stdin.as_raw_fd(), libc::FIONREAD, &mut n) } {
        0 => n,
        _ => 0,
    }
}
