//! `streamcheck ranges`: every version range a project states (version blocks of scenarios
//! and of cases, a block's `min_version`/`max_version`, known-divergence entries'
//! `versions`) proven by a boundary search over the published releases, not keyed on a
//! sample.
//!
//! - [`enumerate`]: the ranges, where each is written, and a hash of what it judges
//! - [`proof`]: the proofs files (`targets/<dialect>/ranges.yaml`) and whether a range is proven
//! - [`prove`]: the search (`bisect`'s prober and search, shared by every range of a run)
//! - [`rewrite`]: a range written back with the bounds its proof found

pub mod enumerate;
pub mod not_proven;
pub mod proof;
pub mod prove;
pub mod rewrite;
pub mod subject;

pub use enumerate::{enumerate, Range, Sources};
pub use proof::{Edge, Proof, ProofFile, Unproven};
pub use subject::Subject;

use crate::known::Entry;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// One range that is not proven, and why.
#[derive(Debug, Clone)]
pub struct Finding {
    pub range: Range,
    pub why: Unproven,
}

impl Finding {
    /// `file:line: range (why: ...)`.
    pub fn line(&self) -> String {
        format!(
            "{}:{}: {} (why: {})",
            self.range.file,
            self.range.line,
            self.range.describe(),
            self.why
        )
    }
}

/// What `ranges --check` found.
#[derive(Debug, Clone, Default)]
pub struct Checked {
    pub ranges: usize,
    pub blocks: usize,
    pub entries: usize,
    pub bounds: usize,
    /// Intermittent known entries, held to the one release they were observed on.
    pub intermittent: usize,
    /// Intermittent known entries held to the proven range of a steady entry of their
    /// scenario and finding.
    pub intermittent_with_steady: usize,
    /// Intermittent known entries proven by runs repeated on each release.
    pub intermittent_repeated: usize,
    pub unproven: Vec<Finding>,
    /// The distinct release versions the unproven ranges are bounded by (per dialect).
    pub boundaries: usize,
}

impl Checked {
    pub fn summary(&self) -> String {
        format!(
            "{} of {} range(s) proven ({} version block(s), {} known entr(y/ies), {} min/max_version bound(s); {} intermittent entr(y/ies) held to the one release observed, {} to a steady entry's proven range, {} proven by runs repeated on each release); {} unproven, bounded at {} distinct release(s)",
            self.ranges - self.unproven.len(),
            self.ranges,
            self.blocks,
            self.entries,
            self.bounds,
            self.intermittent,
            self.intermittent_with_steady,
            self.intermittent_repeated,
            self.unproven.len(),
            self.boundaries
        )
    }
}

/// Loads each proofs file `ranges` name once.
pub fn proof_files(
    ranges: &[Range],
) -> Result<BTreeMap<PathBuf, ProofFile>, proof::ProofFileError> {
    let mut files = BTreeMap::new();
    for r in ranges {
        if !files.contains_key(&r.proofs) {
            files.insert(r.proofs.clone(), ProofFile::load(&r.proofs)?);
        }
    }
    Ok(files)
}

/// Which of `ranges` are not proven by a current proof.
pub fn check(ranges: &[Range]) -> Result<Checked, proof::ProofFileError> {
    let files = proof_files(ranges)?;
    let mut checked = Checked {
        ranges: ranges.len(),
        ..Default::default()
    };
    let mut boundaries: BTreeSet<(String, String)> = BTreeSet::new();
    for r in ranges {
        match &r.subject {
            Subject::Block(_) => checked.blocks += 1,
            Subject::Bound { .. } => checked.bounds += 1,
            Subject::Entry { .. } => checked.entries += 1,
        }
        let status = match r.entry.as_ref().filter(|e| e.intermittent) {
            Some(e) => intermittent(r, e, ranges, &files).map(|held| match held {
                Held::Observed => checked.intermittent += 1,
                Held::Steady => checked.intermittent_with_steady += 1,
                Held::Repeated => checked.intermittent_repeated += 1,
            }),
            None => files[&r.proofs].status(r).map(|_| ()),
        };
        if let Err(why) = status {
            let dialect = r.dialect.conventions().expect_key().to_string();
            boundaries.extend(
                bound_versions(&r.versions.to_string())
                    .into_iter()
                    .map(|v| (dialect.clone(), v)),
            );
            checked.unproven.push(Finding {
                range: r.clone(),
                why,
            });
        }
    }
    checked.boundaries = boundaries.len();
    Ok(checked)
}

/// A proven range whose proof has no trial on some sampled releases inside it.
#[derive(Debug, Clone)]
pub struct Unsampled {
    pub range: Range,
    /// Its current proof.
    pub proof: Proof,
    /// The sampled releases between the proof's first and last release it did not run.
    pub not_run: Vec<String>,
}

/// The proven ranges whose proofs did not run every release of their dialect's sample
/// (`sample_of`) inside them: proven, but checked only at their bounds.
pub fn unsampled(
    ranges: &[Range],
    sample_of: impl Fn(crate::dialect::Dialect) -> Vec<String>,
) -> Result<Vec<Unsampled>, proof::ProofFileError> {
    let files = proof_files(ranges)?;
    let mut samples = BTreeMap::new();
    let mut out = Vec::new();
    for r in ranges {
        let Ok(proof) = files[&r.proofs].status(r) else {
            continue;
        };
        let sample = samples
            .entry(r.dialect)
            .or_insert_with(|| sample_of(r.dialect));
        let not_run = proof.sample_not_run(sample);
        if !not_run.is_empty() {
            out.push(Unsampled {
                range: r.clone(),
                proof: proof.clone(),
                not_run,
            });
        }
    }
    Ok(out)
}

