//! `streamcheck ranges` against fake releases: a temp cache holds a fake Claude Code for
//! each version 1.0.0..1.0.9 (its exit code per scenario baked in), the published list
//! comes from `--versions`, and `npm` on PATH is a stand-in that fails, so nothing
//! reaches the network.

mod common;

use common::{printed, streamcheck_at, write_executable};
use std::path::{Path, PathBuf};

/// Per scenario (FAKE_MODE), the exit code of version 1.0.`minor`: `a` and `w` exit 3
/// from 1.0.4 on, `k` exits 5 on 1.0.2 to 1.0.4 (a regression), `t` exits 3 on 1.0.3,
/// 1.0.4 and from 1.0.8 on (it changed twice before 1.0.8), `u` on 1.0.4 and from 1.0.8 on,
/// 0 elsewhere; `s` hangs.
/// Every mode's result says `old` up to 1.0.5 and `new` from 1.0.6 on, except `h`'s: `old`
/// up to 1.0.2, `none` with exit 5 on 1.0.3 and 1.0.4 (a bug), `new` from 1.0.5 on; `f`
/// refuses `--newflag` before 1.0.4; `g` writes the workspace file `marker` from 1.0.4 on;
/// `v` says in `system/init.model` what its result says; `i` exits 5 on every second run of
/// each of 1.0.2 to 1.0.4 (a bug that comes and goes).
const FAKE: &str = r#"#!/bin/sh
if [ "$1" = "--version" ]; then echo "1.0.MINOR (Fake)"; exit 0; fi
echo "1.0.MINOR $FAKE_MODE" >> LOG
M=MINOR
C=0
R=old; [ $M -ge 6 ] && R=new
if [ "$FAKE_MODE" = h ]; then R=old; [ $M -ge 3 ] && R=none && C=5; [ $M -ge 5 ] && R=new && C=0; fi
if [ "$FAKE_MODE" = f ] && [ $M -lt 4 ]; then echo "error: unknown option '--newflag'" >&2; exit 1; fi
if [ "$FAKE_MODE" = g ] && [ $M -ge 4 ]; then echo made > marker; fi
case "$FAKE_MODE" in
  a|w) [ $M -ge 4 ] && C=3 ;;
  k) [ $M -ge 2 ] && [ $M -le 4 ] && C=5 ;;
  t) if [ $M -ge 8 ] || { [ $M -ge 3 ] && [ $M -le 4 ]; }; then C=3; fi ;;
  u) if [ $M -ge 8 ] || [ $M -eq 4 ]; then C=3; fi ;;
  i) N=$(grep -c "^1.0.MINOR i$" LOG); if [ $M -ge 2 ] && [ $M -le 4 ] && [ $((N % 2)) -eq 0 ]; then C=5; fi ;;
  s) sleep 600 ;;
esac
[ $C -eq 0 ] && E=false || E=true
if [ "$FAKE_MODE" = v ]; then echo '{"type":"system","subtype":"init","session_id":"s","model":"'$R'"}'
else echo '{"type":"system","subtype":"init","session_id":"s"}'; fi
echo '{"type":"result","subtype":"success","is_error":'$E',"result":"'$R'","session_id":"s"}'
exit $C
"#;

const PUBLISHED: &str = "1.0.0,1.0.1,1.0.2,1.0.3,1.0.4,1.0.5-beta,1.0.5,1.0.6,1.0.7,1.0.8,1.0.9";

/// A scenario whose exit code is 3 (general) and `block_exit` in the block `block`.
fn scenario(mode: &str, general_exit: i32, block: Option<(&str, i32)>) -> String {
    let mut s = format!(
        "description: exit code changes between releases\nprompt: go\nenv: {{FAKE_MODE: {mode}}}\n\
         expect:\n  claude-code:\n    frames: [{{type: system, subtype: init}}, {{type: result}}]\n    exit_code: {general_exit}\n    invariants:\n      skip: [exit_code_matches_result]\n      reason: fixture\n"
    );
    if let Some((key, exit)) = block {
        s.push_str(&format!(
            "  \"claude-code@{key}\":\n    exit_code: {exit}\n"
        ));
    }
    s
}

const KNOWN: &str = "# the regression of k\n- scenario: demo/k\n  kind: exit_code\n  message: \"^expected exit code 0, got 5$\"\n  versions: \">=1.0.2, <1.0.5\"\n  observed: [1.0.3]\n  reason: k exits 5 on 1.0.2 to 1.0.4\n";

