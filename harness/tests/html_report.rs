//! index.html in a real browser: a fixture run (one CLI prints markup and script and
//! fails a scenario) is opened in headless Chromium; the counts on the page equal
//! results.json, the failing trial's divergence shows at its frame and JSON path one
//! click (a `#trial=` link) from the run table, and nothing the CLI printed ran.
//! Screenshots go to `<target>/tmp/html_report/`.

mod common;

use common::{read_json, run_fixture, streamcheck, streamcheck_at, text};
use regex::Regex;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Instant;

const FAILING: &str = "hostile.command_fake-cli.sh";

fn fixture_root() -> PathBuf {
    common::fixture_root("html")
}

fn out_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("html_report")
}

/// The fixture run's report folder, made once per test binary.
fn report() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = out_dir().join("run");
        let _ = std::fs::remove_dir_all(&dir);
        let out = run_fixture(&fixture_root(), &dir)
            .args(["--jobs", "2"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        dir
    })
}

/// Debian's chromium; the test fails (never passes silently) without it.
fn chromium() -> PathBuf {
    let found = std::env::var_os("CHROMIUM")
        .map(PathBuf::from)
        .into_iter()
        .chain(["/usr/bin/chromium", "/usr/bin/chromium-browser"].map(PathBuf::from))
        .find(|p| p.exists());
    found.unwrap_or_else(|| {
        panic!(
            "headless Chromium is needed to check index.html in a browser and is not installed: \
             `apt-get update && apt-get install -y chromium` (as root; .ci/run does it)"
        )
    })
}

/// Chromium with nothing that reaches out, a fresh profile, and `args`.
fn browser(args: &[&str]) -> std::process::Output {
    let profile = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--hide-scrollbars",
            "--virtual-time-budget=10000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "chromium failed: {out:?}");
    out
}

fn url(page: &Path, fragment: &str) -> String {
    format!("file://{}{fragment}", page.display())
}

/// The DOM after the page's script ran.
fn dom(page: &Path, fragment: &str) -> String {
    let out = browser(&["--dump-dom", &url(page, fragment)]);
    let dom = String::from_utf8(out.stdout).unwrap();
    assert!(
        dom.contains("data-ready=\"1\""),
        "the page's script did not run:\n{dom}"
    );
    dom
}

fn screenshot(page: &Path, fragment: &str, name: &str) -> PathBuf {
    let png = out_dir().join(name);
    let _ = std::fs::remove_file(&png);
    let shot = format!("--screenshot={}", png.display());
    browser(&["--window-size=1300,1000", &shot, &url(page, fragment)]);
    png
}

fn results() -> Value {
    read_json(&report().join("results.json"))
}

