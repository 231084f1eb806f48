//! Known divergences: each entry names one divergence a target is known to have (the
//! scenario, the divergence's kind and where it is), so it hides only that one. The
//! trial's other divergences still fail it; an entry that matches nothing any more (the CLI
//! was fixed) is stale: reported, and a failure under `--strict`.
//!
//! Every entry names its symptom: a `message` regex specific to this divergence (one that
//! matches a generic message of its kind is refused, see [`generic`]), a `path` or a
//! `frame`; `printed` (a frame the CLI printed, such as `system/init` with
//! `permissionMode: auto`) narrows an entry but never stands alone. A regression of a range
//! of releases (it came in one release and went in a later one) is an entry with
//! `versions` and the releases it was `observed` on, each inside `versions`. An entry that
//! would hide more than it names is refused when the list is loaded, with its line; one
//! naming a scenario the catalogue does not hold is refused where the catalogue is known
//! ([`KnownList::unknown_scenarios`]).
//!
//! ```yaml
//! - scenario: stdin/multi-turn      # a scenario id, or `file[case]` for a case
//!   kind: request                  # a divergence kind, as results.json spells it
//!   path: $.messages               # the JSON path it names, and/or
//!   frame: 3                       # the frame it names, and/or
//!   message: "^request 1: "        # a regex on its message, specific to it
//!   printed: {type: system, subtype: init, permissionMode: auto}  # optional: only when a frame matches
//!   target: caliban@0.15.0         # optional: a target name or dialect (default: all of the file's)
//!   intermittent: true             # optional: it comes and goes with timing (never stale)
//!   hidden_by: no-result           # optional: not stale where an entry of this finding for
//!                                  # the same trial matched (that bug takes away the frame
//!                                  # this symptom is in)
//!   versions: ">=2.1.198, <2.1.217" # optional: only on these releases
//!   observed: [2.1.198, 2.1.205]   # with versions: the releases it was seen on
//!   finding: plan-mode-bash-unasked # optional: a CLI bug, described in findings.yaml beside
//!   reason: why the CLI differs, and what the document says
//! ```

use crate::divergence::{Divergence, Kind};
use crate::findings::{FindingId, Findings};
use crate::pattern::{Captures, Pattern, Vars};
use crate::trial_id::ScenarioId;
use crate::version_range::{parse_version, VersionRange};
use serde::Deserialize;
use serde_json::Value;
use std::path::Path;

mod error;
mod generic;

pub use error::{KnownError, TooWide};

/// One known divergence.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    pub scenario: ScenarioId,
    #[serde(default)]
    pub target: Option<String>,
    pub kind: Kind,
    #[serde(default)]
    pub path: Option<String>,
    #[serde(default)]
    pub frame: Option<usize>,
    #[serde(default, with = "serde_regex")]
    pub message: Option<regex::Regex>,
    /// Only in a trial whose output has a frame matching this (the symptom, printed).
    #[serde(default, with = "serde_pattern")]
    pub printed: Option<Pattern>,
    /// The divergence comes and goes with timing (a hang after the result, say): an entry
    /// that matches nothing in one trial is not stale.
    #[serde(default)]
    pub intermittent: bool,
    /// Not stale in a trial where an entry of this finding matched: that bug (intermittent,
    /// say) takes away what this symptom needs, such as the result whose field it names.
    #[serde(default)]
    pub hidden_by: Option<FindingId>,
    /// Only on these releases of the target.
    #[serde(default)]
    pub versions: Option<VersionRange>,
    /// With `versions`: the releases the divergence was seen on.
    #[serde(default)]
    pub observed: Vec<semver::Version>,
    /// The entry is a CLI bug, described in `findings.yaml` beside the list
    /// ([`crate::findings`]).
    #[serde(default)]
    pub finding: Option<FindingId>,
    pub reason: String,
    /// The 1-based line of the file the entry starts on (for messages).
    #[serde(skip)]
    pub line: usize,
}

