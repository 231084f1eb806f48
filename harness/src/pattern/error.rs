//! [`PatternError`]: why a pattern does not compile. Each message starts with the JSON path
//! of what is wrong (`$.message.content[0]`) and is the sentence a user sees (in a scenario
//! error, a rule, a known-divergence entry or a `client:` responder).

/// The placeholders a pattern string may be, for messages.
const PLACEHOLDERS: &[&str] = &["$any", "$string", "$number", "$bool", "$uuid", "$absent"];
/// The operators a one-key object may be, for messages.
const OPERATORS: &[&str] = &["$regex", "$capture", "$ref", "$contains", "$one_of", "$not"];

/// What is wrong with a pattern, and where.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PatternError {
    /// A `$` key beside other keys: only an operator's object has one, as its only key.
    #[error(
        "{path}: `{key}` is not a known operator (known: {}); an operator must be the only key of its object; write `$${}` for a literal key",
        OPERATORS.join(", "),
        &.key[1..]
    )]
    KeyAmongFields { path: String, key: String },
    /// A string shaped like a placeholder (`$uid`) that is none.
    #[error(
        "{path}: unknown placeholder `{placeholder}` (known: {}; variables $WORKSPACE, $HOME); write `${placeholder}` for a literal string",
        PLACEHOLDERS.join(", ")
    )]
    UnknownPlaceholder { path: String, placeholder: String },
    /// `$capture` or `$ref` without a non-empty name.
    #[error("{path}: `{operator}` takes a name (a non-empty string)")]
    TakesName { path: String, operator: String },
    /// `$regex` of something other than a string.
    #[error("{path}: `$regex` takes a string")]
    RegexNotString { path: String },
    /// `$regex` that does not compile.
    #[error("{path}: bad regex: {source}")]
    BadRegex {
        path: String,
        #[source]
        source: regex::Error,
    },
    /// `$contains` of something other than a list or a string.
    #[error(
        "{path}: `$contains` takes a list of patterns (array contains) or a string (substring)"
    )]
    ContainsWhat { path: String },
    /// `$one_of` of something other than a non-empty list.
    #[error("{path}: `$one_of` takes a non-empty list of patterns")]
    OneOfWhat { path: String },
    /// A one-key object whose `$` key is no operator.
    #[error("{path}: unknown operator `{operator}` (known: {})", OPERATORS.join(", "))]
    UnknownOperator { path: String, operator: String },
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each message is the one the `String` errors it replaced printed, word for word.
    #[test]
    fn messages_read_as_before() {
        let path = || "$.a[0]".to_string();
        #[allow(clippy::invalid_regex)] // A bad regex is the point.
        let bad = regex::Regex::new("(").unwrap_err();
        let cases: Vec<(PatternError, String)> = vec![
            (
                PatternError::KeyAmongFields { path: path(), key: "$x".into() },
                "$.a[0]: `$x` is not a known operator (known: $regex, $capture, $ref, $contains, $one_of, $not); an operator must be the only key of its object; write `$$x` for a literal key".into(),
            ),
            (
                PatternError::UnknownPlaceholder { path: path(), placeholder: "$uid".into() },
                "$.a[0]: unknown placeholder `$uid` (known: $any, $string, $number, $bool, $uuid, $absent; variables $WORKSPACE, $HOME); write `$$uid` for a literal string".into(),
            ),
            (
                PatternError::TakesName { path: path(), operator: "$ref".into() },
                "$.a[0]: `$ref` takes a name (a non-empty string)".into(),
            ),
            (
                PatternError::RegexNotString { path: path() },
                "$.a[0]: `$regex` takes a string".into(),
            ),
            (
                PatternError::BadRegex { path: path(), source: bad.clone() },
                format!("$.a[0]: bad regex: {bad}"),
            ),
            (
                PatternError::ContainsWhat { path: path() },
                "$.a[0]: `$contains` takes a list of patterns (array contains) or a string (substring)".into(),
            ),
            (
                PatternError::OneOfWhat { path: path() },
                "$.a[0]: `$one_of` takes a non-empty list of patterns".into(),
            ),
            (
                PatternError::UnknownOperator { path: path(), operator: "$nope".into() },
                "$.a[0]: unknown operator `$nope` (known: $regex, $capture, $ref, $contains, $one_of, $not)".into(),
            ),
        ];
        for (error, before) in cases {
            assert_eq!(error.to_string(), before);
        }
    }
}
