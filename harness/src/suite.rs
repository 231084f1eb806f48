//! A suite: which trials run (filters, shards), on which targets, how many at once.

use crate::divergence::{Divergence, Kind};
use crate::install::{NotInstalled, Target};
use crate::plan::{Decision, Planner, SkipReason, TrialPlan};
use crate::report::{ReportWriter, Results, TargetInfo};
use crate::runner::{self, RunOptions, Status, Trial};
use crate::scenario::Scenario;
use crate::trial_id::{ScenarioId, TargetName};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tokio::sync::{mpsc, Semaphore};

/// Which scenarios a run takes.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Substrings of scenario ids; empty takes all.
    pub filters: Vec<String>,
    /// Run only this shard.
    pub shard: Option<Shard>,
}

impl Selection {
    pub fn takes(&self, id: &str) -> bool {
        let filtered =
            self.filters.is_empty() || self.filters.iter().any(|f| id.contains(f.as_str()));
        let sharded = self.shard.is_none_or(|s| shard_of(id, s.n) == s.k);
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

/// Shard `k` of `n` (1-based), as `--shard K/N` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub k: usize,
    pub n: usize,
}

/// Why `--shard` does not read as `K/N`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--shard `{given}`: {why}")]
pub struct ShardError {
    given: String,
    why: &'static str,
}

impl std::str::FromStr for Shard {
    type Err = ShardError;

    fn from_str(s: &str) -> Result<Self, ShardError> {
        let fail = |why| ShardError {
            given: s.to_string(),
            why,
        };
        let (k, n) = s
            .split_once('/')
            .ok_or_else(|| fail("write K/N, e.g. 1/4"))?;
        let k: usize = k.trim().parse().map_err(|_| fail("K is not a number"))?;
        let n: usize = n.trim().parse().map_err(|_| fail("N is not a number"))?;
        if n == 0 || k == 0 || k > n {
            return Err(fail("need 1 <= K <= N"));
        }
        Ok(Shard { k, n })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.k, self.n)
    }
}

pub fn target_infos(targets: &[Result<Target, NotInstalled>]) -> Vec<TargetInfo> {
    targets
        .iter()
        .map(|t| match t {
            Ok(t) => TargetInfo {
                name: t.name.to_string(),
                version: Some(t.version.clone()),
                unavailable: None,
            },
            Err(e) => TargetInfo {
                name: e.target.to_string(),
                version: None,
                unavailable: Some(e.to_string()),
            },
        })
        .collect()
}

/// Where a suite's trials go as they finish: the report writer, the terminal, a command
/// collecting outputs. The suite knows nothing of what a sink does with them.
pub trait TrialSink {
    /// A planned trial ended, and how. An error stops the run (a report could not be written).
    fn trial(&mut self, trial: Trial, how: Completion) -> std::io::Result<()>;
}

/// How a trial the suite delivers came to an end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completion {
    /// The trial ran and reported its own result.
    Reported,
    /// The trial's task panicked: a failed trial with a harness-error divergence.
    Panicked,
    /// The trial's task ended without reporting: a failed trial with a harness-error divergence.
    NeverReported,
    /// The run was interrupted before the trial finished: skipped.
    Interrupted,
    /// The target could not be resolved: unavailable, never planned.
    TargetUnavailable,
}

/// How a whole run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunEnd {
    /// Every planned trial was delivered.
    Finished,
    /// Ctrl-C or SIGTERM: running trials were stopped, the rest delivered as skipped.
    Interrupted,
}

impl RunEnd {
    pub fn finished(self) -> bool {
        self == RunEnd::Finished
    }
}

impl TrialSink for ReportWriter {
    fn trial(&mut self, trial: Trial, _how: Completion) -> std::io::Result<()> {
        self.record(trial)
    }
}

/// A sink that shows each trial to `look` before passing it on to `inner`.
pub struct Tee<'a, S: TrialSink + ?Sized, F: FnMut(&Trial, Completion)> {
    pub look: F,
    pub inner: &'a mut S,
}

impl<S: TrialSink + ?Sized, F: FnMut(&Trial, Completion)> TrialSink for Tee<'_, S, F> {
    fn trial(&mut self, trial: Trial, how: Completion) -> std::io::Result<()> {
        (self.look)(&trial, how);
        self.inner.trial(trial, how)
    }
}

