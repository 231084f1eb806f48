//! A trial against the protocol inventory: a trial's output observed and checked against
//! its dialect's inventory, and a run's findings grouped.

use crate::divergence::{Divergence, Kind};
use crate::protocol::check::{self, Change, Direction, Finding, What};
use crate::protocol::observe::Observed;
use crate::protocol::{parity, requests, ProtocolCheck};
use crate::runner::trial::Trial;

/// Whether a trial's command asked for other output than stream-json: the last
/// `--output-format` of some run (a multi-run trial has a line per run) is `text` or
/// `json`. Only stream-json output is the protocol; a command not known (a trial read
/// back from its saved output alone) is taken as stream-json.
pub fn other_output(command_line: &str) -> bool {
    command_line.lines().any(|run| {
        let words: Vec<&str> = run.split_whitespace().collect();
        let mut last = None;
        for (i, w) in words.iter().enumerate() {
            if *w == "--output-format" {
                last = words.get(i + 1).copied();
            } else if let Some(v) = w.strip_prefix("--output-format=") {
                last = Some(v);
            }
        }
        last.is_some_and(|v| v.trim_matches(['\'', '"']) != "stream-json")
    })
}

/// What one trial printed: its frames and the client's lines.
pub fn observed(trial: &Trial) -> Observed {
    let written = trial.written();
    Observed::of(
        &trial.key.scenario,
        trial.output.frames.iter().map(|f| &f.value),
        &written,
    )
}

/// What one trial sent to the model API (every request the stub journaled).
pub fn requested(trial: &Trial) -> Observed {
    requests::observe(&trial.key.scenario, &trial.journal)
}

/// Checks a finished run of a trial against its dialect's inventories at the release it is
/// held to, what it printed and what it sent to the model API: the findings go to
/// `trial.protocol`, those the check's policy fails on become divergences. An inventory
/// that does not load fails the trial.
pub fn check_trial(check: &ProtocolCheck, trial: &mut Trial) {
    if check.inventories.is_empty() || trial.key.dialect.is_none() {
        return;
    }
    let policy = check.policy;
    trial.protocol_policy = Some(policy);
    if other_output(&trial.command_line) {
        return;
    }
    for against in &check.inventories {
        let direction = against.direction;
        let observed = match direction {
            Direction::Printed => observed(trial),
            Direction::Request => requested(trial),
        };
        let file = against.file.display().to_string();
        let findings = match &against.loaded {
            Err(e) => {
                let which = match direction {
                    Direction::Printed => "protocol",
                    Direction::Request => "request",
                };
                trial.divergences.push(Divergence::new(
                    Kind::Protocol,
                    format!("the {which} inventory does not load: {e}"),
                ));
                continue;
            }
            Ok(None) => vec![Finding::new(
                Change::Unchecked,
                What::Inventory { file, from: None },
            )],
            Ok(Some(inv)) => match semver::Version::parse(trial.expect_version()) {
                Ok(release) => check::check(inv, &file, &release, &trial.key.scenario, &observed),
                Err(_) => vec![Finding::new(
                    Change::Unchecked,
                    What::Inventory {
                        file,
                        from: Some(format!("releases, not `{}`", trial.expect_version())),
                    },
                )],
            },
        };
        for mut f in findings {
            f.direction = direction;
            if f.fails(policy) {
                trial
                    .divergences
                    .push(Divergence::new(Kind::Protocol, f.to_string()));
            }
            trial.protocol.push(f);
        }
    }
}

/// Each trial's name in a run's protocol lines: its scenario, with its target when the run
/// has several.
fn names(trials: &[Trial]) -> Vec<String> {
    let targets: std::collections::BTreeSet<&str> =
        trials.iter().map(|t| t.key.target.as_str()).collect();
    (trials.iter())
        .map(|t| match targets.len() {
            1 => t.key.scenario.to_string(),
            _ => format!("{} ({})", t.key.scenario, t.key.target),
        })
        .collect()
}

/// A run's findings, each once with the trials it was seen in; those of the parity table
/// ([`parity_table`]) left out.
pub fn run_findings(trials: &[Trial]) -> Vec<(Finding, Vec<String>)> {
    let kept: Vec<Vec<Finding>> = (trials.iter())
        .map(|t| {
            let own = t.protocol.iter();
            own.filter(|f| !parity::in_table(t.protocol_policy, f))
                .cloned()
                .collect()
        })
        .collect();
    let names = names(trials);
    check::group(
        names
            .iter()
            .zip(&kept)
            .map(|(n, f)| (n.as_str(), f.as_slice())),
    )
}

