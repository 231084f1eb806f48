//! `streamcheck consume`: a consumer's parser (an SDK, a bot) against what the CLI really
//! printed. Each saved trial's stdout is fed to the consumer's command on stdin, line by
//! line as the CLI wrote it, and with `--probes` again changed the ways releases changed
//! it; a consumer that exits non-zero, crashes, hangs or prints what its `each` pattern
//! refuses is a finding naming the trial, the release, the probe and the line it was
//! last given.
//!
//! - [`probe`]: the forward-compatibility probes
//! - [`feed`]: one consumer run on one feed, and locating the line it failed on
//! - [`history`]: the matrix over SDK versions and CLI releases
//! - [`render`]: consume.md, consume.json, junit.xml and index.html
//! - [`replay`]: a saved trial played back as the CLI (`replay-cli`)
//! - [`sdk`]: the real Agent SDKs as consumers, installed into the cache
//! - [`worker`]: long-lived consumers given feed after feed
//! - [`host`]: the TypeScript SDK's `query()` over `replay-cli`

mod error;
pub mod feed;
pub mod history;
pub mod host;
pub mod probe;
pub mod render;
pub mod replay;
pub mod sdk;
pub mod worker;

use crate::store::saved::SavedTrial;
use crate::trial_id::{ScenarioId, TargetName};
pub use error::ConsumeError;
pub use feed::Consumer;
use feed::Failure;
use host::NotReplayable;
use probe::{Feed, Probe, Simulated};
use serde::Serialize;
use std::path::PathBuf;
use std::sync::Arc;
use worker::Protocol;

/// One saved trial's stdout, as a consumer is given it.
#[derive(Debug, Clone)]
pub struct Input {
    pub scenario: ScenarioId,
    pub target: TargetName,
    pub release: String,
    pub run: Option<usize>,
    pub lines: Vec<String>,
    /// Why it is not fed (its stdout is not stream-json, it printed nothing).
    pub not_fed: Option<String>,
    /// How the recorded CLI exited.
    pub exit_code: Option<i32>,
    /// The saved trial's file, for an SDK host driving `replay-cli`, or why it cannot.
    pub replay: Result<PathBuf, NotReplayable>,
    /// The saved trial's file, for the command that reproduces a finding.
    pub file: Option<PathBuf>,
}

impl Input {
    /// `saved`, read from `file` (`None`: not from a file).
    pub fn of(saved: &SavedTrial, file: Option<PathBuf>) -> Input {
        let lines: Vec<String> = saved.stdout.lines().map(str::to_string).collect();
        // A frame is a JSON object with a string `type`; `--output-format text` of a JSON
        // answer (`--json-schema`) is a JSON object without one.
        let not_json = (lines.iter())
            .filter(|l| {
                !serde_json::from_str::<serde_json::Value>(l)
                    .is_ok_and(|v| v.get("type").is_some_and(serde_json::Value::is_string))
            })
            .count();
        let not_fed = if saved.stdout_truncated {
            Some("its stdout was cut when it was saved".to_string())
        } else if lines.is_empty() {
            Some("it printed nothing on stdout".to_string())
        } else if not_json > 0 {
            Some(format!(
                "its stdout is not stream-json ({not_json} of {} lines not a JSON object with a `type`)",
                lines.len()
            ))
        } else {
            None
        };
        Input {
            scenario: saved.key.scenario.clone(),
            target: saved.key.target.clone(),
            release: saved.key.target_version.clone(),
            run: saved.run,
            lines,
            not_fed,
            exit_code: saved.exit.code,
            replay: host::replayable(saved, file.clone()),
            file,
        }
    }

    /// The trial's name in reports: the scenario, with its run in a multi-run one.
    pub fn trial(&self) -> String {
        match self.run {
            Some(n) => format!("{} (run {n})", self.scenario),
            None => self.scenario.to_string(),
        }
    }
}

/// What a consumer did with one feed.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "outcome")]
pub enum Outcome {
    Passed {
        /// JSON objects it printed, when it has an `each` pattern.
        #[serde(skip_serializing_if = "Option::is_none")]
        understood: Option<usize>,
    },
    Failed(Finding),
    /// The probe has nothing to change in this output (no `stream_event`, ...).
    NotApplicable,
    /// The trial is not fed at all, with why.
    NotFed {
        why: String,
    },
    /// An SDK host cannot be given this trial through `replay-cli`.
    NotReplayable(NotReplayable),
}

