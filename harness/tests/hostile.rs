//! The harness against misbehaving CLIs (fixtures/hostile/fake-cli.sh, one mode per
//! scenario): each misbehaviour is reported as the right divergence, every other
//! result is still written, no process is left behind, and no caller secret leaks.
//! Only the modes that hang depend on the harness's clocks, and they cannot end any
//! other way; the rest run with clocks long enough never to fire.

mod common;

use common::{read_json, run_fixture, streamcheck_at, text, trial_outcomes};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const SECRET: &str = "sk-ant-caller-REAL-secret-do-not-leak";

/// Modes that never end by themselves: the scenario's 2 s timeout or the 3 s grace period
/// after the last result is what ends them, so no scheduling delay can change their outcome.
const HANGING: [&str; 3] = [
    "hang_before_output",
    "hang_after_result",
    "grandchild_keeps_stdout",
];

/// Modes that end by themselves. They run with a grace period and a timeout far longer
/// than they need, so the harness waits for them to exit, however loaded the machine.
const ENDING: [&str; 12] = [
    "ok",
    "env_probe",
    "close_stdin_early",
    "exit_without_result",
    "crash_signal",
    "non_json",
    "invalid_utf8",
    "huge_line",
    "no_trailing_newline",
    "stderr_flood",
    "frame_after_result",
    "exit_before_reading_stdin",
];

fn fixture_root() -> PathBuf {
    common::fixture_root("hostile")
}

/// One `streamcheck run` of some fixture modes, with the caller's secrets in its
/// environment.
struct Run {
    reports: tempfile::TempDir,
    stdout: String,
    code: Option<i32>,
    /// Scenario -> (status, divergence kinds in order).
    trials: BTreeMap<String, (String, Vec<String>)>,
}

impl Run {
    fn of(modes: &[&str], flags: &[&str]) -> Run {
        let reports = tempfile::tempdir().unwrap();
        let mut cmd = run_fixture(&fixture_root(), reports.path());
        cmd.args(["--jobs", "4"]).args(flags);
        for mode in modes {
            cmd.args(["-f", mode]);
        }
        for var in [
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_AUTH_TOKEN",
            "AWS_ACCESS_KEY_ID",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_PROFILE",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "GOOGLE_API_KEY",
            "STREAMCHECK_CALLER_SECRET",
        ] {
            cmd.env(var, SECRET);
        }
        let out = cmd.output().unwrap();
        assert_eq!(
            read_json(&reports.path().join("results.json"))["complete"],
            true
        );
        let trials = trial_outcomes(reports.path(), "kind");
        Run {
            reports,
            stdout: text(&out.stdout),
            code: out.status.code(),
            trials,
        }
    }

    fn status(&self, name: &str) -> &str {
        &self.trials[name].0
    }

    /// The first divergence of a mode that must fail.
    fn first(&self, name: &str) -> &str {
        let (status, kinds) = &self.trials[name];
        assert_eq!(status, "failed", "{name}: {kinds:?}");
        &kinds[0]
    }

    /// The report of a failed mode.
    fn md(&self, name: &str) -> String {
        let path = (self.reports.path()).join(format!("{name}.command_fake-cli.sh.md"));
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("report for {name}: {e}"))
    }
}

#[test]
fn hostile_clis_are_reported_and_cleaned_up() {
    adopt_orphans();
    let hanging = Run::of(&HANGING, &[]);
    let ending = Run::of(&ENDING, &["--grace", "120", "--timeout", "120"]);
    for run in [&hanging, &ending] {
        assert_eq!(run.code, Some(1), "divergences exit 1\n{}", run.stdout);
    }
    assert!(
        hanging
            .stdout
            .contains("0 passed, 3 failed, 0 known, 0 skipped"),
        "{}",
        hanging.stdout
    );
    assert!(
        ending
            .stdout
            .contains("3 passed, 9 failed, 0 known, 0 skipped"),
        "{}",
        ending.stdout
    );

    each_misbehaviour_is_named(&hanging, &ending);

    // Nothing the CLIs started outlives the run: whatever the harness failed to kill
    // was orphaned to this process, and is still alive.
    let left = living_children_after_kills(|cmd| {
        cmd.contains("fake-cli.sh") || cmd.contains("sleep 600") || cmd.contains("sleep 987.654")
    });
    assert!(left.is_empty(), "leftover processes: {left:?}");

    // No caller secret reaches any report file.
    for entry in [&hanging, &ending]
        .iter()
        .flat_map(|r| walk(r.reports.path()))
    {
        let text = String::from_utf8_lossy(&std::fs::read(&entry).unwrap()).into_owned();
        assert!(
            !text.contains(SECRET),
            "{} leaks the caller's secret",
            entry.display()
        );
    }
}

