//! The binary's side: what a person reads on a terminal and the exit-code policy.
//! One module per command; the trial lines of `run`, `compare`, `audit` and `bisect` come
//! from [`term`], `record`'s from [`review`] (drift still prints its progress from
//! `commands::drift`).
//!
//! Exit codes, for every command: 0 all good, 1 a divergence (a failed trial, a merged
//! run with failures), 2 a usage, scenario-file or setup error ([`Error`]).

pub mod args;
pub mod audit;
pub mod bisect;
pub mod bundle;
pub mod compare;
pub mod consume;
pub mod drift;
pub mod findings;
pub mod init;
pub mod inspect;
pub mod install;
pub mod judge;
pub mod plan;
pub mod protocol;
pub mod provenance;
pub mod ranges;
pub mod record;
pub mod replay_cli;
pub mod review;
pub mod run;
pub mod setup;
pub mod show;
pub mod stub;
pub mod term;

use args::SelectArgs;
use setup::{Location, Setup};
use std::path::PathBuf;
use std::process::ExitCode;
use streamcheck::catalogue;
use streamcheck::error::{Error, Result};
use streamcheck::install::{NotInstalled, Project};
use streamcheck::scenario::{self, Scenario, ScenarioError};
use streamcheck::suite::Selection;

/// How a command ended, before it becomes an exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    AllGood,
    Divergence,
    /// A usage or setup error: scenario files that did not load (each was printed; the
    /// rest ran), a target that is unavailable, a selection with no trial.
    SetupError,
}

impl Verdict {
    pub fn exit_code(self) -> ExitCode {
        ExitCode::from(match self {
            Verdict::AllGood => 0,
            Verdict::Divergence => 1,
            Verdict::SetupError => 2,
        })
    }

    pub fn divergence_if(diverged: bool) -> Verdict {
        if diverged {
            Verdict::Divergence
        } else {
            Verdict::AllGood
        }
    }
}

/// An error's exit code: always 2, whatever the command.
pub fn error_exit(e: &Error) -> ExitCode {
    term::error(e);
    ExitCode::from(2)
}

/// The project and the scenarios a command selected; the files that did not load were
/// printed and make the command's verdict [`Verdict::SetupError`].
pub struct Context {
    pub project: Project,
    pub setup: Setup,
    pub scenarios: Vec<Scenario>,
    pub errors: Vec<ScenarioError>,
    /// `--allow-empty`: a selection with no trial is not an error.
    pub allow_empty: bool,
}

impl Context {
    pub fn load(loc: &Location, select: &SelectArgs) -> Result<Context> {
        let setup = loc.setup()?;
        let selection = Selection {
            filters: select.filters.clone(),
            shard: select.shard,
        };
        // Parse only what the selection takes: a one-scenario run should not pay for the
        // whole catalogue, and a broken file outside it is `check`'s business, not this run's.
        let (mut scenarios, mut errors, mut catalogue) = (Vec::<Scenario>::new(), Vec::new(), 0);
        let roots = setup.scenario_roots();
        for (i, dir) in roots.iter().enumerate() {
            let found = catalogue::discover(dir);
            errors.extend(found.errors);
            let own = i > 0;
            if !own {
                let ids: Vec<String> = (found.paths.iter())
                    .map(|p| scenario::id_of(p, dir).into())
                    .collect();
                setup.check_bundled(&ids)?;
            }
            for path in &found.paths {
                let id = scenario::id_of(path, dir);
                if !own && !setup.takes_bundled(&id) {
                    continue;
                }
                catalogue += 1;
                // A file of `cases:` is read to see which of its cases the selection takes.
                let cases = !selection.takes(&id)
                    && std::fs::read_to_string(path)
                        .is_ok_and(|t| scenario::cases_form::may_have_cases(&t));
                if !selection.takes(&id) && !cases {
                    continue;
                }
                match scenario::cases::load(path, dir) {
                    // The project's own scenario replaces the catalogue's of the same id.
                    Ok(loaded) => {
                        for s in loaded.into_iter().filter(|s| selection.takes(&s.id)) {
                            scenarios.retain(|old| old.id != s.id);
                            scenarios.push(s);
                        }
                    }
                    Err(e) => errors.push(e),
                }
            }
        }
        scenarios.sort_by(|a, b| a.id.cmp(&b.id));
        term::scenario_errors(&errors);
        if scenarios.is_empty() && errors.is_empty() && !select.allow_empty {
            return Err(Error::Usage(nothing_selected(
                &selection, catalogue, &roots,
            )));
        }
        Ok(Context {
            project: setup.project.clone(),
            scenarios,
            errors,
            allow_empty: select.allow_empty,
            setup,
        })
    }

    /// The command's own verdict, made worse by files that did not load.
    pub fn verdict(&self, own: Verdict) -> Verdict {
        if self.errors.is_empty() {
            own
        } else {
            own.max(Verdict::SetupError)
        }
    }

    /// The verdict of a command that ran trials: worse when a target was unavailable or
    /// no trial ran at all (each said in one line).
    pub fn run_verdict(
        &self,
        own: Verdict,
        unavailable: &[NotInstalled],
        trials: usize,
    ) -> Verdict {
        let mut verdict = self.verdict(own);
        for t in unavailable {
            term::error(&Error::Failed(format!("target {t}")));
            verdict = verdict.max(Verdict::SetupError);
        }
        if trials == 0 && !self.allow_empty {
            term::error(&Error::Usage(format!(
                "no trial ran: none of the {} selected scenario(s) has an expectation for the target(s) (--allow-empty if that is meant)",
                self.scenarios.len()
            )));
            verdict = verdict.max(Verdict::SetupError);
        }
        verdict
    }

    pub fn default_report_dir(&self, kind: &str) -> PathBuf {
        self.setup.report_dir(kind)
    }

    /// `--jobs`, else the project file's `jobs`, else the number of CPUs.
    pub fn jobs(&self, exec: &args::ExecArgs) -> usize {
        let configured = self.setup.config.as_ref().and_then(|c| c.jobs);
        exec.jobs.or(configured).unwrap_or_else(|| exec.jobs())
    }
}

/// Why a selection is empty, naming what to change.
fn nothing_selected(selection: &Selection, catalogue: usize, dirs: &[PathBuf]) -> String {
    if catalogue == 0 {
        let dirs: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        return format!(
            "no trial selected: no scenario file under {}",
            dirs.join(", ")
        );
    }
    let mut what = Vec::new();
    if !selection.filters.is_empty() {
        let quoted: Vec<String> = selection.filters.iter().map(|f| format!("`{f}`")).collect();
        what.push(format!("--filter {}", quoted.join(", ")));
    }
    if let Some(shard) = selection.shard {
        what.push(format!("--shard {shard}"));
    }
    format!(
        "no trial selected: {} matches none of the {catalogue} scenarios (--allow-empty if that is meant)",
        what.join(" with ")
    )
}