struct Fixture {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    cache: PathBuf,
    bin: PathBuf,
    log: PathBuf,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let (root, cache, bin, log) = (
        base.join("proj"),
        base.join("cache"),
        base.join("bin"),
        base.join("probes.log"),
    );
    write(
        &root.join("scenarios/demo/a.yaml"),
        &scenario("a", 3, Some(("<1.0.4", 0))),
    );
    // Written a release too wide: 1.0.4 and 1.0.5 already exit 3.
    write(
        &root.join("scenarios/demo/w.yaml"),
        &scenario("w", 3, Some(("<1.0.6", 0))),
    );
    write(&root.join("scenarios/demo/k.yaml"), &scenario("k", 0, None));
    write(
        &root.join("scenarios/demo/t.yaml"),
        &scenario("t", 3, Some(("<1.0.8", 0))),
    );
    // The sample run inside each range; not `pinned`, which would install from package.json.
    write(
        &root.join("targets/claude-code/versions.yaml"),
        "pinned: 9.9.9\nsupported: [1.0.0, 1.0.4, 1.0.9]\n",
    );
    write(
        &root.join("targets/claude-code/known-divergences.yaml"),
        KNOWN,
    );
    for minor in 0..10 {
        let dir = cache.join(format!("claude-code@1.0.{minor}/node_modules"));
        write(
            &dir.join("@anthropic-ai/claude-code/package.json"),
            &format!("{{\"version\": \"1.0.{minor}\"}}"),
        );
        let script = FAKE
            .replace("MINOR", &minor.to_string())
            .replace("LOG", log.to_str().unwrap());
        write_executable(&dir.join(".bin/claude"), &script);
    }
    write_executable(
        &bin.join("npm"),
        "#!/bin/sh\necho 'no network here' >&2\nexit 1\n",
    );
    Fixture {
        _tmp: tmp,
        root,
        cache,
        bin,
        log,
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// `streamcheck ranges <mode> --filter ...`: exit code and what it printed.
fn ranges(f: &Fixture, mode: &str, filters: &[&str]) -> (i32, String) {
    ranges_with(f, &[mode], filters)
}

/// `streamcheck ranges <args> --filter ...`: exit code and what it printed.
fn ranges_with(f: &Fixture, args: &[&str], filters: &[&str]) -> (i32, String) {
    let path = format!("{}:{}", f.bin.display(), std::env::var("PATH").unwrap());
    let mut cmd = streamcheck_at(&f.root);
    cmd.arg("ranges").args(args);
    cmd.args(["--jobs", "2", "--versions", PUBLISHED]);
    for filter in filters {
        cmd.args(["--filter", filter]);
    }
    let out = cmd
        .arg("--report-dir")
        .arg(f.root.join("report"))
        .env("STREAMCHECK_CACHE", &f.cache)
        .env("PATH", path)
        .output()
        .unwrap();
    (out.status.code().unwrap_or(-1), printed(&out))
}

fn probes(f: &Fixture) -> usize {
    std::fs::read_to_string(&f.log)
        .unwrap_or_default()
        .lines()
        .count()
}

#[test]
fn an_unproven_range_fails_the_check_naming_its_file_and_line() {
    let f = fixture();
    let (code, text) = ranges(&f, "--check", &[]);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("scenarios/demo/a.yaml:11: claude-code@<1.0.4 (why: no proof)"),
        "{text}"
    );
    assert!(
        text.contains("targets/claude-code/known-divergences.yaml:2: demo/k exit_code >=1.0.2, <1.0.5 (why: no proof)"),
        "{text}"
    );
    assert!(text.contains("0 of 4 range(s) proven"), "{text}");
    assert_eq!(probes(&f), 0, "--check runs nothing");
}

#[test]
fn an_intermittent_entry_is_held_to_the_one_release_it_was_observed_on() {
    let f = fixture();
    let flaky = |versions: &str| {
        format!("{KNOWN}- scenario: demo/k\n  kind: hang\n  message: \"its last frame was frame 1 \\\\(result/success\\\\)\"\n  intermittent: true\n  versions: \"{versions}\"\n  observed: [1.0.3]\n  reason: comes and goes\n")
    };
    let known = f.root.join("targets/claude-code/known-divergences.yaml");
    write(&known, &flaky(">=1.0.2, <1.0.5"));
    let (code, text) = ranges(&f, "--check", &["demo/k"]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("known-divergences.yaml:8: demo/k hang >=1.0.2, <1.0.5 (why: an intermittent entry is proven only by repeated runs"), "{text}");
    write(&known, &flaky("1.0.3"));
    let (_, text) = ranges(&f, "--check", &["demo/k"]);
    assert!(
        !text.contains("demo/k hang"),
        "held to its observed release: {text}"
    );
    assert!(
        text.contains("1 intermittent entr(y/ies) held to the one release observed, 0 to"),
        "{text}"
    );
    // Seen on two releases, one entry each: one range over both would claim the releases between.
    write(
        &known,
        &flaky(">=1.0.3, <1.0.5").replace("[1.0.3]", "[1.0.3, 1.0.4]"),
    );
    let (_, text) = ranges(&f, "--check", &["demo/k"]);
    assert!(
        text.contains("demo/k hang >=1.0.3, <1.0.5 (why: an intermittent entry"),
        "{text}"
    );
    assert_eq!(probes(&f), 0, "--check runs nothing");
}

/// A symptom that comes and goes only where a steady one of the same bug always shows (a
/// line cut, or not, by a hang that is always there) is held to the steady entry's proven
/// range: not before that range is proven, and not for an entry of another finding.
#[test]
fn an_intermittent_entry_may_share_the_proven_range_of_a_steady_entry_of_its_finding() {
    let f = fixture();
    let findings = |ids: &[&str]| {
        let text: String = (ids.iter())
            .map(|id| format!("- id: {id}\n  title: t\n  contract: c\n  what: w\n"))
            .collect();
        write(&f.root.join("targets/claude-code/findings.yaml"), &text);
    };
    findings(&["k-exits-5"]);
    let known = f.root.join("targets/claude-code/known-divergences.yaml");
    let with = |finding: &str| {
        format!("{KNOWN}  finding: k-exits-5\n- scenario: demo/k\n  kind: hang\n  message: \"its last frame was frame 1 \\\\(result/success\\\\)\"\n  intermittent: true\n  versions: \">=1.0.2, <1.0.5\"\n  observed: [1.0.3]\n  finding: {finding}\n  reason: comes and goes\n")
    };
    write(&known, &with("k-exits-5"));
    let (code, text) = ranges(&f, "--check", &["demo/k"]);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains(
            "demo/k hang >=1.0.2, <1.0.5 (why: an intermittent entry is proven only by repeated runs"
        ),
        "the steady entry is not proven yet: {text}"
    );
    let (code, text) = ranges(&f, "--prove", &["demo/k"]);
    assert_eq!(code, 0, "{text}");
    let runs = probes(&f);
    let (code, text) = ranges(&f, "--check", &["demo/k"]);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("0 intermittent entr(y/ies) held to the one release observed, 1 to a steady entry's proven range"),
        "{text}"
    );
    findings(&["k-exits-5", "other"]);
    write(&known, &with("other"));
    let (code, text) = ranges(&f, "--check", &["demo/k"]);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("demo/k hang >=1.0.2, <1.0.5 (why: an intermittent entry"),
        "another finding's entry holds nothing up: {text}"
    );
    assert_eq!(probes(&f), runs, "--check runs nothing");
}

