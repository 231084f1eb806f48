//! Known divergences: each entry names one divergence a target is known to have (the
//! scenario, the divergence's kind and where it is), so it hides only that one. The
//! trial's other divergences still fail it; an entry that matches nothing any more (the CLI
//! was fixed) is stale: reported, and a failure under `--strict`.
//!
//! A regression of a range of releases (it came in one release and went in a later one)
//! is an entry with `versions` and no `kind`: it names every divergence of the scenario on
//! those releases, so they show once, as known, with the reason saying where it came from.
//!
//! ```yaml
//! - scenario: stdin/multi-turn
//!   kind: request_assertion        # a divergence kind, as results.json spells it
//!   path: $.messages               # optional: the JSON path it names
//!   message: "assistant"           # optional: a regex on its message
//!   target: caliban@0.15.0         # optional: a target name or dialect (default: all of the file's)
//!   intermittent: true             # optional: it comes and goes with timing (never stale)
//!   versions: ">=2.1.198, <2.1.217" # optional: only on these releases (required without kind)
//!   reason: why the CLI differs, and what the document says
//! ```

use crate::divergence::{Divergence, Kind};
use crate::version_range::{parse_version, VersionRange};
use serde::Deserialize;
use std::path::Path;

/// One known divergence.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    pub scenario: String,
    #[serde(default)]
    pub target: Option<String>,
    /// None: every divergence of the trial (a regression; `versions` says where).
    #[serde(default)]
    pub kind: Option<Kind>,
    #[serde(default)]
    pub path: Option<String>,
    #[serde(default)]
    pub frame: Option<usize>,
    #[serde(default, with = "serde_regex")]
    pub message: Option<regex::Regex>,
    /// The divergence comes and goes with timing (a hang after the result, say): an entry
    /// that matches nothing in one trial is not stale.
    #[serde(default)]
    pub intermittent: bool,
    /// Only on these releases of the target.
    #[serde(default)]
    pub versions: Option<VersionRange>,
    pub reason: String,
}

mod serde_regex {
    use serde::{Deserialize, Deserializer};

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<regex::Regex>, D::Error> {
        let Some(text) = Option::<String>::deserialize(d)? else {
            return Ok(None);
        };
        regex::Regex::new(&text)
            .map(Some)
            .map_err(serde::de::Error::custom)
    }
}

impl Entry {
    /// Whether this entry is about `target` (its name, e.g. `caliban@0.15.0`, its dialect
    /// and the version it runs).
    fn is_for(&self, scenario: &str, target: &Ran) -> bool {
        let in_range = self
            .versions
            .as_ref()
            .is_none_or(|range| parse_version(target.version).is_some_and(|v| range.contains(&v)));
        self.scenario == scenario
            && in_range
            && (self.target.as_deref()).is_none_or(|t| t == target.name || t == target.dialect)
    }

    pub fn matches(&self, d: &Divergence) -> bool {
        self.kind.is_none_or(|kind| d.kind == kind)
            && (self.path.is_none() || self.path == d.path)
            && (self.frame.is_none() || self.frame == d.frame)
            && self
                .message
                .as_ref()
                .is_none_or(|re| re.is_match(&d.message))
    }

    /// The entry in a sentence: what it says is known.
    pub fn describe(&self) -> String {
        let kind = self.kind.map_or("every divergence", |k| k.as_str());
        let mut s = format!("{} {kind}", self.scenario);
        if let Some(frame) = self.frame {
            s.push_str(&format!(" at frame {frame}"));
        }
        if let Some(path) = &self.path {
            s.push_str(&format!(" at {path}"));
        }
        if let Some(re) = &self.message {
            s.push_str(&format!(" matching /{re}/"));
        }
        if let Some(range) = &self.versions {
            s.push_str(&format!(" on {range}"));
        }
        s
    }
}

/// The target a trial ran on, as known-divergence entries select it.
pub struct Ran<'a> {
    /// e.g. `caliban@0.15.0`, or a bare `claude-code` for the pin.
    pub name: &'a str,
    pub dialect: &'a str,
    pub version: &'a str,
}

/// A target's known divergences, and the file they came from (for messages).
#[derive(Debug, Clone, Default)]
pub struct KnownList {
    pub file: String,
    pub entries: Vec<Entry>,
}

impl KnownList {
    /// A list file; a missing or empty one lists nothing.
    pub fn load(path: &Path, shown_as: &str) -> Result<KnownList, String> {
        let text = match std::fs::read_to_string(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(format!("{shown_as}: {e}")),
            Ok(text) => text,
        };
        let entries = if text.trim().is_empty() || is_only_comments(&text) {
            Vec::new()
        } else {
            serde_yaml::from_str::<Vec<Entry>>(&text).map_err(|e| {
                let at = e.location().map_or(String::new(), |l| format!(":{}:{}", l.line(), l.column()));
                format!("{shown_as}{at}: {e} (each entry: scenario, kind, reason; optionally path, frame, message, target, versions)")
            })?
        };
        if let Some(e) = entries
            .iter()
            .find(|e| e.kind.is_none() && e.versions.is_none())
        {
            return Err(format!(
                "{shown_as}: the entry for {} has no kind: give `kind`, or `versions` for a regression of some releases",
                e.scenario
            ));
        }
        Ok(KnownList {
            file: shown_as.to_string(),
            entries,
        })
    }

