//! A verdict on a release from one run of the catalogue: what changed against the
//! scenarios (their failures, grouped by cause: changes to what the project pins, the
//! gate) and against the protocol inventory (every other change, breaking or additive,
//! one finding per change), and the inventory entries a maintainer would accept.

use crate::divergence::Kind;
use crate::protocol::check::{line, Finding};
use crate::protocol::inventory::Inventory;
use crate::runner::{Status, Trial};
use crate::trial_id::TargetName;
use serde::Serialize;
use std::fmt::Write;

#[derive(Debug, Clone, Serialize)]
pub struct Verdict {
    pub target: TargetName,
    pub version: String,
    /// The releases of the inventory the run was checked against.
    pub inventory_at: Vec<String>,
    /// Failures of the scenarios (the protocol check's own divergences aside), grouped
    /// by cause: each a breaking change to what the project's scenarios pin.
    pub pinned: Vec<(String, Vec<String>)>,
    /// Protocol changes that break a consumer relying on what was there.
    pub breaking: Vec<(Finding, Vec<String>)>,
    /// Protocol changes that add to it.
    pub additive: Vec<(Finding, Vec<String>)>,
    /// What could not be checked (no inventory for the dialect or the release).
    pub unchecked: Vec<(Finding, Vec<String>)>,
    /// Pending version blocks written for the failing scenarios (`streamcheck review`).
    pub pending_blocks: Vec<String>,
    /// The inventory lines `protocol add` would write that are not in it now.
    pub pending_inventory: Vec<String>,
    /// The same for the request inventory (`requests.yaml`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending_requests: Vec<String>,
    pub duration_ms: u64,
    pub trials: usize,
}

/// Classifies the trials of one run of one target.
pub fn classify(
    target: &str,
    version: &str,
    inventory_at: Vec<String>,
    trials: &[Trial],
) -> Verdict {
    let without_protocol: Vec<Trial> = (trials.iter())
        .map(|t| {
            let mut t = t.clone();
            t.divergences.retain(|d| d.kind != Kind::Protocol);
            if t.status == Status::Failed && t.divergences.is_empty() {
                t.status = Status::Passed;
            }
            t
        })
        .collect();
    let pinned = crate::report::failure_causes(&without_protocol);
    let mut v = Verdict {
        target: target.into(),
        version: version.to_string(),
        inventory_at,
        pinned,
        breaking: Vec::new(),
        additive: Vec::new(),
        unchecked: Vec::new(),
        pending_blocks: Vec::new(),
        pending_inventory: Vec::new(),
        pending_requests: Vec::new(),
        duration_ms: 0,
        trials: trials.len(),
    };
    for (f, t) in crate::runner::protocol::run_findings(trials) {
        match f.change {
            crate::protocol::Change::Gone => v.breaking.push((f, t)),
            crate::protocol::Change::New => v.additive.push((f, t)),
            crate::protocol::Change::Unchecked => v.unchecked.push((f, t)),
        }
    }
    v
}

impl Verdict {
    /// A project gates on the changes to what its scenarios pin.
    pub fn gate_fails(&self) -> bool {
        !self.pinned.is_empty()
    }

    /// The lines of `after`'s file that `before`'s does not have, each under its kind or list.
    pub fn inventory_lines(before: &Inventory, after: &Inventory) -> Vec<String> {
        let old_text = before.to_yaml();
        let old: std::collections::BTreeSet<&str> = old_text.lines().collect();
        let new = after.to_yaml();
        let mut section = "";
        let mut out = Vec::new();
        for l in new.lines() {
            if l.starts_with("  \"") {
                section = l.trim().trim_end_matches(':');
            }
            if !old.contains(l) && !l.starts_with('#') && !l.starts_with("releases:") {
                out.push(match l.starts_with("    ") {
                    true => format!("{section}: {}", l.trim()),
                    false => l.trim().to_string(),
                });
            }
        }
        out
    }

