//! The catalogue and target data inside the binary (staged by `build.rs`), unpacked into
//! the cache on first use, keyed by the binary's version and the data's content: what an
//! installed `streamcheck` uses outside a streamcheck checkout.

use std::path::{Path, PathBuf};
use streamcheck::error::{Error, Result};
use streamcheck::install::Project;

static BUNDLE: include_dir::Dir<'static> = include_dir::include_dir!("$OUT_DIR/bundle");

/// The bundled project, unpacked under the cache (`$STREAMCHECK_CACHE`, ...).
pub fn project(cwd: &Path) -> Result<Project> {
    let cache = Project::at(cwd).cache_dir();
    let dir = cache.join(format!(
        "bundle-{}-{}",
        env!("CARGO_PKG_VERSION"),
        env!("STREAMCHECK_BUNDLE_HASH")
    ));
    unpack(&dir)?;
    Ok(Project::at(dir))
}

/// Writes the bundle to `dir` once: into a fresh folder, renamed into place when complete.
fn unpack(dir: &Path) -> Result<()> {
    let done = dir.join(".streamcheck-unpacked");
    if done.is_file() {
        return Ok(());
    }
    let tmp = PathBuf::from(format!("{}.tmp-{}", dir.display(), std::process::id()));
    let io = |e| Error::io(&tmp, e);
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(io)?;
    BUNDLE.extract(&tmp).map_err(io)?;
    std::fs::write(tmp.join(".streamcheck-unpacked"), "").map_err(io)?;
    if std::fs::rename(&tmp, dir).is_err() {
        // Another process unpacked it first: its copy is the same.
        let _ = std::fs::remove_dir_all(&tmp);
        if !done.is_file() {
            return Err(Error::Failed(format!(
                "{} exists but is not a complete unpacked catalogue: remove it",
                dir.display()
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_bundle_holds_the_catalogue_and_the_pins() {
        for path in [
            "scenarios/basics",
            "targets/claude-code/package-lock.json",
            "targets/claude-code/versions.yaml",
            "fixtures/mcp-server/server.mjs",
        ] {
            assert!(super::BUNDLE.get_entry(path).is_some(), "{path}");
        }
        fn has_node_modules(dir: &include_dir::Dir) -> bool {
            dir.dirs()
                .any(|d| d.path().ends_with("node_modules") || has_node_modules(d))
        }
        let has_node_modules = has_node_modules(&super::BUNDLE);
        assert!(!has_node_modules);
    }
}
