//! Version ranges in `expect` keys: `claude-code@>=2.1.300`, `claude-code@<2.1.200`,
//! `claude-code@2.1.74` (one version), `caliban@>=0.15, <0.17`.
//!
//! A range is parsed with the `semver` crate and turned into a half-open interval of
//! release versions `[low, high)`, so ranges can be compared: one holds another, they
//! overlap, or they are apart. Pre-release tags are ignored on both sides: a CLI
//! `2.1.300-beta` counts as `2.1.300`.

use semver::{Comparator, Op, Version, VersionReq};
use std::fmt;

/// Why a text is not a version range.
#[derive(Debug, thiserror::Error)]
pub enum RangeError {
    /// Neither a version nor a semver requirement.
    #[error("`{written}` is not a version range: {source}")]
    NotARange {
        written: String,
        #[source]
        source: semver::Error,
    },
    /// A comparator with a pre-release tag (`>=2.1.0-beta`).
    #[error("`{written}`: pre-release versions are not supported in ranges")]
    PreRelease { written: String },
}

/// The versions an `expect` key names, as written and as an interval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionRange {
    written: String,
    low: Version,
    /// Exclusive; `None`: no upper end.
    high: Option<Version>,
}

impl fmt::Display for VersionRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.written)
    }
}

/// A range in a YAML or JSON file: the text [`VersionRange::parse`] reads.
impl<'de> serde::Deserialize<'de> for VersionRange {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        VersionRange::parse(&text).map_err(serde::de::Error::custom)
    }
}

impl VersionRange {
    /// `2.1.74` is that version exactly (not semver's `^2.1.74`); anything else is a
    /// semver requirement (`>=2.1.300`, `<2.1.200`, `~2.1`, `>=2.1.100, <2.1.200`).
    pub fn parse(text: &str) -> Result<VersionRange, RangeError> {
        let written = text.trim().to_string();
        let req = match Version::parse(&written) {
            Ok(v) => VersionReq {
                comparators: vec![Comparator {
                    op: Op::Exact,
                    major: v.major,
                    minor: Some(v.minor),
                    patch: Some(v.patch),
                    pre: v.pre,
                }],
            },
            Err(_) => VersionReq::parse(&written).map_err(|source| RangeError::NotARange {
                written: written.clone(),
                source,
            })?,
        };
        let mut range = VersionRange {
            written,
            low: Version::new(0, 0, 0),
            high: None,
        };
        for c in &req.comparators {
            if !c.pre.is_empty() {
                return Err(RangeError::PreRelease {
                    written: range.written,
                });
            }
            let (low, high) = interval(c);
            if low > range.low {
                range.low = low;
            }
            range.high = match (range.high.take(), high) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
        Ok(range)
    }

    /// The one release it holds, when it holds exactly one (`2.1.197`, `>=2.1.197, <2.1.198`).
    pub fn single(&self) -> Option<Version> {
        let next = Version::new(self.low.major, self.low.minor, self.low.patch + 1);
        (self.high.as_ref() == Some(&next)).then(|| self.low.clone())
    }

    /// No version is in it (`>=2.1.300, <2.1.200`).
    pub fn is_empty(&self) -> bool {
        self.high.as_ref().is_some_and(|h| *h <= self.low)
    }

    pub fn contains(&self, version: &Version) -> bool {
        let v = release(version);
        v >= self.low && self.high.as_ref().is_none_or(|h| v < *h)
    }

    /// Every version of `other` is in `self`.
    pub fn holds(&self, other: &VersionRange) -> bool {
        other.low >= self.low
            && match (&self.high, &other.high) {
                (None, _) => true,
                (Some(_), None) => false,
                (Some(a), Some(b)) => b <= a,
            }
    }

    /// Some version is in both.
    pub fn overlaps(&self, other: &VersionRange) -> bool {
        let below = |low: &Version, high: &Option<Version>| high.as_ref().is_none_or(|h| low < h);
        !self.is_empty()
            && !other.is_empty()
            && below(&self.low, &other.high)
            && below(&other.low, &self.high)
    }

    /// The same versions, however written.
    pub fn same_versions(&self, other: &VersionRange) -> bool {
        self.low == other.low && self.high == other.high
    }

    /// Every version of `self` is in one of `parts`.
    pub fn covered_by<'a>(&self, parts: impl IntoIterator<Item = &'a VersionRange>) -> bool {
        let mut parts: Vec<&VersionRange> = parts.into_iter().filter(|p| !p.is_empty()).collect();
        parts.sort_by(|a, b| a.low.cmp(&b.low));
        let mut reached = self.low.clone();
        for p in parts {
            if p.low > reached {
                return false;
            }
            match &p.high {
                None => return true,
                Some(h) if *h > reached => reached = h.clone(),
                Some(_) => {}
            }
            if self.high.as_ref().is_some_and(|h| reached >= *h) {
                return true;
            }
        }
        false
    }
}

/// A version as a target reports it (`2.1.197`, `2.1.197 (Claude Code)`, `0.15`), if it
/// reads as one.
pub fn parse_version(text: &str) -> Option<Version> {
    let word = text.split_whitespace().next()?;
    if let Ok(v) = Version::parse(word) {
        return Some(v);
    }
    let mut parts = word.split(['.', '-', '+']).map(|p| p.parse::<u64>().ok());
    let major = parts.next()??;
    let minor = parts.next().flatten().unwrap_or(0);
    let patch = parts.next().flatten().unwrap_or(0);
    Some(Version::new(major, minor, patch))
}

