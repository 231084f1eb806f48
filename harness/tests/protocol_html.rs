//! The reference as an HTML page (`protocol doc --html FILE`) in a real browser: headless
//! Chromium opens it with words in its address (`#q=`); only the sections and table rows
//! holding them stay shown, and with no words every row is shown.

mod common;

use common::repo;
use regex::Regex;
use std::path::{Path, PathBuf};
use streamcheck::protocol::{html, inventory, requests_render, Inventory};

/// Debian's chromium; the test fails (never passes silently) without it.
fn chromium() -> PathBuf {
    let found = std::env::var_os("CHROMIUM")
        .map(PathBuf::from)
        .into_iter()
        .chain(["/usr/bin/chromium", "/usr/bin/chromium-browser"].map(PathBuf::from))
        .find(|p| p.exists());
    found.unwrap_or_else(|| {
        panic!(
            "headless Chromium is needed to check the reference page in a browser and is not \
             installed: `apt-get update && apt-get install -y chromium` (as root; .ci/run does it)"
        )
    })
}

/// The DOM of `page#fragment` after its script ran.
fn dom(page: &Path, fragment: &str) -> String {
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
            "--virtual-time-budget=10000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("--dump-dom")
        .arg(format!("file://{}{fragment}", page.display()))
        .output()
        .unwrap();
    assert!(out.status.success(), "chromium failed: {out:?}");
    let dom = String::from_utf8(out.stdout).unwrap();
    assert!(
        dom.contains("data-ready=\"1\""),
        "the page's script did not run"
    );
    dom
}

/// The page `protocol doc --html` writes for Claude Code.
fn html_page(dir: &Path) -> PathBuf {
    let root = repo();
    let inv = Inventory::load(&root.join(inventory::file_of("claude-code"))).unwrap();
    let markdown = requests_render::page(&root, &inv).unwrap();
    let page = dir.join("reference.html");
    std::fs::write(&page, html::page(&markdown, "reference")).unwrap();
    page
}

/// The rows of the tables' bodies in the DOM: (shown, text).
fn rows(dom: &str) -> Vec<(bool, String)> {
    let body = Regex::new(r"(?s)<tbody>(.*?)</tbody>").unwrap();
    let row = Regex::new(r"(?s)<tr( hidden(=\x22\x22)?)?>(.*?)</tr>").unwrap();
    let tag = Regex::new(r"<[^>]*>").unwrap();
    let mut out = Vec::new();
    for b in body.captures_iter(dom) {
        for c in row.captures_iter(&b[1]) {
            out.push((c.get(1).is_none(), tag.replace_all(&c[3], "").to_string()));
        }
    }
    out
}

#[test]
fn the_search_box_keeps_only_the_rows_holding_the_words() {
    let dir = tempfile::tempdir().unwrap();
    let page = html_page(dir.path());
    let all = rows(&dom(&page, ""));
    assert!(all.len() > 1000, "only {} rows", all.len());
    assert!(all.iter().all(|(shown, _)| *shown), "no words: every row");

    let searched = dom(&page, "#q=sandbox_enabled");
    let found = rows(&searched);
    let shown: Vec<&String> = (found.iter()).filter(|(s, _)| *s).map(|(_, t)| t).collect();
    let holding = (found.iter())
        .filter(|(_, t)| t.contains("sandbox_enabled"))
        .count();
    assert!(holding > 0, "no row holds the word");
    assert!(
        shown.iter().all(|t| t.contains("sandbox_enabled")),
        "a row without the word is shown: {:?}",
        shown.iter().find(|t| !t.contains("sandbox_enabled"))
    );
    assert!(shown.len() < all.len() / 10, "{} rows shown", shown.len());
    let matches = Regex::new(r#"data-matches="(\d+)""#).unwrap();
    let n: usize = matches.captures(&searched).unwrap()[1].parse().unwrap();
    assert_eq!(n, holding, "the count beside the box");
    assert!(
        searched.contains("<h2 hidden") && searched.contains("<h2>"),
        "sections without the word are hidden, those with it are not"
    );
}
