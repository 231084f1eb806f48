//! `ranges --prove`: for each range, the releases on either side of each of its bounds.
//! A release is judged on a trial held to its own expectation, checked again against the
//! other side's (`bisect`'s probe): inside a version block a release passes the block and
//! fails the neighbouring expectation, the release beyond does the opposite; inside a
//! known entry's range the entry matches a divergence of the trial, beyond it none does.
//! When the release just inside a bound behaves as the outside, the bound is searched
//! over the range's releases with `bisect`'s search. A release that two neighbouring
//! blocks both accept belongs to one of them ([`Owner`]). A divergence a known
//! entry names for a release (within its range) does not count in judging which block
//! the release gets: a known bug inside a block's range is the entry's to prove, not the
//! block's. But a release that both blocks accept only through an entry stays with the
//! block it is written in: the bug hides what tells the blocks apart, so it is no evidence
//! to move a bound, and letting the owner rule decide would let a block and an entry widen
//! each other. Every trial is one of (scenario, release), run once per run and shared by
//! every range that asks for it.

use super::enumerate::Range;
use super::not_proven::NotProven;
use super::proof::{Edge, Proof};
use super::subject::Subject;
use crate::boundary::probe::{self, ProbeOptions, Probed, Prober};
use crate::boundary::search::{seen, Outcome, Search, Seen};
use crate::divergence::{Divergence, Kind};
use crate::error::Result;
use crate::install::Project;
use crate::known::{KnownList, Ran};
use crate::plan::Planner;
use crate::runner::{Status, Trial};
use crate::scenario::Scenario;
use crate::trial_id::ScenarioId;
use crate::version_range::{parse_version, VersionRange};
use std::collections::{BTreeMap, BTreeSet};

/// How to prove the ranges of one dialect.
#[derive(Debug, Clone)]
pub struct ProveOptions {
    /// `probe.target` is the dialect's key (`claude-code`).
    pub probe: ProbeOptions,
    /// Every published release (any order; pre-releases are left out).
    pub published: Vec<String>,
    /// The oldest release searched (the dialect's oldest supported), if any.
    pub floor: Option<String>,
    /// Releases also run inside each range (the dialect's supported sample): one that does
    /// not behave as written shows the behaviour changes twice inside it.
    pub sample: Vec<String>,
    /// How many times each release runs the scenarios of an intermittent entry: a release
    /// shows the entry when at least one of its runs does, and does not when none does.
    pub repeat: usize,
}

/// What proving found: per range its proof, or why it has none.
pub struct Proved {
    pub results: Vec<std::result::Result<Proof, NotProven>>,
    pub done: Probed,
}

/// The published releases searched, oldest first, and how the oldest is named.
fn window(opts: &ProveOptions) -> (Vec<String>, Edge) {
    let mut all: Vec<(semver::Version, String)> = (opts.published.iter())
        .filter(|v| !v.contains('-'))
        .filter_map(|v| parse_version(v).map(|p| (p, v.clone())))
        .collect();
    all.sort();
    all.dedup_by(|a, b| a.0 == b.0);
    let floor = opts.floor.as_deref().and_then(parse_version);
    let before = all.len();
    all.retain(|(v, _)| floor.as_ref().is_none_or(|f| v >= f));
    let first = match all.len() < before {
        true => Edge::FirstChecked,
        false => Edge::FirstPublished,
    };
    (all.into_iter().map(|(_, v)| v).collect(), first)
}

#[derive(Clone, Copy, PartialEq)]
enum Side {
    Lower,
    Upper,
}

/// One range's releases: the window indices of those it holds (for a block, those that
/// get this block), and the neighbours beyond its first and last.
#[derive(Clone)]
struct Span {
    members: Vec<usize>,
    below: Option<usize>,
    above: Option<usize>,
    /// Whether the block's own `min_version` (`max_version`) ends it below (above): that
    /// bound is a range of its own, proven apart, and the releases beyond it do not run.
    own_below: bool,
    own_above: bool,
}

/// A trial of (scenario, release), or why it did not run (and whether it was the install).
type Ran1 = std::result::Result<Trial, (String, bool)>;

struct Prover<'a> {
    /// Which of two neighbouring blocks a release both accept belongs to.
    owner: Owner,
    prober: Prober<'a>,
    planner: &'a Planner,
    /// The dialect's known entries: a block is judged apart from the known bugs a release shows.
    known: KnownList,
    window: Vec<String>,
    /// Each (scenario, release)'s runs: one, or `repeat` for a scenario of `repeated`.
    trials: BTreeMap<(ScenarioId, String), Vec<Ran1>>,
    repeat: usize,
    /// The scenarios of the intermittent entries being proven.
    repeated: BTreeSet<ScenarioId>,
    /// How many releases one run takes at most: enough to keep `jobs` trials going, few
    /// enough that the releases in use stay under the cache cap.
    per_run: usize,
}

