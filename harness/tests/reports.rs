//! Reports: every divergence kind provoked by a fixture CLI is named in its report
//! with the right frame and path; one full report is compared to a golden file;
//! junit.xml and results.json are read back.

mod common;

use common::{read_json, run_fixture, streamcheck, text};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

fn fixture_root() -> PathBuf {
    common::fixture_root("divergences")
}

/// One run of the whole fixture suite, shared by the tests of this file.
fn run() -> &'static (tempfile::TempDir, String) {
    static RUN: OnceLock<(tempfile::TempDir, String)> = OnceLock::new();
    RUN.get_or_init(|| {
        let reports = tempfile::tempdir().unwrap();
        let out = run_fixture(&fixture_root(), reports.path())
            .args(["--jobs", "4"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        (reports, text(&out.stdout))
    })
}

fn report_json(name: &str) -> Value {
    read_json(
        &run()
            .0
            .path()
            .join(format!("{name}.command_fake-cli.sh.json")),
    )
}

fn first_divergence(name: &str) -> Value {
    report_json(name)["divergences"][0].clone()
}

#[test]
fn terminal_output_ends_with_the_counts() {
    let stdout = &run().1;
    assert!(
        stdout.contains("ok      passes (command:fake-cli.sh)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("FAILED  field_mismatch (command:fake-cli.sh): field mismatch"),
        "{stdout}"
    );
    assert_eq!(
        stdout.lines().last(),
        Some("1 passed, 10 failed, 0 known, 0 skipped")
    );
}

#[test]
fn field_mismatch_names_frame_line_and_path() {
    let d = first_divergence("field_mismatch");
    assert_eq!(d["kind"], "field_mismatch");
    assert_eq!(d["frame"], 2);
    assert_eq!(d["line"], 3);
    assert_eq!(d["path"], "$.result");
    assert_eq!(d["expected"], "Hello?");
    assert_eq!(d["actual"], "Hello!");
}

#[test]
fn each_kind_is_named() {
    let cases = [
        ("unexpected_frame", "unexpected_frame", Some(2)),
        ("missing_frame", "missing_frame", Some(1)),
        ("order", "order", Some(1)),
        ("capture_conflict", "field_mismatch", Some(2)),
        ("exit_code", "exit_code", None),
        ("request", "request", None),
        ("unscripted_request", "unscripted_request", None),
        ("workspace", "workspace", None),
        ("text", "text", None),
    ];
    for (name, kind, frame) in cases {
        let d = first_divergence(name);
        assert_eq!(d["kind"], kind, "{name}: {d}");
        if let Some(f) = frame {
            assert_eq!(d["frame"], f, "{name}: {d}");
        }
    }
    assert_eq!(first_divergence("request")["path"], "$.messages[0].content");
    let unscripted = first_divergence("unscripted_request");
    assert!(unscripted["message"]
        .as_str()
        .unwrap()
        .contains("no scripted response for request #2"));
    let requests = &report_json("unscripted_request")["requests"];
    assert_eq!(requests[1]["answered_by"], "UNSCRIPTED");
}

#[test]
fn passing_trials_write_no_report_files() {
    assert!(!run()
        .0
        .path()
        .join("passes.command_fake-cli.sh.md")
        .exists());
}

/// Replaces what changes between runs (temp paths, ports, timings) in a report.
fn normalize(text: &str) -> String {
    let re_tmp = regex::Regex::new(r"/tmp/[^\s`'\x22]*?/(work|home)").unwrap();
    let re_port = regex::Regex::new(r"127\.0\.0\.1:\d+").unwrap();
    let re_ms = regex::Regex::new(r"duration: \d+ ms").unwrap();
    let re_arrival = regex::Regex::new(r"frames arrived from .*").unwrap();
    let root = fixture_root().display().to_string();
    let text = text.replace(&root, "<fixtures>");
    let text = re_tmp.replace_all(&text, "<sandbox>/$1");
    let text = re_port.replace_all(&text, "127.0.0.1:<port>");
    let text = re_arrival.replace_all(&text, "frames arrived <timing>");
    re_ms.replace_all(&text, "duration: <ms> ms").into_owned()
}

#[test]
fn full_report_matches_the_golden_file() {
    let actual =
        std::fs::read_to_string(run().0.path().join("field_mismatch.command_fake-cli.sh.md"))
            .unwrap();
    let actual = normalize(&actual);
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/field_mismatch.md");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(golden.parent().unwrap()).unwrap();
        std::fs::write(&golden, &actual).unwrap();
    }
    let expected =
        std::fs::read_to_string(&golden).expect("golden file (UPDATE_GOLDEN=1 writes it)");
    if expected != actual {
        let diff = similar::TextDiff::from_lines(&expected, &actual)
            .unified_diff()
            .header("golden", "actual")
            .to_string();
        panic!("the report changed (UPDATE_GOLDEN=1 to accept):\n{diff}");
    }
}

#[test]
fn junit_xml_reads_back() {
    let xml = std::fs::read_to_string(run().0.path().join("junit.xml")).unwrap();
    let doc = roxmltree::Document::parse(&xml).expect("junit.xml is well-formed XML");
    let cases: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    assert_eq!(cases.len(), 11);
    let failed: Vec<&str> = cases
        .iter()
        .filter(|c| c.children().any(|ch| ch.has_tag_name("failure")))
        .map(|c| c.attribute("name").unwrap())
        .collect();
    assert_eq!(failed.len(), 10);
    let fm = cases
        .iter()
        .find(|c| c.attribute("name") == Some("field_mismatch"))
        .unwrap();
    let failure = fm.children().find(|ch| ch.has_tag_name("failure")).unwrap();
    assert!(failure
        .attribute("message")
        .unwrap()
        .starts_with("field mismatch: frame 2"));
    assert!(failure.text().unwrap_or("").contains("$.result"));
}

#[test]
fn results_json_has_a_schema_version_and_counts() {
    let r = read_json(&run().0.path().join("results.json"));
    assert_eq!(r["schema_version"], 1);
    assert_eq!(r["complete"], true);
    assert_eq!(r["counts"]["passed"], 1);
    assert_eq!(r["counts"]["failed"], 10);
    assert_eq!(r["trials"].as_array().unwrap().len(), 11);
    let summary = std::fs::read_to_string(run().0.path().join("summary.md")).unwrap();
    assert!(summary.contains("| field_mismatch | **FAILED** (field mismatch) [report](field_mismatch.command_fake-cli.sh.md) |"), "{summary}");
}

#[test]
fn merge_combines_shards() {
    let shards: Vec<tempfile::TempDir> = (1..=2).map(|_| tempfile::tempdir().unwrap()).collect();
    for (k, dir) in shards.iter().enumerate() {
        run_fixture(&fixture_root(), dir.path())
            .args(["--shard", &format!("{}/2", k + 1)])
            .output()
            .unwrap();
    }
    let out_dir = tempfile::tempdir().unwrap();
    let out = streamcheck()
        .arg("merge")
        .arg(shards[0].path())
        .arg(shards[1].path())
        .arg("--out")
        .arg(out_dir.path())
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("1 passed, 10 failed, 0 known, 0 skipped"),
        "{stdout}"
    );
    assert!(out_dir
        .path()
        .join("field_mismatch.command_fake-cli.sh.md")
        .exists());
    let r = read_json(&out_dir.path().join("results.json"));
    assert_eq!(r["trials"].as_array().unwrap().len(), 11);
}
