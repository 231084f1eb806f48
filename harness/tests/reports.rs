//! Reports: every divergence kind provoked by a fixture CLI is named in its report
//! with the right frame and path; one full report is compared to an insta snapshot;
//! junit.xml and results.json are read back.

mod common;

use common::{read_json, run_fixture, streamcheck, text};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::PathBuf;
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
fn each_failed_trial_writes_its_four_files_and_a_passing_one_none() {
    let dir = run().0.path();
    let results = read_json(&dir.join("results.json"));
    let mut expected = BTreeSet::new();
    let mut passed = Vec::new();
    for t in results["trials"].as_array().unwrap() {
        let scenario = t["scenario"].as_str().unwrap();
        match t["status"].as_str().unwrap() {
            "passed" => passed.push(scenario.to_string()),
            _ => expected.extend(
                ["md", "json", "stdout.jsonl", "journal.ndjson"]
                    .map(|ext| format!("{scenario}.command_fake-cli.sh.{ext}")),
            ),
        }
    }
    assert_eq!(passed, ["passes"]);
    let written: BTreeSet<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.contains(".command_fake-cli.sh."))
        .collect();
    assert_eq!(written, expected);
}

/// The changing parts of a report (temp paths, ports, timings, the fixture's place),
/// as insta filters. Temp paths are recognised by this machine's temp dir, whatever
/// it is, as the harness makes its sandboxes there.
fn report_filters() -> Vec<(String, String)> {
    let tmp = std::env::temp_dir();
    let tmp_dirs: Vec<String> = [tmp.clone(), tmp.canonicalize().unwrap_or(tmp)]
        .iter()
        .map(|p| regex::escape(p.to_str().unwrap().trim_end_matches('/')))
        .collect();
    vec![
        (
            regex::escape(fixture_root().to_str().unwrap()),
            "<fixtures>".into(),
        ),
        (
            format!(r"(?:{})/[^\s`'\x22]*?/(work|home)", tmp_dirs.join("|")),
            "<sandbox>/$1".into(),
        ),
        (r"127\.0\.0\.1:\d+".into(), "127.0.0.1:<port>".into()),
        (r"duration: \d+ ms".into(), "duration: <ms> ms".into()),
        (
            r"frames arrived from .*".into(),
            "frames arrived <timing>".into(),
        ),
    ]
}

#[test]
fn the_filters_recognise_a_sandbox_under_this_machines_temp_dir() {
    let sandbox = std::env::temp_dir().join("streamcheck-x1/run/work/a.txt");
    let mut text = format!("cwd {} and 127.0.0.1:4242", sandbox.display());
    for (pattern, replacement) in report_filters() {
        let re = regex::Regex::new(&pattern).unwrap();
        text = re.replace_all(&text, replacement.as_str()).into_owned();
    }
    assert_eq!(text, "cwd <sandbox>/work/a.txt and 127.0.0.1:<port>");
}

/// The field-mismatch report, whole. `cargo insta review` (or `INSTA_UPDATE=always`)
/// accepts a change.
#[test]
fn full_report_matches_its_snapshot() {
    let report =
        std::fs::read_to_string(run().0.path().join("field_mismatch.command_fake-cli.sh.md"))
            .unwrap();
    let mut settings = insta::Settings::clone_current();
    for (pattern, replacement) in report_filters() {
        settings.add_filter(&pattern, replacement);
    }
    settings.bind(|| insta::assert_snapshot!("field_mismatch", report));
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