/// The right divergence first, for each mode, and a report naming it with line numbers.
fn each_misbehaviour_is_named(hanging: &Run, ending: &Run) {
    assert_eq!(hanging.first("hang_before_output"), "timeout");
    assert_eq!(hanging.first("hang_after_result"), "hang");
    assert_eq!(hanging.first("grandchild_keeps_stdout"), "hang");
    assert_eq!(ending.first("exit_without_result"), "missing_frame");
    assert_eq!(ending.first("crash_signal"), "exit_code");
    assert_eq!(ending.first("non_json"), "non_json");
    assert_eq!(ending.first("invalid_utf8"), "non_json");
    assert_eq!(ending.first("huge_line"), "non_json");
    assert_eq!(ending.first("no_trailing_newline"), "non_json");
    assert_eq!(ending.first("stderr_flood"), "stderr");
    assert_eq!(ending.first("frame_after_result"), "invariant");
    assert_eq!(ending.first("exit_before_reading_stdin"), "missing_frame");
    assert!(ending.trials["exit_before_reading_stdin"]
        .1
        .contains(&"exit_code".to_string()));
    // Closing stdin early is the CLI's right: the harness survives it and says so.
    assert_eq!(ending.status("close_stdin_early"), "passed");
    assert_eq!(ending.status("ok"), "passed");
    // The CLI saw the dummy key, its own HOME and none of the caller's credentials.
    assert_eq!(
        ending.status("env_probe"),
        "passed",
        "{:?}",
        ending.trials["env_probe"]
    );

    // Each failure has its report, naming the failure with line numbers.
    assert!(ending
        .md("huge_line")
        .contains("stdout line 2: line is 52428800 bytes"));
    assert!(ending
        .md("invalid_utf8")
        .contains("stdout line 2: invalid UTF-8"));
    assert!(ending.md("crash_signal").contains("killed by signal 11"));
    assert!(hanging
        .md("hang_before_output")
        .contains("did not finish within 2s"));
    assert!(hanging
        .md("grandchild_keeps_stdout")
        .contains("stdout stayed open"));
    for run in [&hanging, &ending] {
        for f in ["summary.md", "junit.xml"] {
            assert!(run.reports.path().join(f).exists(), "{f}");
        }
    }
}

/// Makes this process the reaper of orphans below it: a process the harness failed to
/// kill becomes a child of this test (not of init), where `our_children` sees it, and a
/// concurrent test run elsewhere on the machine cannot be mistaken for it.
fn adopt_orphans() {
    // SAFETY: prctl(2) with PR_SET_CHILD_SUBREAPER changes an attribute of this process only.
    let rc = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
    assert_eq!(rc, 0, "prctl(PR_SET_CHILD_SUBREAPER)");
}

/// Every process: its pid, parent's pid, state letter and command line.
fn processes() -> Vec<(u32, u32, String, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        // `pid (comm) state ppid ...`; comm may hold spaces and parentheses.
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .map_or(Vec::new(), |(_, rest)| rest.split_whitespace().collect());
        let (Some(state), Some(Ok(ppid))) = (fields.first(), fields.get(1).map(|p| p.parse()))
        else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let cmd = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        found.push((pid, ppid, state.to_string(), cmd));
    }
    found
}

/// This process's living children (zombies left out) whose command line `matches`.
fn our_children(matches: impl Fn(&str) -> bool) -> Vec<String> {
    let me = std::process::id();
    processes()
        .into_iter()
        .filter(|(_, ppid, state, cmd)| *ppid == me && state != "Z" && matches(cmd))
        .map(|(pid, _, _, cmd)| format!("{pid}: {cmd}"))
        .collect()
}

/// [`our_children`] once a SIGKILL already sent has had time to land: the harness kills
/// a process group and exits without waiting for each grandchild to die.
fn living_children_after_kills(matches: impl Fn(&str) -> bool) -> Vec<String> {
    settled(|| our_children(&matches), Vec::is_empty)
}