mod serde_pattern {
    use crate::pattern::Pattern;
    use serde::{Deserialize, Deserializer};

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Pattern>, D::Error> {
        let Some(source) = Option::<serde_json::Value>::deserialize(d)? else {
            return Ok(None);
        };
        Pattern::compile(&source)
            .map(Some)
            .map_err(serde::de::Error::custom)
    }
}

mod serde_regex {
    use serde::{Deserialize, Deserializer};

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<regex::Regex>, D::Error> {
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

    /// Whether the trial printed the frame the entry's symptom names (no symptom: yes).
    fn shows_symptom(&self, printed: &[&Value]) -> bool {
        self.printed.as_ref().is_none_or(|p| {
            let (vars, caps) = (Vars::default(), Captures::new());
            printed.iter().any(|f| p.is_match(f, &vars, &caps))
        })
    }

    pub fn matches(&self, d: &Divergence) -> bool {
        d.kind == self.kind
            && (self.path.is_none() || self.path == d.path)
            && (self.frame.is_none() || self.frame == d.frame)
            && self
                .message
                .as_ref()
                .is_none_or(|re| re.is_match(&d.message))
    }

    /// The entry in a sentence: what it says is known.
    pub fn describe(&self) -> String {
        let mut s = format!("{} {}", self.scenario, self.kind.as_str());
        if let Some(frame) = self.frame {
            s.push_str(&format!(" at frame {frame}"));
        }
        if let Some(path) = &self.path {
            s.push_str(&format!(" at {path}"));
        }
        if let Some(re) = &self.message {
            s.push_str(&format!(" matching /{re}/"));
        }
        if let Some(p) = &self.printed {
            s.push_str(&format!(" when it prints {}", p.source()));
        }
        if let Some(range) = &self.versions {
            s.push_str(&format!(" on {range}"));
        }
        s
    }

    /// Why the entry may hide more than it names; `None` when it is precise enough.
    fn too_wide(&self) -> Option<TooWide> {
        let scenario = self.scenario.clone();
        if self.message.is_none() && self.path.is_none() && self.frame.is_none() {
            return Some(TooWide::NoSymptom { scenario });
        }
        if let Some(re) = &self.message {
            if let Some(broad) = generic::catch_all(self.kind, re) {
                let (kind, regex) = (self.kind, re.as_str().to_string());
                return Some(TooWide::Broad {
                    scenario,
                    kind,
                    regex,
                    broad,
                });
            }
        }
        let range = self.versions.clone()?;
        if self.observed.is_empty() {
            return Some(TooWide::Unobserved { scenario, range });
        }
        let outside: Vec<String> = (self.observed.iter())
            .filter(|v| !range.contains(v))
            .map(ToString::to_string)
            .collect();
        (!outside.is_empty()).then_some(TooWide::ObservedOutside {
            scenario,
            outside,
            range,
        })
    }
}

/// The target a trial ran on, as known-divergence entries select it.
pub struct Ran<'a> {
    /// e.g. `caliban@0.15.0`, or a bare `claude-code` for the pin.
    pub name: &'a str,
    pub dialect: &'a str,
    pub version: &'a str,
    /// The frames it printed (an entry's `printed` symptom is looked for here).
    pub printed: &'a [&'a Value],
}

/// A target's known divergences, and the file they came from (for messages).
#[derive(Debug, Clone, Default)]
pub struct KnownList {
    pub file: String,
    pub entries: Vec<Entry>,
    /// The CLI bugs its `finding:` entries name (`findings.yaml` beside the list).
    pub findings: Findings,
}

impl KnownList {
    /// A list file; a missing or empty one lists nothing.
    pub fn load(path: &Path, shown_as: &str) -> Result<KnownList, KnownError> {
        let shown = || shown_as.to_string();
        let text = match std::fs::read_to_string(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(source) => {
                return Err(KnownError::Unreadable {
                    shown_as: shown(),
                    source,
                })
            }
            Ok(text) => text,
        };
        let mut entries = if text.trim().is_empty() || is_only_comments(&text) {
            Vec::new()
        } else {
            serde_yaml::from_str::<Vec<Entry>>(&text).map_err(|source| KnownError::Yaml {
                shown_as: shown(),
                source,
            })?
        };
        for (e, line) in entries.iter_mut().zip(entry_lines(&text)) {
            e.line = line;
        }
        let refused: Vec<(usize, TooWide)> = (entries.iter())
            .filter_map(|e| Some((e.line, e.too_wide()?)))
            .collect();
        if !refused.is_empty() {
            return Err(KnownError::TooWide {
                shown_as: shown(),
                entries: refused,
            });
        }
        let findings = Findings::beside(path, shown_as)?;
        check_findings(&findings, &entries, shown_as)?;
        Ok(KnownList {
            file: shown_as.to_string(),
            entries,
            findings,
        })
    }