#[test]
fn counts_on_the_page_equal_results_json() {
    let dom = dom(&report().join("index.html"), "");
    let counts = &results()["counts"];
    let count = Regex::new(r#"data-count="(\w+)"><b>(\d+)</b>"#).unwrap();
    let mut seen = 0;
    for c in count.captures_iter(&dom) {
        assert_eq!(counts[&c[1]], c[2].parse::<u64>().unwrap(), "{}", &c[1]);
        seen += 1;
    }
    assert_eq!(seen, 4, "failed, known, passed, skipped:\n{dom}");
    // Every non-skipped trial in the table, failures first.
    let rows = Regex::new(r#"<tr class="row (\w+)""#).unwrap();
    let statuses: Vec<&str> = rows
        .captures_iter(&dom)
        .map(|c| c.get(1).unwrap().as_str())
        .collect();
    assert_eq!(
        statuses.len(),
        results()["trials"].as_array().unwrap().len()
    );
    assert_eq!(statuses.first(), Some(&"failed"), "{statuses:?}");
    screenshot(&report().join("index.html"), "", "run.png");
}

#[test]
fn a_failing_trial_shows_its_divergence_at_its_frame_one_click_from_the_table() {
    let page = report().join("index.html");
    let table = dom(&page, "");
    let link = format!("href=\"#trial={FAILING}\"");
    assert!(
        table.contains(&link),
        "no link to the failing trial:\n{table}"
    );
    assert!(
        table.contains("id=\"trial\" class=\"trial\" hidden"),
        "{table}"
    );

    let opened = dom(&page, &format!("#trial={FAILING}"));
    let frame =
        Regex::new(r#"<div class="ev stdout diverged" id="[^"]*" data-frame="2">"#).unwrap();
    let at = frame
        .find(&opened)
        .unwrap_or_else(|| panic!("frame 2 is not marked as diverged:\n{opened}"));
    let event = &opened[at.start()..];
    let event = &event[..event[1..]
        .find("<div class=\"ev ")
        .map_or(event.len(), |i| i + 1)];
    assert!(event.contains("field mismatch"), "{event}");
    assert!(
        event.contains(r#"<span class="jl hl" title="field mismatch at frame 2"#)
            && event.contains(r#"data-path="$.result""#),
        "the JSON path is not marked in frame 2:\n{event}"
    );
    // The expected pattern beside it, and the command to run it again.
    assert!(event.contains("expected (scenario pattern)"), "{event}");
    assert!(
        opened.contains("streamcheck run --filter hostile"),
        "{opened}"
    );
    // The request the stub received sits before the frames, with its answer.
    let request = opened
        .find("POST /v1/messages")
        .expect("the stub's request");
    assert!(request < at.start(), "request after frame 2");
    assert!(opened.contains("answered by step 0, HTTP 200"), "{opened}");
    let png = screenshot(&page, &format!("#trial={FAILING}"), "trial.png");
    let bytes = std::fs::read(&png).unwrap();
    assert!(
        bytes.starts_with(b"\x89PNG") && bytes.len() > 10_000,
        "{}",
        png.display()
    );
}

#[test]
fn what_the_cli_printed_is_shown_as_text_and_never_runs() {
    let page = report().join("index.html");
    let raw = std::fs::read_to_string(&page).unwrap();
    for bad in [
        "<script>window.__pwned",
        "</textarea>",
        "<img src=x",
        "pwned=4</script>",
    ] {
        assert!(!raw.contains(bad), "`{bad}` is in index.html unescaped");
    }
    for fragment in ["", &format!("#trial={FAILING}")] {
        let dom = dom(&page, fragment);
        let html_tag = &dom[dom.find("<html").unwrap()..];
        let html_tag = &html_tag[..html_tag.find('>').unwrap()];
        assert!(
            !html_tag.contains("pwned"),
            "injected script ran: {html_tag}"
        );
        assert!(
            !dom.contains("<img src=\"x\""),
            "injected markup became an element"
        );
        if !fragment.is_empty() {
            // Shown, as text: in the frame, the non-JSON line and stderr.
            assert!(dom.contains("&lt;script&gt;window.__pwned=1"), "{dom}");
            assert!(dom.contains("&lt;script&gt;document.documentElement.dataset.pwned=4"));
            assert!(dom
                .contains("&lt;/script&gt;&lt;script&gt;document.documentElement.dataset.pwned=5"));
        }
    }
}

#[test]
fn merge_writes_the_page_with_the_saved_trials() {
    let out = out_dir().join("merged");
    let _ = std::fs::remove_dir_all(&out);
    streamcheck()
        .arg("merge")
        .arg(report())
        .arg("--out")
        .arg(&out)
        .assert()
        .code(1);
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(
        html.contains(&format!("id=\"t:{FAILING}\"")),
        "no trial detail"
    );
    assert!(out.join("outputs").join(format!("{FAILING}.json")).exists());
    let dom = dom(&out.join("index.html"), &format!("#trial={FAILING}"));
    assert!(dom.contains("class=\"ev stdout diverged\""), "{dom}");
}

#[test]
fn report_picks_the_formats() {
    let dir = out_dir().join("md-json");
    let _ = std::fs::remove_dir_all(&dir);
    run_fixture(&fixture_root(), &dir)
        .args(["--jobs", "2", "--report", "md,json", "--filter", "hostile"])
        .assert()
        .code(1);
    for (file, written) in [
        ("summary.md", true),
        ("results.json", true),
        ("hostile.command_fake-cli.sh.md", true),
        ("index.html", false),
        ("junit.xml", false),
    ] {
        assert_eq!(dir.join(file).exists(), written, "{file}");
    }
    let bad = streamcheck()
        .args(["run", "--report", "html,pdf"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    let stderr = text(&bad.stderr);
    assert!(stderr.contains("unknown report format `pdf`"), "{stderr}");
}

/// Trials in the synthetic run the measurement below makes: about a `@supported` run.
const SYNTHETIC_TRIALS: usize = 5_000;

/// Not a check (it measures): `cargo test -p streamcheck --test html_report -- --ignored
/// --nocapture` synthesises a 5,000-trial run (a real Claude Code stdout per trial, every
/// tenth failing), merges it into a report and prints the file's size and how long
/// Chromium takes to parse the page and to open a trial.
#[test]
#[ignore]
fn measure_a_supported_sized_report() {
    let src = out_dir().join("synthetic");
    synthesise_trials(&src);
    let out = out_dir().join("synthetic-report");
    let _ = std::fs::remove_dir_all(&out);
    let started = Instant::now();
    streamcheck()
        .args(["merge", "--report", "html"])
        .arg(&src)
        .arg("--out")
        .arg(&out)
        .assert()
        .code(1);
    let generate = started.elapsed();
    let page = out.join("index.html");
    let size = std::fs::metadata(&page).unwrap().len();
    let marker = Regex::new(r#"data-parsed-ms="(\d+)" data-opened-ms="(\d+)""#).unwrap();
    let small = report().join("index.html");
    let paint = |page: &Path, fragment: &str| {
        let started = Instant::now();
        screenshot(page, fragment, "synthetic.png");
        started.elapsed().as_secs_f64()
    };
    println!(
        "{SYNTHETIC_TRIALS} trials: index.html {:.1} MB, written by merge in {:.2} s",
        size as f64 / 1e6,
        generate.as_secs_f64()
    );
    for fragment in ["", "#trial=synthetic/s0500.command_fake-cli.sh"] {
        let dom = dom(&page, fragment);
        let m = marker.captures(&dom).expect("timing markers");
        println!(
            "  {}: Chromium parsed the page in {} ms and drew the trial in {} ms; a screenshot \
             (browser start, load, layout, paint) took {:.2} s, {:.2} s for the 4-trial page",
            if fragment.is_empty() {
                "the run table"
            } else {
                "a trial opened"
            },
            &m[1],
            &m[2],
            paint(&page, fragment),
            paint(&small, ""),
        );
    }
}

/// A run folder at `src` of [`SYNTHETIC_TRIALS`] trials made from the fixture's failing
/// one, each with a real Claude Code stdout, every tenth failed.
fn synthesise_trials(src: &Path) {
    let _ = std::fs::remove_dir_all(src);
    std::fs::create_dir_all(src.join("outputs")).unwrap();
    let mut r = results();
    let template = r["trials"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["scenario"] == "hostile")
        .unwrap()
        .clone();
    let saved: Value = serde_json::from_str(
        &std::fs::read_to_string(report().join("outputs").join(format!("{FAILING}.json"))).unwrap(),
    )
    .unwrap();
    let stdout = std::fs::read_to_string(
        fixture_root().join("../observed/claude-code-2.1.328/partial_tool.stdout.jsonl"),
    )
    .unwrap();
    let mut trials = Vec::new();
    for i in 0..SYNTHETIC_TRIALS {
        let scenario = format!("synthetic/s{i:04}");
        let mut t = template.clone();
        t["scenario"] = scenario.clone().into();
        let mut s = saved.clone();
        s["scenario"] = scenario.clone().into();
        s["stdout"] = stdout.clone().into();
        s["line_ms"] = Value::Array(
            (0..stdout.lines().count())
                .map(|l| (l as u64 * 40).into())
                .collect(),
        );
        if i % 10 != 0 {
            t["status"] = "passed".into();
            t["divergences"] = Value::Array(vec![]);
            s["status"] = "passed".into();
        }
        let file = src
            .join("outputs")
            .join(format!("{scenario}.command_fake-cli.sh.json"));
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, serde_json::to_vec(&s).unwrap()).unwrap();
        trials.push(t);
    }
    r["trials"] = Value::Array(trials);
    std::fs::write(src.join("results.json"), serde_json::to_vec(&r).unwrap()).unwrap();
}

#[test]
fn compare_shows_both_timelines_side_by_side_with_the_difference_marked() {
    let dir = out_dir().join("compare");
    let _ = std::fs::remove_dir_all(&dir);
    streamcheck_at(&fixture_root())
        .args(["compare", "--jobs", "2", "--filter", "passes", "--target"])
        .arg(fixture_root().join("other-cli.yaml"))
        .arg("--target-command")
        .arg(fixture_root().join("fake-cli.sh"))
        .arg("--report-dir")
        .arg(&dir)
        .assert()
        // The other CLI differs from its own expectation too: compare's gate is red.
        .code(1);
    let page = dir.join("index.html");
    let table = dom(&page, "");
    assert!(table.contains("href=\"#pair=passes\""), "{table}");
    let opened = dom(&page, "#pair=passes");
    let cols: Vec<&str> = opened.split("<div class=\"col\">").skip(1).collect();
    assert_eq!(cols.len(), 2, "{opened}");
    // other-cli repeats its assistant frame: that frame, and only that, has no counterpart.
    let marked = |col: &str| {
        col.matches("class=\"ev stdout differs\"").count()
            + col.matches("class=\"ev stdout diverged differs\"").count()
    };
    assert_eq!((marked(cols[0]), marked(cols[1])), (1, 0), "{opened}");
    screenshot(&page, "#pair=passes", "compare.png");
}

#[test]
fn drift_and_audit_pages_show_the_committed_baselines() {
    let baseline = common::repo().join("reports/baseline");
    let dir = out_dir().join("drift");
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string(baseline.join("drift/drift.json")).unwrap();
    let file: streamcheck::commands::drift::DriftFile = serde_json::from_str(&text).unwrap();
    streamcheck::commands::drift::html::write_drift(&dir, &file, Some("../run/index.html"))
        .unwrap();
    let drift = dom(&dir.join("index.html"), "");
    for p in &file.drift.pairs {
        let n = streamcheck::commands::drift::verdict::counts(&p.verdict);
        let shown = format!(
            ": <b>{}</b> breaking, <b>{}</b> additive",
            n.breaking, n.additive
        );
        assert!(drift.contains(&shown), "{} -> {}: {shown}", p.from, p.to);
    }
    let breaking = file
        .drift
        .pairs
        .iter()
        .flat_map(|p| &p.verdict)
        .find(|c| c.is_breaking());
    if let Some(scenario) = breaking.and_then(|c| c.finding().scenario.clone()) {
        assert!(
            drift.contains(&format!("../run/index.html#trial={scenario}.")),
            "{scenario}"
        );
    }

    let dir = out_dir().join("audit");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(baseline.join("audit/audit.json"), dir.join("audit.json")).unwrap();
    streamcheck::commands::audit::html::write_audit(&dir).unwrap();
    let audit: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("audit.json")).unwrap()).unwrap();
    let dom = dom(&dir.join("index.html"), "");
    for key in ["caught", "missed", "false_alarms"] {
        let shown = format!("data-count=\"{key}\"><b>{}</b>", audit[key]);
        assert!(dom.contains(&shown), "{shown}");
    }
    let rows = dom.matches("<tr class=\"row ").count();
    assert_eq!(rows, audit["scenarios"].as_array().unwrap().len());
    // Weakest first: a row with a miss or false alarm before any row without one.
    let first_clean = dom.find("<tr class=\"row passed\"").unwrap_or(dom.len());
    let last_weak = dom.rfind("<tr class=\"row failed\"").unwrap_or(0);
    assert!(last_weak < first_clean, "weak rows are not first");
    screenshot(&dir.join("index.html"), "", "audit.png");
}

/// In `mode: subsequence`, an entry with one wrong value names the closest frame, the path
/// and both values: on the terminal, in the trial's .md and on the page, where that frame
/// is open and the path marked.
#[test]
fn a_subsequence_entry_with_one_wrong_value_names_its_path_and_both_values() {
    let dir = out_dir().join("subsequence");
    let _ = std::fs::remove_dir_all(&dir);
    let out = run_fixture(&fixture_root(), &dir)
        .args(["--filter", "subsequence"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", common::printed(&out));
    let named = r#"$.result: expected "Hullo!", found "Hello!""#;
    let terminal = text(&out.stdout);
    assert!(
        terminal.contains("the closest is frame 2") && terminal.contains(named),
        "{terminal}"
    );
    let md = std::fs::read_to_string(dir.join("subsequence.command_fake-cli.sh.md")).unwrap();
    assert!(md.contains(named), "{md}");

    let opened = dom(
        &dir.join("index.html"),
        "#trial=subsequence.command_fake-cli.sh",
    );
    let frame =
        Regex::new(r#"<div class="ev stdout diverged" id="[^"]*" data-frame="2">"#).unwrap();
    let at = frame
        .find(&opened)
        .unwrap_or_else(|| panic!("frame 2 is not marked as diverged:\n{opened}"));
    let event = &opened[at.start()..];
    let event = &event[..event[1..]
        .find("<div class=\"ev ")
        .map_or(event.len(), |i| i + 1)];
    assert!(
        event.contains("<details open") && event.contains(r#"data-path="$.result""#),
        "frame 2 is not open with $.result marked:\n{event}"
    );
}

#[test]
fn what_to_fix_first_opens_the_page_with_an_example_and_its_rerun_command() {
    let dom = dom(&report().join("index.html"), "");
    let causes = dom.find("id=\"causes\"").expect("a causes section");
    let table = dom.find("id=\"runtable\"").unwrap();
    assert!(causes < table, "the causes come before the run table");
    let section = &dom[causes..table];
    assert!(
        section.contains("streamcheck run --filter") && section.contains("<li><b>1 trial</b>"),
        "{section}"
    );
    if let Some(protocol) = dom.find("id=\"protocol\"") {
        assert!(
            causes < protocol,
            "the protocol section comes after the causes"
        );
    }
}

#[test]
fn a_re_implementations_page_lists_its_parity_table_and_what_it_skipped_as_unsupported() {
    let dir = out_dir().join("reimpl");
    let _ = std::fs::remove_dir_all(&dir);
    let config = common::fixture_root("reimpl").join("streamcheck.toml");
    let out = streamcheck_at(&common::repo())
        .current_dir(config.parent().unwrap())
        .env("STREAMCHECK_CONFIG", &config)
        .args([
            "run",
            "--jobs",
            "2",
            "--filter",
            "basics/multiple-text-blocks",
        ])
        .args(["--filter", "basics/thinking-then-tool", "--report-dir"])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let page = dir.join("index.html");
    let dom = dom(&page, "");
    let counts = Regex::new(r#"data-count="skipped"><b>1</b> skipped \(1 unsupported\)"#).unwrap();
    assert!(counts.is_match(&dom), "{dom}");
    let unsupported = dom
        .find("id=\"unsupported\"")
        .expect("an unsupported section");
    assert!(dom[unsupported..].contains("basics/thinking-then-tool (mycli): needs tool:Bash"));
    let parity = dom.find("id=\"parity\"").expect("a parity section");
    let rows = &dom[parity..dom[parity..].find("</table>").unwrap() + parity];
    assert!(
        rows.contains("<code>system/init.fast_mode_state</code>")
            && rows.contains("reference prints / target does not"),
        "{rows}"
    );
    assert!(!dom.contains("id=\"causes\""), "a green run has no causes");
    screenshot(&page, "", "reimpl.png");
}
