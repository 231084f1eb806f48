//! [`ClientError`]: why a `client:` block does not load, or why a line or an answer it
//! scripts cannot be written. Each message is the sentence a user sees (in a scenario
//! error, or in the client's log of a trial).

use crate::pattern::PatternError;

/// What is wrong with a scripted client, or with one thing it was about to write.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// `options` without a `profile` to render them.
    #[error("`options` need a `profile` to render them")]
    OptionsWithoutProfile,
    /// A one-word conversation line other than `close`.
    #[error("client line `{word}`: the only one-word line is `close`")]
    OneWordLine { word: String },
    /// A conversation line with no verb, or more than one.
    #[error(
        "a client line takes exactly one of user, send, raw, request, wait, after_results, reply, close (found: {})",
        found_or_none(.given)
    )]
    LineVerbs { given: Vec<&'static str> },
    /// A key given to a line whose verb does not take it.
    #[error("`{key}` goes with {}, not `{verb}`", .goes_with.join(" or "))]
    Misplaced {
        key: &'static str,
        goes_with: &'static [&'static str],
        verb: &'static str,
    },
    /// A `request` line without a `subtype`.
    #[error("`request` needs a `subtype`")]
    RequestWithoutSubtype,
    /// `repeat: 0`.
    #[error("`repeat` must be at least 1")]
    RepeatZero,
    /// `repeat` on a `user` line that is not a string.
    #[error("`repeat` needs `user` to be a string")]
    RepeatNotString,
    /// A `reply` line with both a `response` and an `error`.
    #[error("give `response` or `error`, not both")]
    ResponseAndError,
    /// A responder's `on` that does not compile.
    #[error(transparent)]
    Pattern(#[from] PatternError),
    /// A responder with no action, or more than one.
    #[error(
        "a responder takes exactly one of reply, ack, error, silent, close_stdin, mcp (found {found})"
    )]
    ResponderActions { found: usize },
    /// A `profile` no SDK profile is named.
    #[error("unknown client profile `{name}` (known: {})", .known.join(", "))]
    UnknownProfile { name: String, known: Vec<String> },
    /// An `options` key the profile does not render.
    #[error(
        "client option `{option}` is not one {profile} renders (known: {})",
        .known.join(", ")
    )]
    UnknownOption {
        option: String,
        profile: String,
        known: Vec<String>,
    },
    /// A `$name` template naming no frame or request seen so far.
    #[error("`{template}`: no frame or request is named `{name}` (known: {known:?})")]
    UnknownName {
        template: String,
        name: String,
        /// The names there are, sorted.
        known: Vec<String>,
    },
    /// A `$name.path` template whose path leads nowhere in that frame.
    #[error("`{template}`: nothing at `{path}` in `{name}`")]
    NothingAt {
        template: String,
        path: String,
        name: String,
    },
    /// A `reply` line before any `wait ... as:` of that name.
    #[error("`reply: {to}`: no earlier `wait ... as: {to}`")]
    ReplyWithoutWait { to: String },
}

/// The verbs a line gave, as the message lists them.
fn found_or_none(given: &[&str]) -> String {
    match given.is_empty() {
        true => "none".to_string(),
        false => given.join(", "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each message is the one the `String` errors it replaced printed, word for word.
    #[test]
    fn messages_read_as_before() {
        let cases: Vec<(ClientError, &str)> = vec![
            (
                ClientError::OptionsWithoutProfile,
                "`options` need a `profile` to render them",
            ),
            (
                ClientError::OneWordLine {
                    word: "stop".into(),
                },
                "client line `stop`: the only one-word line is `close`",
            ),
            (
                ClientError::LineVerbs { given: vec![] },
                "a client line takes exactly one of user, send, raw, request, wait, after_results, reply, close (found: none)",
            ),
            (
                ClientError::LineVerbs {
                    given: vec!["user", "raw"],
                },
                "a client line takes exactly one of user, send, raw, request, wait, after_results, reply, close (found: user, raw)",
            ),
            (
                ClientError::Misplaced {
                    key: "as",
                    goes_with: &["wait", "request"],
                    verb: "user",
                },
                "`as` goes with wait or request, not `user`",
            ),
            (
                ClientError::RequestWithoutSubtype,
                "`request` needs a `subtype`",
            ),
            (ClientError::RepeatZero, "`repeat` must be at least 1"),
            (
                ClientError::RepeatNotString,
                "`repeat` needs `user` to be a string",
            ),
            (
                ClientError::ResponseAndError,
                "give `response` or `error`, not both",
            ),
            (
                ClientError::ResponderActions { found: 0 },
                "a responder takes exactly one of reply, ack, error, silent, close_stdin, mcp (found 0)",
            ),
            (
                ClientError::UnknownProfile {
                    name: "sdk-go".into(),
                    known: vec!["sdk-py".into(), "sdk-ts".into()],
                },
                "unknown client profile `sdk-go` (known: sdk-py, sdk-ts)",
            ),
            (
                ClientError::UnknownOption {
                    option: "maxturns".into(),
                    profile: "sdk-py".into(),
                    known: vec!["max_turns".into(), "can_use_tool".into()],
                },
                "client option `maxturns` is not one sdk-py renders (known: max_turns, can_use_tool)",
            ),
            (
                ClientError::UnknownName {
                    template: "$nobody.x".into(),
                    name: "nobody".into(),
                    known: vec!["init".into(), "request".into()],
                },
                "`$nobody.x`: no frame or request is named `nobody` (known: [\"init\", \"request\"])",
            ),
            (
                ClientError::NothingAt {
                    template: "$request.missing".into(),
                    path: ".missing".into(),
                    name: "request".into(),
                },
                "`$request.missing`: nothing at `.missing` in `request`",
            ),
            (
                ClientError::ReplyWithoutWait { to: "perm".into() },
                "`reply: perm`: no earlier `wait ... as: perm`",
            ),
        ];
        for (error, before) in cases {
            assert_eq!(error.to_string(), before);
        }
    }
}
