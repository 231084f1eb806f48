//! Turning a rendered SSE stream plus `Faults` into the pieces of a response body.

use std::collections::VecDeque;
use std::time::Duration;

use bytes::{Bytes, BytesMut};

use crate::body::Piece;
use crate::script::Faults;
use crate::sse;

/// Plans the body of a faulty SSE stream. `stream` holds all events back to back and
/// `ends` the end offset of each event.
pub(crate) fn sse_pieces(stream: Bytes, ends: &[usize], faults: &Faults) -> VecDeque<Piece> {
    let mut plan = Vec::with_capacity(ends.len() * 2 + 4);
    let delay = Duration::from_millis(faults.delay_between_events_ms);
    let mut start = 0;
    for i in 0..=ends.len() {
        // The faults positioned after `i` events.
        if faults.malformed_data_after_events == Some(i) {
            plan.push(Piece::Data(Bytes::from_static(sse::MALFORMED_EVENT)));
        }
        if let Some(err) = faults.stream_error.as_ref().filter(|e| e.after_events == i) {
            plan.push(Piece::Data(Bytes::from(sse::error_event(
                &err.error_type,
                err.effective_message(),
            ))));
            break;
        }
        if faults.disconnect_after_events == Some(i) {
            plan.push(Piece::Flush);
            plan.push(Piece::Abort);
            break;
        }
        if faults.stall_after_events == Some(i) {
            plan.push(Piece::Hold);
            break;
        }
        let Some(&end) = ends.get(i) else { break };
        if i > 0 && !delay.is_zero() {
            plan.push(Piece::Delay(delay));
        }
        plan.push(Piece::Data(stream.slice(start..end)));
        start = end;
    }
    cut(plan, faults)
}

/// The pause between the two halves of a cut character: long enough that the client
/// reads the first half on its own.
const UTF8_SPLIT_PAUSE: Duration = Duration::from_millis(20);

/// Cuts every data piece after the first byte of each multi-byte UTF-8 character.
pub(crate) fn split_utf8_chars(plan: VecDeque<Piece>) -> VecDeque<Piece> {
    let mut out = VecDeque::with_capacity(plan.len());
    for piece in plan {
        let Piece::Data(data) = piece else {
            out.push_back(piece);
            continue;
        };
        let mut start = 0;
        for (at, byte) in data.iter().enumerate() {
            // A lead byte of a multi-byte sequence with its continuation in this piece.
            if *byte >= 0xC0 && at + 1 < data.len() {
                out.push_back(Piece::Data(data.slice(start..at + 1)));
                out.push_back(Piece::Delay(UTF8_SPLIT_PAUSE));
                start = at + 1;
            }
        }
        out.push_back(Piece::Data(data.slice(start..)));
    }
    out
}

/// Plans the body of a faulty non-streaming (JSON) response: a stall holds it right
/// after the headers; chunking and character splits apply as to a stream.
pub(crate) fn json_pieces(body: Bytes, faults: &Faults) -> VecDeque<Piece> {
    if faults.stall_after_events.is_some() {
        return VecDeque::from([Piece::Hold]);
    }
    cut(vec![Piece::Data(body)], faults)
}

/// The write boundaries `faults` ask for: byte chunks, then characters cut in two.
fn cut(plan: Vec<Piece>, faults: &Faults) -> VecDeque<Piece> {
    let plan = chunk(plan, faults.chunk_bytes);
    if faults.split_utf8_chars {
        split_utf8_chars(plan)
    } else {
        plan
    }
}

/// Merges runs of adjacent data into one frame, or cuts them into `chunk_bytes`-sized
/// frames that are flushed one by one.
pub(crate) fn chunk(plan: Vec<Piece>, chunk_bytes: Option<usize>) -> VecDeque<Piece> {
    let mut out = VecDeque::with_capacity(plan.len());
    let mut run: Vec<Bytes> = Vec::new();
    let flush_run = |run: &mut Vec<Bytes>, out: &mut VecDeque<Piece>| {
        let data = match run.len() {
            0 => return,
            1 => run.pop().expect("one element"),
            _ => {
                let mut joined = BytesMut::with_capacity(run.iter().map(Bytes::len).sum());
                for part in run.drain(..) {
                    joined.extend_from_slice(&part);
                }
                joined.freeze()
            }
        };
        match chunk_bytes {
            Some(size) if size < data.len() => {
                let mut at = 0;
                while at < data.len() {
                    if at > 0 {
                        out.push_back(Piece::Flush);
                    }
                    let end = (at + size).min(data.len());
                    out.push_back(Piece::Data(data.slice(at..end)));
                    at = end;
                }
            }
            _ => out.push_back(Piece::Data(data)),
        }
    };
    for piece in plan {
        match piece {
            Piece::Data(data) => run.push(data),
            other => {
                flush_run(&mut run, &mut out);
                out.push_back(other);
            }
        }
    }
    flush_run(&mut run, &mut out);
    out
}
