//! Drift across versions of a CLI: runs the suite on each version and reports, for
//! each pair of neighbouring versions, what changed in the protocol itself.
//!
//! The differ ([`diff()`]) is a pure function over recorded outputs ([`VersionOutputs`]:
//! per scenario the frames, exit code and status), so it is tested from small fixtures
//! and can be re-run on saved outputs (`streamcheck drift --replay outputs.json`).
//! It compares frame types (type/subtype), the fields of each frame type (key paths →
//! JSON types, arrays as `[]`), the frame-type sequence per scenario, exit codes, result
//! subtypes, the tools in `system/init`, values at the same place (volatile ones
//! redacted), and which scenarios flip between pass and fail.
//!
//! Its parts: [`model`] (outputs.json and drift.json as types), [`diff`](mod@diff) (the
//! differ, one function per report section) and [`render`] (drift.md).

pub mod diff;
pub mod html;
pub mod model;
pub mod pending;
pub mod render;
pub mod verdict;

pub use diff::{diff, diff_pair, run_length, schema_of, Schema};
pub use model::*;
pub use render::render_md;
pub use verdict::{classify, Change, Finding, What};

use crate::report::{self, write_atomic, ReportWriter};
use crate::runner::{RunOptions, Status};
use crate::scenario::Scenario;
use crate::suite;
use crate::target::{self, NotInstalled, Project, Source, Target, TargetSpec};
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

/// Options of `streamcheck drift`.
#[derive(Debug, Clone)]
pub struct DriftOptions {
    pub jobs: usize,
    pub run: RunOptions,
    pub install: bool,
    /// Where drift.md and drift.json go.
    pub report_dir: PathBuf,
    /// Where the runs' own reports (and outputs.json) go.
    pub run_dir: PathBuf,
    /// The command line, shown at the top of drift.md.
    pub command: String,
    pub notes: Vec<String>,
}

/// Resolves a target; `claude-code@V` where V is the pinned version uses the pinned
/// install, so that version is not installed a second time from npm.
pub fn resolve(
    spec: &TargetSpec,
    project: &Project,
    install: bool,
) -> Result<Target, NotInstalled> {
    if let Source::Npm { version } = &spec.source {
        if let Ok(pinned) = TargetSpec::parse("claude-code") {
            if let Ok(mut t) = target::resolve(&pinned, project, install) {
                if &t.version == version {
                    t.name = spec.name.clone();
                    return Ok(t);
                }
            }
        }
    }
    target::resolve(spec, project, install)
}

/// Runs the suite on every target and writes drift.md and drift.json.
pub async fn run(
    project: &Project,
    scenarios: Vec<Scenario>,
    specs: &[TargetSpec],
    opts: &DriftOptions,
) -> Result<DriftFile, String> {
    if specs.len() < 2 {
        return Err("drift: name at least two targets (--target A --target B)".into());
    }
    let started = Instant::now();
    let targets: Vec<Result<Target, NotInstalled>> = specs
        .iter()
        .map(|s| resolve(s, project, opts.install))
        .collect();
    for t in &targets {
        match t {
            Ok(t) => eprintln!(
                "streamcheck: {} is {} {}",
                t.name,
                t.dialect.title(),
                t.version
            ),
            Err(e) => eprintln!("streamcheck: {e}"),
        }
    }
    let outputs = run_all(scenarios.clone(), specs, &targets, opts).await?;
    let outputs_path = opts.run_dir.join("outputs.json");
    let json = serde_json::to_string(&outputs).map_err(|e| e.to_string())?;
    write_atomic(&outputs_path, json.as_bytes())
        .map_err(|e| format!("{}: {e}", outputs_path.display()))?;
    let mut notes = opts.notes.clone();
    let duration_ms = started.elapsed().as_millis() as u64;
    notes.push(format!(
        "Wall time of the runs: {:.1} min with --jobs {}. Raw outputs (for `streamcheck drift --replay`): {}.",
        duration_ms as f64 / 60_000.0,
        opts.jobs,
        outputs_path.strip_prefix(&project.root).unwrap_or(&outputs_path).display()
    ));
    write(
        &outputs,
        Some((project, &scenarios)),
        &opts.report_dir,
        &opts.command,
        notes,
        duration_ms,
    )
}

