//! The TypeScript Agent SDK as a host (`consume --sdk typescript`): its `query()` with
//! `pathToClaudeCodeExecutable` pointed at `streamcheck replay-cli --trial T [--probe P]`
//! (targets/claude-code/sdk/host.mjs). A feed passes when `query()` ends as the recorded
//! CLI did (completed; or threw for an error result or the recorded exit code, after
//! yielding it) and the last result it yielded is the feed's last `result` frame.

use super::error::ConsumeError;
use super::feed::Failure;
use super::probe::{Feed, Probe};
use super::worker::Serve;
use crate::store::saved::SavedTrial;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::time::Duration;

/// Why replay-cli cannot stand in for the CLI of a trial under `query()`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "reason")]
pub enum NotReplayable {
    /// The trial was not read from a file replay-cli can be given.
    NoFile,
    /// The recorded client sent a control request `query()` does not send unasked
    /// (`interrupt`, `set_permission_mode`, ...): replay-cli would wait for it.
    ClientRequest { subtype: String },
    /// The recorded client sent `initialize` more than once; `query()` sends it once.
    RepeatedInitialize { times: usize },
    /// The recorded CLI answered a control request the client wrote as a raw line (an
    /// edge case's malformed envelope), which `query()` never sends: replay-cli would wait
    /// for it.
    RawRequest { request_id: String },
}

impl std::fmt::Display for NotReplayable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotReplayable::NoFile => write!(f, "no saved trial file to replay"),
            NotReplayable::ClientRequest { subtype } => write!(
                f,
                "the recorded client sent a `{subtype}` control_request, which query() does not send unasked"
            ),
            NotReplayable::RepeatedInitialize { times } => write!(
                f,
                "the recorded client sent `initialize` {times} times, query() sends it once"
            ),
            NotReplayable::RawRequest { request_id } => write!(
                f,
                "the recorded CLI answered a control request the client wrote raw (request_id {request_id}), which query() does not send"
            ),
        }
    }
}

/// The requests `query()` sends by itself: the handshake.
const SENT_BY_QUERY: &[&str] = &["initialize"];

/// Whether `saved` (read from `file`) can be replayed under `query()`.
pub fn replayable(saved: &SavedTrial, file: Option<PathBuf>) -> Result<PathBuf, NotReplayable> {
    let file = file.ok_or(NotReplayable::NoFile)?;
    let file = file.canonicalize().unwrap_or(file);
    let sent: Vec<(&str, &str)> = (saved.client.iter())
        .flat_map(|c| c.requests.iter())
        .map(|r| (r.id.as_str(), r.subtype.as_str()))
        .collect();
    if let Some((_, subtype)) = sent.iter().find(|(_, s)| !SENT_BY_QUERY.contains(s)) {
        return Err(NotReplayable::ClientRequest {
            subtype: subtype.to_string(),
        });
    }
    if sent.len() > 1 {
        return Err(NotReplayable::RepeatedInitialize { times: sent.len() });
    }
    // Every recorded answer must be to a request the client log holds: the rest answered
    // lines written raw.
    let answers = (saved.stdout.lines())
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|f| f["type"] == "control_response");
    for answer in answers {
        let id = &answer["response"]["request_id"];
        if !sent.iter().any(|(sid, _)| id.as_str() == Some(*sid)) {
            return Err(NotReplayable::RawRequest {
                request_id: id.to_string(),
            });
        }
    }
    Ok(file)
}

/// What host.mjs answers for one trial.
#[derive(Debug, Deserialize)]
struct Answer {
    ok: bool,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    result: Option<Value>,
    #[serde(default)]
    messages: usize,
}

/// How `query()` ended.
#[derive(Debug, PartialEq)]
enum Ended {
    Completed,
    /// It threw for an `is_error` result (after yielding it).
    ErrorResult,
    /// It threw for the CLI's exit code.
    Exit(i32),
    /// It threw anything else, or did not end in time.
    Other(String),
}