    /// Adds another list's entries and findings (a project's list after its dialect's).
    pub fn extend(&mut self, other: &KnownList) {
        self.entries.extend(other.entries.iter().cloned());
        (self.findings.items).extend(other.findings.items.iter().cloned());
    }

    /// Each entry whose scenario `exists` says is not in the catalogue, as `file:line:
    /// message` (a stale or misspelt id hides nothing and would never be re-checked).
    pub fn unknown_scenarios(&self, exists: impl Fn(&str) -> bool) -> Vec<String> {
        (self.entries.iter())
            .filter(|e| !exists(&e.scenario))
            .map(|e| {
                format!(
                    "{}:{}: the entry names {}, which is not a scenario of the catalogue (a case is `file[case]`): correct the id or remove the entry",
                    self.file, e.line, e.scenario
                )
            })
            .collect()
    }

    /// The entries about scenario `scenario` on `target`, in the list's order (the frames
    /// it printed are not looked at: an entry's `printed` symptom is checked when judging).
    pub fn for_trial(&self, scenario: &str, target: &Ran) -> Vec<&Entry> {
        (self.entries.iter())
            .filter(|e| e.is_for(scenario, target))
            .collect()
    }

    /// Marks each of `divergences` that an entry names as known, and says which entries
    /// for this trial matched none (stale).
    pub fn judge(
        &self,
        scenario: &str,
        target: &Ran,
        divergences: &mut [Divergence],
    ) -> Vec<&Entry> {
        let entries = self.for_trial(scenario, target);
        // An entry whose printed symptom is missing hides nothing, and is stale.
        let showing: Vec<bool> = (entries.iter())
            .map(|e| e.shows_symptom(target.printed))
            .collect();
        let mut used = vec![false; entries.len()];
        for d in divergences.iter_mut() {
            let found =
                (entries.iter().zip(&showing)).position(|(e, shows)| *shows && e.matches(d));
            if let Some(i) = found {
                d.known = Some(entries[i].reason.clone());
                d.finding = entries[i].finding.clone();
                used[i] = true;
            }
        }
        let met: Vec<&FindingId> = (entries.iter().zip(&used))
            .filter(|(_, used)| **used)
            .filter_map(|(e, _)| e.finding.as_ref())
            .collect();
        let hidden = |e: &Entry| e.hidden_by.as_ref().is_some_and(|f| met.contains(&f));
        entries
            .into_iter()
            .zip(used)
            .filter(|(e, used)| !used && !e.intermittent && !hidden(e))
            .map(|(e, _)| e)
            .collect()
    }
}

/// The line each top-level `- ` item of a YAML list starts on (1-based), in order.
fn entry_lines(text: &str) -> Vec<usize> {
    (text.lines().enumerate())
        .filter(|(_, l)| l.starts_with("- ") || *l == "-")
        .map(|(i, _)| i + 1)
        .collect()
}

