//! A skip's reason checked against the run that was meant to show it: confirmed, the
//! evidence; not, what the run showed instead.

use super::trial::Trial;
use crate::pattern::Captures;
use crate::printed::output::Frame;
use crate::scenario::SkipReason;
use serde_json::Value;

/// What in a run shows a skip's reason holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evidence(String);

impl std::fmt::Display for Evidence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// What in a run shows a skip's reason does not hold, or that the run shows nothing either
/// way (which does not confirm it either).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct NotShown(String);

/// The evidence that `reason` holds in `trial`'s run, or what shows it does not.
pub fn confirm(reason: &SkipReason, trial: &Trial) -> Result<Evidence, NotShown> {
    match reason {
        SkipReason::FlagRefused(flag) => flag_refused(flag, trial),
        SkipReason::ToolAbsent(tool) => tool_absent(tool, trial),
        SkipReason::FrameAbsent(pattern) => {
            let frames = &trial.output.frames;
            let caps = Captures::new();
            if let Some(f) = frames
                .iter()
                .find(|f| pattern.is_match(&f.value, &trial.vars, &caps))
            {
                return Err(NotShown(format!(
                    "frame {} matches {}: {}",
                    f.index,
                    pattern.source(),
                    crate::divergence::compact(&f.value)
                )));
            }
            if !frames.iter().any(Frame::is_result) {
                return Err(NotShown(format!(
                    "the run printed no result ({}), so it shows nothing about the frames of a turn",
                    trial.exit
                )));
            }
            Ok(Evidence(format!(
                "none of the {} frames matches {}",
                frames.len(),
                pattern.source()
            )))
        }
    }
}

/// Refused: the CLI exited by itself, not 0, and a line it printed names every word of
/// `flag` (the option, and the value refused if one is given).
fn flag_refused(flag: &str, trial: &Trial) -> Result<Evidence, NotShown> {
    let exit = &trial.exit;
    if exit.termination.by_harness() {
        return Err(NotShown(format!(
            "the CLI ran until it was {exit}: it did not refuse {flag}"
        )));
    }
    if exit.code == Some(0) {
        return Err(NotShown(format!(
            "the CLI took {flag}: it exited 0 after {} frame(s)",
            trial.output.frames.len()
        )));
    }
    let words: Vec<&str> = flag.split_whitespace().collect();
    let stderr = trial.stderr.text();
    let stdout = String::from_utf8_lossy(&trial.output.raw);
    let printed = stderr.lines().chain(stdout.lines());
    let naming = printed
        .map(str::trim)
        .find(|line| words.iter().all(|w| line.contains(w)));
    match naming {
        Some(line) => Ok(Evidence(format!(
            "exit {exit}: {}",
            crate::text::clip(line, 200)
        ))),
        None => {
            let first = stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            Err(NotShown(format!(
                "the CLI exited {exit} without naming {flag}{}",
                if first.is_empty() {
                    String::new()
                } else {
                    format!(": {}", crate::text::clip(first.trim(), 200))
                }
            )))
        }
    }
}

/// Absent: neither a `system/init` frame's `tools` nor a request's `tools[].name` has it,
/// and at least one of them was seen.
fn tool_absent(tool: &str, trial: &Trial) -> Result<Evidence, NotShown> {
    let inits: Vec<&Frame> = (trial.output.frames.iter())
        .filter(|f| is_init(&f.value) && f.value.get("tools").is_some_and(Value::is_array))
        .collect();
    for f in &inits {
        if names(&f.value["tools"]).any(|n| n == tool) {
            return Err(NotShown(format!(
                "{tool} is offered in system/init.tools (frame {})",
                f.index
            )));
        }
    }
    let requests: Vec<&Value> = (trial.journal.iter())
        .map(|e| e.body())
        .filter(|b| b.get("tools").is_some_and(Value::is_array))
        .collect();
    for (i, body) in requests.iter().enumerate() {
        if names(&body["tools"]).any(|n| n == tool) {
            return Err(NotShown(format!(
                "{tool} is offered in the tools of request {i} to the API"
            )));
        }
    }
    if inits.is_empty() && requests.is_empty() {
        return Err(NotShown(format!(
            "the run shows nothing about {tool}: no system/init frame with tools and no request with tools ({})",
            trial.exit
        )));
    }
    Ok(Evidence(format!(
        "not in system/init.tools ({} init frame(s)) nor in the tools of {} request(s)",
        inits.len(),
        requests.len()
    )))
}

fn is_init(v: &Value) -> bool {
    v.get("type").and_then(Value::as_str) == Some("system")
        && v.get("subtype").and_then(Value::as_str) == Some("init")
}

/// Tool names in a list of names (`init.tools`) or of definitions (`tools[].name`).
fn names(list: &Value) -> impl Iterator<Item = &str> {
    (list.as_array().into_iter().flatten())
        .filter_map(|t| t.as_str().or_else(|| t.get("name").and_then(Value::as_str)))
}
