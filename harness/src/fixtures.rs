//! `$FIXTURES` in what a scenario hands the CLI: its args, env values, and the text of
//! `files` / `home_files`. It names an absolute folder holding the project's
//! `fixtures` (the MCP server in `mcp-server/`), so a scenario can start a test
//! fixture from the trial's sandbox. The stub script and the expectations do not see it.
//!
//! Fixtures are installed like the CLIs: a copy of `fixtures` in the cache, keyed
//! by its content, with `npm ci` run in each folder that has a `package-lock.json`, and
//! each such folder's `main` started once to see that it starts. That happens on the first
//! trial that needs it, once per process; a fixture that cannot be installed or started
//! fails the trials that need it, naming why.

use crate::process_group;
use crate::scenario::{FileContent, Scenario};
use serde_json::Value;
use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

mod error;
pub use error::{FixturesError, InstallStep, StartFailure};

pub const VARIABLE: &str = "$FIXTURES";

/// The fixture sources of the project at `root` (the checkout, `--root`, or the bundled
/// catalogue): `<root>/fixtures`. The project, not the scenario's folder: a
/// project's own scenarios (`[scenarios] folders` in `streamcheck.toml`) use them too.
pub fn source(root: &Path) -> PathBuf {
    root.join("fixtures")
}

/// Where the fixtures of the project at `root` are installed: `<cache>/fixtures-<hash>`.
pub fn location(root: &Path) -> PathBuf {
    let project = crate::install::project::Project::at(root);
    project
        .cache_dir()
        .join(format!("fixtures-{:016x}", content_hash(&source(root))))
}

/// The fixtures of the project at `root`, installed and checked (see [`installed`]).
pub fn install(root: &Path) -> Result<PathBuf, FixturesError> {
    installed(&source(root), &location(root))
}

/// The scenario with `$FIXTURES` replaced by where the fixtures of the project at `root`
/// are, or itself when it does not use the variable. Installs nothing: the planner
/// substitutes, the runner installs ([`install`]) before a trial that [`uses`] them.
pub fn resolve<'a>(scenario: &'a Scenario, root: &Path) -> Cow<'a, Scenario> {
    if !uses_variable(scenario) {
        return Cow::Borrowed(scenario);
    }
    substituted(scenario, &location(root))
}

/// Whether the scenario hands the CLI `$FIXTURES`.
pub fn uses(scenario: &Scenario) -> bool {
    uses_variable(scenario)
}

fn substituted<'a>(scenario: &Scenario, dir: &Path) -> Cow<'a, Scenario> {
    let dir = dir.display().to_string();
    let sub = |s: &String| s.replace(VARIABLE, &dir);
    let mut resolved = scenario.clone();
    let file = &mut resolved.file;
    file.args = file.args.iter().map(sub).collect();
    file.env.values_mut().for_each(|v| *v = sub(v));
    for content in file.files.values_mut().chain(file.home_files.values_mut()) {
        substitute_content(content, &dir);
    }
    for expect in file.expect.values_mut() {
        if let Some(args) = &mut expect.args {
            *args = args.iter().map(sub).collect();
        }
        expect.env.values_mut().for_each(|v| *v = sub(v));
    }
    Cow::Owned(resolved)
}

/// Installs `source` at `dest` once per process (and once per content on the machine).
pub fn installed(source: &Path, dest: &Path) -> Result<PathBuf, FixturesError> {
    type Slot = Arc<OnceLock<Result<PathBuf, FixturesError>>>;
    static DONE: OnceLock<Mutex<HashMap<PathBuf, Slot>>> = OnceLock::new();
    let slot = {
        let mut done = DONE
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        done.entry(dest.to_path_buf()).or_default().clone()
    };
    slot.get_or_init(|| {
        install_copy(source, dest)
            .and_then(|()| check_starts(dest))
            .map(|()| dest.to_path_buf())
    })
    .clone()
}

const MARKER: &str = ".streamcheck-installed";