/// `look()` once it is `done`, polling; or as it is after a bound that is generous and not
/// what is tested (a process that outlives it was not killed, or never came).
fn settled<T>(look: impl Fn() -> T, done: impl Fn(&T) -> bool) -> T {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let now = look();
        if done(&now) || Instant::now() > deadline {
            return now;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn an_orphan_that_survives_is_seen_as_a_leftover() {
    adopt_orphans();
    let marker = "sleep 654.321";
    let is_marker = |cmd: &str| cmd.contains(marker);
    // The shell exits at once and orphans its sleep, as a CLI leaking a grandchild does.
    let status = std::process::Command::new("sh")
        .args(["-c", &format!("{marker} & exit 0")])
        .status()
        .unwrap();
    assert!(status.success());
    // Its command line reads empty while it is still becoming `sleep`: wait for it.
    let seen = settled(|| our_children(is_marker), |seen| !seen.is_empty());
    assert_eq!(seen.len(), 1, "{seen:?}");
    let pid: i32 = seen[0].split(':').next().unwrap().parse().unwrap();
    // SAFETY: kill(2) on the orphan this test just made, a child of this process.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
    }
    assert!(living_children_after_kills(is_marker).is_empty());
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
    let out = streamcheck_at(root.path())
        .args(["run", "--target-command"])
        .arg(fixture_root().join("fake-cli.sh"))
        .arg("--report-dir")
        .arg(&reports)
        .output()
        .unwrap();
    let (stderr, stdout) = (text(&out.stderr), text(&out.stdout));
    assert_eq!(out.status.code(), Some(2), "a scenario file error exits 2");
    assert!(
        stderr.contains("broken.yaml:6:"),
        "names file and line: {stderr}"
    );
    assert!(stderr.contains("unknown placeholder `$uid`"), "{stderr}");
    assert!(
        stdout.contains("1 passed, 0 failed, 0 known, 0 skipped"),
        "the valid scenario still ran: {stdout}"
    );
    let summary = std::fs::read_to_string(reports.join("summary.md")).unwrap();
    assert!(summary.contains("broken.yaml"), "{summary}");
}

/// Processes below `root` (its children, theirs, ...) whose command line `matches`.
fn descendants(root: u32, matches: impl Fn(&str) -> bool) -> Vec<String> {
    let all = processes();
    let parent: BTreeMap<u32, u32> = all.iter().map(|(pid, ppid, ..)| (*pid, *ppid)).collect();
    let below = |mut pid: u32| {
        while let Some(&up) = parent.get(&pid) {
            if up == root {
                return true;
            }
            pid = up;
        }
        false
    };
    all.into_iter()
        .filter(|(pid, _, _, cmd)| below(*pid) && matches(cmd))
        .map(|(pid, _, _, cmd)| format!("{pid}: {cmd}"))
        .collect()
}

#[test]
fn a_run_stopped_by_sigterm_kills_its_clis_and_still_writes_every_result() {
    adopt_orphans();
    let reports = tempfile::tempdir().unwrap();
    let root = fixture_root();
    // The hanging CLI would be waited on for 600 s after its result: only the signal ends it.
    let mut run = std::process::Command::new(assert_cmd::cargo::cargo_bin("streamcheck"))
        .args(["--root".as_ref(), root.as_os_str(), "run".as_ref()])
        .arg("--target-command")
        .arg(root.join("fake-cli.sh"))
        .arg("--report-dir")
        .arg(reports.path())
        .args([
            "--jobs",
            "1",
            "--grace",
            "600",
            "-f",
            "hang_after_result",
            "-f",
            "ok",
        ])
        .env("NO_COLOR", "1")
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let is_hanging = |cmd: &str| cmd.contains("sleep 600");
    let seen = settled(|| descendants(run.id(), is_hanging), |v| !v.is_empty());
    assert_eq!(seen.len(), 1, "the hanging CLI never started: {seen:?}");
    // SAFETY: kill(2) on the streamcheck process this test spawned and has not reaped.
    unsafe {
        libc::kill(run.id() as i32, libc::SIGTERM);
    }
    let status = run.wait().unwrap();
    assert_eq!(status.code(), Some(1), "an interrupted run is not green");
    let left = living_children_after_kills(|cmd| is_hanging(cmd) || cmd.contains("fake-cli.sh"));
    assert!(left.is_empty(), "leftover processes: {left:?}");
    let trials = trial_outcomes(reports.path(), "kind");
    assert_eq!(trials.len(), 2, "{trials:?}");
    assert_eq!(trials["hang_after_result"].0, "skipped", "{trials:?}");
}

/// A command target that ignores `--version`, prints 1 MB and leaves a `sleep` running
/// whatever it is asked: its version probe neither stalls the run on a full pipe nor
/// leaves its sleep behind, and the trial takes its grace period, not more.
#[test]
fn a_cli_that_ignores_version_floods_stdout_and_backgrounds_a_sleep_leaves_nothing_behind() {
    adopt_orphans();
    let marker = "sleep 999.8642";
    let dir = tempfile::tempdir().unwrap();
    let cli = dir.path().join("flooding-cli.sh");
    std::fs::write(
        &cli,
        format!("#!/bin/sh\n{marker} &\nhead -c 1048576 /dev/zero | tr '\\0' x\necho\n"),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&cli, std::fs::Permissions::from_mode(0o755)).unwrap();
    let reports = dir.path().join("reports");
    let (timeout, grace) = (3, 1);
    let started = Instant::now();
    let out = streamcheck_at(&fixture_root())
        .args(["run", "--target-command"])
        .arg(&cli)
        .arg("--report-dir")
        .arg(&reports)
        .args(["--jobs", "1", "-f", "ok"])
        .args([
            "--timeout",
            &timeout.to_string(),
            "--grace",
            &grace.to_string(),
        ])
        .output()
        .unwrap();
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let trials = trial_outcomes(&reports, "kind");
    assert_eq!(trials["ok"].0, "failed", "{trials:?}");
    let trial = &read_json(&reports.join("results.json"))["trials"][0];
    assert_eq!(trial["exit"]["killed"], "stdout-open", "{trial}");
    let ms = trial["duration_ms"].as_u64().unwrap();
    assert!(ms <= (timeout + grace) * 1000, "the trial took {ms} ms");
    let left = living_children_after_kills(|cmd| cmd.contains(marker));
    assert!(left.is_empty(), "leftover processes: {left:?}");
    // The trial ends by its grace period (stdout held open by the sleep). Before the
    // version probe read its output and killed its group, it stalled the run 20 s; the
    // bound leaves 8 s for starting streamcheck and writing the reports.
    let bound = Duration::from_secs(timeout + grace + 8);
    assert!(took < bound, "the run took {took:?}, more than {bound:?}");
}

/// `streamcheck consume`, fed by a fresh run, with a consumer that exits 0 but leaves a
/// `sleep` holding its stdout: each feed is a finding at the consumer's timeout, nothing
/// is left running, and `--fail-fast` stops at the first.
#[test]
fn a_consumer_that_leaves_a_background_process_never_hangs_consume() {
    adopt_orphans();
    let marker = "sleep 300.97531";
    let dir = tempfile::tempdir().unwrap();
    let consume = |name: &str, extra: &[&str]| {
        let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("streamcheck"));
        cmd.arg("--root")
            .arg(fixture_root())
            .args(["consume", "--target-command"])
            .arg(fixture_root().join("fake-cli.sh"))
            .args(["-f", "ok", "-f", "frame_after_result", "--jobs", "1"])
            .args(["--command", &format!("cat >/dev/null; {marker} &")])
            .args(["--consumer-timeout", "2"])
            .arg("--run-dir")
            .arg(dir.path().join(format!("run-{name}")))
            .arg("--report-dir")
            .arg(dir.path().join(name))
            .args(extra)
            .env("NO_COLOR", "1")
            .stdout(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        // Each feed ends at its 2 s timeout; before the fix each waited for the sleep.
        let deadline = Instant::now() + Duration::from_secs(30);
        while child.try_wait().unwrap().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let hung = child.try_wait().unwrap().is_none();
        if hung {
            let _ = child.kill();
        }
        let out = child.wait_with_output().unwrap();
        assert!(!hung, "consume {extra:?} still running after 30 s");
        (out.status.code(), text(&out.stdout))
    };
    let (code, stdout) = consume("all", &[]);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(stdout.contains("2 feeds, 2 failed"), "{stdout}");
    let json = read_json(&dir.path().join("all/consume.json"));
    for fed in json["fed"].as_array().unwrap() {
        assert_eq!(fed["failure"]["kind"], "left_running", "{fed}");
    }
    let (code, stdout) = consume("fast", &["--fail-fast"]);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(stdout.contains("1 feeds, 1 failed"), "{stdout}");
    assert!(
        stdout.contains("stopped at the first failure (--fail-fast): 1 of 2 feeds not run"),
        "{stdout}"
    );
    let left = living_children_after_kills(|cmd| cmd.contains(marker));
    assert!(left.is_empty(), "leftover processes: {left:?}");
}
