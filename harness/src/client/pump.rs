//! The runner's side of the client: the stdout reader feeds each parsed frame in, and a
//! writer task writes what the client answers to the CLI's stdin (or closes it).

use crate::client::session::{Client, ClientLog, Io};
use crate::output::Frame;
use tokio::io::AsyncWriteExt;
use tokio::process::ChildStdin;
use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};
use tokio::task::JoinHandle;

/// The client and the channel to its stdin writer.
pub struct Pump {
    client: Client,
    tx: UnboundedSender<Io>,
}

/// Starts the writer on `pipe`; returns the pump (for the stdout reader) and the
/// writer's handle, which yields the first write error (the CLI closed stdin early).
pub fn start(mut client: Client, mut pipe: ChildStdin) -> (Pump, JoinHandle<Option<String>>) {
    let (tx, mut rx) = unbounded_channel::<Io>();
    for io in client.start() {
        let _ = tx.send(io);
    }
    let writer = tokio::spawn(async move {
        let mut error = None;
        while let Some(io) = rx.recv().await {
            let Io::Write(line) = io else { break };
            if error.is_some() {
                continue;
            }
            let mut bytes = line.into_bytes();
            bytes.push(b'\n');
            if let Err(e) = pipe.write_all(&bytes).await {
                error = Some(e.to_string());
            } else if let Err(e) = pipe.flush().await {
                error = Some(e.to_string());
            }
        }
        drop(pipe);
        error
    });
    (Pump { client, tx }, writer)
}

impl Pump {
    /// New frames the CLI printed.
    pub fn feed(&mut self, frames: &[Frame]) {
        for f in frames {
            for io in self.client.on_frame(f) {
                let _ = self.tx.send(io);
            }
        }
    }

    /// stdout ended: stdin is closed, and the log is what the checks need.
    pub fn end(mut self) -> ClientLog {
        for io in self.client.on_end() {
            let _ = self.tx.send(io);
        }
        self.client.finish()
    }
}
