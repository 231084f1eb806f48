//! The project: the folder holding `scenarios/` and `targets/`, and the per-user cache
//! where other CLI versions and fixtures are installed; the dialects' data it has read.

use super::data::{DialectData, Loaded};
use super::error::InstallError;
use crate::dialect::Dialect;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The pinned Claude Code lives here (package.json + package-lock.json, `npm ci`); it also
/// marks a project's root.
pub const CLAUDE_CODE_DIR: &str = "targets/claude-code";

/// Where the project keeps targets and caches, and its dialects' data once read.
#[derive(Debug, Clone)]
pub struct Project {
    pub root: PathBuf,
    loaded: Loaded,
}

impl Project {
    /// The project whose root is `root` (the folder holding `scenarios/` and `targets/`).
    pub fn at(root: impl Into<PathBuf>) -> Project {
        Project {
            root: root.into(),
            loaded: Loaded::default(),
        }
    }

    /// `dialect`'s data files, read the first time any clone of this project asks.
    pub fn data(&self, dialect: Dialect) -> Result<Arc<DialectData>, InstallError> {
        self.loaded.get(&self.root, dialect)
    }

    /// The folder holding `scenarios/`, from `start` upwards.
    pub fn discover(start: &Path) -> Option<Project> {
        start
            .ancestors()
            .find(|d| d.join("scenarios").is_dir() && d.join(CLAUDE_CODE_DIR).is_dir())
            .map(Project::at)
    }

    pub fn scenarios_dir(&self) -> PathBuf {
        self.root.join("scenarios")
    }

    /// Where other CLI versions and caliban are installed, shared by every checkout on
    /// the machine: `$STREAMCHECK_CACHE`, else `$XDG_CACHE_HOME/streamcheck`, else
    /// `~/.cache/streamcheck` (`.cache/` in the project when there is no home at all).
    pub fn cache_dir(&self) -> PathBuf {
        let var = |name: &str| std::env::var_os(name).map(PathBuf::from);
        cache_dir_of(var("STREAMCHECK_CACHE"), var("XDG_CACHE_HOME"), var("HOME"))
            .unwrap_or_else(|| self.root.join(".cache"))
    }
}

/// [`Project::cache_dir`] from its environment variables. An empty or relative
/// `XDG_CACHE_HOME` is ignored, as the XDG specification says.
fn cache_dir_of(
    own: Option<PathBuf>,
    xdg: Option<PathBuf>,
    home: Option<PathBuf>,
) -> Option<PathBuf> {
    let set = |p: Option<PathBuf>| p.filter(|p| !p.as_os_str().is_empty());
    set(own)
        .or_else(|| {
            set(xdg)
                .filter(|p| p.is_absolute())
                .map(|p| p.join("streamcheck"))
        })
        .or_else(|| set(home).map(|h| h.join(".cache/streamcheck")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_is_per_user_unless_streamcheck_cache_says_otherwise() {
        let p = |s: &str| Some(PathBuf::from(s));
        assert_eq!(cache_dir_of(p("/c"), p("/x"), p("/h")), p("/c"));
        assert_eq!(cache_dir_of(None, p("/x"), p("/h")), p("/x/streamcheck"));
        assert_eq!(
            cache_dir_of(p(""), p("rel"), p("/h")),
            p("/h/.cache/streamcheck")
        );
        assert_eq!(cache_dir_of(None, None, None), None);
    }
}
