//! Installing releases and running scenarios on them, for every search of one command
//! (`bisect`, `ranges --prove`): each release is installed at most once per run and
//! shared by every search that probes it; with a cache cap, the least recently used
//! releases are evicted as new ones come in.

use super::error::ProbeError;
use crate::divergence::{Divergence, Kind};
use crate::error::Result;
use crate::install::supported::{self, Versions};
use crate::install::{self, Project, Source, Target, TargetSpec};
use crate::known::{KnownList, Ran};
use crate::plan::Planner;
use crate::runner::{check, LetThrough, RunOptions, Status, Trial};
use crate::scenario::Scenario;
use crate::suite;
use crate::trial_id::TargetName;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// How probes run: on which target, how many at once, where their reports go.
#[derive(Debug, Clone)]
pub struct ProbeOptions {
    /// The target without a version (`claude-code`).
    pub target: TargetName,
    pub jobs: usize,
    pub run: RunOptions,
    /// Each probe's run report goes to `runs/<version>/` under it.
    pub report_dir: PathBuf,
    /// Keep the release cache under this many bytes (least recently used evicted first).
    pub cache_cap: Option<u64>,
}

/// A version that could not be installed, and why.
#[derive(Debug, Clone, Serialize)]
pub struct InstallFailure {
    pub version: String,
    pub why: String,
}

/// What a prober did: the releases it ran, installed, and could not install.
#[derive(Debug, Clone, Default)]
pub struct Probed {
    /// Every release run, in the order first probed.
    pub probed: Vec<String>,
    /// The probed releases that were not in the cache yet.
    pub installed: Vec<String>,
    pub install_failures: Vec<InstallFailure>,
    /// Releases removed from the cache to keep it under its cap.
    pub evicted: Vec<String>,
    /// How many trials ran.
    pub trials: usize,
}

/// One trial per scenario asked for, in order, or why the release could not be installed.
pub type Trials = std::result::Result<Vec<std::result::Result<Trial, String>>, String>;

/// Installs and runs releases, keeping account of what it installed.
pub struct Prober<'a> {
    project: &'a Project,
    opts: &'a ProbeOptions,
    scenarios: &'a [Scenario],
    targets: BTreeMap<String, std::result::Result<Target, ProbeError>>,
    /// How many times each version ran (each run has its own report folder).
    runs: BTreeMap<String, usize>,
    /// The releases the run being prepared uses: never evicted.
    in_use: Vec<PathBuf>,
    pub done: Probed,
}

impl<'a> Prober<'a> {
    pub fn new(project: &'a Project, opts: &'a ProbeOptions, scenarios: &'a [Scenario]) -> Self {
        Prober {
            project,
            opts,
            scenarios,
            targets: BTreeMap::new(),
            runs: BTreeMap::new(),
            in_use: Vec::new(),
            done: Probed::default(),
        }
    }