/// An intermittent entry is proven by runs repeated on each release: a release shows it
/// when any of its runs does (`i` exits 5 on every second run of 1.0.2 to 1.0.4, so a
/// single run of each shows nothing), and the release beyond shows it in none. Its proof
/// says how many runs each release had, and a proof without that proves nothing.
#[test]
fn an_intermittent_entry_is_proven_by_runs_repeated_on_each_release() {
    let f = fixture();
    write(
        &f.root.join("scenarios/demo/i.yaml"),
        &scenario("i", 0, None),
    );
    write(
        &f.root.join("targets/claude-code/known-divergences.yaml"),
        &format!("{KNOWN}- scenario: demo/i\n  kind: exit_code\n  message: \"^expected exit code 0, got 5$\"\n  intermittent: true\n  versions: \">=1.0.2, <1.0.5\"\n  observed: [1.0.3]\n  reason: i exits 5 in some runs of 1.0.2 to 1.0.4\n"),
    );
    let (code, text) = ranges(&f, "--check", &["demo/i"]);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("demo/i exit_code >=1.0.2, <1.0.5 (why: an intermittent entry is proven only by repeated runs"),
        "{text}"
    );
    let (code, text) = ranges_with(&f, &["--prove", "--repeat", "3"], &["demo/i"]);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("1.0.2 to 1.0.4 behave as written, 1.0.1 below and 1.0.5 above do not (each release run 3 times"),
        "{text}"
    );
    let log = std::fs::read_to_string(&f.log).unwrap();
    let mut runs: std::collections::BTreeMap<&str, usize> = Default::default();
    for line in log.lines().filter(|l| l.ends_with(" i")) {
        *runs.entry(line).or_default() += 1;
    }
    assert!(
        runs.contains_key("1.0.1 i") && runs.contains_key("1.0.5 i"),
        "{log}"
    );
    assert!(
        runs.values().all(|&n| n == 3),
        "every release ran 3 times: {runs:?}"
    );
    let (code, text) = ranges(&f, "--check", &["demo/i"]);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("1 proven by runs repeated on each release"),
        "{text}"
    );
    let proofs = f.root.join("targets/claude-code/ranges.yaml");
    let saved = std::fs::read_to_string(&proofs).unwrap();
    assert!(saved.contains("runs_each: 3"), "{saved}");
    write(&proofs, &saved.replace("runs_each: 3\n", ""));
    let (code, text) = ranges(&f, "--check", &["demo/i"]);
    assert_eq!(code, 1, "a proof of single runs proves nothing: {text}");
    assert!(
        text.contains("demo/i exit_code >=1.0.2, <1.0.5 (why: an intermittent entry"),
        "{text}"
    );
}

#[test]
fn a_proven_range_passes_until_what_it_judged_changes_and_proving_again_runs_nothing() {
    let f = fixture();
    let (code, text) = ranges(&f, "--prove", &["demo/a", "demo/k"]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("claude-code@<1.0.4: proven: 1.0.0 to 1.0.3 behave as written, first published below and 1.0.4 above do not"), "{text}");
    assert!(text.contains("demo/k exit_code >=1.0.2, <1.0.5: proven: 1.0.2 to 1.0.4 behave as written, 1.0.1 below and 1.0.5 above do not"), "{text}");
    let proofs = std::fs::read_to_string(f.root.join("targets/claude-code/ranges.yaml")).unwrap();
    assert!(
        proofs.starts_with("# Proofs of version ranges, written by `streamcheck ranges --prove`"),
        "{proofs}"
    );
    assert!(proofs.contains("format_version: 1"), "{proofs}");
    assert!(proofs.contains("demo/k on claude-code@1.0.5"), "{proofs}");
    let ran = probes(&f);
    assert!(ran > 0);

    let (code, text) = ranges(&f, "--check", &["demo/a", "demo/k"]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("2 of 2 range(s) proven"), "{text}");

    let (code, text) = ranges(&f, "--prove", &["demo/a", "demo/k"]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(
        probes(&f),
        ran,
        "nothing changed, nothing runs again: {text}"
    );

    // A change to what the trial runs makes the proof stale; prose does not.
    let a = f.root.join("scenarios/demo/a.yaml");
    let written = std::fs::read_to_string(&a).unwrap();
    write(
        &a,
        &written.replace("description: exit code", "description: the exit code"),
    );
    let (code, text) = ranges(&f, "--check", &["demo/a"]);
    assert_eq!(code, 0, "{text}");
    write(&a, &written.replace("prompt: go", "prompt: go on"));
    let (code, text) = ranges(&f, "--check", &["demo/a"]);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("scenarios/demo/a.yaml:11: claude-code@<1.0.4 (why: proof stale)"),
        "{text}"
    );

    // The same for a known entry: its reason is prose, its message what it judges.
    let known = f.root.join("targets/claude-code/known-divergences.yaml");
    let written = std::fs::read_to_string(&known).unwrap();
    write(
        &known,
        &written.replace("reason: k exits 5", "reason: the k scenario exits 5"),
    );
    let (code, text) = ranges(&f, "--check", &["demo/k"]);
    assert_eq!(code, 0, "{text}");
    write(&known, &written.replace("got 5$", "got [5]$"));
    let (code, text) = ranges(&f, "--check", &["demo/k"]);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains(
            "known-divergences.yaml:2: demo/k exit_code >=1.0.2, <1.0.5 (why: proof stale)"
        ),
        "{text}"
    );
}

