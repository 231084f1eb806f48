//! caliban's and Qwen Code's protocol inventories (built from a catalogue run of each, see
//! the README's "Protocol inventory") and what is generated from them: the committed
//! reference (`docs/protocol/<dialect>.md`) stays what the inventory generates, the file
//! reads back as written, and its release's JSON Schema accepts the real frames kept as
//! examples. The catalogue's trials of both are checked against these inventories in
//! `conformance.rs` (strict).

mod common;

use common::repo;
use streamcheck::protocol::{inventory, render, requests_render, schema, Inventory};

const DIALECTS: [&str; 2] = ["caliban", "qwen-code"];

fn load(dialect: &str) -> (Inventory, render::Examples) {
    let root = repo();
    let inv = Inventory::load(&root.join(inventory::file_of(dialect))).unwrap();
    let examples = render::Examples::load(&root.join(render::examples_file(dialect))).unwrap();
    (inv, examples)
}

#[test]
fn each_committed_reference_is_what_its_inventory_generates() {
    for dialect in DIALECTS {
        let (inv, _) = load(dialect);
        assert_eq!(inv.dialect, dialect);
        let path = repo().join(render::doc_file(dialect));
        let committed = std::fs::read_to_string(&path).unwrap();
        assert!(
            committed == requests_render::page(&repo(), &inv).unwrap(),
            "{} is not what `streamcheck protocol doc --dialect {dialect}` writes from the inventory: run it",
            path.display()
        );
        assert!(committed.contains("## `system/init`"), "{dialect}");
        let yaml = std::fs::read_to_string(repo().join(inventory::file_of(dialect))).unwrap();
        assert_eq!(
            Inventory::parse(&yaml).unwrap().to_yaml(),
            yaml,
            "{dialect}: a hand edit would be lost on the next `protocol add`"
        );
    }
}

#[test]
fn each_schema_accepts_the_frames_its_release_printed() {
    for dialect in DIALECTS {
        let (inv, examples) = load(dialect);
        let release = inv.releases.last().unwrap().clone();
        let schema = schema::schema(&inv, &release, None).unwrap();
        let mut checked = 0;
        for (kind, (_, frame)) in &examples.0 {
            let mut one = schema.clone();
            one["$ref"] = serde_json::json!(schema::def_ref(kind));
            one.as_object_mut().unwrap().remove("anyOf");
            let validator = jsonschema::validator_for(&one).unwrap();
            let errors: Vec<String> = validator
                .iter_errors(frame)
                .map(|e| e.to_string())
                .collect();
            assert!(errors.is_empty(), "{dialect} {kind}: {errors:?}");
            checked += 1;
        }
        assert!(checked >= 10, "{dialect}: only {checked} examples");
    }
}
