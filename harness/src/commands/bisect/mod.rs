//! `streamcheck bisect`: the first published version of a target whose output matches
//! the expectation a later version (`to`) gets rather than the one an earlier version
//! (`from`) gets, for each selected scenario. All scenarios are searched together: each
//! probed version is installed once and runs every scenario that still needs it.
//!
//! The probing and the search are [`crate::boundary`]'s, shared with `ranges --prove`.
//!
//! - [`model`]: what a bisect found (bisect.json)
//! - [`render`]: the terminal lines, bisect.md and bisect.json

pub mod model;
pub mod render;

pub use model::{Bisect, ScenarioBisect};

use crate::boundary::probe::{self, first_divergence, ProbeOptions, Prober};
use crate::boundary::search::{seen, Outcome, Search, Seen};
use crate::dialect::Dialect;
use crate::error::{Error, Result};
use crate::install::{version_lt, Project, TargetSpec};
use crate::plan::Planner;
use crate::runner::{Status, Trial};
use crate::scenario::Scenario;
use std::collections::BTreeMap;
use std::time::Instant;

/// Options of `streamcheck bisect`.
#[derive(Debug, Clone)]
pub struct BisectOptions {
    pub from: String,
    pub to: String,
    /// Every published version (any order; the ones between `from` and `to` are probed).
    pub published: Vec<String>,
    /// The target and how probes run; bisect.md and bisect.json go to its `report_dir`.
    pub probe: ProbeOptions,
}

/// `from`, the published versions strictly between it and `to` (oldest first,
/// pre-releases left out), and `to`.
pub fn span(published: &[String], from: &str, to: &str) -> Result<Vec<String>> {
    if !version_lt(from, to) {
        return Err(Error::Usage(format!(
            "--from {from} must be older than --to {to}"
        )));
    }
    let mut between: Vec<String> = published
        .iter()
        .filter(|v| !v.contains('-') && version_lt(from, v) && version_lt(v, to))
        .cloned()
        .collect();
    between.sort_by(|a, b| match (version_lt(a, b), version_lt(b, a)) {
        (true, _) => std::cmp::Ordering::Less,
        (_, true) => std::cmp::Ordering::Greater,
        _ => std::cmp::Ordering::Equal,
    });
    between.dedup();
    Ok([vec![from.to_string()], between, vec![to.to_string()]].concat())
}

/// Bisects every scenario between `opts.from` and `opts.to`, writes bisect.md and
/// bisect.json, and calls `on_scenario` with each scenario's line as it is settled.
pub async fn command(
    scenarios: &[Scenario],
    project: &Project,
    opts: &BisectOptions,
    mut on_line: impl FnMut(&str),
) -> Result<Bisect> {
    let started = Instant::now();
    let versions = span(&opts.published, &opts.from, &opts.to)?;
    let planner = Planner::new(project)?;
    let mut prober = Bisector {
        prober: Prober::new(project, &opts.probe, scenarios),
        planner: &planner,
        opts,
    };
    let mut searches: Vec<Search> = scenarios
        .iter()
        .map(|s| Search::new(&s.id, versions.len()))
        .collect();
    for (scenario, search) in scenarios.iter().zip(&mut searches) {
        if same_expectation(scenario, &planner, &opts.probe.target, &opts.from, &opts.to) {
            search.stop(Outcome::Identical);
        }
    }
    prober.preconditions(&mut searches).await?;
    while let Some(round) = next_round(&searches) {
        for (at, who) in round {
            let seen = prober.probe_between(&versions[at], &searches, &who).await?;
            for (i, (seen, install_failed)) in who.into_iter().zip(seen) {
                searches[i].saw(at, seen, &versions, install_failed);
            }
        }
    }
    prober.confirm(&mut searches, &versions).await?;
    let mut bisect = prober.into_report(versions.len() - 2);
    for mut search in searches {
        search.finish(&versions);
        let s = ScenarioBisect {
            scenario: search.scenario.into(),
            outcome: search.outcome.expect("finish settles every search"),
        };
        on_line(&render::line(&s, &opts.from, &opts.to));
        bisect.scenarios.push(s);
    }
    bisect.duration_ms = started.elapsed().as_millis() as u64;
    let dir = &opts.probe.report_dir;
    render::write(dir, &bisect).map_err(|e| Error::io(dir, e))?;
    Ok(bisect)
}

/// The versions the open searches want probed next, each with the searches (indices)
/// that want it, oldest version first.
fn next_round(searches: &[Search]) -> Option<BTreeMap<usize, Vec<usize>>> {
    let mut round: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (i, s) in searches.iter().enumerate() {
        if let Some(at) = s.next() {
            round.entry(at).or_default().push(i);
        }
    }
    (!round.is_empty()).then_some(round)
}

/// Whether `from` and `to` get the very same expectation (the same block, or none).
fn same_expectation(
    scenario: &Scenario,
    planner: &Planner,
    target: &str,
    from: &str,
    to: &str,
) -> bool {
    let dialect = TargetSpec::parse(target).map_or(Dialect::default(), |s| s.dialect);
    let (a, b) = (
        crate::plan::block(scenario, dialect, from),
        crate::plan::block(scenario, dialect, to),
    );
    let same_block = match (a, b) {
        (Some(a), Some(b)) => std::ptr::eq(a, b),
        (None, None) => true,
        _ => false,
    };
    let rules_at = |v: &str| rule_names(planner, scenario, dialect, v);
    same_block && rules_at(from) == rules_at(to)
}