/// A consumer failing on a feed, and where.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    pub failure: Failure,
    /// The feed's line it was last given (the end of the shortest input it fails on);
    /// 0: it fails on no input; `None`: not located (a timeout, a bad output line, a
    /// consumer that did not fail again).
    pub at_line: Option<usize>,
    /// That line's text, clipped.
    pub line: Option<String>,
    /// The end of its stderr.
    pub stderr: String,
    /// Located at line 0: what is missing (what the probe removed or changed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missing: Option<String>,
    /// The command that feeds it the same again: `streamcheck replay-cli ... | CMD`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reproduce: Option<String>,
}

/// One consumer on one trial's output, real or probed.
#[derive(Debug, Clone, Serialize)]
pub struct Fed {
    pub consumer: String,
    pub scenario: ScenarioId,
    pub trial: String,
    pub target: TargetName,
    pub release: String,
    /// `None`: the output as printed.
    pub probe: Option<Probe>,
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// What `consume` found, for the reports.
#[derive(Debug, Clone, Serialize)]
pub struct Consumed {
    pub command: String,
    pub duration_ms: u64,
    pub consumers: Vec<Consumer>,
    pub probes: Vec<ProbeInfo>,
    pub fed: Vec<Fed>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ProbeInfo {
    pub probe: Probe,
    pub models: &'static str,
    /// What `run`'s protocol check reports for the change (`None`: not in an inventory).
    pub change: Option<Simulated>,
}

impl ProbeInfo {
    pub fn of(probe: Probe) -> ProbeInfo {
        ProbeInfo {
            probe,
            models: probe.models(),
            change: probe.change(),
        }
    }
}

impl Consumed {
    pub fn failed(&self) -> usize {
        self.fed
            .iter()
            .filter(|f| matches!(f.outcome, Outcome::Failed(_)))
            .count()
    }

