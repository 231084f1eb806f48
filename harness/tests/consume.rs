//! `streamcheck consume` on the real pinned CLI's output, with the tiny consumers of
//! `tests/consumers/`: a strict one (exit 1 on an unknown `type`), the same one written
//! before `rate_limit_event` came (2.1.45), and a tolerant one.

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn consume(args: &[&str]) -> (i32, String) {
    let out = Command::cargo_bin("streamcheck")
        .unwrap()
        .current_dir(root())
        .arg("consume")
        .args(args)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

fn fed(dir: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(dir.join("consume.json")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    v["fed"].as_array().unwrap().clone()
}

fn of<'a>(fed: &'a [Value], scenario: &str, probe: Value) -> Vec<&'a Value> {
    fed.iter()
        .filter(|f| f["scenario"] == scenario && f["probe"] == probe)
        .collect()
}

const STRICT: &str = "python3 harness/tests/consumers/strict.py";

#[test]
fn strict_tolerant_and_pre_rate_limit_consumers_on_the_pinned_output() {
    let tmp = tempfile::tempdir().unwrap();
    let (run, strict) = (tmp.path().join("run"), tmp.path().join("strict"));
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let (code, out) = consume(&[
        "--filter",
        "basics/text-reply",
        "--filter",
        "errors/rate-limit-event-allowed",
        "--command",
        STRICT,
        "--probes",
        "--jobs",
        "2",
        "--run-dir",
        &s(&run),
        "--report-dir",
        &s(&strict),
    ]);
    assert_eq!(code, 1, "a probe fails the strict consumer: {out}");
    let all = fed(&strict);
    let rate = "errors/rate-limit-event-allowed";
    for f in
        of(&all, rate, Value::Null)
            .into_iter()
            .chain(of(&all, "basics/text-reply", Value::Null))
    {
        assert_eq!(f["outcome"], "passed", "the real pinned output passes: {f}");
    }
    let probed = of(&all, "basics/text-reply", "new-frame-type".into());
    assert_eq!(probed.len(), 1);
    let f = probed[0];
    assert_eq!(
        (f["outcome"].as_str(), f["failure"]["code"].as_i64()),
        (Some("failed"), Some(1))
    );
    assert_eq!(
        f["at_line"], 2,
        "the new frame comes right after system/init: {f}"
    );
    assert!(
        f["line"].as_str().unwrap().contains("probe_new_frame"),
        "{f}"
    );
    let md = std::fs::read_to_string(strict.join("consume.md")).unwrap();
    assert!(md.contains("probe `new-frame-type`: 2 trial(s)"), "{md}");
    assert!(strict.join("junit.xml").is_file() && strict.join("index.html").is_file());

    // The same parser written before 2.1.45: the pinned release prints rate_limit_event.
    let old = tmp.path().join("old");
    let without = format!("{STRICT} --without rate_limit_event");
    let (code, out) = consume(&[
        "--filter",
        rate,
        "--command",
        &without,
        "--from",
        &s(&run),
        "--report-dir",
        &s(&old),
    ]);
    assert_eq!(code, 1, "{out}");
    let all = fed(&old);
    let f = of(&all, rate, Value::Null)[0];
    assert_eq!(f["outcome"], "failed");
    assert!(
        f["line"]
            .as_str()
            .unwrap()
            .contains("\"type\":\"rate_limit_event\""),
        "{f}"
    );
    assert!(
        f["stderr"]
            .as_str()
            .unwrap()
            .contains("unknown message type 'rate_limit_event'"),
        "{f}"
    );

    // A tolerant parser reads every probe of the same saved run.
    let tolerant = tmp.path().join("tolerant");
    let (code, out) = consume(&[
        "--filter",
        "basics/text-reply",
        "--filter",
        rate,
        "--command",
        "python3 harness/tests/consumers/tolerant.py",
        "--each",
        r#"{"type":"$string"}"#,
        "--probes",
        "--from",
        &s(&run),
        "--report-dir",
        &s(&tolerant),
    ]);
    assert_eq!(code, 0, "{out}");
    let all = fed(&tolerant);
    assert!(all
        .iter()
        .all(|f| f["outcome"] == "passed" || f["outcome"] == "not_applicable"));
    assert!(
        all.iter().filter(|f| f["outcome"] == "passed").count() > 2 * 9,
        "every probe ran: {out}"
    );
}

#[test]
fn no_consumer_an_unknown_one_or_no_trial_is_a_setup_error() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, out) = consume(&[
        "--filter",
        "basics/text-reply",
        "--from",
        tmp.path().to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("name a consumer"), "{out}");
    let (code, out) = consume(&["--filter", "basics/text-reply", "--consumer", "nope"]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("--consumer nope"), "{out}");
    let (code, out) = consume(&["--filter", "nothing-is-called-this", "--command", "cat"]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("no trial selected"), "{out}");
}

