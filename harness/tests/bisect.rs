//! `streamcheck bisect` against fake releases: a temp cache holds a fake Claude Code for
//! each version 1.0.0..1.0.9 (its behaviour per scenario baked in), the published list
//! comes from `--versions`, and `npm` on PATH is a stand-in that fails, so nothing
//! reaches the network and a version missing from the cache fails to install.

mod common;

use common::{printed, streamcheck_at, text, write_executable};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Per scenario (FAKE_MODE), the exit code of version 1.0.`minor`: `a` and `b` change at
/// 1.0.4, `c` at 1.0.6, `n` exits 5 everywhere between (matching neither), `p` fails at
/// 1.0.0, `u` changes at 1.0.4 the first time it runs there and at 1.0.5 afterwards.
const FAKE: &str = r#"#!/bin/sh
if [ "$1" = "--version" ]; then echo "1.0.MINOR (Fake)"; exit 0; fi
echo "1.0.MINOR $FAKE_MODE" >> LOG
M=MINOR
case "$FAKE_MODE" in
  a|b) [ $M -ge 4 ] && C=3 || C=0 ;;
  c) [ $M -ge 6 ] && C=3 || C=0 ;;
  n) case $M in 0) C=0 ;; 9) C=3 ;; *) C=5 ;; esac ;;
  p) [ $M -eq 0 ] && C=7 || C=3 ;;
  u) if [ $M -ge 5 ]; then C=3; elif [ $M -eq 4 ] && [ ! -e LOG.u ]; then touch LOG.u; C=3; else C=0; fi ;;
esac
[ $C -eq 0 ] && E=false || E=true
echo '{"type":"system","subtype":"init","session_id":"s"}'
echo '{"type":"result","subtype":"success","is_error":'$E',"result":"done","session_id":"s"}'
exit $C
"#;

struct Fixture {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    cache: PathBuf,
    bin: PathBuf,
    log: PathBuf,
}

fn fixture(uninstallable: &[u32]) -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let (root, cache, bin, log) = (
        base.join("proj"),
        base.join("cache"),
        base.join("bin"),
        base.join("probes.log"),
    );
    std::fs::create_dir_all(root.join("targets/claude-code")).unwrap();
    for mode in ["a", "b", "c", "n", "p", "u"] {
        write(
            &root.join(format!("scenarios/demo/{mode}.yaml")),
            &format!(
                "description: exit code changes between releases\nprompt: go\nenv: {{FAKE_MODE: {mode}}}\n\
                 expect:\n  claude-code:\n    frames: [{{type: system, subtype: init}}, {{type: result}}]\n    exit_code: 0\n    invariants:\n      skip: [exit_code_matches_result]\n      reason: fixture\n\
                 \x20 claude-code@>=1.0.9:\n    exit_code: 3\n"
            ),
        );
    }
    for minor in (0..10).filter(|m| !uninstallable.contains(m)) {
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

const PUBLISHED: &str =
    "1.0.0,1.0.1,1.0.2,1.0.3,1.0.4,1.0.5-beta,1.0.5,1.0.6,1.0.7,1.0.8,1.0.9,1.0.12";

/// Runs bisect over `filters` from 1.0.0 to 1.0.9: exit code, stdout, bisect.json.
fn bisect(f: &Fixture, filters: &[&str]) -> (i32, String, Value) {
    let report = f.root.join("report");
    let path = format!("{}:{}", f.bin.display(), std::env::var("PATH").unwrap());
    let mut cmd = streamcheck_at(&f.root);
    cmd.arg("bisect");
    for filter in filters {
        cmd.args(["--filter", filter]);
    }
    let out = cmd
        .args(["--from", "1.0.0", "--to", "1.0.9", "--jobs", "2"])
        .args(["--versions", PUBLISHED, "--report-dir"])
        .arg(&report)
        .env("STREAMCHECK_CACHE", &f.cache)
        .env("PATH", path)
        .output()
        .unwrap();

    let json = std::fs::read_to_string(report.join("bisect.json"))
        .map(|t| serde_json::from_str(&t).unwrap())
        .unwrap_or(Value::Null);
    (out.status.code().unwrap_or(-1), printed(&out), json)
}

fn outcome<'a>(json: &'a Value, scenario: &str) -> &'a Value {
    json["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["scenario"] == scenario)
        .unwrap_or_else(|| panic!("{scenario} not in {json}"))
}

/// How many times each (version, scenario) ran.
fn runs(f: &Fixture) -> Vec<(String, usize)> {
    let log = std::fs::read_to_string(&f.log).unwrap_or_default();
    let mut lines: Vec<&str> = log.lines().collect();
    lines.sort();
    let mut counted: Vec<(String, usize)> = Vec::new();
    for l in lines {
        match counted.last_mut() {
            Some((last, n)) if last == l => *n += 1,
            _ => counted.push((l.to_string(), 1)),
        }
    }
    counted
}

