//! A suite: which trials run (filters, shards), on which targets, how many at once.

use crate::divergence::{Divergence, Kind};
use crate::report::{ReportWriter, TargetInfo};
use crate::runner::{self, RunOptions, Status, Trial};
use crate::scenario::Scenario;
use crate::target::{NotInstalled, Target};
use std::collections::HashSet;
use std::sync::Arc;
use tokio::sync::{mpsc, Semaphore};

/// Which scenarios a run takes.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Substrings of scenario ids; empty takes all.
    pub filters: Vec<String>,
    /// `(k, n)`: run only shard k of n (1-based).
    pub shard: Option<(usize, usize)>,
}

impl Selection {
    pub fn takes(&self, id: &str) -> bool {
        let filtered =
            self.filters.is_empty() || self.filters.iter().any(|f| id.contains(f.as_str()));
        let sharded = self.shard.is_none_or(|(k, n)| shard_of(id, n) == k);
        filtered && sharded
    }
}

/// The 1-based shard of `id` among `n`: a stable hash, so adding a scenario moves no other.
pub fn shard_of(id: &str, n: usize) -> usize {
    // FNV-1a: stable across platforms and releases, unlike std's hasher.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in id.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    (h % n as u64) as usize + 1
}

/// Parses `K/N`.
pub fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let (k, n) = s
        .split_once('/')
        .ok_or_else(|| format!("--shard `{s}`: write K/N, e.g. 1/4"))?;
    let k: usize = k
        .trim()
        .parse()
        .map_err(|_| format!("--shard `{s}`: K is not a number"))?;
    let n: usize = n
        .trim()
        .parse()
        .map_err(|_| format!("--shard `{s}`: N is not a number"))?;
    if n == 0 || k == 0 || k > n {
        return Err(format!("--shard `{s}`: need 1 <= K <= N"));
    }
    Ok((k, n))
}

pub fn target_infos(targets: &[Result<Target, NotInstalled>]) -> Vec<TargetInfo> {
    targets
        .iter()
        .map(|t| match t {
            Ok(t) => TargetInfo {
                name: t.name.clone(),
                version: Some(t.version.clone()),
                unavailable: None,
            },
            Err(e) => TargetInfo {
                name: e.target.clone(),
                version: None,
                unavailable: Some(e.to_string()),
            },
        })
        .collect()
}

/// Runs every scenario on every target, `jobs` at a time, recording each trial as it
/// finishes and calling `on_trial` (for the terminal). Stops launching on Ctrl-C; what
/// finished is still recorded. Every planned trial yields a result: a trial whose task
/// panicked is a failed trial with a harness-error divergence, and one that never reported
/// (interrupted, or lost) is recorded as such.
pub async fn run(
    scenarios: Vec<Scenario>,
    targets: &[Result<Target, NotInstalled>],
    jobs: usize,
    opts: RunOptions,
    writer: &mut ReportWriter,
    on_trial: impl FnMut(&Trial),
) -> std::io::Result<bool> {
    let every_scenario = opts.without_expectation;
    let opts = Arc::new(opts);
    let plan = Plan {
        jobs,
        every_scenario,
    };
    run_with(scenarios, targets, plan, writer, on_trial, move |s, t| {
        let opts = opts.clone();
        async move { runner::run(&s, &t, &opts).await }
    })
    .await
}