/// Why the findings and the entries that point at them do not agree: an entry naming
/// no finding of the file, a finding entry without the releases it holds for, a
/// finding no entry shows.
fn check_findings(
    findings: &Findings,
    entries: &[Entry],
    shown_as: &str,
) -> Result<(), KnownError> {
    let shown = || shown_as.to_string();
    for e in entries {
        let Some(id) = &e.finding else { continue };
        let unknown = findings.get(id).is_none();
        if unknown || e.versions.is_none() || e.observed.is_empty() {
            let (shown_as, scenario, id) = (shown(), e.scenario.clone(), id.clone());
            return Err(match unknown {
                true => KnownError::NoSuchFinding {
                    shown_as,
                    scenario,
                    id,
                },
                false => KnownError::FindingWithoutReleases {
                    shown_as,
                    scenario,
                    id,
                },
            });
        }
    }
    for e in entries {
        let Some(id) = &e.hidden_by else { continue };
        let shown = |o: &&Entry| o.scenario == e.scenario && o.finding.as_ref() == Some(id);
        if !entries.iter().any(|o| shown(&o)) {
            return Err(KnownError::HiddenByNoEntry {
                shown_as: shown_as.to_string(),
                scenario: e.scenario.clone(),
                id: id.clone(),
            });
        }
    }
    if let Some(unused) =
        (findings.items.iter()).find(|f| !entries.iter().any(|e| e.finding.as_ref() == Some(&f.id)))
    {
        let id = unused.id.clone();
        return Err(KnownError::UnshownFinding {
            shown_as: shown(),
            id,
        });
    }
    Ok(())
}

