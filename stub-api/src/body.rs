//! The response body type: either one buffer, or a scripted sequence of writes,
//! pauses, flushes and an abort (for transport faults).

use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};
use tokio::time::Sleep;

/// One step of a scripted body.
#[derive(Debug)]
pub(crate) enum Piece {
    /// Bytes handed to hyper as one frame (one chunk in chunked encoding).
    Data(Bytes),
    /// Wait before the next piece (hyper flushes while we wait).
    Delay(Duration),
    /// Return `Pending` once so hyper flushes what it has before the next piece.
    Flush,
    /// Fail the body: hyper drops the connection without ending the response.
    Abort,
    /// Send nothing more, ever: the response stays open until the client goes away or
    /// the stub stops (a stalled upstream).
    Hold,
}

/// The error that aborts a connection on purpose.
#[derive(Debug)]
pub struct Disconnect;

impl fmt::Display for Disconnect {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("stub-api: scripted disconnect")
    }
}

impl std::error::Error for Disconnect {}

pub struct StubBody {
    pieces: VecDeque<Piece>,
    sleep: Option<Pin<Box<Sleep>>>,
    /// Some: sent with content-length; None: chunked.
    exact_len: Option<u64>,
}

impl StubBody {
    pub(crate) fn empty() -> StubBody {
        StubBody {
            pieces: VecDeque::new(),
            sleep: None,
            exact_len: Some(0),
        }
    }

    /// One buffer, sent with a content-length.
    pub(crate) fn full(data: impl Into<Bytes>) -> StubBody {
        let data = data.into();
        StubBody {
            exact_len: Some(data.len() as u64),
            pieces: VecDeque::from([Piece::Data(data)]),
            sleep: None,
        }
    }

    /// Scripted pieces; `exact_len` Some sends a content-length, None chunked encoding.
    pub(crate) fn scripted(pieces: VecDeque<Piece>, exact_len: Option<u64>) -> StubBody {
        StubBody {
            pieces,
            sleep: None,
            exact_len,
        }
    }
}

impl Body for StubBody {
    type Data = Bytes;
    type Error = Disconnect;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Disconnect>>> {
        let this = self.get_mut();
        loop {
            if let Some(sleep) = this.sleep.as_mut() {
                if sleep.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                this.sleep = None;
            }
            match this.pieces.pop_front() {
                None => return Poll::Ready(None),
                Some(Piece::Data(data)) => return Poll::Ready(Some(Ok(Frame::data(data)))),
                Some(Piece::Delay(d)) => this.sleep = Some(Box::pin(tokio::time::sleep(d))),
                Some(Piece::Flush) => {
                    cx.waker().wake_by_ref();
                    return Poll::Pending;
                }
                Some(Piece::Abort) => return Poll::Ready(Some(Err(Disconnect))),
                Some(Piece::Hold) => {
                    // Never woken: the connection task ends when hyper sees the client
                    // close, or when the stub aborts it on shutdown.
                    this.pieces.push_front(Piece::Hold);
                    return Poll::Pending;
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.pieces.is_empty() && self.sleep.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        match self.exact_len {
            Some(n) => SizeHint::with_exact(n),
            None => SizeHint::default(),
        }
    }
}
