//! `streamcheck ranges`: whether every version range is proven (`--check`), and proving
//! the ones that are not (`--prove`).

use super::args::{ExecArgs, SelectArgs};
use super::setup::Location;
use super::{Context, Verdict};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Instant;
use streamcheck::boundary::ProbeOptions;
use streamcheck::commands::ranges::not_proven::NotProven;
use streamcheck::commands::ranges::prove::{self, ProveOptions};
use streamcheck::commands::ranges::{
    self, proof_files, rewrite, Proof, ProofFile, Range, Sources, Unproven,
};
use streamcheck::dialect::{Dialect, NpmPin};
use streamcheck::error::{Error, Result};
use streamcheck::install::{cache, version_lt, Project};
use streamcheck::suite::Selection;
use streamcheck::trial_id::ScenarioId;

/// The default `--cache-cap-gb`: nine Claude Code releases of ~340 MB.
const DEFAULT_CAP_GB: f64 = 3.0;

/// Whether every version range (version blocks of scenarios and cases, `min_version` and
/// `max_version`, known-divergence entries' `versions`) is proven by a current proof in
/// `targets/<dialect>/ranges.yaml` (`--check`: exit 0 all proven, 1 unproven ones listed
/// as `file:line: range (why: ...)`, 2 a setup error), or prove the unproven ones by a
/// boundary search over the published releases (`--prove`).
#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("mode").required(true).args(["check", "prove", "write"])))]
pub struct RangesArgs {
    #[command(flatten)]
    select: SelectArgs,
    #[command(flatten)]
    exec: ExecArgs,
    /// List each range that no current proof proves.
    #[arg(long)]
    check: bool,
    /// Search the bounds of each unproven range, write its proof, and write each range
    /// whose proof found other bounds with the bounds found.
    #[arg(long)]
    prove: bool,
    /// Only write each range whose proof found other bounds with the bounds found (no trial).
    #[arg(long)]
    write: bool,
    /// The published releases to search, comma-separated (default: asks npm).
    #[arg(long, value_delimiter = ',')]
    versions: Vec<String>,
    /// Keep the release cache under this many GB while proving, evicting the least
    /// recently used release first.
    #[arg(long, default_value_t = DEFAULT_CAP_GB)]
    cache_cap_gb: f64,
    /// Do not also run the sampled releases (versions.yaml `supported`) inside each range:
    /// fewer trials, but a behaviour that changed twice inside a range goes unnoticed.
    #[arg(long)]
    no_sample: bool,
    /// With --prove: also run, for each proven range, the sampled releases inside it its
    /// proof did not run (proofs made before the prover ran the sample); a range one of them
    /// does not behave as written in loses its proof and is proven again.
    #[arg(long, requires = "prove", conflicts_with = "no_sample")]
    resample: bool,
    /// With --prove: how many times each release runs the scenarios of an intermittent
    /// known entry (it shows on a release when any run shows it, and not when none does).
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = clap::value_parser!(u16).range(2..), requires = "prove")]
    repeat: u16,
    /// With --prove: save the proofs found after every N ranges, so a run stopped early
    /// keeps them (the ranges of one scenario are always proven together).
    #[arg(long, value_name = "N", default_value_t = 40, requires = "prove")]
    save_every: usize,
    /// Where each probe's run reports go (default reports/ranges/<timestamp>/).
    #[arg(long)]
    report_dir: Option<PathBuf>,
}

impl RangesArgs {
    pub fn exec(self, loc: &Location) -> Result<Verdict> {
        let mut ctx = Context::load(loc, &self.select)?;
        let mut ranges = self.ranges(&ctx)?;
        if !(self.prove || self.write) {
            return check(&ctx, &ranges);
        }
        let whole = self.select.filters.is_empty() && self.select.shard.is_none();
        // A rewrite drops the proofs of its scenarios' other ranges; proving those again may
        // move another bound, and so on (each round proves only what the one before left
        // unproven). Each round reads the scenarios and the data files as the one before
        // left them: a proof is judged against the blocks as they stand.
        for round in 0..PROVE_ROUNDS {
            if round > 0 {
                ctx = Context::load(loc, &self.select)?;
                ranges = self.ranges(&ctx)?;
            }
            if self.prove {
                self.prove(&ctx, &ranges)?;
            }
            let (after, dropped) = write_back(ranges, || self.ranges(&ctx), whole)?;
            ranges = after;
            if !self.prove || dropped == 0 {
                break;
            }
        }
        let rest = ranges::check(&ranges).map_err(|e| Error::Usage(e.to_string()))?;
        Ok(ctx.verdict(Verdict::divergence_if(!rest.unproven.is_empty())))
    }

