//! Proofs of ranges (`targets/<dialect>/ranges.yaml`, a project's `ranges.yaml` beside
//! its known-divergences file): per range, the first and last published release that
//! behave as it says, the release on each side that does not, the trials that showed it,
//! and a hash of what was judged, so that a change to the scenario or entry makes the
//! proof stale.

use super::enumerate::Range;
use super::subject::Subject;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::Path;

/// The version of the proofs file's format.
pub const FORMAT_VERSION: u32 = 1;

const HEADER: &str = "\
# Proofs of version ranges, written by `streamcheck ranges --prove` and checked by
# `streamcheck ranges --check` (do not edit by hand). Each proof names the range it proves
# (`file`, `case`, and the `block` key, the block's `bound`, or the known `entry`), the
# first and last published release that behave as the range says, the release on each
# side that does not (`below`, `above`; or `first published`, `first checked`, `newest
# checked`), the trials that showed it (an intermittent entry's ran `runs_each` times
# each: at least one run showed it inside, none beyond), and `hash`, a hash of the
# scenario, case or entry judged: when that changes, the proof is stale and the range
# must be proven again.
";

/// The release beyond a proven range on one side.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", from = "String")]
pub enum Edge {
    /// This release does not behave as the range says.
    Release(String),
    /// The range starts at the first published release.
    FirstPublished,
    /// The range starts at the oldest release searched (the dialect's oldest supported).
    FirstChecked,
    /// The range ends at the newest published release when it was proven.
    NewestChecked,
    /// The block's own `min_version` or `max_version` ends it there (a range proven apart).
    OwnBound,
}

impl fmt::Display for Edge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Edge::Release(v) => v,
            Edge::FirstPublished => "first published",
            Edge::FirstChecked => "first checked",
            Edge::NewestChecked => "newest checked",
            Edge::OwnBound => "its own min_version or max_version",
        })
    }
}

impl From<Edge> for String {
    fn from(e: Edge) -> String {
        e.to_string()
    }
}

impl From<String> for Edge {
    fn from(s: String) -> Edge {
        match s.as_str() {
            "first published" => Edge::FirstPublished,
            "first checked" => Edge::FirstChecked,
            "newest checked" => Edge::NewestChecked,
            "its own min_version or max_version" => Edge::OwnBound,
            _ => Edge::Release(s),
        }
    }
}

/// One range's proof.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Proof {
    pub file: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case: Option<String>,
    #[serde(flatten)]
    pub subject: Subject,
    pub hash: String,
    /// The first and last published release that behave as the range says.
    pub first: String,
    pub last: String,
    pub below: Edge,
    pub above: Edge,
    /// The trials that showed it (`<scenario> on <target>@<version>`).
    pub trials: Vec<String>,
    /// An intermittent entry's proof: how many times each of those trials ran. Each
    /// release from `first` to `last` showed the entry in at least one run, `below` and
    /// `above` in none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs_each: Option<usize>,
}

impl Proof {
    fn proves(&self, range: &Range) -> bool {
        self.file == range.file && self.case == range.case && self.subject == range.subject
    }

    fn proves_same(&self, other: &Proof) -> bool {
        self.file == other.file && self.case == other.case && self.subject == other.subject
    }

    /// Whether the proven releases agree with the range as written: `first` and `last`
    /// in it, the releases beyond them outside it.
    pub fn agrees(&self, range: &Range) -> bool {
        let inside = |v: &str| {
            crate::version_range::parse_version(v).is_some_and(|v| range.versions.contains(&v))
        };
        let outside = |e: &Edge| match e {
            Edge::Release(v) => !inside(v),
            _ => true,
        };
        inside(&self.first) && inside(&self.last) && outside(&self.below) && outside(&self.above)
    }

    /// The releases of `sample` between `first` and `last` on which no trial of this proof
    /// ran: a proof made before the prover ran the sample inside a range (or with
    /// `--no-sample`) cannot tell a behaviour that changed twice inside it.
    pub fn sample_not_run(&self, sample: &[String]) -> Vec<String> {
        use crate::version_range::parse_version;
        let (Some(first), Some(last)) = (parse_version(&self.first), parse_version(&self.last))
        else {
            return Vec::new();
        };
        let ran = |v: &str| {
            let on = format!("@{v}");
            self.trials.iter().any(|t| t.ends_with(&on))
        };
        (sample.iter())
            .filter(|v| parse_version(v).is_some_and(|p| first <= p && p <= last))
            .filter(|v| !ran(v))
            .cloned()
            .collect()
    }

    /// The range the proof found, in words.
    pub fn found(&self) -> String {
        let each = match self.runs_each {
            Some(n) => format!(
                " (each release run {n} times: shown in at least one run inside, in none beyond)"
            ),
            None => String::new(),
        };
        format!(
            "{} to {} behave as written, {} below and {} above do not{each}",
            self.first, self.last, self.below, self.above
        )
    }
}

/// Why a range is not proven.
#[derive(Debug, Clone, PartialEq)]
pub enum Unproven {
    NoProof,
    /// A proof exists, of other content.
    Stale,
    /// The proof's releases disagree with the range as written.
    BoundsDiffer(String),
    /// An intermittent entry whose range is neither the one release it was observed on, nor
    /// the proven range of a steady entry of its scenario and finding, nor proven by runs
    /// repeated on each release.
    Intermittent,
}

