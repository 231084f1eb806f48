//! The packages a consumer installs the binary from (packaging/, harness/pyproject.toml):
//! the PyPI wheel (maturin, `bin` bindings), the npm launcher `streamcheck` with a package per
//! platform (`@streamcheck/OS-CPU`, its optionalDependencies), the cargo binstall archive.
//! Their versions and platforms agree with the crate, packaging/build.sh and the release
//! workflow; and the Linux x86_64 ones, built by packaging/build.sh (a release build), install
//! into a fresh venv and an empty npm folder with no cargo or rustc on PATH and run
//! `streamcheck consume` on a saved run of the pinned Claude Code.

mod common;

use regex::Regex;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;
use streamcheck::process_group::{run_blocking, Ended};

const VERSION: &str = env!("CARGO_PKG_VERSION");

fn packaging() -> PathBuf {
    common::repo().join("packaging")
}

/// `cmd` to its end (its process group killed then); panics, with what it printed, unless it
/// exited `code`. Its stdout and stderr.
fn ran(mut cmd: Command, code: i32) -> (String, String) {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let what = format!("{cmd:?}");
    let Ended {
        status,
        stdout,
        stderr,
    } = run_blocking(cmd, None).unwrap_or_else(|e| panic!("{what}: {e}"));
    let (stdout, stderr) = (common::text(&stdout), common::text(&stderr));
    assert_eq!(
        status.and_then(|s| s.code()),
        Some(code),
        "{what}\n{stdout}\n--- stderr ---\n{stderr}"
    );
    (stdout, stderr)
}