impl Prover<'_> {
    /// Runs every (scenario, release) of `wanted` not run yet, a scenario of an intermittent
    /// entry `repeat` times: the releases that want the same scenarios in one run, so that
    /// trials of several releases run at once.
    async fn ensure(&mut self, wanted: BTreeMap<usize, BTreeSet<ScenarioId>>) -> Result<()> {
        for pass in 0..self.repeat {
            let mut by_ids: BTreeMap<Vec<ScenarioId>, Vec<String>> = BTreeMap::new();
            for (&at, ids) in &wanted {
                let version = self.window[at].clone();
                let ids: Vec<ScenarioId> = (ids.iter())
                    .filter(|id| pass == 0 || self.repeated.contains(*id))
                    .filter(|id| self.runs(id, &version).len() <= pass)
                    .cloned()
                    .collect();
                if !ids.is_empty() {
                    by_ids.entry(ids).or_default().push(version);
                }
            }
            let chunks = by_ids.iter().flat_map(|(ids, versions)| {
                versions.chunks(self.per_run).map(move |chunk| (ids, chunk))
            });
            for (ids, versions) in chunks.collect::<Vec<_>>() {
                let names: Vec<&str> = ids.iter().map(ScenarioId::as_str).collect();
                let ran = self.prober.run_on(versions, &names, None).await?;
                for (version, ran) in versions.iter().zip(ran) {
                    for (i, id) in ids.iter().enumerate() {
                        let one = match &ran {
                            Err(why) => Err((why.clone(), true)),
                            Ok(trials) => trials[i].clone().map_err(|why| (why, false)),
                        };
                        (self.trials.entry((id.clone(), version.clone())))
                            .or_default()
                            .push(one);
                    }
                }
            }
        }
        Ok(())
    }

    /// The runs of `id` on `version` so far.
    fn runs(&self, id: &ScenarioId, version: &str) -> &[Ran1] {
        (self.trials.get(&(id.clone(), version.to_string()))).map_or(&[], Vec::as_slice)
    }

    /// What the range's scenarios did at window index `at`, seen from `side`: `New` is
    /// "behaves as the range says", `Old` "behaves as beyond it".
    fn seen(&self, range: &Range, span: &Span, at: usize, side: Side) -> (Seen, bool) {
        let mut all = Vec::new();
        let intermittent = range.is_intermittent();
        for id in &range.scenarios {
            let version = &self.window[at];
            let judged = |ran: &Ran1| match ran {
                Err((why, install)) => (Seen::NotRun(why.clone()), *install),
                Ok(trial) => (self.judge(range, span, at, side, trial), false),
            };
            let runs = self.runs(id, version);
            let one = match (runs.first(), intermittent) {
                (None, _) => (
                    Seen::NotRun(format!("{id} was not run on {version}")),
                    false,
                ),
                (Some(first), false) => judged(first),
                (Some(_), true) => shown_in_any(runs.iter().map(judged), self.repeat, || {
                    format!(
                        "{id} ran {} of {} times on {version}",
                        runs.len(),
                        self.repeat
                    )
                }),
            };
            all.push(one);
        }
        let first = all
            .first()
            .cloned()
            .unwrap_or((Seen::NotRun("no scenario".into()), false));
        if all.iter().all(|s| s.0 == first.0) {
            return first;
        }
        let (agree, other) = (&range.scenarios[0], first.0.describe());
        (
            Seen::Neither {
                against_new: Box::new(Divergence::new(
                    Kind::HarnessError,
                    format!("its cases disagree: {agree} {other}"),
                )),
                against_old: Box::new(Divergence::new(
                    Kind::HarnessError,
                    "its cases disagree".to_string(),
                )),
            },
            false,
        )
    }

    fn judge(&self, range: &Range, span: &Span, at: usize, side: Side, trial: &Trial) -> Seen {
        // A skip the plan decided (a feature the release lacks) or an unavailable release
        // did not run; a skip expectation's run, confirmed or not, is judged like any run.
        let planned_skip = trial.skip_reason.is_some();
        if let (Some(why), true) = (
            trial.status.did_not_run(),
            planned_skip || matches!(trial.status, Status::Unavailable(_)),
        ) {
            return Seen::NotRun(format!("skipped: {why}"));
        }
        if let Some(entry) = &range.entry {
            return match shows(entry, trial, range) {
                true => Seen::New,
                false => Seen::Old,
            };
        }
        let scenario = self.prober.scenario(&trial.key.scenario);
        // A `min_version`/`max_version` holds where the block, run regardless of the bound,
        // passes; beyond it the block does not.
        let against = |held_to: &str| {
            probe::against_seeing_through(trial, scenario, held_to, self.planner, Some(&self.known))
        };
        if let Subject::Bound { .. } = &range.subject {
            return match against(&self.window[at]).first {
                None => Seen::New,
                Some(_) => Seen::Old,
            };
        }
        let member = span.members.contains(&at);
        let (inside, outside) = match side {
            Side::Lower => (span.members[0], span.below),
            Side::Upper => (
                *span.members.last().expect("a span has members"),
                span.above,
            ),
        };
        let held_in = if member { at } else { inside };
        let against_in = against(&self.window[held_in]);
        let against_out = match (member, outside) {
            (false, _) => against(&self.window[at]),
            (true, Some(o)) => against(&self.window[o]),
            // Nothing beyond: only whether it behaves as the block says counts.
            (true, None) => probe::Judged {
                first: Some(Divergence::new(Kind::HarnessError, "no release beyond")),
                through_known: false,
            },
        };
        let through_known = against_in.through_known || against_out.through_known;
        match seen(against_in.first, against_out.first) {
            // The bug hides what tells the blocks apart: no evidence to move a bound.
            Seen::Both if through_known => match member {
                true => Seen::New,
                false => Seen::Old,
            },
            both_or_one => owned(both_or_one, side, self.owner),
        }
    }
}