/// The parity table of a run's trials checked under `protocol = "parity"`.
pub fn parity_table(trials: &[Trial]) -> Vec<parity::Row> {
    let names = names(trials);
    parity::table(
        (trials.iter().zip(&names))
            .map(|(t, n)| (n.as_str(), t.protocol_policy, t.protocol.as_slice())),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::Dialect;
    use crate::protocol::{Inventory, Policy};
    use serde_json::{json, Value};
    use std::path::Path;
    use stub_api::{Answer, JournalEntry};

    fn request(body: &Value) -> JournalEntry {
        let headers = [
            ("anthropic-beta", "claude-code-20250219"),
            ("x-api-key", "[redacted]"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .into();
        JournalEntry::new(
            0,
            "POST".into(),
            "/v1/messages".into(),
            Some("beta=true".into()),
            headers,
            body.to_string(),
            None,
            0,
            Answer::Step { step: 0, repeat: 0 },
            200,
        )
    }

    /// A turn carrying Bash and an MCP fixture tool whose schema `lookup` gives.
    fn turn(lookup: Value) -> Value {
        json!({
            "model": "m", "stream": true, "max_tokens": 8, "metadata": {"user_id": "u"},
            "messages": [{"role": "user", "content": "hi"}],
            "tools": [
                {"name": "Bash", "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}},
                {"name": "mcp__fixture__lookup", "input_schema": lookup}
            ]
        })
    }

    fn lookup() -> Value {
        json!({"type": "object", "properties": {"q": {"type": "string"}}})
    }

    fn trial(dialect: Dialect, body: &Value) -> Trial {
        let mut t = Trial::blank("mcp/lookup", "claude-code", "2.1.330");
        t.key.dialect = Some(dialect);
        t.journal = vec![request(body)];
        t
    }

    /// A project whose Claude Code request inventory holds what `turn(lookup())` sends on
    /// 2.1.330 (and no frame inventory).
    fn project() -> tempfile::TempDir {
        let root = tempfile::tempdir().unwrap();
        let base = trial(Dialect::ClaudeCode, &turn(lookup()));
        let mut inv = Inventory::new("claude-code");
        inv.add(&semver::Version::new(2, 1, 330), &requested(&base));
        let file = root.path().join(requests::file_of("claude-code"));
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, requests::to_yaml(&inv)).unwrap();
        root
    }

    /// The request findings of `body` checked under `policy`, and the trial's divergences.
    fn checked(
        root: &Path,
        dialect: Dialect,
        body: &Value,
        policy: Policy,
    ) -> (Vec<String>, Vec<String>) {
        let mut t = trial(dialect, body);
        check_trial(&ProtocolCheck::load(policy, root, dialect), &mut t);
        let findings = (t.protocol.iter())
            .filter(|f| f.direction == Direction::Request)
            .map(|f| f.to_string())
            .collect();
        let divergences = t.divergences.iter().map(|d| d.message.clone()).collect();
        (findings, divergences)
    }

    #[test]
    fn the_same_requests_are_no_finding_and_one_mcp_tools_schema_change_is_named_once() {
        let root = project();
        let (same, failed) = checked(
            root.path(),
            Dialect::ClaudeCode,
            &turn(lookup()),
            Policy::Strict,
        );
        assert_eq!((same, failed), (vec![], vec![]));
        let mut changed = lookup();
        changed["properties"]["q"]["pattern"] = json!("^[a-z]+$");
        let body = turn(changed);
        let (findings, failed) = checked(root.path(), Dialect::ClaudeCode, &body, Policy::Report);
        assert_eq!(
            findings,
            ["new name `pattern` in request input_schema[mcp__*]"]
        );
        assert!(failed.is_empty(), "new is reported: {failed:?}");
        let (_, failed) = checked(root.path(), Dialect::ClaudeCode, &body, Policy::Strict);
        assert_eq!(
            failed,
            ["new name `pattern` in request input_schema[mcp__*]"]
        );
    }

    #[test]
    fn a_gone_request_key_fails_and_strict_fails_on_a_new_one() {
        let root = project();
        let mut gone = turn(lookup());
        gone.as_object_mut().unwrap().remove("metadata");
        let (findings, failed) = checked(root.path(), Dialect::ClaudeCode, &gone, Policy::Report);
        let message = "gone request key `POST /v1/messages.metadata` (object; every `POST /v1/messages` request carried it)";
        assert_eq!(findings, [message]);
        assert_eq!(failed, [message]);
        let mut new = turn(lookup());
        new["speed"] = json!("fast");
        let (findings, failed) = checked(root.path(), Dialect::ClaudeCode, &new, Policy::Report);
        assert_eq!(
            findings,
            ["new request key `POST /v1/messages.speed` (string)"]
        );
        assert!(failed.is_empty());
        let (_, failed) = checked(root.path(), Dialect::ClaudeCode, &new, Policy::Strict);
        assert_eq!(
            failed,
            ["new request key `POST /v1/messages.speed` (string)"]
        );
    }

    #[test]
    fn a_dialect_without_a_request_inventory_is_not_checked_and_says_so() {
        let root = project();
        let (findings, failed) = checked(
            root.path(),
            Dialect::Caliban,
            &turn(lookup()),
            Policy::Strict,
        );
        assert_eq!(
            findings,
            ["not checked: no request inventory for this dialect (targets/caliban/requests.yaml)"]
        );
        assert!(failed.is_empty(), "{failed:?}");
    }

    #[test]
    fn only_a_command_asking_for_other_output_is_left_out() {
        assert!(!other_output(
            "claude -p hi --output-format stream-json --verbose"
        ));
        assert!(other_output(
            "claude -p hi --output-format stream-json --output-format text"
        ));
        assert!(other_output(
            "run 1: claude --output-format=stream-json\nrun 2: claude --output-format json"
        ));
        assert!(!other_output(""), "not known: looked at");
    }
}
