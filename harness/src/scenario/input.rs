//! How a scenario drives the CLI: output format, stdin lines, a signal, files to write.

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// What the CLI is asked to print; a dialect's default command line needs it too.
pub use crate::dialect::OutputFormat;

/// `{send: TERM, after_frames: 2}`: signal the CLI once it printed that many frames.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SignalAt {
    pub send: Signal,
    #[serde(default)]
    pub after_frames: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum Signal {
    Term,
    Int,
    Hup,
}

impl Signal {
    pub fn number(self) -> i32 {
        match self {
            Signal::Term => libc::SIGTERM,
            Signal::Int => libc::SIGINT,
            Signal::Hup => libc::SIGHUP,
        }
    }
}

/// How the harness reads the CLI's stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StdoutReader {
    /// As it comes, 64 KiB at a time.
    #[default]
    Fast,
    /// A consumer that parses slowly: at most [`SLOW_READ_BYTES`] per read, then a pause
    /// of [`SLOW_READ_PAUSE`]. The pipe fills and the CLI's writes wait; what it prints
    /// must still arrive whole (the same expectation and invariants hold).
    Slow,
}

/// A slow reader's read size and the pause after each read: 4 KiB per 10 ms, about
/// 400 KB/s, far below what the CLI writes a large answer at.
pub const SLOW_READ_BYTES: usize = 4096;
pub const SLOW_READ_PAUSE: std::time::Duration = std::time::Duration::from_millis(10);

/// When to close stdin: `immediately` (default), or `{after_results: N}`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum CloseStdin {
    /// `immediately`: right after the last line is written.
    #[default]
    #[serde(deserialize_with = "immediately")]
    Immediately,
    /// Keep stdin open until this many `result` frames came (or the CLI exits).
    AfterResults { after_results: usize },
}

fn immediately<'de, D: Deserializer<'de>>(d: D) -> Result<(), D::Error> {
    let word = String::deserialize(d)?;
    if word == "immediately" {
        Ok(())
    } else {
        Err(serde::de::Error::custom(format!(
            "close_stdin: `{word}`: write `immediately` or `{{after_results: N}}`"
        )))
    }
}

/// A line for stdin: a JSON frame, `{raw: "..."}` for a line written as is (malformed
/// input), or `{after_results: N}` to wait until N `result` frames came before writing
/// the lines after it (a real second turn, sent once the first one ended).
#[derive(Debug, Clone, PartialEq, JsonSchema)]
#[schemars(untagged)]
pub enum StdinLine {
    Raw { raw: String },
    AfterResults { after_results: usize },
    Frame(Value),
}

impl<'de> Deserialize<'de> for StdinLine {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let v = Value::deserialize(d)?;
        if let Value::Object(map) = &v {
            if map.len() == 1 {
                if let Some(raw) = map.get("raw") {
                    let raw = raw
                        .as_str()
                        .ok_or_else(|| Error::custom("`raw` takes a string"))?;
                    return Ok(StdinLine::Raw {
                        raw: raw.to_string(),
                    });
                }
                if let Some(n) = map.get("after_results") {
                    let n = n.as_u64().ok_or_else(|| {
                        Error::custom("`after_results` takes a number of result frames")
                    })?;
                    return Ok(StdinLine::AfterResults {
                        after_results: n as usize,
                    });
                }
            }
        }
        Ok(StdinLine::Frame(v))
    }
}

impl StdinLine {
    /// The line to write, or `None` for a pause.
    pub fn to_line(&self) -> Option<String> {
        match self {
            StdinLine::Raw { raw } => Some(raw.clone()),
            StdinLine::Frame(v) => Some(v.to_string()),
            StdinLine::AfterResults { .. } => None,
        }
    }

    pub(crate) fn is_user_turn(&self) -> bool {
        matches!(self, StdinLine::Frame(v) if v.get("type").and_then(Value::as_str) == Some("user"))
    }
}

/// A file's content: text as is, or any other YAML value written as JSON (notebooks).
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum FileContent {
    Text(String),
    Json(Value),
}

impl FileContent {
    pub fn bytes(&self) -> Vec<u8> {
        match self {
            FileContent::Text(s) => s.clone().into_bytes(),
            FileContent::Json(v) => serde_json::to_vec_pretty(v).expect("a JSON value serializes"),
        }
    }
}
