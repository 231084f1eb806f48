//! A gate's worst failure is a green that should have been red. Each broken setup here
//! once ended with exit 0; now each exits 2 with one line naming the cause.

mod common;

use common::{fake_cli, outcome, streamcheck_at, write_executable};
use std::path::Path;

const GOOD: &str = "description: Says hello.\nenv: {FAKE_MODE: hello}\nprompt: hi\nexpect:\n  claude-code:\n    frames:\n      - {type: system, subtype: init}\n      - {type: assistant}\n      - {type: result, subtype: success}\n";

/// A project with `scenarios/<name>.yaml` for each file given, and what it took to make it.
struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    fn new(files: &[(&str, &str)]) -> Project {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("targets/claude-code")).unwrap();
        for (name, text) in files {
            let path = dir.path().join("scenarios").join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        Project { dir }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    /// `streamcheck --root <project> ARGS` against the fake CLI: exit code and stderr.
    fn run(&self, args: &[&str]) -> (i32, String, String) {
        let mut cmd = streamcheck_at(self.root());
        cmd.args(args);
        if args[0] == "run" {
            cmd.arg("--report-dir").arg(self.root().join("reports"));
            if !args.contains(&"--target-command") {
                cmd.arg("--target-command").arg(fake_cli());
            }
        }
        outcome(&mut cmd)
    }
}