/// Runs every scenario on every target, `jobs` at a time, delivering each trial to `sink`
/// as it finishes. Stops launching on Ctrl-C; what finished is still delivered. Every
/// planned trial yields a result: a trial whose task panicked is a failed trial with a
/// harness-error divergence, and one that never reported (interrupted, or lost) is
/// delivered as such.
pub async fn run_into(
    scenarios: Vec<Scenario>,
    targets: &[Result<Target, NotInstalled>],
    jobs: usize,
    opts: RunOptions,
    sink: &mut (impl TrialSink + ?Sized),
) -> std::io::Result<RunEnd> {
    let planned = plan_all(&scenarios, targets, &opts);
    run_with(planned, jobs, sink, |plan, t| async move {
        runner::execute_plan(&plan, &t).await
    })
    .await
}

/// `scenario` planned on `target` and run: one trial, as a run makes it.
pub async fn run_one(scenario: &Scenario, target: &Target, opts: &RunOptions) -> Trial {
    let plan = Planner::for_target(target).plan(scenario, target, opts);
    runner::execute_plan(&plan, target).await
}

/// One trial of a run, decided before any trial starts.
pub enum Planned {
    /// On a target that could not be resolved: unavailable, never run.
    Unavailable(Box<Trial>),
    /// On a resolved target.
    Trial {
        plan: Arc<TrialPlan>,
        target: Box<Target>,
    },
}

/// Every trial of `scenarios` on `targets`, decided before any starts. A scenario that is
/// no trial of a target (no expectation for its dialect at the release it is held to,
/// unless `opts` runs such scenarios as written) is left out.
pub fn plan_all(
    scenarios: &[Scenario],
    targets: &[Result<Target, NotInstalled>],
    opts: &RunOptions,
) -> Vec<Planned> {
    let planners: Vec<Result<(&Target, Planner), &NotInstalled>> = (targets.iter())
        .map(|t| t.as_ref().map(|t| (t, Planner::for_target(t))))
        .collect();
    let mut planned = Vec::new();
    for scenario in scenarios {
        for target in &planners {
            let (t, planner) = match target {
                Ok(found) => found,
                Err(e) => {
                    let why = e.to_string();
                    let trial = Trial::unavailable(scenario, &e.target, why);
                    planned.push(Planned::Unavailable(Box::new(trial)));
                    continue;
                }
            };
            let plan = planner.plan(scenario, t, opts);
            if matches!(plan.decision, Decision::Skip(SkipReason::NoExpectation(_))) {
                continue;
            }
            planned.push(Planned::Trial {
                plan: Arc::new(plan),
                target: Box::new((*t).clone()),
            });
        }
    }
    planned
}

/// What a run writes and how it ended: the run-and-report skeleton every command shares.
pub struct Reported {
    pub results: Results,
    pub end: RunEnd,
}

/// Why a run's report folder could not be created or written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write reports to {}: {source}", .dir.display())]
pub struct ReportsError {
    pub dir: PathBuf,
    #[source]
    pub source: std::io::Error,
}

crate::error::seam_error!(ReportsError);

/// Creates the report folder `dir`, runs the suite into it (each trial also shown to
/// `on_trial`), and marks the results complete when the run finished (when it did not,
/// what finished is written all the same).
pub async fn run_and_report(
    dir: &Path,
    scenarios: Vec<Scenario>,
    targets: &[Result<Target, NotInstalled>],
    jobs: usize,
    opts: RunOptions,
    scenario_errors: Vec<String>,
    on_trial: impl FnMut(&Trial, Completion),
) -> Result<Reported, ReportsError> {
    let writer =
        ReportWriter::create(dir, target_infos(targets), scenario_errors).map_err(|source| {
            ReportsError {
                dir: dir.to_path_buf(),
                source,
            }
        })?;
    run_and_report_as(writer, scenarios, targets, jobs, opts, on_trial).await
}

/// [`run_and_report`] into a writer the caller made (with its report options).
pub async fn run_and_report_as(
    mut writer: ReportWriter,
    scenarios: Vec<Scenario>,
    targets: &[Result<Target, NotInstalled>],
    jobs: usize,
    opts: RunOptions,
    on_trial: impl FnMut(&Trial, Completion),
) -> Result<Reported, ReportsError> {
    let dir = writer.dir().to_path_buf();
    let io = |source| ReportsError {
        dir: dir.clone(),
        source,
    };
    let mut sink = Tee {
        look: on_trial,
        inner: &mut writer,
    };
    let end = run_into(scenarios, targets, jobs, opts, &mut sink)
        .await
        .map_err(io)?;
    if end.finished() {
        writer.finish().map_err(io)?;
    } else {
        writer.flush().map_err(io)?;
    }
    Ok(Reported {
        results: writer.into_results(),
        end,
    })
}

