//! A trial against the protocol inventory: a trial's output observed and checked against
//! its dialect's inventory, and a run's findings grouped.

use crate::divergence::{Divergence, Kind};
use crate::protocol::check::{self, Change, Finding, Policy, What};
use crate::protocol::observe::Observed;
use crate::protocol::{inventory, parity};
use crate::runner::trial::Trial;
use std::path::Path;

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

/// What one trial printed: its frames, the client's lines and the API requests.
pub fn observed(trial: &Trial) -> Observed {
    let written: Vec<String> = (trial.client.iter())
        .flat_map(|c| c.written.iter().map(|(_, l)| l.clone()))
        .collect();
    let bodies: Vec<&serde_json::Value> = (trial.journal.iter())
        .filter(|e| e.is_messages_request())
        .map(|e| e.body())
        .collect();
    Observed::of(
        &trial.scenario,
        trial.output.frames.iter().map(|f| &f.value),
        &written,
        bodies,
    )
}

/// Checks a finished run of a trial against its dialect's inventory at the release it is
/// held to: the findings go to `trial.protocol`, those `policy` fails on become
/// divergences. An inventory that does not load fails the trial.
pub fn check_trial(policy: Policy, root: &Path, trial: &mut Trial) {
    let Some(dialect) = trial.dialect.filter(|_| policy != Policy::Off) else {
        return;
    };
    trial.protocol_policy = Some(policy);
    if other_output(&trial.command_line) {
        return;
    }
    let key = dialect.conventions().expect_key();
    let file = inventory::file_of(key).display().to_string();
    let findings = match &*inventory::load(root, key) {
        Err(e) => {
            trial.divergences.push(Divergence::new(
                Kind::Protocol,
                format!("the protocol inventory does not load: {e}"),
            ));
            return;
        }
        Ok(None) => vec![Finding {
            change: Change::Unchecked,
            what: What::Inventory { file, from: None },
        }],
        Ok(Some(inv)) => match semver::Version::parse(trial.expect_version()) {
            Ok(release) => check::check(inv, &file, &release, &trial.scenario, &observed(trial)),
            Err(_) => vec![Finding {
                change: Change::Unchecked,
                what: What::Inventory {
                    file,
                    from: Some(format!("releases, not `{}`", trial.expect_version())),
                },
            }],
        },
    };
    for f in &findings {
        if f.fails(policy) {
            trial
                .divergences
                .push(Divergence::new(Kind::Protocol, f.to_string()));
        }
    }
    trial.protocol.extend(findings);
}

/// Each trial's name in a run's protocol lines: its scenario, with its target when the run
/// has several.
fn names(trials: &[Trial]) -> Vec<String> {
    let targets: std::collections::BTreeSet<&str> =
        trials.iter().map(|t| t.target.as_str()).collect();
    (trials.iter())
        .map(|t| match targets.len() {
            1 => t.scenario.clone(),
            _ => format!("{} ({})", t.scenario, t.target),
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
    use super::other_output;

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