/// An intermittent entry's range: the one release it was observed on; or the proven range
/// of a steady entry of the same scenario and finding, a symptom that comes and goes with
/// timing only where that one always shows (a line cut, or not, by a hang that is always
/// there); or a range proven by runs repeated on each release (a single run that does not
/// show it proves nothing).
fn intermittent(
    r: &Range,
    e: &Entry,
    ranges: &[Range],
    files: &BTreeMap<PathBuf, ProofFile>,
) -> Result<Held, Unproven> {
    if matches!(r.versions.single(), Some(v) if e.observed.contains(&v)) {
        return Ok(Held::Observed);
    }
    let rides_on = |o: &Range| {
        o.entry.as_ref().is_some_and(|s| {
            !s.intermittent
                && s.scenario == e.scenario
                && s.finding.is_some()
                && s.finding == e.finding
        }) && o.versions == r.versions
            && files[&o.proofs].status(o).is_ok()
    };
    if ranges.iter().any(rides_on) {
        return Ok(Held::Steady);
    }
    match files[&r.proofs].status(r) {
        Ok(proof) if proof.runs_each.is_some_and(|n| n >= 2) => Ok(Held::Repeated),
        Err(differ @ Unproven::BoundsDiffer(_)) => Err(differ),
        _ => Err(Unproven::Intermittent),
    }
}

/// What an intermittent entry's range is held to.
enum Held {
    Observed,
    Steady,
    Repeated,
}

/// The versions a range is bounded at (`>=2.1.90, <2.1.101`: 2.1.90 and 2.1.101).
fn bound_versions(written: &str) -> Vec<String> {
    let Ok(req) = semver::VersionReq::parse(written) else {
        return vec![written.to_string()];
    };
    (req.comparators.iter())
        .map(|c| {
            format!(
                "{}.{}.{}",
                c.major,
                c.minor.unwrap_or(0),
                c.patch.unwrap_or(0)
            )
        })
        .collect()
}

/// `ranges` in batches of about `size` to prove one after another, each range with every
/// other range that shares a scenario with it (a search frees the bounds of the ranges it
/// proves in their scenarios, so those of one scenario are proven together), in the order
/// given; a batch is larger than `size` only when one such group is.
pub fn batches(ranges: &[Range], size: usize) -> Vec<Vec<Range>> {
    // Each range's group: the first range it shares a scenario with, through others.
    let mut group: Vec<usize> = (0..ranges.len()).collect();
    let root = |group: &Vec<usize>, mut i: usize| {
        while group[i] != i {
            i = group[i];
        }
        i
    };
    let mut first_of: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, r) in ranges.iter().enumerate() {
        for id in &r.scenarios {
            let j = *first_of.entry(id.as_str()).or_insert(i);
            let (a, b) = (root(&group, i), root(&group, j));
            group[a.max(b)] = a.min(b);
        }
    }
    let mut groups: BTreeMap<usize, Vec<Range>> = BTreeMap::new();
    for (i, r) in ranges.iter().enumerate() {
        groups.entry(root(&group, i)).or_default().push(r.clone());
    }
    let mut out: Vec<Vec<Range>> = Vec::new();
    for (_, g) in groups {
        match out.last_mut() {
            Some(last) if last.len() + g.len() <= size.max(1) => last.extend(g),
            _ => out.push(g),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_is_bounded_at_each_version_it_names() {
        assert_eq!(bound_versions(">=2.1.90, <2.1.101"), ["2.1.90", "2.1.101"]);
        assert_eq!(bound_versions("<2.1.197"), ["2.1.197"]);
    }

    fn range(line: usize, scenarios: &[&str]) -> Range {
        Range {
            file: "f.yaml".into(),
            path: PathBuf::from("f.yaml"),
            line,
            dialect: crate::dialect::Dialect::ClaudeCode,
            proofs: PathBuf::from("ranges.yaml"),
            case: None,
            subject: Subject::Block("claude-code@<1.0.0".into()),
            versions: crate::version_range::VersionRange::parse("<1.0.0").unwrap(),
            hash: String::new(),
            scenarios: scenarios.iter().map(|&s| s.into()).collect(),
            entry: None,
        }
    }

    #[test]
    fn ranges_of_one_scenario_are_in_one_batch_and_batches_keep_their_order() {
        let ranges = [
            range(1, &["a"]),
            range(2, &["b"]),
            range(3, &["c", "d"]),
            range(4, &["a"]),
            range(5, &["d"]),
            range(6, &["e"]),
        ];
        let lines = |size| -> Vec<Vec<usize>> {
            (batches(&ranges, size).iter())
                .map(|b| b.iter().map(|r| r.line).collect())
                .collect()
        };
        assert_eq!(lines(1), [vec![1, 4], vec![2], vec![3, 5], vec![6]]);
        assert_eq!(lines(3), [vec![1, 4, 2], vec![3, 5, 6]]);
        assert_eq!(lines(100), [vec![1, 4, 2, 3, 5, 6]]);
        assert_eq!(lines(100).concat().len(), ranges.len());
    }
}
