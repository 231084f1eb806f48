//! [`KnownError`]: why a known-divergence list does not load, naming the list as the user
//! knows it (`shown_as`); [`TooWide`]: why an entry would hide more than it names. Each
//! message is the sentence a user sees.

use super::generic::Broad;
use crate::divergence::Kind;
use crate::findings::{yaml_place, FindingId, FindingsError, FILE_NAME};
use crate::trial_id::ScenarioId;
use crate::version_range::VersionRange;

/// Why a known-divergence list does not load.
#[derive(Debug, thiserror::Error)]
pub enum KnownError {
    /// The list exists but cannot be read.
    #[error("{shown_as}: {source}")]
    Unreadable {
        shown_as: String,
        #[source]
        source: std::io::Error,
    },
    /// Not a list of entries.
    #[error("{shown_as}{}: {source} (each entry: scenario, kind, reason; optionally path, frame, message, printed, target, intermittent, hidden_by, versions with observed)", yaml_place(.source))]
    Yaml {
        shown_as: String,
        #[source]
        source: serde_yaml::Error,
    },
    /// Entries that would hide more than they name, each with the line it starts on: one
    /// line of the message each.
    #[error("{}", refused(.shown_as, .entries))]
    TooWide {
        shown_as: String,
        entries: Vec<(usize, TooWide)>,
    },
    /// `findings.yaml` beside the list does not load.
    #[error(transparent)]
    Findings(#[from] FindingsError),
    /// An entry naming a finding `findings.yaml` does not hold.
    #[error(
        "{shown_as}: the entry for {scenario} names the finding `{id}`, which {} does not hold",
        FILE_NAME
    )]
    NoSuchFinding {
        shown_as: String,
        scenario: ScenarioId,
        id: FindingId,
    },
    /// A finding's entry without the releases it holds for.
    #[error("{shown_as}: the entry for {scenario} is the finding `{id}`: a bug holds for some releases; give `versions` and the releases it was `observed` on")]
    FindingWithoutReleases {
        shown_as: String,
        scenario: ScenarioId,
        id: FindingId,
    },
    /// A `hidden_by` naming a finding no entry of the same scenario has.
    #[error("{shown_as}: the entry for {scenario} is hidden by the finding `{id}`, but no entry for {scenario} is that finding (give that entry, or remove hidden_by)")]
    HiddenByNoEntry {
        shown_as: String,
        scenario: ScenarioId,
        id: FindingId,
    },
    /// A finding no entry shows.
    #[error("{shown_as}: the finding `{id}` in {} has no known-divergence entry (give one, with its releases and symptom, or remove the finding)", FILE_NAME)]
    UnshownFinding { shown_as: String, id: FindingId },
}

/// Why an entry of the list for `scenario` may hide more than it names.
#[derive(Debug, thiserror::Error)]
pub enum TooWide {
    /// No `message`, `path` or `frame`.
    #[error("the entry for {scenario} names no symptom: give `message` (a regex on the divergence's message naming what is specific to it: the entry number, the request, the frame, the key or the text), `path` or `frame`; `printed` only narrows an entry")]
    NoSymptom { scenario: ScenarioId },
    /// A `message` that matches messages of its kind that name nothing specific.
    #[error("the entry for {scenario}: {kind} message /{regex}/ {broad}: name what is specific to this one (the entry number, the request, the frame, the key or the text)")]
    Broad {
        scenario: ScenarioId,
        kind: Kind,
        regex: String,
        broad: Broad,
    },
    /// `versions` without the releases it was seen on.
    #[error("the entry for {scenario} on {range} says on no release it was seen: give `observed: [VERSION, ...]`")]
    Unobserved {
        scenario: ScenarioId,
        range: VersionRange,
    },
    /// Releases `observed` outside its `versions`.
    #[error("the entry for {scenario}: observed {} outside its versions {range}", .outside.join(", "))]
    ObservedOutside {
        scenario: ScenarioId,
        outside: Vec<String>,
        range: VersionRange,
    },
}