/// Runs the suite on the targets that could be resolved; what each version printed.
async fn run_all(
    scenarios: Vec<Scenario>,
    specs: &[TargetSpec],
    targets: &[Result<Target, NotInstalled>],
    opts: &DriftOptions,
) -> Result<Vec<VersionOutputs>, String> {
    let mut writer = ReportWriter::create(&opts.run_dir, suite::target_infos(targets), vec![])
        .map_err(|e| format!("cannot write reports to {}: {e}", opts.run_dir.display()))?;
    let mut outputs: Vec<VersionOutputs> = specs
        .iter()
        .zip(targets)
        .map(|(s, t)| VersionOutputs {
            target: s.name.clone(),
            version: t.as_ref().ok().map(|t| t.version.clone()),
            unavailable: t.as_ref().err().map(|e| e.to_string()),
            ..VersionOutputs::default()
        })
        .collect();
    let runnable: Vec<Result<Target, NotInstalled>> =
        targets.iter().filter(|t| t.is_ok()).cloned().collect();
    let total = scenarios.len() * runnable.len();
    let mut done = 0;
    let finished = suite::run(
        scenarios,
        &runnable,
        opts.jobs,
        opts.run.clone(),
        &mut writer,
        |t| {
            done += 1;
            let status = match &t.status {
                Status::Passed => "ok",
                Status::Failed => "FAILED",
                Status::Known(_) => "known",
                Status::Skipped(_) => "skipped",
                Status::Unavailable(_) => "unavailable",
            };
            println!("[{done}/{total}] {status:<7} {} ({})", t.scenario, t.target);
            if let Some(v) = outputs.iter_mut().find(|v| v.target == t.target) {
                v.trial_ms += t.duration_ms;
                v.scenarios.insert(t.scenario.clone(), output_of(t));
            }
        },
    )
    .await
    .map_err(|e| format!("cannot write reports: {e}"))?;
    if !finished {
        return Err("interrupted: no drift report written".into());
    }
    writer.finish().map_err(|e| e.to_string())?;
    Ok(outputs)
}

/// Diffs saved outputs (an `outputs.json` of an earlier run) and writes the report; with
/// `scenarios`, opens pending version blocks as a run does.
pub fn replay(
    outputs: &Path,
    scenarios: Option<(&Project, &[Scenario])>,
    opts: &DriftOptions,
) -> Result<DriftFile, String> {
    let text =
        std::fs::read_to_string(outputs).map_err(|e| format!("{}: {e}", outputs.display()))?;
    let versions: Vec<VersionOutputs> =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", outputs.display()))?;
    write(
        &versions,
        scenarios,
        &opts.report_dir,
        &opts.command,
        opts.notes.clone(),
        0,
    )
}

/// Diffs the versions, opens pending version blocks for the breaking changes (when the
/// scenarios are given) and writes drift.md and drift.json into `dir`.
fn write(
    versions: &[VersionOutputs],
    scenarios: Option<(&Project, &[Scenario])>,
    dir: &Path,
    command: &str,
    notes: Vec<String>,
    duration_ms: u64,
) -> Result<DriftFile, String> {
    let mut drift = diff(versions);
    if let Some((project, scenarios)) = scenarios {
        pending::open(project, scenarios, versions, &mut drift)?;
    }
    let md = render_md(&drift, command, &notes);
    let file = DriftFile {
        command: command.to_string(),
        generated_at: report::timestamp(SystemTime::now()),
        duration_ms,
        notes,
        drift,
    };
    let err = |p: &Path, e: std::io::Error| format!("{}: {e}", p.display());
    let (md_path, json_path) = (dir.join("drift.md"), dir.join("drift.json"));
    write_atomic(&md_path, md.as_bytes()).map_err(|e| err(&md_path, e))?;
    let json = serde_json::to_string_pretty(&file).map_err(|e| e.to_string())? + "\n";
    write_atomic(&json_path, json.as_bytes()).map_err(|e| err(&json_path, e))?;
    Ok(file)
}
