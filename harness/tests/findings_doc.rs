//! docs/findings.md is what `streamcheck findings --write` makes of targets/claude-code's
//! findings.yaml and the known entries marked `finding:`.

mod common;

use common::{repo, streamcheck_at, text};

#[test]
fn the_committed_findings_page_is_what_the_findings_generate() {
    let out = streamcheck_at(&repo())
        .args(["findings", "--check"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "run `streamcheck findings --write`:\n{}",
        text(&out.stderr)
    );
    let page = std::fs::read_to_string(repo().join("docs/findings.md")).unwrap();
    assert!(page.contains("| finding | releases |"), "{page}");
}
