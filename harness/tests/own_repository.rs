//! streamcheck in a repository of its own: the project file, `init`, the bundled
//! catalogue outside a checkout, and targets held to the release they conform to.

mod common;

use common::{fake_cli, outcome, write_executable};
use std::path::Path;

const GOOD: &str = "description: Says hello.\nenv: {FAKE_MODE: hello}\nprompt: hi\nexpect:\n  claude-code:\n    frames:\n      - {type: system, subtype: init}\n      - {type: assistant}\n      - {type: result, subtype: success, result: \"Hello!\"}\n  claude-code@<1.0.0:\n    frames_patch: {2: {$merge: {result: \"only for 0.x\"}}}\n";

/// A repository with a wrapper CLI that prints its own `--version` (`0.3.0 (mycli)`).
fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let wrapper = dir.path().join("mycli");
    let text = format!(
        "#!/bin/sh\nif [ \"$1\" = --version ]; then echo '0.3.0 (mycli)'; exit 0; fi\nexec {} \"$@\"\n",
        fake_cli().display()
    );
    write_executable(&wrapper, &text);
    std::fs::create_dir_all(dir.path().join("own/basics")).unwrap();
    std::fs::write(dir.path().join("own/basics/hello.yaml"), GOOD).unwrap();
    dir
}

/// `streamcheck ARGS` in `dir`, with its own cache: exit code, stdout, stderr.
fn streamcheck(dir: &Path, cache: &Path, args: &[&str]) -> (i32, String, String) {
    outcome(
        common::streamcheck()
            .current_dir(dir)
            .env("STREAMCHECK_CACHE", cache)
            .env_remove("STREAMCHECK_CONFIG")
            .args(args),
    )
}

/// `mycli` prints a small subset of what the pinned Claude Code prints: the bundled
/// protocol inventory would name every key it leaves out (tests/protocol.rs tests that),
/// so these projects turn the protocol check off.
const CONFIG: &str = "protocol = \"off\"\n[scenarios]\nbundled = false\nfolders = [\"own\"]\n[targets.mycli]\ncommand = \"./mycli\"\n";

