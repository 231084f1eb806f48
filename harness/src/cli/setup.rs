//! Where a command works: the project data (this checkout, `--root`, or the catalogue
//! bundled in the binary), the project file (`streamcheck.toml`), and the folder reports
//! go to (the project file's folder, else the data's, else the current folder).

use std::path::{Path, PathBuf};
use streamcheck::config::{Config, ConfigError};
use streamcheck::error::{Error, Result};
use streamcheck::file_error::FileError;
use streamcheck::install::Project;
use streamcheck::recording::PendingPlace;

/// What the command line says about where to look (`--root`, `--config`).
#[derive(Debug, Clone, Default)]
pub struct Location {
    pub root: Option<PathBuf>,
    pub config: Option<PathBuf>,
}

pub struct Setup {
    pub project: Project,
    pub config: Option<Config>,
    /// Where reports go by default (`<home>/reports/`).
    pub home: PathBuf,
    /// The catalogue is the one the binary bundles (no streamcheck checkout here).
    pub bundled: bool,
}

impl Location {
    /// `--config`, `$STREAMCHECK_CONFIG`, else `streamcheck.toml` from here upwards.
    fn config_path(&self, cwd: &Path) -> Option<PathBuf> {
        let env = std::env::var_os("STREAMCHECK_CONFIG").filter(|v| !v.is_empty());
        (self.config.clone())
            .or(env.map(PathBuf::from))
            .or_else(|| Config::find(cwd))
    }

    pub fn setup(&self) -> Result<Setup> {
        let cwd = std::env::current_dir().map_err(|e| Error::io(".", e))?;
        let config = match self.config_path(&cwd) {
            Some(path) => Some(Config::load(&path)?),
            None => None,
        };
        let checkout = match &self.root {
            // Absolute, since trials run in their own working directories.
            Some(root) => Some(Project::at(
                root.canonicalize().map_err(|e| Error::io(root, e))?,
            )),
            None => Project::discover(&cwd),
        };
        let home = match (&config, &checkout) {
            (Some(c), _) => c.dir.clone(),
            (None, Some(checkout)) => checkout.root.clone(),
            (None, None) => cwd.clone(),
        };
        let bundled = checkout.is_none();
        let project = match checkout {
            Some(checkout) => checkout,
            None => super::bundle::project(&cwd)?,
        };
        let home = home.canonicalize().unwrap_or(home);
        Ok(Setup {
            project,
            config,
            home,
            bundled,
        })
    }
}

impl Setup {
    /// The scenario folders, first the project's catalogue, then the project file's own.
    pub fn scenario_roots(&self) -> Vec<PathBuf> {
        let mut roots = vec![self.project.scenarios_dir()];
        if let Some(c) = &self.config {
            roots.extend(c.scenarios.folders.iter().map(|f| c.resolve(f)));
        }
        roots
    }

    /// Whether the catalogue's scenario `id` is taken (the project file may take topics and
    /// exclude some).
    pub fn takes_bundled(&self, id: &str) -> bool {
        self.config.as_ref().is_none_or(|c| c.scenarios.takes(id))
    }

    /// The project file's `bundled` topics and scenarios each name some of the catalogue's
    /// scenario `ids`.
    pub fn check_bundled(&self, ids: &[String]) -> Result<()> {
        let Some(c) = &self.config else {
            return Ok(());
        };
        let in_file = |source| ConfigError::InFile(FileError::new(c.path.clone(), source));
        c.scenarios.check(ids).map_err(in_file)?;
        Ok(())
    }

    /// `<home>/<report_dir or reports>/<kind>/<timestamp>`, made here (`<timestamp>-2`, ...
    /// when another run of the same second has it).
    pub fn report_dir(&self, kind: &str) -> PathBuf {
        fresh_dir(&self.reports_root().join(kind), &super::provenance::stamp())
    }

    /// Where report folders go: the project file's `report_dir`, else `reports/`.
    pub fn reports_root(&self) -> PathBuf {
        (self.config.as_ref())
            .and_then(|c| c.report_dir.as_ref().map(|d| c.resolve(d)))
            .unwrap_or_else(|| self.home.join("reports"))
    }

    /// Pending recordings go to `<reports>/pending/`, beside the project's reports (never
    /// into the cache); with the bundled catalogue, accepting one writes the project's own
    /// copy into its first scenario folder (`<home>/scenarios` when it names none).
    pub fn pending_place(&self) -> PendingPlace {
        let own = (self.config.as_ref())
            .and_then(|c| c.scenarios.folders.first().map(|f| c.resolve(f)))
            .unwrap_or_else(|| self.home.join("scenarios"));
        PendingPlace {
            dir: self.reports_root().join("pending"),
            own_copies: self.bundled.then_some(own),
        }
    }
}

/// `parent/name`, or `parent/name-2`, `-3`, ... when it exists: made with one `create_dir`
/// each, so two runs started in the same second never share a report folder. A folder
/// that cannot be made is returned as it is, for the writer to report.
fn fresh_dir(parent: &Path, name: &str) -> PathBuf {
    let _ = std::fs::create_dir_all(parent);
    let mut n = 1;
    loop {
        let dir = match n {
            1 => parent.join(name),
            n => parent.join(format!("{name}-{n}")),
        };
        match std::fs::create_dir(&dir) {
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => n += 1,
            _ => return dir,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fresh_dir;

    #[test]
    fn runs_of_the_same_second_get_folders_of_their_own() {
        let reports = tempfile::tempdir().unwrap();
        let parent = reports.path().join("runs");
        let first = fresh_dir(&parent, "2026-11-26T185532Z");
        let second = fresh_dir(&parent, "2026-11-26T185532Z");
        let third = fresh_dir(&parent, "2026-11-26T185532Z");
        assert_eq!(first, parent.join("2026-11-26T185532Z"));
        assert_eq!(second, parent.join("2026-11-26T185532Z-2"));
        assert_eq!(third, parent.join("2026-11-26T185532Z-3"));
        assert!(first.is_dir() && second.is_dir() && third.is_dir());
    }
}