    /// Every range of the selected scenarios and of the known-divergence lists, read from
    /// the files as they are now.
    fn ranges(&self, ctx: &Context) -> Result<Vec<Range>> {
        let config = ctx.setup.config.as_ref();
        let sources = Sources {
            root: ctx.project.root.clone(),
            own_folders: ctx.setup.scenario_roots().into_iter().skip(1).collect(),
            own_known: config.and_then(|c| c.known_divergences.as_ref().map(|k| c.resolve(k))),
            own_dir: config.map(|c| c.dir.clone()),
        };
        let selection = Selection {
            filters: self.select.filters.clone(),
            shard: self.select.shard,
        };
        ranges::enumerate(&sources, &ctx.scenarios, |id| selection.takes(id))
            .map_err(|e| Error::Usage(e.to_string()))
    }

    fn prove(&self, ctx: &Context, ranges: &[Range]) -> Result<()> {
        let started = Instant::now();
        let checked = ranges::check(ranges).map_err(|e| Error::Usage(e.to_string()))?;
        let mut todo: BTreeMap<Dialect, Vec<Range>> = BTreeMap::new();
        for f in &checked.unproven {
            if matches!(
                f.why,
                Unproven::NoProof | Unproven::Stale | Unproven::Intermittent
            ) {
                todo.entry(f.range.dialect)
                    .or_default()
                    .push(f.range.clone());
            }
        }
        let mut unsampled: BTreeMap<Dialect, Vec<(Range, Proof)>> = BTreeMap::new();
        if self.resample {
            for u in unsampled_of(ctx, ranges)? {
                (unsampled.entry(u.range.dialect).or_default()).push((u.range, u.proof));
            }
        }
        let dialects: BTreeSet<Dialect> = todo.keys().chain(unsampled.keys()).copied().collect();
        let mut found: Vec<(PathBuf, Proof)> = Vec::new();
        let mut touched: Vec<Range> = Vec::new();
        let mut tally = Tally::default();
        let runtime = super::args::runtime()?;
        for dialect in dialects {
            let opts = self.options(ctx, dialect)?;
            let mut todo = todo.remove(&dialect).unwrap_or_default();
            // The sample inside a proven range first: a range it changes inside is proven
            // again from scratch below.
            let unsampled = unsampled.remove(&dialect).unwrap_or_default();
            for batch in unsampled.chunks(self.save_every.max(1)) {
                let done = runtime.block_on(prove::top_up(
                    batch,
                    &ctx.scenarios,
                    &ctx.project,
                    &opts,
                    |r, result| line(r, result, "sampled"),
                ))?;
                let batch: Vec<Range> = batch.iter().map(|(r, _)| r.clone()).collect();
                let (proofs, again) = tally.add(&batch, done);
                forget(&again)?;
                save(&batch, &proofs, None)?;
                found.extend(proofs);
                todo.extend(again);
                touched.extend(batch);
            }
            // Proven and saved batch by batch: a run stopped early keeps what it proved.
            for batch in ranges::batches(&todo, self.save_every) {
                let done = runtime.block_on(prove::prove(
                    &batch,
                    &ctx.scenarios,
                    &ctx.project,
                    &opts,
                    |r, result| line(r, result, "proven"),
                ))?;
                let (proofs, _) = tally.add(&batch, done);
                save(&batch, &proofs, None)?;
                found.extend(proofs);
            }
            touched.extend(todo);
        }
        save(&touched, &found, Some(ranges))?;
        let cache_dir = ctx.project.cache_dir();
        println!(
            "ranges --prove: {} proven, {} not proven, {} proven before; {} trial(s) on {} release(s), {} installed; cache {:.1} GB of {:.1} GB cap; {:.1} s",
            tally.proven,
            tally.failed,
            checked.ranges - checked.unproven.len(),
            tally.trials,
            tally.probed,
            tally.installed,
            cache::used_bytes(&cache_dir) as f64 / 1e9,
            self.cache_cap_gb,
            started.elapsed().as_secs_f64()
        );
        Ok(())
    }

    /// How to prove the ranges of `dialect`: its published releases, its sample and floor.
    fn options(&self, ctx: &Context, dialect: Dialect) -> Result<ProveOptions> {
        let key = dialect.conventions().expect_key();
        let published = match self.versions.is_empty() {
            false => self.versions.clone(),
            true => {
                streamcheck::install::supported::published_on_npm(NpmPin::of(dialect)?.package)?
            }
        };
        let supported = sample(&ctx.project, dialect)?;
        let floor =
            (supported.iter().cloned()).reduce(|a, b| if version_lt(&b, &a) { b } else { a });
        let report_dir =
            (self.report_dir.clone()).unwrap_or_else(|| ctx.default_report_dir("ranges"));
        Ok(ProveOptions {
            probe: ProbeOptions {
                target: key.into(),
                jobs: ctx.jobs(&self.exec),
                run: self.exec.run_options(),
                report_dir: report_dir.join(key),
                cache_cap: Some((self.cache_cap_gb * 1e9) as u64),
            },
            published,
            floor,
            sample: match self.no_sample {
                true => Vec::new(),
                false => supported,
            },
            repeat: self.repeat.into(),
        })
    }
}

