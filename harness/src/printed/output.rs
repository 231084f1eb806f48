//! What a CLI printed: stdout split into NDJSON frames and the lines that break the
//! contract, and stderr kept at both ends.

use crate::divergence::{Divergence, Kind};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;
use std::fmt;

/// One JSON object the CLI printed on a line of its own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Frame {
    /// 0-based among the frames of the run.
    pub index: usize,
    /// 1-based stdout line.
    pub line: usize,
    /// Milliseconds from spawn to the arrival of the line's last byte.
    pub at_ms: u64,
    pub value: Value,
}

impl Frame {
    /// A divergence at this frame, showing it as what came.
    pub fn divergence(&self, kind: Kind, message: impl Into<String>) -> Divergence {
        Divergence::new(kind, message)
            .at_frame(self.index, self.line)
            .actual(self.value.clone())
    }

    /// A `result` frame: the end of a turn.
    pub fn is_result(&self) -> bool {
        self.value.get("type").and_then(Value::as_str) == Some("result")
    }
}

/// A stdout line that breaks the NDJSON contract.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BadLine {
    pub line: usize,
    pub at_ms: u64,
    pub problem: LineProblem,
    /// The start of the line, lossily decoded, for the report.
    pub excerpt: String,
}

/// What is wrong with a [`BadLine`]; written in reports as its sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineProblem {
    /// The stream ended without a newline after the last line (the line is still parsed).
    NoTrailingNewline,
    Empty,
    InvalidUtf8 {
        valid_up_to: usize,
    },
    /// Not JSON at all: the parser's message.
    NotJson(String),
    /// Valid JSON, but not an object: which kind it is.
    NotObject(&'static str),
    /// Over [`MAX_LINE`]: reported, not kept.
    TooLong {
        bytes: usize,
    },
}

impl fmt::Display for LineProblem {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            LineProblem::NoTrailingNewline => f.write_str("last line has no trailing newline"),
            LineProblem::Empty => f.write_str("empty line"),
            LineProblem::InvalidUtf8 { valid_up_to } => {
                write!(f, "invalid UTF-8 at byte {valid_up_to}")
            }
            LineProblem::NotJson(e) => write!(f, "not JSON: {e}"),
            LineProblem::NotObject(kind) => {
                write!(f, "a JSON {kind} where a JSON object was expected")
            }
            LineProblem::TooLong { bytes } => write!(
                f,
                "line is {bytes} bytes, over the {} MiB limit (not parsed)",
                MAX_LINE / 1024 / 1024
            ),
        }
    }
}

impl Serialize for LineProblem {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// stdout, split and kept.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Output {
    pub frames: Vec<Frame>,
    pub bad_lines: Vec<BadLine>,
    pub total_bytes: u64,
    /// stdout as printed, up to `RAW_LIMIT` bytes (saved beside a report).
    #[serde(skip)]
    pub raw: Vec<u8>,
    pub raw_truncated: bool,
}

/// A longer line is reported, not kept: a CLI printing 50 MB on one line must not
/// cost the harness 50 MB per trial.
pub const MAX_LINE: usize = 8 * 1024 * 1024;
const RAW_LIMIT: usize = 16 * 1024 * 1024;
/// Characters of a bad line shown in its report.
const EXCERPT: usize = 200;
/// Enough bytes for EXCERPT characters and one more, however wide they are.
const EXCERPT_BYTES: usize = 4 * (EXCERPT + 1);

/// Splits a byte stream into lines as it arrives.
#[derive(Debug, Default)]
pub struct LineSplitter {
    buf: Vec<u8>,
    /// Bytes of an over-long line dropped so far, while waiting for its end.
    dropped: Option<usize>,
    line: usize,
}

impl LineSplitter {
    pub fn push(&mut self, mut chunk: &[u8], at_ms: u64, out: &mut Output) {
        out.total_bytes += chunk.len() as u64;
        if out.raw.len() < RAW_LIMIT {
            let room = RAW_LIMIT - out.raw.len();
            out.raw.extend_from_slice(&chunk[..chunk.len().min(room)]);
            out.raw_truncated |= chunk.len() > room;
        } else {
            out.raw_truncated = true;
        }
        while let Some(nl) = chunk.iter().position(|&b| b == b'\n') {
            self.take(&chunk[..nl], at_ms, out, true);
            chunk = &chunk[nl + 1..];
        }
        if let Some(dropped) = &mut self.dropped {
            *dropped += chunk.len();
        } else if self.buf.len() + chunk.len() > MAX_LINE {
            self.dropped = Some(self.buf.len() + chunk.len());
            // Keep the start for the excerpt.
            self.buf.truncate(EXCERPT_BYTES);
        } else {
            self.buf.extend_from_slice(chunk);
        }
    }

