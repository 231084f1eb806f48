//! One exit-code policy for every command: 0 all good, 1 a divergence, 2 a usage,
//! scenario-file or setup error. The fixture project has one good and one broken file.

mod common;

use common::{fake_cli, fixture_root, streamcheck_at};
use std::path::PathBuf;

fn root() -> PathBuf {
    fixture_root("exit-codes")
}

/// The exit code of `streamcheck --root <a copy of the fixture> ARGS`, with reports in a
/// temp dir (record writes pending files under the root, so the fixture is copied).
fn code(args: &[&str]) -> i32 {
    let reports = tempfile::tempdir().unwrap();
    let copy = tempfile::tempdir().unwrap();
    let copied = std::process::Command::new("cp")
        .arg("-r")
        .arg(root().join("scenarios"))
        .arg(root().join("targets"))
        .arg(copy.path())
        .status()
        .unwrap();
    assert!(copied.success());
    let mut cmd = streamcheck_at(copy.path());
    cmd.args(args);
    let runs_trials = matches!(args[0], "run" | "record" | "drift" | "compare");
    if runs_trials {
        cmd.arg("--target-command").arg(fake_cli());
        cmd.arg("--report-dir").arg(reports.path());
    }
    if args[0] == "drift" {
        cmd.arg("--run-dir").arg(reports.path().join("runs"));
    }
    let out = cmd.output().unwrap();
    out.status.code().expect("exited by itself")
}

#[test]
fn a_broken_scenario_file_exits_2_in_every_command_that_loads_it() {
    for args in [
        &["run"][..],
        &["list"],
        &["check"],
        &["record"],
        &["drift"],
        &["compare", "--target", "claude-code"],
    ] {
        assert_eq!(code(args), 2, "streamcheck {args:?}");
    }
}

#[test]
fn a_selection_without_the_broken_file_follows_the_results() {
    assert_eq!(code(&["run", "-f", "good"]), 0);
    assert_eq!(code(&["list", "-f", "good"]), 0);
    assert_eq!(code(&["record", "-f", "good"]), 0);
}

#[test]
fn usage_and_setup_errors_exit_2() {
    assert_eq!(code(&["run", "--shard", "5/4"]), 2);
    assert_eq!(code(&["stub", "no-such-file.yaml"]), 2);
    assert_eq!(
        code(&["merge", "no-such-dir", "--out", "/nonexistent/x"]),
        2
    );
    assert_eq!(code(&["compare", "--observed", "no-a", "no-b"]), 2);
    assert_eq!(code(&["drift", "--replay", "no-such-run-folder"]), 2);
    assert_eq!(code(&["install", "--target", "no-such-cli"]), 2);
}

#[test]
fn a_divergence_exits_1() {
    let reports = tempfile::tempdir().unwrap();
    let out = common::run_fixture(&fixture_root("divergences"), reports.path())
        .args(["-f", "exit_code"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
}
