//! What a finished trial needs to be checked again without running the CLI: stdout as
//! printed, how the process ended, stderr, the requests the stub saw and the sandbox
//! paths. A run saves one per trial (`outputs/<stem>.json` beside its reports): the only
//! stored form of a run. [`Trial::from_saved`] and [`Trial::restore`] turn it back into
//! the trial that `audit`, `drift` and `bisect` check again (`runner::check::replanned`).

use super::error::StoreError;
use crate::pattern::Vars;
use crate::printed::exit::Exit;
use crate::printed::output::{Output, Stderr};
use crate::runner::{Status, Trial, TrialKey};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use stub_api::JournalEntry;

/// The folder of saved trials inside a report folder.
pub(super) const DIR: &str = "outputs";

/// The saved-trial format this streamcheck writes and reads (files saved before it was
/// kept have none: 0).
pub const FORMAT_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SavedTrial {
    #[serde(default)]
    pub format_version: u32,
    #[serde(flatten)]
    pub key: TrialKey,
    #[serde(flatten)]
    pub status: Status,
    pub exit: Exit,
    /// stdout as printed (lossily decoded if it was not UTF-8).
    pub stdout: String,
    #[serde(default)]
    pub stdout_truncated: bool,
    pub stderr: Stderr,
    pub workspace: String,
    pub home: String,
    pub journal: Vec<JournalEntry>,
    /// See [`Trial::requests_dropped`]: a re-check sees the request loop the run saw.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub requests_dropped: u64,
    /// In a multi-run scenario: the run (1-based) this output is from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<usize>,
    /// What the scripted client sent (its requests' ids are what `{$ref: initialize}` names).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<crate::client::ClientLog>,
    /// Per stdout line (1-based line n at n - 1): ms from spawn to its arrival. Empty in
    /// files saved before it was kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub line_ms: Vec<u64>,
    /// See [`Trial::stub_lead_ms`].
    #[serde(default)]
    pub stub_lead_ms: u64,
    /// The expected frames as written, for the HTML report.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expected_frames: Vec<serde_json::Value>,
}

impl SavedTrial {
    pub fn of(trial: &Trial) -> SavedTrial {
        SavedTrial {
            format_version: FORMAT_VERSION,
            key: trial.key.clone(),
            status: trial.status.clone(),
            exit: trial.exit.clone(),
            stdout: trial.output.text(),
            stdout_truncated: trial.output.raw_truncated,
            stderr: trial.stderr.clone(),
            workspace: trial.vars.workspace.clone(),
            home: trial.vars.home.clone(),
            journal: trial.journal.clone(),
            requests_dropped: trial.requests_dropped,
            run: trial.run,
            client: trial.client.clone(),
            line_ms: line_ms(&trial.output),
            stub_lead_ms: trial.stub_lead_ms,
            expected_frames: trial.expected_frames.clone(),
        }
    }

    pub fn vars(&self) -> Vars {
        Vars {
            workspace: self.workspace.clone(),
            home: self.home.clone(),
        }
    }

    /// stdout parsed again, each line at the time it arrived.
    pub fn output(&self) -> Output {
        let mut out = Output::parse(self.stdout.as_bytes());
        out.raw_truncated = self.stdout_truncated;
        let at = |line: usize| {
            line.checked_sub(1)
                .and_then(|i| self.line_ms.get(i))
                .copied()
        };
        for f in &mut out.frames {
            f.at_ms = at(f.line).unwrap_or(f.at_ms);
        }
        for b in &mut out.bad_lines {
            b.at_ms = at(b.line).unwrap_or(b.at_ms);
        }
        out
    }

    /// Every saved trial under `report_dir/outputs/` with its file, in path order.
    pub(super) fn read_files(report_dir: &Path) -> Result<Vec<(PathBuf, SavedTrial)>, StoreError> {
        let dir = report_dir.join(DIR);
        let mut files = Vec::new();
        collect_json(&dir, &mut files).map_err(|e| StoreError::io(&dir, e))?;
        files.sort();
        files
            .into_iter()
            .map(|p| {
                let saved = read_saved(&p)?;
                Ok((p, saved))
            })
            .collect()
    }
}

