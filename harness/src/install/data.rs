//! What a project holds for one dialect, read once per project ([`DialectData`]): its
//! known divergences (the dialect's list with the project's), release-wide rules, tool
//! names, supported releases and protocol inventories. A target, the planner and every
//! command that needs one of these take it from [`Project::data`](super::Project::data),
//! so each file is read once however many releases of the dialect a run installs.

use super::error::InstallError;
use crate::dialect::Dialect;
use crate::expectation::rules::Rules;
use crate::known::KnownList;
use crate::protocol::{Policy, ProtocolCheck};
use crate::toolmap::ToolMap;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// One dialect's data files in a project, loaded.
#[derive(Debug)]
pub struct DialectData {
    pub dialect: Dialect,
    /// `targets/<dialect>/known-divergences.yaml` (see [`crate::known`]); none when missing.
    pub known: Arc<KnownList>,
    /// `targets/<dialect>/rules.yaml`: release-wide rules for every scenario of the dialect.
    pub rules: Arc<Rules>,
    /// `targets/<dialect>/tools.yaml`: neutral tool names -> the dialect's.
    pub tools: ToolMap,
    /// `targets/<dialect>/versions.yaml` when the dialect has one.
    pub versions: Option<Versions>,
    /// The dialect's protocol inventories, read under [`Policy::Strict`] (a trial's own
    /// policy is applied with [`ProtocolCheck::under`]).
    pub protocol: ProtocolCheck,
}

impl DialectData {
    /// Reads `dialect`'s files in the project at `root`; the first that does not load is
    /// the error.
    pub fn load(root: &Path, dialect: Dialect) -> Result<DialectData, InstallError> {
        let key = dialect.conventions().expect_key();
        let known_file = format!("targets/{key}/known-divergences.yaml");
        let known = KnownList::load(&root.join(&known_file), &known_file)?;
        let tools = ToolMap::load(root, key)?;
        let versions = match Versions::path(root, key).exists() {
            true => Some(Versions::read(root, key)?),
            false => None,
        };
        Ok(DialectData {
            dialect,
            known: Arc::new(known),
            rules: Arc::new(Rules::load(root, key)?),
            tools,
            versions,
            protocol: ProtocolCheck::load(Policy::Strict, root, dialect),
        })
    }

    /// No known divergences, rules or tool names: what the harness's own fake targets
    /// run with. The protocol inventories are still read from `root`.
    pub fn empty(root: &Path, dialect: Dialect) -> DialectData {
        DialectData {
            dialect,
            known: Default::default(),
            rules: Default::default(),
            tools: ToolMap::default(),
            versions: None,
            protocol: ProtocolCheck::load(Policy::Strict, root, dialect),
        }
    }
}

/// The dialects' data a project has loaded so far, shared by every clone of the project.
#[derive(Clone, Default)]
pub struct Loaded(Arc<Mutex<BTreeMap<Dialect, Arc<DialectData>>>>);

impl Loaded {
    /// `dialect`'s data, read from `root` the first time it is asked for. A load that fails
    /// is not kept: asking again reads the files again.
    pub fn get(&self, root: &Path, dialect: Dialect) -> Result<Arc<DialectData>, InstallError> {
        let mut loaded = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(data) = loaded.get(&dialect) {
            return Ok(data.clone());
        }
        let data = Arc::new(DialectData::load(root, dialect)?);
        loaded.insert(dialect, data.clone());
        Ok(data)
    }
}

impl std::fmt::Debug for Loaded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let loaded = self.0.lock().unwrap_or_else(|e| e.into_inner());
        f.debug_set().entries(loaded.keys()).finish()
    }
}

/// `targets/<target>/versions.yaml`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Versions {
    /// The version `cargo test` and a bare `--target claude-code` run; it must be the one
    /// `package.json` pins.
    pub pinned: String,
    /// Every version the catalogue must pass (or skip with a reason) on.
    pub supported: Vec<String>,
}

impl Versions {
    /// Where `key`'s list is in the project at `root`.
    pub fn path(root: &Path, key: &str) -> PathBuf {
        root.join("targets").join(key).join("versions.yaml")
    }

    /// Reads `key`'s list from the project at `root`: missing, unparsable or empty is an error.
    pub fn read(root: &Path, key: &str) -> Result<Versions, InstallError> {
        let path = Versions::path(root, key);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(source) => {
                return Err(InstallError::NoVersionsFile {
                    path,
                    target: key.to_string(),
                    source,
                })
            }
        };
        let versions: Versions =
            serde_yaml::from_str(&text).map_err(|e| InstallError::yaml(&path, e))?;
        if versions.supported.is_empty() {
            return Err(InstallError::NoSupportedVersion { path });
        }
        Ok(versions)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::install::Project;

    fn project_with(files: &[(&str, &str)]) -> (tempfile::TempDir, Project) {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let project = Project::at(dir.path());
        (dir, project)
    }

    #[test]
    fn every_clone_of_a_project_shares_one_copy_of_a_dialects_data() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let project = Project::at(root);
        let first = project.data(Dialect::ClaudeCode).unwrap();
        let again = project.clone().data(Dialect::ClaudeCode).unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        assert!(!first.known.entries.is_empty() && first.versions.is_some());
        let other = project.data(Dialect::Caliban).unwrap();
        assert!(!Arc::ptr_eq(&first, &other) && other.dialect == Dialect::Caliban);
        let fresh = Project::at(root).data(Dialect::ClaudeCode).unwrap();
        assert!(
            !Arc::ptr_eq(&first, &fresh),
            "another project reads its own"
        );
    }

    #[test]
    fn a_file_that_does_not_load_is_the_error_and_is_read_again_when_asked_again() {
        let rules = "targets/claude-code/rules.yaml";
        let (dir, project) = project_with(&[(rules, "rules: [unclosed")]);
        let e = project.data(Dialect::ClaudeCode).unwrap_err().to_string();
        assert!(e.contains("rules.yaml"), "{e}");
        std::fs::write(dir.path().join(rules), "rules: []\n").unwrap();
        let data = project.data(Dialect::ClaudeCode).unwrap();
        assert!(data.known.entries.is_empty() && data.versions.is_none());
    }
}