#[test]
fn a_wrapper_is_held_to_the_release_it_conforms_to_not_its_own_version() {
    let dir = repo();
    let cache = tempfile::tempdir().unwrap();
    // Default: the dialect's pin (2.1.x), so the `<1.0.0` block does not apply.
    std::fs::write(dir.path().join("streamcheck.toml"), CONFIG).unwrap();
    let (code, out, err) = streamcheck(dir.path(), cache.path(), &["run"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("1 passed, 0 failed"), "{out}");
    assert!(
        dir.path().join("reports/runs/latest/results.json").exists(),
        "reports under the project"
    );

    // Told to conform to a 0.x release, it gets that release's block, and fails it.
    let pinned_to_old = format!("{CONFIG}conforms_to = \"claude-code@0.9.0\"\n");
    std::fs::write(dir.path().join("streamcheck.toml"), pinned_to_old).unwrap();
    let (code, out, _) = streamcheck(dir.path(), cache.path(), &["run", "--target", "mycli"]);
    assert_eq!(code, 1, "{out}");
}

#[test]
fn the_project_file_refuses_unknown_keys_with_file_and_line() {
    let dir = repo();
    let cache = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("streamcheck.toml"),
        format!("{CONFIG}comand = \"x\"\n"),
    )
    .unwrap();
    let (code, _, err) = streamcheck(dir.path(), cache.path(), &["list"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("streamcheck.toml:7:1") && err.contains("comand"),
        "{err}"
    );
}

#[test]
fn known_divergences_of_the_project_hide_only_what_they_name() {
    let dir = repo();
    let cache = tempfile::tempdir().unwrap();
    let failing = GOOD.replace("result: \"Hello!\"}", "result: \"Bye!\"}");
    std::fs::write(dir.path().join("own/basics/hello.yaml"), failing).unwrap();
    let known = "- scenario: basics/hello\n  kind: field_mismatch\n  path: $.result\n  reason: says Hello, not Bye\n";
    std::fs::write(dir.path().join("known.yaml"), known).unwrap();
    let config = format!("known_divergences = \"known.yaml\"\n{CONFIG}");
    std::fs::write(dir.path().join("streamcheck.toml"), config).unwrap();
    let (code, out, err) = streamcheck(dir.path(), cache.path(), &["run"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("0 passed, 0 failed, 1 known, 0 skipped"),
        "{out}"
    );

    let stale = known.replace("$.result", "$.session_id");
    std::fs::write(dir.path().join("known.yaml"), stale).unwrap();
    let (code, out, _) = streamcheck(dir.path(), cache.path(), &["run"]);
    assert_eq!(code, 1, "the entry names another divergence: {out}");
    let (code, out, _) = streamcheck(dir.path(), cache.path(), &["run", "--strict"]);
    assert_eq!(code, 1, "{out}");
}

#[test]
fn outside_a_checkout_the_bundled_catalogue_is_used_and_own_scenarios_replace_it() {
    let dir = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let (code, out, err) = streamcheck(
        dir.path(),
        cache.path(),
        &["list", "--filter", "basics/text-reply"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("basics/text-reply") && out.contains("A plain text reply"),
        "{out}"
    );

    std::fs::create_dir_all(dir.path().join("own/basics")).unwrap();
    std::fs::write(dir.path().join("own/basics/text-reply.yaml"), GOOD).unwrap();
    std::fs::write(
        dir.path().join("streamcheck.toml"),
        "[scenarios]\nbundled = [\"basics\"]\nfolders = [\"own\"]\n",
    )
    .unwrap();
    let (code, out, err) = streamcheck(dir.path(), cache.path(), &["list"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("basics/text-reply") && out.contains("Says hello."),
        "the own one replaces it: {out}"
    );
    assert!(!out.contains("A plain text reply"), "{out}");
    assert!(!out.contains("tools/"), "only the topics taken: {out}");
}

#[test]
fn init_writes_a_project_that_loads_and_never_overwrites_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let (code, out, err) = streamcheck(dir.path(), cache.path(), &["init"]);
    assert_eq!(code, 0, "{out}{err}");
    for f in [
        "streamcheck.toml",
        "streamcheck/scenarios/example/hello.yaml",
        "streamcheck/known-divergences.yaml",
        ".github/workflows/streamcheck.yml",
    ] {
        assert!(dir.path().join(f).is_file(), "{f}");
    }
    assert!(out.contains("streamcheck run --filter example/"), "{out}");
    let (code, out, _) = streamcheck(dir.path(), cache.path(), &["list", "--filter", "example/"]);
    assert_eq!(code, 0);
    assert!(out.contains("example/hello"), "{out}");

    let (code, _, err) = streamcheck(dir.path(), cache.path(), &["init"]);
    assert_eq!(code, 2);
    assert!(err.contains("--force"), "{err}");
    let (code, _, _) = streamcheck(
        dir.path(),
        cache.path(),
        &["init", "--force", "--ci", "gitlab"],
    );
    assert_eq!(code, 0);
    assert!(dir.path().join(".gitlab-ci.yml").is_file());
}

/// A project's own scenarios are held to the same release-wide rules as the bundled ones:
/// at the pin, `session-state-frames` lets `system/session_state_changed` through anywhere,
/// and checks its shape.
#[test]
fn own_scenarios_get_the_release_wide_rules_of_their_target() {
    let dir = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let frames = |state: &str| {
        let sid = "5e55a1d0-0000-4000-8000-000000000001";
        let s = format!("\"session_id\":\"{sid}\"");
        format!(
            "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 2.1.330; exit 0; fi\ncat >/dev/null &\n\
             echo '{{\"type\":\"system\",\"subtype\":\"init\",{s}}}'\n\
             echo '{{\"type\":\"assistant\",\"message\":{{\"content\":[{{\"type\":\"text\",\"text\":\"Hi\"}}]}},{s}}}'\n\
             echo '{{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"Hi\",{s}}}'\n\
             echo '{{\"type\":\"system\",\"subtype\":\"session_state_changed\",\"state\":\"{state}\",\"sdk_host_only\":true,{s}}}'\n"
        )
    };
    std::fs::create_dir_all(dir.path().join("own")).unwrap();
    std::fs::write(
        dir.path().join("own/hi.yaml"),
        "description: Says hi.\nprompt: hi\nstub: {steps: []}\nexpect:\n  claude-code:\n    frames:\n      - {type: system, subtype: init}\n      - {type: assistant}\n      - {type: result, subtype: success}\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("streamcheck.toml"), CONFIG).unwrap();

    write_executable(&dir.path().join("mycli"), &frames("idle"));
    let (code, out, err) = streamcheck(dir.path(), cache.path(), &["run"]);
    assert_eq!(code, 0, "the rule lets the frame through: {out}{err}");
    assert!(
        out.contains("rule session-state-frames held in 1 trial"),
        "{out}"
    );

    write_executable(&dir.path().join("mycli"), &frames("sleepy"));
    let (code, out, _) = streamcheck(dir.path(), cache.path(), &["run"]);
    assert_eq!(code, 1, "the frame breaks the rule's shape: {out}");
}

#[test]
fn a_bundled_topic_or_scenario_the_catalogue_lacks_exits_2_naming_the_topics() {
    let dir = repo();
    let cache = tempfile::tempdir().unwrap();
    let config = CONFIG.replace("bundled = false", "bundled = [\"basic\"]");
    std::fs::write(dir.path().join("streamcheck.toml"), config).unwrap();
    for command in ["list", "check", "run"] {
        let (code, out, err) = streamcheck(dir.path(), cache.path(), &[command]);
        assert_eq!(code, 2, "{command}: {out}{err}");
        assert!(
            err.contains("streamcheck.toml") && err.contains("`basic`"),
            "{command}: {err}"
        );
        assert!(err.contains("basics, ") && err.contains("tools"), "{err}");
    }
    // A scenario id names that scenario alone.
    let config = CONFIG.replace("bundled = false", "bundled = [\"basics/text-reply\"]");
    std::fs::write(dir.path().join("streamcheck.toml"), config).unwrap();
    let (code, out, err) = streamcheck(dir.path(), cache.path(), &["list"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("A plain text reply"), "{out}");
    assert_eq!(out.lines().count(), 2, "it and the own one: {out}");
}

/// `audit --from` a run of a project's target: the trial's dialect and the release it was
/// held to come from the saved trial, never from the target's name (`mycli`), and a
/// wrapper is checked against the release it conforms to, not its own version (0.3.0,
/// which the scenario's `<1.0.0` block would fail).
#[test]
fn audit_checks_a_project_target_against_its_dialect_and_held_to_release() {
    let dir = repo();
    let cache = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("streamcheck.toml"), CONFIG).unwrap();
    let (code, out, err) = streamcheck(dir.path(), cache.path(), &["run"]);
    assert_eq!(code, 0, "{out}{err}");
    let run = dir.path().join("reports/runs/latest");
    let run = run.to_str().unwrap();
    let (code, out, err) = streamcheck(dir.path(), cache.path(), &["audit", "--from", run]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("audit: 1 scenario(s)") && out.contains("0 not audited"),
        "{out}"
    );
}

/// A score of nothing is no score: an audit that audited no trial exits 2, saying why.
#[test]
fn an_audit_with_nothing_audited_exits_2() {
    let dir = repo();
    let cache = tempfile::tempdir().unwrap();
    let failing = GOOD.replace("result: \"Hello!\"}", "result: \"Bye!\"}");
    std::fs::write(dir.path().join("own/basics/hello.yaml"), failing).unwrap();
    std::fs::write(dir.path().join("streamcheck.toml"), CONFIG).unwrap();
    let (code, out, _) = streamcheck(dir.path(), cache.path(), &["run"]);
    assert_eq!(code, 1, "{out}");
    let run = dir.path().join("reports/runs/latest");
    let run = run.to_str().unwrap();
    let (code, out, err) = streamcheck(dir.path(), cache.path(), &["audit", "--from", run]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("nothing audited") && err.contains("did not pass"),
        "{err}"
    );
}

/// A project's own scenarios get `$FIXTURES` of the project streamcheck runs in (here
/// this checkout, with `--root`), not a folder beside the scenario file.
#[cfg(unix)]
#[test]
fn own_scenarios_get_the_fixtures_of_the_project() {
    let dir = repo();
    let wrapper = format!(
        "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 2.1.0; exit 0; fi\n[ -f \"$FIX/mcp-server/server.mjs\" ] || {{ echo \"no fixtures at $FIX\" >&2; exit 9; }}\nexec {} \"$@\"\n",
        fake_cli().display()
    );
    write_executable(&dir.path().join("mycli"), &wrapper);
    let uses = GOOD.replace(
        "env: {FAKE_MODE: hello}",
        "env: {FAKE_MODE: hello, FIX: $FIXTURES}",
    );
    std::fs::write(dir.path().join("own/basics/hello.yaml"), uses).unwrap();
    std::fs::write(dir.path().join("streamcheck.toml"), CONFIG).unwrap();
    // The fixtures install into the machine's cache, as the catalogue's MCP scenarios do.
    let (code, out, err) = outcome(
        common::streamcheck()
            .current_dir(dir.path())
            .env_remove("STREAMCHECK_CONFIG")
            .arg("--root")
            .arg(common::repo())
            .arg("run"),
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("1 passed, 0 failed"), "{out}");
}

/// `--target-command NAME` finds a bare name on `PATH`, as a shell would; a name that is
/// neither a file nor on `PATH` is a setup error naming it.
#[test]
fn a_bare_target_command_is_looked_up_on_path() {
    let dir = repo();
    let cache = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("streamcheck.toml"),
        "protocol = \"off\"\n[scenarios]\nbundled = false\nfolders = [\"own\"]\n",
    )
    .unwrap();
    let bin = tempfile::tempdir().unwrap();
    std::fs::rename(dir.path().join("mycli"), bin.path().join("mycli-on-path")).unwrap();
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let run = |name: &str| {
        outcome(
            common::streamcheck()
                .current_dir(dir.path())
                .env("STREAMCHECK_CACHE", cache.path())
                .env("PATH", &path)
                .env_remove("STREAMCHECK_CONFIG")
                .args(["run", "--target-command", name]),
        )
    };
    let (code, out, err) = run("mycli-on-path");
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("1 passed, 0 failed"), "{out}");
    let (code, _, err) = run("no-such-cli-anywhere");
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("no-such-cli-anywhere") && err.contains("PATH"),
        "{err}"
    );
}

/// `show ID` prints a bundled scenario's file as written, even one the project file's
/// `bundled` does not take; an unknown id exits 2 naming the ids that contain it.
#[test]
fn show_prints_a_bundled_scenario_and_names_near_ids_for_an_unknown_one() {
    let dir = repo();
    let cache = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("streamcheck.toml"), CONFIG).unwrap();
    let (code, out, err) = streamcheck(dir.path(), cache.path(), &["show", "basics/text-reply"]);
    assert_eq!(code, 0, "{err}");
    let bundled =
        std::fs::read_to_string(common::repo().join("scenarios/basics/text-reply.yaml")).unwrap();
    assert_eq!(out, bundled);
    assert!(err.contains("basics/text-reply.yaml"), "where it is: {err}");

    let (code, _, err) = streamcheck(dir.path(), cache.path(), &["show", "text-rep"]);
    assert_eq!(code, 2);
    assert!(err.contains("basics/text-reply"), "{err}");
}

