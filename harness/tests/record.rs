//! `streamcheck record` and `review` against a fake CLI (fixtures/record/fake-cli.sh) in a
//! temp copy of a fixture project: a recorded expectation passes when re-run, fails when
//! one frame changes, and nothing reaches a scenario file without review.

mod common;

use common::{copy_dir, fixture_root, printed, repo, streamcheck_at};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A temp copy of the fixture project.
fn project() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap().join("proj");
    copy_dir(&fixture_root("record"), &root);
    // The project's own record profile, so the tests check the real one.
    let profile = repo().join("targets/claude-code/record-profile.yaml");
    std::fs::copy(
        profile,
        root.join("targets/claude-code/record-profile.yaml"),
    )
    .unwrap();
    (tmp, root)
}

fn streamcheck(root: &Path, args: &[&str]) -> (i32, String) {
    let out = streamcheck_at(root).args(args).output().unwrap();
    (out.status.code().unwrap_or(-1), printed(&out))
}

fn with_cli(root: &Path, cmd: &str, cli: &str, extra: &[&str]) -> (i32, String) {
    let cli = root.join(cli);
    let reports = root.join(format!("runs/{}", rand_name()));
    let mut args = vec![
        cmd,
        "--jobs",
        "2",
        "--target-command",
        cli.to_str().unwrap(),
        "--report-dir",
        reports.to_str().unwrap(),
    ];
    // The old fake stands for the release it reports; a command is held to the pin otherwise.
    if cli.ends_with("fake-cli-old.sh") {
        args.extend(["--conforms-to", "9.8.0"]);
    }
    args.extend_from_slice(extra);
    streamcheck(root, &args)
}

fn rand_name() -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    format!("r{}", N.fetch_add(1, Ordering::SeqCst))
}

fn scenario_files(root: &Path) -> BTreeMap<String, String> {
    ["agent", "exit3", "hello"]
        .iter()
        .map(|n| {
            let p = root.join(format!("scenarios/basic/{n}.yaml"));
            (n.to_string(), std::fs::read_to_string(p).unwrap())
        })
        .collect()
}

fn pending(root: &Path) -> Vec<String> {
    streamcheck::recording::pending_files(&root.join("reports/pending"))
        .iter()
        .map(|p| {
            p.strip_prefix(root.join("reports/pending"))
                .unwrap()
                .display()
                .to_string()
        })
        .collect()
}

fn last_line(text: &str) -> &str {
    text.split("\n--- stderr ---")
        .next()
        .unwrap()
        .trim_end()
        .lines()
        .last()
        .unwrap_or("")
}