/// Runs planned trials, `jobs` at a time, the trial itself supplied by the caller
/// ([`runner::execute_plan`]; tests make it panic or vanish). A trial the plan skips, or on
/// an unavailable target, is delivered at once, without waiting for a place.
pub async fn run_with<F, Fut>(
    planned: Vec<Planned>,
    jobs: usize,
    sink: &mut (impl TrialSink + ?Sized),
    trial_fn: F,
) -> std::io::Result<RunEnd>
where
    F: Fn(Arc<TrialPlan>, Target) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Trial> + Send + 'static,
{
    let (tx, mut rx) = mpsc::unbounded_channel();
    let (running, handles, permits) = launch(planned, jobs, tx, Arc::new(trial_fn));
    let mut end = RunEnd::Finished;
    let mut reported: HashSet<(ScenarioId, TargetName)> = HashSet::new();
    let stop = stop_requested();
    tokio::pin!(stop);
    loop {
        tokio::select! {
            done = rx.recv() => match done {
                Some((trial, how)) => {
                    if how != Completion::TargetUnavailable {
                        reported.insert((trial.key.scenario.clone(), trial.key.target.clone()));
                    }
                    sink.trial(trial, how)?;
                }
                None => break,
            },
            _ = &mut stop, if end == RunEnd::Finished => {
                log::warn!("interrupted: stopping running trials, writing what finished");
                end = RunEnd::Interrupted;
                // Closed first: a trial waiting for a permit must not take the one an
                // aborted trial frees and start its CLI.
                permits.close();
                for h in &handles {
                    h.abort();
                }
            }
        }
    }
    for (trial, how) in unreported(running, &reported, end) {
        sink.trial(trial, how)?;
    }
    Ok(end)
}

/// Resolves when the run is asked to stop: Ctrl-C, or SIGTERM (a CI job cancelled or out of
/// time). Left unhandled, SIGTERM would end the harness at once and orphan every CLI. One
/// listener per process outlives each run, so a signal that comes between two runs (the
/// prover's batches) stops the next run at once instead of being lost.
async fn stop_requested() {
    let notified = STOP.notified();
    tokio::pin!(notified);
    notified.as_mut().enable();
    listen();
    if STOP_ASKED.load(Ordering::SeqCst) {
        return;
    }
    notified.await;
}

/// Set once Ctrl-C or SIGTERM came; every later run of the process stops at once.
static STOP_ASKED: AtomicBool = AtomicBool::new(false);
static STOP: tokio::sync::Notify = tokio::sync::Notify::const_new();
/// Whether a listener task is alive (it dies with its runtime; the next run starts another).
static LISTENING: AtomicBool = AtomicBool::new(false);

