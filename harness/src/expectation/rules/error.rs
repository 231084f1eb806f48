//! Why `targets/<dialect>/rules.yaml` does not load: [`RulesError`] names the file,
//! [`InvalidRules`] says what is wrong in its text, [`RuleError`] what is wrong with one
//! rule. Each message is the sentence a user sees.

use crate::file_error::FileError;
use crate::pattern::PatternError;
use crate::version_range::RangeError;

/// Why a rules file does not load.
#[derive(Debug, thiserror::Error)]
pub enum RulesError {
    /// The file exists but cannot be read.
    #[error(transparent)]
    Unreadable(#[from] FileError<std::io::Error>),
    /// The file's text is not a list of rules.
    #[error(transparent)]
    Invalid(#[from] FileError<InvalidRules>),
}

/// What is wrong in the text of a rules file.
#[derive(Debug, thiserror::Error)]
pub enum InvalidRules {
    /// Not YAML, or not of the rules' shape.
    #[error(transparent)]
    Yaml(#[from] serde_yaml::Error),
    /// Two rules of one name.
    #[error("rule `{name}` is written twice")]
    Twice { name: String },
    /// One rule that cannot be used.
    #[error("rule `{name}`: {source}")]
    Rule {
        name: String,
        #[source]
        source: RuleError,
    },
}

/// What is wrong with one rule.
#[derive(Debug, thiserror::Error)]
pub enum RuleError {
    /// `versions` that is no range.
    #[error(transparent)]
    Versions(#[from] RangeError),
    /// A pattern (`anywhere`, `every`, `missing`, `shape`) that does not compile.
    #[error(transparent)]
    Pattern(#[from] PatternError),
    /// An empty `note`.
    #[error("`note` must name the first release showing it")]
    NoNote,
    /// None, or more than one, of the changes a rule makes.
    #[error("write exactly one of `anywhere`, `every`, `request_keys`, `missing`")]
    Changes,
    /// `frame_keys` without the `every` that selects its frames.
    #[error("`frame_keys` needs `every`: the frames it changes")]
    FrameKeysWithoutEvery,
    /// `every` without a `shape`.
    #[error("`every` needs the `shape` those frames have")]
    EveryWithoutShape,
    /// `anywhere` without a `shape`.
    #[error("`anywhere` needs the `shape` the frames it lets through have")]
    AnywhereWithoutShape,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each message is the one the `String` errors it replaced printed, word for word.
    #[test]
    fn messages_read_as_before() {
        let path = std::path::PathBuf::from("/p/targets/x/rules.yaml");
        let rule = |source| InvalidRules::Rule {
            name: "r".into(),
            source,
        };
        let cases: Vec<(String, String)> = vec![
            (
                RulesError::Unreadable(FileError::new(path.clone(), std::io::Error::other("gone")))
                    .to_string(),
                "/p/targets/x/rules.yaml: gone".into(),
            ),
            (
                RulesError::Invalid(FileError::new(
                    path,
                    InvalidRules::Twice { name: "r".into() },
                ))
                .to_string(),
                "/p/targets/x/rules.yaml: rule `r` is written twice".into(),
            ),
            (
                rule(RuleError::NoNote).to_string(),
                "rule `r`: `note` must name the first release showing it".into(),
            ),
            (
                rule(RuleError::Changes).to_string(),
                "rule `r`: write exactly one of `anywhere`, `every`, `request_keys`, `missing`"
                    .into(),
            ),
            (
                rule(RuleError::FrameKeysWithoutEvery).to_string(),
                "rule `r`: `frame_keys` needs `every`: the frames it changes".into(),
            ),
            (
                rule(RuleError::EveryWithoutShape).to_string(),
                "rule `r`: `every` needs the `shape` those frames have".into(),
            ),
            (
                rule(RuleError::AnywhereWithoutShape).to_string(),
                "rule `r`: `anywhere` needs the `shape` the frames it lets through have".into(),
            ),
        ];
        for (now, before) in cases {
            assert_eq!(now, before);
        }
    }
}