#[test]
fn recorded_expectations_pass_and_catch_a_changed_frame() {
    let (_tmp, root) = project();
    let before = scenario_files(&root);

    // Record everything (--full): pending files only.
    let (code, out) = with_cli(&root, "record", "fake-cli.sh", &["--runs", "2", "--full"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("3 pending, 0 unchanged"), "{out}");
    assert_eq!(
        scenario_files(&root),
        before,
        "record never writes a scenario"
    );
    assert_eq!(
        pending(&root),
        [
            "basic/agent.command_fake-cli.sh.yaml",
            "basic/exit3.command_fake-cli.sh.yaml",
            "basic/hello.command_fake-cli.sh.yaml"
        ]
    );

    // Review without a terminal and without a flag: diffs and a list, nothing decided.
    let (code, out) = streamcheck(&root, &["review"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("+++ b/scenarios/basic/hello.yaml"), "{out}");
    assert!(
        out.contains("-    exit_code: 0\n+    exit_code: 3"),
        "{out}"
    );
    assert!(out.contains("only listed"), "{out}");
    assert_eq!(scenario_files(&root), before);
    assert_eq!(pending(&root).len(), 3);

    // Accept: only frames and exit_code under expect.claude-code change.
    let (code, out) = streamcheck(&root, &["review", "--accept-all"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("3 accepted, 0 rejected"), "{out}");
    assert!(pending(&root).is_empty());
    let after = scenario_files(&root);
    let hello = &after["hello"];
    for kept in [
        "# A fixture for record/review: comments and the other target must survive a rewrite.\n",
        "    skip: {flag_refused: --caliban-only, because: \"the fake speaks claude-code only\"}   # caliban's own comment\n    frames:\n      - {type: system, subtype: init}\n  # the fake speaks claude-code\n  claude-code:\n    mode: subsequence\n    frames:\n",
        "    exit_code: 0\n    timeout: 20\n",
        "{type: system, subtype: init, cwd: $WORKSPACE, session_id: {$capture: session}, tools: [Bash, Read], model: fake-model, claude_code_version: $string, uuid: $uuid, memory_paths: {auto: $string}, tmp: $string, $$schema: $$literal, slash_commands: [clear], skills: [s1], agents: [a1]}",
        "timestamp: $string",
        "duration_ms: $number, total_cost_usd: $number, num_turns: 2, usage: {input_tokens: 12}",
    ] {
        assert!(hello.contains(kept), "{kept:?} missing in:\n{hello}");
    }
    assert!(!hello.contains("only the init, for now"));
    assert!(
        after["exit3"].contains("    exit_code: 3\n"),
        "{}",
        after["exit3"]
    );
    // The random task id differed between the two runs: generalised.
    assert!(
        after["agent"].contains("task_id: $string"),
        "{}",
        after["agent"]
    );

    // Re-run unchanged: passes.
    let (code, out) = with_cli(&root, "run", "fake-cli.sh", &[]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        last_line(&out),
        "3 passed, 0 failed, 0 known, 0 skipped",
        "{out}"
    );

    // Re-recording the same CLI brings nothing new.
    let (code, out) = with_cli(&root, "record", "fake-cli.sh", &["--full"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("0 pending, 3 unchanged"), "{out}");
    assert!(pending(&root).is_empty());

    // A CLI that changed one frame (the assistant's text): every scenario fails there.
    let (code, out) = with_cli(&root, "run", "fake-cli-changed.sh", &[]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(
        last_line(&out),
        "0 passed, 3 failed, 0 known, 0 skipped",
        "{out}"
    );
    assert!(
        out.contains("FAILED  basic/exit3 (command:fake-cli-changed.sh): field mismatch"),
        "{out}"
    );
    assert!(
        out.contains("stdout line 4, $.message.content[0].text]"),
        "{out}"
    );
}

#[test]
fn pending_recordings_never_reach_a_scenario_without_review() {
    let (_tmp, root) = project();
    let before = scenario_files(&root);
    let (code, out) = with_cli(&root, "record", "fake-cli.sh", &["--filter", "hello"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(pending(&root), ["basic/hello.command_fake-cli.sh.yaml"]);

    // Recording again replaces the pending file, and says so; the scenario stays.
    let (code, out) = with_cli(
        &root,
        "record",
        "fake-cli-changed.sh",
        &["--filter", "hello"],
    );
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("pending    basic/hello (command:fake-cli-changed.sh)"),
        "{out}"
    );
    let (code, out) = with_cli(
        &root,
        "record",
        "fake-cli-changed.sh",
        &["--filter", "hello"],
    );
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("(replaces an unreviewed pending file)"),
        "{out}"
    );
    assert_eq!(scenario_files(&root), before);
    assert_eq!(pending(&root).len(), 2);

    // --failing-only: the hello expectation (init only) passes, so nothing is recorded.
    let (_, out) = with_cli(
        &root,
        "record",
        "fake-cli.sh",
        &["--failing-only", "-f", "exit3"],
    );
    assert!(out.contains("1 pending"), "{out}");
    let (_, out) = with_cli(
        &root,
        "record",
        "fake-cli.sh",
        &["--failing-only", "-f", "hello"],
    );
    assert!(out.contains("passes (--failing-only)"), "{out}");

    // Reject: the pending files go, the scenarios stay as they were.
    let (code, out) = streamcheck(&root, &["review", "--reject-all"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("0 accepted, 3 rejected"), "{out}");
    assert!(pending(&root).is_empty());
    assert_eq!(scenario_files(&root), before);

    // A scenario edited into something review cannot rewrite: error, kept pending.
    with_cli(&root, "record", "fake-cli.sh", &["--filter", "exit3"]);
    let path = root.join("scenarios/basic/exit3.yaml");
    let flow = "description: d\nprompt: p\nenv: {FAKE_MODE: exit3}\nexpect: {claude-code: {exit_code: 0}}\n";
    std::fs::write(&path, flow).unwrap();
    let (code, out) = streamcheck(&root, &["review", "--accept-all"]);
    assert_eq!(code, 2, "an error, not a divergence: {out}");
    assert!(out.contains("flow style"), "{out}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), flow);
    assert_eq!(pending(&root).len(), 1);
}

/// The hello scenario's `expect: claude-code:` frames, one per line, after accepting.
fn frame_lines(text: &str) -> Vec<&str> {
    text.lines()
        .skip_while(|l| *l != "  claude-code:")
        .filter(|l| l.trim_start().starts_with("- {"))
        .collect()
}

#[test]
fn by_default_a_recording_keeps_the_protocol_and_leaves_catalogues_usage_and_models_out() {
    let (_tmp, root) = project();
    let (code, out) = with_cli(&root, "record", "fake-cli.sh", &["--filter", "hello"]);
    assert_eq!(code, 0, "{out}");
    let (code, out) = streamcheck(&root, &["review", "--accept-all"]);
    assert_eq!(code, 0, "{out}");
    let hello = scenario_files(&root)["hello"].clone();
    let frames = frame_lines(&hello);
    assert_eq!(frames.len(), 5, "{hello}");
    assert_eq!(
        frames[0].trim(),
        "- {type: system, subtype: init, cwd: $WORKSPACE, session_id: {$capture: session}}",
        "the init loses tools, slash_commands, skills, agents, model, version: {hello}"
    );
    assert!(
        frames[1].contains("content: [{type: tool_use, id: toolu_1, name: Write, input: {file_path: $WORKSPACE/out.txt, content: x}}]"),
        "a tool_use keeps its id, name and input: {}",
        frames[1]
    );
    assert!(
        frames[2].contains("{type: tool_result, tool_use_id: toolu_1"),
        "{}",
        frames[2]
    );
    assert!(
        frames[4].starts_with(
            "      - {type: result, subtype: success, is_error: false, result: {$regex: "
        ) && frames[4].ends_with(", num_turns: 2, session_id: {$ref: session}}"),
        "{}",
        frames[4]
    );
    for gone in [
        "tools:",
        "slash_commands",
        "skills",
        "agents",
        "model",
        "usage",
        "uuid",
        "duration_ms",
        "total_cost_usd",
    ] {
        assert!(
            !frames.iter().any(|f| f.contains(gone)),
            "{gone} in {hello}"
        );
    }
    // The recording still passes, and a changed text still fails.
    let (code, out) = with_cli(&root, "run", "fake-cli.sh", &["--filter", "hello"]);
    assert_eq!(code, 0, "{out}");
    let (code, out) = with_cli(&root, "run", "fake-cli-changed.sh", &["--filter", "hello"]);
    assert_eq!(code, 1, "{out}");
}

#[test]
fn recording_another_version_writes_a_version_block_with_only_what_differs() {
    let (_tmp, root) = project();
    with_cli(&root, "record", "fake-cli.sh", &["--filter", "hello"]);
    let (code, out) = streamcheck(&root, &["review", "--accept-all"]);
    assert_eq!(code, 0, "{out}");
    let general = scenario_files(&root)["hello"].clone();

    // 9.8.0 is not the pinned 9.9.9: a pending version block, not a copy of the frames.
    let (code, out) = with_cli(&root, "record", "fake-cli-old.sh", &["--filter", "hello"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(pending(&root), ["basic/hello.command_fake-cli-old.sh.yaml"]);
    let file = std::fs::read_to_string(
        root.join("reports/pending/basic/hello.command_fake-cli-old.sh.yaml"),
    )
    .unwrap();
    assert!(file.contains("expect: \"claude-code@9.8.0\"\n"), "{file}");
    assert!(file.contains("refines: claude-code\n"), "{file}");
    assert!(
        file.ends_with("exit_code: 1\nframes_patch:\n  4: {$merge: {is_error: true}}\n"),
        "{file}"
    );
    assert!(!file.contains("\nframes:"), "never the full frames: {file}");
    assert_eq!(scenario_files(&root)["hello"], general);

    // Accepting inserts the block and keeps everything else.
    let (code, out) = streamcheck(&root, &["review", "--accept-all"]);
    assert_eq!(code, 0, "{out}");
    let hello = scenario_files(&root)["hello"].clone();
    assert_eq!(
        hello,
        format!("{general}  claude-code@9.8.0:\n    exit_code: 1\n    frames_patch:\n      4: {{$merge: {{is_error: true}}}}\n")
    );
    for cli in ["fake-cli-old.sh", "fake-cli.sh"] {
        let (code, out) = with_cli(&root, "run", cli, &["--filter", "hello"]);
        assert_eq!(code, 0, "{cli}: {out}");
    }
    // Recording the old version again: its block already holds, nothing pending.
    let (_, out) = with_cli(&root, "record", "fake-cli-old.sh", &["--filter", "hello"]);
    assert!(out.contains("0 pending, 1 unchanged"), "{out}");
}

/// A scenario written for caliban only; comments around and after `expect:` must survive.
const FIRST: &str = "# Written for caliban; claude-code has no block yet.
description: The fake CLI says hello; no claude-code expectation yet.
prompt: say hello
expect:
  # caliban's block, kept byte for byte
  caliban:
    skip: {flag_refused: --caliban-only, because: \"the fake speaks claude-code only\"}   # its own comment
    frames:
      - {type: system, subtype: init}

# a comment after expect
source: a fixture
";

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn a_scenario_without_an_expectation_for_the_target_gets_its_first_block() {
    let (_tmp, root) = project();
    let path = root.join("scenarios/basic/first.yaml");
    std::fs::write(&path, FIRST).unwrap();

    let (code, out) = with_cli(&root, "record", "fake-cli.sh", &["--filter", "first"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("pending    basic/first (command:fake-cli.sh): reports/pending/basic/first.command_fake-cli.sh.yaml (a first block)"),
        "{out}"
    );
    assert!(
        out.contains("1 pending, 0 unchanged, 0 skipped, 0 not recorded"),
        "{out}"
    );
    assert_eq!(read(&path), FIRST, "record never writes a scenario");
    let file = read(&root.join("reports/pending/basic/first.command_fake-cli.sh.yaml"));
    for want in [
        "accept adds the block `expect: claude-code:` in scenarios/basic/first.yaml",
        "expect: claude-code\n",
        "new_block: true\n",
        "this is what command:fake-cli.sh did with it as written",
        "exit_code: 0\nframes:\n  - {type: system, subtype: init, cwd: $WORKSPACE, session_id: {$capture: session}}\n",
    ] {
        assert!(file.contains(want), "{want:?} missing in:\n{file}");
    }
    assert!(!file.contains("refused"), "{file}");

    let (code, out) = streamcheck(&root, &["review", "--accept-all"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("1 accepted, 0 rejected"), "{out}");
    // The block goes at the end of `expect:`, before the blank line and the comment after
    // it; every other byte stays.
    let after = read(&path);
    let (head, tail) = FIRST.split_once("\n\n# a comment after expect\n").unwrap();
    let head = format!("{head}\n");
    let tail = format!("\n# a comment after expect\n{tail}");
    assert!(
        after.starts_with(&head) && after.ends_with(&tail),
        "{after}"
    );
    let block = &after[head.len()..after.len() - tail.len()];
    let lines: Vec<&str> = block.lines().collect();
    assert_eq!(lines.len(), 8, "{block}");
    assert_eq!(lines[..2], ["  claude-code:", "    frames:"], "{block}");
    assert_eq!(
        lines[2],
        "      - {type: system, subtype: init, cwd: $WORKSPACE, session_id: {$capture: session}}"
    );
    assert!(lines[3..7].iter().all(|l| l.starts_with("      - {type: ")));
    assert_eq!(lines[7], "    exit_code: 0");

    // It loads, passes on the fake, catches a changed frame, and records as unchanged.
    let (code, out) = streamcheck(&root, &["check"]);
    assert_eq!(code, 0, "{out}");
    let (code, out) = with_cli(&root, "run", "fake-cli.sh", &["--filter", "first"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        last_line(&out),
        "1 passed, 0 failed, 0 known, 0 skipped",
        "{out}"
    );
    let (code, out) = with_cli(&root, "run", "fake-cli-changed.sh", &["--filter", "first"]);
    assert_eq!(code, 1, "{out}");
    let (_, out) = with_cli(&root, "record", "fake-cli.sh", &["--filter", "first"]);
    assert!(out.contains("0 pending, 1 unchanged"), "{out}");
}

#[test]
fn first_blocks_are_general_blocks_and_say_when_the_cli_refused_the_command_line() {
    let (_tmp, root) = project();
    let dir = root.join("scenarios/basic");
    std::fs::write(dir.join("first.yaml"), FIRST).unwrap();
    let refused = "description: d\nprompt: p\nenv: {FAKE_MODE: usage}\nexpect:\n  caliban:\n    exit_code: 0\n";
    std::fs::write(dir.join("refused.yaml"), refused).unwrap();
    let two_runs = "description: d\nruns: [{prompt: one}, {prompt: two}]\nexpect:\n  caliban:\n    skip: {flag_refused: --caliban-only, because: not here}\n";
    std::fs::write(dir.join("tworuns.yaml"), two_runs).unwrap();

    // 9.8.0 is not the pinned version, but with no claude-code block at all the recording
    // is the general block, not a version block.
    let filters = ["-f", "first", "-f", "refused", "-f", "tworuns"];
    let (code, out) = with_cli(&root, "record", "fake-cli-old.sh", &filters);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("2 pending, 0 unchanged, 0 skipped, 1 not recorded"),
        "{out}"
    );
    assert!(
        out.contains(
            "NOT RECORDED basic/tworuns (command:fake-cli-old.sh): a multi-run scenario (`runs:`)"
        ),
        "{out}"
    );
    let pending_dir = root.join("reports/pending/basic");
    let first = read(&pending_dir.join("first.command_fake-cli-old.sh.yaml"));
    assert!(first.contains("expect: claude-code\n"), "{first}");
    assert!(first.contains("exit_code: 1\nframes:\n"), "{first}");
    assert!(
        !first.contains("frames_patch") && !first.contains("refines"),
        "{first}"
    );
    let refused = read(&pending_dir.join("refused.command_fake-cli-old.sh.yaml"));
    assert!(
        refused.contains(
            "the CLI refused the command line (exit 1: error: unknown option '--fake-flag')"
        ),
        "{refused}"
    );
    assert!(refused.ends_with("exit_code: 1\nframes: []\n"), "{refused}");

    // Accepted, the first one runs on the old version.
    let (code, out) = streamcheck(&root, &["review", "--accept-all", "-f", "first"]);
    assert_eq!(code, 0, "{out}");
    let (code, out) = with_cli(&root, "run", "fake-cli-old.sh", &["--filter", "first"]);
    assert_eq!(code, 0, "{out}");
}