/// An intermittent entry over a release's runs: shown when any run shows it; not shown
/// only when all `repeat` ran and none did.
fn shown_in_any(
    runs: impl Iterator<Item = (Seen, bool)>,
    repeat: usize,
    too_few: impl FnOnce() -> String,
) -> (Seen, bool) {
    let runs: Vec<(Seen, bool)> = runs.collect();
    if runs.iter().any(|(seen, _)| *seen == Seen::New) {
        return (Seen::New, false);
    }
    if let Some(not_run) = runs
        .iter()
        .find(|(seen, _)| matches!(seen, Seen::NotRun(_)))
    {
        return not_run.clone();
    }
    match runs.len() >= repeat {
        true => (Seen::Old, false),
        false => (Seen::NotRun(too_few()), false),
    }
}

/// Which of two neighbouring blocks a release both accept belongs to. First the older:
/// the boundary is the first release the older block fails (a behaviour the older block
/// pins goes away). Where that proves nothing, the newer: the boundary is the first
/// release that passes the newer block (a behaviour it pins appears, and the older block,
/// pinning less, accepts it too).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Owner {
    Older,
    Newer,
}

/// `seen` with "both" resolved by `owner`: beyond a block's upper bound the neighbour is
/// newer, below its lower bound older.
fn owned(seen: Seen, side: Side, owner: Owner) -> Seen {
    let written = match (side, owner) {
        (Side::Upper, Owner::Older) | (Side::Lower, Owner::Newer) => Seen::New,
        _ => Seen::Old,
    };
    match seen {
        Seen::Both => written,
        other => other,
    }
}

/// Whether the known entry names a divergence of the trial (its range aside).
fn shows(entry: &crate::known::Entry, trial: &Trial, range: &Range) -> bool {
    let mut anywhere = entry.clone();
    anywhere.versions = None;
    anywhere.intermittent = false;
    let list = KnownList {
        file: range.file.clone(),
        entries: vec![anywhere],
        findings: Default::default(),
    };
    let printed: Vec<&serde_json::Value> = trial.output.frames.iter().map(|f| &f.value).collect();
    let ran = Ran {
        name: &trial.key.target,
        dialect: range.dialect.conventions().expect_key(),
        version: &trial.key.target_version,
        printed: &printed,
    };
    let mut divergences = trial.divergences.clone();
    list.judge(&trial.key.scenario, &ran, &mut divergences)
        .is_empty()
}

/// One bound's result: the release just inside it and the one beyond, or why not.
type Bound = std::result::Result<(String, Edge), NotProven>;

/// A bound being searched: its range, side and search over `indices` (window indices,
/// oldest first: the range's members, or the releases beyond it when it reaches further
/// than written).
struct Open {
    range: usize,
    side: Side,
    search: Search,
    indices: Vec<usize>,
}

/// Where a bound is: found from the releases on either side, or to be searched.
enum Edged {
    Found(Bound),
    /// A search over these window indices: the first behaves as beyond the bound, the
    /// last as written (for the upper bound, once flipped).
    Search(Box<Search>, Vec<usize>),
    /// The release beyond behaves as written too: the range reaches further, up to the
    /// window's end (its first or last release) at most.
    Further {
        beyond: usize,
        outermost: usize,
    },
}