fn install_copy(source: &Path, dest: &Path) -> Result<(), FixturesError> {
    if dest.join(MARKER).is_file() {
        return Ok(());
    }
    let fail = |step| FixturesError::Install {
        from: source.to_path_buf(),
        dest: dest.to_path_buf(),
        step,
    };
    let tmp = dest.with_extension(format!("tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    copy_tree(source, &tmp).map_err(|e| fail(InstallStep::Copy(Arc::new(e))))?;
    for folder in node_folders(&tmp) {
        log::info!(
            "installing the test fixture {} (npm ci) ...",
            folder.file_name().unwrap_or_default().to_string_lossy()
        );
        let mut npm = process_group::piped("npm");
        npm.args(["ci", "--no-audit", "--no-fund", "--prefix"])
            .arg(&folder);
        let out = process_group::run_blocking(npm, Some(NPM_CI_LIMIT))
            .map_err(|e| fail(InstallStep::NpmCiCannotRun(Arc::new(e))))?;
        if !out.status.is_some_and(|s| s.success()) {
            let _ = std::fs::remove_dir_all(&tmp);
            return Err(fail(match out.status {
                Some(_) => InstallStep::NpmCiFailed {
                    line: last_line(&out.stderr),
                },
                None => InstallStep::NpmCiTimedOut {
                    limit: NPM_CI_LIMIT,
                },
            }));
        }
    }
    std::fs::write(tmp.join(MARKER), "").map_err(|e| fail(InstallStep::Marker(Arc::new(e))))?;
    // Another process may have finished first: its copy is as good as ours.
    if std::fs::rename(&tmp, dest).is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
        if !dest.join(MARKER).is_file() {
            return Err(fail(InstallStep::Incomplete));
        }
    }
    Ok(())
}

/// How long `npm ci` of a fixture may take.
const NPM_CI_LIMIT: Duration = Duration::from_secs(30 * 60);
/// How long a fixture's `main` may take to exit with stdin closed.
const START_LIMIT: Duration = Duration::from_secs(60);

/// Starts each Node fixture's `main` with stdin closed: it must exit 0 (a server that
/// reads stdin ends at its end). A missing module or a syntax error names itself here.
fn check_starts(dest: &Path) -> Result<(), FixturesError> {
    for folder in node_folders(dest) {
        let Some(main) = package_main(&folder) else {
            continue;
        };
        let name = folder
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let main = folder.join(&main);
        let mut node = process_group::piped("node");
        node.arg(&main).stdout(Stdio::null());
        let why = match process_group::run_blocking(node, Some(START_LIMIT)) {
            Err(e) => StartFailure::CannotRun(Arc::new(e)),
            Ok(ended) => match ended.status {
                None => StartFailure::TimedOut { limit: START_LIMIT },
                Some(status) if !status.success() => StartFailure::Failed {
                    status,
                    line: last_line(&ended.stderr),
                },
                Some(_) => continue,
            },
        };
        return Err(FixturesError::DoesNotStart { name, main, why });
    }
    Ok(())
}

/// Folders directly under `dir` with a `package-lock.json`.
fn node_folders(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("package-lock.json").is_file())
        .collect();
    out.sort();
    out
}

fn package_main(folder: &Path) -> Option<String> {
    let text = std::fs::read_to_string(folder.join("package.json")).ok()?;
    let v: Value = serde_json::from_str(&text).ok()?;
    v["main"].as_str().map(str::to_string)
}

/// The most telling line of an error output: the first that names an error
/// (`Error [ERR_MODULE_NOT_FOUND]: ...`, `SyntaxError: ...`), else the last non-empty one.
fn last_line(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let names_error = |l: &&&str| {
        l.split(':')
            .next()
            .is_some_and(|head| head.contains("Error"))
    };
    let telling = lines.iter().find(names_error).or(lines.last());
    telling.map_or_else(|| "(no output)".into(), |l| crate::text::clip(l, 300))
}

/// A hash of every file under `dir` (paths and contents), `node_modules` left out.
fn content_hash(dir: &Path) -> u64 {
    use std::hash::{Hash, Hasher};
    static MEMO: OnceLock<Mutex<HashMap<PathBuf, u64>>> = OnceLock::new();
    let mut memo = MEMO
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    *memo.entry(dir.to_path_buf()).or_insert_with(|| {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        let files = walkdir::WalkDir::new(dir)
            .sort_by_file_name()
            .into_iter()
            .filter_entry(|e| e.file_name() != "node_modules")
            .flatten()
            .filter(|e| e.file_type().is_file());
        for f in files {
            f.path().strip_prefix(dir).unwrap_or(f.path()).hash(&mut h);
            std::fs::read(f.path()).unwrap_or_default().hash(&mut h);
        }
        h.finish()
    })
}

fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    let entries = walkdir::WalkDir::new(from)
        .into_iter()
        .filter_entry(|e| e.file_name() != "node_modules");
    for entry in entries {
        let entry = entry.map_err(std::io::Error::other)?;
        let target = to.join(entry.path().strip_prefix(from).unwrap_or(entry.path()));
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

fn uses_variable(scenario: &Scenario) -> bool {
    let file = &scenario.file;
    let in_str = |s: &String| s.contains(VARIABLE);
    let in_content = |c: &FileContent| match c {
        FileContent::Text(t) => t.contains(VARIABLE),
        FileContent::Json(v) => v.to_string().contains(VARIABLE),
    };
    file.args.iter().any(in_str)
        || file.env.values().any(in_str)
        || file.files.values().any(in_content)
        || file.home_files.values().any(in_content)
        || file
            .expect
            .values()
            .any(|e| e.args.iter().flatten().any(in_str) || e.env.values().any(in_str))
}

fn substitute_content(content: &mut FileContent, dir: &str) {
    fn walk(v: &mut Value, dir: &str) {
        match v {
            Value::String(s) => *s = s.replace(VARIABLE, dir),
            Value::Array(a) => a.iter_mut().for_each(|x| walk(x, dir)),
            Value::Object(m) => m.values_mut().for_each(|x| walk(x, dir)),
            _ => {}
        }
    }
    match content {
        FileContent::Text(t) => *t = t.replace(VARIABLE, dir),
        FileContent::Json(v) => walk(v, dir),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(extra: &str) -> Scenario {
        let text = format!(
            "description: x\nprompt: p\n{extra}\nexpect:\n  claude-code:\n    exit_code: 0\n"
        );
        Scenario::parse(
            &text,
            Path::new("proj/scenarios/mcp/x.yaml"),
            Path::new("proj/scenarios"),
        )
        .unwrap()
    }

    #[test]
    fn the_sources_are_the_projects_targets_fixtures_installed_in_the_cache() {
        assert!(source(Path::new("proj")).ends_with("proj/fixtures"));
        let name = location(Path::new("proj"))
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert!(name.starts_with("fixtures-"), "{name}");
    }

    #[test]
    fn a_fixture_that_does_not_start_is_named_with_its_error() {
        let dir = tempfile::tempdir().unwrap();
        let (source, dest) = (dir.path().join("src"), dir.path().join("cache/fixtures-x"));
        let broken = source.join("broken");
        std::fs::create_dir_all(&broken).unwrap();
        std::fs::write(
            broken.join("package.json"),
            r#"{"name":"broken","private":true,"main":"main.mjs"}"#,
        )
        .unwrap();
        std::fs::write(broken.join("package-lock.json"), r#"{"name":"broken","lockfileVersion":3,"requires":true,"packages":{"":{"name":"broken"}}}"#).unwrap();
        std::fs::write(
            broken.join("main.mjs"),
            "import 'no-such-package-anywhere';\n",
        )
        .unwrap();
        let err = installed(&source, &dest).unwrap_err().to_string();
        assert!(
            err.contains("the test fixture broken does not start"),
            "{err}"
        );
        assert!(err.contains("no-such-package-anywhere"), "{err}");
        assert!(dest.join(MARKER).is_file(), "the install itself succeeded");
    }

    #[test]
    fn a_scenario_without_the_variable_is_borrowed() {
        let s = scenario("args: [-x]");
        assert!(matches!(resolve(&s, Path::new("proj")), Cow::Borrowed(_)));
    }

    #[test]
    fn args_env_and_file_contents_are_substituted() {
        let s = scenario(
            "args: [--mcp-config, \"$FIXTURES/a.json\"]\nenv: {X: \"$FIXTURES\"}\nfiles: {a.json: {cmd: [\"$FIXTURES/s.mjs\"]}, b.txt: \"at $FIXTURES\"}\nhome_files: {c: \"$FIXTURES/c\"}",
        );
        let r = resolve(&s, Path::new("proj"));
        let dir = location(Path::new("proj")).display().to_string();
        assert_eq!(r.file.args[1], format!("{dir}/a.json"));
        assert_eq!(r.file.env["X"], dir);
        let FileContent::Json(json) = &r.file.files["a.json"] else {
            panic!("json content")
        };
        assert_eq!(json["cmd"][0], format!("{dir}/s.mjs"));
        assert_eq!(
            r.file.files["b.txt"],
            FileContent::Text(format!("at {dir}"))
        );
        assert_eq!(
            r.file.home_files["c"],
            FileContent::Text(format!("{dir}/c"))
        );
    }
}
