//! [`ConfigError`]: why `streamcheck.toml` cannot be used, naming the file; [`EntryError`]:
//! why one of its entries does not hold. Each message is the sentence a user sees after
//! `streamcheck: `.

use crate::dialect::Dialect;
use crate::file_error::FileError;
use std::path::PathBuf;

/// Why the project file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file cannot be read.
    #[error(transparent)]
    Unreadable(#[from] FileError<std::io::Error>),
    /// Not TOML, or a key or value the file does not take; `at` is its line and column,
    /// `takes` the key and the form of value it takes, when the message does not say it.
    #[error("{path}{}: {}{}", place(.at), toml_message(.source), what_it_takes(.takes))]
    Toml {
        path: PathBuf,
        at: Option<(usize, usize)>,
        /// Boxed: the error is large, and `load`'s every caller carries it.
        #[source]
        source: Box<toml::de::Error>,
        takes: Option<(String, &'static str)>,
    },
    /// A target with both `command` and `package`, or neither.
    #[error("{path}: targets.{name}: give either `command` or `package`")]
    CommandOrPackage { path: PathBuf, name: String },
    /// An entry that does not hold, in the file at `path`.
    #[error(transparent)]
    InFile(#[from] FileError<EntryError>),
    /// An entry that does not hold, where the file is not named.
    #[error(transparent)]
    Entry(#[from] EntryError),
}

/// Why an entry of the project file does not hold.
#[derive(Debug, thiserror::Error)]
pub enum EntryError {
    /// `conforms_to` that is not a release of the target's dialect (`key`).
    #[error("targets.{name}.conforms_to: write `{key}@VERSION` with the release it conforms to (`{key}@2.1.330`), not `{spec}`")]
    ConformsTo {
        name: String,
        key: &'static str,
        spec: String,
    },
    /// A `supports` feature no dialect offers.
    #[error(
        "targets.{name}.supports: `{feature}` is not a feature scenarios name; the features are {}",
        Dialect::feature_names()
    )]
    UnknownFeature { name: String, feature: String },
    /// A `bundled` topic or id that names no scenario of the catalogue (a typo would run
    /// only the project's own scenarios, and pass); `topics` are the catalogue's.
    #[error("scenarios.bundled: `{entry}` is neither a topic nor a scenario of the bundled catalogue; its topics are {topics}")]
    Bundled { entry: String, topics: String },
    /// An `exclude` topic or id that names no scenario of the catalogue.
    #[error("scenarios.exclude: `{entry}` is neither a topic nor a scenario of the bundled catalogue; its topics are {topics}")]
    Excluded { entry: String, topics: String },
}

/// `:line:column`, when known.
fn place(at: &Option<(usize, usize)>) -> String {
    at.map_or(String::new(), |(l, c)| format!(":{l}:{c}"))
}

/// The TOML error's message on one line.
fn toml_message(e: &toml::de::Error) -> String {
    e.message().trim_end().replace('\n', ", ")
}

/// `; `KEY` takes FORM`, when known.
fn what_it_takes(takes: &Option<(String, &'static str)>) -> String {
    (takes.as_ref()).map_or(String::new(), |(key, form)| {
        format!("; `{key}` takes {form}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each message is the one the `String` errors it replaced printed, word for word
    /// (the TOML ones are checked by `config.rs`'s tests).
    #[test]
    fn messages_read_as_before() {
        let path = || PathBuf::from("/p/streamcheck.toml");
        let cases: Vec<(ConfigError, String)> = vec![
            (
                ConfigError::Unreadable(FileError::new(path(), std::io::Error::other("gone"))),
                "/p/streamcheck.toml: gone".into(),
            ),
            (
                ConfigError::CommandOrPackage {
                    path: path(),
                    name: "x".into(),
                },
                "/p/streamcheck.toml: targets.x: give either `command` or `package`".into(),
            ),
            (
                ConfigError::InFile(FileError::new(
                    path(),
                    EntryError::ConformsTo {
                        name: "x".into(),
                        key: "claude-code",
                        spec: "caliban@1".into(),
                    },
                )),
                "/p/streamcheck.toml: targets.x.conforms_to: write `claude-code@VERSION` with the release it conforms to (`claude-code@2.1.330`), not `caliban@1`".into(),
            ),
            (
                EntryError::UnknownFeature {
                    name: "x".into(),
                    feature: "tools".into(),
                }
                .into(),
                format!(
                    "targets.x.supports: `tools` is not a feature scenarios name; the features are {}",
                    Dialect::feature_names()
                ),
            ),
            (
                EntryError::Bundled {
                    entry: "basic".into(),
                    topics: "basics, tools".into(),
                }
                .into(),
                "scenarios.bundled: `basic` is neither a topic nor a scenario of the bundled catalogue; its topics are basics, tools".into(),
            ),
            (
                EntryError::Excluded {
                    entry: "tool".into(),
                    topics: "basics, tools".into(),
                }
                .into(),
                "scenarios.exclude: `tool` is neither a topic nor a scenario of the bundled catalogue; its topics are basics, tools".into(),
            ),
        ];
        for (error, before) in cases {
            assert_eq!(error.to_string(), before);
        }
    }
}
