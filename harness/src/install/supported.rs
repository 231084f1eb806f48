//! The versions of a target the project supports, declared in
//! `targets/<target>/versions.yaml`, and the target names that stand for several or
//! for the newest: `claude-code@supported`, `claude-code@latest`.

pub use super::data::Versions;
use super::error::InstallError;
use crate::dialect::{Dialect, NpmPin};
use crate::install::project::Project;

use crate::install::spec::TargetSpec;
use crate::process_group;
use std::path::Path;

impl Versions {
    /// `targets/<target>/versions.yaml` of `project`.
    pub fn file(project: &Project, target: &str) -> std::path::PathBuf {
        Versions::path(&project.root, target)
    }

    /// `target`'s list, read again (a target's resolved copy is [`Project::data`]'s).
    pub fn load(project: &Project, target: &str) -> Result<Versions, InstallError> {
        Versions::read(&project.root, target)
    }
}

/// What a name on the command line stands for: one target, or several.
pub fn expand(name: &str, project: &Project) -> Result<Vec<TargetSpec>, InstallError> {
    let Some((base, word)) = name.split_once('@') else {
        return TargetSpec::parse(name).map(|s| vec![s]);
    };
    match word {
        "supported" => {
            let versions = Versions::load(project, base)?;
            versions
                .supported
                .iter()
                .map(|v| pinned_or_versioned(base, v, &versions.pinned))
                .collect()
        }
        "latest" => {
            let pin = NpmPin::of(TargetSpec::parse(base)?.dialect).map_err(|_| {
                InstallError::LatestNotOnNpm {
                    name: name.to_string(),
                }
            })?;
            let version = latest_on_npm(pin.package)?;
            log::info!(
                "{base}@latest is {version} (npm view {} version)",
                pin.package
            );
            TargetSpec::parse(&format!("{base}@{version}")).map(|s| vec![s])
        }
        _ => TargetSpec::parse(name).map(|s| vec![s]),
    }
}

/// `claude-code@V`: the pinned install when V is the pin (named with its version, so a
/// matrix report has one column per version), else V from the cache.
pub fn pinned_or_versioned(
    base: &str,
    version: &str,
    pinned: &str,
) -> Result<TargetSpec, InstallError> {
    let name = format!("{base}@{version}");
    if version == pinned {
        let mut spec = TargetSpec::parse(base)?;
        spec.name = name.into();
        return Ok(spec);
    }
    TargetSpec::parse(&name)
}

/// The newest release of an npm package, as the registry says now.
fn latest_on_npm(package: &str) -> Result<String, InstallError> {
    npm_view(package, "version")
}

/// Every version of an npm package the registry lists, oldest first as it lists them.
pub fn published_on_npm(package: &str) -> Result<Vec<String>, InstallError> {
    let text = npm_view(package, "versions")?;
    serde_json::from_str(&text).map_err(|source| InstallError::NpmVersionsNotJson {
        package: package.to_string(),
        source,
    })
}

/// How long the registry may take to answer `npm view`.
const NPM_VIEW_LIMIT: std::time::Duration = std::time::Duration::from_secs(120);

/// `npm view PACKAGE FIELD` (as JSON for a list), trimmed.
fn npm_view(package: &str, field: &str) -> Result<String, InstallError> {
    let what = format!("npm view {package} {field}");
    let mut npm = process_group::piped("npm");
    npm.args(["view", package, field, "--json"]);
    let out = process_group::run_blocking(npm, Some(NPM_VIEW_LIMIT))
        .map_err(|source| InstallError::NpmViewCannotRun {
            package: package.to_string(),
            field: field.to_string(),
            source,
        })?
        .success(&what, Some(NPM_VIEW_LIMIT))?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if text.is_empty() {
        return Err(InstallError::NpmViewPrintedNothing {
            package: package.to_string(),
            field: field.to_string(),
        });
    }
    // A single value comes back as a JSON string.
    Ok(serde_json::from_str::<String>(&text).unwrap_or(text))
}

/// The version `package.json` in `dir` pins for Claude Code.
pub fn pinned_in_package_json(dir: &Path) -> Result<String, InstallError> {
    let package = NpmPin::of(Dialect::ClaudeCode)
        .map_err(InstallError::NotFromNpm)?
        .package;
    let path = dir.join("package.json");
    let text = std::fs::read_to_string(&path).map_err(|e| InstallError::io(&path, e))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| InstallError::json(&path, e))?;
    match v["dependencies"][package].as_str() {
        Some(pinned) => Ok(pinned.to_string()),
        None => Err(InstallError::NoPin {
            path,
            package: package.to_string(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::install::{Source, CLAUDE_CODE_DIR};

    fn this_project() -> Project {
        Project::discover(Path::new(env!("CARGO_MANIFEST_DIR"))).expect("the repository")
    }

    #[test]
    fn the_declared_pin_is_the_one_package_json_installs() {
        let project = this_project();
        let versions = Versions::load(&project, "claude-code").unwrap();
        let pinned = pinned_in_package_json(&project.root.join(CLAUDE_CODE_DIR)).unwrap();
        assert_eq!(versions.pinned, pinned);
        assert!(versions.supported.contains(&pinned));
        for v in ["2.1.74", "2.1.197", "2.1.330"] {
            assert!(versions.supported.iter().any(|s| s == v), "{v} supported");
        }
    }

    #[test]
    fn supported_expands_to_one_target_per_version() {
        let dir = tempfile::tempdir().unwrap();
        let project = Project::at(dir.path());
        let file = Versions::file(&project, "claude-code");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(
            &file,
            "pinned: 2.1.197\nsupported: [2.1.74, 2.1.197, 2.1.330]\n",
        )
        .unwrap();
        let specs = expand("claude-code@supported", &project).unwrap();
        let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "claude-code@2.1.74",
                "claude-code@2.1.197",
                "claude-code@2.1.330"
            ]
        );
        assert_eq!(
            specs[1].source,
            Source::PinnedNpm,
            "the pin is not reinstalled"
        );
        assert_eq!(
            specs[2].source,
            Source::Npm {
                version: "2.1.330".into()
            }
        );
        assert_eq!(expand("claude-code@2.1.5", &project).unwrap().len(), 1);
        assert!(expand("caliban@supported", &project)
            .unwrap_err()
            .to_string()
            .contains("versions.yaml"));
        assert!(expand("caliban@latest", &project).is_err());
    }
}