    /// Ends the stream: a last line without a newline still counts, and is flagged.
    pub fn finish(&mut self, at_ms: u64, out: &mut Output) {
        if !self.buf.is_empty() || self.dropped.is_some() {
            self.take(&[], at_ms, out, false);
        }
    }

    fn take(&mut self, tail: &[u8], at_ms: u64, out: &mut Output, newline: bool) {
        self.line += 1;
        let line = self.line;
        if let Some(dropped) = self.dropped.take() {
            let total = dropped + tail.len();
            let excerpt = excerpt(&self.buf);
            self.buf.clear();
            out.bad_lines.push(BadLine {
                line,
                at_ms,
                problem: LineProblem::TooLong { bytes: total },
                excerpt,
            });
            return;
        }
        let owned;
        let bytes: &[u8] = if self.buf.is_empty() {
            tail
        } else {
            self.buf.extend_from_slice(tail);
            owned = std::mem::take(&mut self.buf);
            &owned
        };
        let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        if !newline {
            out.bad_lines.push(BadLine {
                line,
                at_ms,
                problem: LineProblem::NoTrailingNewline,
                excerpt: excerpt(bytes),
            });
        }
        let problem = match std::str::from_utf8(bytes) {
            Err(e) => Some(LineProblem::InvalidUtf8 {
                valid_up_to: e.valid_up_to(),
            }),
            Ok(text) if text.trim().is_empty() => Some(LineProblem::Empty),
            Ok(text) => match serde_json::from_str::<Value>(text) {
                Ok(value @ Value::Object(_)) => {
                    out.frames.push(Frame {
                        index: out.frames.len(),
                        line,
                        at_ms,
                        value,
                    });
                    None
                }
                Ok(other) => Some(LineProblem::NotObject(crate::frame::json_type(&other))),
                Err(e) => Some(LineProblem::NotJson(e.to_string())),
            },
        };
        if let Some(problem) = problem {
            out.bad_lines.push(BadLine {
                line,
                at_ms,
                problem,
                excerpt: excerpt(bytes),
            });
        }
    }
}

fn excerpt(bytes: &[u8]) -> String {
    let cut = &bytes[..bytes.len().min(EXCERPT_BYTES)];
    crate::text::clip(&String::from_utf8_lossy(cut), EXCERPT)
}

impl Output {
    /// Where a CLI stopped, for the message of a kill or a hang: a known entry names it.
    pub fn stopped_at(&self) -> String {
        match self.frames.last() {
            Some(f) => format!(
                "its last frame was frame {} ({})",
                f.index,
                crate::frame::frame_kind(&f.value)
            ),
            None => "it printed no frame".to_string(),
        }
    }

    /// Parses a whole stdout at once (fixtures, replays).
    pub fn parse(bytes: &[u8]) -> Output {
        let mut out = Output::default();
        let mut splitter = LineSplitter::default();
        splitter.push(bytes, 0, &mut out);
        splitter.finish(0, &mut out);
        out
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.raw).into_owned()
    }
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

/// Collects stderr as it arrives into a [`Stderr`]: the first `HEAD` bytes and the last
/// `TAIL` bytes, counting the rest.
#[derive(Debug, Default)]
pub struct StderrCapture {
    head: Vec<u8>,
    tail: Vec<u8>,
    total_bytes: u64,
}

impl StderrCapture {
    pub fn push(&mut self, chunk: &[u8]) {
        self.total_bytes += chunk.len() as u64;
        let room = Stderr::HEAD.saturating_sub(self.head.len());
        self.head.extend_from_slice(&chunk[..chunk.len().min(room)]);
        let rest = &chunk[chunk.len().min(room)..];
        if !rest.is_empty() {
            self.tail.extend_from_slice(rest);
            // Let the tail grow to twice its size before trimming, so a flood of small
            // chunks costs one `drain` per `TAIL` bytes rather than one per chunk.
            if self.tail.len() > 2 * Stderr::TAIL {
                self.tail.drain(..self.tail.len() - Stderr::TAIL);
            }
        }
    }

