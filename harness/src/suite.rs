//! A suite: which trials run (filters, shards), on which targets, how many at once.

use crate::report::{ReportWriter, TargetInfo};
use crate::runner::{self, RunOptions, Trial};
use crate::scenario::Scenario;
use crate::target::{NotInstalled, Target};
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
/// finished is still recorded.
pub async fn run(
    scenarios: Vec<Scenario>,
    targets: &[Result<Target, NotInstalled>],
    jobs: usize,
    opts: RunOptions,
    writer: &mut ReportWriter,
    mut on_trial: impl FnMut(&Trial),
) -> std::io::Result<bool> {
    let permits = Arc::new(Semaphore::new(jobs.max(1)));
    let opts = Arc::new(opts);
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut handles = Vec::new();
    for scenario in scenarios {
        let scenario = Arc::new(scenario);
        for target in targets {
            match target {
                Err(e) => {
                    let _ = tx.send(Trial::skipped(&scenario, &e.target, "-", e.to_string()));
                }
                // A scenario written for other targets only is not a trial of this one.
                Ok(t)
                    if !opts.without_expectation
                        && !scenario.file.expect.contains_key(t.dialect.expect_key()) => {}
                Ok(t) => {
                    let (t, scenario, opts, permits, tx) = (
                        t.clone(),
                        scenario.clone(),
                        opts.clone(),
                        permits.clone(),
                        tx.clone(),
                    );
                    handles.push(tokio::spawn(async move {
                        let Ok(_permit) = permits.acquire_owned().await else {
                            return;
                        };
                        let trial = runner::run(&scenario, &t, &opts).await;
                        let _ = tx.send(trial);
                    }));
                }
            }
        }
    }
    drop(tx);
    let mut interrupted = false;
    loop {
        tokio::select! {
            trial = rx.recv() => match trial {
                Some(trial) => {
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
    Ok(!interrupted)
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
