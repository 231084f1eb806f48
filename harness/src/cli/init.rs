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

/// The streamcheck build a generated workflow installs (`cargo install --git --rev`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Build {
    /// The git URL it is installed from; `None` when the build does not know its origin.
    pub git: Option<String>,
    /// The commit it is built from, else the tag of its version.
    pub rev: String,
}

impl Build {
    /// This binary's own build: its `origin` and commit when built in a git checkout.
    pub fn this() -> Build {
        let known = |s: &'static str| Some(s).filter(|s| !s.is_empty());
        Build {
            git: known(env!("STREAMCHECK_GIT_URL"))
                .or(known(env!("CARGO_PKG_REPOSITORY")))
                .map(str::to_string),
            rev: known(env!("STREAMCHECK_GIT_REV"))
                .map_or_else(|| format!("v{}", env!("CARGO_PKG_VERSION")), str::to_string),
        }
    }
}

/// Shards of the generated CI's run job.
const SHARDS: usize = 2;

/// The bundled topics `init`'s project file takes: the frames a program reading the output
/// sees (text and results, tool calls, file tools, API errors).
pub const CONSUMER_TOPICS: [&str; 4] = ["basics", "tools", "files", "errors"];

/// The topics `init --consumer` adds: the output the probes change (`stream_event`
/// frames for `new-stream-event`) besides what [`CONSUMER_TOPICS`] prints.
pub const PROBE_TOPICS: [&str; 1] = ["streaming"];

/// A parser `init --consumer` sets up: its name in `[consumers.NAME]` and its command.
pub struct ConsumerSetup {
    pub name: String,
    pub command: String,
}

impl ConsumerSetup {
    /// Named after the command's first file-like word (`python3 mysdk/parse.py`: `parse`).
    pub fn of(command: &str) -> ConsumerSetup {
        let word = (command.split_whitespace())
            .find(|w| w.contains('.') || w.contains('/'))
            .or(command.split_whitespace().next())
            .unwrap_or("parser");
        let stem = Path::new(word)
            .file_stem()
            .map_or("parser".into(), |s| s.to_string_lossy().into_owned());
        let name: String = (stem.chars())
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '-'
                }
            })
            .collect();
        ConsumerSetup {
            name: if name.is_empty() {
                "parser".into()
            } else {
                name
            },
            command: command.to_string(),
        }
    }
}

/// One file `init` writes: where, its text, and what to do with it next.
struct Written {
    path: PathBuf,
    text: String,
    next: String,
}