    pub fn scenario(&self, id: &str) -> &'a Scenario {
        let scenarios = self.scenarios;
        scenarios
            .iter()
            .find(|s| s.id == id)
            .expect("probes are asked for the prober's scenarios")
    }

    /// Runs the scenarios `ids` on `version` (expectations resolved for `expect_for`, else
    /// its own): one trial per id, in order, or why the version could not be installed.
    pub async fn run(
        &mut self,
        version: &str,
        ids: &[&str],
        expect_for: Option<&str>,
    ) -> Result<Trials> {
        let mut one = self.run_on(&[version.to_string()], ids, expect_for).await?;
        Ok(one.pop().expect("one result per version"))
    }

    /// [`Prober::run`] on each of `versions` in one run, so that `jobs` trials of different
    /// releases run at once: per version, in order.
    pub async fn run_on(
        &mut self,
        versions: &[String],
        ids: &[&str],
        expect_for: Option<&str>,
    ) -> Result<Vec<Trials>> {
        let mut installed = Vec::new();
        let mut results: Vec<Option<Trials>> = Vec::new();
        self.in_use = versions.iter().map(|v| self.cached(v)).collect();
        for version in versions {
            match self.target(version) {
                Ok(t) => {
                    installed.push((t.name.clone(), version.clone(), t));
                    results.push(None);
                }
                Err(why) => results.push(Some(Err(why.to_string()))),
            }
        }
        if !installed.is_empty() {
            let selected: Vec<Scenario> = ids.iter().map(|id| self.scenario(id).clone()).collect();
            // A probe asks where one scenario's behaviour changed, not whether the release
            // prints new frames everywhere: the printing release's let-through rules apply too.
            let opts = RunOptions {
                expect_for: expect_for.map(str::to_string),
                let_through: LetThrough::AlsoPrinting,
                // Where a scenario's behaviour changed, not what the release prints anew.
                protocol: crate::protocol::Policy::Off,
                ..self.opts.run.clone()
            };
            let name = match versions {
                [one] => one.clone(),
                [first, .., last] => format!("{first}..{last}"),
                [] => unreachable!("installed is not empty"),
            };
            let times = self.runs.entry(name.clone()).or_default();
            *times += 1;
            let dir = match *times {
                1 => self.opts.report_dir.join("runs").join(&name),
                n => self
                    .opts
                    .report_dir
                    .join("runs")
                    .join(format!("{name}.{n}")),
            };
            let targets: Vec<_> = installed.iter().map(|(_, _, t)| Ok(t.clone())).collect();
            let mut trials = Vec::new();
            let reported = suite::run_and_report(
                &dir,
                selected,
                &targets,
                self.opts.jobs,
                opts,
                Vec::new(),
                |t, _| trials.push(t.clone()),
            )
            .await?;
            // Ctrl-C or SIGTERM ended the run: the whole search stops, not just this run.
            if !reported.end.finished() {
                return Err(crate::error::Error::Failed(format!(
                    "interrupted: the search stops (the trials that finished are in {})",
                    dir.display()
                )));
            }
            self.done.trials += trials.len();
            for (slot, version) in results.iter_mut().zip(versions) {
                if slot.is_some() {
                    continue;
                }
                let name = &installed
                    .iter()
                    .find(|(_, v, _)| v == version)
                    .expect("installed")
                    .0;
                *slot = Some(Ok(ids
                    .iter()
                    .map(|id| {
                        trials
                            .iter()
                            .find(|t| t.key.scenario == *id && t.key.target == *name)
                            .cloned()
                            .ok_or_else(|| format!("{id} did not report a trial on {version}"))
                    })
                    .collect()));
            }
        }
        Ok(results
            .into_iter()
            .map(|r| r.expect("every version has a result"))
            .collect())
    }

    /// The target at `version`, installed on first use (once per run, even if it fails).
    fn target(&mut self, version: &str) -> std::result::Result<Target, ProbeError> {
        let cached = self.cached(version);
        if let Some(known) = self.targets.get(version) {
            // Evicted since (the cap is below what this run needs at once): install again.
            if known.is_ok() && self.opts.cache_cap.is_some() && !cached.exists() {
                self.targets.remove(version);
            } else {
                let _ = install::cache::touch(&cached);
                return known.clone();
            }
        }
        if !self.done.probed.iter().any(|v| v == version) {
            self.done.probed.push(version.to_string());
        }
        let resolved = self.install(version);
        if let Err(why) = &resolved {
            self.done.install_failures.push(InstallFailure {
                version: version.to_string(),
                why: why.to_string(),
            });
        }
        let _ = install::cache::touch(&cached);
        self.targets.insert(version.to_string(), resolved.clone());
        if let Some(cap) = self.opts.cache_cap {
            let cache = self.project.cache_dir();
            self.in_use.push(cached);
            let removed = (install::cache::keep_under(&cache, cap, &self.in_use)).map_err(|e| {
                ProbeError::CacheCap {
                    cache: cache.clone(),
                    source: e.into(),
                }
            })?;
            for dir in removed {
                let name = dir.file_name().map(|n| n.to_string_lossy().into_owned());
                if let Some(v) = name
                    .as_deref()
                    .and_then(|n| n.rsplit_once('@'))
                    .map(|(_, v)| v)
                {
                    self.done.evicted.push(v.to_string());
                }
            }
        }
        resolved
    }

    fn cached(&self, version: &str) -> PathBuf {
        let base = &self.opts.target;
        self.project.cache_dir().join(format!("{base}@{version}"))
    }

    fn install(&mut self, version: &str) -> std::result::Result<Target, ProbeError> {
        let base = &self.opts.target;
        let spec = match Versions::load(self.project, base) {
            Ok(v) => supported::pinned_or_versioned(base, version, &v.pinned),
            Err(_) => TargetSpec::parse(&format!("{base}@{version}")),
        }?;
        if matches!(spec.source, Source::Npm { .. } | Source::Cargo { .. })
            && !self.cached(version).exists()
        {
            self.done.installed.push(version.to_string());
        }
        install::resolve(&spec, self.project, true).map_err(ProbeError::NotInstalled)
    }
}