/// A range's line as its proof comes out: `what` it was (`proven`, `sampled`) or why not.
fn line(r: &Range, result: &std::result::Result<Proof, NotProven>, what: &str) {
    match result {
        Ok(p) => println!(
            "{}:{}: {}: {what}: {}",
            r.file,
            r.line,
            r.describe(),
            p.found()
        ),
        Err(why) => println!("{}:{}: {}: not {what}: {why}", r.file, r.line, r.describe()),
    }
}

/// What a `--prove` run did, summed over its batches.
#[derive(Default)]
struct Tally {
    proven: usize,
    failed: usize,
    trials: usize,
    installed: usize,
    probed: usize,
}

impl Tally {
    /// Counts a batch's results: the proofs found (with their files), and the ranges that
    /// came out not proven.
    fn add(&mut self, batch: &[Range], done: prove::Proved) -> (Vec<(PathBuf, Proof)>, Vec<Range>) {
        let (mut proofs, mut not) = (Vec::new(), Vec::new());
        for (r, result) in batch.iter().zip(done.results) {
            match result {
                Ok(p) => {
                    self.proven += 1;
                    proofs.push((r.proofs.clone(), p));
                }
                Err(_) => {
                    self.failed += 1;
                    not.push(r.clone());
                }
            }
        }
        self.trials += done.done.trials;
        self.installed += done.done.installed.len();
        self.probed += done.done.probed.len();
        (proofs, not)
    }
}

/// Drops the current proofs of `ranges` from their files: a sampled release inside them
/// does not behave as written, so what the proof says does not hold.
fn forget(ranges: &[Range]) -> Result<()> {
    let usage = |e: &dyn std::fmt::Display| Error::Usage(e.to_string());
    let mut files = proof_files(ranges).map_err(|e| usage(&e))?;
    for r in ranges {
        (files
            .get_mut(&r.proofs)
            .expect("each range's file is loaded"))
        .forget(r);
    }
    for (path, file) in &mut files {
        file.save(path).map_err(|e| usage(&e))?;
    }
    Ok(())
}

/// Puts `proofs` into the proofs files of `proven` and saves each; with `all` (every range
/// of the run), proofs of no range in it are pruned first. The files are read again here,
/// not at the start: another run may have written proofs since.
fn save(proven: &[Range], proofs: &[(PathBuf, Proof)], all: Option<&[Range]>) -> Result<()> {
    let usage = |e: &dyn std::fmt::Display| Error::Usage(e.to_string());
    let mut files = proof_files(proven).map_err(|e| usage(&e))?;
    for (path, proof) in proofs {
        (files.get_mut(path).expect("each range's file is loaded")).put(proof.clone());
    }
    for (path, file) in &mut files {
        if let Some(all) = all {
            file.prune(&all.iter().collect::<Vec<_>>());
        }
        file.save(path).map_err(|e| usage(&e))?;
    }
    Ok(())
}

/// How many times `--prove` proves and writes back at most in one run.
const PROVE_ROUNDS: usize = 3;