    /// Marks each of `divergences` that an entry names as known, and says which entries
    /// for this trial matched none (stale).
    pub fn judge(
        &self,
        scenario: &str,
        target: &Ran,
        divergences: &mut [Divergence],
    ) -> Vec<&Entry> {
        let entries: Vec<&Entry> = self
            .entries
            .iter()
            .filter(|e| e.is_for(scenario, target))
            .collect();
        let mut used = vec![false; entries.len()];
        for d in divergences.iter_mut() {
            if let Some(i) = entries.iter().position(|e| e.matches(d)) {
                d.known = Some(entries[i].reason.clone());
                used[i] = true;
            }
        }
        entries
            .into_iter()
            .zip(used)
            .filter(|(e, used)| !used && !e.intermittent)
            .map(|(e, _)| e)
            .collect()
    }
}

fn is_only_comments(text: &str) -> bool {
    text.lines()
        .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ran<'a>(name: &'a str, dialect: &'a str) -> Ran<'a> {
        let version = name.split('@').nth(1).unwrap_or("0.15.0");
        Ran {
            name,
            dialect,
            version,
        }
    }

    fn list(yaml: &str) -> KnownList {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("known.yaml");
        std::fs::write(&path, yaml).unwrap();
        KnownList::load(&path, "known.yaml").unwrap()
    }

    const LIST: &str = "- scenario: s/a\n  kind: missing_frame\n  path: $.result\n  reason: no result\n- scenario: s/a\n  kind: exit_code\n  target: caliban@0.16.0\n  reason: other version\n";

    #[test]
    fn an_entry_hides_only_the_divergence_it_names() {
        let known = list(LIST);
        let mut divs = vec![
            Divergence::new(Kind::MissingFrame, "no result").at_path("$.result"),
            Divergence::new(Kind::MissingFrame, "no result").at_path("$.other"),
            Divergence::new(Kind::ExitCode, "exit 1"),
        ];
        let stale = known.judge("s/a", &ran("caliban", "caliban"), &mut divs);
        assert_eq!(divs[0].known.as_deref(), Some("no result"));
        assert_eq!(divs[1].known, None, "another path is not named");
        assert_eq!(
            divs[2].known, None,
            "the exit_code entry is for caliban@0.16.0 only"
        );
        assert!(stale.is_empty(), "{stale:?}");
    }

    #[test]
    fn an_entry_that_matches_nothing_is_stale_unless_intermittent() {
        let flaky = list("- scenario: s/a\n  kind: hang\n  intermittent: true\n  reason: r\n");
        assert!(flaky.judge("s/a", &ran("t", "t"), &mut []).is_empty());
        let known = list(LIST);
        let stale = known.judge("s/a", &ran("caliban@0.16.0", "caliban"), &mut []);
        assert_eq!(stale.len(), 2);
        assert_eq!(stale[0].describe(), "s/a missing frame at $.result");
        assert!(known
            .judge("s/other", &ran("caliban", "caliban"), &mut [])
            .is_empty());
    }

    #[test]
    fn a_message_pattern_narrows_an_entry_and_bad_files_name_their_line() {
        let known =
            list("- scenario: s\n  kind: stderr\n  message: 'no session named'\n  reason: r\n");
        let mut divs = vec![
            Divergence::new(Kind::Stderr, "stderr: no session named x"),
            Divergence::new(Kind::Stderr, "stderr: panic"),
        ];
        known.judge("s", &ran("t", "t"), &mut divs);
        assert!(divs[0].known.is_some() && divs[1].known.is_none());

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.yaml");
        std::fs::write(&path, "- scenario: s\n  kind: no_such_kind\n  reason: r\n").unwrap();
        let err = KnownList::load(&path, "k.yaml").unwrap_err();
        assert!(err.starts_with("k.yaml:2:"), "{err}");
        assert!(list("# nothing yet\n").entries.is_empty());
    }

    #[test]
    fn a_regression_of_some_releases_names_every_divergence_there_only() {
        let known =
            list("- scenario: s\n  versions: \">=2.1.198, <2.1.217\"\n  reason: regression\n");
        let divs = || {
            vec![
                Divergence::new(Kind::FieldMismatch, "frame 3").at_path("$.type"),
                Divergence::new(Kind::ExitCode, "exit 1"),
            ]
        };
        for (version, known_there) in [("2.1.197", false), ("2.1.201", true), ("2.1.217", false)] {
            let target = Ran {
                name: "claude-code",
                dialect: "claude-code",
                version,
            };
            let mut found = divs();
            let stale = known.judge("s", &target, &mut found);
            assert!(stale.is_empty());
            assert!(
                found.iter().all(|d| d.known.is_some() == known_there),
                "{version}"
            );
        }
        let target = Ran {
            name: "claude-code@2.1.205",
            dialect: "claude-code",
            version: "2.1.205",
        };
        let stale = known.judge("s", &target, &mut []);
        assert_eq!(
            stale[0].describe(),
            "s every divergence on >=2.1.198, <2.1.217"
        );

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.yaml");
        std::fs::write(&path, "- scenario: s\n  reason: r\n").unwrap();
        let err = KnownList::load(&path, "k.yaml").unwrap_err();
        assert!(err.contains("has no kind"), "{err}");
    }
}
