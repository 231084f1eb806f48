//! The catalogue: every scenario file under `scenarios/`, found and loaded.

use crate::scenario::{Scenario, ScenarioError};
use std::path::{Path, PathBuf};

/// Every `*.yaml` file under `root`, sorted, skipping folders that start with `_` or `.`.
pub fn discover(root: &Path) -> std::io::Result<Vec<PathBuf>> {
    let hidden = |e: &walkdir::DirEntry| {
        let name = e.file_name().to_string_lossy();
        e.depth() > 0 && (name.starts_with('.') || name.starts_with('_'))
    };
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(root)
        .into_iter()
        .filter_entry(|e| !hidden(e))
    {
        let entry = entry.map_err(std::io::Error::other)?;
        let path = entry.path();
        if entry.file_type().is_file()
            && path.extension().is_some_and(|e| e == "yaml" || e == "yml")
        {
            out.push(path.to_path_buf());
        }
    }
    out.sort();
    Ok(out)
}

/// Loads every scenario under `root`; broken files come back as errors, the rest load.
pub fn load_all(root: &Path) -> (Vec<Scenario>, Vec<ScenarioError>) {
    let paths = match discover(root) {
        Ok(p) => p,
        Err(e) => {
            return (
                vec![],
                vec![ScenarioError {
                    path: root.to_path_buf(),
                    line: None,
                    column: None,
                    message: format!("cannot list scenarios: {e}"),
                }],
            )
        }
    };
    let mut ok = Vec::new();
    let mut errors = Vec::new();
    for p in paths {
        match Scenario::load(&p, root) {
            Ok(s) => ok.push(s),
            Err(e) => errors.push(e),
        }
    }
    (ok, errors)
}
