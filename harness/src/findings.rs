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
//! `docs/findings.md` is generated from both files ([`render_doc`], `streamcheck findings
//! --write`); a run report lists the findings it met.

use crate::known::{Entry, KnownList};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

/// The file beside a known-divergence list that holds its findings.
pub const FILE_NAME: &str = "findings.yaml";

/// A finding's id: a slug, unique in its file.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, serde::Serialize)]
#[serde(transparent)]
pub struct FindingId(String);

impl FindingId {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for FindingId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

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

/// The findings of one list.
#[derive(Debug, Clone, Default)]
pub struct Findings {
    pub items: Vec<Finding>,
}

impl Findings {
    /// `findings.yaml` beside `known_file`; none when it does not exist.
    pub fn beside(known_file: &Path, shown_as: &str) -> Result<Findings, String> {
        let path = known_file.with_file_name(FILE_NAME);
        let shown = Path::new(shown_as).with_file_name(FILE_NAME);
        let shown = shown.display();
        let text = match std::fs::read_to_string(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Findings::default()),
            Err(e) => return Err(format!("{shown}: {e}")),
            Ok(text) => text,
        };
        if text
            .lines()
            .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'))
        {
            return Ok(Findings::default());
        }
        let items: Vec<Finding> = serde_yaml::from_str(&text).map_err(|e| {
            let at = e
                .location()
                .map_or(String::new(), |l| format!(":{}:{}", l.line(), l.column()));
            format!("{shown}{at}: {e} (each finding: id, title, contract, what)")
        })?;
        let mut seen = std::collections::BTreeSet::new();
        if let Some(twice) = items.iter().find(|f| !seen.insert(&f.id)) {
            return Err(format!(
                "{shown}: the finding id `{}` is used twice",
                twice.id
            ));
        }
        Ok(Findings { items })
    }

    pub fn get(&self, id: &FindingId) -> Option<&Finding> {
        self.items.iter().find(|f| &f.id == id)
    }

    /// Why the findings and the entries that point at them do not agree: an entry naming
    /// no finding of the file, a finding entry without the releases it holds for, a
    /// finding no entry shows.
    pub fn check_entries(&self, entries: &[Entry], shown_as: &str) -> Result<(), String> {
        for e in entries {
            let Some(id) = &e.finding else { continue };
            if self.get(id).is_none() {
                return Err(format!(
                    "{shown_as}: the entry for {} names the finding `{id}`, which {} does not hold",
                    e.scenario, FILE_NAME
                ));
            }
            if e.versions.is_none() || e.observed.is_empty() {
                return Err(format!(
                    "{shown_as}: the entry for {} is the finding `{id}`: a bug holds for some releases; give `versions` and the releases it was `observed` on",
                    e.scenario
                ));
            }
        }
        if let Some(unused) =
            (self.items.iter()).find(|f| !entries.iter().any(|e| e.finding.as_ref() == Some(&f.id)))
        {
            return Err(format!(
                "{shown_as}: the finding `{}` in {} has no known-divergence entry (give one, with its releases and symptom, or remove the finding)",
                unused.id, FILE_NAME
            ));
        }
        Ok(())
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

/// `docs/findings.md`: each finding, its contract, what happens, and per entry the
/// releases and the case that shows it.
pub fn render_doc(known: &KnownList, source: &str) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# Findings: where a Claude Code release breaks the contract\n"
    );
    let _ = writeln!(
        s,
        "Generated by `streamcheck findings --write` from `{source}/{FILE_NAME}` and the entries marked \
         `finding:` in `{source}/known-divergences.yaml`; a test keeps this page equal to them. Edit those \
         files, not this page.\n"
    );
    let _ = writeln!(
        s,
        "Each scenario states what a consumer may rely on (the contract). A release that breaks it is \
         not pinned as expected behaviour: its trial shows as `known` with the finding's id, on exactly \
         the releases the entry names, and every run report lists the findings it met (\"known finding \
         ID in N trial(s)\"). When a release fixes the bug, the entry matches nothing there and is \
         stale: `--strict` fails until the range is closed. Run a case with `streamcheck run --filter \
         'CASE' --target claude-code@VERSION`.\n"
    );
    let _ = writeln!(
        s,
        "| finding | releases | cases | contract | what happens |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|");
    for f in &known.findings.items {
        let entries: Vec<&Entry> = (known.entries.iter())
            .filter(|e| e.finding.as_ref() == Some(&f.id))
            .collect();
        let mut ranges: Vec<String> = Vec::new();
        let mut observed: Vec<String> = Vec::new();
        let mut cases: Vec<String> = Vec::new();
        for e in &entries {
            if let Some(r) = &e.versions {
                push_new(&mut ranges, format!("`{r}`"));
            }
            for v in &e.observed {
                push_new(&mut observed, v.to_string());
            }
            push_new(&mut cases, format!("`{}`", e.scenario));
        }
        let _ = writeln!(
            s,
            "| **{}**: {} | {} (observed on {}) | {} | {} | {} |",
            f.id,
            cell(&f.title),
            ranges.join(", "),
            observed.join(", "),
            cases.join(", "),
            cell(&f.contract),
            cell(&f.what)
        );
    }
    s
}

