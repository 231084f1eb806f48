//! The harness against misbehaving CLIs (fixtures/hostile/fake-cli.sh, one mode per
//! scenario): each misbehaviour is reported as the right divergence, every other
//! result is still written, no process is left behind, and no caller secret leaks.

use assert_cmd::Command;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const SECRET: &str = "sk-ant-caller-REAL-secret-do-not-leak";

fn fixture_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hostile")
}

/// Pids of fixture processes still alive (their command lines are distinctive).
fn leftovers() -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let cmd = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmd.contains("sleep 987.654") || cmd.trim_end() == "sleep 600" {
            found.push(format!("{}: {cmd}", entry.file_name().to_string_lossy()));
        }
    }
    found
}

#[test]
fn hostile_clis_are_reported_and_cleaned_up() {
    let reports = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    let out = Command::cargo_bin("streamcheck")
        .unwrap()
        .args(["--root"])
        .arg(fixture_root())
        .args(["run", "--jobs", "4", "--target-command"])
        .arg(fixture_root().join("fake-cli.sh"))
        .arg("--report-dir")
        .arg(reports.path())
        .env("ANTHROPIC_API_KEY", SECRET)
        .env("ANTHROPIC_AUTH_TOKEN", SECRET)
        .env("AWS_ACCESS_KEY_ID", SECRET)
        .env("AWS_SECRET_ACCESS_KEY", SECRET)
        .env("AWS_PROFILE", SECRET)
        .env("GOOGLE_APPLICATION_CREDENTIALS", SECRET)
        .env("GOOGLE_API_KEY", SECRET)
        .env("STREAMCHECK_CALLER_SECRET", SECRET)
        .output()
        .unwrap();
    let elapsed = started.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "divergences exit 1\n{stdout}");
    assert!(
        stdout.contains("3 passed, 12 failed, 0 skipped"),
        "{stdout}"
    );

    let results: Value = serde_json::from_str(
        &std::fs::read_to_string(reports.path().join("results.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(results["complete"], true);
    let mut kinds: BTreeMap<String, (String, Vec<String>)> = BTreeMap::new();
    for t in results["trials"].as_array().unwrap() {
        let ks = t["divergences"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["kind"].as_str().unwrap().to_string())
            .collect();
        kinds.insert(
            t["scenario"].as_str().unwrap().to_string(),
            (t["status"].as_str().unwrap().to_string(), ks),
        );
    }
    let first = |name: &str| -> String {
        let (status, ks) = &kinds[name];
        assert_eq!(status, "failed", "{name}: {ks:?}");
        ks[0].clone()
    };
    assert_eq!(first("hang_before_output"), "timeout");
    assert_eq!(first("hang_after_result"), "hang");
    assert_eq!(first("grandchild_keeps_stdout"), "hang");
    assert_eq!(first("exit_without_result"), "missing_frame");
    assert_eq!(first("crash_signal"), "exit_code");
    assert_eq!(first("non_json"), "non_json");
    assert_eq!(first("invalid_utf8"), "non_json");
    assert_eq!(first("huge_line"), "non_json");
    assert_eq!(first("no_trailing_newline"), "non_json");
    assert_eq!(first("stderr_flood"), "stderr");
    assert_eq!(first("frame_after_result"), "invariant");
    assert_eq!(first("exit_before_reading_stdin"), "missing_frame");
    assert!(kinds["exit_before_reading_stdin"]
        .1
        .contains(&"exit_code".to_string()));
    // Closing stdin early is the CLI's right: the harness survives it and says so.
    assert_eq!(kinds["close_stdin_early"].0, "passed");
    assert_eq!(kinds["ok"].0, "passed");
    // The CLI saw the dummy key, its own HOME and none of the caller's credentials.
    assert_eq!(kinds["env_probe"].0, "passed", "{:?}", kinds["env_probe"]);

    // Each failure has its report, naming the failure with line numbers.
    let md = |name: &str| {
        std::fs::read_to_string(
            reports
                .path()
                .join(format!("{name}.command_fake-cli.sh.md")),
        )
        .unwrap_or_else(|e| panic!("report for {name}: {e}"))
    };
    assert!(md("huge_line").contains("stdout line 2: line is 52428800 bytes"));
    assert!(md("invalid_utf8").contains("stdout line 2: invalid UTF-8"));
    assert!(md("crash_signal").contains("killed by signal 11"));
    assert!(md("hang_before_output").contains("did not finish within 2s"));
    assert!(md("grandchild_keeps_stdout").contains("stdout stayed open"));
    for f in ["summary.md", "junit.xml"] {
        assert!(reports.path().join(f).exists(), "{f}");
    }

    // Nothing the CLIs started outlives the run.
    assert!(
        leftovers().is_empty(),
        "leftover processes: {:?}",
        leftovers()
    );
    // Bounded by the timeouts (2 s scenario timeout, 3 s grace), not by the CLIs' sleeps of 600 s.
    assert!(elapsed.as_secs() < 120, "took {elapsed:?}");

    // No caller secret reaches any report file.
    for entry in walk(reports.path()) {
        let text = String::from_utf8_lossy(&std::fs::read(&entry).unwrap()).into_owned();
        assert!(
            !text.contains(SECRET),
            "{} leaks the caller's secret",
            entry.display()
        );
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn a_broken_scenario_file_is_named_and_the_rest_still_run() {
    let root = tempfile::tempdir().unwrap();
    let scenarios = root.path().join("scenarios");
    std::fs::create_dir_all(&scenarios).unwrap();
    std::fs::copy(
        fixture_root().join("scenarios/ok.yaml"),
        scenarios.join("ok.yaml"),
    )
    .unwrap();
    std::fs::write(
        scenarios.join("broken.yaml"),
        "description: broken\nenv: {FAKE_MODE: ok}\nexpect:\n  claude-code:\n    frames:\n      - {type: result, result: $uid}\n",
    )
    .unwrap();
    let reports = root.path().join("reports");
    let out = Command::cargo_bin("streamcheck")
        .unwrap()
        .arg("--root")
        .arg(root.path())
        .args(["run", "--target-command"])
        .arg(fixture_root().join("fake-cli.sh"))
        .arg("--report-dir")
        .arg(&reports)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "a scenario file error exits 2");
    assert!(
        stderr.contains("broken.yaml:6:"),
        "names file and line: {stderr}"
    );
    assert!(stderr.contains("unknown placeholder `$uid`"), "{stderr}");
    assert!(
        stdout.contains("1 passed, 0 failed, 0 skipped"),
        "the valid scenario still ran: {stdout}"
    );
    let summary = std::fs::read_to_string(reports.join("summary.md")).unwrap();
    assert!(summary.contains("broken.yaml"), "{summary}");
}
