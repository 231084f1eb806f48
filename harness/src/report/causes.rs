//! What to fix first: a run's failed trials grouped by cause, the most trials first, each
//! with an example trial and the command that runs it again.
//!
//! A trial's cause is its first divergence that is not known and not a cascade (a frame
//! that only fails for a capture an earlier frame did not give, `depends_on`); a trial
//! failing only on the protocol inventory has each protocol finding as a cause.

use crate::divergence::{Divergence, Kind};
use crate::plan::launch::shell_quote;
use crate::runner::{Status, Trial};
use serde::Serialize;

/// One cause and the failed trials it is the cause of.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cause {
    /// What changed: the divergence's kind, frame kind and path, expected -> found.
    pub what: String,
    /// `(scenario, target)` of its trials, in run order.
    pub trials: Vec<(String, String)>,
    /// The command that runs its first trial again.
    pub rerun: String,
}

impl Cause {
    /// `3 trials: CAUSE; e.g. basics/x (mycli): streamcheck run ...`
    pub fn line(&self) -> String {
        let (scenario, target) = &self.trials[0];
        let n = self.trials.len();
        let s = if n == 1 { "" } else { "s" };
        format!(
            "{n} trial{s}: {}; e.g. {scenario} ({target}): {}",
            self.what, self.rerun
        )
    }

    /// [`Cause::line`] for markdown.
    pub fn line_md(&self) -> String {
        let (scenario, target) = &self.trials[0];
        let n = self.trials.len();
        let s = if n == 1 { "" } else { "s" };
        format!(
            "**{n} trial{s}**: {}; e.g. `{scenario} ({target})`: `{}`",
            self.what, self.rerun
        )
    }
}

/// The causes of `trials`' failures, the most trials first (ties in first-seen order).
pub fn ranked(trials: &[Trial]) -> Vec<Cause> {
    let mut out: Vec<Cause> = Vec::new();
    for t in trials.iter().filter(|t| t.status == Status::Failed) {
        for d in causes_of(t) {
            let what = describe(d);
            let who = (t.key.scenario.to_string(), t.key.target.to_string());
            match out.iter_mut().find(|c| c.what == what) {
                Some(c) if !c.trials.contains(&who) => c.trials.push(who),
                Some(_) => {}
                None => out.push(Cause {
                    what,
                    rerun: rerun(&t.key.scenario, &t.key.target),
                    trials: vec![who],
                }),
            }
        }
    }
    out.sort_by_key(|c| std::cmp::Reverse(c.trials.len()));
    out
}

/// The divergences that are a failed trial's cause.
fn causes_of(t: &Trial) -> Vec<&Divergence> {
    let open: Vec<&Divergence> = (t.divergences.iter())
        .filter(|d| d.known.is_none() && d.depends_on.is_none())
        .collect();
    match open.iter().find(|d| d.kind != Kind::Protocol) {
        Some(d) => vec![*d],
        None => open,
    }
}

/// A divergence as a cause: its kind, the frame kind and path it is at, expected -> found
/// when both are short values, else its message.
fn describe(d: &Divergence) -> String {
    let kind_of = |v: &serde_json::Value| {
        let part = |k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_string);
        [part("type"), part("subtype")]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join("/")
    };
    let short = |v: &Option<serde_json::Value>| {
        v.as_ref()
            .filter(|v| !v.is_object() && !v.is_array())
            .map(|v| crate::text::clip(&v.to_string(), 60))
    };
    let mut cause = d.kind.to_string();
    let frame = d.actual.as_ref().map(kind_of).unwrap_or_default();
    if !frame.is_empty() && d.frame.is_some() {
        cause.push_str(&format!(" in {frame}"));
    }
    if let Some(path) = &d.path {
        cause.push_str(&format!(" at `{path}`"));
    }
    let found = match (&d.actual, &d.path) {
        (Some(frame), Some(path)) if d.frame.is_some() => value_at(frame, path).cloned(),
        _ => d.actual.clone(),
    };
    if let (Some(want), Some(got)) = (short(&d.expected), short(&found)) {
        cause.push_str(&format!(": {want} -> {got}"));
    } else if d.path.is_none() && (frame.is_empty() || d.frame.is_none()) {
        cause.push_str(&format!(": {}", crate::text::clip(&d.message, 120)));
    }
    cause
}

/// `streamcheck run --filter <scenario> --target <target> --jobs 1`; a `command:` target
/// (a `--target-command` executable) is named by its path again.
pub fn rerun(scenario: &str, target: &str) -> String {
    let target = match target.strip_prefix("command:") {
        Some(path) => format!("--target-command {}", shell_quote(path)),
        None => format!("--target {}", shell_quote(target)),
    };
    format!(
        "streamcheck run --filter {} {target} --jobs 1",
        shell_quote(scenario)
    )
}

/// The value at a divergence path (`$.message.content[0].text`) inside `v`.
fn value_at<'a>(v: &'a serde_json::Value, path: &str) -> Option<&'a serde_json::Value> {
    let rest = path.strip_prefix('$')?;
    let mut here = v;
    for part in rest.split('.').filter(|p| !p.is_empty()) {
        let mut pieces = part.split('[');
        let key = pieces.next().unwrap_or_default();
        if !key.is_empty() {
            here = here.get(key)?;
        }
        for index in pieces {
            here = here.get(index.trim_end_matches(']').parse::<usize>().ok()?)?;
        }
    }
    Some(here)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn failed(id: &str, divergences: serde_json::Value) -> Trial {
        serde_json::from_value(json!({
            "scenario": id, "scenario_path": "", "description": "", "target": "mycli",
            "target_version": "1", "status": "failed", "duration_ms": 1, "command_line": "",
            "exit": {"code": 0, "termination": "exited"}, "divergences": divergences
        }))
        .unwrap()
    }

    #[test]
    fn causes_are_ranked_cascades_and_known_ones_left_out_protocol_only_named() {
        let tools = json!({"kind": "field_mismatch", "message": "m", "frame": 0, "path": "$.tools",
            "expected": "Bash", "actual": {"type": "system", "subtype": "init", "tools": []}});
        let cascade = json!({"kind": "field_mismatch", "message": "frame 1 depends on `sid`",
            "frame": 1, "path": "$.session_id", "depends_on": "sid"});
        let known = json!({"kind": "exit_code", "message": "exit", "known": "why"});
        let gone = json!({"kind": "protocol", "message": "gone key `result/success.zzz` (string)"});
        let uuid = json!({"kind": "protocol", "message": "gone key `assistant.aaa` (string)"});
        let trials = [
            failed("s/a", json!([cascade, tools, gone])),
            failed("s/b", json!([known, tools])),
            failed("s/c", json!([gone, uuid])),
        ];
        let causes = ranked(&trials);
        let whats: Vec<&str> = causes.iter().map(|c| c.what.as_str()).collect();
        assert_eq!(causes[0].trials.len(), 2, "{whats:?}");
        assert!(
            whats[0].starts_with("field mismatch in system/init at `$.tools`"),
            "{whats:?}"
        );
        assert!(
            !whats
                .iter()
                .any(|w| w.contains("session_id") || w.contains("exit")),
            "{whats:?}"
        );
        // s/c fails on the protocol only: each finding is a cause, in its own order.
        assert!(whats.contains(&"protocol change: gone key `result/success.zzz` (string)"));
        assert!(whats.contains(&"protocol change: gone key `assistant.aaa` (string)"));
        assert_eq!(
            causes[0].line(),
            format!("2 trials: {}; e.g. s/a (mycli): streamcheck run --filter s/a --target mycli --jobs 1", whats[0])
        );
    }
}
