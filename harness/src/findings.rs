//! Findings: CLI bugs the suite met. A scenario states the contract (what a consumer may
//! rely on); a release that breaks it gets a known-divergence entry marked `finding: ID`,
//! with the releases it holds for and its symptom ([`crate::known`]). The finding itself
//! (what the contract is, what happens instead) is written once, in `findings.yaml` beside
//! the known-divergence list:
//!
//! ```yaml
//! - id: stdin-null-line-ends-cli
//!   title: "A stdin line `null` ends the CLI"
//!   contract: "a stdin line that is not a message is ignored or answered with an error"
//!   what: "exit 1 with `Error parsing streaming input line`"
//! ```
//!
//! `docs/findings.md` is generated from both files (`streamcheck findings --write`); a run
//! report lists the findings it met.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The file beside a known-divergence list that holds its findings.
pub const FILE_NAME: &str = "findings.yaml";

pub use crate::divergence::FindingId;

/// One CLI bug: the contract it breaks and what happens instead.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Finding {
    pub id: FindingId,
    pub title: String,
    /// What a consumer may rely on (the scenario's expectation says it too).
    pub contract: String,
    /// What the CLI does instead, as observed.
    pub what: String,
}

/// Why `findings.yaml` does not load; `shown` is how the file is named to the user.
#[derive(Debug, thiserror::Error)]
pub enum FindingsError {
    /// The file exists but cannot be read.
    #[error("{shown}: {source}")]
    Unreadable {
        shown: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Not a list of findings.
    #[error("{shown}{}: {source} (each finding: id, title, contract, what)", yaml_place(.source))]
    Yaml {
        shown: PathBuf,
        #[source]
        source: serde_yaml::Error,
    },
    /// Two findings of one id.
    #[error("{shown}: the finding id `{id}` is used twice")]
    Twice { shown: PathBuf, id: FindingId },
}

/// `:line:column` of where a YAML list file breaks, when known.
pub(crate) fn yaml_place(e: &serde_yaml::Error) -> String {
    (e.location()).map_or(String::new(), |l| format!(":{}:{}", l.line(), l.column()))
}

/// The findings of one list.
#[derive(Debug, Clone, Default)]
pub struct Findings {
    pub items: Vec<Finding>,
}

impl Findings {
    /// `findings.yaml` beside `known_file`; none when it does not exist.
    pub fn beside(known_file: &Path, shown_as: &str) -> Result<Findings, FindingsError> {
        let path = known_file.with_file_name(FILE_NAME);
        let shown = Path::new(shown_as).with_file_name(FILE_NAME);
        let text = match std::fs::read_to_string(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Findings::default()),
            Err(source) => return Err(FindingsError::Unreadable { shown, source }),
            Ok(text) => text,
        };
        if text
            .lines()
            .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'))
        {
            return Ok(Findings::default());
        }
        let items: Vec<Finding> = match serde_yaml::from_str(&text) {
            Ok(items) => items,
            Err(source) => return Err(FindingsError::Yaml { shown, source }),
        };
        let mut seen = std::collections::BTreeSet::new();
        if let Some(twice) = items.iter().find(|f| !seen.insert(&f.id)) {
            let id = twice.id.clone();
            return Err(FindingsError::Twice { shown, id });
        }
        Ok(Findings { items })
    }

    pub fn get(&self, id: &FindingId) -> Option<&Finding> {
        self.items.iter().find(|f| &f.id == id)
    }
}

/// The findings a run met: for each, the trials it was known in.
pub fn met<'a>(
    trials: impl IntoIterator<Item = (String, &'a [crate::divergence::Divergence])>,
) -> BTreeMap<FindingId, Vec<String>> {
    let mut out: BTreeMap<FindingId, Vec<String>> = BTreeMap::new();
    for (trial, divergences) in trials {
        let mut ids: Vec<&FindingId> = divergences
            .iter()
            .filter_map(|d| d.finding.as_ref())
            .collect();
        ids.sort();
        ids.dedup();
        for id in ids {
            out.entry(id.clone()).or_default().push(trial.clone());
        }
    }
    out
}

/// One line a run prints per finding it met.
pub fn met_line(id: &FindingId, trials: &[String]) -> String {
    let example = trials.first().map_or("", String::as_str);
    format!(
        "known finding {id} in {} trial(s) (e.g. {example})",
        trials.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_counts_each_finding_once_per_trial() {
        use crate::divergence::{Divergence, Kind};
        let id: FindingId = serde_yaml::from_str("f").unwrap();
        let mut d = Divergence::new(Kind::ExitCode, "x");
        d.finding = Some(id.clone());
        let two = vec![d.clone(), d];
        let none = vec![Divergence::new(Kind::ExitCode, "y")];
        let met = met([
            ("a".to_string(), two.as_slice()),
            ("b".to_string(), none.as_slice()),
        ]);
        assert_eq!(met[&id], vec!["a"]);
        assert_eq!(
            met_line(&id, &met[&id]),
            "known finding f in 1 trial(s) (e.g. a)"
        );
    }
}
