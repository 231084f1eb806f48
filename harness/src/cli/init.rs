//! `streamcheck init`: a repository's first streamcheck files, from the templates in
//! `init/`. Writes nothing when one exists already, unless `--force`.

use super::setup::Location;
use super::Verdict;
use std::path::{Path, PathBuf};
use streamcheck::error::{Error, Result};
use streamcheck::install::supported::Versions;

/// Which CI the workflow is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Ci {
    Github,
    Gitlab,
}

/// The files `init` writes, relative to the folder it runs in, with their text.
fn files(ci: Ci, pinned: &str) -> Vec<(PathBuf, String)> {
    let repository = match env!("CARGO_PKG_REPOSITORY") {
        "" => "set-me-to-the-git-url-streamcheck-is-installed-from",
        url => url,
    };
    let fill = |t: &str| {
        t.replace("PINNED", pinned)
            .replace("REPOSITORY", repository)
    };
    let workflow = match ci {
        Ci::Github => (
            ".github/workflows/streamcheck.yml",
            include_str!("init/github.yml"),
        ),
        Ci::Gitlab => (".gitlab-ci.yml", include_str!("init/gitlab.yml")),
    };
    [
        ("streamcheck.toml", include_str!("init/streamcheck.toml")),
        (
            "streamcheck/scenarios/example/hello.yaml",
            include_str!("init/hello.yaml"),
        ),
        (
            "streamcheck/known-divergences.yaml",
            include_str!("init/known-divergences.yaml"),
        ),
        workflow,
    ]
    .into_iter()
    .map(|(path, text)| (PathBuf::from(path), fill(text)))
    .chain([(
        PathBuf::from(SCHEMA),
        streamcheck::scenario::json_schema_string(),
    )])
    .collect()
}

/// The scenario schema beside the scenarios, for the editor line each scenario starts with.
const SCHEMA: &str = "streamcheck/scenarios/schema.json";

/// What `.gitignore` gains: the reports folder of the project file `init` writes.
const IGNORED: &str = "/reports/streamcheck/";

/// Adds [`IGNORED`] to `dir/.gitignore` (made when missing) unless a line says it already;
/// whether it wrote.
fn ignore_reports(dir: &Path) -> Result<bool> {
    let path = dir.join(".gitignore");
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(Error::io(&path, e)),
    };
    if text.lines().any(|l| l.trim() == IGNORED) {
        return Ok(false);
    }
    let sep = if text.is_empty() || text.ends_with('\n') {
        ""
    } else {
        "\n"
    };
    let added =
        format!("{text}{sep}# streamcheck's reports (streamcheck.toml: report_dir)\n{IGNORED}\n");
    std::fs::write(&path, added).map_err(|e| Error::io(&path, e))?;
    Ok(true)
}

/// Write a project file (streamcheck.toml), an example scenario, an empty
/// known-divergences file and a CI workflow into the current folder.
#[derive(clap::Args)]
pub struct InitArgs {
    /// The CI the workflow is for.
    #[arg(long, value_enum, default_value = "github")]
    ci: Ci,
    /// Overwrite files that exist.
    #[arg(long)]
    force: bool,
}

impl InitArgs {
    pub fn exec(self, loc: &Location) -> Result<Verdict> {
        let cwd = std::env::current_dir().map_err(|e| Error::io(".", e))?;
        init(loc, &cwd, self.ci, self.force)
    }
}

pub fn init(loc: &Location, dir: &Path, ci: Ci, force: bool) -> Result<Verdict> {
    let setup = Location {
        config: None,
        ..loc.clone()
    }
    .setup()?;
    let pinned = Versions::load(&setup.project, "claude-code")
        .map_err(Error::Failed)?
        .pinned;
    let files = files(ci, &pinned);
    let existing: Vec<String> = (files.iter())
        .filter(|(p, _)| dir.join(p).exists())
        .map(|(p, _)| p.display().to_string())
        .collect();
    if !existing.is_empty() && !force {
        return Err(Error::Usage(format!(
            "init would overwrite {}: nothing written (--force to overwrite)",
            existing.join(", ")
        )));
    }
    for (path, text) in &files {
        let path = dir.join(path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        }
        std::fs::write(&path, text).map_err(|e| Error::io(&path, e))?;
        println!(
            "wrote {}",
            path.strip_prefix(dir).unwrap_or(&path).display()
        );
    }
    if ignore_reports(dir)? {
        println!("added {IGNORED} to .gitignore");
    }
    if env!("CARGO_PKG_REPOSITORY").is_empty() {
        println!("\nIn the CI workflow, set STREAMCHECK_GIT to the git URL you install streamcheck from.");
    }
    println!("\nNext:\n  streamcheck run --filter example/    # the example scenario against the pinned Claude Code {pinned}\n  streamcheck run                      # the whole catalogue and your scenarios");
    Ok(Verdict::AllGood)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reports_folder_is_ignored_once_and_the_users_lines_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        assert!(ignore_reports(dir.path()).unwrap(), "made when missing");
        std::fs::write(dir.path().join(".gitignore"), "target\nnode_modules").unwrap();
        assert!(ignore_reports(dir.path()).unwrap());
        assert!(!ignore_reports(dir.path()).unwrap(), "not twice");
        let text = std::fs::read_to_string(dir.path().join(".gitignore")).unwrap();
        assert!(
            text.starts_with("target\nnode_modules\n# streamcheck"),
            "{text}"
        );
        assert_eq!(text.matches(IGNORED).count(), 1, "{text}");
    }

    #[test]
    fn the_templates_are_filled_and_the_project_file_reads() {
        let files = files(Ci::Github, "2.1.330");
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in &files {
            assert!(!text.contains("PINNED"), "{}", path.display());
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, text).unwrap();
        }
        let config =
            streamcheck::config::Config::load(&dir.path().join("streamcheck.toml")).unwrap();
        assert_eq!(
            config.scenarios.folders,
            [PathBuf::from("streamcheck/scenarios")]
        );
        let example = dir.path().join("streamcheck/scenarios/example/hello.yaml");
        streamcheck::scenario::Scenario::load(&example, &dir.path().join("streamcheck/scenarios"))
            .unwrap();
        let known = dir.path().join("streamcheck/known-divergences.yaml");
        assert!(streamcheck::known::KnownList::load(&known, "k")
            .unwrap()
            .entries
            .is_empty());
        assert!(files.iter().any(|(p, _)| p.ends_with("streamcheck.yml")));
        let schema = dir.path().join(SCHEMA);
        let schema: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(schema).unwrap()).unwrap();
        assert!(schema.get("properties").is_some(), "a JSON Schema");
        let hello = std::fs::read_to_string(&example).unwrap();
        assert!(
            hello.starts_with("# yaml-language-server: $schema=../schema.json"),
            "the example names the schema beside it"
        );
        assert!(super::files(Ci::Gitlab, "1")
            .iter()
            .any(|(p, _)| p.ends_with(".gitlab-ci.yml")));
    }
}
