//! `cases:` end to end against the fake CLI: each case is a scenario of its own, listed,
//! filtered, run, reported, recorded (refused, naming why) and audited by its id; a bad
//! case stops `check` naming the file and the case.

mod common;

use common::{fake_cli, outcome, streamcheck_at};
use std::path::Path;

/// Two cases: the fake CLI's mode and the frame it is held to come from the case (`hello`
/// prints an assistant frame, `skip` none).
const MATRIX: &str = "description: \"fake CLI in mode {{mode}}\"\nenv: {FAKE_MODE: \"{{mode}}\"}\nprompt: hi\nexpect:\n  claude-code:\n    frames:\n      - {type: system, subtype: init}\n      - {type: \"{{second}}\"}\n    mode: subsequence\n    exit_code: 0\ncases:\n  - {name: hello, mode: hello, second: assistant}\n  - {name: quiet, mode: skip, second: result}\n";

fn project(text: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("targets/claude-code")).unwrap();
    std::fs::create_dir_all(dir.path().join("scenarios/edges")).unwrap();
    std::fs::write(dir.path().join("scenarios/edges/m.yaml"), text).unwrap();
    dir
}

fn run(root: &Path, args: &[&str]) -> (i32, String, String) {
    let mut cmd = streamcheck_at(root);
    cmd.args(args);
    if matches!(args[0], "run" | "record") {
        cmd.arg("--target-command").arg(fake_cli());
        cmd.arg("--report-dir").arg(root.join("reports/run"));
    }
    outcome(&mut cmd)
}

#[test]
fn each_case_is_listed_filtered_and_run_as_its_own_scenario() {
    let p = project(MATRIX);
    let (code, out, err) = run(p.path(), &["list"]);
    assert_eq!(code, 0, "{err}");
    let ids: Vec<&str> = out.lines().filter_map(|l| l.split(' ').next()).collect();
    assert_eq!(ids, ["edges/m[hello]", "edges/m[quiet]"], "{out}");
    assert!(out.contains("fake CLI in mode skip"), "{out}");

    // A filter naming a case selects it, though it is not part of the file's id.
    let (code, out, err) = run(p.path(), &["list", "--filter", "m[qu"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(out.starts_with("edges/m[quiet]"), "{out}");

    let (code, out, err) = run(p.path(), &["run"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("2 passed"), "{out}");
    let results = std::fs::read_to_string(p.path().join("reports/run/results.json")).unwrap();
    assert!(
        results.contains("edges/m[hello]") && results.contains("edges/m[quiet]"),
        "{results}"
    );

    // The frame each case is held to is its own: the other case's fails.
    let swapped = MATRIX.replace("second: result}", "second: assistant}");
    let p = project(&swapped);
    let (code, out, _) = run(p.path(), &["run"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("1 passed, 1 failed"), "{out}");
}

#[test]
fn a_bad_case_fails_check_naming_file_and_case() {
    for (bad, says) in [
        (
            "  - {name: typo, mode: hello, second: result, secnod: 1}\n",
            "case `typo`: parameter `secnod` is used nowhere",
        ),
        (
            "  - {name: hello, mode: hello, second: result}\n",
            "case `hello` is named twice",
        ),
        (
            "  - {name: short, mode: hello}\n",
            "case `short`: `{{second}}` is used in the file",
        ),
        ("  - {name: nothing}\n", "the case names no parameter"),
    ] {
        let p = project(&format!("{MATRIX}{bad}"));
        let (code, _, err) = run(p.path(), &["check"]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("scenarios/edges/m.yaml"), "{err}");
        assert!(err.contains(says), "{bad}: {err}");
    }
}

#[test]
fn record_does_not_write_back_a_case_and_audit_checks_cases_by_id() {
    let p = project(MATRIX);
    let (code, out, err) = run(p.path(), &["record", "--full"]);
    assert!(
        out.contains("edges/m[hello]") && out.contains("`cases:` matrix"),
        "{code} {out}{err}"
    );
    assert!(
        !p.path().join("reports/pending/edges").exists(),
        "nothing pending for a case"
    );
    assert_eq!(
        std::fs::read_to_string(p.path().join("scenarios/edges/m.yaml")).unwrap(),
        MATRIX
    );

    let (code, out, err) = run(p.path(), &["run"]);
    assert_eq!(code, 0, "{out}{err}");
    let from = p.path().join("reports/run");
    let mut cmd = streamcheck_at(p.path());
    cmd.args(["audit", "--from"])
        .arg(&from)
        .arg("--report-dir")
        .arg(p.path().join("reports/audit"));
    let (_, out, err) = outcome(&mut cmd);
    let audit = std::fs::read_to_string(p.path().join("reports/audit/audit.md"))
        .unwrap_or_else(|e| panic!("{e}: {out}{err}"));
    assert!(audit.contains("edges/m[hello]"), "{audit}");
    assert!(!audit.contains("not audited"), "{audit}");
}
