//! What is generated from the protocol inventory stays what the inventory generates: the
//! committed reference (`docs/protocol/<dialect>.md`), and a release's JSON Schema accepts
//! the real frames the inventory keeps as examples.

mod common;

use common::{repo, streamcheck, text};
use streamcheck::protocol::{inventory, render, Inventory};

fn claude_code() -> (Inventory, render::Examples) {
    let root = repo();
    let inv = Inventory::load(&root.join(inventory::file_of("claude-code"))).unwrap();
    let examples =
        render::Examples::load(&root.join(render::examples_file("claude-code"))).unwrap();
    (inv, examples)
}

#[test]
fn the_committed_reference_is_what_the_inventory_generates() {
    let (inv, examples) = claude_code();
    let path = repo().join(render::doc_file("claude-code"));
    let committed = std::fs::read_to_string(&path).unwrap();
    assert!(
        committed == render::doc(&inv, &examples),
        "{} is not what `streamcheck protocol doc` writes from the inventory: run it",
        path.display()
    );
    assert!(committed.contains("## `system/init`") && committed.contains("Example ("));
}

#[test]
fn the_committed_inventory_is_written_as_it_reads() {
    let path = repo().join(inventory::file_of("claude-code"));
    let committed = std::fs::read_to_string(&path).unwrap();
    let inv = Inventory::parse(&committed).unwrap();
    assert_eq!(
        inv.to_yaml(),
        committed,
        "a hand edit would be lost on the next `protocol add`"
    );
}

#[test]
fn a_releases_schema_accepts_the_frames_that_release_printed() {
    let (inv, examples) = claude_code();
    let newest = inv.releases.last().unwrap().clone();
    let schema = render::schema(&inv, &newest).unwrap();
    let mut checked = 0;
    for (kind, (release, frame)) in &examples.0 {
        if *release != newest {
            continue;
        }
        let mut one = schema.clone();
        one["$ref"] = serde_json::json!(render::def_ref(kind));
        one.as_object_mut().unwrap().remove("anyOf");
        let validator = jsonschema::validator_for(&one).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(frame)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{kind} ({release}): {errors:?}");
        checked += 1;
    }
    assert!(checked > 50, "only {checked} examples from {newest}");
    let init = &schema["$defs"]["system/init"];
    assert!(init["required"]
        .as_array()
        .unwrap()
        .contains(&serde_json::json!("session_id")));
    let mut without = examples.0["system/init"].1.clone();
    without.as_object_mut().unwrap().remove("session_id");
    let mut one = schema.clone();
    one["$ref"] = serde_json::json!("#/$defs/system~1init");
    assert!(
        !jsonschema::validator_for(&one).unwrap().is_valid(&without),
        "a required key missing fails"
    );
}

#[test]
fn schema_writes_a_release_and_refuses_one_before_the_inventory() {
    let out = streamcheck()
        .current_dir(repo())
        .args(["protocol", "schema", "--release", "2.1.330"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let schema: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(schema["$defs"]["result/success"]["properties"]["usage"].is_object());
    let out = streamcheck()
        .current_dir(repo())
        .args(["protocol", "schema", "--release", "1.0.0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let (inv, _) = claude_code();
    let first = format!("inventory starts at {}", inv.releases[0]);
    assert!(text(&out.stderr).contains(&first), "{}", text(&out.stderr));
}
