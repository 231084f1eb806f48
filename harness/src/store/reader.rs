//! Reading a finished (or cut short) run folder back.

use super::error::StoreError;
use super::results::{saved_trial_path, Counts, Results, INDEX_FILE};
use super::saved::{self, SavedTrial};
use crate::runner::Trial;
use std::path::{Path, PathBuf};

/// A run folder, opened for reading: the one way commands read a run.
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

    /// The run's trials as summarised (without what they printed). A run that did not
    /// finish rewrote `results.json` only now and then, so its trials are read from the
    /// index, which has every trial that finished.
    pub fn results(&self) -> Result<Results, StoreError> {
        let mut r = Results::read(&self.dir)?;
        if !r.complete {
            let index = self.index()?;
            if index.len() > r.trials.len() {
                r.trials = index;
                r.trials.sort_by(|a, b| {
                    (&a.key.scenario, &a.key.target).cmp(&(&b.key.scenario, &b.key.target))
                });
                r.counts = Counts::of(&r.trials, r.scenario_errors.len());
                r.parity = crate::runner::protocol::parity_table(&r.trials);
            }
        }
        Ok(r)
    }

    /// The index: each trial that finished, in the order they finished. A last line cut
    /// off mid-write (the run was killed) is left out; an older folder without an index
    /// has none.
    pub fn index(&self) -> Result<Vec<Trial>, StoreError> {
        let path = self.dir.join(INDEX_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(StoreError::io(&path, e)),
        };
        let whole = text.ends_with('\n');
        let lines: Vec<&str> = text.lines().collect();
        let mut trials = Vec::with_capacity(lines.len());
        for (i, line) in lines.iter().enumerate() {
            match serde_json::from_str(line) {
                Ok(t) => trials.push(t),
                Err(_) if !whole && i + 1 == lines.len() => break,
                Err(source) => {
                    return Err(StoreError::IndexLine {
                        path,
                        line: i + 1,
                        source,
                    })
                }
            }
        }
        Ok(trials)
    }

    /// [`RunReader::results`], each trial that ran with what it printed put back.
    pub fn results_with_outputs(&self) -> Result<Results, StoreError> {
        let mut r = self.results()?;
        for t in (r.trials.iter_mut()).filter(|t| t.status.did_not_run().is_none()) {
            t.restore(&self.saved_of(t)?);
        }
        Ok(r)
    }

    /// The saved form of one trial of this run.
    pub fn saved_of(&self, trial: &Trial) -> Result<SavedTrial, StoreError> {
        saved::read_saved(&saved_trial_path(&self.dir, trial))
    }

    /// The file holding one trial's saved form, when the run kept one.
    pub fn saved_file_of(&self, trial: &Trial) -> Option<PathBuf> {
        Some(saved_trial_path(&self.dir, trial)).filter(|p| p.is_file())
    }

    /// Whether the folder keeps saved trials at all (a run folder does, even when empty).
    pub fn keeps_saved(&self) -> bool {
        self.dir.join(saved::DIR).is_dir()
    }

    /// Every saved trial, in path order.
    pub fn saved(&self) -> Result<Vec<SavedTrial>, StoreError> {
        Ok(self.saved_files()?.into_iter().map(|(_, s)| s).collect())
    }

    /// Every saved trial with its file, in path order.
    pub fn saved_files(&self) -> Result<Vec<(PathBuf, SavedTrial)>, StoreError> {
        SavedTrial::read_files(&self.dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::Status;
    use crate::store::{write_results, RunWriter};

    fn passed(id: &str) -> Trial {
        let mut t = Trial::blank(id, "claude-code", "2.1.330");
        t.status = Status::Passed;
        t
    }

    /// A run cut short after `finished` trials, whose `results.json` was last written
    /// after `written` of them.
    fn cut_short(dir: &Path, finished: &[&str], written: usize) {
        let mut w = RunWriter::create(dir).unwrap();
        let trials: Vec<Trial> = finished.iter().map(|id| passed(id)).collect();
        for t in &trials {
            w.append(t).unwrap();
        }
        let r = Results {
            schema_version: super::super::results::SCHEMA_VERSION,
            started_at: "2026-11-29T00:00:00Z".into(),
            duration_ms: 0,
            complete: false,
            targets: Vec::new(),
            counts: Counts::of(&trials[..written], 0),
            scenario_errors: Vec::new(),
            parity: Vec::new(),
            trials: trials[..written].to_vec(),
        };
        write_results(dir, &r).unwrap();
    }

    #[test]
    fn a_run_cut_short_is_read_with_every_trial_that_finished() {
        let dir = tempfile::tempdir().unwrap();
        cut_short(dir.path(), &["b/two", "a/one", "c/three"], 1);
        let r = RunReader::open(dir.path()).results().unwrap();
        let ids: Vec<&str> = r.trials.iter().map(|t| t.key.scenario.as_str()).collect();
        assert_eq!(ids, ["a/one", "b/two", "c/three"]);
        assert_eq!(r.counts.passed, 3);
        assert!(!r.complete, "still a run that did not finish");
        let saved = RunReader::open(dir.path()).saved().unwrap();
        assert_eq!(saved.len(), 3);
        assert!(saved
            .iter()
            .all(|s| s.format_version == saved::FORMAT_VERSION));
    }

    #[test]
    fn an_index_line_cut_off_mid_write_is_left_out_and_a_broken_one_named() {
        let dir = tempfile::tempdir().unwrap();
        cut_short(dir.path(), &["a/one", "b/two"], 0);
        let index = dir.path().join(INDEX_FILE);
        let mut text = std::fs::read_to_string(&index).unwrap();
        text.push_str("{\"scenario\":\"c/thr");
        std::fs::write(&index, &text).unwrap();
        let r = RunReader::open(dir.path()).results().unwrap();
        assert_eq!(r.trials.len(), 2);
        std::fs::write(&index, format!("{{oops\n{text}\n")).unwrap();
        let e = RunReader::open(dir.path()).results().unwrap_err();
        assert!(
            e.to_string()
                .ends_with("results.jsonl:1: key must be a string at line 1 column 2"),
            "{e}"
        );
    }

    #[test]
    fn a_saved_trial_of_a_newer_format_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        cut_short(dir.path(), &["a/one"], 1);
        let run = RunReader::open(dir.path());
        let file = run.saved_file_of(&passed("a/one")).unwrap();
        let text = std::fs::read_to_string(&file).unwrap();
        let newer = text.replacen("\"format_version\":1", "\"format_version\":2", 1);
        std::fs::write(&file, newer).unwrap();
        let e = run.saved().unwrap_err().to_string();
        assert!(
            e.ends_with(
                "a/one.claude-code.json: format_version 2 (this streamcheck reads 1 and older)"
            ),
            "{e}"
        );
        let older = text.replacen("\"format_version\":1,", "", 1);
        std::fs::write(&file, older).unwrap();
        assert_eq!(run.saved().unwrap()[0].format_version, 0);
    }
}