fn is_only_comments(text: &str) -> bool {
    text.lines()
        .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ran<'a>(name: &'a str, dialect: &'a str) -> Ran<'a> {
        let version = name.split('@').nth(1).unwrap_or("0.15.0");
        Ran {
            name,
            dialect,
            version,
            printed: &[],
        }
    }

    fn load(yaml: &str) -> Result<KnownList, KnownError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("known.yaml");
        std::fs::write(&path, yaml).unwrap();
        KnownList::load(&path, "known.yaml")
    }

    fn list(yaml: &str) -> KnownList {
        load(yaml).unwrap()
    }

    const LIST: &str = "- scenario: s/a\n  kind: missing_frame\n  path: $.result\n  reason: no result\n- scenario: s/a\n  kind: exit_code\n  message: 'got 1$'\n  target: caliban@0.16.0\n  reason: other version\n";

    #[test]
    fn an_entry_hides_only_the_divergence_it_names() {
        let known = list(LIST);
        let mut divs = vec![
            Divergence::new(Kind::MissingFrame, "no result").at_path("$.result"),
            Divergence::new(Kind::MissingFrame, "no result").at_path("$.other"),
            Divergence::new(Kind::ExitCode, "expected exit code 0, got 1"),
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
        let flaky = list("- scenario: s/a\n  kind: hang\n  message: 'frame 6 \\(result/success\\)'\n  intermittent: true\n  reason: r\n");
        assert!(flaky.judge("s/a", &ran("t", "t"), &mut []).is_empty());
        let known = list(LIST);
        let stale = known.judge("s/a", &ran("caliban@0.16.0", "caliban"), &mut []);
        assert_eq!(stale.len(), 2);
        assert_eq!(stale[0].describe(), "s/a missing frame at $.result");
        assert_eq!(stale[1].describe(), "s/a exit code matching /got 1$/");
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

        let err = load("- scenario: s\n  kind: no_such_kind\n  reason: r\n")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("known.yaml:2:"), "{err}");
        assert!(list("# nothing yet\n").entries.is_empty());
    }

    const REGRESSION: &str = "- scenario: s\n  kind: field_mismatch\n  path: $.type\n  versions: \">=2.1.198, <2.1.217\"\n  observed: [2.1.198, 2.1.205]\n  reason: regression\n";

    #[test]
    fn a_regression_of_some_releases_hides_its_symptom_there_only() {
        let known = list(REGRESSION);
        let divs = || {
            vec![
                Divergence::new(Kind::FieldMismatch, "frame 3").at_path("$.type"),
                Divergence::new(Kind::ExitCode, "exit 1"),
                Divergence::new(Kind::Timeout, "killed"),
            ]
        };
        for (version, known_there) in [("2.1.197", false), ("2.1.201", true), ("2.1.217", false)] {
            let target = Ran {
                name: "claude-code",
                dialect: "claude-code",
                version,
                printed: &[],
            };
            let mut found = divs();
            known.judge("s", &target, &mut found);
            assert_eq!(found[0].known.is_some(), known_there, "{version}");
            assert!(
                found[1..].iter().all(|d| d.known.is_none()),
                "{version}: an exit code or a hang is not the symptom it names"
            );
        }
        let target = Ran {
            name: "claude-code@2.1.205",
            dialect: "claude-code",
            version: "2.1.205",
            printed: &[],
        };
        let stale = known.judge("s", &target, &mut []);
        assert_eq!(
            stale[0].describe(),
            "s field mismatch at $.type on >=2.1.198, <2.1.217"
        );
    }

    #[test]
    fn a_printed_symptom_limits_the_entry_to_trials_that_show_it() {
        let known = list("- scenario: s\n  kind: missing_frame\n  message: '^no prompt$'\n  printed: {type: system, subtype: init, permissionMode: auto}\n  versions: \">=2.1.285, <2.1.300\"\n  observed: [2.1.290]\n  reason: auto mode\n");
        let auto = json!({"type": "system", "subtype": "init", "permissionMode": "auto"});
        let default = json!({"type": "system", "subtype": "init", "permissionMode": "default"});
        for (printed, hidden) in [([&auto], true), ([&default], false)] {
            let target = Ran {
                name: "claude-code",
                dialect: "claude-code",
                version: "2.1.290",
                printed: &printed,
            };
            let mut found = vec![Divergence::new(Kind::MissingFrame, "no prompt")];
            let stale = known.judge("s", &target, &mut found);
            assert_eq!(found[0].known.is_some(), hidden);
            assert_eq!(
                stale.len(),
                usize::from(!hidden),
                "without the symptom it is stale"
            );
        }
    }

    #[test]
    fn an_entry_that_would_hide_anything_is_refused() {
        let no_kind =
            load("- scenario: s\n  versions: \">=2.1.1\"\n  observed: [2.1.1]\n  reason: r\n");
        assert!(no_kind.unwrap_err().to_string().contains("kind"));
        let no_symptom = load("- scenario: s\n  kind: exit_code\n  versions: \">=2.1.1\"\n  observed: [2.1.1]\n  reason: r\n").unwrap_err().to_string();
        assert!(no_symptom.contains("names no symptom"), "{no_symptom}");
        let unseen = load("- scenario: s\n  kind: exit_code\n  message: 'got 1$'\n  versions: \">=2.1.1\"\n  reason: r\n").unwrap_err().to_string();
        assert!(unseen.contains("observed"), "{unseen}");
        let outside = load("- scenario: s\n  kind: exit_code\n  message: 'got 1$'\n  versions: \">=2.1.1, <2.1.5\"\n  observed: [2.1.9]\n  reason: r\n").unwrap_err().to_string();
        assert!(outside.contains("observed 2.1.9 outside"), "{outside}");
    }

    /// Whatever the dialect's file or a project's: with or without a range.
    #[test]
    fn an_entry_without_a_symptom_is_refused_with_its_line_even_without_a_range() {
        let ok = "- scenario: s\n  kind: exit_code\n  message: 'got 1$'\n  reason: r\n";
        let kind_only = format!("{ok}- scenario: s\n  kind: missing_frame\n  reason: r\n");
        let err = load(&kind_only).unwrap_err().to_string();
        assert!(
            err.starts_with("known.yaml:5: ") && err.contains("names no symptom"),
            "{err}"
        );
        let printed_only = format!("{ok}# a comment\n- scenario: s\n  kind: missing_frame\n  printed: {{type: system, subtype: init, permissionMode: auto}}\n  reason: r\n");
        let err = load(&printed_only).unwrap_err().to_string();
        assert!(
            err.starts_with("known.yaml:6: ") && err.contains("`printed` only narrows"),
            "{err}"
        );
        let ranged = printed_only.replace(
            "auto}\n",
            "auto}\n  versions: \">=2.1.285, <2.1.302\"\n  observed: [2.1.290]\n",
        );
        assert_ne!(ranged, printed_only);
        assert!(load(&ranged)
            .unwrap_err()
            .to_string()
            .contains("names no symptom"));
        for symptom in [
            "path: $.result",
            "frame: 3",
            "message: '^expected entry 2 matches no frame'",
        ] {
            let named =
                format!("{ok}- scenario: s\n  kind: missing_frame\n  {symptom}\n  reason: r\n");
            assert_eq!(list(&named).entries.len(), 2, "{symptom}");
        }
    }

    #[test]
    fn a_message_that_matches_any_divergence_of_its_kind_is_refused() {
        for (kind, catch_all) in [
            ("missing_frame", r"^expected entry \d+ matches no frame"),
            ("invariant", "got no control_response"),
            ("timeout", "^the CLI did not finish within"),
            (
                "hang",
                "got no answer within|did not exit|printed its last result",
            ),
            ("exit_code", ".*"),
        ] {
            let yaml = format!("- scenario: s\n  kind: {kind}\n  message: '{catch_all}'\n  path: $.x\n  reason: r\n");
            let err = load(&yaml).unwrap_err().to_string();
            assert!(
                err.starts_with("known.yaml:1: ")
                    && err.contains("matches any")
                    && err.contains("name what is specific"),
                "{kind}: {err}"
            );
        }
    }

    #[test]
    fn an_entry_marks_only_the_divergence_it_names_not_others_of_its_kind() {
        let known = list("- scenario: s\n  kind: missing_frame\n  message: '^expected entry 3 matches no frame'\n  reason: r\n");
        let mut divs = vec![
            Divergence::new(
                Kind::MissingFrame,
                "expected entry 3 matches no frame from frame 4 on",
            ),
            Divergence::new(
                Kind::MissingFrame,
                "expected entry 5 matches no frame from frame 4 on",
            ),
        ];
        let stale = known.judge("s", &ran("t", "t"), &mut divs);
        assert!(stale.is_empty());
        assert!(divs[0].known.is_some());
        assert_eq!(
            divs[1].known, None,
            "entry 5 is not named: the trial still fails"
        );
    }

    #[test]
    fn an_entry_naming_no_scenario_of_the_catalogue_is_named_with_its_line() {
        let known = list("- scenario: s/a\n  kind: exit_code\n  message: 'got 1$'\n  reason: r\n- scenario: s/b[case]\n  kind: exit_code\n  message: 'got 1$'\n  reason: r\n");
        let unknown = known.unknown_scenarios(|id| id == "s/a");
        assert_eq!(unknown.len(), 1, "{unknown:?}");
        assert!(
            unknown[0]
                .starts_with("known.yaml:5: the entry names s/b[case], which is not a scenario"),
            "{unknown:?}"
        );
        assert!(known.unknown_scenarios(|_| true).is_empty());
    }

    /// Every list in the repository loads, and every regression entry's range holds a
    /// release of the sample the nightly job runs with --strict, so each is re-checked.
    #[test]
    fn the_repositorys_lists_load_and_each_range_is_in_the_nightly_sample() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let project = crate::install::Project::at(root);
        for dir in std::fs::read_dir(root.join("targets")).unwrap() {
            let dir = dir.unwrap().path();
            let file = dir.join("known-divergences.yaml");
            if !file.exists() {
                continue;
            }
            let list = KnownList::load(&file, &file.display().to_string())
                .unwrap_or_else(|e| panic!("{e}"));
            let named = list.entries.iter().map(|e| e.scenario.as_str());
            let ids = crate::catalogue::ids(&[root.join("scenarios")], named);
            let unknown = list.unknown_scenarios(|id| ids.contains(id));
            assert!(unknown.is_empty(), "{unknown:#?}");
            let dialect = dir.file_name().unwrap().to_str().unwrap();
            let Ok(versions) = crate::install::supported::Versions::load(&project, dialect) else {
                assert!(
                    list.entries.iter().all(|e| e.versions.is_none()),
                    "{dialect}: ranges need a supported sample"
                );
                continue;
            };
            let sample: Vec<semver::Version> = (versions.supported.iter())
                .filter_map(|v| parse_version(v))
                .collect();
            for e in &list.entries {
                if let Some(range) = &e.versions {
                    assert!(
                        sample.iter().any(|v| range.contains(v)),
                        "{}: no supported release of {dialect} is in {range}: the entry is never re-checked",
                        e.describe()
                    );
                }
            }
        }
    }

    fn with_findings(
        known: &str,
        findings: &str,
    ) -> (tempfile::TempDir, Result<KnownList, KnownError>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("known-divergences.yaml");
        std::fs::write(&path, known).unwrap();
        std::fs::write(dir.path().join(crate::findings::FILE_NAME), findings).unwrap();
        let list = KnownList::load(&path, "t/known-divergences.yaml");
        (dir, list)
    }

    const FINDING_ITEM: &str = "- id: null-line\n  title: A null line ends the CLI\n  contract: a line that is not a message is ignored\n  what: exit 1\n";
    const FINDING_ENTRY: &str = "- scenario: s\n  kind: exit_code\n  message: 'expected exit code 0, got 1'\n  finding: null-line\n  versions: \">=2.1.300, <2.1.331\"\n  observed: [2.1.330]\n  reason: r\n";

    #[test]
    fn an_entry_points_at_a_finding_of_its_file() {
        let (_d, list) = with_findings(FINDING_ENTRY, FINDING_ITEM);
        let list = list.unwrap();
        assert_eq!(list.findings.items.len(), 1);

        let (_d, err) = with_findings(&FINDING_ENTRY.replace("null-line", "other"), FINDING_ITEM);
        assert!(err
            .unwrap_err()
            .to_string()
            .contains("names the finding `other`"));
    }

    #[test]
    fn a_finding_holds_for_named_releases_and_is_shown_by_an_entry() {
        let unranged = "- scenario: s\n  kind: exit_code\n  message: 'expected exit code 0, got 1'\n  finding: null-line\n  reason: r\n";
        let (_d, err) = with_findings(unranged, FINDING_ITEM);
        assert!(err.unwrap_err().to_string().contains("give `versions`"));
        let (_d, err) = with_findings("", FINDING_ITEM);
        assert!(err
            .unwrap_err()
            .to_string()
            .contains("has no known-divergence entry"));
        let (_d, err) = with_findings(FINDING_ENTRY, &format!("{FINDING_ITEM}{FINDING_ITEM}"));
        assert!(err.unwrap_err().to_string().contains("used twice"));
    }

    /// A steady entry whose symptom is in a frame that another finding's (intermittent)
    /// entry takes away is not stale in a trial where that entry matched, and is stale in
    /// one where nothing matched; a `hidden_by` naming no entry of its scenario is refused.
    #[test]
    fn an_entry_hidden_by_a_finding_is_stale_only_where_that_finding_did_not_show() {
        let findings = format!(
            "{FINDING_ITEM}{}",
            FINDING_ITEM.replace("null-line", "no-result")
        );
        let steady = "- scenario: s\n  kind: invariant\n  path: $.is_error\n  message: '^exited with 0'\n  hidden_by: no-result\n  finding: null-line\n  versions: \">=2.1.300, <2.1.331\"\n  observed: [2.1.330]\n  reason: r\n";
        let lost = "- scenario: s\n  kind: missing_frame\n  message: '^no result$'\n  intermittent: true\n  finding: no-result\n  versions: \"2.1.330\"\n  observed: [2.1.330]\n  reason: r\n";
        let (_d, list) = with_findings(&format!("{steady}{lost}"), &findings);
        let list = list.unwrap();
        let on = ran("claude-code@2.1.330", "claude-code");
        let mut lost_result = vec![Divergence::new(Kind::MissingFrame, "no result")];
        let stale = list.judge("s", &on, &mut lost_result);
        assert!(stale.is_empty(), "hidden where no-result showed: {stale:?}");
        assert!(lost_result[0].known.is_some());
        let stale = list.judge("s", &on, &mut []);
        assert_eq!(stale.len(), 1, "nothing showed: the steady entry is stale");
        assert_eq!(stale[0].kind, Kind::Invariant);

        let (_d, err) = with_findings(&format!("{steady}{}", FINDING_ENTRY), &findings);
        let err = err.unwrap_err().to_string();
        assert!(err.contains("the entry for s is hidden by the finding `no-result`, but no entry for s is that finding"), "{err}");
    }
}