fn release(v: &Version) -> Version {
    Version::new(v.major, v.minor, v.patch)
}

/// One comparator as `[low, high)`.
fn interval(c: &Comparator) -> (Version, Option<Version>) {
    let zero = Version::new(0, 0, 0);
    let at = Version::new(c.major, c.minor.unwrap_or(0), c.patch.unwrap_or(0));
    // The first version after everything the comparator's written parts name.
    let after = match (c.minor, c.patch) {
        (Some(minor), Some(patch)) => Version::new(c.major, minor, patch + 1),
        (Some(minor), None) => Version::new(c.major, minor + 1, 0),
        _ => Version::new(c.major + 1, 0, 0),
    };
    match c.op {
        Op::Exact | Op::Wildcard => (at, Some(after)),
        Op::Greater => (after, None),
        Op::GreaterEq => (at, None),
        Op::Less => (zero, Some(at)),
        Op::LessEq => (zero, Some(after)),
        Op::Tilde => {
            let high = match c.minor {
                Some(minor) => Version::new(c.major, minor + 1, 0),
                None => Version::new(c.major + 1, 0, 0),
            };
            (at, Some(high))
        }
        Op::Caret => {
            let high = match (c.major, c.minor, c.patch) {
                (0, Some(0), Some(patch)) => Version::new(0, 0, patch + 1),
                (0, Some(minor), _) => Version::new(0, minor + 1, 0),
                (major, _, _) => Version::new(major + 1, 0, 0),
            };
            (at, Some(high))
        }
        // `Op` is non-exhaustive; a future operator is read as "exactly".
        _ => (at, Some(after)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(s: &str) -> VersionRange {
        VersionRange::parse(s).unwrap()
    }
    fn v(s: &str) -> Version {
        parse_version(s).unwrap()
    }

    #[test]
    fn a_bare_version_is_that_version_only() {
        let exact = r("2.1.74");
        assert!(exact.contains(&v("2.1.74")));
        assert!(!exact.contains(&v("2.1.75")));
        assert!(!exact.contains(&v("2.1.73")));
        assert_eq!(exact.to_string(), "2.1.74");
    }

    #[test]
    fn comparators_bound_the_range() {
        assert!(r(">=2.1.300").contains(&v("2.1.300")));
        assert!(!r(">=2.1.300").contains(&v("2.1.299")));
        assert!(r("<2.1.200").contains(&v("2.1.199")));
        assert!(!r("<2.1.200").contains(&v("2.1.200")));
        assert!(r("<=2.1.200").contains(&v("2.1.200")));
        assert!(!r(">2.1.200").contains(&v("2.1.200")));
        assert!(r(">2.1.200").contains(&v("2.1.201")));
        assert!(r("~2.1").contains(&v("2.1.999")));
        assert!(!r("~2.1").contains(&v("2.2.0")));
        assert!(r("^0.15.0").contains(&v("0.15.9")));
        assert!(!r("^0.15.0").contains(&v("0.16.0")));
        let both = r(">=2.1.100, <2.1.200");
        assert!(both.contains(&v("2.1.150")) && !both.contains(&v("2.1.200")));
    }

    #[test]
    fn pre_releases_count_as_their_release() {
        assert!(r(">=2.1.300").contains(&v("2.1.300-beta.1")));
        assert_eq!(
            VersionRange::parse(">=2.1.300-beta")
                .unwrap_err()
                .to_string(),
            "`>=2.1.300-beta`: pre-release versions are not supported in ranges"
        );
    }

    #[test]
    fn nonsense_is_refused_and_empty_ranges_are_seen() {
        let e = VersionRange::parse("latest").unwrap_err().to_string();
        assert!(e.starts_with("`latest` is not a version range: "), "{e}");
        assert!(r(">=2.1.300, <2.1.200").is_empty());
        assert!(!r(">=2.1.300").is_empty());
    }

    #[test]
    fn holding_overlapping_and_covering() {
        assert!(r("<2.1.200").holds(&r("2.1.74")));
        assert!(!r("2.1.74").holds(&r("<2.1.200")));
        assert!(r(">=2.1.100").holds(&r(">=2.1.300")));
        assert!(r(">=2.1.100, <2.1.300").overlaps(&r(">=2.1.200")));
        assert!(!r("<2.1.200").overlaps(&r(">=2.1.200")));
        assert!(r("<=2.1.199").same_versions(&r("<2.1.200")));
        let parent = r(">=2.1.100, <2.1.300");
        assert!(parent.covered_by([&r("<2.1.200"), &r(">=2.1.200")]));
        assert!(!parent.covered_by([&r("<2.1.200"), &r(">=2.1.201")]));
        assert!(r(">=2.1.0").covered_by([&r(">=2.0.0")]));
        assert!(!r(">=2.1.0").covered_by([&r(">=2.1.0, <3.0.0")]));
    }

    #[test]
    fn reported_versions_are_read_leniently() {
        assert_eq!(v("2.1.197 (Claude Code)"), Version::new(2, 1, 197));
        assert_eq!(v("0.15"), Version::new(0, 15, 0));
        assert!(parse_version("unknown").is_none());
    }
}