/// The files `init` writes, relative to the folder it runs in; with `reimplementation`
/// (the CLI's path), the project file gates that CLI (`protocol = "parity"`, `supports`);
/// with `consumer`, it feeds that parser (`[consumers.NAME]`, the probes' topics, a CI job).
fn files(
    ci: Ci,
    pinned: &str,
    build: &Build,
    reimplementation: Option<&Path>,
    consumer: Option<&ConsumerSetup>,
) -> Vec<Written> {
    let probed = consumer.map_or(&[][..], |_| &PROBE_TOPICS[..]);
    let topics: Vec<String> = (CONSUMER_TOPICS.iter().chain(probed))
        .map(|t| format!("\"{t}\""))
        .collect();
    let with_consumer = |template: &str, part: &str| match consumer {
        None => template.to_string(),
        Some(c) => format!("{template}{part}")
            .replace("@CONSUMER_NAME@", &c.name)
            .replace("@CONSUMER_COMMAND@", &toml_string(&c.command)),
    };
    let shards: Vec<String> = (1..=SHARDS).map(|k| k.to_string()).collect();
    let fill = |t: &str| {
        t.replace("@PINNED@", pinned)
            .replace("@REPOSITORY@", build.git.as_deref().unwrap_or(UNKNOWN_GIT))
            .replace("@REVISION@", &build.rev)
            .replace("@VERSION@", env!("CARGO_PKG_VERSION"))
            .replace("@SHARD_LIST@", &shards.join(", "))
            .replace("@SHARDS@", &SHARDS.to_string())
            .replace("@BUNDLED@", &format!("[{}]", topics.join(", ")))
    };
    let workflow = match ci {
        Ci::Github => (
            ".github/workflows/streamcheck.yml",
            with_consumer(include_str!("init/github.yml"), include_str!("init/github-consume.yml")),
            "commit it: pushes and pull requests run the gate, and a nightly job runs the newest Claude Code release".to_string(),
        ),
        Ci::Gitlab => (
            ".gitlab-ci.yml",
            with_consumer(include_str!("init/gitlab.yml"), include_str!("init/gitlab-consume.yml")),
            "commit it, and add a pipeline schedule (CI/CD > Schedules) for the nightly job on the newest release".to_string(),
        ),
    };
    [
        match reimplementation {
            None => (
                "streamcheck.toml",
                with_consumer(include_str!("init/streamcheck.toml"), include_str!("init/consumer.toml")),
                format!("which bundled topics run (now {}) and your targets; `streamcheck list` shows what is selected", CONSUMER_TOPICS.join(", ")),
            ),
            Some(_) => (
                "streamcheck.toml",
                with_consumer(include_str!("init/reimplementation.toml"), include_str!("init/consumer.toml")),
                "say what your CLI supports (`supports`) and what it does not do (`exclude`); `streamcheck list --target NAME` shows what runs".to_string(),
            ),
        },
        (
            "streamcheck/scenarios/example/hello.yaml",
            include_str!("init/hello.yaml").to_string(),
            format!("`streamcheck run --filter example/` runs it against the pinned Claude Code {pinned}; copy it for what your program reads (`streamcheck show basics/text-reply` prints a bundled one)"),
        ),
        (
            "streamcheck/known-divergences.yaml",
            include_str!("init/known-divergences.yaml").to_string(),
            "empty: name a divergence here only when your CLI is known to have it".to_string(),
        ),
        workflow,
    ]
    .into_iter()
    .map(|(path, text, next)| Written {
        path: PathBuf::from(path),
        text: fill_target(&fill(&text), reimplementation),
        next,
    })
    .chain([Written {
        path: PathBuf::from(SCHEMA),
        text: streamcheck::scenario::json_schema_string(),
        next: "your editor checks scenario files against it (their first line names it)".to_string(),
    }])
    .collect()
}

/// The re-implementation template's target: its command and a name from its file name.
fn fill_target(text: &str, command: Option<&Path>) -> String {
    let Some(command) = command else {
        return text.to_string();
    };
    let name = (command.file_stem())
        .map(|s| {
            s.to_string_lossy().replace(
                |c: char| !c.is_ascii_alphanumeric() && c != '-' && c != '_',
                "-",
            )
        })
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "mycli".into());
    let command = command
        .display()
        .to_string()
        .replace('\\', "\\\\")
        .replace('"', "\\\"");
    text.replace("@NAME@", &name).replace("@COMMAND@", &command)
}

/// `s` as a TOML basic string.
fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// What the workflow's `STREAMCHECK_GIT` says when this build does not know its origin.
const UNKNOWN_GIT: &str = "set-me-to-the-git-url-streamcheck-is-installed-from";

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
    /// The git URL the CI workflow installs streamcheck from (default: the one this
    /// build was made from, when it knows it).
    #[arg(long, value_name = "GIT_URL")]
    install_from: Option<String>,
    /// Your re-implementation of Claude Code's headless protocol (its executable, relative
    /// to this folder): the project file gates it, with `protocol = "parity"` and
    /// `supports = []`, on the bundled basics.
    #[arg(long, value_name = "COMMAND")]
    reimplementation: Option<PathBuf>,
    /// Your parser of `claude -p` output (a shell command reading stream-json on stdin):
    /// adds it as `[consumers.NAME]`, the `streaming` topic the probes need, and a CI job
    /// running `consume` on the pin for pull requests and on the newest release with
    /// --probes nightly.
    #[arg(long, value_name = "CMD")]
    consumer: Option<String>,
}

