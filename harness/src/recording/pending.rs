//! Pending files: a recorded expectation waiting for review, one YAML file per scenario
//! and target under `reports/pending/` (git-ignored).

use super::error::RecordError;
use super::yaml_edit::{to_yaml_flow, yaml_str};
use crate::install::Project;
use crate::report::timestamp;
use crate::runner::Trial;
use crate::scenario::Scenario;
use crate::trial_id::{ScenarioId, TargetName};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::SystemTime;
use walkdir::WalkDir;

/// Where pending files are written, and where accepting one writes the scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingPlace {
    /// The folder of pending files: `pending/` in the reports folder of the checkout or of
    /// the project file's folder (never inside the cache).
    pub dir: PathBuf,
    /// With the catalogue the binary bundles (unpacked in the cache), the project's own
    /// scenario folder: accepting a recording of a bundled scenario writes the edited copy
    /// there, at the same relative path, where it replaces the bundled one. `None` in a
    /// streamcheck checkout, whose scenarios are edited in place.
    pub own_copies: Option<PathBuf>,
}

impl PendingPlace {
    /// A streamcheck checkout: `reports/pending/` under its root, scenarios edited in place.
    pub fn in_checkout(project: &Project) -> PendingPlace {
        PendingPlace {
            dir: project.root.join("reports/pending"),
            own_copies: None,
        }
    }

    /// The file accepting `pending` writes: the scenario itself, or for a bundled one its
    /// copy in the project's own folder.
    pub fn written_file(&self, project: &Project, pending: &Pending) -> PathBuf {
        let scenario = project.root.join(&pending.file);
        match (
            &self.own_copies,
            scenario.strip_prefix(project.scenarios_dir()),
        ) {
            (Some(own), Ok(rel)) => own.join(rel),
            _ => scenario,
        }
    }
}

/// A recorded expectation waiting for review.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pending {
    pub scenario: ScenarioId,
    /// The scenario file, relative to the project root.
    pub file: String,
    /// The key under `expect:` it replaces (`claude-code`).
    pub expect: String,
    /// The target it was recorded on (`claude-code@2.1.74`, `command:fake-cli.sh`).
    pub target: TargetName,
    pub version: String,
    #[serde(default)]
    pub recorded_at: Option<String>,
    #[serde(default)]
    pub notes: Vec<String>,
    #[serde(default)]
    pub exit_code: Option<i32>,
    /// `None` for output formats without frames (`text`): `frames:` is left alone.
    #[serde(default)]
    pub frames: Option<Vec<Value>>,
    /// For a version block (`expect` is `claude-code@X`): the block it refines...
    #[serde(default)]
    pub refines: Option<String>,
    /// ...and the frames that differ from it; accepting writes the block (its
    /// `frames_patch` and `exit_code`), keeping everything else.
    #[serde(default)]
    pub frames_patch: Option<BTreeMap<usize, Value>>,
    /// The scenario had no expectation for the target: accepting adds the block
    /// `expect: <expect>:` with `frames` and `exit_code`.
    #[serde(default)]
    pub new_block: bool,
    /// A case of a `cases:` matrix: accepting writes the version block into that case's
    /// own `expect:` (its item in `cases:`), not the file's.
    #[serde(default)]
    pub case: Option<String>,
}

impl Pending {
    /// A pending file for `scenario` under `expect: <key>:`, recorded from `trial`,
    /// saying nothing yet.
    pub fn new(project: &Project, scenario: &Scenario, key: &str, trial: &Trial) -> Pending {
        let file = scenario
            .path
            .strip_prefix(&project.root)
            .unwrap_or(&scenario.path)
            .to_string_lossy()
            .replace('\\', "/");
        Pending {
            scenario: scenario.id.clone(),
            file,
            expect: key.to_string(),
            target: trial.key.target.clone(),
            version: trial.expect_version().to_string(),
            recorded_at: Some(timestamp(SystemTime::now())),
            notes: Vec::new(),
            exit_code: None,
            frames: None,
            refines: None,
            frames_patch: None,
            new_block: false,
            case: None,
        }
    }

    /// True for a version block (see [`Pending::frames_patch`]).
    pub fn is_block(&self) -> bool {
        self.frames_patch.is_some()
    }