/// What every proving run starts from: the dialect's known entries, the releases searched,
/// each range's own bounds, and the scenarios with the bounds the ranges prove left out.
struct Setup {
    planner: Planner,
    known: KnownList,
    window: Vec<String>,
    first_edge: Edge,
    within: Vec<Option<VersionRange>>,
    scenarios: Vec<Scenario>,
    /// The scenarios of the intermittent entries among the ranges: each release runs them
    /// `repeat` times.
    repeated: BTreeSet<ScenarioId>,
}

impl Setup {
    fn new(
        ranges: &[Range],
        scenarios: &[Scenario],
        project: &Project,
        opts: &ProveOptions,
    ) -> Result<Setup> {
        let known = match ranges.first() {
            Some(r) => (*project.data(r.dialect)?.known).clone(),
            None => KnownList::default(),
        };
        let (window, first_edge) = window(opts);
        Ok(Setup {
            planner: Planner::new(project)?,
            known,
            window,
            first_edge,
            within: ranges.iter().map(|r| own_bounds(r, scenarios)).collect(),
            scenarios: unbounded(ranges, scenarios),
            repeated: (ranges.iter())
                .filter(|r| r.is_intermittent())
                .flat_map(|r| r.scenarios.iter().cloned())
                .collect(),
        })
    }

    fn prover<'a>(&'a self, project: &'a Project, opts: &'a ProveOptions) -> Prover<'a> {
        Prover {
            owner: Owner::Older,
            prober: Prober::new(project, &opts.probe, &self.scenarios),
            planner: &self.planner,
            window: self.window.clone(),
            trials: BTreeMap::new(),
            repeat: opts.repeat.max(1),
            repeated: self.repeated.clone(),
            per_run: opts.probe.jobs.max(1) * 2,
            known: self.known.clone(),
        }
    }

    fn spans(&self, ranges: &[Range]) -> Vec<std::result::Result<Span, NotProven>> {
        (ranges.iter().zip(&self.within))
            .map(|(r, within)| span(r, within.as_ref(), &self.window))
            .collect()
    }
}

/// Proves each of `ranges` (all of one dialect) over the published releases.
pub async fn prove(
    ranges: &[Range],
    scenarios: &[Scenario],
    project: &Project,
    opts: &ProveOptions,
    mut on_line: impl FnMut(&Range, &std::result::Result<Proof, NotProven>),
) -> Result<Proved> {
    let setup = Setup::new(ranges, scenarios, project, opts)?;
    let mut p = setup.prover(project, opts);
    let spans = setup.spans(ranges);
    let first_edge = setup.first_edge.clone();

    let mut results = prove_pass(&mut p, ranges, &spans, opts, &first_edge).await?;
    // A block the release before it also accepts throughout (it pins more than the block
    // before, which pins less): the releases both accept are the newer block's.
    let retry: Vec<usize> = (0..ranges.len())
        .filter(|&i| results[i].is_err() && spans[i].is_ok() && ranges[i].entry.is_none())
        .collect();
    if !retry.is_empty() {
        p.owner = Owner::Newer;
        let again: Vec<Range> = retry.iter().map(|&i| ranges[i].clone()).collect();
        let again_spans: Vec<_> = retry.iter().map(|&i| spans[i].clone()).collect();
        let found = prove_pass(&mut p, &again, &again_spans, opts, &first_edge).await?;
        for (i, result) in retry.into_iter().zip(found) {
            if result.is_ok() {
                results[i] = result;
            }
        }
    }
    for (r, result) in ranges.iter().zip(&results) {
        on_line(r, result);
    }
    Ok(Proved {
        results,
        done: p.prober.done,
    })
}