impl Trial {
    /// The trial a saved one is of: what `results.json` keeps besides it (divergences,
    /// command line, notes) is empty.
    pub fn from_saved(saved: &SavedTrial) -> Trial {
        let mut trial = Trial {
            key: saved.key.clone(),
            status: saved.status.clone(),
            exit: saved.exit.clone(),
            ..Trial::blank("", "", "")
        };
        trial.restore(saved);
        trial
    }

    /// Puts back what `results.json` leaves out of a trial (stdout, stderr, requests,
    /// sandbox paths, the client's log) from its saved form.
    pub fn restore(&mut self, saved: &SavedTrial) {
        self.output = saved.output();
        self.stderr = saved.stderr.clone();
        self.journal = saved.journal.clone();
        self.requests_dropped = saved.requests_dropped;
        self.vars = saved.vars();
        self.client = saved.client.clone();
        self.run = saved.run;
        self.stub_lead_ms = saved.stub_lead_ms;
        self.expected_frames = saved.expected_frames.clone();
    }
}

/// Arrival time per stdout line, from the frames and bad lines that carry one.
fn line_ms(output: &Output) -> Vec<u64> {
    let frames = output.frames.iter().map(|f| (f.line, f.at_ms));
    let bad = output.bad_lines.iter().map(|b| (b.line, b.at_ms));
    let mut times: Vec<(usize, u64)> = frames.chain(bad).collect();
    times.sort_unstable();
    let mut out = vec![0; times.last().map_or(0, |t| t.0)];
    for (line, at) in times {
        if line > 0 {
            out[line - 1] = at;
        }
    }
    out
}

/// A saved trial's file, parsed; one written in a newer format is refused.
pub(super) fn read_saved(path: &Path) -> Result<SavedTrial, StoreError> {
    let saved: SavedTrial = read_json(path)?;
    if saved.format_version > FORMAT_VERSION {
        return Err(StoreError::SavedFormat {
            path: path.to_path_buf(),
            found: saved.format_version,
            reads: FORMAT_VERSION,
        });
    }
    Ok(saved)
}

/// A JSON file of a run folder (`results.json`, a saved trial), parsed.
pub(super) fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T, StoreError> {
    let text = std::fs::read_to_string(path).map_err(|e| StoreError::io(path, e))?;
    serde_json::from_str(&text).map_err(|e| StoreError::json(path, e))
}

fn collect_json(dir: &Path, out: &mut Vec<std::path::PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            collect_json(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
    Ok(())
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::Dialect;
    use crate::printed::output::LineSplitter;

    #[test]
    fn a_saved_trial_comes_back_as_the_trial_it_was_with_each_line_at_its_time() {
        let mut trial = Trial::blank("s/x", "claude-code", "1.0.0");
        let mut split = LineSplitter::default();
        split.push(b"{\"type\":\"system\"}\n", 5, &mut trial.output);
        split.push(b"not json\n{\"type\":\"result\"}\n", 9, &mut trial.output);
        split.finish(9, &mut trial.output);
        trial.exit.code = Some(3);
        trial.vars = Vars {
            workspace: "/w".into(),
            home: "/h".into(),
        };
        trial.run = Some(2);
        trial.key.dialect = Some(Dialect::QwenCode);
        trial.key.held_to = Some("2.1.330".into());
        trial.key.conforms_to = Some("2.1.330".into());
        trial.requests_dropped = 609;
        let back = Trial::from_saved(&SavedTrial::of(&trial));
        assert_eq!(
            back.requests_dropped, 609,
            "a re-check sees the request loop"
        );
        assert_eq!(
            (back.key.dialect, back.expect_version(), back.printed_by()),
            (Some(Dialect::QwenCode), "2.1.330", "2.1.330"),
            "which expectations a saved trial is checked against comes back with it"
        );
        let at = |t: &Trial| -> Vec<(usize, u64)> {
            let frames = t.output.frames.iter().map(|f| (f.line, f.at_ms));
            let bad = t.output.bad_lines.iter().map(|b| (b.line, b.at_ms));
            frames.chain(bad).collect()
        };
        assert_eq!(at(&back), vec![(1, 5), (3, 9), (2, 9)]);
        assert_eq!(back.output.text(), trial.output.text());
        assert_eq!(
            (back.exit, back.vars.workspace, back.run),
            (trial.exit, "/w".to_string(), Some(2))
        );
        assert_eq!(
            (back.key.scenario.as_str(), back.key.target_version.as_str()),
            ("s/x", "1.0.0")
        );
    }
}