impl fmt::Display for Unproven {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unproven::NoProof => f.write_str("no proof"),
            Unproven::Stale => f.write_str("proof stale"),
            Unproven::BoundsDiffer(found) => write!(f, "bounds differ from the proof: {found}"),
            Unproven::Intermittent => f.write_str(
                "an intermittent entry is proven only by repeated runs (`ranges --prove` runs each release --repeat times: shown in at least one run inside, in none beyond), or written as the one release it was observed on, or as the proven range of a steady entry of its scenario and finding",
            ),
        }
    }
}

/// A proofs file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProofFile {
    pub format_version: u32,
    #[serde(default)]
    pub proofs: Vec<Proof>,
}

impl Default for ProofFile {
    fn default() -> Self {
        ProofFile {
            format_version: FORMAT_VERSION,
            proofs: Vec::new(),
        }
    }
}

/// Why a proofs file could not be read or written.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{path}: {message}")]
pub struct ProofFileError {
    pub path: String,
    pub message: String,
}

impl ProofFile {
    /// The file at `path`; a missing one holds no proof.
    pub fn load(path: &Path) -> Result<ProofFile, ProofFileError> {
        let err = |message: String| ProofFileError {
            path: path.display().to_string(),
            message,
        };
        let text = match std::fs::read_to_string(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(ProofFile::default()),
            Err(e) => return Err(err(e.to_string())),
            Ok(t) => t,
        };
        let file: ProofFile = serde_yaml::from_str(&text).map_err(|e| err(e.to_string()))?;
        if file.format_version != FORMAT_VERSION {
            return Err(err(format!(
                "format_version {} (this streamcheck reads {FORMAT_VERSION})",
                file.format_version
            )));
        }
        Ok(file)
    }

    pub fn save(&mut self, path: &Path) -> Result<(), ProofFileError> {
        let err = |message: String| ProofFileError {
            path: path.display().to_string(),
            message,
        };
        self.proofs.sort_by(|a, b| {
            (&a.file, &a.case, a.subject.describe()).cmp(&(&b.file, &b.case, b.subject.describe()))
        });
        let body = serde_yaml::to_string(&*self).map_err(|e| err(e.to_string()))?;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| err(e.to_string()))?;
        }
        std::fs::write(path, format!("{HEADER}{body}")).map_err(|e| err(e.to_string()))
    }

    /// Whether `range` is proven here, and why not.
    pub fn status(&self, range: &Range) -> Result<&Proof, Unproven> {
        let Some(current) = self.current(range) else {
            return Err(match self.proofs.iter().any(|p| p.proves(range)) {
                true => Unproven::Stale,
                false => Unproven::NoProof,
            });
        };
        match current.agrees(range) {
            true => Ok(current),
            false => Err(Unproven::BoundsDiffer(current.found())),
        }
    }

    /// The proof of `range` as it is now, whether or not its releases agree with it.
    pub fn current(&self, range: &Range) -> Option<&Proof> {
        (self.proofs.iter()).find(|p| p.proves(range) && p.hash == range.hash)
    }

    /// Drops the current proof of `range`: what it proved does not hold any more.
    pub fn forget(&mut self, range: &Range) {
        self.proofs
            .retain(|p| !(p.proves(range) && p.hash == range.hash));
    }

    /// Adds `proof`, replacing one of the same content.
    pub fn put(&mut self, proof: Proof) {
        self.proofs
            .retain(|p| !(p.hash == proof.hash && p.proves_same(&proof)));
        self.proofs.push(proof);
    }

    /// Drops the proofs that prove none of `ranges` (every range of the project: a range
    /// removed or written differently leaves its proof behind); how many.
    pub fn drop_orphans(&mut self, ranges: &[&Range]) -> usize {
        let before = self.proofs.len();
        self.proofs.retain(|p| ranges.iter().any(|r| p.proves(r)));
        before - self.proofs.len()
    }

    /// Drops the stale proofs of `ranges`: those of their range whose content none of them has now.
    pub fn prune(&mut self, ranges: &[&Range]) {
        self.proofs.retain(|p| {
            let mine: Vec<&&Range> = ranges.iter().filter(|r| p.proves(r)).collect();
            mine.is_empty() || mine.iter().any(|r| r.hash == p.hash)
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_proof_names_the_sampled_releases_inside_it_that_it_did_not_run() {
        let proof = Proof {
            file: "scenarios/s.yaml".into(),
            case: None,
            subject: Subject::Block("claude-code@<2.1.198".into()),
            hash: "sha256:x".into(),
            first: "2.1.74".into(),
            last: "2.1.197".into(),
            below: Edge::FirstChecked,
            above: Edge::Release("2.1.198".into()),
            trials: ["2.1.74", "2.1.137", "2.1.197", "2.1.198"]
                .map(|v| format!("s on claude-code@{v}"))
                .to_vec(),
            runs_each: None,
        };
        let sample = ["2.1.74", "2.1.105", "2.1.137", "2.1.197", "2.1.250"].map(String::from);
        // 2.1.250 is past `last`; 2.1.74, 2.1.137 and 2.1.197 ran; 2.1.105 did not.
        assert_eq!(proof.sample_not_run(&sample), vec!["2.1.105".to_string()]);
        let all_ran = Proof {
            trials: sample
                .iter()
                .map(|v| format!("s on claude-code@{v}"))
                .collect(),
            ..proof
        };
        assert!(all_ran.sample_not_run(&sample).is_empty());
    }
}