    pub fn finish(mut self) -> Stderr {
        if self.tail.len() > Stderr::TAIL {
            self.tail.drain(..self.tail.len() - Stderr::TAIL);
        }
        Stderr {
            head: String::from_utf8_lossy(&self.head).into_owned(),
            tail: String::from_utf8_lossy(&self.tail).into_owned(),
            total_bytes: self.total_bytes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_keep_line_numbers() {
        let out = Output::parse(b"{\"a\":1}\n{\"b\":2}\n");
        assert_eq!(out.frames.len(), 2);
        assert_eq!(out.frames[1].line, 2);
        assert_eq!(out.frames[1].index, 1);
        assert!(out.bad_lines.is_empty());
    }

    #[test]
    fn chunks_split_anywhere_give_the_same_frames() {
        let text = b"{\"type\":\"x\",\"t\":\"\xc3\xa9\"}\n{\"type\":\"y\"}\n";
        let whole = Output::parse(text);
        for size in 1..text.len() {
            let mut out = Output::default();
            let mut s = LineSplitter::default();
            for chunk in text.chunks(size) {
                s.push(chunk, 0, &mut out);
            }
            s.finish(0, &mut out);
            assert_eq!(out.frames, whole.frames, "chunk size {size}");
            assert!(out.bad_lines.is_empty());
        }
    }

    #[test]
    fn bad_lines_are_named_not_fatal() {
        let out = Output::parse(b"{\"a\":1}\nnot json\n\xff\xfe\n[1]\n\n{\"b\":2}\n");
        assert_eq!(out.frames.len(), 2);
        assert_eq!(out.frames[1].line, 6);
        let problems: Vec<(usize, &LineProblem)> =
            out.bad_lines.iter().map(|b| (b.line, &b.problem)).collect();
        assert_eq!(problems.len(), 4);
        assert_eq!(problems[0].0, 2);
        assert!(matches!(problems[0].1, LineProblem::NotJson(_)));
        assert_eq!(
            problems[1],
            (3, &LineProblem::InvalidUtf8 { valid_up_to: 0 })
        );
        assert_eq!(problems[2], (4, &LineProblem::NotObject("array")));
        assert_eq!(problems[3], (5, &LineProblem::Empty));
    }

    #[test]
    fn problems_read_as_sentences_in_reports() {
        let out = Output::parse(b"[1]\n\xff\n{}");
        let json = serde_json::to_value(&out.bad_lines).unwrap();
        let sentences: Vec<&str> = json
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["problem"].as_str().unwrap())
            .collect();
        assert_eq!(
            sentences,
            [
                "a JSON array where a JSON object was expected",
                "invalid UTF-8 at byte 0",
                "last line has no trailing newline"
            ]
        );
    }

    #[test]
    fn missing_final_newline_is_flagged_but_parsed() {
        let out = Output::parse(b"{\"a\":1}\n{\"b\":2}");
        assert_eq!(out.frames.len(), 2);
        assert_eq!(out.bad_lines.len(), 1);
        assert_eq!(out.bad_lines[0].line, 2);
        assert_eq!(out.bad_lines[0].problem, LineProblem::NoTrailingNewline);
    }

    #[test]
    fn huge_line_is_reported_without_being_kept() {
        let mut out = Output::default();
        let mut s = LineSplitter::default();
        s.push(b"{\"a\":1}\n{\"big\":\"", 0, &mut out);
        let block = vec![b'x'; 1024 * 1024];
        for _ in 0..10 {
            s.push(&block, 0, &mut out);
        }
        s.push(b"\"}\n{\"c\":3}\n", 0, &mut out);
        s.finish(0, &mut out);
        assert_eq!(out.frames.len(), 2);
        assert_eq!(out.frames[1].line, 3);
        assert_eq!(out.bad_lines.len(), 1);
        assert_eq!(out.bad_lines[0].line, 2);
        assert_eq!(
            out.bad_lines[0].problem,
            LineProblem::TooLong { bytes: 10485770 }
        );
        assert_eq!(
            out.bad_lines[0].problem.to_string(),
            "line is 10485770 bytes, over the 8 MiB limit (not parsed)"
        );
        assert!(s.buf.capacity() <= MAX_LINE + 2 * 1024 * 1024);
        let excerpt = &out.bad_lines[0].excerpt;
        assert_eq!(excerpt.chars().count(), EXCERPT + 1, "{excerpt}");
        assert!(excerpt.starts_with("{\"big\":\"xxx") && excerpt.ends_with('…'));
    }

    #[test]
    fn an_excerpt_counts_characters_however_wide() {
        let wide = "日".repeat(EXCERPT + 5);
        let out = Output::parse(format!("{wide}\n").as_bytes());
        assert_eq!(
            out.bad_lines[0].excerpt,
            format!("{}…", "日".repeat(EXCERPT))
        );
    }

    #[test]
    fn stderr_keeps_both_ends_of_a_flood() {
        let mut capture = StderrCapture::default();
        capture.push(b"first line\n");
        for _ in 0..1000 {
            capture.push(&[b'e'; 1024]);
        }
        capture.push(b"\nlast line\n");
        let stderr = capture.finish();
        assert_eq!(stderr.total_bytes, 11 + 1000 * 1024 + 11);
        assert_eq!(stderr.head.len(), Stderr::HEAD);
        assert_eq!(stderr.tail.len(), Stderr::TAIL);
        assert!(stderr.text().starts_with("first line\n"));
        assert!(stderr.text().contains("bytes of stderr dropped"));
        assert_eq!(stderr.last_lines(1), ["last line"]);
    }
}