/// [`run`] with the trial itself supplied by the caller (tests make it panic or vanish).
pub async fn run_with<F, Fut>(
    scenarios: Vec<Scenario>,
    targets: &[Result<Target, NotInstalled>],
    plan: Plan,
    writer: &mut ReportWriter,
    mut on_trial: impl FnMut(&Trial),
    trial_fn: F,
) -> std::io::Result<bool>
where
    F: Fn(Arc<Scenario>, Target) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Trial> + Send + 'static,
{
    let permits = Arc::new(Semaphore::new(plan.jobs.max(1)));
    let trial_fn = Arc::new(trial_fn);
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut handles = Vec::new();
    let mut planned: Vec<Planned> = Vec::new();
    for scenario in scenarios {
        let scenario = Arc::new(scenario);
        for target in targets {
            match target {
                Err(e) => {
                    let _ = tx.send(Trial::skipped(&scenario, &e.target, "-", e.to_string()));
                }
                Ok(t) if !plan.takes(&scenario, t) => {}
                Ok(t) => {
                    planned.push(Planned {
                        scenario: scenario.clone(),
                        target: t.clone(),
                    });
                    let (t, scenario, permits, tx, trial_fn) = (
                        t.clone(),
                        scenario.clone(),
                        permits.clone(),
                        tx.clone(),
                        trial_fn.clone(),
                    );
                    handles.push(tokio::spawn(async move {
                        let Ok(_permit) = permits.acquire_owned().await else {
                            return;
                        };
                        let inner = tokio::spawn(trial_fn(scenario.clone(), t.clone()));
                        let trial = match inner.await {
                            Ok(trial) => trial,
                            Err(e) => harness_error(&scenario, &t, &panic_message(e)),
                        };
                        let _ = tx.send(trial);
                    }));
                }
            }
        }
    }
    drop(tx);
    let mut interrupted = false;
    let mut reported: HashSet<(String, String)> = HashSet::new();
    loop {
        tokio::select! {
            trial = rx.recv() => match trial {
                Some(trial) => {
                    reported.insert((trial.scenario.clone(), trial.target.clone()));
                    on_trial(&trial);
                    writer.record(trial)?;
                }
                None => break,
            },
            _ = tokio::signal::ctrl_c(), if !interrupted => {
                eprintln!("streamcheck: interrupted: stopping running trials, writing what finished");
                interrupted = true;
                for h in &handles {
                    h.abort();
                }
            }
        }
    }
    for trial in unreported(planned, &reported, interrupted) {
        on_trial(&trial);
        writer.record(trial)?;
    }
    Ok(!interrupted)
}

struct Planned {
    scenario: Arc<Scenario>,
    target: Target,
}

/// A result for every planned trial that never reported one: skipped when the run was
/// interrupted, a harness error otherwise.
fn unreported(
    planned: Vec<Planned>,
    reported: &HashSet<(String, String)>,
    interrupted: bool,
) -> Vec<Trial> {
    planned
        .into_iter()
        .filter(|p| !reported.contains(&(p.scenario.id.clone(), p.target.name.clone())))
        .map(|p| {
            if interrupted {
                let why = "interrupted before it finished".to_string();
                Trial::skipped(&p.scenario, &p.target.name, &p.target.version, why)
            } else {
                harness_error(&p.scenario, &p.target, "the trial never reported a result")
            }
        })
        .collect()
}

/// How many trials at once, and which scenarios are trials of a target.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    pub jobs: usize,
    /// Also run scenarios with no expectation for the target (compare does).
    pub every_scenario: bool,
}

impl Plan {
    /// A scenario written for other targets only is not a trial of this one.
    fn takes(&self, scenario: &Scenario, t: &Target) -> bool {
        self.every_scenario
            || crate::expectation::for_version(
                &scenario.file.expect,
                t.dialect.expect_key(),
                &t.version,
            )
            .is_some()
    }
}

/// A failed trial for a fault of the harness itself, never of the CLI.
pub fn harness_error(scenario: &Scenario, target: &Target, message: &str) -> Trial {
    let mut t = Trial::skipped(scenario, &target.name, &target.version, String::new());
    t.status = Status::Failed;
    t.divergences.push(Divergence::new(
        Kind::HarnessError,
        format!("harness error (a bug in streamcheck, not in the CLI): {message}"),
    ));
    t
}

fn panic_message(e: tokio::task::JoinError) -> String {
    if !e.is_panic() {
        return format!("the trial task was cancelled: {e}");
    }
    let payload = e.into_panic();
    let text = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".into());
    format!("the trial panicked: {text}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_the_ids() {
        let ids: Vec<String> = (0..200).map(|i| format!("group/scenario-{i}")).collect();
        let mut counts = [0usize; 4];
        for id in &ids {
            let owners: Vec<usize> = (1..=4)
                .filter(|k| {
                    Selection {
                        filters: vec![],
                        shard: Some((*k, 4)),
                    }
                    .takes(id)
                })
                .collect();
            assert_eq!(owners.len(), 1, "{id} belongs to exactly one shard");
            counts[owners[0] - 1] += 1;
        }
        assert!(
            counts.iter().all(|c| *c > 20),
            "shards are balanced enough: {counts:?}"
        );
        assert_eq!(shard_of("basics/text", 4), shard_of("basics/text", 4));
    }

    #[test]
    fn shard_syntax() {
        assert_eq!(parse_shard("2/4"), Ok((2, 4)));
        assert!(parse_shard("0/4").is_err());
        assert!(parse_shard("5/4").is_err());
        assert!(parse_shard("x").is_err());
    }

    #[test]
    fn filters_are_substrings() {
        let s = Selection {
            filters: vec!["tools/".into()],
            shard: None,
        };
        assert!(s.takes("tools/bash"));
        assert!(!s.takes("basics/text"));
    }
}