#[test]
fn a_missing_target_command_exits_2_naming_it() {
    let p = Project::new(&[("basics/good.yaml", GOOD)]);
    let (code, out, err) = p.run(&["run", "--target-command", "./bin/nope"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("./bin/nope") && err.contains("not available"),
        "{err}"
    );
    assert!(
        out.contains("1 unavailable"),
        "the trial is reported as unavailable, not skipped: {out}"
    );
    let results = std::fs::read_to_string(p.root().join("reports/results.json")).unwrap();
    assert!(results.contains("\"unavailable\""), "{results}");
}

#[cfg(unix)]
#[test]
fn a_target_command_that_cannot_start_exits_2_naming_why() {
    let p = Project::new(&[("basics/good.yaml", GOOD)]);
    let not_executable = p.root().join("cli.sh");
    std::fs::write(&not_executable, "#!/bin/sh\necho 1.0.0\n").unwrap();
    let (code, _, err) = p.run(&["run", "--target-command", not_executable.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not executable"), "{err}");

    let bad_interpreter = p.root().join("bad.sh");
    write_executable(&bad_interpreter, "#!/no/such/interpreter\n");
    let (code, _, err) = p.run(&["run", "--target-command", bad_interpreter.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("cannot start"), "{err}");
}

#[test]
fn a_filter_or_shard_that_selects_nothing_exits_2_unless_allowed() {
    let p = Project::new(&[("basics/good.yaml", GOOD)]);
    let (code, _, err) = p.run(&["run", "--filter", "no-such-scenario"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("no trial selected") && err.contains("no-such-scenario"),
        "{err}"
    );
    let (code, _, err) = p.run(&["run", "--filter", "no-such-scenario", "--allow-empty"]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = p.run(&["list", "--filter", "no-such-scenario"]);
    assert_eq!(code, 2, "{err}");

    let empty = Project::new(&[]);
    std::fs::create_dir_all(empty.root().join("scenarios")).unwrap();
    let (code, _, err) = empty.run(&["run"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no scenario file"), "{err}");
}

#[test]
fn scenarios_with_no_expectation_for_the_target_are_no_trial_and_exit_2() {
    let caliban_only = GOOD.replace("claude-code:", "caliban:");
    let p = Project::new(&[("basics/other.yaml", &caliban_only)]);
    let (code, _, err) = p.run(&["run"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no trial ran"), "{err}");
}

#[cfg(unix)]
#[test]
fn a_symlinked_scenario_folder_is_followed() {
    let p = Project::new(&[]);
    let mine = p.root().join("my-scenarios");
    std::fs::create_dir_all(&mine).unwrap();
    std::fs::write(mine.join("good.yaml"), GOOD).unwrap();
    std::fs::create_dir_all(p.root().join("scenarios")).unwrap();
    std::os::unix::fs::symlink("../my-scenarios", p.root().join("scenarios/mine")).unwrap();
    let (code, out, err) = p.run(&["run"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("1 passed"), "{out}");
    let (code, out, _) = p.run(&["list"]);
    assert_eq!(code, 0);
    assert!(out.contains("mine/good"), "{out}");
}

#[cfg(unix)]
#[test]
fn an_unreadable_scenario_folder_exits_2_naming_it() {
    let p = Project::new(&[("basics/good.yaml", GOOD)]);
    std::os::unix::fs::symlink("../nowhere", p.root().join("scenarios/gone")).unwrap();
    let (code, _, err) = p.run(&["run"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("scenarios/gone"), "{err}");
}

#[test]
fn an_expect_key_no_target_has_is_refused_with_line_column_and_the_known_names() {
    let p = Project::new(&[("basics/mine.yaml", &GOOD.replace("claude-code:", "mycli:"))]);
    let (code, _, err) = p.run(&["check"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("mine.yaml:5:3"), "{err}");
    assert!(
        err.contains("`mycli`") && err.contains("claude-code, caliban, qwen-code"),
        "{err}"
    );
    let (code, _, err) = p.run(&["run"]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn a_feature_name_typo_is_refused_with_line_column_and_the_known_names() {
    let typo = GOOD.replace("prompt: hi\n", "prompt: hi\nfeatures: [tool:Bsh]\n");
    let p = Project::new(&[("basics/typo.yaml", &typo)]);
    let (code, _, err) = p.run(&["check"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("typo.yaml:4:12"), "{err}");
    assert!(
        err.contains("`tool:Bsh`") && err.contains("tool:Bash"),
        "{err}"
    );
    let (code, _, _) = p.run(&["run"]);
    assert_eq!(code, 2);
}

#[test]
fn compare_exits_1_when_a_compared_target_fails_its_own_expectation() {
    let failing = GOOD.replace("subtype: success}", "subtype: success, result: \"Bye!\"}");
    let p = Project::new(&[("basics/good.yaml", &failing)]);
    for name in ["one", "two"] {
        let file = format!("name: {name}\ncommand: {}\n", fake_cli().display());
        std::fs::write(p.root().join(format!("{name}.yaml")), file).unwrap();
    }
    let target = |n: &str| p.root().join(format!("{n}.yaml")).display().to_string();
    let reports = p.root().join("parity");
    let args = [
        "compare",
        "--target",
        &target("one"),
        "--target",
        &target("two"),
    ];
    let mut args: Vec<&str> = args.to_vec();
    let dir = reports.display().to_string();
    args.extend(["--report-dir", &dir]);
    let (code, out, err) = p.run(&args);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("fails its own expectation"), "{out}");
    assert!(
        out.contains("0 differ (0 in substance, 0 in key paths)"),
        "the two sides agree with each other: {out}"
    );

    let passing = Project::new(&[("basics/good.yaml", GOOD)]);
    for name in ["one", "two"] {
        let file = format!("name: {name}\ncommand: {}\n", fake_cli().display());
        std::fs::write(passing.root().join(format!("{name}.yaml")), file).unwrap();
    }
    let target = |n: &str| {
        passing
            .root()
            .join(format!("{n}.yaml"))
            .display()
            .to_string()
    };
    let (code, out, err) = passing.run(&[
        "compare",
        "--target",
        &target("one"),
        "--target",
        &target("two"),
        "--report-dir",
        &dir,
    ]);
    assert_eq!(code, 0, "{out}{err}");
}

#[test]
fn the_trial_report_lists_every_divergence() {
    let two_wrong = GOOD
        .replace(
            "{type: assistant}",
            "{type: assistant, message: {content: [{text: \"Nope\"}]}}",
        )
        .replace("subtype: success}", "subtype: success, result: \"Bye!\"}");
    let p = Project::new(&[("basics/two.yaml", &two_wrong)]);
    let (code, out, err) = p.run(&["run"]);
    assert_eq!(code, 1, "{out}{err}");
    let md = p.root().join("reports/basics/two.command_fake-cli.sh.md");
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(text.contains("1. **field mismatch** at frame 1"), "{text}");
    assert!(text.contains("2. **field mismatch** at frame 2"), "{text}");
}

/// A project's own known-divergences file is held to the bundled lists' rule: an entry
/// that names no kind would hide any divergence, a crash or a lost result included.
#[test]
fn a_known_divergence_that_would_hide_anything_exits_2_naming_the_file() {
    let p = Project::new(&[("basics/good.yaml", GOOD)]);
    std::fs::write(
        p.root().join("known.yaml"),
        "- scenario: basics/good\n  versions: \">=1.0.0\"\n  reason: everything is fine\n",
    )
    .unwrap();
    std::fs::write(
        p.root().join("streamcheck.toml"),
        "known_divergences = \"known.yaml\"\n",
    )
    .unwrap();
    let mut cmd = streamcheck_at(p.root());
    cmd.current_dir(p.root())
        .env("STREAMCHECK_CONFIG", p.root().join("streamcheck.toml"))
        .args(["run", "--report-dir"])
        .arg(p.root().join("reports"))
        .arg("--target-command")
        .arg(fake_cli());
    let (code, out, err) = outcome(&mut cmd);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("known.yaml") && err.contains("kind"), "{err}");
}

/// `cargo test` may ignore a target's trials only when its CLI is not installed: a data
/// file of its dialect that does not load makes it broken (its trials fail), whether or
/// not the CLI is there. The two are told apart by their type, not their wording.
#[test]
fn a_broken_data_file_is_a_broken_target_and_only_a_missing_cli_is_not_installed() {
    use streamcheck::dialect::Dialect;
    use streamcheck::install::{self, Cause, TargetSpec};
    let p = Project::new(&[]);
    // A project reads its data files once: each step is a new run, with a new project.
    let project = || streamcheck::install::Project::at(p.root());
    let on_fake = TargetSpec::command(&fake_cli(), Dialect::ClaudeCode);
    let missing = TargetSpec::parse("claude-code@0.0.1-never-installed").unwrap();
    install::resolve(&on_fake, &project(), false).unwrap();
    let e = install::resolve(&missing, &project(), false).unwrap_err();
    assert_eq!(e.cause, Cause::NotInstalled, "{e}");
    assert!(
        e.install.contains("claude-code@0.0.1-never-installed"),
        "{e}"
    );

    // `version:` for `versions:`: the whole file no longer loads.
    let known = p.root().join("targets/claude-code/known-divergences.yaml");
    let typo = "- scenario: basics/good\n  kind: exit_code\n  version: '>=1'\n  reason: r\n";
    std::fs::write(&known, typo).unwrap();
    for spec in [&on_fake, &missing] {
        let e = install::resolve(spec, &project(), false).unwrap_err();
        assert_eq!(e.cause, Cause::Broken, "{e}");
        assert!(e.reason.contains("known-divergences.yaml"), "{e}");
    }
    std::fs::remove_file(&known).unwrap();
    let tools = p.root().join("targets/claude-code/tools.yaml");
    std::fs::write(&tools, "Bash: [not, a, tool]\n").unwrap();
    let e = install::resolve(&on_fake, &project(), false).unwrap_err();
    assert_eq!(e.cause, Cause::Broken, "{e}");
    assert!(e.reason.contains("tools.yaml"), "{e}");
}

/// Every data file of every dialect in this repository loads, so a broken one fails
/// `cargo test` even where no CLI is installed (the conformance trials would only be
/// ignored there). A data file no loader reads here is named: add it.
#[test]
fn every_dialects_data_files_in_the_repository_load() {
    use streamcheck::dialect::Dialect;
    use streamcheck::install::{self, TargetSpec};
    use streamcheck::recording::profile::RecordProfile;
    let root = common::repo();
    let project = streamcheck::install::Project::at(root.clone());
    let dir = tempfile::tempdir().unwrap();
    let cli = dir.path().join("cli.sh");
    write_executable(&cli, "#!/bin/sh\necho 1.0.0\n");
    let mut checked = Vec::new();
    for &dialect in Dialect::ALL {
        let key = dialect.conventions().expect_key();
        // known-divergences.yaml, tools.yaml, versions.yaml and rules.yaml.
        let spec = TargetSpec::command(&cli, dialect);
        if let Err(e) = install::resolve(&spec, &project, false) {
            panic!("{key}: {e}");
        }
        RecordProfile::load(&project, dialect).unwrap_or_else(|e| panic!("{key}: {e}"));
        let data = [
            "known-divergences",
            "tools",
            "versions",
            "rules",
            "record-profile",
        ];
        checked.extend(data.map(|f| format!("targets/{key}/{f}.yaml")));
        // findings.yaml is read with known-divergences.yaml (resolve above loads both).
        checked.push(format!("targets/{key}/findings.yaml"));
        let proofs = root.join(format!("targets/{key}/ranges.yaml"));
        if proofs.exists() {
            streamcheck::commands::ranges::proof::ProofFile::load(&proofs)
                .unwrap_or_else(|e| panic!("{key}: {e}"));
            checked.push(format!("targets/{key}/ranges.yaml"));
        }
        // The protocol inventory, where the dialect has one.
        let inventory = streamcheck::protocol::inventory::file_of(key);
        if root.join(&inventory).exists() {
            streamcheck::protocol::Inventory::load(&root.join(&inventory))
                .unwrap_or_else(|e| panic!("{key}: {e}"));
            checked.push(inventory.display().to_string());
        }
        let requests = streamcheck::protocol::requests::file_of(key);
        if root.join(&requests).exists() {
            let loaded = streamcheck::protocol::requests::load(&root, key);
            if let Err(e) = loaded.as_ref() {
                panic!("{key}: {e}");
            }
            checked.push(requests.display().to_string());
        }
        let unobserved = streamcheck::protocol::render::unobserved_file(key);
        if root.join(&unobserved).exists() {
            streamcheck::protocol::render::load_unobserved(&root, key)
                .unwrap_or_else(|e| panic!("{key}: {e}"));
            checked.push(unobserved.display().to_string());
        }
    }
    // The client profiles are compiled in: reading them all parses each.
    for name in streamcheck::client::profile::all().keys() {
        checked.push(format!("targets/claude-code/clients/{name}.yaml"));
    }
    let unchecked: Vec<String> = walkdir::WalkDir::new(root.join("targets"))
        .into_iter()
        .filter_entry(|e| e.file_name() != "node_modules")
        .filter_map(Result::ok)
        .filter(|e| {
            e.path()
                .extension()
                .is_some_and(|x| x == "yaml" || x == "yml")
        })
        .map(|e| e.path().strip_prefix(&root).unwrap().display().to_string())
        .filter(|rel| !checked.contains(rel))
        .collect();
    assert!(
        unchecked.is_empty(),
        "data files no test loads: {unchecked:?}"
    );
}

#[test]
fn a_ref_to_a_name_nothing_captures_is_a_check_error_naming_file_and_ref() {
    let unbound = GOOD.replace(
        "{type: result, subtype: success}",
        "{type: result, subtype: success, session_id: {$ref: sid}}",
    );
    let p = Project::new(&[("basics/unbound.yaml", &unbound)]);
    let (code, out, err) = p.run(&["check"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("unbound.yaml:9:") && err.contains("`{$ref: sid}` refers to nothing"),
        "{err}"
    );
    let bound = unbound.replace(
        "{type: system, subtype: init}",
        "{type: system, subtype: init, session_id: {$capture: sid}}",
    );
    let p = Project::new(&[("basics/bound.yaml", &bound)]);
    let (code, out, err) = p.run(&["check"]);
    assert_eq!(code, 0, "{out}{err}");
    // A capture in another target's expectation binds nothing in this one.
    let elsewhere = format!(
        "{unbound}  caliban:\n    frames: [{{type: result, session_id: {{$capture: sid}}}}]\n"
    );
    let p = Project::new(&[("basics/elsewhere.yaml", &elsewhere)]);
    let (code, _, err) = p.run(&["check"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("expect.claude-code"), "{err}");
}

#[test]
fn merge_refuses_a_run_named_twice_and_folders_with_no_trial() {
    let p = Project::new(&[("basics/good.yaml", GOOD)]);
    let (code, _, err) = p.run(&["run"]);
    assert_eq!(code, 0, "{err}");
    let run = p.root().join("reports").display().to_string();
    let copy = p.root().join("copy");
    common::copy_dir(&p.root().join("reports"), &copy);
    let copy = copy.display().to_string();
    let out = p.root().join("merged").display().to_string();
    for twice in [[&run, &run], [&run, &copy]] {
        let (code, _, err) = p.run(&["merge", twice[0], twice[1], "--out", &out]);
        assert_eq!(code, 2, "{err}");
        assert!(
            err.contains("both hold basics/good") && err.contains("count it twice"),
            "{err}"
        );
    }

    let nothing = Project::new(&[("basics/good.yaml", GOOD)]);
    let (code, _, err) = nothing.run(&["run", "--filter", "nothing", "--allow-empty"]);
    assert_eq!(code, 0, "{err}");
    let empty = nothing.root().join("reports").display().to_string();
    let (code, _, err) = p.run(&["merge", &empty, &empty, "--out", &out]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = p.run(&["merge", &empty, "--out", &out]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("hold no trial"), "{err}");
}
