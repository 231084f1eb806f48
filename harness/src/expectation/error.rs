//! [`ExpectationError`]: why a scenario's `expect` keys and version blocks cannot be used;
//! [`BadKey`]: a key whose range does not read; [`PatchError`]: why a `frames_patch`
//! cannot be applied. Each message is the sentence a user sees after the scenario file's
//! name and the key's line.

use crate::dialect::Dialect;
use crate::version_range::RangeError;

/// An `expect` key, `TARGET@RANGE`, whose range does not read (`claude-code@soon`).
#[derive(Debug, thiserror::Error)]
#[error("`{key}`: {source}")]
pub struct BadKey {
    pub key: String,
    #[source]
    pub source: RangeError,
}

/// What is wrong with an `expect` key or a version block.
#[derive(Debug, thiserror::Error)]
pub enum ExpectationError {
    /// A key whose range does not read.
    #[error("expect: {0}")]
    BadKey(#[from] BadKey),
    /// A key naming no target.
    #[error(
        "expect: `{target}` is not a target: the known targets are {}",
        Dialect::known_keys()
    )]
    NotATarget { target: String },
    /// `frames_patch` in the general block, which has nothing to patch.
    #[error("expect.{key}: `frames_patch` belongs in a version block (`{key}@>=X`); write `frames` here")]
    PatchInGeneral { key: String },
    /// A range that holds no version (`>=2.1.300, <2.1.100`).
    #[error("expect: `{key}` names no version")]
    NoVersion { key: String },
    /// Two keys of one target naming the same versions.
    #[error("expect: `{other}` names the same versions as `{key}`: merge them")]
    SameVersions { key: String, other: String },
    /// Two ranges that overlap without one holding the other.
    #[error("expect: `{other}` overlaps `{key}` and neither holds the other: split them so each version has one most specific block")]
    Overlap { key: String, other: String },
    /// A range every version of which a narrower block takes.
    #[error("expect: `{key}` is unreachable: narrower blocks cover every version it names")]
    Unreachable { key: String },
    /// The file's text, read again for the blocks as written, does not parse.
    #[error(transparent)]
    Yaml(#[from] serde_yaml::Error),
    /// The `frames_patch` of a block an inner block refines does not apply.
    #[error(transparent)]
    OuterPatch(PatchError),
    /// The block's own `frames_patch` does not apply.
    #[error("expect.{key}: {source}")]
    Patch {
        key: String,
        #[source]
        source: PatchError,
    },
    /// The block, merged with the blocks it refines, is no expectation.
    #[error("expect.{key}, merged with the general block: {source}")]
    Merged {
        key: String,
        #[source]
        source: serde_yaml::Error,
    },
}

/// Why a `frames_patch` cannot be applied to the frames it refines.
#[derive(Debug, thiserror::Error)]
pub enum PatchError {
    /// `frames_patch` that is not a mapping.
    #[error("`frames_patch` maps frame indexes to patterns")]
    NotAMapping,
    /// The block refined has no `frames` list.
    #[error("`frames_patch` needs `frames` to patch in the block it refines")]
    NoFrames,
    /// A key that is not a number.
    #[error("`frames_patch`: `{index:?}` is not a frame index")]
    NotAnIndex { index: Box<serde_yaml::Value> },
    /// An index past the frames (a list may go at the index after the last).
    #[error("`frames_patch`: no frame {index} to patch, the expectation has {len} (0-based; a list at index {len} appends)")]
    PastTheEnd { index: usize, len: usize },
    /// `$merge` of something other than a map, or onto a frame that is not one.
    #[error("`frames_patch`: `$merge` at {index} needs a frame pattern and a map of keys")]
    MergeWhat { index: usize },
    /// Frames (JSON) that do not convert to or from YAML.
    #[error(transparent)]
    Yaml(#[from] serde_yaml::Error),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each message is the one the `String` errors it replaced printed, word for word.
    #[test]
    fn messages_read_as_before() {
        let key = || "claude-code@<2".to_string();
        let other = || "claude-code@>=1".to_string();
        let range = || crate::version_range::VersionRange::parse("soon").unwrap_err();
        let cases: Vec<(String, String)> = vec![
            (
                ExpectationError::from(BadKey { key: "claude-code@soon".into(), source: range() }).to_string(),
                format!("expect: `claude-code@soon`: {}", range()),
            ),
            (
                ExpectationError::NotATarget { target: "gemini".into() }.to_string(),
                "expect: `gemini` is not a target: the known targets are claude-code, caliban, qwen-code".into(),
            ),
            (
                ExpectationError::PatchInGeneral { key: "claude-code".into() }.to_string(),
                "expect.claude-code: `frames_patch` belongs in a version block (`claude-code@>=X`); write `frames` here".into(),
            ),
            (
                ExpectationError::NoVersion { key: key() }.to_string(),
                "expect: `claude-code@<2` names no version".into(),
            ),
            (
                ExpectationError::SameVersions { key: key(), other: other() }.to_string(),
                "expect: `claude-code@>=1` names the same versions as `claude-code@<2`: merge them".into(),
            ),
            (
                ExpectationError::Overlap { key: key(), other: other() }.to_string(),
                "expect: `claude-code@>=1` overlaps `claude-code@<2` and neither holds the other: split them so each version has one most specific block".into(),
            ),
            (
                ExpectationError::Unreachable { key: key() }.to_string(),
                "expect: `claude-code@<2` is unreachable: narrower blocks cover every version it names".into(),
            ),
            (
                ExpectationError::OuterPatch(PatchError::NoFrames).to_string(),
                "`frames_patch` needs `frames` to patch in the block it refines".into(),
            ),
            (
                ExpectationError::Patch { key: key(), source: PatchError::NotAMapping }.to_string(),
                "expect.claude-code@<2: `frames_patch` maps frame indexes to patterns".into(),
            ),
            (
                PatchError::NotAnIndex { index: Box::new("x".into()) }.to_string(),
                format!("`frames_patch`: `{:?}` is not a frame index", serde_yaml::Value::from("x")),
            ),
            (
                PatchError::PastTheEnd { index: 7, len: 3 }.to_string(),
                "`frames_patch`: no frame 7 to patch, the expectation has 3 (0-based; a list at index 3 appends)".into(),
            ),
            (
                PatchError::MergeWhat { index: 2 }.to_string(),
                "`frames_patch`: `$merge` at 2 needs a frame pattern and a map of keys".into(),
            ),
        ];
        for (now, before) in cases {
            assert_eq!(now, before);
        }
    }
}