/// Runs the sampled releases inside each proven range that its proof did not run, and
/// judges them as a proof judges the releases between its bounds: where each behaves as
/// written, the proof gains their trials (its bounds were proven and stay); where one does
/// not, the range is not proven (the behaviour changes inside it) and needs proving again.
/// Each of `proven` is a range (all of one dialect) with its current proof.
pub async fn top_up(
    proven: &[(Range, Proof)],
    scenarios: &[Scenario],
    project: &Project,
    opts: &ProveOptions,
    mut on_line: impl FnMut(&Range, &std::result::Result<Proof, NotProven>),
) -> Result<Proved> {
    let ranges: Vec<Range> = proven.iter().map(|(r, _)| r.clone()).collect();
    let setup = Setup::new(&ranges, scenarios, project, opts)?;
    let mut p = setup.prover(project, opts);
    let spans = setup.spans(&ranges);
    let not_run = |proof: &Proof, at: usize| {
        let version = &p.window[at];
        !(proof.trials.iter()).any(|t| t.rsplit_once('@').is_some_and(|(_, v)| v == version))
    };
    let mut wanted: BTreeMap<usize, BTreeSet<ScenarioId>> = BTreeMap::new();
    let mut missing: Vec<Vec<usize>> = Vec::new();
    for (r, proof) in proven {
        let (first, last) = (parse_version(&proof.first), parse_version(&proof.last));
        let inside = |at: &usize| {
            let v = parse_version(&p.window[*at]);
            first < v && v < last
        };
        let at: Vec<usize> = (sampled_between(proof, &p.window, &opts.sample).into_iter())
            .filter(inside)
            .filter(|&at| not_run(proof, at))
            .collect();
        for &m in &at {
            wanted
                .entry(m)
                .or_default()
                .extend(r.scenarios.iter().cloned());
        }
        missing.push(at);
    }
    p.ensure(wanted).await?;
    let mut results = Vec::new();
    for (((r, proof), s), at) in proven.iter().zip(&spans).zip(&missing) {
        let result = s.clone().and_then(|s| {
            changed_inside(&p, r, &s, proof, at)?;
            let mut proof = proof.clone();
            for &m in at {
                for id in &r.scenarios {
                    let key = r.dialect.conventions().expect_key();
                    proof.trials.push(format!("{id} on {key}@{}", p.window[m]));
                }
            }
            let version = |t: &String| t.rsplit_once('@').and_then(|(_, v)| parse_version(v));
            proof.trials.sort_by_key(version);
            Ok(proof)
        });
        on_line(r, &result);
        results.push(result);
    }
    Ok(Proved {
        results,
        done: p.prober.done,
    })
}

/// One search of every bound of `ranges`, under the prover's ownership convention.
async fn prove_pass(
    p: &mut Prover<'_>,
    ranges: &[Range],
    spans: &[std::result::Result<Span, NotProven>],
    opts: &ProveOptions,
    first_edge: &Edge,
) -> Result<Vec<std::result::Result<Proof, NotProven>>> {
    // The releases on either side of each bound, and the sampled ones inside.
    let sampled = |s: &Span, window: &[String]| -> Vec<usize> {
        (s.members.iter().copied())
            .filter(|&m| opts.sample.contains(&window[m]))
            .collect()
    };
    let mut wanted: BTreeMap<usize, BTreeSet<ScenarioId>> = BTreeMap::new();
    for (r, s) in ranges.iter().zip(spans) {
        let Ok(s) = s else { continue };
        let edges = [
            Some(s.members[0]),
            s.members.last().copied(),
            s.below,
            s.above,
        ];
        for at in edges.into_iter().flatten().chain(sampled(s, &p.window)) {
            wanted
                .entry(at)
                .or_default()
                .extend(r.scenarios.iter().cloned());
        }
    }
    p.ensure(wanted).await?;

    let mut edged: Vec<(usize, Side, Edged)> = Vec::new();
    for (i, (r, s)) in ranges.iter().zip(spans).enumerate() {
        let Ok(s) = s else { continue };
        for side in [Side::Lower, Side::Upper] {
            edged.push((i, side, edge(p, r, s, side, first_edge)));
        }
    }
    // Ranges that reach further than written: the outermost releases, then their searches.
    let mut outer: BTreeMap<usize, BTreeSet<ScenarioId>> = BTreeMap::new();
    for (i, _, e) in &edged {
        if let Edged::Further { outermost, .. } = e {
            outer
                .entry(*outermost)
                .or_default()
                .extend(ranges[*i].scenarios.iter().cloned());
        }
    }
    p.ensure(outer).await?;
    let mut bounds: Vec<[Option<Bound>; 2]> = vec![[None, None]; ranges.len()];
    let mut open: Vec<Open> = Vec::new();
    for (i, side, e) in edged {
        let s = spans[i].as_ref().expect("edged spans exist");
        let e = match e {
            Edged::Further { beyond, outermost } => {
                further(p, &ranges[i], s, side, first_edge, (beyond, outermost))
            }
            other => other,
        };
        match e {
            Edged::Found(found) => bounds[i][side as usize] = Some(found),
            Edged::Search(search, indices) => open.push(Open {
                range: i,
                side,
                search: *search,
                indices,
            }),
            Edged::Further { .. } => unreachable!("resolved above"),
        }
    }

    // Bounds not where they are written: searched together, round by round.
    loop {
        let mut round: BTreeMap<usize, BTreeSet<ScenarioId>> = BTreeMap::new();
        for o in &open {
            if let Some(at) = o.search.next() {
                round
                    .entry(o.indices[at])
                    .or_default()
                    .extend(ranges[o.range].scenarios.iter().cloned());
            }
        }
        if round.is_empty() {
            break;
        }
        p.ensure(round).await?;
        for o in &mut open {
            let Some(at) = o.search.next() else { continue };
            let s = spans[o.range].as_ref().expect("searched spans exist");
            let (seen, install) = p.seen(&ranges[o.range], s, o.indices[at], o.side);
            let seen = if o.side == Side::Upper {
                flip(seen)
            } else {
                seen
            };
            let versions: Vec<String> = o.indices.iter().map(|&m| p.window[m].clone()).collect();
            o.search.saw(at, seen, &versions, install);
        }
    }
    for mut o in open {
        let versions: Vec<String> = o.indices.iter().map(|&m| p.window[m].clone()).collect();
        o.search.finish(&versions);
        bounds[o.range][o.side as usize] =
            Some(searched(o.search.outcome.expect("finished"), o.side));
    }

    let proofs: Vec<std::result::Result<Proof, NotProven>> = (ranges.iter().zip(spans))
        .zip(&bounds)
        .map(|((r, s), bounds)| match s {
            Err(why) => Err(why.clone()),
            Ok(_) => assemble(r, bounds, p),
        })
        .collect();
    // The sampled releases between the proven first and last: a bound the search moved out
    // reaches releases the written range did not hold, and those run now.
    let mut reached: BTreeMap<usize, BTreeSet<ScenarioId>> = BTreeMap::new();
    for (r, proof) in ranges.iter().zip(&proofs) {
        for at in proof
            .iter()
            .flat_map(|proof| sampled_between(proof, &p.window, &opts.sample))
        {
            reached
                .entry(at)
                .or_default()
                .extend(r.scenarios.iter().cloned());
        }
    }
    p.ensure(reached).await?;
    let mut results = Vec::new();
    for ((r, s), proof) in ranges.iter().zip(spans).zip(proofs) {
        results.push(proof.and_then(|proof| {
            let s = s.as_ref().expect("assembled spans exist");
            let sampled = sampled_between(&proof, &p.window, &opts.sample);
            changed_inside(p, r, s, &proof, &sampled)?;
            Ok(proof)
        }));
    }
    Ok(results)
}