#[test]
fn finds_each_boundary_sharing_probes_between_scenarios_and_reports_install_failures() {
    let f = fixture(&[7]);
    let (code, text, json) = bisect(&f, &["demo/a", "demo/b", "demo/c"]);
    assert_eq!(code, 0, "{text}");
    for id in ["demo/a", "demo/b"] {
        assert_eq!(outcome(&json, id)["first_new"], "1.0.4", "{json}");
        assert_eq!(outcome(&json, id)["last_old"], "1.0.3", "{json}");
    }
    assert_eq!(outcome(&json, "demo/c")["first_new"], "1.0.6", "{json}");
    assert_eq!(outcome(&json, "demo/c")["last_old"], "1.0.5", "{json}");
    assert!(
        text.contains("demo/a: first matches 1.0.9's expectation at 1.0.4 (1.0.3 matches 1.0.0's)"),
        "{text}"
    );
    // One probe of 1.0.5 serves all three; a and b then go down, c up, past 1.0.7 that
    // could not be installed. Pre-releases and versions outside the span are never probed.
    let probed: Vec<&str> = json["probed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(
        probed,
        ["1.0.0", "1.0.9", "1.0.5", "1.0.3", "1.0.7", "1.0.4", "1.0.8", "1.0.6"]
    );
    assert_eq!(json["between"], 8);
    assert_eq!(json["install_failures"][0]["version"], "1.0.7", "{json}");
    assert_eq!(json["installed"], serde_json::json!(["1.0.7"]), "{json}");
    // Each version ran each scenario that needed it once, and the versions on either side
    // of each boundary once more to confirm it.
    let expected = [
        ("1.0.0 a", 1),
        ("1.0.0 b", 1),
        ("1.0.0 c", 1),
        ("1.0.3 a", 2),
        ("1.0.3 b", 2),
        ("1.0.4 a", 2),
        ("1.0.4 b", 2),
        ("1.0.5 a", 1),
        ("1.0.5 b", 1),
        ("1.0.5 c", 2),
        ("1.0.6 c", 2),
        ("1.0.8 c", 1),
        ("1.0.9 a", 1),
        ("1.0.9 b", 1),
        ("1.0.9 c", 1),
    ]
    .map(|(l, n)| (l.to_string(), n));
    assert_eq!(runs(&f), expected);
    let md = std::fs::read_to_string(f.root.join("report/bisect.md")).unwrap();
    assert!(md.contains("install failed: 1.0.7"), "{md}");
}

#[test]
fn a_version_matching_neither_expectation_is_reported_and_exits_1() {
    let f = fixture(&[]);
    let (code, text, json) = bisect(&f, &["demo/n"]);
    assert_eq!(code, 1, "{text}");
    let n = outcome(&json, "demo/n");
    assert_eq!(n["outcome"], "neither", "{json}");
    assert_eq!(n["version"], "1.0.5", "{json}");
    // Each side's first divergence, by its message, as the committed baseline has it.
    assert!(
        n["against_new"].is_string() && n["against_old"].is_string(),
        "{json}"
    );
    assert!(
        text.contains("demo/n: cannot bisect: 1.0.5 matches neither"),
        "{text}"
    );
}

#[test]
fn a_boundary_that_does_not_hold_when_run_again_is_reported_unstable() {
    let f = fixture(&[]);
    let (code, text, json) = bisect(&f, &["demo/u"]);
    assert_eq!(code, 1, "{text}");
    let u = outcome(&json, "demo/u");
    assert_eq!(u["outcome"], "unstable", "{json}");
    assert_eq!(u["version"], "1.0.4", "{json}");
    assert!(text.contains("1.0.4 is unstable"), "{text}");
}

#[test]
fn preconditions_fail_cleanly() {
    let f = fixture(&[]);
    let (code, text, json) = bisect(&f, &["demo/p"]);
    assert_eq!(code, 1, "{text}");
    let p = outcome(&json, "demo/p");
    assert_eq!(p["outcome"], "precondition", "{json}");
    assert_eq!(p["version"], "1.0.0", "{json}");
    // Nothing between was probed for it.
    assert_eq!(json["probed"], serde_json::json!(["1.0.0"]), "{json}");
}

#[test]
fn from_not_older_than_to_is_a_usage_error() {
    let f = fixture(&[]);
    let out = streamcheck_at(&f.root)
        .args([
            "bisect", "--filter", "demo/a", "--from", "1.0.9", "--to", "1.0.0",
        ])
        .args(["--versions", PUBLISHED])
        .env("STREAMCHECK_CACHE", &f.cache)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("must be older"));
}