fn push_new(list: &mut Vec<String>, item: String) {
    if !list.contains(&item) {
        list.push(item);
    }
}

fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(known: &str, findings: &str) -> (tempfile::TempDir, Result<KnownList, String>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("known-divergences.yaml");
        std::fs::write(&path, known).unwrap();
        std::fs::write(dir.path().join(FILE_NAME), findings).unwrap();
        let list = KnownList::load(&path, "t/known-divergences.yaml");
        (dir, list)
    }

    const FINDING: &str = "- id: null-line\n  title: A null line ends the CLI\n  contract: a line that is not a message is ignored\n  what: exit 1\n";
    const ENTRY: &str = "- scenario: s\n  kind: exit_code\n  message: 'expected exit code 0, got 1'\n  finding: null-line\n  versions: \">=2.1.300, <2.1.331\"\n  observed: [2.1.330]\n  reason: r\n";

    #[test]
    fn an_entry_points_at_a_finding_of_its_file() {
        let (_d, list) = project(ENTRY, FINDING);
        let list = list.unwrap();
        assert_eq!(list.findings.items.len(), 1);
        let doc = render_doc(&list, "targets/claude-code");
        assert!(doc.contains("| **null-line**: A null line ends the CLI | `>=2.1.300, <2.1.331` (observed on 2.1.330) | `s` |"), "{doc}");

        let (_d, err) = project(&ENTRY.replace("null-line", "other"), FINDING);
        assert!(err.unwrap_err().contains("names the finding `other`"));
    }

    #[test]
    fn a_finding_holds_for_named_releases_and_is_shown_by_an_entry() {
        let unranged = "- scenario: s\n  kind: exit_code\n  message: 'expected exit code 0, got 1'\n  finding: null-line\n  reason: r\n";
        let (_d, err) = project(unranged, FINDING);
        assert!(err.unwrap_err().contains("give `versions`"));
        let (_d, err) = project("", FINDING);
        assert!(err.unwrap_err().contains("has no known-divergence entry"));
        let (_d, err) = project(ENTRY, &format!("{FINDING}{FINDING}"));
        assert!(err.unwrap_err().contains("used twice"));
    }

    /// docs/findings.md is what `streamcheck findings --write` makes of the committed files.
    #[test]
    fn the_committed_page_is_what_the_findings_generate() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let file = "targets/claude-code/known-divergences.yaml";
        let known = KnownList::load(&root.join(file), file).unwrap();
        let page = std::fs::read_to_string(root.join("docs/findings.md")).unwrap();
        assert!(
            page == render_doc(&known, "targets/claude-code"),
            "docs/findings.md is not what the findings generate: run `streamcheck findings --write`"
        );
        assert!(!known.findings.items.is_empty(), "no findings at all");
    }

    #[test]
    fn a_run_counts_each_finding_once_per_trial() {
        use crate::divergence::{Divergence, Kind};
        let id = FindingId("f".into());
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