/// A project target's `package` naming no target is refused naming the file, the key and
/// the targets there are.
#[test]
fn a_package_naming_no_target_names_the_file_the_key_and_the_targets() {
    let dir = repo();
    let cache = tempfile::tempdir().unwrap();
    let config = "[scenarios]\nbundled = false\nfolders = [\"own\"]\n[targets.m]\npackage = \"claud-code@1.0.0\"\n";
    std::fs::write(dir.path().join("streamcheck.toml"), config).unwrap();
    let (code, out, err) = streamcheck(dir.path(), cache.path(), &["run"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("streamcheck.toml: targets.m.package: unknown target `claud-code`")
            && err.contains("claude-code@VERSION"),
        "{err}"
    );
}

/// `record` outside a checkout writes its pending files under the project's reports, never
/// into the unpacked catalogue in the cache; accepting one for a bundled scenario writes the
/// project's own copy into its scenario folder, which then replaces the bundled one.
#[test]
fn recording_a_bundled_scenario_stays_in_the_project_and_accepting_copies_it() {
    let dir = repo();
    let cache = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("streamcheck.toml"),
        "protocol = \"off\"\n[scenarios]\nbundled = [\"basics/text-reply\"]\nfolders = [\"own\"]\n[targets.mycli]\ncommand = \"./mycli\"\nenv = { FAKE_MODE = \"hello\" }\n",
    )
    .unwrap();
    let id = "basics/text-reply";
    let (code, out, err) = streamcheck(
        dir.path(),
        cache.path(),
        &["record", "--target", "mycli", "--filter", id],
    );
    assert_eq!(code, 0, "{out}{err}");
    let pending = dir.path().join("reports/pending/basics");
    let files: Vec<_> = std::fs::read_dir(&pending)
        .unwrap_or_else(|e| panic!("{}: {e}\n{out}", pending.display()))
        .collect();
    assert_eq!(files.len(), 1, "{out}");
    assert!(out.contains("reports/pending/basics/text-reply."), "{out}");
    let bundle_before = bundled_text(cache.path(), id);
    let (code, out, _) = streamcheck(
        dir.path(),
        cache.path(),
        &["run", "--target", "mycli", "--filter", id],
    );
    assert!(code == 1 && out.contains("field mismatch"), "{out}");

    let (code, out, err) = streamcheck(dir.path(), cache.path(), &["review", "--accept-all"]);
    assert_eq!(code, 0, "{out}{err}");
    let copy = dir.path().join("own/basics/text-reply.yaml");
    assert!(copy.is_file(), "{out}");
    assert!(out.contains("copied into"), "{out}");
    assert_eq!(
        bundled_text(cache.path(), id),
        bundle_before,
        "the bundle is untouched"
    );

    // The fake CLI sends the stub no request, so the run still fails on those, but the
    // frames it printed are now the project's own expectation.
    let (code, out, err) = streamcheck(
        dir.path(),
        cache.path(),
        &["run", "--target", "mycli", "--filter", id],
    );
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("request assertion") && !out.contains("field mismatch"),
        "the accepted copy is what ran: {out}"
    );
}