/// A trial's first divergence, or its status as one when it has none to show; `None`
/// when it passed.
pub fn first_divergence(trial: &Trial) -> Option<Divergence> {
    match (&trial.status, trial.divergences.first()) {
        (Status::Passed, _) => None,
        (_, Some(d)) => Some(d.clone()),
        (status, None) => Some(Divergence::new(Kind::HarnessError, format!("{status:?}"))),
    }
}

/// The first divergence of `trial` from the expectation `held_to` gets (`None`: it
/// matches it), checked on the saved output without running anything.
pub fn against(
    trial: &Trial,
    scenario: &Scenario,
    held_to: &str,
    planner: &Planner,
) -> Option<Divergence> {
    against_seeing_through(trial, scenario, held_to, planner, None).first
}

/// What the trial's run showed of the workspace files `held_to`'s expectation pins: the
/// files went with the sandbox, so only when they are the ones the run was checked against
/// (its own expectation's) do its workspace divergences stand; other files cannot be judged.
fn workspace_files(
    trial: &Trial,
    scenario: &Scenario,
    held_to: &str,
    planner: &Planner,
) -> Result<Vec<Divergence>, ProbeError> {
    let files = |release: &str| {
        check::replanned_with_files(planner, scenario, trial, release)
            .map(|r| r.expect.files)
            .map_err(ProbeError::Replanned)
    };
    let wanted = files(held_to)?;
    if wanted.is_empty() {
        return Ok(Vec::new());
    }
    let own = trial
        .key
        .held_to
        .as_deref()
        .unwrap_or(&trial.key.target_version);
    // Compiled patterns have no equality: compared as they print.
    if format!("{:?}", files(own)?) != format!("{wanted:?}") {
        return Err(ProbeError::OtherWorkspaceFiles {
            held_to: held_to.to_string(),
            own: own.to_string(),
        });
    }
    Ok((trial.divergences.iter())
        .filter(|d| d.kind == Kind::Workspace)
        .map(|d| Divergence {
            known: None,
            ..d.clone()
        })
        .collect())
}

/// How a trial compares with an expectation, seeing through known entries.
#[derive(Debug, Clone)]
pub struct Judged {
    /// Its first divergence no entry names (`None`: it behaves as the expectation says).
    pub first: Option<Divergence>,
    /// Whether an entry named one of its divergences.
    pub through_known: bool,
}

/// [`against`], except that a divergence one of `known`'s entries names for the trial's
/// release (within the entry's range) does not count: which expectation a release gets
/// is judged apart from the known bugs it shows.
pub fn against_seeing_through(
    trial: &Trial,
    scenario: &Scenario,
    held_to: &str,
    planner: &Planner,
    known: Option<&KnownList>,
) -> Judged {
    let judged = |first| Judged {
        first,
        through_known: false,
    };
    let replanned = check::replanned(planner, scenario, trial, held_to);
    // Held to a skip, a release behaves as written when its output confirms the skip's reason.
    if let Ok(Some(skip)) = replanned.as_ref().map(|run| run.expect.skip.as_ref()) {
        return judged(
            crate::runner::skip::confirm(&skip.reason, trial)
                .err()
                .map(|shown| {
                    Divergence::new(
                        Kind::SkipNoLongerHolds,
                        format!(
                            "{held_to}'s expectation skips it for \"{}\", but {shown}",
                            skip.because
                        ),
                    )
                }),
        );
    }
    let mut found = match replanned.map(|run| check::run(&run, trial)) {
        Ok(found) => found,
        Err(e) => {
            return judged(Some(Divergence::new(
                Kind::HarnessError,
                format!("cannot check it against {held_to}'s expectation: {e}"),
            )))
        }
    };
    match workspace_files(trial, scenario, held_to, planner) {
        Ok(shown) => found.extend(shown),
        Err(why) => return judged(Some(Divergence::new(Kind::HarnessError, why.to_string()))),
    }
    if let Some(known) = known {
        let printed: Vec<&serde_json::Value> =
            trial.output.frames.iter().map(|f| &f.value).collect();
        let ran = Ran {
            name: &trial.key.target,
            dialect: trial
                .key
                .dialect
                .map_or("", |d| d.conventions().expect_key()),
            version: &trial.key.target_version,
            printed: &printed,
        };
        known.judge(&trial.key.scenario, &ran, &mut found);
    }
    Judged {
        through_known: found.iter().any(|d| d.known.is_some()),
        first: found.into_iter().find(|d| d.known.is_none()),
    }
}
