//! `streamcheck init`: a repository's first streamcheck files, from the templates in
//! `init/`. Writes nothing when one exists already, unless `--force`.

use super::setup::Location;
use super::Verdict;
use std::path::{Path, PathBuf};
use streamcheck::error::{Error, Result};
use streamcheck::supported::Versions;

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
    .collect()
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
        assert!(super::files(Ci::Gitlab, "1")
            .iter()
            .any(|(p, _)| p.ends_with(".gitlab-ci.yml")));
    }
}