/// The release-wide rules that rewrite `expect` at `version` (a rule's boundary is a
/// change to bisect as a block's is). Rules that only let frames through are left out:
/// they hold in every scenario, whose own patterns do not change with them.
fn rule_names(
    planner: &Planner,
    scenario: &Scenario,
    dialect: Dialect,
    version: &str,
) -> Vec<String> {
    (planner
        .expectation(scenario, dialect, version, version)
        .ok()
        .flatten())
    .map(|e| {
        e.rules
            .into_iter()
            .filter(|r| r.replaced > 0)
            .map(|r| r.name)
            .collect()
    })
    .unwrap_or_default()
}

/// Bisect's side of probing: `from` and `to` each against their own expectation, each
/// version between against both.
struct Bisector<'a> {
    prober: Prober<'a>,
    planner: &'a Planner,
    opts: &'a BisectOptions,
}

impl Bisector<'_> {
    fn into_report(self, between: usize) -> Bisect {
        let done = self.prober.done;
        Bisect {
            target: self.opts.probe.target.clone(),
            from: self.opts.from.clone(),
            to: self.opts.to.clone(),
            between,
            probed: done.probed,
            installed: done.installed,
            install_failures: done.install_failures,
            duration_ms: 0,
            scenarios: Vec::new(),
        }
    }

    /// `from` and `to` each against their own expectation: a search whose scenario fails
    /// either is over.
    async fn preconditions(&mut self, searches: &mut [Search]) -> Result<()> {
        for version in [self.opts.from.clone(), self.opts.to.clone()] {
            let open: Vec<usize> = (0..searches.len())
                .filter(|&i| searches[i].outcome.is_none())
                .collect();
            if open.is_empty() {
                break;
            }
            let ids: Vec<&str> = open
                .iter()
                .map(|&i| searches[i].scenario.as_str())
                .collect();
            let trials = match self.prober.run(&version, &ids, None).await? {
                Ok(trials) => trials,
                Err(why) => ids.iter().map(|_| Err(why.clone())).collect(),
            };
            for (i, trial) in open.into_iter().zip(trials) {
                let why = match trial {
                    Ok(t) if t.status == Status::Passed => continue,
                    Ok(t) => match t.status.did_not_run() {
                        Some(why) => format!("skipped: {why}"),
                        None => first_divergence(&t).map_or_else(String::new, |d| d.message),
                    },
                    Err(why) => why,
                };
                let version = version.clone();
                searches[i].stop(Outcome::Precondition { version, why });
            }
        }
        Ok(())
    }

    /// Runs the versions on either side of each boundary once more (a flaky scenario
    /// could have put the boundary anywhere).
    async fn confirm(&mut self, searches: &mut [Search], versions: &[String]) -> Result<()> {
        let mut round: BTreeMap<usize, Vec<(usize, Seen)>> = BTreeMap::new();
        for (i, s) in searches.iter().enumerate() {
            for (at, seen) in s.edges().into_iter().flatten() {
                round.entry(at).or_default().push((i, seen));
            }
        }
        for (at, who) in round {
            let ids: Vec<usize> = who.iter().map(|(i, _)| *i).collect();
            let again = self.probe_between(&versions[at], searches, &ids).await?;
            for ((i, first), (again, _)) in who.into_iter().zip(again) {
                searches[i].confirm(at, &first, again, versions);
            }
        }
        Ok(())
    }

    /// The searches `who` at `version`, checked against `to`'s expectation and `from`'s;
    /// each with whether the version failed to install.
    async fn probe_between(
        &mut self,
        version: &str,
        searches: &[Search],
        who: &[usize],
    ) -> Result<Vec<(Seen, bool)>> {
        let ids: Vec<&str> = who.iter().map(|&i| searches[i].scenario.as_str()).collect();
        let to = self.opts.to.clone();
        Ok(match self.prober.run(version, &ids, Some(&to)).await? {
            Err(why) => ids
                .iter()
                .map(|_| (Seen::NotRun(why.clone()), true))
                .collect(),
            Ok(trials) => ids
                .iter()
                .zip(trials)
                .map(|(id, trial)| {
                    let seen = match trial {
                        Err(why) => Seen::NotRun(why),
                        Ok(t) => {
                            classify(&t, self.prober.scenario(id), &self.opts.from, self.planner)
                        }
                    };
                    (seen, false)
                })
                .collect(),
        })
    }
}

/// A trial run against `to`'s expectation, also checked against `from`'s.
fn classify(trial: &Trial, scenario: &Scenario, from: &str, planner: &Planner) -> Seen {
    if let Some(why) = trial.status.did_not_run() {
        return Seen::NotRun(format!("skipped: {why}"));
    }
    let against_new = first_divergence(trial);
    let against_old = probe::against(trial, scenario, from, planner);
    seen(against_new, against_old)
}
