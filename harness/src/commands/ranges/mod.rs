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
pub mod proof;
pub mod prove;
pub mod rewrite;
pub mod subject;

pub use enumerate::{enumerate, Range, Sources};
pub use proof::{Edge, Proof, ProofFile, Unproven};
pub use subject::Subject;

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
    pub unproven: Vec<Finding>,
    /// The distinct release versions the unproven ranges are bounded by (per dialect).
    pub boundaries: usize,
}

impl Checked {
    pub fn summary(&self) -> String {
        format!(
            "{} of {} range(s) proven ({} version block(s), {} known entr(y/ies), {} min/max_version bound(s)); {} unproven, bounded at {} distinct release(s)",
            self.ranges - self.unproven.len(),
            self.ranges,
            self.blocks,
            self.entries,
            self.bounds,
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
        if let Err(why) = files[&r.proofs].status(r) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_is_bounded_at_each_version_it_names() {
        assert_eq!(bound_versions(">=2.1.90, <2.1.101"), ["2.1.90", "2.1.101"]);
        assert_eq!(bound_versions("<2.1.197"), ["2.1.197"]);
    }
}