    pub fn fed_count(&self) -> usize {
        self.fed
            .iter()
            .filter(|f| matches!(f.outcome, Outcome::Passed { .. } | Outcome::Failed(_)))
            .count()
    }
}

/// How much of the last line given a finding keeps.
const LINE_CHARS: usize = 300;

/// What a finding located at line 0 says when it has nothing more precise.
pub const NOTHING_GIVEN: &str =
    "it fails on an empty feed too: what it needs is missing from the whole output";

/// Feeds every input to every consumer, as printed and changed by each of `probes` (only
/// the inputs of release `probes_on`, when given), `jobs` consumers at once; with `fail_fast`, no feed more once one has failed (those
/// running are stopped, their consumers killed). `Err`: a consumer that cannot run at all.
pub async fn consume(
    consumers: &[Consumer],
    inputs: &[Input],
    probes: &[Probe],
    probes_on: Option<&str>,
    jobs: usize,
    fail_fast: bool,
) -> Result<Vec<Fed>, ConsumeError> {
    let gate = Arc::new(tokio::sync::Semaphore::new(jobs.max(1)));
    let mut set = tokio::task::JoinSet::new();
    let mut order = 0usize;
    for input in inputs {
        let probed = match probes_on {
            Some(release) if release != input.release => &[][..],
            _ => probes,
        };
        for consumer in consumers {
            let variants = std::iter::once(None).chain(probed.iter().copied().map(Some));
            for probe in variants {
                let (input, consumer, gate) = (input.clone(), consumer.clone(), gate.clone());
                let at = order;
                order += 1;
                set.spawn(async move {
                    let _permit = gate.acquire_owned().await.expect("never closed");
                    let outcome = feed_one(&consumer, &input, probe).await;
                    (at, consumer.name.clone(), input, probe, outcome)
                });
            }
        }
    }
    let mut fed = Vec::with_capacity(order);
    while let Some(done) = set.join_next().await {
        let (at, consumer, input, probe, outcome) = match done {
            Ok(done) => done,
            // Stopped by --fail-fast.
            Err(e) if e.is_cancelled() => continue,
            Err(e) => return Err(ConsumeError::Task(e)),
        };
        let outcome = match outcome {
            Ok(o) => o,
            Err(e) => {
                set.abort_all();
                return Err(e);
            }
        };
        if fail_fast && matches!(outcome, Outcome::Failed(_)) {
            set.abort_all();
        }
        fed.push((
            at,
            Fed {
                consumer,
                scenario: input.scenario.clone(),
                trial: input.trial(),
                target: input.target.clone(),
                release: input.release.clone(),
                probe,
                outcome,
            },
        ));
    }
    fed.sort_by_key(|(at, _)| *at);
    Ok(fed.into_iter().map(|(_, f)| f).collect())
}

/// One consumer on one input, as printed (`probe` `None`) or probed.
pub async fn feed_one(
    consumer: &Consumer,
    input: &Input,
    probe: Option<Probe>,
) -> Result<Outcome, ConsumeError> {
    if let Some(why) = &input.not_fed {
        return Ok(Outcome::NotFed { why: why.clone() });
    }
    let feed = match probe {
        None => Feed::lines(&input.lines),
        Some(p) => match p.apply(&input.lines) {
            Some(feed) => feed,
            None => return Ok(Outcome::NotApplicable),
        },
    };
    let pause = probe.is_some_and(Probe::pauses_between_writes);
    if let Some(serve) = &consumer.serve {
        match serve.protocol {
            Protocol::Host => {
                let file = match &input.replay {
                    Ok(file) => file,
                    Err(why) => return Ok(Outcome::NotReplayable(why.clone())),
                };
                let judged =
                    host::feed(serve, file, input.exit_code, probe, &feed, consumer.timeout)
                        .await?;
                return Ok(match judged {
                    Ok(messages) => Outcome::Passed {
                        understood: Some(messages),
                    },
                    Err(failure) => Outcome::Failed(Finding {
                        failure,
                        at_line: None,
                        line: None,
                        stderr: String::new(),
                        missing: None,
                        reproduce: None,
                    }),
                });
            }
            Protocol::Feeds => {
                let header = serde_json::json!({ "lines": feed.line_count() });
                let answer = (serve.ask::<worker::FeedAnswer>(
                    &header,
                    &feed.writes,
                    pause,
                    consumer.timeout,
                ))
                .await?;
                if let Some(a) = answer.filter(|a| a.ok) {
                    return Ok(Outcome::Passed {
                        understood: consumer.each.as_ref().map(|_| a.understood),
                    });
                }
                // Not a pass: judged by the one-shot command below, in a fresh process.
            }
        }
    }
    let env = [
        ("STREAMCHECK_SCENARIO", input.scenario.to_string()),
        ("STREAMCHECK_RELEASE", input.release.clone()),
        (
            "STREAMCHECK_PROBE",
            probe.map_or("none".to_string(), |p| p.name().to_string()),
        ),
    ];
    let ran = feed::run_once(consumer, &feed, pause, &env).await?;
    let Some(failure) = ran.failure else {
        return Ok(Outcome::Passed {
            understood: consumer.each.as_ref().map(|_| ran.understood),
        });
    };
    let at_line = match failure {
        Failure::Exit { .. } | Failure::Signal { .. } => {
            let hint = feed.changed.first().copied();
            feed::locate(consumer, &feed, pause, hint, &env).await?
        }
        Failure::Timeout { .. } => Some(feed.line_count()),
        Failure::Output { .. } | Failure::Host { .. } | Failure::LeftRunning { .. } => None,
    };
    let lines = feed.text_lines();
    let line = at_line
        .and_then(|n| n.checked_sub(1))
        .and_then(|i| lines.get(i))
        .map(|l| crate::text::clip(l, LINE_CHARS));
    let missing = (at_line == Some(0)).then(|| match probe {
        Some(p) => what_the_probe_changed(p, &input.lines, &feed),
        None => NOTHING_GIVEN.to_string(),
    });
    Ok(Outcome::Failed(Finding {
        failure,
        at_line,
        line,
        stderr: ran.stderr,
        missing,
        reproduce: input
            .file
            .as_ref()
            .map(|file| reproduce(file, probe, &consumer.command)),
    }))
}

/// The command that feeds `command` the trial in `file` as this feed did.
pub fn reproduce(file: &std::path::Path, probe: Option<Probe>, command: &str) -> String {
    let probe = probe.map_or(String::new(), |p| format!(" --probe {}", p.name()));
    format!(
        "streamcheck replay-cli --trial {}{probe} -- -p hi | {command}",
        sh_quote(&file.display().to_string())
    )
}

fn sh_quote(s: &str) -> String {
    match s
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-@+=:".contains(c))
    {
        true => s.to_string(),
        false => format!("'{}'", s.replace('\'', r"'\''")),
    }
}

/// For a consumer failing on an empty feed under `probe`: which lines the probe changed
/// or removed, the first of them as printed (what it needs is likely there).
fn what_the_probe_changed(probe: Probe, printed: &[String], feed: &Feed) -> String {
    let shown = |n: usize| {
        (printed.get(n.wrapping_sub(1))).map_or(String::new(), |l| {
            format!(" (as printed: `{}`)", crate::text::clip_line(l, 120))
        })
    };
    match feed.changed.as_slice() {
        [] => format!(
            "it fails on an empty feed too; probe `{}` changed no line it could need",
            probe.name()
        ),
        [n, rest @ ..] => format!(
            "it fails on an empty feed too: what it needs is what probe `{}` changed, line {n}{}{}",
            probe.name(),
            match rest.len() {
                0 => String::new(),
                k => format!(" and {k} more"),
            },
            shown(*n)
        ),
    }
}

#[cfg(test)]
mod tests;
