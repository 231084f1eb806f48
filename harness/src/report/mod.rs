//! Reports: one file set per divergent trial, plus a summary, junit.xml and
//! results.json for the whole run, rewritten atomically after every trial so an
//! interrupted run still leaves a complete account of what ran.

use crate::runner::{Status, Trial};
use crate::store::{RunReader, RunWriter, StoreError};
use crate::trial_id::{ScenarioId, TargetName};
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

pub mod causes;
mod formats;
mod frame_diff;
pub mod html;
mod junit;
mod summary;
pub use summary::failure_causes;
pub(crate) mod trial;

pub use crate::store::results::{trial_stem, Counts, Results, TargetInfo, SCHEMA_VERSION};
pub use crate::store::{timestamp, write_atomic};
pub use formats::{Formats, ReportOptions};
pub use frame_diff::frame_diff;
pub use trial::{request_brief, write_trial_report};

/// Writes a run's reports into one folder as trials finish.
pub struct ReportWriter {
    dir: PathBuf,
    started: SystemTime,
    results: Results,
    options: ReportOptions,
    /// The stored form: the index and the saved trials, appended as each finishes.
    store: RunWriter,
    /// When the run files were last written and how long that took: each holds every
    /// trial, so during a run they are rewritten at most every [`REWRITE_EVERY`] or ten
    /// times their cost (whichever is longer), and always at the end.
    written_at: Option<(Instant, Duration)>,
}

const REWRITE_EVERY: Duration = Duration::from_secs(5);

impl ReportWriter {
    /// `reports/runs/<timestamp>/`, with `reports/runs/latest` pointing at it.
    pub fn default_dir(root: &Path) -> PathBuf {
        root.join("reports/runs")
            .join(timestamp(SystemTime::now()).replace(':', ""))
    }

    pub fn create(
        dir: &Path,
        targets: Vec<TargetInfo>,
        scenario_errors: Vec<String>,
    ) -> io::Result<ReportWriter> {
        Self::create_with(dir, targets, scenario_errors, ReportOptions::default())
    }

