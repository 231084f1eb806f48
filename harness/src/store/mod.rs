//! A run folder as stored: `results.json` (every trial with its status and divergences,
//! [`Results`]), `results.jsonl` (the same trials, a line each, appended as they finish)
//! and `outputs/<stem>.json` (what each trial printed, [`SavedTrial`]). Written by
//! `report::ReportWriter`; read back by [`RunReader`], the one way commands read a run.

mod error;
pub mod results;
pub mod saved;

pub use error::StoreError;
pub use results::{Counts, Results, TargetInfo};
pub use saved::SavedTrial;

use crate::runner::Trial;
use std::path::{Path, PathBuf};

/// `results.jsonl` of `trials`, whole (a merged run's; a live run appends it).
pub fn write_index(dir: &Path, trials: &[Trial]) -> std::io::Result<()> {
    let mut text = Vec::new();
    for t in trials {
        serde_json::to_writer(&mut text, t)?;
        text.push(b'\n');
    }
    std::fs::write(dir.join(INDEX_FILE), text)
}

/// The run's index: a trial per line, appended as each finishes, so a run cut short
/// still lists every trial that finished.
pub const INDEX_FILE: &str = "results.jsonl";

/// A finished run folder, opened for reading.
pub struct RunReader {
    dir: PathBuf,
}

impl RunReader {
    /// The run folder `dir`; nothing is read until asked.
    pub fn open(dir: &Path) -> RunReader {
        RunReader {
            dir: dir.to_path_buf(),
        }
    }

    /// `results.json`, trials as summarised there (without what they printed).
    pub fn results(&self) -> Result<Results, StoreError> {
        Results::read(&self.dir)
    }

    /// `results.json`, each trial that ran with what it printed put back.
    pub fn results_with_outputs(&self) -> Result<Results, StoreError> {
        let mut r = self.results()?;
        for t in (r.trials.iter_mut()).filter(|t| t.status.did_not_run().is_none()) {
            t.restore(&self.saved_of(t)?);
        }
        Ok(r)
    }

    /// The saved form of one trial of this run.
    pub fn saved_of(&self, trial: &Trial) -> Result<SavedTrial, StoreError> {
        saved::read_json(&results::saved_trial_path(&self.dir, trial))
    }

    /// Every saved trial under `outputs/`, in path order.
    pub fn saved(&self) -> Result<Vec<SavedTrial>, StoreError> {
        SavedTrial::read_all(&self.dir)
    }
}