/// Writes each range whose proof found other bounds with the bounds found, carries the
/// proofs over the rewrite, and lists the ranges again; with how many proofs the rewrite
/// dropped. Over the `whole` project (no filter, no shard), proofs of no range are dropped.
fn write_back(
    ranges: Vec<Range>,
    list: impl Fn() -> Result<Vec<Range>>,
    whole: bool,
) -> Result<(Vec<Range>, usize)> {
    let usage = |e: &dyn std::fmt::Display| Error::Usage(e.to_string());
    let mut files = proof_files(&ranges).map_err(|e| usage(&e))?;
    let mut edits: Vec<(usize, rewrite::Edit, String)> = Vec::new();
    for (i, r) in ranges.iter().enumerate() {
        let file = &files[&r.proofs];
        let (Err(Unproven::BoundsDiffer(_)), Some(proof)) = (file.status(r), file.current(r))
        else {
            continue;
        };
        let text = std::fs::read_to_string(&r.path).map_err(|e| usage(&e))?;
        match rewrite::edit(r, proof, &text) {
            Ok(edit) => edits.push((i, edit, rewrite::found_range(proof))),
            Err(e) => println!("{e} (not written back)"),
        }
    }
    let mut edited: BTreeMap<usize, _> = (edits.iter())
        .map(|(i, e, _)| (*i, e.subject.clone()))
        .collect();
    // Until no edit left would break a nesting (one refused may leave its partner alone).
    loop {
        let refused = rewrite::breaks_nesting(&ranges, &edited);
        if refused.is_empty() {
            break;
        }
        for (i, why) in refused {
            println!(
                "{}:{}: not written back: {why}",
                ranges[i].file, ranges[i].line
            );
            edited.remove(&i);
        }
    }
    edits.retain(|(i, _, _)| edited.contains_key(i));
    for (i, edit, found) in &edits {
        let r = &ranges[*i];
        println!(
            "{}:{}: {}: written as {found}",
            r.file,
            edit.line,
            r.describe()
        );
    }
    let edits: Vec<rewrite::Edit> = edits.into_iter().map(|(_, e, _)| e).collect();
    rewrite::apply(&edits).map_err(|e| usage(&e))?;
    let known: BTreeSet<&PathBuf> = (ranges.iter())
        .filter(|r| r.subject.is_entry())
        .map(|r| &r.path)
        .collect();
    let mut merged = 0;
    for path in known {
        merged += rewrite::merge_equal_entries(path).map_err(|e| usage(&e))?;
    }
    let orphans = |files: &mut BTreeMap<PathBuf, ProofFile>, all: &[&Range]| -> Result<()> {
        if !whole {
            return Ok(());
        }
        for (path, file) in files {
            let dropped = file.drop_orphans(all);
            if dropped > 0 {
                file.save(path).map_err(|e| usage(&e))?;
                println!("{}: {dropped} proof(s) of no range dropped", path.display());
            }
        }
        Ok(())
    };
    if edits.is_empty() && merged == 0 {
        orphans(&mut files, &ranges.iter().collect::<Vec<_>>())?;
        return Ok((ranges, 0));
    }
    let after = list()?;
    let carried = rewrite::carry(&ranges, &edited, &after, &mut files);
    let all: Vec<&Range> = after.iter().collect();
    for (path, file) in &mut files {
        file.prune(&all);
        file.save(path).map_err(|e| usage(&e))?;
    }
    orphans(&mut files, &all)?;
    println!(
        "ranges: {} range(s) written with the bounds their proofs found, {merged} known entr(y/ies) merged into an equal one; {} proof(s) carried over",
        edits.len(),
        carried.carried
    );
    if carried.dropped > 0 {
        println!(
            "ranges: {} proof(s) dropped: a range of the same scenario was rewritten, so each was judged against blocks that have moved: proven again",
            carried.dropped
        );
    }
    Ok((after, carried.dropped))
}

fn check(ctx: &Context, ranges: &[Range]) -> Result<Verdict> {
    let checked = ranges::check(ranges).map_err(|e| Error::Usage(e.to_string()))?;
    for f in &checked.unproven {
        println!("{}", f.line());
    }
    println!("{}", checked.summary());
    let unsampled = unsampled_of(ctx, ranges)?;
    if !unsampled.is_empty() {
        let trials: BTreeSet<(&ScenarioId, &String)> = (unsampled.iter())
            .flat_map(|u| {
                (u.range.scenarios.iter()).flat_map(|s| u.not_run.iter().map(move |v| (s, v)))
            })
            .collect();
        println!(
            "{} proven range(s) were checked at their bounds only, not on the sampled releases inside them ({} trial(s) of (scenario, release) not run); `ranges --prove --resample` runs them",
            unsampled.len(),
            trials.len()
        );
    }
    Ok(ctx.verdict(Verdict::divergence_if(!checked.unproven.is_empty())))
}

/// The proven ranges whose proofs did not run their dialect's sample inside them.
fn unsampled_of(ctx: &Context, ranges: &[Range]) -> Result<Vec<ranges::Unsampled>> {
    let mut samples = BTreeMap::new();
    for d in ranges.iter().map(|r| r.dialect) {
        if let std::collections::btree_map::Entry::Vacant(e) = samples.entry(d) {
            e.insert(sample(&ctx.project, d)?);
        }
    }
    let sample_of = |d: Dialect| samples.get(&d).cloned().unwrap_or_default();
    ranges::unsampled(ranges, sample_of).map_err(|e| Error::Usage(e.to_string()))
}

/// `dialect`'s supported sample (`versions.yaml`), none when it has no such file; a file
/// that does not load is the error.
fn sample(project: &Project, dialect: Dialect) -> Result<Vec<String>> {
    let data = project.data(dialect)?;
    Ok((data.versions.as_ref()).map_or_else(Vec::new, |v| v.supported.clone()))
}
