//! What one run left behind, as the comparison sees it: from a finished trial or from a
//! capture folder.

use crate::normalize::{redact_sandbox, redact_str};
use crate::printed::output::{BadLine, LineProblem, Output};
use crate::runner::{Exit, Termination, Trial};
use crate::store::StoreError;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::Path;

/// One run, as recorded: what the comparison looks at.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Recorded {
    /// The JSON objects the CLI printed on stdout, in order.
    pub frames: Vec<Value>,
    pub exit: Exit,
    /// stdout lines that are not JSON objects (all of stdout with `--output-format text`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub non_json: Vec<String>,
    /// Requests the CLI sent to the model (background requests left out), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<usize>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub stderr: String,
}

impl Recorded {
    /// From stdout as printed and how the process ended.
    pub fn from_stdout(stdout: &[u8], exit: Exit) -> Recorded {
        let out = Output::parse(stdout);
        Recorded {
            non_json: non_json(&out),
            frames: out.frames.into_iter().map(|f| f.value).collect(),
            exit,
            ..Recorded::default()
        }
    }

    /// From a finished trial, with its sandbox paths written as `$WORKSPACE` / `$HOME`
    /// (and the rest of its sandbox folder's name as `<sandbox>`) so two trials' outputs
    /// compare.
    pub fn from_trial(t: &Trial) -> Recorded {
        let requests = t
            .journal
            .iter()
            .filter(|e| crate::runner::check::is_scripted(e))
            .count();
        Recorded {
            frames: t
                .output
                .frames
                .iter()
                .map(|f| redact_sandbox(&f.value, &t.vars))
                .collect(),
            exit: t.exit.clone(),
            non_json: non_json(&t.output)
                .into_iter()
                .map(|l| redact_str(&l, &t.vars))
                .collect(),
            requests: Some(requests),
            stderr: redact_str(&t.stderr.text(), &t.vars),
        }
    }

    /// From a capture folder: `NAME.stdout.jsonl`, `NAME.exit_code`, and when present
    /// `NAME.stderr.txt` and `NAME.requests.jsonl` (one line per request).
    pub fn from_capture(dir: &Path, name: &str) -> Result<Recorded, StoreError> {
        let read = |ext: &str| std::fs::read(dir.join(format!("{name}.{ext}")));
        let stdout = read("stdout.jsonl").unwrap_or_default();
        let code = read("exit_code").map_err(|source| StoreError::ExitCodeUnreadable {
            dir: dir.to_path_buf(),
            name: name.to_string(),
            source,
        })?;
        let code = String::from_utf8_lossy(&code).trim().to_string();
        let exit_code = code.parse::<i32>().map_err(|_| StoreError::NotAnExitCode {
            dir: dir.to_path_buf(),
            name: name.to_string(),
            code: code.clone(),
        })?;
        let exit = Exit {
            code: Some(exit_code),
            ..Exit::default()
        };
        let mut rec = Recorded::from_stdout(&stdout, exit);
        rec.stderr = read("stderr.txt")
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default();
        rec.requests = read("requests.jsonl").ok().map(|b| {
            String::from_utf8_lossy(&b)
                .lines()
                .filter(|l| !l.trim().is_empty())
                .filter(|l| {
                    let v: Value = serde_json::from_str(l).unwrap_or(Value::Null);
                    !is_title_request(v.get("body").unwrap_or(&v))
                })
                .count()
        });
        Ok(rec)
    }

    /// The first line of stderr that says something, trimmed.
    pub fn stderr_headline(&self) -> Option<&str> {
        self.stderr.lines().map(str::trim).find(|l| !l.is_empty())
    }

    /// The harness killed it at the scenario's timeout.
    pub fn killed_at_timeout(&self) -> bool {
        self.exit.termination == Termination::Timeout
    }
}

/// Claude Code's background session-title request (no tools, an output schema with a
/// `title` property), which the harness's stub answers by a built-in rule: not part of
/// the conversation, so not counted.
fn is_title_request(body: &Value) -> bool {
    let no_tools = body
        .get("tools")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty);
    let title = body
        .pointer("/output_config/format/schema/properties/title")
        .is_some();
    no_tools && title
}

fn non_json(out: &Output) -> Vec<String> {
    out.bad_lines
        .iter()
        .filter(|b| !is_missing_final_newline(b))
        .map(|b| b.excerpt.clone())
        .collect()
}

/// The last line lacks its newline: a flaw of the stream, not a line of other output.
fn is_missing_final_newline(b: &BadLine) -> bool {
    b.problem == LineProblem::NoTrailingNewline
}
