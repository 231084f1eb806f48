//! The binary's side: what a person reads on a terminal and the exit-code policy.
//! One module per command; every line printed while trials run comes from [`term`].
//!
//! Exit codes, for every command: 0 all good, 1 a divergence (a failed trial, a merged
//! run with failures), 2 a usage, scenario-file or setup error ([`Error`]).

pub mod args;
pub mod audit;
pub mod bisect;
pub mod compare;
pub mod drift;
pub mod inspect;
pub mod install;
pub mod record;
pub mod review;
pub mod run;
pub mod stub;
pub mod term;

use args::SelectArgs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use streamcheck::error::{Error, Result};
use streamcheck::scenario::{self, Scenario, ScenarioError};
use streamcheck::suite::Selection;
use streamcheck::target::{NotInstalled, Project};

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

/// The project folder: `--root`, else found from the current folder upwards.
pub fn project(root: Option<&Path>) -> Result<Project> {
    match root {
        // Absolute, since trials run in their own working directories.
        Some(root) => Ok(Project {
            root: root.canonicalize().map_err(|e| Error::io(root, e))?,
        }),
        None => {
            let cwd = std::env::current_dir().map_err(|e| Error::io(".", e))?;
            Project::discover(&cwd).ok_or_else(|| {
                Error::Usage("no streamcheck project here (a folder with scenarios/ and targets/claude-code/): run from the repository or pass --root".into())
            })
        }
    }
}

/// The project and the scenarios a command selected; the files that did not load were
/// printed and make the command's verdict [`Verdict::SetupError`].
pub struct Context {
    pub project: Project,
    pub scenarios: Vec<Scenario>,
    pub errors: Vec<ScenarioError>,
    /// `--allow-empty`: a selection with no trial is not an error.
    pub allow_empty: bool,
}

impl Context {
    pub fn load(root: Option<&Path>, select: &SelectArgs) -> Result<Context> {
        let project = project(root)?;
        let selection = Selection {
            filters: select.filters.clone(),
            shard: select.shard,
        };
        // Parse only what the selection takes: a one-scenario run should not pay for the
        // whole catalogue, and a broken file outside it is `check`'s business, not this run's.
        let dir = project.scenarios_dir();
        let found = scenario::discover(&dir);
        let (mut scenarios, mut errors) = (Vec::new(), found.errors);
        for path in (found.paths.iter()).filter(|p| selection.takes(&scenario::id_of(p, &dir))) {
            match Scenario::load(path, &dir) {
                Ok(s) => scenarios.push(s),
                Err(e) => errors.push(e),
            }
        }
        term::scenario_errors(&errors);
        if scenarios.is_empty() && errors.is_empty() && !select.allow_empty {
            return Err(Error::Usage(nothing_selected(
                &selection,
                found.paths.len(),
                &dir,
            )));
        }
        Ok(Context {
            project,
            scenarios,
            errors,
            allow_empty: select.allow_empty,
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
        self.project.root.join("reports").join(kind).join(stamp())
    }
}

/// Why a selection is empty, naming what to change.
fn nothing_selected(selection: &Selection, catalogue: usize, dir: &Path) -> String {
    if catalogue == 0 {
        return format!(
            "no trial selected: no scenario file under {}",
            dir.display()
        );
    }
    let mut what = Vec::new();
    if !selection.filters.is_empty() {
        let quoted: Vec<String> = selection.filters.iter().map(|f| format!("`{f}`")).collect();
        what.push(format!("--filter {}", quoted.join(", ")));
    }
    if let Some((k, n)) = selection.shard {
        what.push(format!("--shard {k}/{n}"));
    }
    format!(
        "no trial selected: {} matches none of the {catalogue} scenarios (--allow-empty if that is meant)",
        what.join(" with ")
    )
}

/// A folder name for now: the report timestamp without colons.
pub fn stamp() -> String {
    streamcheck::report::timestamp(std::time::SystemTime::now()).replace(':', "")
}

/// The command line that made a report, as a person would type it again.
pub fn command_line() -> String {
    std::env::args()
        .enumerate()
        .map(|(i, a)| {
            if i == 0 {
                "streamcheck".into()
            } else {
                streamcheck::target::shell_quote(&a)
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