/// `scenarios`, with the `min_version` and `max_version` that `ranges` prove left out of
/// their blocks, so that their trials run on both sides of the bound.
fn unbounded(ranges: &[Range], scenarios: &[Scenario]) -> Vec<Scenario> {
    let mut out = scenarios.to_vec();
    for r in ranges {
        let Subject::Bound {
            key,
            field,
            version,
        } = &r.subject
        else {
            continue;
        };
        // The version blocks of the key's target carry its bound too (each is the general
        // block with its own fields over it).
        let target_of = |k: &str| {
            crate::expectation::ExpectKey::parse(k)
                .ok()
                .map(|k| k.target)
        };
        let target = target_of(key);
        for s in (out.iter_mut()).filter(|s| r.scenarios.contains(&s.id)) {
            for (k, block) in s.file.expect.iter_mut() {
                if target.is_none() || target_of(k) != target {
                    continue;
                }
                let bound = match field.as_str() {
                    "min_version" => &mut block.min_version,
                    _ => &mut block.max_version,
                };
                if bound.as_deref() == Some(version.as_str()) {
                    *bound = None;
                }
            }
        }
    }
    out
}

/// A version block's own `min_version`/`max_version`, as a range: the block holds only
/// between them, whatever its key says.
fn own_bounds(range: &Range, scenarios: &[Scenario]) -> Option<VersionRange> {
    let Subject::Block(key) = &range.subject else {
        return None;
    };
    let id = range.scenarios.first()?;
    let block = scenarios
        .iter()
        .find(|s| &s.id == id)?
        .file
        .expect
        .get(key)?;
    let mut parts = Vec::new();
    parts.extend(block.min_version.as_ref().map(|v| format!(">={v}")));
    parts.extend(block.max_version.as_ref().map(|v| format!("<={v}")));
    VersionRange::parse(&parts.join(", "))
        .ok()
        .filter(|_| !parts.is_empty())
}