    pub fn to_yaml(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "# Recorded by `streamcheck record`; nothing was changed in the scenario.\n# Review with `streamcheck review` (accept {} `expect: {}:` in {}).",
            match (self.is_block(), self.new_block) {
                (true, _) => "writes the version block",
                (_, true) => "adds the block",
                _ => "rewrites",
            },
            self.expect,
            self.file
        );
        for (k, v) in [
            ("scenario", self.scenario.as_str()),
            ("file", &self.file),
            ("expect", &self.expect),
            ("target", &self.target),
            ("version", &self.version),
        ] {
            let _ = writeln!(s, "{k}: {}", yaml_str(v));
        }
        if let Some(at) = &self.recorded_at {
            let _ = writeln!(s, "recorded_at: {}", yaml_str(at));
        }
        if !self.notes.is_empty() {
            let _ = writeln!(s, "notes:");
            for n in &self.notes {
                let _ = writeln!(s, "  - {}", yaml_str(n));
            }
        }
        if self.new_block {
            s.push_str("new_block: true\n");
        }
        if let Some(case) = &self.case {
            let _ = writeln!(s, "case: {}", yaml_str(case));
        }
        if let Some(r) = &self.refines {
            let _ = writeln!(s, "refines: {}", yaml_str(r));
        }
        if let Some(code) = self.exit_code {
            let _ = writeln!(s, "exit_code: {code}");
        }
        match &self.frames_patch {
            None => {}
            Some(p) if p.is_empty() => s.push_str("frames_patch: {}\n"),
            Some(p) => {
                s.push_str("frames_patch:\n");
                for (i, v) in p {
                    let _ = writeln!(s, "  {i}: {}", to_yaml_flow(v));
                }
            }
        }
        match &self.frames {
            None => {}
            Some(f) if f.is_empty() => s.push_str("frames: []\n"),
            Some(f) => {
                s.push_str("frames:\n");
                for frame in f {
                    let _ = writeln!(s, "  - {}", to_yaml_flow(frame));
                }
            }
        }
        s
    }

    pub fn parse(text: &str) -> Result<Pending, RecordError> {
        serde_yaml::from_str(text).map_err(|source| RecordError::PendingYaml { source })
    }

    /// `reports/pending/<scenario id>.<target>.yaml`.
    pub fn path_in(&self, dir: &Path) -> PathBuf {
        dir.join(format!(
            "{}.{}.yaml",
            self.scenario,
            self.target.replace(['/', ':', '\\'], "_")
        ))
    }
}

/// Every pending file under `dir`, sorted (none when `dir` cannot be read).
pub fn pending_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| !e.file_type().is_dir() && e.path().extension().is_some_and(|x| x == "yaml"))
        .map(walkdir::DirEntry::into_path)
        .collect();
    files.sort();
    files
}

/// Removes the folders under `dir` that review left empty (`dir` itself stays).
pub fn remove_empty_dirs(dir: &Path) {
    for e in WalkDir::new(dir)
        .min_depth(1)
        .contents_first(true)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_dir())
    {
        // Fails on a folder that still holds something, which is then kept.
        let _ = std::fs::remove_dir(e.path());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pending_files_read_back() {
        let p = Pending {
            scenario: "basics/x".into(),
            file: "scenarios/basics/x.yaml".into(),
            expect: "claude-code".into(),
            target: "command:fake-cli.sh".into(),
            version: "9.9.9".into(),
            recorded_at: Some("2026-01-01T00:00:00Z".into()),
            notes: vec!["a: note".into()],
            exit_code: Some(0),
            frames: Some(vec![
                json!({"type": "system", "session_id": {"$capture": "session"}, "x": "$$lit"}),
            ]),
            refines: None,
            frames_patch: None,
            new_block: false,
            case: Some("a case".into()),
        };
        assert_eq!(Pending::parse(&p.to_yaml()).unwrap(), p);
        let first = Pending {
            new_block: true,
            ..p.clone()
        };
        assert!(first
            .to_yaml()
            .contains("accept adds the block `expect: claude-code:`"));
        assert_eq!(Pending::parse(&first.to_yaml()).unwrap(), first);
        let block = Pending {
            expect: "claude-code@2.1.74".into(),
            frames: None,
            refines: Some("claude-code".into()),
            frames_patch: Some(BTreeMap::from([
                (0, json!({"$merge": {"model": "$absent"}})),
                (2, Value::Null),
                (3, json!([{"type": "user"}])),
            ])),
            ..p.clone()
        };
        assert_eq!(Pending::parse(&block.to_yaml()).unwrap(), block);
        assert_eq!(Pending::parse(&p.to_yaml()).unwrap(), p);
        assert_eq!(
            p.path_in(Path::new("/p")),
            Path::new("/p/basics/x.command_fake-cli.sh.yaml")
        );
    }

    #[test]
    fn only_empty_folders_are_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        for d in ["a/b/c", "d", "e"] {
            std::fs::create_dir_all(dir.join(d)).unwrap();
        }
        std::fs::write(dir.join("e/x.yaml"), "").unwrap();
        std::fs::write(dir.join("e/y.txt"), "").unwrap();
        remove_empty_dirs(dir);
        assert!(dir.exists() && !dir.join("a").exists() && !dir.join("d").exists());
        assert_eq!(pending_files(dir), [dir.join("e/x.yaml")]);
    }
}
