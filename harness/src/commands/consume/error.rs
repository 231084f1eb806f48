//! [`ConsumeError`]: why `consume` (or `replay-cli`) could not feed a consumer at all, as
//! opposed to a consumer failing on a feed (a finding). Each message is the sentence a
//! user sees (after `streamcheck: `).

use crate::trial_id::ScenarioId;
use std::path::PathBuf;

/// Why a consumer could not be run, or a saved trial could not be found to replay.
#[derive(Debug, thiserror::Error)]
pub enum ConsumeError {
    /// A consumer's `sh -c` that cannot be started.
    #[error("consumer `{consumer}`: cannot start sh: {source}")]
    Spawn {
        consumer: String,
        #[source]
        source: std::io::Error,
    },
    /// Waiting for a consumer's process failed.
    #[error("consumer `{consumer}`: {source}")]
    Wait {
        consumer: String,
        #[source]
        source: std::io::Error,
    },
    /// `sh -c` exited 126 or 127: the command itself could not run.
    #[error("consumer `{consumer}`: `{command}` could not be run (sh exited {code}): {stderr}")]
    CannotRun {
        consumer: String,
        command: String,
        code: i32,
        /// The end of its stderr, trimmed.
        stderr: String,
    },
    /// A long-lived consumer's `sh -c` that cannot be started.
    #[error("`{command}`: cannot start sh: {source}")]
    ServeSpawn {
        command: String,
        #[source]
        source: std::io::Error,
    },
    /// A feeding task that panicked.
    #[error("a consumer task failed: {0}")]
    Task(#[source] tokio::task::JoinError),
    /// `replay-cli --scenario --release` finding no saved trial in the run folders.
    #[error(
        "no saved trial of `{scenario}` on {release} in {folders} run folder(s){}",
        .newest.as_ref().map_or(String::new(), |d| format!(" (newest looked at: {})", d.display()))
    )]
    NoSavedTrial {
        scenario: ScenarioId,
        release: String,
        folders: usize,
        newest: Option<PathBuf>,
    },
}

crate::error::seam_error!(ConsumeError);

#[cfg(test)]
mod tests {
    use super::super::probe::{Probe, ProbeParseError};
    use super::super::sdk::{Sdk, SdkSpecError};
    use super::*;

    /// Each message is the one the `String` errors it replaced printed, word for word.
    #[test]
    fn messages_read_as_before() {
        let io = || std::io::Error::new(std::io::ErrorKind::NotFound, "gone");
        let cases: Vec<(ConsumeError, String)> = vec![
            (
                ConsumeError::Spawn {
                    consumer: "bot".into(),
                    source: io(),
                },
                format!("consumer `bot`: cannot start sh: {}", io()),
            ),
            (
                ConsumeError::Wait {
                    consumer: "bot".into(),
                    source: io(),
                },
                format!("consumer `bot`: {}", io()),
            ),
            (
                ConsumeError::CannotRun {
                    consumer: "command".into(),
                    command: "nope".into(),
                    code: 127,
                    stderr: "sh: 1: nope: not found".into(),
                },
                "consumer `command`: `nope` could not be run (sh exited 127): sh: 1: nope: not found"
                    .into(),
            ),
            (
                ConsumeError::ServeSpawn {
                    command: "py consumer.py --serve".into(),
                    source: io(),
                },
                format!("`py consumer.py --serve`: cannot start sh: {}", io()),
            ),
            (
                ConsumeError::NoSavedTrial {
                    scenario: "t/x".into(),
                    release: "2.1.74".into(),
                    folders: 0,
                    newest: None,
                },
                "no saved trial of `t/x` on 2.1.74 in 0 run folder(s)".into(),
            ),
            (
                ConsumeError::NoSavedTrial {
                    scenario: "t/x".into(),
                    release: "2.1.74".into(),
                    folders: 2,
                    newest: Some("reports/runs/b".into()),
                },
                "no saved trial of `t/x` on 2.1.74 in 2 run folder(s) (newest looked at: reports/runs/b)"
                    .into(),
            ),
        ];
        for (error, before) in cases {
            assert_eq!(error.to_string(), before);
            assert_eq!(crate::error::Error::from(error).to_string(), before);
        }

        let probes: Vec<&str> = Probe::ALL.iter().map(|p| p.name()).collect();
        assert_eq!(
            ProbeParseError {
                name: "nope".into()
            }
            .to_string(),
            format!("unknown probe `nope` (one of {})", probes.join(", "))
        );
        let sdks: Vec<&str> = Sdk::ALL.iter().map(|k| k.key()).collect();
        let specs: Vec<(SdkSpecError, String)> = vec![
            (
                SdkSpecError::Unknown { name: "go".into() },
                format!(
                    "unknown SDK `go`: use one of {} (python@VERSION, typescript@VERSION for a published version)",
                    sdks.join(", ")
                ),
            ),
            (
                SdkSpecError::NoVersion {
                    spec: "python@".into(),
                },
                "`python@`: give a version after `@`".into(),
            ),
            (
                SdkSpecError::CommunityVersion {
                    spec: "claude-code-pretty@0.1.0".into(),
                    sdk: Sdk::ClaudeCodePretty,
                    version: "0.1.0".into(),
                },
                "`claude-code-pretty@0.1.0`: claude-code-pretty is a community parser, tried at its pin only (not @0.1.0)".into(),
            ),
        ];
        for (error, before) in specs {
            assert_eq!(error.to_string(), before);
        }
    }
}
