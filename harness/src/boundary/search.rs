//! One scenario's binary search over the published versions between `from` and `to`,
//! as a state that is told what each probe saw; which version to probe next is its
//! own business, so that a run can share probes between scenarios.

use crate::divergence::Divergence;
use serde::{Serialize, Serializer};

/// What a scenario did at a probed version.
#[derive(Debug, Clone, PartialEq)]
pub enum Seen {
    /// It matches the expectation `to` gets, not `from`'s.
    New,
    /// It matches the expectation `from` gets, not `to`'s.
    Old,
    /// It matches both: the two expectations do not tell this output apart.
    Both,
    /// It matches neither (the first divergence from each).
    Neither {
        against_new: Box<Divergence>,
        against_old: Box<Divergence>,
    },
    /// It did not run (skipped, or the version could not be installed).
    NotRun(String),
}

impl Seen {
    pub fn describe(&self) -> String {
        match self {
            Seen::New => "matched the new expectation".into(),
            Seen::Old => "matched the old expectation".into(),
            Seen::Both => "matched both expectations".into(),
            Seen::Neither { against_new, .. } => {
                format!("matched neither expectation ({})", against_new.message)
            }
            Seen::NotRun(why) => format!("did not run: {why}"),
        }
    }
}

/// How a scenario's bisection ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    /// `first_new` is the first version matching `to`'s expectation; `last_old`, the one
    /// before it that was run, matches `from`'s. `untested` lie between them and could not
    /// be installed.
    Boundary {
        first_new: String,
        last_old: String,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        untested: Vec<String>,
    },
    /// `from` and `to` get the same expectation: nothing to bisect.
    Identical,
    /// `from` or `to` does not pass its own expectation.
    Precondition { version: String, why: String },
    /// A version between matches neither expectation.
    Neither {
        version: String,
        #[serde(serialize_with = "message")]
        against_new: Box<Divergence>,
        #[serde(serialize_with = "message")]
        against_old: Box<Divergence>,
    },
    /// A version between matches both expectations.
    Both { version: String },
    /// A version between did not run the scenario.
    NotRun { version: String, why: String },
    /// Run again, a version on either side of the boundary did something else.
    Unstable {
        version: String,
        first: String,
        again: String,
    },
}

/// bisect.json gives a divergence as its message, as it always has.
fn message<S: Serializer, D: AsRef<Divergence>>(d: &D, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&d.as_ref().message)
}

impl Outcome {
    pub fn bisected(&self) -> bool {
        matches!(self, Outcome::Boundary { .. })
    }
}

/// A scenario's search over `versions` (index 0 is `from`, the last is `to`): `old`
/// behaves as `from`, `new` as `to`, and the boundary lies in between.
#[derive(Debug, Clone)]
pub struct Search {
    pub scenario: String,
    old: usize,
    new: usize,
    /// Indices that could not be installed: never probed again.
    unavailable: Vec<usize>,
    pub outcome: Option<Outcome>,
}

impl Search {
    pub fn new(scenario: &str, versions: usize) -> Search {
        Search {
            scenario: scenario.to_string(),
            old: 0,
            new: versions.saturating_sub(1),
            unavailable: Vec::new(),
            outcome: None,
        }
    }

    pub fn stop(&mut self, outcome: Outcome) {
        self.outcome.get_or_insert(outcome);
    }

    /// The version index to probe next, or `None` when the search is over (then
    /// [`Search::finish`] says how).
    pub fn next(&self) -> Option<usize> {
        if self.outcome.is_some() {
            return None;
        }
        let open: Vec<usize> = (self.old + 1..self.new)
            .filter(|i| !self.unavailable.contains(i))
            .collect();
        open.get(open.len() / 2).copied()
    }

    /// What the scenario did at version index `at`.
    pub fn saw(&mut self, at: usize, seen: Seen, versions: &[String], install_failed: bool) {
        let version = versions[at].clone();
        match seen {
            Seen::New => self.new = at,
            Seen::Old => self.old = at,
            Seen::NotRun(_) if install_failed => self.unavailable.push(at),
            Seen::NotRun(why) => self.stop(Outcome::NotRun { version, why }),
            Seen::Both => self.stop(Outcome::Both { version }),
            Seen::Neither {
                against_new,
                against_old,
            } => self.stop(Outcome::Neither {
                version,
                against_new,
                against_old,
            }),
        }
    }