fn listen() {
    if LISTENING.swap(true, Ordering::SeqCst) {
        return;
    }
    struct Alive;
    impl Drop for Alive {
        fn drop(&mut self) {
            LISTENING.store(false, Ordering::SeqCst);
        }
    }
    // Made here, not in the task: a task dropped before it first runs still clears the flag.
    let alive = Alive;
    tokio::spawn(async move {
        let _alive = alive;
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = signal(SignalKind::terminate()).ok();
        let terminated = async {
            match term.as_mut() {
                Some(t) => {
                    t.recv().await;
                }
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = terminated => {}
        }
        STOP_ASKED.store(true, Ordering::SeqCst);
        STOP.notify_waiters();
    });
}

type Done = (Trial, Completion);

/// Spawns one task per trial that runs, each waiting for a permit; trials on unavailable
/// targets and trials the plan skips are delivered at once.
fn launch<F, Fut>(
    planned: Vec<Planned>,
    jobs: usize,
    tx: mpsc::UnboundedSender<Done>,
    trial_fn: Arc<F>,
) -> (
    Vec<Running>,
    Vec<tokio::task::JoinHandle<()>>,
    Arc<Semaphore>,
)
where
    F: Fn(Arc<TrialPlan>, Target) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Trial> + Send + 'static,
{
    let permits = Arc::new(Semaphore::new(jobs.max(1)));
    let mut handles = Vec::new();
    let mut running: Vec<Running> = Vec::new();
    for p in planned {
        let (plan, t) = match p {
            Planned::Unavailable(trial) => {
                let _ = tx.send((*trial, Completion::TargetUnavailable));
                continue;
            }
            Planned::Trial { plan, target } => (plan, *target),
        };
        if let Some(skipped) = runner::skipped(&plan, &t) {
            let _ = tx.send((skipped, Completion::Reported));
            continue;
        }
        running.push(Running {
            plan: plan.clone(),
            target: t.clone(),
        });
        let (permits, tx, trial_fn) = (permits.clone(), tx.clone(), trial_fn.clone());
        handles.push(tokio::spawn(async move {
            let Ok(_permit) = permits.acquire_owned().await else {
                return;
            };
            let inner = tokio::spawn(trial_fn(plan.clone(), t.clone()));
            let done = match inner.await {
                Ok(trial) => (trial, Completion::Reported),
                Err(e) if !e.is_panic() => (
                    harness_error(&plan.scenario, &t, &panic_message(e)),
                    Completion::NeverReported,
                ),
                Err(e) => (
                    harness_error(&plan.scenario, &t, &panic_message(e)),
                    Completion::Panicked,
                ),
            };
            let _ = tx.send(done);
        }));
    }
    (running, handles, permits)
}

/// A trial that was given a task.
struct Running {
    plan: Arc<TrialPlan>,
    target: Target,
}

/// A result for every planned trial that never reported one: skipped when the run was
/// interrupted, a harness error otherwise.
fn unreported(
    running: Vec<Running>,
    reported: &HashSet<(ScenarioId, TargetName)>,
    end: RunEnd,
) -> Vec<Done> {
    running
        .into_iter()
        .filter(|p| !reported.contains(&(p.plan.scenario.id.clone(), p.target.name.clone())))
        .map(|p| match end {
            RunEnd::Interrupted => {
                let why = "interrupted before it finished".to_string();
                let t = Trial::skipped(&p.plan.scenario, &p.target.name, &p.target.version, why)
                    .of(&p.target);
                (t, Completion::Interrupted)
            }
            RunEnd::Finished => {
                let why = "the trial never reported a result";
                (
                    harness_error(&p.plan.scenario, &p.target, why),
                    Completion::NeverReported,
                )
            }
        })
        .collect()
}

/// A failed trial for a fault of the harness itself, never of the CLI.
pub fn harness_error(scenario: &Scenario, target: &Target, message: &str) -> Trial {
    let mut t = Trial::skipped(scenario, &target.name, &target.version, String::new()).of(target);
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
    fn a_report_folder_that_cannot_be_made_is_named() {
        let taken = tempfile::NamedTempFile::new().unwrap();
        let dir = taken.path().join("run");
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let run = run_and_report(
            &dir,
            vec![],
            &[],
            1,
            RunOptions::default(),
            vec![],
            |_, _| {},
        );
        let e = rt.block_on(run).err().expect("a folder under a file");
        let message = e.to_string();
        let expected = format!("cannot write reports to {}: ", dir.display());
        assert!(message.starts_with(&expected), "{message}");
        let top: crate::error::Error = e.into();
        assert_eq!(top.to_string(), message, "the command says it as it is");
    }

    #[test]
    fn shards_partition_the_ids() {
        let ids: Vec<String> = (0..200).map(|i| format!("group/scenario-{i}")).collect();
        let mut counts = [0usize; 4];
        for id in &ids {
            let owners: Vec<usize> = (1..=4)
                .filter(|k| {
                    Selection {
                        filters: vec![],
                        shard: Some(Shard { k: *k, n: 4 }),
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
        assert_eq!("2/4".parse(), Ok(Shard { k: 2, n: 4 }));
        assert!("0/4".parse::<Shard>().is_err());
        assert!("5/4".parse::<Shard>().is_err());
        assert_eq!(
            "x".parse::<Shard>().unwrap_err().to_string(),
            "--shard `x`: write K/N, e.g. 1/4"
        );
        assert_eq!(
            "a/4".parse::<Shard>().unwrap_err().to_string(),
            "--shard `a/4`: K is not a number"
        );
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