/// The releases of the window that `range` holds (within its block's own bounds), and its
/// neighbours.
fn span(
    range: &Range,
    within: Option<&VersionRange>,
    window: &[String],
) -> std::result::Result<Span, NotProven> {
    // A block holds wherever its range does, also where a block nested inside it refines
    // it (ranges nest: the inner block states only what differs from this one).
    let written = |i: usize| parse_version(&window[i]).is_some_and(|p| range.versions.contains(&p));
    let own =
        |i: usize| parse_version(&window[i]).is_some_and(|p| within.is_none_or(|w| w.contains(&p)));
    let members: Vec<usize> = (0..window.len())
        .filter(|&i| written(i) && own(i))
        .collect();
    let (Some(&first), Some(&last)) = (members.first(), members.last()) else {
        return Err(NotProven::NoReleaseIn);
    };
    let below = first.checked_sub(1);
    let above = (last + 1 < window.len()).then_some(last + 1);
    let own_below = below.is_some_and(|b| written(b) && !own(b));
    let own_above = above.is_some_and(|a| written(a) && !own(a));
    Ok(Span {
        below: below.filter(|_| !own_below),
        above: above.filter(|_| !own_above),
        own_below,
        own_above,
        members,
    })
}

/// A bound from the releases on either side of it, or the search that finds it when the
/// release just inside behaves as beyond.
fn edge(p: &Prover, r: &Range, s: &Span, side: Side, first_edge: &Edge) -> Edged {
    let (inside, beyond, far) = match side {
        Side::Lower => (s.members[0], s.below, *s.members.last().expect("members")),
        Side::Upper => (*s.members.last().expect("members"), s.above, s.members[0]),
    };
    let v = |at: usize| p.window[at].clone();
    let (seen_in, _) = p.seen(r, s, inside, side);
    let Some(beyond) = beyond else {
        let outer = match (side, s.own_below, s.own_above) {
            (Side::Lower, true, _) | (Side::Upper, _, true) => Edge::OwnBound,
            (Side::Lower, ..) => first_edge.clone(),
            (Side::Upper, ..) => Edge::NewestChecked,
        };
        // Nothing beyond to compare with: the release inside passes the block, or shows the entry.
        return Edged::Found(match seen_in == Seen::New {
            true => Ok((v(inside), outer)),
            false => Err(NotProven::InsideDiffers {
                inside: v(inside),
                seen: seen_in,
            }),
        });
    };
    let (seen_out, _) = p.seen(r, s, beyond, side);
    match (&seen_in, &seen_out) {
        (Seen::New, Seen::Old) => Edged::Found(Ok((v(inside), Edge::Release(v(beyond))))),
        (Seen::New, Seen::New) => Edged::Further {
            beyond,
            outermost: match side {
                Side::Lower => 0,
                Side::Upper => p.window.len() - 1,
            },
        },
        (_, Seen::New) => Edged::Found(Err(NotProven::BeyondAsWritten {
            beyond: v(beyond),
            inside: v(inside),
            seen_in,
        })),
        (Seen::Old, Seen::Old) => {
            let (seen_far, _) = p.seen(r, s, far, side);
            if seen_far != Seen::New {
                return Edged::Found(Err(NotProven::NoneAsWritten {
                    beyond: v(beyond),
                    inside: v(inside),
                    seen_in,
                    far: v(far),
                    seen_far,
                }));
            }
            // The first member is known to behave as beyond the lower bound, the last as
            // written (flipped for the upper bound): the search starts between them.
            Edged::Search(
                Box::new(Search::new(&r.describe(), s.members.len())),
                s.members.clone(),
            )
        }
        _ => Edged::Found(Err(NotProven::Unclear {
            inside: v(inside),
            seen_in,
            beyond: v(beyond),
            seen_out,
        })),
    }
}

/// A range that reaches past the release beyond it: it reaches the window's end, or the
/// bound is searched between the release beyond and the outermost one.
fn further(
    p: &Prover,
    r: &Range,
    s: &Span,
    side: Side,
    first_edge: &Edge,
    (beyond, outermost): (usize, usize),
) -> Edged {
    let (seen, _) = p.seen(r, s, outermost, side);
    let v = |at: usize| p.window[at].clone();
    match seen {
        Seen::New => Edged::Found(Ok((
            v(outermost),
            match side {
                Side::Lower => first_edge.clone(),
                Side::Upper => Edge::NewestChecked,
            },
        ))),
        Seen::Old => {
            let indices: Vec<usize> = match side {
                Side::Lower => (outermost..=beyond).collect(),
                Side::Upper => (beyond..=outermost).collect(),
            };
            Edged::Search(Box::new(Search::new(&r.describe(), indices.len())), indices)
        }
        seen => Edged::Found(Err(NotProven::PastRange {
            beyond: v(beyond),
            outermost: v(outermost),
            seen,
        })),
    }
}

