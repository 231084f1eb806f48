//! Deciding on a pending file: the scenario as it is and as accepting would make it,
//! and the decision applied. Asking and printing are the binary's (`cli::review`).

use crate::install::Project;
use crate::recording::pending::{Pending, PendingPlace};
use crate::recording::yaml_edit::{
    recorded_fields, rewrite_expectation, validate_edit, version_block_fields, write_case_block,
    write_new_block, write_version_block,
};
use crate::recording::RecordError;
use crate::report::write_atomic;
use crate::scenario::Scenario;
use std::path::{Path, PathBuf};

/// What to do with one pending file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Accept,
    Reject,
    /// Keep the pending file for later.
    Skip,
    /// Keep this and every following pending file.
    Quit,
}

/// One pending file, ready to decide on: the scenario text now and after accepting.
pub struct PendingChange {
    pub pending_path: PathBuf,
    pub pending: Pending,
    /// The file accepting writes: the scenario, or the project's own copy of a bundled one.
    pub scenario_path: PathBuf,
    /// Where `old` was read from when that is not `scenario_path` (a bundled scenario
    /// with no copy of the project's own yet).
    pub copied_from: Option<PathBuf>,
    pub old: String,
    pub new: String,
}

impl PendingChange {
    /// Loads a pending file and computes (and validates) the scenario's new text.
    pub fn load(
        project: &Project,
        place: &PendingPlace,
        pending_path: &Path,
    ) -> Result<PendingChange, RecordError> {
        let text =
            std::fs::read_to_string(pending_path).map_err(|source| RecordError::PendingFile {
                path: pending_path.to_path_buf(),
                source,
            })?;
        let pending = Pending::parse(&text)?;
        let recorded_from = project.root.join(&pending.file);
        let scenario_path = place.written_file(project, &pending);
        let copied_from =
            (scenario_path != recorded_from && !scenario_path.exists()).then_some(recorded_from);
        let source = copied_from.as_ref().unwrap_or(&scenario_path);
        let old = std::fs::read_to_string(source).map_err(|e| RecordError::io(source, e))?;
        let root = match &place.own_copies {
            Some(own) if scenario_path.starts_with(own) => own.clone(),
            _ => project.scenarios_dir(),
        };
        let (key, code, frames) = (
            &pending.expect,
            pending.exit_code,
            pending.frames.as_deref(),
        );
        let new = match (&pending.frames_patch, &pending.case) {
            (Some(patch), Some(case)) => {
                let new = write_case_block(&old, case, key, code, patch)?;
                check_case_block(&old, &new, &scenario_path, &root, &pending)?;
                new
            }
            (None, Some(case)) => return Err(RecordError::CaseNotBlock { case: case.clone() }),
            (Some(patch), None) => {
                let new = write_version_block(&old, key, code, patch)?;
                let fields = version_block_fields(code, patch)?;
                validate_edit(&old, &new, &scenario_path, &root, key, &fields)?;
                new
            }
            (None, None) => {
                let new = match pending.new_block {
                    true => write_new_block(&old, key, frames, code)?,
                    false => rewrite_expectation(&old, key, frames, code)?,
                };
                let fields = recorded_fields(frames, code)?;
                validate_edit(&old, &new, &scenario_path, &root, key, &fields)?;
                new
            }
        };
        Ok(PendingChange {
            pending_path: pending_path.to_path_buf(),
            pending,
            scenario_path,
            copied_from,
            old,
            new,
        })
    }

    /// True when the scenario already says what the pending file says.
    pub fn is_unchanged(&self) -> bool {
        self.old == self.new
    }

    /// The change as a unified diff of the scenario file.
    pub fn diff(&self) -> String {
        similar::TextDiff::from_lines(&self.old, &self.new)
            .unified_diff()
            .context_radius(3)
            .header(
                &format!("a/{}", self.pending.file),
                &match &self.copied_from {
                    Some(_) => format!("b/{}", self.scenario_path.display()),
                    None => format!("b/{}", self.pending.file),
                },
            )
            .to_string()
    }

    /// Accepts or rejects; `Skip` and `Quit` leave everything as it is.
    pub fn apply(&self, decision: Decision) -> Result<(), RecordError> {
        match decision {
            Decision::Accept => self.accept(),
            Decision::Reject => self.reject(),
            Decision::Skip | Decision::Quit => Ok(()),
        }
    }

    /// Rewrites the scenario file (atomically) and removes the pending file.
    pub fn accept(&self) -> Result<(), RecordError> {
        let err = |e| RecordError::io(&self.scenario_path, e);
        let source = self.copied_from.as_ref().unwrap_or(&self.scenario_path);
        let perms = std::fs::metadata(source).map_err(err)?.permissions();
        if let Some(parent) = self.scenario_path.parent() {
            std::fs::create_dir_all(parent).map_err(err)?;
        }
        write_atomic(&self.scenario_path, self.new.as_bytes()).map_err(err)?;
        // The temp file was created private: give the scenario its permissions back.
        std::fs::set_permissions(&self.scenario_path, perms).map_err(err)?;
        self.reject()
    }

    /// Removes the pending file; the scenario stays as it is.
    pub fn reject(&self) -> Result<(), RecordError> {
        std::fs::remove_file(&self.pending_path).map_err(|source| RecordError::PendingFile {
            path: self.pending_path.clone(),
            source,
        })
    }
}

