//! The runner's side of the client: the stdout reader feeds each parsed frame in, and a
//! writer task writes what the client answers to the CLI's stdin (or closes it).

use crate::client::session::{Client, ClientLog, Io};
use crate::printed::output::Frame;
use std::collections::HashMap;
use tokio::io::AsyncWriteExt;
use tokio::process::ChildStdin;
use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// The client and the channel to its stdin writer.
pub struct Pump {
    client: Client,
    tx: UnboundedSender<Io>,
    /// Each request the client sent: since when it waits for its control_response
    /// (`None` once answered).
    open: HashMap<String, Option<Instant>>,
    /// When the oldest of them was written (`None`: nothing waits).
    oldest: watch::Sender<Option<Instant>>,
}

/// Starts the writer on `pipe`; returns the pump (for the stdout reader) and the
/// writer's handle, which yields the first write error (the CLI closed stdin early).
pub fn start(mut client: Client, mut pipe: ChildStdin) -> (Pump, JoinHandle<Option<String>>) {
    let (tx, mut rx) = unbounded_channel::<Io>();
    for io in client.start() {
        let _ = tx.send(io);
    }
    let split = client.splits_utf8_chars();
    let writer = tokio::spawn(async move {
        let mut error = None;
        while let Some(io) = rx.recv().await {
            let Io::Write(line) = io else { break };
            if error.is_some() {
                continue;
            }
            let mut bytes = line.into_bytes();
            bytes.push(b'\n');
            let parts = if split {
                utf8_split_parts(&bytes)
            } else {
                vec![&bytes[..]]
            };
            for (i, part) in parts.iter().enumerate() {
                if i > 0 {
                    tokio::time::sleep(UTF8_SPLIT_PAUSE).await;
                }
                if let Err(e) = write_part(&mut pipe, part).await {
                    error = Some(e.to_string());
                    break;
                }
            }
        }
        drop(pipe);
        error
    });
    let mut pump = Pump {
        client,
        tx,
        open: HashMap::new(),
        oldest: watch::channel(None).0,
    };
    pump.track(&[]);
    (pump, writer)
}

async fn write_part(pipe: &mut ChildStdin, part: &[u8]) -> std::io::Result<()> {
    pipe.write_all(part).await?;
    pipe.flush().await
}

/// The pause between the two parts of a cut character: long enough that the CLI reads
/// the first part on its own.
const UTF8_SPLIT_PAUSE: std::time::Duration = std::time::Duration::from_millis(20);

/// `bytes` cut right after the first byte of each multi-byte UTF-8 character.
pub fn utf8_split_parts(bytes: &[u8]) -> Vec<&[u8]> {
    let mut parts = Vec::new();
    let mut start = 0;
    for (at, byte) in bytes.iter().enumerate() {
        if *byte >= 0xC0 && at + 1 < bytes.len() {
            parts.push(&bytes[start..=at]);
            start = at + 1;
        }
    }
    parts.push(&bytes[start..]);
    parts
}

impl Pump {
    /// New frames the CLI printed.
    pub fn feed(&mut self, frames: &[Frame]) {
        for f in frames {
            for io in self.client.on_frame(f) {
                let _ = self.tx.send(io);
            }
        }
        self.track(frames);
    }

    /// When the oldest client request still waiting for its answer was written.
    pub fn waiting(&self) -> watch::Receiver<Option<Instant>> {
        self.oldest.subscribe()
    }

    /// Notes the requests sent since and the answers in `frames`.
    fn track(&mut self, frames: &[Frame]) {
        let now = Instant::now();
        for r in self.client.requests() {
            self.open.entry(r.id.clone()).or_insert(Some(now));
        }
        for f in frames {
            if f.value.get("type").and_then(serde_json::Value::as_str) == Some("control_response") {
                if let Some(id) = f
                    .value
                    .pointer("/response/request_id")
                    .and_then(serde_json::Value::as_str)
                {
                    self.open.insert(id.to_string(), None);
                }
            }
        }
        let oldest = self.open.values().flatten().min().copied();
        self.oldest.send_if_modified(|o| {
            let changed = *o != oldest;
            *o = oldest;
            changed
        });
    }

    /// stdout ended: stdin is closed, and the log is what the checks need.
    pub fn end(mut self) -> ClientLog {
        for io in self.client.on_end() {
            let _ = self.tx.send(io);
        }
        self.client.finish()
    }
}