impl InitArgs {
    pub fn exec(self, loc: &Location) -> Result<Verdict> {
        let cwd = std::env::current_dir().map_err(|e| Error::io(".", e))?;
        let mut build = Build::this();
        build.git = self.install_from.or(build.git);
        let reimplementation = self.reimplementation.as_deref();
        let consumer = self.consumer.as_deref().map(ConsumerSetup::of);
        init(
            loc,
            &cwd,
            self.ci,
            self.force,
            &build,
            reimplementation,
            consumer.as_ref(),
        )
    }
}

pub fn init(
    loc: &Location,
    dir: &Path,
    ci: Ci,
    force: bool,
    build: &Build,
    reimplementation: Option<&Path>,
    consumer: Option<&ConsumerSetup>,
) -> Result<Verdict> {
    let setup = Location {
        config: None,
        ..loc.clone()
    }
    .setup()?;
    let pinned = Versions::load(&setup.project, "claude-code")?.pinned;
    let files = files(ci, &pinned, build, reimplementation, consumer);
    let existing: Vec<String> = (files.iter())
        .filter(|f| dir.join(&f.path).exists())
        .map(|f| f.path.display().to_string())
        .collect();
    if !existing.is_empty() && !force {
        return Err(Error::Usage(format!(
            "init would overwrite {}: nothing written (--force to overwrite)",
            existing.join(", ")
        )));
    }
    for f in &files {
        let path = dir.join(&f.path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        }
        std::fs::write(&path, &f.text).map_err(|e| Error::io(&path, e))?;
        println!("wrote {}\n    {}", f.path.display(), f.next);
    }
    if ignore_reports(dir)? {
        println!(
            "added {IGNORED} to .gitignore\n    commit it: reports stay out of the repository"
        );
    }
    if build.git.is_none() {
        println!("\nThis streamcheck does not know the git URL it was built from: set STREAMCHECK_GIT in the CI workflow, or run init again with --install-from URL.");
    }
    if let Some(c) = consumer {
        println!("\nYour parser is [consumers.{}]:\n  streamcheck consume --consumer {}            # the pinned release's output, as printed\n  streamcheck consume --consumer {} --probes   # and changed the ways releases changed it", c.name, c.name, c.name);
        return Ok(Verdict::AllGood);
    }
    println!("\nNext:\n  streamcheck run --filter example/    # the example scenario against the pinned Claude Code {pinned}\n  streamcheck run                      # your scenarios and the bundled topics\n  open reports/streamcheck/runs/latest/index.html");
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

    fn build() -> Build {
        Build {
            git: Some("https://git.example/streamcheck.git".into()),
            rev: "0123abcd".into(),
        }
    }

    #[test]
    fn the_templates_are_filled_and_the_project_file_reads() {
        let files = files(Ci::Github, "2.1.330", &build(), None, None);
        let dir = tempfile::tempdir().unwrap();
        let leftover = regex::Regex::new("@[A-Z_]+@").unwrap();
        for f in &files {
            assert!(!f.text.contains("PINNED"), "{}", f.path.display());
            assert!(
                !leftover.is_match(&f.text),
                "{}: {}",
                f.path.display(),
                f.text
            );
            assert!(!f.next.is_empty(), "a next step for {}", f.path.display());
            let path = dir.path().join(&f.path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &f.text).unwrap();
        }
        let config =
            streamcheck::config::Config::load(&dir.path().join("streamcheck.toml")).unwrap();
        assert_eq!(
            config.scenarios.folders,
            [PathBuf::from("streamcheck/scenarios")]
        );
        assert_eq!(
            config.scenarios.bundled,
            streamcheck::config::Bundled::Topics(
                CONSUMER_TOPICS.iter().map(|t| t.to_string()).collect()
            ),
            "the consumer's topics, not the whole catalogue"
        );
        let catalogue = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
        for topic in CONSUMER_TOPICS {
            assert!(catalogue.join(topic).is_dir(), "{topic} is a bundled topic");
        }
        let example = dir.path().join("streamcheck/scenarios/example/hello.yaml");
        streamcheck::scenario::Scenario::load(&example, &dir.path().join("streamcheck/scenarios"))
            .unwrap();
        let known = dir.path().join("streamcheck/known-divergences.yaml");
        assert!(streamcheck::known::KnownList::load(&known, "k")
            .unwrap()
            .entries
            .is_empty());
        let workflow = files
            .iter()
            .find(|f| f.path.ends_with("streamcheck.yml"))
            .unwrap();
        assert!(
            workflow
                .text
                .contains("STREAMCHECK_GIT: https://git.example/streamcheck.git")
                && workflow.text.contains("STREAMCHECK_REV: 0123abcd")
                && workflow.text.contains("shard: [1, 2]"),
            "{}",
            workflow.text
        );
        let schema = dir.path().join(SCHEMA);
        let schema: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(schema).unwrap()).unwrap();
        assert!(schema.get("properties").is_some(), "a JSON Schema");
        let hello = std::fs::read_to_string(&example).unwrap();
        assert!(
            hello.starts_with("# yaml-language-server: $schema=../schema.json"),
            "the example names the schema beside it"
        );
        let gitlab = super::files(Ci::Gitlab, "1", &build(), None, None);
        let gitlab = gitlab
            .iter()
            .find(|f| f.path.ends_with(".gitlab-ci.yml"))
            .unwrap();
        assert!(gitlab.text.contains("parallel: 2"), "{}", gitlab.text);
    }

    #[test]
    fn a_consumer_gets_its_entry_the_probes_topics_and_a_consume_job() {
        let c = ConsumerSetup::of("python3 mysdk/parse.py --strict");
        let leftover = regex::Regex::new("@[A-Z_]+@").unwrap();
        assert_eq!(c.name, "parse");
        for ci in [Ci::Github, Ci::Gitlab] {
            let files = files(ci, "2.1.330", &build(), None, Some(&c));
            let dir = tempfile::tempdir().unwrap();
            for f in &files {
                assert!(!leftover.is_match(&f.text), "{}", f.text);
                let path = dir.path().join(&f.path);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, &f.text).unwrap();
            }
            let config =
                streamcheck::config::Config::load(&dir.path().join("streamcheck.toml")).unwrap();
            assert_eq!(config.consumers["parse"].command, c.command);
            let streamcheck::config::Bundled::Topics(topics) = &config.scenarios.bundled else {
                panic!("topics")
            };
            assert!(topics.iter().any(|t| t == "streaming"), "{topics:?}");
            let workflow = files
                .iter()
                .find(|f| f.path.extension().is_some_and(|e| e == "yml"))
                .unwrap();
            let yaml: serde_yaml::Value = serde_yaml::from_str(&workflow.text).unwrap();
            let text = serde_yaml::to_string(&yaml).unwrap();
            assert!(
                text.contains("consume --consumer parse --report-dir"),
                "{text}"
            );
            assert!(
                text.contains("consume --consumer parse --target claude-code@latest --probes"),
                "{text}"
            );
        }
        let plain = files(Ci::Github, "1", &build(), None, None);
        assert!(plain.iter().all(|f| !f.text.contains("consume --consumer")));
    }

    #[test]
    fn a_build_without_an_origin_still_pins_a_revision() {
        let build = Build::this();
        assert!(!build.rev.is_empty());
        let files = files(Ci::Github, "1", &Build { git: None, ..build }, None, None);
        assert!(files.iter().any(|f| f.text.contains(UNKNOWN_GIT)));
    }

    #[test]
    fn the_reimplementation_template_gates_its_cli_under_parity() {
        let files = files(
            Ci::Github,
            "2.1.330",
            &build(),
            Some(Path::new("bin/my cli")),
            None,
        );
        let toml = files
            .iter()
            .find(|f| f.path.ends_with("streamcheck.toml"))
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("streamcheck.toml");
        std::fs::write(&path, &toml.text).unwrap();
        let config = streamcheck::config::Config::load(&path).unwrap();
        let t = &config.targets["my-cli"];
        assert_eq!(t.command.as_deref(), Some(Path::new("bin/my cli")));
        assert_eq!(t.protocol, Some(streamcheck::protocol::Policy::Parity));
        assert_eq!(t.supported("my-cli").unwrap(), Some(Default::default()));
        assert_eq!(
            t.conforms_to_version("my-cli").unwrap().as_deref(),
            Some("2.1.330")
        );
        assert!(config.scenarios.exclude.is_empty());
    }
}
