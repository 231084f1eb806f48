//! What a CLI printed on stdout, split into NDJSON frames and lines that are not.

use serde::{Deserialize, Serialize};
use serde_json::Value;

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

/// A stdout line that breaks the NDJSON contract.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BadLine {
    pub line: usize,
    pub at_ms: u64,
    pub problem: String,
    /// The start of the line, lossily decoded, for the report.
    pub excerpt: String,
}

/// stdout, split and kept.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
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
const EXCERPT: usize = 200;

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
            self.buf.truncate(EXCERPT);
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
                problem: format!(
                    "line is {total} bytes, over the {} MiB limit (not parsed)",
                    MAX_LINE / 1024 / 1024
                ),
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
                problem: "last line has no trailing newline".into(),
                excerpt: excerpt(bytes),
            });
        }
        let problem = match std::str::from_utf8(bytes) {
            Err(e) => Some(format!("invalid UTF-8 at byte {}", e.valid_up_to())),
            Ok(text) if text.trim().is_empty() => Some("empty line".to_string()),
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
                Ok(other) => Some(format!(
                    "a JSON {} where a JSON object was expected",
                    json_kind(&other)
                )),
                Err(e) => Some(format!("not JSON: {e}")),
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

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn excerpt(bytes: &[u8]) -> String {
    let cut = &bytes[..bytes.len().min(EXCERPT)];
    let mut s = String::from_utf8_lossy(cut).into_owned();
    if bytes.len() > EXCERPT {
        s.push('…');
    }
    s
}

impl Output {
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
        let problems: Vec<(usize, &str)> = out
            .bad_lines
            .iter()
            .map(|b| (b.line, b.problem.as_str()))
            .collect();
        assert_eq!(problems.len(), 4);
        assert_eq!(problems[0].0, 2);
        assert!(problems[0].1.starts_with("not JSON"));
        assert_eq!(problems[1], (3, "invalid UTF-8 at byte 0"));
        assert!(problems[2].1.contains("JSON array"));
        assert_eq!(problems[3], (5, "empty line"));
    }

    #[test]
    fn missing_final_newline_is_flagged_but_parsed() {
        let out = Output::parse(b"{\"a\":1}\n{\"b\":2}");
        assert_eq!(out.frames.len(), 2);
        assert_eq!(out.bad_lines.len(), 1);
        assert_eq!(out.bad_lines[0].line, 2);
        assert!(out.bad_lines[0].problem.contains("no trailing newline"));
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
        assert!(
            out.bad_lines[0].problem.contains("10485770 bytes"),
            "{}",
            out.bad_lines[0].problem
        );
        assert!(s.buf.capacity() <= MAX_LINE + 2 * 1024 * 1024);
    }
}