    /// [`ReportWriter::create`], writing the formats `options` names.
    pub fn create_with(
        dir: &Path,
        targets: Vec<TargetInfo>,
        scenario_errors: Vec<String>,
        options: ReportOptions,
    ) -> io::Result<ReportWriter> {
        let store = RunWriter::create(dir)?;
        if let Some(parent) = dir.parent() {
            if parent.file_name().is_some_and(|n| n == "runs") {
                let latest = parent.join("latest");
                let _ = std::fs::remove_file(&latest);
                #[cfg(unix)]
                let _ = std::os::unix::fs::symlink(dir.file_name().unwrap_or_default(), &latest);
            }
        }
        let started = SystemTime::now();
        let mut w = ReportWriter {
            dir: dir.to_path_buf(),
            started,
            results: Results {
                schema_version: SCHEMA_VERSION,
                started_at: timestamp(started),
                duration_ms: 0,
                complete: false,
                counts: Counts::of(&[], scenario_errors.len()),
                targets,
                scenario_errors,
                parity: Vec::new(),
                trials: Vec::new(),
            },
            options,
            store,
            written_at: None,
        };
        w.write_run_files()?;
        Ok(w)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Adds a finished trial: its own report if it diverged, its line in the index, and
    /// the run files again when they are due.
    pub fn record(&mut self, trial: Trial) -> io::Result<()> {
        if trial.status == Status::Failed {
            write_trial_report(&self.dir, &trial, self.options.formats)?;
        }
        self.store.append(&trial)?;
        self.results.trials.push(trial);
        let due = |(at, cost): (Instant, Duration)| at.elapsed() >= REWRITE_EVERY.max(cost * 10);
        if self.written_at.is_none_or(due) {
            self.write_run_files()?;
        }
        Ok(())
    }

    /// Writes the run files now, for a run that ends unfinished (interrupted).
    pub fn flush(&mut self) -> io::Result<&Results> {
        self.write_run_files()?;
        Ok(&self.results)
    }

    pub fn finish(&mut self) -> io::Result<&Results> {
        self.results.complete = true;
        self.write_run_files()?;
        Ok(&self.results)
    }

    pub fn results(&self) -> &Results {
        &self.results
    }

    pub fn into_results(self) -> Results {
        self.results
    }

    fn write_run_files(&mut self) -> io::Result<()> {
        let r = &mut self.results;
        r.trials.sort_by(|a, b| {
            (&a.key.scenario, &a.key.target).cmp(&(&b.key.scenario, &b.key.target))
        });
        r.counts = Counts::of(&r.trials, r.scenario_errors.len());
        r.parity = crate::runner::protocol::parity_table(&r.trials);
        r.duration_ms = self.started.elapsed().unwrap_or_default().as_millis() as u64;
        let started = Instant::now();
        let formats = self.options.formats;
        write_results_as(&self.dir, r, formats)?;
        if formats.html {
            let command = self.options.command.as_deref();
            let saved = |t: &Trial| Some(crate::store::saved::SavedTrial::of(t));
            html::write_run(&self.dir, &self.results, command, saved)?;
        }
        self.written_at = Some((Instant::now(), started.elapsed()));
        Ok(())
    }
}

/// Merges several runs' results (e.g. CI shards) into `out`: one summary, junit.xml and
/// results.json, with the per-trial reports copied over.
pub fn merge(dirs: &[PathBuf], out: &Path) -> Result<Results, StoreError> {
    merge_as(dirs, out, &ReportOptions::default())
}

/// [`merge`], writing the formats `options` names; the saved trials (`outputs/`) are
/// copied over too, for index.html and `audit --from`.
pub fn merge_as(
    dirs: &[PathBuf],
    out: &Path,
    options: &ReportOptions,
) -> Result<Results, StoreError> {
    if dirs.is_empty() {
        return Err(StoreError::MergeNothing);
    }
    let mut merged: Option<Results> = None;
    // Which folder holds each (scenario, target): a shard merged twice would count twice.
    let mut holder: std::collections::HashMap<(ScenarioId, TargetName), &Path> = Default::default();
    for d in dirs {
        let r = RunReader::open(d).results()?;
        for t in &r.trials {
            if let Some(first) = holder.insert((t.key.scenario.clone(), t.key.target.clone()), d) {
                return Err(StoreError::MergeTwice {
                    first: first.to_path_buf(),
                    second: d.clone(),
                    scenario: t.key.scenario.clone(),
                    target: t.key.target.clone(),
                });
            }
        }
        for t in &r.trials {
            // Carry the saved output and the per-trial report files over.
            crate::store::copy_saved(d, out, t)?;
            if t.status == Status::Failed {
                let stem = trial_stem(t);
                for ext in ["md", "json", "stdout.jsonl", "journal.ndjson"] {
                    let file = format!("{stem}.{ext}");
                    crate::store::copy_if_exists(&d.join(&file), &out.join(&file))?;
                }
            }
        }
        merged = Some(match merged {
            None => r,
            Some(mut m) => {
                for t in r.targets {
                    if !m.targets.iter().any(|x| x.name == t.name) {
                        m.targets.push(t);
                    }
                }
                m.trials.extend(r.trials);
                for e in r.scenario_errors {
                    if !m.scenario_errors.contains(&e) {
                        m.scenario_errors.push(e);
                    }
                }
                m.duration_ms = m.duration_ms.max(r.duration_ms);
                m.complete &= r.complete;
                m.started_at = m.started_at.min(r.started_at);
                m
            }
        });
    }
    let mut m = merged.expect("at least one folder");
    if m.trials.is_empty() {
        return Err(StoreError::MergeEmpty {
            folders: dirs.len(),
        });
    }
    m.trials
        .sort_by(|a, b| (&a.key.scenario, &a.key.target).cmp(&(&b.key.scenario, &b.key.target)));
    m.counts = Counts::of(&m.trials, m.scenario_errors.len());
    m.parity = crate::runner::protocol::parity_table(&m.trials);
    let written = |source| StoreError::MergeWrite {
        path: out.to_path_buf(),
        source,
    };
    std::fs::create_dir_all(out).map_err(written)?;
    write_results_as(out, &m, options.formats).map_err(written)?;
    crate::store::write_index(out, &m.trials).map_err(written)?;
    if options.formats.html {
        let reader = RunReader::open(out);
        let saved = |t: &Trial| reader.saved_of(t).ok();
        html::write_run(out, &m, options.command.as_deref(), saved).map_err(written)?;
    }
    Ok(m)
}

/// Writes summary.md, junit.xml and results.json for `results`, as `formats` say
/// (index.html is written apart: it needs the saved trials).
pub fn write_results_as(dir: &Path, r: &Results, formats: Formats) -> io::Result<()> {
    if formats.json {
        crate::store::write_results(dir, r)?;
    }
    if formats.md {
        write_atomic(&dir.join("summary.md"), summary::summary_md(r).as_bytes())?;
    }
    if formats.junit {
        write_atomic(&dir.join("junit.xml"), junit::junit_xml(r).as_bytes())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn timestamps_are_utc_iso8601() {
        assert_eq!(timestamp(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        assert_eq!(
            timestamp(UNIX_EPOCH + Duration::from_secs(1_795_307_622)),
            "2026-11-22T00:33:42Z"
        );
        // Sub-second parts are dropped, leap days land right.
        assert_eq!(
            timestamp(UNIX_EPOCH + Duration::from_millis(951_782_400_999)),
            "2000-02-29T00:00:00Z"
        );
    }

    /// The cost of writing a 5,000-trial run's report files, trial by trial (a measurement:
    /// `cargo test -p streamcheck --lib report::tests::writing_5000 -- --ignored --nocapture`).
    #[test]
    #[ignore]
    fn writing_5000_trials() {
        let dir = tempfile::tempdir().unwrap();
        let options = ReportOptions::default();
        let mut w = ReportWriter::create_with(dir.path(), Vec::new(), Vec::new(), options).unwrap();
        let started = Instant::now();
        for i in 0..5000 {
            let mut t = Trial::blank(&format!("topic/scenario-{i:04}"), "claude-code", "2.1.330");
            t.status = Status::Skipped("measured".into());
            w.record(t).unwrap();
        }
        w.finish().unwrap();
        eprintln!("5000 trials written in {:?}", started.elapsed());
        let index = std::fs::read_to_string(dir.path().join("results.json")).unwrap();
        assert_eq!(
            serde_json::from_str::<Results>(&index)
                .unwrap()
                .trials
                .len(),
            5000
        );
    }
}
