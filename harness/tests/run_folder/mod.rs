//! A run folder as a drift run leaves it (`results.json` and a saved trial per scenario
//! that ran), written from drift's fixtures, for `drift --replay`; and the fixtures'
//! outputs themselves. Each drift test file uses part of it.
#![allow(dead_code)]

use serde_json::Value;
use std::path::Path;
use streamcheck::commands::drift::{ScenarioOutput, VersionOutputs};
use streamcheck::report::{ReportWriter, TargetInfo};
use streamcheck::runner::{Exit, Status, Stderr, Trial, TrialKey};
use streamcheck::store::saved::SavedTrial;

/// Writes `versions` into `dir` through the report writer every run uses.
pub fn write(dir: &Path, versions: &[VersionOutputs]) {
    let infos = versions
        .iter()
        .map(|v| TargetInfo {
            name: v.target.clone(),
            version: v.version.clone(),
            unavailable: v.unavailable.clone(),
        })
        .collect();
    let mut writer = ReportWriter::create(dir, infos, vec![]).unwrap();
    for v in versions {
        for (id, o) in &v.scenarios {
            let saved = SavedTrial {
                format_version: streamcheck::store::saved::FORMAT_VERSION,
                key: TrialKey {
                    dialect: Some(streamcheck::dialect::Dialect::ClaudeCode),
                    ..TrialKey::new(id, &v.target, &v.version.clone().unwrap_or_default())
                },
                status: o.status.clone(),
                exit: o.exit.clone(),
                stdout: o.frames.iter().map(|f| format!("{f}\n")).collect(),
                stdout_truncated: false,
                stderr: Stderr::default(),
                workspace: "/sandbox/work".into(),
                home: "/sandbox/home".into(),
                journal: Vec::new(),
                requests_dropped: 0,
                run: None,
                client: None,
                line_ms: Vec::new(),
                stub_lead_ms: 0,
                expected_frames: Vec::new(),
            };
            let mut trial = Trial::from_saved(&saved);
            trial.divergences.extend(o.first_divergence.clone());
            writer.record(trial).unwrap();
        }
    }
    writer.finish().unwrap();
}

/// A process that exited with `code`.
pub fn exit_code(code: i32) -> Exit {
    Exit {
        code: Some(code),
        ..Exit::default()
    }
}

/// A passed scenario's output: its exit code and frames.
pub fn passed(exit: i32, frames: Value) -> ScenarioOutput {
    ScenarioOutput {
        exit: exit_code(exit),
        frames: frames.as_array().unwrap().clone(),
        ..ScenarioOutput::with_status(Status::Passed)
    }
}