#[test]
fn a_range_written_too_wide_is_searched_and_its_proof_says_where_it_ends() {
    let f = fixture();
    let (code, text) = ranges(&f, "--prove", &["demo/w"]);
    assert!(text.contains("claude-code@<1.0.6: proven: 1.0.0 to 1.0.3 behave as written, first published below and 1.0.4 above do not"), "{text}");
    // Written back with the bounds found, its proof carried over: proven without another trial.
    assert!(
        text.contains("scenarios/demo/w.yaml:11: claude-code@<1.0.6: written as <1.0.4"),
        "{text}"
    );
    assert_eq!(code, 0, "{text}");
    let w = std::fs::read_to_string(f.root.join("scenarios/demo/w.yaml")).unwrap();
    assert!(
        w.contains("\"claude-code@<1.0.4\":") && !w.contains("1.0.6"),
        "{w}"
    );
    let before = probes(&f);
    let (code, text) = ranges(&f, "--check", &["demo/w"]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(ranges(&f, "--prove", &["demo/w"]).0, 0);
    assert_eq!(probes(&f), before, "nothing left to prove runs nothing");

    // The scenario gone, its proof proves no range: a filtered write keeps it (it may
    // prove a range outside the filter), an unfiltered one drops it.
    std::fs::remove_file(f.root.join("scenarios/demo/w.yaml")).unwrap();
    let proofs = f.root.join("targets/claude-code/ranges.yaml");
    ranges(&f, "--write", &["demo/a"]);
    assert!(std::fs::read_to_string(&proofs)
        .unwrap()
        .contains("demo/w.yaml"));
    let (_, text) = ranges(&f, "--write", &[]);
    assert!(text.contains("1 proof(s) of no range dropped"), "{text}");
    assert!(!std::fs::read_to_string(&proofs)
        .unwrap()
        .contains("demo/w.yaml"));
    assert_eq!(probes(&f), before, "--write runs nothing");
}

#[test]
fn a_min_version_is_proven_where_the_block_starts_to_pass_and_written_back() {
    let f = fixture();
    // `a` exits 3 from 1.0.4 on: a block expecting 3 from `min_version: 1.0.6` starts two
    // releases late.
    let text = scenario("a", 3, None).replace(
        "    exit_code: 3\n",
        "    exit_code: 3\n    min_version: 1.0.6\n",
    );
    write(&f.root.join("scenarios/demo/m.yaml"), &text);
    let (code, out) = ranges(&f, "--check", &["demo/m"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("scenarios/demo/m.yaml:8: claude-code min_version: 1.0.6 (why: no proof)"),
        "{out}"
    );
    let (code, out) = ranges(&f, "--prove", &["demo/m"]);
    assert!(out.contains("claude-code min_version: 1.0.6: proven: 1.0.4 to 1.0.9 behave as written, 1.0.3 below and newest checked above do not"), "{out}");
    assert_eq!(code, 0, "{out}");
    let m = std::fs::read_to_string(f.root.join("scenarios/demo/m.yaml")).unwrap();
    assert!(m.contains("    min_version: 1.0.4\n"), "{m}");
    assert_eq!(ranges(&f, "--check", &["demo/m"]).0, 0);
}

#[test]
fn a_min_version_is_proven_where_a_pinned_workspace_file_starts_to_appear() {
    let f = fixture();
    // `g` prints the same frames on every release and writes `marker` from 1.0.4 on.
    let text = scenario("g", 0, None).replace(
        "    exit_code: 0\n",
        "    exit_code: 0\n    files: {marker: true}\n    min_version: 1.0.6\n",
    );
    write(&f.root.join("scenarios/demo/g.yaml"), &text);
    let (code, out) = ranges(&f, "--prove", &["demo/g"]);
    assert!(out.contains("claude-code min_version: 1.0.6: proven: 1.0.4 to 1.0.9 behave as written, 1.0.3 below and newest checked above do not"), "{out}");
    assert_eq!(code, 0, "{out}");
}

#[test]
fn a_min_version_is_searched_below_it_inside_a_version_block_too() {
    let f = fixture();
    // As above, with a block over the releases below the bound: a block carries the
    // general block's `min_version`, and must be run below it as well.
    let text = scenario("a", 3, Some(("<1.0.9", 3))).replace(
        "    exit_code: 3\n    invariants",
        "    exit_code: 3\n    min_version: 1.0.6\n    invariants",
    );
    assert!(text.contains("min_version"), "{text}");
    write(&f.root.join("scenarios/demo/m.yaml"), &text);
    let (_, out) = ranges(&f, "--prove", &["demo/m"]);
    assert!(out.contains("claude-code min_version: 1.0.6: proven: 1.0.4 to 1.0.9 behave as written, 1.0.3 below and newest checked above do not"), "{out}");
}

#[test]
fn a_blocks_own_min_version_ends_it_below_without_running_the_releases_it_skips() {
    let f = fixture();
    // The block `<1.0.4` carries the file's `min_version: 1.0.2`: below it nothing runs, and
    // the block holds from its own bound (proven apart) to 1.0.3.
    let text = scenario("a", 3, Some(("<1.0.4", 0))).replace(
        "    exit_code: 3\n    invariants",
        "    exit_code: 3\n    min_version: 1.0.2\n    invariants",
    );
    write(&f.root.join("scenarios/demo/mv.yaml"), &text);
    let (_, out) = ranges(&f, "--prove", &["demo/mv"]);
    assert!(out.contains("claude-code@<1.0.4: proven: 1.0.2 to 1.0.3 behave as written, its own min_version or max_version below and 1.0.4 above do not"), "{out}");
    let mv = std::fs::read_to_string(f.root.join("scenarios/demo/mv.yaml")).unwrap();
    assert!(
        mv.contains("\"claude-code@<1.0.4\":"),
        "the key is not rewritten: {mv}"
    );
}

#[test]
fn a_range_written_too_narrow_is_searched_past_its_bounds_to_where_the_behaviour_ends() {
    let f = fixture();
    // `a` exits 0 up to 1.0.3: a block written `<1.0.2` stops two releases early.
    write(
        &f.root.join("scenarios/demo/n.yaml"),
        &scenario("a", 3, Some(("<1.0.2", 0))),
    );
    // `k` exits 5 on 1.0.2 to 1.0.4: an entry written for 1.0.3 alone misses both sides.
    write(
        &f.root.join("targets/claude-code/known-divergences.yaml"),
        &KNOWN.replace(">=1.0.2, <1.0.5", ">=1.0.3, <1.0.4"),
    );
    let (code, text) = ranges(&f, "--prove", &["demo/n", "demo/k"]);
    assert!(text.contains("claude-code@<1.0.2: proven: 1.0.0 to 1.0.3 behave as written, first published below and 1.0.4 above do not"), "{text}");
    assert!(text.contains("demo/k exit_code >=1.0.3, <1.0.4: proven: 1.0.2 to 1.0.4 behave as written, 1.0.1 below and 1.0.5 above do not"), "{text}");
    assert!(text.contains("ranges: 2 range(s) written with the bounds their proofs found, 0 known entr(y/ies) merged into an equal one; 2 proof(s) carried over"), "{text}");
    assert_eq!(code, 0, "{text}");
    let known =
        std::fs::read_to_string(f.root.join("targets/claude-code/known-divergences.yaml")).unwrap();
    assert!(
        known.contains("  versions: \">=1.0.2, <1.0.5\"\n"),
        "{known}"
    );
    let (code, text) = ranges(&f, "--check", &["demo/n", "demo/k"]);
    assert_eq!(code, 0, "{text}");
}

#[test]
fn releases_both_neighbouring_blocks_accept_belong_to_the_older_block() {
    let f = fixture();
    // The block pins the result `old` (up to 1.0.5); the general expectation pins only that
    // there is a result, so 1.0.3 and 1.0.4 on either side of the written bound pass both.
    let text = scenario("a", 0, None).replace("env: {FAKE_MODE: a}", "env: {FAKE_MODE: b}")
        + "  \"claude-code@<1.0.4\":\n    frames: [{type: system, subtype: init}, {type: result, result: old}]\n";
    write(&f.root.join("scenarios/demo/b.yaml"), &text);
    let (code, out) = ranges(&f, "--prove", &["demo/b"]);
    assert!(out.contains("claude-code@<1.0.4: proven: 1.0.0 to 1.0.5 behave as written, first published below and 1.0.6 above do not"), "{out}");
    assert_eq!(code, 0, "{out}");
    let b = std::fs::read_to_string(f.root.join("scenarios/demo/b.yaml")).unwrap();
    assert!(b.contains("\"claude-code@<1.0.6\":"), "{b}");
}

#[test]
fn a_block_that_pins_what_appears_owns_the_releases_the_block_before_also_accepts() {
    let f = fixture();
    // From 1.0.6 the result says `new`; the general expectation pins only that there is a
    // result, so it accepts every release; the block pinning `new` is written from 1.0.4.
    let text = scenario("b", 0, None)
        + "  \"claude-code@>=1.0.4\":\n    frames: [{type: system, subtype: init}, {type: result, result: new}]\n";
    write(&f.root.join("scenarios/demo/n.yaml"), &text);
    let (code, out) = ranges(&f, "--prove", &["demo/n"]);
    assert!(out.contains("claude-code@>=1.0.4: proven: 1.0.6 to 1.0.9 behave as written, 1.0.5 below and newest checked above do not"), "{out}");
    assert_eq!(code, 0, "{out}");
}

#[test]
fn a_skip_blocks_range_ends_where_its_reason_stops_holding() {
    let f = fixture();
    // `f` takes --newflag from 1.0.4; the skip block is written up to 1.0.6.
    let text = scenario("f", 0, None).replace("prompt: go\n", "prompt: go\nargs: [--newflag]\n")
        + "  \"claude-code@<1.0.6\":\n    skip: {flag_refused: --newflag, because: \"no --newflag before 1.0.4\"}\n";
    write(&f.root.join("scenarios/demo/f.yaml"), &text);
    let (code, out) = ranges(&f, "--prove", &["demo/f"]);
    assert!(out.contains("claude-code@<1.0.6: proven: 1.0.0 to 1.0.3 behave as written, first published below and 1.0.4 above do not"), "{out}");
    assert_eq!(code, 0, "{out}");
}

#[test]
fn a_skip_block_of_a_multi_run_scenario_is_proven_like_any_other() {
    let f = fixture();
    // Two runs, each passing --newflag; `f` takes it from 1.0.4, the skip is written up to 1.0.6.
    let run = "    - frames: [{type: system, subtype: init}, {type: result}]\n      exit_code: 0\n      invariants: {skip: [exit_code_matches_result], reason: fixture}\n";
    let text = format!(
        "description: a flag two runs pass\nenv: {{FAKE_MODE: f}}\nruns:\n  - {{prompt: one, args: [--newflag]}}\n  - {{prompt: two, args: [--newflag]}}\n\
         expect:\n  claude-code:\n    runs:\n{run}{run}  \"claude-code@<1.0.6\":\n    skip: {{flag_refused: --newflag, because: \"no --newflag before 1.0.4\"}}\n"
    );
    write(&f.root.join("scenarios/demo/f.yaml"), &text);
    let (code, out) = ranges(&f, "--prove", &["demo/f"]);
    assert!(out.contains("claude-code@<1.0.6: proven: 1.0.0 to 1.0.3 behave as written, first published below and 1.0.4 above do not"), "{out}");
    assert_eq!(code, 0, "{out}");
}

#[test]
fn a_block_holds_where_a_block_nested_in_it_refines_it() {
    let f = fixture();
    // `a` exits 3 from 1.0.4 and its result says `new` from 1.0.6: the outer block pins
    // the exit code, the block nested in it the result; the outer one holds to the end.
    let text = scenario("a", 0, None)
        + "  \"claude-code@>=1.0.4\":\n    exit_code: 3\n    frames: [{type: system, subtype: init}, {type: result, result: old}]\n"
        + "  \"claude-code@>=1.0.6\":\n    frames: [{type: system, subtype: init}, {type: result, result: new}]\n";
    write(&f.root.join("scenarios/demo/o.yaml"), &text);
    let (code, out) = ranges(&f, "--prove", &["demo/o"]);
    assert!(out.contains("claude-code@>=1.0.4: proven: 1.0.4 to 1.0.9 behave as written, 1.0.3 below and newest checked above do not"), "{out}");
    assert_eq!(code, 0, "{out}");
    let o = std::fs::read_to_string(f.root.join("scenarios/demo/o.yaml")).unwrap();
    assert!(o.contains("\"claude-code@>=1.0.4\":"), "{o}");
}

#[test]
fn a_known_bug_at_a_blocks_bound_does_not_hide_which_block_a_release_gets() {
    let f = fixture();
    // `k`'s result says `old` up to 1.0.5, and it exits 5 on 1.0.2 to 1.0.4 (a known
    // entry): the block is written to end at 1.0.3, where the bug hides both expectations.
    let text = scenario("k", 0, None).replace(
        "{type: result}]",
        "{type: result, result: new}]",
    ) + "  \"claude-code@<1.0.3\":\n    frames: [{type: system, subtype: init}, {type: result, result: old}]\n";
    write(&f.root.join("scenarios/demo/kb.yaml"), &text);
    write(
        &f.root.join("targets/claude-code/known-divergences.yaml"),
        &format!("{KNOWN}{}", KNOWN.replace("demo/k\n", "demo/kb\n")),
    );
    let (code, out) = ranges(&f, "--prove", &["demo/kb"]);
    assert!(out.contains("claude-code@<1.0.3: proven: 1.0.0 to 1.0.5 behave as written, first published below and 1.0.6 above do not"), "{out}");
    // The entry was judged with 1.0.3 and 1.0.4 held to the general expectation; the block
    // written back as <1.0.6 now holds them, so its proof is not carried over but made
    // again in a second round, against the block as it stands.
    assert!(out.contains("ranges: 1 proof(s) dropped"), "{out}");
    let entry = "demo/kb exit_code >=1.0.2, <1.0.5: proven: 1.0.2 to 1.0.4";
    assert_eq!(out.matches(entry).count(), 2, "{out}");
    assert_eq!(code, 0, "{out}");
}

#[test]
fn a_proof_made_again_after_a_rewrite_is_judged_against_the_rewritten_block() {
    let f = fixture();
    // `v` says `old` up to 1.0.5, in its init frame's model and its result; the general
    // expectation wants `new` in both, its block `old` in the result and no model, and is
    // written to end at 1.0.3. An entry names the result that 1.0.3 to 1.0.5 show against
    // the general expectation (the model still differs there, so they are the block's).
    // The first round proves both; the block is written back as <1.0.6, those releases get
    // its expectation, and the entry's symptom arises on none: proven again against the
    // files as they stand, it is not proven.
    let text = scenario("v", 0, None).replace(
        "[{type: system, subtype: init}, {type: result}]",
        "[{type: system, subtype: init, model: new}, {type: result, result: new}]",
    ) + "  \"claude-code@<1.0.3\":\n    frames: [{type: system, subtype: init}, {type: result, result: old}]\n";
    write(&f.root.join("scenarios/demo/v.yaml"), &text);
    write(
        &f.root.join("targets/claude-code/known-divergences.yaml"),
        &format!(
            "{KNOWN}{}",
            "- scenario: demo/v\n  kind: field_mismatch\n  message: '^frame 1 vs expected entry 1: expected \"new\", found \"old\"'\n  versions: \">=1.0.3, <1.0.6\"\n  observed: [1.0.3]\n  reason: v says old on 1.0.3 to 1.0.5\n"
        ),
    );
    let (code, out) = ranges(&f, "--prove", &["demo/v"]);
    assert!(
        out.contains("claude-code@<1.0.3: proven: 1.0.0 to 1.0.5"),
        "{out}"
    );
    assert!(out.contains("ranges: 1 proof(s) dropped"), "{out}");
    let entry = "demo/v field_mismatch >=1.0.3, <1.0.6";
    assert_eq!(out.matches(&format!("{entry}: proven")).count(), 1, "{out}");
    assert!(out.contains(&format!("{entry}: not proven")), "{out}");
    assert_eq!(code, 1, "the entry is left unproven: {out}");
}

#[test]
fn a_known_bug_that_hides_what_tells_two_blocks_apart_moves_no_bound() {
    let f = fixture();
    // `h` says `old` up to 1.0.2, `new` from 1.0.5; on 1.0.3 and 1.0.4 it says `none` and
    // exits 5, and known entries name both symptoms: against either expectation those
    // releases pass only through them, so they stay where they are written. Given to the
    // older block, they would widen it to 1.0.4.
    let text = scenario("h", 0, None).replace("{type: result}]", "{type: result, result: new}]")
        + "  \"claude-code@<1.0.3\":\n    frames: [{type: system, subtype: init}, {type: result, result: old}]\n";
    write(&f.root.join("scenarios/demo/h.yaml"), &text);
    write(
        &f.root.join("targets/claude-code/known-divergences.yaml"),
        &format!(
            "{KNOWN}{}{}",
            KNOWN.replace("demo/k\n", "demo/h\n").replace(">=1.0.2", ">=1.0.3"),
            "- scenario: demo/h\n  kind: field_mismatch\n  message: '^frame 1 vs expected entry 1: expected \"(old|new)\", found \"none\"'\n  versions: \">=1.0.3, <1.0.5\"\n  observed: [1.0.3]\n  reason: h says none on 1.0.3 and 1.0.4\n"
        ),
    );
    let (code, out) = ranges(&f, "--prove", &["demo/h"]);
    assert!(out.contains("claude-code@<1.0.3: proven: 1.0.0 to 1.0.2 behave as written, first published below and 1.0.3 above do not"), "{out}");
    assert_eq!(code, 0, "{out}");
    let h = std::fs::read_to_string(f.root.join("scenarios/demo/h.yaml")).unwrap();
    assert!(
        h.contains("\"claude-code@<1.0.3\":"),
        "not written back: {h}"
    );
}

#[test]
fn a_blocks_proof_is_stale_when_a_known_entry_of_its_scenario_changes() {
    let f = fixture();
    let (code, out) = ranges(&f, "--prove", &["demo/a"]);
    assert_eq!(code, 0, "{out}");
    // The block's releases are judged seeing through its scenario's entries: a new one
    // (or a change to one) is a change to what was judged.
    let known = f.root.join("targets/claude-code/known-divergences.yaml");
    write(
        &known,
        &format!("{KNOWN}{}", KNOWN.replace("demo/k\n", "demo/a\n")),
    );
    let (code, out) = ranges(&f, "--check", &["demo/a"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("scenarios/demo/a.yaml:11: claude-code@<1.0.4 (why: proof stale)"),
        "{out}"
    );
}

#[test]
fn a_behaviour_that_changes_twice_inside_a_range_is_reported_not_proven() {
    let f = fixture();
    let (code, text) = ranges(&f, "--prove", &["demo/t"]);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("claude-code@<1.0.8: not proven: the behaviour changes twice inside the range: 1.0.0 and 1.0.7 behave as written, 1.0.4 between them does not"),
        "{text}"
    );
    assert!(
        !f.root.join("targets/claude-code/ranges.yaml").exists() || {
            let proofs =
                std::fs::read_to_string(f.root.join("targets/claude-code/ranges.yaml")).unwrap();
            !proofs.contains("demo/t.yaml")
        }
    );
}

#[test]
fn a_range_searched_past_its_bound_is_checked_on_the_sampled_releases_it_reaches() {
    let f = fixture();
    // `u` exits 0 up to 1.0.7 except on the sampled 1.0.4: the search up from `<1.0.3`
    // never lands on 1.0.4, so only the sample run there shows the second change.
    write(
        &f.root.join("scenarios/demo/u.yaml"),
        &scenario("u", 3, Some(("<1.0.3", 0))),
    );
    let (code, text) = ranges(&f, "--prove", &["demo/u"]);
    assert!(
        text.contains("claude-code@<1.0.3: not proven: the behaviour changes twice inside the range: 1.0.0 and 1.0.7 behave as written, 1.0.4 between them does not"),
        "{text}"
    );
    assert_eq!(code, 1, "{text}");
    let u = std::fs::read_to_string(f.root.join("scenarios/demo/u.yaml")).unwrap();
    assert!(u.contains("\"claude-code@<1.0.3\":"), "not written: {u}");
}

#[test]
fn a_projects_own_ranges_are_listed_from_its_files_and_proven_beside_its_known_list() {
    let f = fixture();
    let own = f.root.parent().unwrap().join("own");
    write(
        &own.join("streamcheck.toml"),
        "known_divergences = \"checks/known.yaml\"\n[scenarios]\nfolders = [\"mine\"]\n",
    );
    write(
        &own.join("mine/mine/x.yaml"),
        &scenario("a", 3, Some(("<1.0.4", 0))),
    );
    write(&own.join("mine/mine/y.yaml"), &scenario("k", 0, None));
    write(
        &own.join("checks/known.yaml"),
        &KNOWN.replace("demo/k", "mine/y"),
    );
    let path = format!("{}:{}", f.bin.display(), std::env::var("PATH").unwrap());
    let run = |mode: &str| {
        let out = streamcheck_at(&f.root)
            .arg("--config")
            .arg(own.join("streamcheck.toml"))
            .args(["ranges", mode, "--filter", "mine/", "--versions", PUBLISHED])
            .arg("--report-dir")
            .arg(own.join("report"))
            .env("STREAMCHECK_CACHE", &f.cache)
            .env("PATH", &path)
            .output()
            .unwrap();
        (out.status.code(), printed(&out))
    };
    let (code, text) = run("--check");
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("mine/mine/x.yaml:11: claude-code@<1.0.4 (why: no proof)"),
        "{text}"
    );
    assert!(
        text.contains("\nchecks/known.yaml:2: mine/y exit_code >=1.0.2, <1.0.5 (why: no proof)"),
        "{text}"
    );
    assert!(text.contains("0 of 2 range(s) proven"), "{text}");
    let (code, text) = run("--prove");
    assert_eq!(code, Some(0), "{text}");
    let proofs = std::fs::read_to_string(own.join("checks/ranges.yaml")).unwrap();
    assert!(
        proofs.contains("file: mine/mine/x.yaml") && proofs.contains("file: checks/known.yaml"),
        "{proofs}"
    );
    assert!(
        !f.root.join("targets/claude-code/ranges.yaml").exists(),
        "the catalogue's proofs are not touched"
    );
    assert_eq!(run("--check").0, Some(0));
}

#[test]
fn a_stop_request_ends_the_whole_search_not_only_the_run_under_way() {
    let f = fixture();
    write(
        &f.root.join("scenarios/demo/s.yaml"),
        &scenario("s", 0, Some(("<1.0.4", 0))),
    );
    let path = format!("{}:{}", f.bin.display(), std::env::var("PATH").unwrap());
    // One job: the releases of the first round go in two runs, so a search that only
    // stopped the run under way would start the next one.
    let bin = assert_cmd::cargo::cargo_bin("streamcheck");
    let mut child = std::process::Command::new(bin)
        .arg("--root")
        .arg(&f.root)
        .args(["ranges", "--prove", "--jobs", "1", "--versions", PUBLISHED])
        .args(["--filter", "demo/s", "--report-dir"])
        .arg(f.root.join("report"))
        .env("STREAMCHECK_CACHE", &f.cache)
        .env("PATH", path)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = || probes(&f);
    let wait = |done: &dyn Fn() -> bool| {
        for _ in 0..1200 {
            if done() {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        false
    };
    assert!(wait(&|| started() == 1), "the first trial never started");
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let mut status = None;
    for _ in 0..1200 {
        status = child.try_wait().unwrap();
        if status.is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let ended = status.is_some();
    if !ended {
        let _ = child.kill();
    }
    assert!(ended, "ranges --prove went on after SIGTERM");
    assert!(!status.unwrap().success());
    assert_eq!(started(), 1, "a release was run after the stop request");
}

#[test]
fn a_run_stopped_early_keeps_the_proofs_of_the_batches_it_finished() {
    let f = fixture();
    write(
        &f.root.join("scenarios/demo/s.yaml"),
        &scenario("s", 0, Some(("<1.0.4", 0))),
    );
    let path = format!("{}:{}", f.bin.display(), std::env::var("PATH").unwrap());
    // `a` is proven in the first batch; `s` hangs in the second, far longer than the wait.
    let bin = assert_cmd::cargo::cargo_bin("streamcheck");
    let mut child = std::process::Command::new(bin)
        .arg("--root")
        .arg(&f.root)
        .args(["ranges", "--prove", "--save-every", "1", "--timeout", "600"])
        .args(["--jobs", "2", "--versions", PUBLISHED])
        .args(["--filter", "demo/a", "--filter", "demo/s", "--report-dir"])
        .arg(f.root.join("report"))
        .env("STREAMCHECK_CACHE", &f.cache)
        .env("PATH", path)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let file = f.root.join("targets/claude-code/ranges.yaml");
    let proofs = || std::fs::read_to_string(&file).unwrap_or_default();
    let mut saved = false;
    for _ in 0..1200 {
        if proofs().contains("file: scenarios/demo/a.yaml") {
            saved = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = child.wait().unwrap();
    assert!(
        saved,
        "the first batch's proof was not saved while the run went on"
    );
    assert!(!status.success());
    let kept = proofs();
    assert!(!kept.contains("file: scenarios/demo/s.yaml"), "{kept}");
    let (code, out) = ranges(&f, "--check", &["demo/a"]);
    assert_eq!(code, 0, "the proof kept proves its range: {out}");
}

#[test]
fn resampling_runs_only_the_sampled_releases_a_proof_lacks_and_drops_a_proof_they_break() {
    let f = fixture();
    let versions = f.root.join("targets/claude-code/versions.yaml");
    // No sampled release inside `a`'s range (1.0.0 to 1.0.3) or `t`'s (1.0.0 to 1.0.7).
    write(&versions, "pinned: 9.9.9\nsupported: [1.0.0, 1.0.9]\n");
    let (code, text) = ranges(&f, "--prove", &["demo/a", "demo/t"]);
    assert_eq!(code, 0, "{text}");
    // The sample grows: 1.0.2 lies inside both, 1.0.4 inside `t`, where `t` exits 3.
    write(
        &versions,
        "pinned: 9.9.9\nsupported: [1.0.0, 1.0.2, 1.0.4, 1.0.9]\n",
    );
    let (code, text) = ranges(&f, "--check", &["demo/a", "demo/t"]);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("2 proven range(s) were checked at their bounds only"),
        "{text}"
    );
    let before = probes(&f);

    let (code, text) = ranges_with(&f, &["--prove", "--resample"], &["demo/a", "demo/t"]);
    assert!(
        text.contains(
            "demo/a.yaml:11: claude-code@<1.0.4: sampled: 1.0.0 to 1.0.3 behave as written"
        ),
        "{text}"
    );
    let log = std::fs::read_to_string(&f.log).unwrap();
    let a_runs: Vec<&str> = (log.lines().skip(before))
        .filter(|l| l.ends_with(" a"))
        .collect();
    assert_eq!(
        a_runs,
        ["1.0.2 a"],
        "only the sampled release the proof lacks runs"
    );
    let proofs = std::fs::read_to_string(f.root.join("targets/claude-code/ranges.yaml")).unwrap();
    assert!(
        proofs.contains("- demo/a on claude-code@1.0.2\n"),
        "{proofs}"
    );

    // `t` changes inside: its proof goes, and proving it from scratch finds the same.
    assert!(
        text.contains("claude-code@<1.0.8: not sampled: the behaviour changes twice inside the range: 1.0.0 and 1.0.7 behave as written, 1.0.4 between them does not"),
        "{text}"
    );
    assert!(
        text.contains(
            "claude-code@<1.0.8: not proven: the behaviour changes twice inside the range"
        ),
        "{text}"
    );
    assert_eq!(code, 1, "{text}");
    let (code, text) = ranges(&f, "--check", &["demo/t"]);
    assert_eq!(code, 1, "the range is no longer proven: {text}");
    assert!(
        text.contains("claude-code@<1.0.8 (why: no proof)"),
        "{text}"
    );
}

/// A `versions.yaml` that does not load is the error, never an empty sample: a check that
/// cannot read the sample must not pass as if every proof had run it.
#[test]
fn a_sample_file_that_does_not_load_fails_the_check_naming_it() {
    let f = fixture();
    let (code, text) = ranges(&f, "--prove", &["demo/a"]);
    assert_eq!(code, 0, "{text}");
    write(
        &f.root.join("targets/claude-code/versions.yaml"),
        "pinned: 9.9.9\nsupported: [1.0.0\n",
    );
    let (code, text) = ranges(&f, "--check", &["demo/a"]);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("versions.yaml"), "{text}");
}
