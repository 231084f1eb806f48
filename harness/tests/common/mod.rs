//! Helpers shared by the integration tests. Each file in `tests/` is a crate of its own
//! that uses only some of them, hence `dead_code` allowed for the whole module.
#![allow(dead_code)]

use assert_cmd::Command;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The harness crate's folder (`harness/`).
pub fn crate_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The workspace root: the project whose scenarios and targets the suite runs.
pub fn repo() -> PathBuf {
    crate_dir().parent().expect("workspace root").to_path_buf()
}

/// A fixture project, `tests/fixtures/<name>`.
pub fn fixture_root(name: &str) -> PathBuf {
    crate_dir().join("tests/fixtures").join(name)
}

/// The fake CLI of the `divergences` fixture, one behaviour per `FAKE_MODE`.
pub fn fake_cli() -> PathBuf {
    fixture_root("divergences").join("fake-cli.sh")
}

/// The `streamcheck` binary, without colours.
pub fn streamcheck() -> Command {
    let mut cmd = Command::cargo_bin("streamcheck").expect("the streamcheck binary is built");
    cmd.env("NO_COLOR", "1");
    cmd
}

/// `streamcheck --root ROOT`.
pub fn streamcheck_at(root: &Path) -> Command {
    let mut cmd = streamcheck();
    cmd.arg("--root").arg(root);
    cmd
}

/// `streamcheck --root ROOT run --target-command ROOT/fake-cli.sh --report-dir REPORTS`:
/// a fixture project run against its own fake CLI.
pub fn run_fixture(root: &Path, reports: &Path) -> Command {
    let mut cmd = streamcheck_at(root);
    cmd.arg("run")
        .arg("--target-command")
        .arg(root.join("fake-cli.sh"))
        .arg("--report-dir")
        .arg(reports);
    cmd
}

/// Bytes a process printed, as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A JSON file, read and parsed; panics naming the file.
pub fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Copies a folder tree.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), &dest).unwrap();
        }
    }
}

/// Writes an executable script, making its folder.
pub fn write_executable(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

/// A run's `results.json`, as scenario -> (status, `field` of each divergence in order).
pub fn trial_outcomes(report_dir: &Path, field: &str) -> BTreeMap<String, (String, Vec<String>)> {
    let results = read_json(&report_dir.join("results.json"));
    let trials = results["trials"]
        .as_array()
        .expect("trials in results.json");
    trials
        .iter()
        .map(|t| {
            let divergences = t["divergences"].as_array().expect("divergences");
            let values = divergences
                .iter()
                .map(|d| d[field].as_str().unwrap().to_string())
                .collect();
            let status = t["status"].as_str().unwrap().to_string();
            (
                t["scenario"].as_str().unwrap().to_string(),
                (status, values),
            )
        })
        .collect()
}

/// Runs a command to its end: exit code, stdout, stderr.
pub fn outcome(cmd: &mut Command) -> (i32, String, String) {
    let out = cmd.output().expect("the command runs");
    (
        out.status.code().expect("exited by itself"),
        text(&out.stdout),
        text(&out.stderr),
    )
}

/// What a process printed, stdout then stderr, for assertion messages.
pub fn printed(out: &std::process::Output) -> String {
    format!(
        "{}\n--- stderr ---\n{}",
        text(&out.stdout),
        text(&out.stderr)
    )
}

/// The streamcheck cache of this machine, where the tests' own tools (actionlint, maturin)
/// are installed once.
pub fn machine_cache() -> PathBuf {
    streamcheck::install::Project::at(repo()).cache_dir()
}

/// A tool installed once into the machine cache, in `<cache>/<name>-<hash of files>`:
/// `install` is given a fresh folder holding copies of `files` (from `src`), renamed into
/// place once it returns, so a folder found there is a whole install.
pub fn installed_once(
    name: &str,
    src: &Path,
    files: &[&str],
    install: impl FnOnce(&Path),
) -> PathBuf {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    for f in files {
        std::fs::read(src.join(f)).unwrap().hash(&mut hasher);
    }
    let dir = machine_cache().join(format!("{name}-{:016x}", hasher.finish()));
    if dir.is_dir() {
        return dir;
    }
    // Tests of one binary run on threads of one process: the pid alone would give them
    // one folder to install into at once, and the first to rename it takes the others'
    // unfinished install.
    static INSTALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let nth = INSTALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = PathBuf::from(format!(
        "{}.tmp-{}-{nth}",
        dir.display(),
        std::process::id()
    ));
    std::fs::create_dir_all(&tmp).unwrap();
    for f in files {
        std::fs::copy(src.join(f), tmp.join(f)).unwrap();
    }
    install(&tmp);
    if std::fs::rename(&tmp, &dir).is_err() {
        // Another test installed it first: the same files, the same install.
        let _ = std::fs::remove_dir_all(&tmp);
    }
    dir
}