/// After [`write_case_block`]: the file still loads with the same cases, and the case's
/// block `key` holds what was recorded.
fn check_case_block(
    old: &str,
    new: &str,
    path: &Path,
    scenarios_root: &Path,
    pending: &Pending,
) -> Result<(), RecordError> {
    use crate::scenario::cases::parse_file;
    let (key, exit_code) = (&pending.expect, pending.exit_code);
    let case = pending.case.as_deref().unwrap_or_default();
    let load = |t: &str| parse_file(t, path, scenarios_root);
    let (before, after) = (load(old)?, load(new)?);
    let ids = |s: &[Scenario]| s.iter().map(|s| s.id.clone()).collect::<Vec<_>>();
    if ids(&before) != ids(&after) {
        return Err(RecordError::CasesChanged { case: case.into() });
    }
    let s = (after.iter())
        .find(|s| s.case.as_deref() == Some(case))
        .ok_or_else(|| RecordError::CaseMissing { case: case.into() })?;
    let block = (s.file.expect.get(key.as_str())).ok_or_else(|| RecordError::CaseNoBlock {
        case: case.into(),
        key: key.clone(),
    })?;
    // Loading applies `frames_patch` to the frames of the block it refines, so what can be
    // checked here is the exit code; `record` checked the patched frames against the run.
    if exit_code.is_some() && block.exit_code != exit_code {
        return Err(RecordError::CaseNotHeld {
            case: case.into(),
            key: key.clone(),
        });
    }
    Ok(())
}

/// The scenario id a pending file is about (empty when it cannot be read).
pub fn scenario_of(pending_path: &Path) -> String {
    std::fs::read_to_string(pending_path)
        .ok()
        .and_then(|t| Pending::parse(&t).ok())
        .map(|p| p.scenario.into())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending_of(file: &str, exit_code: i32) -> Pending {
        Pending {
            scenario: "t/x".into(),
            file: file.into(),
            expect: "claude-code".into(),
            target: "command:fake".into(),
            version: "1".into(),
            recorded_at: None,
            notes: vec![],
            exit_code: Some(exit_code),
            frames: None,
            refines: None,
            frames_patch: None,
            new_block: false,
            case: None,
        }
    }

    #[test]
    fn accepting_rewrites_the_scenario_and_a_decision_on_a_gone_file_fails() {
        let tmp = tempfile::tempdir().unwrap();
        let project = Project::at(tmp.path());
        let scenario = project.root.join("scenarios/t/x.yaml");
        std::fs::create_dir_all(scenario.parent().unwrap()).unwrap();
        let text = "description: d\nprompt: p\nexpect:\n  claude-code:\n    exit_code: 0 # kept\n";
        std::fs::write(&scenario, text).unwrap();
        let pending = pending_of("scenarios/t/x.yaml", 3);
        let place = PendingPlace::in_checkout(&project);
        let path = pending.path_in(&place.dir);
        write_atomic(&path, pending.to_yaml().as_bytes()).unwrap();
        assert_eq!(scenario_of(&path), "t/x");

        let change = PendingChange::load(&project, &place, &path).unwrap();
        assert!(!change.is_unchanged());
        assert!(
            change.diff().contains("+    exit_code: 3 # kept"),
            "{}",
            change.diff()
        );
        change.apply(Decision::Skip).unwrap();
        assert!(path.exists());
        change.apply(Decision::Accept).unwrap();
        assert_eq!(
            std::fs::read_to_string(&scenario).unwrap(),
            text.replace("exit_code: 0", "exit_code: 3")
        );
        assert!(!path.exists());
        assert!(change.apply(Decision::Reject).is_err());
    }

    #[test]
    fn accepting_a_bundled_scenario_writes_the_projects_own_copy_and_leaves_the_bundle() {
        let (cache, repo) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let bundle = Project::at(cache.path().join("bundle-x"));
        let bundled = bundle.root.join("scenarios/t/x.yaml");
        std::fs::create_dir_all(bundled.parent().unwrap()).unwrap();
        let text = "description: d\nprompt: p\nexpect:\n  claude-code:\n    exit_code: 0\n";
        std::fs::write(&bundled, text).unwrap();
        let own = repo.path().join("streamcheck/scenarios");
        let place = PendingPlace {
            dir: repo.path().join("reports/pending"),
            own_copies: Some(own.clone()),
        };
        let pending = pending_of("scenarios/t/x.yaml", 3);
        let path = pending.path_in(&place.dir);
        write_atomic(&path, pending.to_yaml().as_bytes()).unwrap();

        let change = PendingChange::load(&bundle, &place, &path).unwrap();
        assert_eq!(change.scenario_path, own.join("t/x.yaml"));
        assert_eq!(change.copied_from.as_deref(), Some(bundled.as_path()));
        assert!(
            change.diff().contains("+    exit_code: 3"),
            "{}",
            change.diff()
        );
        change.apply(Decision::Accept).unwrap();
        assert_eq!(
            std::fs::read_to_string(own.join("t/x.yaml")).unwrap(),
            text.replace("exit_code: 0", "exit_code: 3")
        );
        assert_eq!(std::fs::read_to_string(&bundled).unwrap(), text);

        // A second recording edits the project's copy, not the bundle again.
        let pending = pending_of("scenarios/t/x.yaml", 4);
        write_atomic(&path, pending.to_yaml().as_bytes()).unwrap();
        let change = PendingChange::load(&bundle, &place, &path).unwrap();
        assert_eq!(change.copied_from, None);
        assert!(change.old.contains("exit_code: 3"));
    }
}