fn ended(a: &Answer) -> Ended {
    let Some(error) = a.error.as_deref().filter(|_| !a.ok) else {
        return Ended::Completed;
    };
    if error.starts_with("Claude Code returned an error result") {
        return Ended::ErrorResult;
    }
    let code = (error.split("process exited with code ").nth(1))
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok());
    match code {
        Some(code) => Ended::Exit(code),
        None => Ended::Other(error.to_string()),
    }
}

/// The last `result` of a feed as host.mjs reports one.
fn last_result(feed: &Feed) -> Option<Value> {
    let lines = feed.text_lines();
    let frame = lines.iter().rev().find_map(|l| {
        serde_json::from_str::<Value>(l)
            .ok()
            .filter(|f| f["type"] == "result")
    })?;
    Some(json!({
        "subtype": frame["subtype"],
        "is_error": frame["is_error"],
        "result": frame.get("result").cloned().unwrap_or(Value::Null),
        "session_id": frame["session_id"],
    }))
}

/// The trial at `file` (which exited `exit_code`) played under `query()`, changed by
/// `probe` into `feed`: `Ok(messages yielded)`, or how the SDK failed it.
pub async fn feed(
    serve: &Serve,
    file: &std::path::Path,
    exit_code: Option<i32>,
    probe: Option<Probe>,
    feed: &Feed,
    timeout: Duration,
) -> Result<Result<usize, Failure>, ConsumeError> {
    let cwd = std::env::temp_dir();
    let request = json!({
        "trial": file,
        "probe": probe.map(Probe::name),
        "cwd": cwd,
        "timeout_ms": timeout.as_millis() as u64,
    });
    // The host's own timeout ends query(); this one catches a host that hangs itself.
    let Some(answer) = serve
        .ask::<Answer>(&request, &[], false, timeout + Duration::from_secs(10))
        .await?
    else {
        return Ok(Err(Failure::Timeout {
            seconds: timeout.as_secs(),
        }));
    };
    let want = last_result(feed);
    let how = ended(&answer);
    let want_error = want.as_ref().is_some_and(|w| w["is_error"] == true);
    let end_ok = match &how {
        Ended::Completed => true,
        Ended::ErrorResult => want_error,
        Ended::Exit(code) => Some(*code) == exit_code && *code != 0,
        Ended::Other(_) => false,
    };
    if !end_ok {
        return Ok(Err(Failure::Host {
            why: format!(
                "query() threw after {} message(s): {}",
                answer.messages,
                answer.error.unwrap_or_default()
            ),
        }));
    }
    if answer.result != want {
        let show = |v: &Option<Value>| v.as_ref().map_or("none".into(), Value::to_string);
        return Ok(Err(Failure::Host {
            why: format!(
                "query() yielded result {}, the feed's is {}",
                show(&answer.result),
                show(&want)
            ),
        }));
    }
    Ok(Ok(answer.messages))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(ok: bool, error: &str) -> Answer {
        Answer {
            ok,
            error: Some(error.into()),
            result: None,
            messages: 0,
        }
    }

    #[test]
    fn how_query_ended_is_read_from_what_it_threw() {
        assert_eq!(ended(&answer(true, "ignored")), Ended::Completed);
        assert_eq!(
            ended(&answer(false, "Claude Code returned an error result: boom")),
            Ended::ErrorResult
        );
        assert_eq!(
            ended(&answer(
                false,
                "Claude Code process exited with code 2\nstderr"
            )),
            Ended::Exit(2)
        );
        assert!(matches!(
            ended(&answer(false, "TypeError: x")),
            Ended::Other(_)
        ));
    }

    #[test]
    fn the_wanted_result_is_the_feeds_last() {
        let lines = [
            r#"{"type":"result","subtype":"success","is_error":false,"result":"a","session_id":"s"}"#,
            r#"{"type":"result","subtype":"error_max_turns","is_error":true,"session_id":"s"}"#,
        ]
        .map(str::to_string);
        let want = last_result(&Feed::lines(&lines)).unwrap();
        assert_eq!(want["subtype"], "error_max_turns");
        assert_eq!(want["result"], Value::Null);
        assert_eq!(last_result(&Feed::lines(&["{}".to_string()])), None);
    }
}