/// docs/consumers/sdk-matrix.md is generated (`consume --sdk python --sdk typescript --probes --matrix`);
/// a new SDK or CLI pin without a new matrix fails here.
#[test]
fn the_committed_sdk_matrix_is_of_the_pinned_sdk_and_the_pinned_cli() {
    let doc = std::fs::read_to_string(root().join("docs/consumers/sdk-matrix.md")).unwrap();
    let req = std::fs::read_to_string(
        root()
            .join(streamcheck::commands::consume::sdk::PYTHON_DIR)
            .join("requirements.txt"),
    )
    .unwrap();
    let sdk = streamcheck::commands::consume::sdk::python_pin(&req).unwrap();
    assert!(
        doc.contains(&format!("## claude-agent-sdk (PyPI) {sdk}\n")),
        "the matrix is not of the pinned SDK {sdk}"
    );
    let ts = streamcheck::commands::consume::sdk::typescript_pin(
        &std::fs::read_to_string(
            root()
                .join(streamcheck::commands::consume::sdk::TS_DIR)
                .join("package.json"),
        )
        .unwrap(),
    )
    .unwrap();
    assert!(
        doc.contains(&format!("## @anthropic-ai/claude-agent-sdk (npm) {ts}\n")),
        "the matrix is not of the pinned TypeScript SDK {ts}"
    );
    let package: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("targets/claude-code/package.json")).unwrap(),
    )
    .unwrap();
    let cli = package["dependencies"]["@anthropic-ai/claude-code"]
        .as_str()
        .unwrap();
    assert!(
        doc.contains(&format!("\n| {cli} |")),
        "the matrix has no row for the pinned CLI {cli}"
    );
}

/// The cells of one consumer's row for `release` in a committed matrix: column (`as
/// printed` or the probe's name) -> cell text.
fn matrix_row(doc: &str, consumer: &str, release: &str) -> Option<Vec<(String, String)>> {
    let section = doc.split(&format!("## {consumer}\n")).nth(1)?;
    let table: Vec<&str> = section
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .collect();
    let cells = |l: &str| -> Vec<String> {
        l.trim_matches('|')
            .split('|')
            .map(|c| c.trim().trim_matches('`').to_string())
            .collect()
    };
    let header = cells(table.first()?);
    let row = table
        .iter()
        .find(|l| l.starts_with(&format!("| {release} |")))?;
    Some(header.into_iter().zip(cells(row)).skip(1).collect())
}