/// The upper bound's search looks for the first release that behaves as beyond.
fn flip(seen: Seen) -> Seen {
    match seen {
        Seen::New => Seen::Old,
        Seen::Old => Seen::New,
        other => other,
    }
}

fn searched(outcome: Outcome, side: Side) -> Bound {
    match outcome {
        Outcome::Boundary {
            first_new,
            last_old,
            ..
        } => Ok(match side {
            Side::Lower => (first_new, Edge::Release(last_old)),
            Side::Upper => (last_old, Edge::Release(first_new)),
        }),
        Outcome::Neither {
            version,
            against_new,
            ..
        } => Err(NotProven::Neither {
            version,
            against_new,
        }),
        Outcome::Both { version } => Err(NotProven::Both { version }),
        Outcome::NotRun { version, why } => Err(NotProven::NotRun { version, why }),
        Outcome::Unstable {
            version,
            first,
            again,
        } => Err(NotProven::Unstable {
            version,
            first,
            again,
        }),
        Outcome::Precondition { version, why } => Err(NotProven::Precondition { version, why }),
        Outcome::Identical => Err(NotProven::Identical),
    }
}

/// The sampled releases from the proven first to last (window indices).
fn sampled_between(proof: &Proof, window: &[String], sample: &[String]) -> Vec<usize> {
    let (first, last) = (parse_version(&proof.first), parse_version(&proof.last));
    (0..window.len())
        .filter(|&m| sample.contains(&window[m]))
        .filter(|&m| {
            let v = parse_version(&window[m]);
            first <= v && v <= last
        })
        .collect()
}

/// A sampled release strictly between the proven first and last that does not behave as
/// written: the behaviour changed twice inside the range.
fn changed_inside(
    p: &Prover,
    r: &Range,
    s: &Span,
    proof: &Proof,
    sampled: &[usize],
) -> std::result::Result<(), NotProven> {
    let (first, last) = (parse_version(&proof.first), parse_version(&proof.last));
    for &at in sampled {
        let v = parse_version(&p.window[at]);
        if v <= first || v >= last {
            continue;
        }
        // A release the search reached above the written range is held to the block above.
        let side = match s.members.last() {
            Some(&last) if at > last => Side::Upper,
            _ => Side::Lower,
        };
        let (seen, _) = p.seen(r, s, at, side);
        // Inside a block, a release whose every divergence from it a known entry names
        // behaves as written: the entry is a range of its own, proven on its own.
        let known = r.scenarios.iter().all(|id| {
            let trial = p.runs(id, &p.window[at]).first();
            matches!(trial, Some(Ok(t)) if matches!(t.status, Status::Known(_)))
        });
        let behaves = match r.entry {
            Some(_) => seen == Seen::New,
            None => known || matches!(seen, Seen::New | Seen::Both),
        };
        if !behaves {
            return Err(NotProven::ChangesInside {
                first: proof.first.clone(),
                last: proof.last.clone(),
                between: p.window[at].clone(),
                seen,
            });
        }
    }
    Ok(())
}

/// The proof of a range from its two bounds, with every trial of its scenarios this run made.
fn assemble(
    r: &Range,
    bounds: &[Option<Bound>; 2],
    p: &Prover,
) -> std::result::Result<Proof, NotProven> {
    let [lower, upper] = bounds
        .clone()
        .map(|b| b.unwrap_or(Err(NotProven::NotSearched)));
    let (first, below, last, above) = match (lower, upper) {
        (Ok((first, below)), Ok((last, above))) => (first, below, last, above),
        (Err(why), Ok((last, above))) => {
            return Err(NotProven::Lower {
                why: Box::new(why),
                last,
                above,
            })
        }
        (Ok((first, below)), Err(why)) => {
            return Err(NotProven::Upper {
                why: Box::new(why),
                first,
                below,
            })
        }
        (Err(low), Err(high)) => return Err(NotProven::BothBounds(Box::new(low), Box::new(high))),
    };
    if parse_version(&last) < parse_version(&first) {
        return Err(NotProven::Crossed { first, last });
    }
    let mut trials = Vec::new();
    for at in 0..p.window.len() {
        for id in &r.scenarios {
            if !p.runs(id, &p.window[at]).is_empty() {
                trials.push(format!(
                    "{id} on {}@{}",
                    r.dialect.conventions().expect_key(),
                    p.window[at]
                ));
            }
        }
    }
    Ok(Proof {
        file: r.file.clone(),
        case: r.case.clone(),
        subject: r.subject.clone(),
        hash: r.hash.clone(),
        first,
        last,
        below,
        above,
        trials,
        runs_each: r.is_intermittent().then_some(p.repeat),
    })
}