/// The unpacked catalogue's copy of scenario `id` (one bundle folder in `cache`).
fn bundled_text(cache: &Path, id: &str) -> String {
    let bundle = std::fs::read_dir(cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("bundle-")
        })
        .expect("an unpacked bundle");
    std::fs::read_to_string(bundle.join(format!("scenarios/{id}.yaml"))).unwrap()
}

/// A project's list is held to the rules of the dialects' lists: each entry names a
/// symptom and a scenario of the catalogue, or `run` (with or without --strict) and
/// `check` refuse the setup (exit 2) with the file and line.
#[test]
fn a_project_entry_naming_no_symptom_or_no_scenario_is_a_setup_error() {
    let dir = repo();
    let cache = tempfile::tempdir().unwrap();
    let failing = GOOD.replace("result: \"Hello!\"}", "result: \"Bye!\"}");
    std::fs::write(dir.path().join("own/basics/hello.yaml"), failing).unwrap();
    let config = format!("known_divergences = \"known.yaml\"\n{CONFIG}");
    std::fs::write(dir.path().join("streamcheck.toml"), config).unwrap();
    let entry = |scenario: &str, symptom: &str| {
        format!("- scenario: {scenario}\n  kind: field_mismatch\n{symptom}  reason: r\n")
    };
    let named = entry("basics/hello", "  path: $.result\n");
    let cases = [
        (
            entry("basics/hello", ""),
            "known.yaml:1: ",
            "names no symptom",
        ),
        (
            format!("{named}{}", entry("basics/hello", "  message: '.*'\n")),
            "known.yaml:5: ",
            "matches any divergence of its kind",
        ),
        (
            format!("{named}{}", entry("basics/helo", "  path: $.result\n")),
            "known.yaml:5: ",
            "names basics/helo, which is not a scenario",
        ),
    ];
    for (known, at, why) in cases {
        std::fs::write(dir.path().join("known.yaml"), &known).unwrap();
        for args in [&["run"][..], &["run", "--strict"], &["check"]] {
            let (code, out, err) = streamcheck(dir.path(), cache.path(), args);
            assert_eq!(code, 2, "{args:?} {known}: {out}{err}");
            assert!(err.contains(at) && err.contains(why), "{args:?}: {err}");
        }
    }
    std::fs::write(dir.path().join("known.yaml"), &named).unwrap();
    let (code, out, err) = streamcheck(dir.path(), cache.path(), &["run", "--strict"]);
    assert_eq!(code, 0, "{out}{err}");
}