    pub fn to_md(&self, command: &str) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "# Verdict on {} ({})\n", self.target, self.version);
        let _ = writeln!(s, "`{command}`\n");
        let _ = writeln!(
            s,
            "**{} breaking** ({} to what the scenarios pin, {} other protocol changes), **{} additive**, from one run of {} trials in {:.1} min; the inventory at {}.\n",
            self.pinned.len() + self.breaking.len(),
            self.pinned.len(),
            self.breaking.len(),
            self.additive.len(),
            self.trials,
            self.duration_ms as f64 / 60_000.0,
            match self.inventory_at.is_empty() {
                true => "none".to_string(),
                false => self.inventory_at.join(" and "),
            }
        );
        let _ = writeln!(s, "## Changes to what the scenarios pin (the gate)\n");
        if self.pinned.is_empty() {
            let _ = writeln!(s, "None: every scenario passes.");
        }
        for (cause, trials) in &self.pinned {
            let n = trials.len();
            let _ = writeln!(
                s,
                "- breaking: {cause}: {n} scenario(s) ({})",
                trials.join(", ")
            );
        }
        if !self.pending_blocks.is_empty() {
            let _ = writeln!(
                s,
                "\nPending version blocks (accept with `streamcheck review`):\n"
            );
            for p in &self.pending_blocks {
                let _ = writeln!(s, "- `{p}`");
            }
        }
        let _ = writeln!(s, "\n## Other protocol changes (against the inventory)\n");
        if self.breaking.is_empty() && self.additive.is_empty() {
            let _ = writeln!(s, "None.");
        }
        for (f, t) in &self.breaking {
            let _ = writeln!(s, "- breaking: {}", line(f, t));
        }
        for (f, t) in &self.additive {
            let _ = writeln!(s, "- additive: {}", line(f, t));
        }
        for (f, t) in &self.unchecked {
            let _ = writeln!(s, "- {}", line(f, t));
        }
        for (pending, file, what) in [
            (&self.pending_inventory, "protocol.yaml", "inventory"),
            (&self.pending_requests, "requests.yaml", "request inventory"),
        ] {
            if pending.is_empty() {
                continue;
            }
            let _ = writeln!(
                s,
                "\n## Pending {what} entries\n\nWhat `streamcheck protocol add` of this run would write (written beside this report as `{file}`); lines new or changed:\n\n```yaml"
            );
            for l in pending {
                let _ = writeln!(s, "{l}");
            }
            let _ = writeln!(s, "```");
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::divergence::Divergence;
    use crate::protocol::{Change, What};

    fn trial(id: &str, divergences: Vec<Divergence>, protocol: Vec<Finding>) -> Trial {
        let mut t = Trial::blank(id, "claude-code@2.1.9", "2.1.9");
        t.status = match divergences.is_empty() {
            true => Status::Passed,
            false => Status::Failed,
        };
        t.divergences = divergences;
        t.protocol = protocol;
        t
    }

    #[test]
    fn scenario_failures_and_protocol_changes_are_told_apart_each_change_once() {
        let gone = Finding {
            change: Change::Gone,
            direction: Default::default(),
            what: What::Key {
                kind: "assistant".into(),
                path: "uuid".into(),
                types: vec!["string".into()],
            },
        };
        let new = Finding {
            change: Change::New,
            direction: Default::default(),
            what: What::Key {
                kind: "system/init".into(),
                path: "sandbox_enabled".into(),
                types: vec!["bool".into()],
            },
        };
        let protocol_only = Divergence::new(Kind::Protocol, gone.to_string());
        let pinned = Divergence::new(Kind::ExitCode, "exit code 1, expected 0");
        let trials = [
            trial(
                "a/1",
                vec![protocol_only.clone()],
                vec![gone.clone(), new.clone()],
            ),
            trial(
                "a/2",
                vec![pinned.clone(), protocol_only],
                vec![gone.clone(), new.clone()],
            ),
            trial("a/3", vec![], vec![new.clone()]),
        ];
        let v = classify("claude-code@2.1.9", "2.1.9", vec!["2.1.8".into()], &trials);
        assert_eq!(v.pinned.len(), 1, "{:?}", v.pinned);
        assert_eq!(v.pinned[0].1, ["a/2 (claude-code@2.1.9)"]);
        assert_eq!(
            v.breaking,
            [(gone, vec!["a/1".to_string(), "a/2".to_string()])]
        );
        assert_eq!(v.additive.len(), 1);
        assert_eq!(v.additive[0].1.len(), 3);
        assert!(v.gate_fails());
        let md = v.to_md("streamcheck verdict");
        assert!(md.contains("**2 breaking** (1 to what the scenarios pin, 1 other protocol changes), **1 additive**"), "{md}");
        assert!(
            md.contains("- additive: new key `system/init.sandbox_enabled` (bool), in 3 trials"),
            "{md}"
        );
    }
}