/// Both real SDKs (the Python parser, long-lived per job; the TypeScript SDK's `query()`
/// over `replay-cli`) over a few of the pin's trials with every probe: a feed one fails
/// where the committed docs/consumers/sdk-matrix.md says `ok` fails here.
#[test]
fn both_sdks_read_the_pins_trials_as_the_committed_matrix_says() {
    let tmp = tempfile::tempdir().unwrap();
    let (run, out) = (tmp.path().join("run"), tmp.path().join("sdks"));
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let mut args: Vec<String> = Vec::new();
    for f in SDK_TRIALS {
        args.extend(["--filter".to_string(), f.to_string()]);
    }
    args.extend(
        [
            "--sdk",
            "python",
            "--sdk",
            "typescript",
            "--probes",
            "--jobs",
            "2",
        ]
        .map(str::to_string),
    );
    args.extend(["--run-dir".into(), s(&run), "--report-dir".into(), s(&out)]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, text) = consume(&args);
    assert!(code == 0 || code == 1, "{text}");
    let all = fed(&out);
    let doc = std::fs::read_to_string(root().join("docs/consumers/sdk-matrix.md")).unwrap();
    let consumers: Vec<String> = {
        let v: Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("consume.json")).unwrap())
                .unwrap();
        (v["consumers"].as_array().unwrap().iter())
            .map(|c| c["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(consumers.len(), 2, "{consumers:?}");
    let mut wrong = Vec::new();
    for consumer in &consumers {
        let mine: Vec<&Value> = all.iter().filter(|f| &f["consumer"] == consumer).collect();
        let release = mine[0]["release"].as_str().unwrap();
        let row = matrix_row(&doc, consumer, release)
            .unwrap_or_else(|| panic!("the committed matrix has no row {release} for {consumer}"));
        let passed = mine.iter().filter(|f| f["outcome"] == "passed").count();
        assert!(
            passed >= SDK_TRIALS.len() * 8,
            "{consumer}: only {passed} feeds passed: {text}"
        );
        for f in mine.iter().filter(|f| f["outcome"] == "failed") {
            let column = f["probe"].as_str().unwrap_or("as printed");
            let cell = (row.iter())
                .find(|(c, _)| c == column)
                .map(|(_, v)| v.as_str());
            if cell.is_none_or(|c| c.starts_with("ok")) {
                wrong.push(format!(
                    "{consumer} on {release}, {column}: the matrix says {cell:?}, it failed on {}: {}",
                    f["trial"], f["failure"]
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));

    // replay-cli takes the same trial by scenario and release from that run folder.
    let release = all[0]["release"].as_str().unwrap();
    let by_id = Command::cargo_bin("streamcheck")
        .unwrap()
        .current_dir(root())
        .args([
            "replay-cli",
            "--scenario",
            "basics/text-reply",
            "--release",
            release,
        ])
        .arg("--from")
        .arg(&run)
        .output()
        .unwrap();
    let saved: Value = serde_json::from_str(
        &std::fs::read_to_string(
            run.join("outputs/basics")
                .read_dir()
                .unwrap()
                .map(|e| e.unwrap().path())
                .find(|p| p.to_string_lossy().contains("text-reply"))
                .unwrap(),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&by_id.stdout),
        saved["stdout"].as_str().unwrap(),
        "{}",
        String::from_utf8_lossy(&by_id.stderr)
    );
}

/// The pin's trials the SDK test feeds: a plain turn, can_use_tool answered by the host, an
/// is_error result, partial messages (stream_event), several turns, a rate_limit_event.
const SDK_TRIALS: [&str; 6] = [
    "basics/text-reply",
    "control/can-use-tool-allow",
    "basics/max-tokens-result-is-error",
    "streaming/partial-text",
    "stdin/multi-turn",
    "errors/rate-limit-event-allowed",
];

/// A slice of docs/consumers/sdk-history.md, run again: the Python SDK before (0.1.37) and
/// after (0.1.44) it skipped unknown frame types, on the saved `rate_limit_event` trial of
/// 2.1.44 (none printed) and 2.1.45 (printed): the red cell and the version that fixed it
/// are the committed page's.
#[test]
fn a_slice_of_the_committed_history_matrix_comes_out_the_same() {
    let tmp = tempfile::tempdir().unwrap();
    let page = tmp.path().join("history.md");
    let fixtures = root().join("harness/tests/fixtures/history");
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let (code, out) = consume(&[
        "--filter",
        "errors/rate-limit-event-allowed",
        "--sdk",
        "python@0.1.37",
        "--sdk",
        "python@0.1.44",
        "--from",
        &s(&fixtures.join("2.1.44")),
        "--from",
        &s(&fixtures.join("2.1.45")),
        "--report-dir",
        &s(&tmp.path().join("report")),
        "--matrix",
        &s(&page),
    ]);
    assert_eq!(code, 1, "0.1.37 fails on 2.1.45: {out}");
    let slice = std::fs::read_to_string(&page).unwrap();
    let doc = std::fs::read_to_string(root().join("docs/consumers/sdk-history.md")).unwrap();
    let red = "| claude-agent-sdk (PyPI) 0.1.37 | `errors/rate-limit-event-allowed` |";
    let row = |page: &str| -> String {
        (page.lines())
            .find(|l| l.starts_with(red))
            .unwrap_or_else(|| panic!("no red cell {red} in:\n{page}"))
            .to_string()
    };
    let (mine, committed) = (row(&slice), row(&doc));
    let cells = |l: &str| -> Vec<String> { l.split('|').map(|c| c.trim().to_string()).collect() };
    let (mine, committed) = (cells(&mine), cells(&committed));
    // The line and error, and the version that fixed it: 0.1.44, in both.
    assert_eq!(mine[4], committed[4], "the failing line");
    assert_eq!(mine[5], committed[5], "the error");
    assert_eq!(mine[6], "0.1.44");
    assert_eq!(committed[6], "0.1.44");
    assert!(mine[3].starts_with("2.1.45") && committed[3].starts_with("2.1.45"));
}

/// The committed pages' probe tables (the matrix ran every probe, the history four) say
/// what each probe models and what `run` reports it as, as the code does now.
#[test]
fn the_committed_pages_describe_their_probes_as_the_code_does() {
    use streamcheck::commands::consume::probe::Probe;
    use streamcheck::commands::consume::{render, ProbeInfo};
    for page in [
        "docs/consumers/sdk-matrix.md",
        "docs/consumers/sdk-history.md",
    ] {
        let doc = std::fs::read_to_string(root().join(page)).unwrap();
        let listed: Vec<ProbeInfo> = (doc.split("## Probes\n\n").nth(1))
            .unwrap_or_else(|| panic!("{page} has no probe table"))
            .lines()
            .skip(2)
            .take_while(|l| l.starts_with('|'))
            .map(|l| {
                let name = l.split('`').nth(1).unwrap_or_default();
                ProbeInfo::of(Probe::parse(name).unwrap_or_else(|e| panic!("{page}: {e}")))
            })
            .collect();
        let table = render::probes_table(&listed);
        assert!(
            doc.contains(&table),
            "{page}'s probe table is not the code's; it should read:\n{table}"
        );
        if page.ends_with("sdk-matrix.md") {
            assert_eq!(
                listed.len(),
                Probe::ALL.len(),
                "the matrix runs every probe"
            );
        }
    }
}