/// The Rust targets packaging/build.sh packs, with their npm platform package:
/// `(x86_64-unknown-linux-gnu, linux-x64)`, ...
fn build_sh_targets() -> BTreeSet<(String, String)> {
    let text = std::fs::read_to_string(packaging().join("build.sh")).unwrap();
    let arm = Regex::new(r"(?m)^\s*([a-z0-9_-]+)\) npm=([a-z0-9-]+) ;;$").unwrap();
    let found: BTreeSet<_> = (arm.captures_iter(&text))
        .map(|c| (c[1].to_string(), c[2].to_string()))
        .collect();
    assert!(found.len() >= 4, "{found:?}");
    found
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn the_packages_versions_and_platforms_agree_with_the_crate_and_the_release_workflow() {
    let npm = packaging().join("npm");
    let launcher = read_json(&npm.join("streamcheck/package.json"));
    assert_eq!(launcher["version"], VERSION);
    assert_eq!(launcher["bin"]["streamcheck"], "bin/streamcheck.js");

    let targets = build_sh_targets();
    let platforms: BTreeSet<String> = targets.iter().map(|(_, p)| p.clone()).collect();
    let optional = launcher["optionalDependencies"].as_object().unwrap();
    let named: BTreeSet<String> = optional.keys().cloned().collect();
    let expected: BTreeSet<String> = platforms
        .iter()
        .map(|p| format!("@streamcheck/{p}"))
        .collect();
    assert_eq!(
        named, expected,
        "the launcher names every platform build.sh packs"
    );
    assert!(optional.values().all(|v| v == VERSION), "{optional:?}");

    let mut folders = BTreeSet::new();
    for entry in std::fs::read_dir(&npm).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name == "streamcheck" {
            continue;
        }
        let package = read_json(&entry.path().join("package.json"));
        assert_eq!(package["name"], format!("@streamcheck/{name}"));
        assert_eq!(package["version"], VERSION, "{name}");
        let (os, cpu) = (&package["os"][0], &package["cpu"][0]);
        assert_eq!(
            format!("{}-{}", os.as_str().unwrap(), cpu.as_str().unwrap()),
            name
        );
        assert_eq!(package["files"][0], "bin/streamcheck", "{name}");
        folders.insert(name);
    }
    assert_eq!(folders, platforms);

    let workflow: serde_yaml::Value = serde_yaml::from_str(
        &std::fs::read_to_string(common::repo().join(".github/workflows/release.yml")).unwrap(),
    )
    .unwrap();
    let built: BTreeSet<String> = (workflow["jobs"]["build"]["strategy"]["matrix"]["include"]
        .as_sequence()
        .unwrap()
        .iter())
    .map(|row| row["target"].as_str().unwrap().to_string())
    .collect();
    let packed: BTreeSet<String> = targets.into_iter().map(|(t, _)| t).collect();
    assert_eq!(
        built, packed,
        "the release builds every platform build.sh packs"
    );

    let pyproject: toml::Value = toml::from_str(
        &std::fs::read_to_string(common::crate_dir().join("pyproject.toml")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        pyproject["tool"]["maturin"]["bindings"].as_str(),
        Some("bin")
    );
    assert_eq!(
        pyproject["build-system"]["build-backend"].as_str(),
        Some("maturin")
    );
}

/// maturin pinned with hashes (packaging/requirements-maturin.txt), in a venv of the cache.
fn maturin() -> PathBuf {
    let venv = common::installed_once(
        "maturin",
        &packaging(),
        &["requirements-maturin.txt"],
        |dir| {
            let mut venv = Command::new("python3");
            venv.args(["-m", "venv"]).arg(dir.join("venv"));
            ran(venv, 0);
            let mut pip = Command::new(dir.join("venv/bin/pip"));
            pip.args([
                "install",
                "--disable-pip-version-check",
                "--require-hashes",
                "-r",
            ])
            .arg(dir.join("requirements-maturin.txt"));
            ran(pip, 0);
        },
    );
    venv.join("venv/bin")
}

/// The one file in `dir` whose name matches `pattern`.
fn only(dir: &Path, pattern: &str) -> PathBuf {
    let re = Regex::new(pattern).unwrap();
    let found: Vec<PathBuf> = (std::fs::read_dir(dir).unwrap().flatten())
        .map(|e| e.path())
        .filter(|p| re.is_match(&p.file_name().unwrap().to_string_lossy()))
        .collect();
    assert_eq!(found.len(), 1, "{pattern} in {}: {found:?}", dir.display());
    found.into_iter().next().unwrap()
}

/// A folder of links to the programs a consumer's machine has (sh, node, npm, npx, python3)
/// and nothing else: a PATH with no Rust toolchain.
fn without_rust(dir: &Path) -> PathBuf {
    let tools = dir.join("tools");
    std::fs::create_dir_all(&tools).unwrap();
    for tool in ["sh", "node", "npm", "npx"] {
        let found = which::which(tool).unwrap_or_else(|e| panic!("{tool}: {e}"));
        std::os::unix::fs::symlink(found, tools.join(tool)).unwrap();
    }
    // python3 may be a shim (pyenv) that needs its own tools: the interpreter itself.
    let mut python = Command::new("python3");
    python.args([
        "-c",
        "import os, sys; print(os.path.realpath(sys.executable))",
    ]);
    let (real, _) = ran(python, 0);
    std::os::unix::fs::symlink(real.trim(), tools.join("python3")).unwrap();
    for rust in ["cargo", "rustc", "rustup"] {
        assert!(which::which_in(rust, Some(&tools), dir).is_err(), "{rust}");
    }
    tools
}

/// A command run in `dir` with only `path` on PATH, a HOME and streamcheck cache of its own,
/// and nothing else of this environment.
fn clean(program: impl AsRef<std::ffi::OsStr>, dir: &Path, path: &[&Path]) -> Command {
    let mut cmd = Command::new(program);
    cmd.current_dir(dir)
        .env_clear()
        .env("PATH", std::env::join_paths(path).unwrap())
        .env("HOME", dir.join(".home"))
        .env("STREAMCHECK_CACHE", dir.join(".cache-streamcheck"))
        .env("NO_COLOR", "1")
        .env("NPM_CONFIG_UPDATE_NOTIFIER", "false");
    cmd
}

/// `streamcheck consume` (as `program` starts it) in `project` on the saved run of the pinned
/// Claude Code, with the strict consumer written before `rate_limit_event`: the plain turn
/// passes, the trial printing `rate_limit_event` fails on that line.
fn consume_on_the_saved_run(mut cmd: Command, project: &Path) {
    let strict = common::crate_dir().join("tests/consumers/strict.py");
    std::fs::copy(strict, project.join("strict.py")).unwrap();
    let run = common::fixture_root("packaging/run");
    cmd.arg("consume").arg("--from").arg(&run).args([
        "--command",
        "python3 strict.py --without rate_limit_event",
        "--report-dir",
        "consumed",
    ]);
    let (out, _) = ran(cmd, 1);
    assert!(out.contains("2 feeds, 1 failed"), "{out}");
    let report = read_json(&project.join("consumed/consume.json"));
    let outcome = |scenario: &str| -> Value {
        let fed = report["fed"].as_array().unwrap();
        let f = fed.iter().find(|f| f["scenario"] == scenario);
        f.unwrap_or_else(|| panic!("{scenario} fed: {report}"))
            .clone()
    };
    assert_eq!(outcome("basics/text-reply")["outcome"], "passed");
    let failed = outcome("errors/rate-limit-event-allowed");
    assert_eq!(failed["outcome"], "failed", "{failed}");
    assert!(
        failed["line"]
            .as_str()
            .unwrap()
            .contains("\"type\":\"rate_limit_event\""),
        "{failed}"
    );
}

fn size(path: &Path) -> String {
    let bytes = std::fs::metadata(path).unwrap().len() as f64;
    match bytes < 1e6 {
        true => format!("{:.1} kB", bytes / 1e3),
        false => format!("{:.1} MB", bytes / 1e6),
    }
}

/// The slow one: a release build (packaging/build.sh, maturin from the cache), then each
/// package installed as a consumer would, without Rust, and `streamcheck consume` run.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
#[test]
fn the_linux_x86_64_wheel_and_npm_package_run_consume_without_rust() {
    let target = "x86_64-unknown-linux-gnu";
    let out = common::repo().join("target/packaging");
    let _ = std::fs::remove_dir_all(&out);
    let path = std::env::join_paths(
        std::iter::once(maturin()).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    let started = Instant::now();
    let mut build = Command::new(packaging().join("build.sh"));
    build
        .args([target, out.to_str().unwrap()])
        .env("PATH", path);
    ran(build, 0);
    eprintln!(
        "packaging/build.sh: {:.0} s",
        started.elapsed().as_secs_f64()
    );

    let wheel = only(
        &out.join("wheels"),
        &format!(r"^streamcheck_cli-{VERSION}-py3-none-manylinux_2_\d+_x86_64.*\.whl$"),
    );
    let launcher = only(&out.join("npm"), &format!(r"^streamcheck-{VERSION}\.tgz$"));
    let platform = only(
        &out.join("npm"),
        &format!(r"^streamcheck-linux-x64-{VERSION}\.tgz$"),
    );
    eprintln!(
        "wheel {} ({}), npm {} ({}) + {} ({})",
        wheel.display(),
        size(&wheel),
        launcher.display(),
        size(&launcher),
        platform.display(),
        size(&platform)
    );

    // cargo binstall finds the archive where its metadata says, the binary inside.
    let manifest: toml::Value =
        toml::from_str(&std::fs::read_to_string(common::crate_dir().join("Cargo.toml")).unwrap())
            .unwrap();
    let binstall = &manifest["package"]["metadata"]["binstall"];
    let fill = |template: &str| {
        (template.replace("{ name }", "streamcheck"))
            .replace("{ target }", target)
            .replace("{ archive-suffix }", ".tar.gz")
            .replace("{ bin }", "streamcheck")
            .replace("{ binary-ext }", "")
    };
    let url = fill(binstall["pkg-url"].as_str().unwrap());
    let archive = out.join("binstall").join(url.rsplit('/').next().unwrap());
    assert!(archive.is_file(), "{url}: {}", archive.display());
    let mut list = Command::new("tar");
    list.arg("-tzf").arg(&archive);
    let (listed, _) = ran(list, 0);
    let bin_dir = fill(binstall["bin-dir"].as_str().unwrap());
    assert!(
        listed.lines().any(|l| l == bin_dir),
        "{bin_dir} in {listed}"
    );

    let root = tempfile::tempdir().unwrap();
    let tools = without_rust(root.path());

    // An empty Python project: a venv, the wheel, `streamcheck consume`.
    let project = root.path().join("python-project");
    std::fs::create_dir_all(&project).unwrap();
    let started = Instant::now();
    let mut venv = clean("python3", &project, &[&tools]);
    venv.args(["-m", "venv", ".venv"]);
    ran(venv, 0);
    let bin = project.join(".venv/bin");
    let mut pip = clean(bin.join("pip"), &project, &[&bin, &tools]);
    pip.args(["install", "--no-index", "--disable-pip-version-check"])
        .arg(&wheel);
    ran(pip, 0);
    let installed = which::which_in("streamcheck", Some(&bin), &project).unwrap();
    assert_eq!(installed, bin.join("streamcheck"));
    consume_on_the_saved_run(clean(&installed, &project, &[&bin, &tools]), &project);
    eprintln!(
        "empty Python project to `streamcheck consume` done: {:.1} s",
        started.elapsed().as_secs_f64()
    );

    // An empty folder: npm installs the launcher and this platform's package, offline (no
    // registry is asked: the launcher's other platforms are optional and do not fit), and npx
    // runs the launcher, which runs the platform's binary.
    let project = root.path().join("node-project");
    std::fs::create_dir_all(&project).unwrap();
    let started = Instant::now();
    let mut npm = clean("npm", &project, &[&tools]);
    npm.args(["install", "--offline", "--no-audit", "--no-fund"])
        .arg(&launcher)
        .arg(&platform);
    ran(npm, 0);
    let modules = project.join("node_modules/@streamcheck");
    let present: Vec<String> = (std::fs::read_dir(&modules).unwrap().flatten())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(present, ["linux-x64"], "only this platform's binary");
    let mut npx = clean("npx", &project, &[&tools]);
    npx.args(["--offline", "streamcheck"]);
    consume_on_the_saved_run(npx, &project);
    eprintln!(
        "empty folder to `npx streamcheck consume` done: {:.1} s",
        started.elapsed().as_secs_f64()
    );
}