/// `LIST:LINE: why`, one line per entry.
fn refused(shown_as: &str, entries: &[(usize, TooWide)]) -> String {
    let lines: Vec<String> = (entries.iter())
        .map(|(line, why)| format!("{shown_as}:{line}: {why}"))
        .collect();
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each message is the one the `String` errors it replaced printed, word for word.
    #[test]
    fn messages_read_as_before() {
        let list = || "t/known.yaml".to_string();
        let scenario = || ScenarioId::from("s/a");
        let id: FindingId = serde_yaml::from_str("null-line").unwrap();
        let range = VersionRange::parse(">=2.1.1, <2.1.5").unwrap();
        let cases: Vec<(KnownError, String)> = vec![
            (
                KnownError::Unreadable {
                    shown_as: list(),
                    source: std::io::Error::other("gone"),
                },
                "t/known.yaml: gone".into(),
            ),
            (
                KnownError::TooWide {
                    shown_as: list(),
                    entries: vec![
                        (1, TooWide::NoSymptom { scenario: scenario() }),
                        (
                            5,
                            TooWide::Broad {
                                scenario: scenario(),
                                kind: Kind::ExitCode,
                                regex: ".*".into(),
                                broad: Broad::Any("x".into()),
                            },
                        ),
                        (
                            9,
                            TooWide::Unobserved {
                                scenario: scenario(),
                                range: range.clone(),
                            },
                        ),
                        (
                            14,
                            TooWide::ObservedOutside {
                                scenario: scenario(),
                                outside: vec!["2.1.9".into(), "2.1.10".into()],
                                range,
                            },
                        ),
                    ],
                },
                [
                    "t/known.yaml:1: the entry for s/a names no symptom: give `message` (a regex on the divergence's message naming what is specific to it: the entry number, the request, the frame, the key or the text), `path` or `frame`; `printed` only narrows an entry",
                    "t/known.yaml:5: the entry for s/a: exit code message /.*/ matches any divergence of its kind (such as \"x\"): name what is specific to this one (the entry number, the request, the frame, the key or the text)",
                    "t/known.yaml:9: the entry for s/a on >=2.1.1, <2.1.5 says on no release it was seen: give `observed: [VERSION, ...]`",
                    "t/known.yaml:14: the entry for s/a: observed 2.1.9, 2.1.10 outside its versions >=2.1.1, <2.1.5",
                ]
                .join("\n"),
            ),
            (
                KnownError::NoSuchFinding {
                    shown_as: list(),
                    scenario: scenario(),
                    id: id.clone(),
                },
                "t/known.yaml: the entry for s/a names the finding `null-line`, which findings.yaml does not hold".into(),
            ),
            (
                KnownError::FindingWithoutReleases {
                    shown_as: list(),
                    scenario: scenario(),
                    id: id.clone(),
                },
                "t/known.yaml: the entry for s/a is the finding `null-line`: a bug holds for some releases; give `versions` and the releases it was `observed` on".into(),
            ),
            (
                KnownError::UnshownFinding {
                    shown_as: list(),
                    id: id.clone(),
                },
                "t/known.yaml: the finding `null-line` in findings.yaml has no known-divergence entry (give one, with its releases and symptom, or remove the finding)".into(),
            ),
            (
                FindingsError::Twice {
                    shown: "t/findings.yaml".into(),
                    id,
                }
                .into(),
                "t/findings.yaml: the finding id `null-line` is used twice".into(),
            ),
        ];
        for (error, before) in cases {
            assert_eq!(error.to_string(), before);
        }
        let yaml = serde_yaml::from_str::<Vec<u8>>("- x").unwrap_err();
        let at = yaml_place(&yaml);
        assert_eq!(at, ":1:3");
        let shown = format!("t/known.yaml{at}: {yaml} (each entry: scenario, kind, reason; optionally path, frame, message, printed, target, intermittent, hidden_by, versions with observed)");
        let error = KnownError::Yaml {
            shown_as: list(),
            source: yaml,
        };
        assert_eq!(error.to_string(), shown);
    }
}
