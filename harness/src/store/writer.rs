//! Writing a run folder's stored form as trials finish.

use super::error::StoreError;
use super::files::write_atomic;
use super::results::{saved_trial_path, Results, INDEX_FILE, RESULTS_FILE};
use super::saved::SavedTrial;
use crate::runner::Trial;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

/// Appends finished trials to a run folder: each one's line in the index and, when it
/// ran, its saved output.
pub struct RunWriter {
    dir: PathBuf,
    index: std::fs::File,
}

impl RunWriter {
    /// The run folder `dir`, created, with an empty index.
    pub fn create(dir: &Path) -> io::Result<RunWriter> {
        std::fs::create_dir_all(dir)?;
        Ok(RunWriter {
            dir: dir.to_path_buf(),
            index: std::fs::File::create(dir.join(INDEX_FILE))?,
        })
    }

    /// A finished trial: its saved output (when it ran), then its line in the index.
    pub fn append(&mut self, trial: &Trial) -> io::Result<()> {
        if trial.status.did_not_run().is_none() {
            let saved = SavedTrial::of(trial);
            write_atomic(
                &saved_trial_path(&self.dir, trial),
                &serde_json::to_vec(&saved)?,
            )?;
        }
        let mut line = serde_json::to_vec(trial)?;
        line.push(b'\n');
        self.index.write_all(&line)
    }
}

/// `results.json` of a run, written whole.
pub fn write_results(dir: &Path, r: &Results) -> io::Result<()> {
    let json = serde_json::to_string_pretty(r)?;
    write_atomic(&dir.join(RESULTS_FILE), json.as_bytes())
}

/// The index of `trials`, whole (a merged run's; a live run appends it).
pub fn write_index(dir: &Path, trials: &[Trial]) -> io::Result<()> {
    let mut text = Vec::new();
    for t in trials {
        serde_json::to_writer(&mut text, t)?;
        text.push(b'\n');
    }
    std::fs::write(dir.join(INDEX_FILE), text)
}

/// Copies `trial`'s saved output from run folder `from` into run folder `to`, if it has one.
pub fn copy_saved(from: &Path, to: &Path, trial: &Trial) -> Result<(), StoreError> {
    copy_if_exists(&saved_trial_path(from, trial), &saved_trial_path(to, trial))
}

/// Copies `from` to `to` (its folder created) when `from` exists.
pub fn copy_if_exists(from: &Path, to: &Path) -> Result<(), StoreError> {
    if !from.exists() {
        return Ok(());
    }
    if let Some(p) = to.parent() {
        std::fs::create_dir_all(p).map_err(|source| StoreError::MergeWrite {
            path: p.to_path_buf(),
            source,
        })?;
    }
    std::fs::copy(from, to).map_err(|e| StoreError::io(from, e))?;
    Ok(())
}
