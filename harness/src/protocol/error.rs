//! [`ProtocolError`]: why an inventory, its examples, the hand-written files beside it or
//! the SDK's schema could not be read; [`InventoryError`]: why an inventory file's text
//! does not hold an inventory; [`SdkError`]: why the SDK's schema cannot be read as
//! message types or compared; [`SchemaError`]: why a release's schema cannot be written.
//! Each message is the sentence a user sees.

use crate::file_error::FileError;
use semver::Version;
use std::path::PathBuf;
use std::sync::Arc;

/// Why reading what the reference and the checks are made from failed.
#[derive(Debug, thiserror::Error)]
pub enum ProtocolError {
    /// A file (an inventory, the examples, the overview, the SDK schema) that cannot be read.
    #[error(transparent)]
    Io(#[from] FileError<std::io::Error>),
    /// An inventory file that does not hold an inventory.
    #[error(transparent)]
    Inventory(#[from] FileError<InventoryError>),
    /// The kinds no scenario shows (`unobserved.yaml`) that do not parse.
    #[error(transparent)]
    Yaml(#[from] FileError<serde_yaml::Error>),
    /// The SDK's schema that does not parse.
    #[error(transparent)]
    Json(#[from] FileError<serde_json::Error>),
    /// The SDK's schema (in the named file) that cannot be compared with the inventory.
    #[error(transparent)]
    Sdk(#[from] FileError<SdkError>),
    /// A release's schema that cannot be written.
    #[error(transparent)]
    Schema(#[from] SchemaError),
    /// A line of the examples that does not parse.
    #[error("{}:{line}: {source}", .path.display())]
    ExampleJson {
        path: PathBuf,
        line: usize,
        #[source]
        source: serde_json::Error,
    },
    /// A line of the examples without its kind, release or frame.
    #[error("{}:{line}: a line is {{\"kind\", \"release\", \"frame\"}}", .path.display())]
    ExampleShape { path: PathBuf, line: usize },
    /// A line of the examples whose release is no version.
    #[error("{}:{line}: {source}", .path.display())]
    ExampleRelease {
        path: PathBuf,
        line: usize,
        #[source]
        source: semver::Error,
    },
    /// An inventory loaded once per process that did not load.
    #[error(transparent)]
    Loaded(#[from] Arc<ProtocolError>),
}

/// Why an inventory file's text does not hold an inventory; the entry it names is where.
#[derive(Debug, thiserror::Error)]
pub enum InventoryError {
    #[error(transparent)]
    Yaml(#[from] serde_yaml::Error),
    /// A release (in `releases`, `unknown_coverage` or a span of `at`) that is no version.
    #[error("{at}: {source}")]
    Release { at: String, source: BadVersion },
    #[error("format_version {found}: this streamcheck reads up to {reads}")]
    Format { found: u32, reads: u32 },
    #[error("kinds.{kind}.by: both `by` and `by_all_but`")]
    ByTwice { kind: String },
    #[error("kinds.{kind}.keys.{path}: `{found}` is not a JSON type ({})", crate::frame::JSON_TYPES.join(", "))]
    NotAJsonType {
        kind: String,
        path: String,
        found: String,
    },
    #[error("kinds.{kind}.keys.{path}: values: `{found}` is neither a list nor `open`")]
    Values {
        kind: String,
        path: String,
        found: String,
    },
}

/// A version as written in an inventory that does not parse.
#[derive(Debug, thiserror::Error)]
#[error("`{text}`: {source}")]
pub struct BadVersion {
    pub text: String,
    #[source]
    pub source: semver::Error,
}

/// Why the SDK's schema cannot be read as message types, or compared with the inventory.
#[derive(Debug, thiserror::Error)]
pub enum SdkError {
    #[error("the schema declares no message type")]
    NoMessageType,
    #[error("the inventory starts after {release}")]
    StartsAfter { release: Version },
}

/// Why a release's schema cannot be written.
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    /// The SDK's schema it would be written with that holds no message type.
    #[error(transparent)]
    Sdk(#[from] SdkError),
    #[error(
        "the {dialect} inventory starts at {}: nothing to write for {release}",
        .first.as_ref().map(Version::to_string).unwrap_or_default()
    )]
    NothingToWrite {
        dialect: String,
        first: Option<Version>,
        release: Version,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// Each message is the one the `String` errors it replaced printed, word for word.
    #[test]
    fn messages_read_as_before() {
        let p = Path::new("/p/targets/x/protocol.yaml");
        let semver = || Version::parse("one").unwrap_err();
        let json = || serde_json::from_str::<u32>("x").unwrap_err();
        let bad = || BadVersion {
            text: "one".into(),
            source: semver(),
        };
        let v = |s| Version::parse(s).unwrap();
        let cases: Vec<(String, String)> = vec![
            (
                ProtocolError::from(FileError::new(p, InventoryError::Format { found: 4, reads: 3 }))
                    .to_string(),
                format!(
                    "{}: format_version 4: this streamcheck reads up to 3",
                    p.display()
                ),
            ),
            (
                InventoryError::Release {
                    at: "kinds.result.seen".into(),
                    source: bad(),
                }
                .to_string(),
                format!("kinds.result.seen: `one`: {}", semver()),
            ),
            (
                InventoryError::ByTwice {
                    kind: "result".into(),
                }
                .to_string(),
                "kinds.result.by: both `by` and `by_all_but`".into(),
            ),
            (
                InventoryError::NotAJsonType {
                    kind: "result".into(),
                    path: "a".into(),
                    found: "strung".into(),
                }
                .to_string(),
                "kinds.result.keys.a: `strung` is not a JSON type (null, bool, number, string, array, object)".into(),
            ),
            (
                InventoryError::Values {
                    kind: "result".into(),
                    path: "a".into(),
                    found: "many".into(),
                }
                .to_string(),
                "kinds.result.keys.a: values: `many` is neither a list nor `open`".into(),
            ),
            (
                ProtocolError::ExampleJson {
                    path: p.into(),
                    line: 3,
                    source: json(),
                }
                .to_string(),
                format!("{}:3: {}", p.display(), json()),
            ),
            (
                ProtocolError::ExampleShape {
                    path: p.into(),
                    line: 3,
                }
                .to_string(),
                format!(
                    "{}:3: a line is {{\"kind\", \"release\", \"frame\"}}",
                    p.display()
                ),
            ),
            (
                ProtocolError::from(FileError::new(p, SdkError::NoMessageType)).to_string(),
                format!("{}: the schema declares no message type", p.display()),
            ),
            (
                SdkError::StartsAfter {
                    release: v("2.1.0"),
                }
                .to_string(),
                "the inventory starts after 2.1.0".into(),
            ),
            (
                SchemaError::NothingToWrite {
                    dialect: "claude-code".into(),
                    first: Some(v("2.1.5")),
                    release: v("2.1.0"),
                }
                .to_string(),
                "the claude-code inventory starts at 2.1.5: nothing to write for 2.1.0".into(),
            ),
            (
                ProtocolError::from(Arc::new(ProtocolError::from(FileError::new(
                    p,
                    std::io::Error::other("gone"),
                ))))
                .to_string(),
                format!("{}: gone", p.display()),
            ),
        ];
        for (now, before) in cases {
            assert_eq!(now, before);
        }
    }
}