    /// The two versions on either side of the boundary once the search has nothing left
    /// to probe, with what each was seen to do: to be run again.
    pub fn edges(&self) -> Option<[(usize, Seen); 2]> {
        (self.outcome.is_none() && self.next().is_none())
            .then_some([(self.old, Seen::Old), (self.new, Seen::New)])
    }

    /// What an edge did when run again: anything but what it did first ends the search
    /// as unstable.
    pub fn confirm(&mut self, at: usize, first: &Seen, again: Seen, versions: &[String]) {
        if again != *first {
            self.stop(Outcome::Unstable {
                version: versions[at].clone(),
                first: first.describe(),
                again: again.describe(),
            });
        }
    }

    /// Ends a search that has nothing left to probe with its boundary.
    pub fn finish(&mut self, versions: &[String]) {
        let untested = (self.old + 1..self.new)
            .map(|i| versions[i].clone())
            .collect();
        self.stop(Outcome::Boundary {
            first_new: versions[self.new].clone(),
            last_old: versions[self.old].clone(),
            untested,
        });
    }
}

/// What a probe did, from its first divergence from the new expectation and from the old.
pub fn seen(against_new: Option<Divergence>, against_old: Option<Divergence>) -> Seen {
    match (against_new, against_old) {
        (None, None) => Seen::Both,
        (None, Some(_)) => Seen::New,
        (Some(_), None) => Seen::Old,
        (Some(new), Some(old)) => Seen::Neither {
            against_new: Box::new(new),
            against_old: Box::new(old),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::divergence::Kind;

    fn versions(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("1.0.{i}")).collect()
    }

    /// Drives a search against a version where behaviour changes.
    fn bisect(n: usize, boundary: usize) -> (Outcome, usize) {
        let v = versions(n);
        let mut s = Search::new("x", n);
        let mut probes = 0;
        while let Some(at) = s.next() {
            probes += 1;
            let seen = if at >= boundary { Seen::New } else { Seen::Old };
            s.saw(at, seen, &v, false);
        }
        s.finish(&v);
        (s.outcome.unwrap(), probes)
    }

    #[test]
    fn finds_every_boundary_in_logarithmic_probes() {
        for boundary in 1..20 {
            let (outcome, probes) = bisect(20, boundary);
            assert_eq!(
                outcome,
                Outcome::Boundary {
                    first_new: format!("1.0.{boundary}"),
                    last_old: format!("1.0.{}", boundary - 1),
                    untested: vec![],
                }
            );
            assert!(probes <= 5, "{probes} probes for boundary {boundary}");
        }
    }

    #[test]
    fn an_uninstallable_version_is_skipped_and_named_when_it_hides_the_boundary() {
        let v = versions(5);
        let mut s = Search::new("x", 5);
        while let Some(at) = s.next() {
            match at {
                2 => s.saw(at, Seen::NotRun("npm failed".into()), &v, true),
                1 => s.saw(at, Seen::Old, &v, false),
                _ => s.saw(at, Seen::New, &v, false),
            }
        }
        s.finish(&v);
        assert_eq!(
            s.outcome.unwrap(),
            Outcome::Boundary {
                first_new: "1.0.3".into(),
                last_old: "1.0.1".into(),
                untested: vec!["1.0.2".into()],
            }
        );
    }

    #[test]
    fn a_version_matching_neither_stops_the_search_and_says_so() {
        let v = versions(9);
        let mut s = Search::new("x", 9);
        let at = s.next().unwrap();
        s.saw(
            at,
            Seen::Neither {
                against_new: Box::new(Divergence::new(Kind::ExitCode, "a")),
                against_old: Box::new(Divergence::new(Kind::ExitCode, "b")),
            },
            &v,
            false,
        );
        assert_eq!(s.next(), None);
        s.finish(&v);
        assert!(
            matches!(s.outcome, Some(Outcome::Neither { ref version, .. }) if *version == v[at])
        );
    }
}
