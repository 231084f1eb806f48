//! The catalogue: every scenario file under `scenarios/`, found and loaded.

use crate::scenario::{Scenario, ScenarioError, ScenarioErrorKind};
use crate::trial_id::ScenarioId;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// What a walk of the scenarios folder found: the files, and the places it could not read.
#[derive(Debug, Default)]
pub struct Found {
    pub paths: Vec<PathBuf>,
    pub errors: Vec<ScenarioError>,
}

/// Every `*.yaml` file under `root`, sorted, skipping folders that start with `_` or `.`.
/// Symlinked folders and files are followed (a loop is an error); a folder that cannot be
/// read is an error naming it, and the walk goes on.
pub fn discover(root: &Path) -> Found {
    let hidden = |e: &walkdir::DirEntry| {
        let name = e.file_name().to_string_lossy();
        e.depth() > 0 && (name.starts_with('.') || name.starts_with('_'))
    };
    let mut found = Found::default();
    if let Err(e) = std::fs::read_dir(root) {
        found.errors.push(ScenarioError::new(
            root,
            None,
            None,
            ScenarioErrorKind::FolderUnreadable(e),
        ));
        return found;
    }
    let walk = walkdir::WalkDir::new(root).follow_links(true);
    for entry in walk.into_iter().filter_entry(|e| !hidden(e)) {
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) => {
                let path = e.path().unwrap_or(root).to_path_buf();
                found.errors.push(ScenarioError::new(
                    &path,
                    None,
                    None,
                    ScenarioErrorKind::FolderWalk(e),
                ));
                continue;
            }
        };
        let path = entry.path();
        if entry.file_type().is_file()
            && path.extension().is_some_and(|e| e == "yaml" || e == "yml")
        {
            found.paths.push(path.to_path_buf());
        }
    }
    found.paths.sort();
    found
}

/// The scenario ids under `roots` that `named` may ask about: every file's id, and the
/// cases (`file[case]`) of each file a `named` id points into (only those are parsed). A
/// case file that does not load holds no case here; `check` reports the file itself.
pub fn ids<'a>(roots: &[PathBuf], named: impl IntoIterator<Item = &'a str>) -> HashSet<ScenarioId> {
    let files: Vec<(ScenarioId, PathBuf, &PathBuf)> = (roots.iter())
        .flat_map(|root| {
            (discover(root).paths.into_iter())
                .map(move |p| (crate::scenario::id_of(&p, root), p, root))
        })
        .collect();
    let into: HashSet<&str> = (named.into_iter())
        .filter_map(|id| match ScenarioId::parts(id) {
            (file, Some(_)) => Some(file),
            _ => None,
        })
        .collect();
    let mut ids: HashSet<ScenarioId> = files.iter().map(|(id, ..)| id.clone()).collect();
    for (_, path, root) in files.iter().filter(|(id, ..)| into.contains(id.as_str())) {
        let cases = crate::scenario::cases::load(path, root).unwrap_or_default();
        ids.extend(cases.into_iter().map(|s| s.id));
    }
    ids
}

/// Loads every scenario under `root` (each case of a file with `cases:`); broken files and
/// unreadable folders come back as errors, the rest load.
pub fn load_all(root: &Path) -> (Vec<Scenario>, Vec<ScenarioError>) {
    let Found { paths, mut errors } = discover(root);
    let mut ok = Vec::new();
    for p in paths {
        match crate::scenario::cases::load(&p, root) {
            Ok(s) => ok.extend(s),
            Err(e) => errors.push(e),
        }
    }
    (ok, errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCENARIO: &str = "description: d\nprompt: p\nexpect: {claude-code: {frames: []}}\n";

    #[cfg(unix)]
    #[test]
    fn symlinked_folders_are_followed_and_loops_reported() {
        let dir = tempfile::tempdir().unwrap();
        let (root, mine) = (dir.path().join("scenarios"), dir.path().join("mine"));
        std::fs::create_dir_all(root.join("basics")).unwrap();
        std::fs::create_dir_all(&mine).unwrap();
        std::fs::write(root.join("basics/a.yaml"), SCENARIO).unwrap();
        std::fs::write(mine.join("b.yaml"), SCENARIO).unwrap();
        std::os::unix::fs::symlink("../mine", root.join("mine")).unwrap();
        let (ok, errors) = load_all(&root);
        let ids: Vec<&str> = ok.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["basics/a", "mine/b"]);
        assert!(errors.is_empty(), "{errors:?}");

        std::os::unix::fs::symlink("..", mine.join("loop")).unwrap();
        let found = discover(&root);
        assert!(
            found
                .errors
                .iter()
                .any(|e| e.to_string().contains("cannot read")),
            "{:?}",
            found.errors
        );
    }

    #[test]
    fn a_missing_scenarios_folder_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let found = discover(&dir.path().join("nope"));
        assert_eq!(found.errors.len(), 1);
        assert!(found.errors[0].to_string().contains("nope"));
    }
}
