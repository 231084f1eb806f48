//! What is generated from the protocol inventory stays what the inventory generates: the
//! committed reference (`docs/protocol/<dialect>.md`), and a release's JSON Schema accepts
//! the real frames the inventory keeps as examples.

mod common;

use common::{repo, streamcheck, text};
use streamcheck::protocol::sdk::Sdk;
use streamcheck::protocol::{inventory, render, requests, requests_render, schema, Inventory};

fn claude_code() -> (Inventory, render::Examples) {
    let root = repo();
    let inv = Inventory::load(&root.join(inventory::file_of("claude-code"))).unwrap();
    let examples =
        render::Examples::load(&root.join(render::examples_file("claude-code"))).unwrap();
    (inv, examples)
}

#[test]
fn the_committed_reference_is_what_the_inventory_generates() {
    let (inv, _) = claude_code();
    let path = repo().join(render::doc_file("claude-code"));
    let committed = std::fs::read_to_string(&path).unwrap();
    assert!(
        committed == requests_render::page(&repo(), &inv).unwrap(),
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
fn the_committed_request_inventory_is_written_as_it_reads_and_holds_the_turn() {
    let path = repo().join(requests::file_of("claude-code"));
    let committed = std::fs::read_to_string(&path).unwrap();
    let inv = Inventory::parse(&committed).unwrap();
    assert_eq!(
        requests::to_yaml(&inv),
        committed,
        "a hand edit would be lost on the next `protocol add`"
    );
    let turn = &inv.kinds["POST /v1/messages"];
    for key in ["model", "messages", "tools", "stream"] {
        assert!(turn.keys[key].every == turn.seen, "{key}");
    }
    assert!(inv.lists["tools[POST /v1/messages]"].contains_key("Bash"));
}

fn schema_of(release: &semver::Version) -> serde_json::Value {
    let (inv, _) = claude_code();
    let sdk_text = std::fs::read_to_string(repo().join(schema::sdk_file("claude-code"))).unwrap();
    let sdk_value: serde_json::Value = serde_json::from_str(&sdk_text).unwrap();
    let sdk = Sdk::new(&sdk_value).unwrap();
    schema::schema(&inv, release, Some(&sdk)).unwrap()
}

/// The kinds the SDK declares that the newest release built from did not print.
fn pin_schema() -> serde_json::Value {
    schema_of(&semver::Version::parse("2.1.330").unwrap())
}

#[test]
fn a_releases_schema_accepts_its_frames_and_tells_kinds_apart() {
    let (_, examples) = claude_code();
    let mut validators = std::collections::BTreeMap::new();
    let mut checked = 0;
    for (kind, (release, frame)) in &examples.0 {
        if kind.contains('[') {
            continue;
        }
        let validator = validators
            .entry(release.clone())
            .or_insert_with(|| jsonschema::validator_for(&schema_of(release)).unwrap());
        let errors: Vec<String> = validator
            .iter_errors(frame)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{kind} ({release}): {errors:?}");
        checked += 1;
    }
    assert!(checked > 50, "only {checked} examples");
    let schema = pin_schema();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let unknown = serde_json::json!({"type": "x", "request_id": "r"});
    assert!(!validator.is_valid(&unknown), "a frame of no kind");
    let init = &schema["$defs"]["system.init"];
    assert_eq!(init["properties"]["subtype"]["const"], "init");
    assert!(init["required"]
        .as_array()
        .unwrap()
        .contains(&serde_json::json!("session_id")));
    let mut without = examples.0["system/init"].1.clone();
    without.as_object_mut().unwrap().remove("session_id");
    assert!(
        !validator.is_valid(&without),
        "a required key missing fails"
    );
    let mut relabelled = examples.0["result/success"].1.clone();
    relabelled["subtype"] = serde_json::json!("nonsense");
    assert!(
        !validator.is_valid(&relabelled),
        "a result of no known subtype"
    );
    let content = &schema["$defs"]["assistant"]["properties"]["message"]["properties"]["content"];
    assert!(content["items"]["anyOf"]
        .as_array()
        .unwrap()
        .contains(&serde_json::json!({"$ref": "#/$defs/assistant.text"})));
}

/// Every frame of a saved run of the pin (`STREAMCHECK_PIN_RUN`: its run folder, e.g. one
/// written by `streamcheck run --report-dir DIR`) against the pin's schema: 0 failures.
#[test]
fn every_frame_of_a_saved_pin_run_validates() {
    let Some(dir) = std::env::var_os("STREAMCHECK_PIN_RUN") else {
        eprintln!("skipped: STREAMCHECK_PIN_RUN names no run folder of the pin (a run is ~80 MB, not committed)");
        return;
    };
    let validator = jsonschema::validator_for(&pin_schema()).unwrap();
    let saved = streamcheck::store::RunReader::open(std::path::Path::new(&dir))
        .saved()
        .unwrap();
    let results = streamcheck::store::RunReader::open(std::path::Path::new(&dir))
        .results()
        .unwrap();
    let other: std::collections::BTreeSet<&str> = (results.trials.iter())
        .filter(|t| streamcheck::runner::protocol::other_output(&t.command_line))
        .map(|t| t.key.scenario.as_str())
        .collect();
    let (mut frames, mut failures) = (0, Vec::new());
    for s in saved
        .iter()
        .filter(|s| !other.contains(s.key.scenario.as_str()))
    {
        for line in s.stdout.lines() {
            let Ok(frame) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            if !frame.is_object() {
                continue;
            }
            frames += 1;
            if !validator.is_valid(&frame) {
                failures.push(format!(
                    "{}: {}",
                    s.key.scenario,
                    line.chars().take(200).collect::<String>()
                ));
            }
        }
    }
    eprintln!("{frames} frames, {} failures", failures.len());
    assert!(frames > 1000, "only {frames} frames");
    assert!(
        failures.is_empty(),
        "{} of {frames}: {:#?}",
        failures.len(),
        &failures[..failures.len().min(10)]
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
    assert!(schema["$defs"]["result.success"]["properties"]["usage"].is_object());
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

/// Every `](#anchor)` link of the reference names a heading, slugged as GitHub does.
#[test]
fn every_anchor_link_of_the_reference_resolves() {
    let page = std::fs::read_to_string(repo().join(render::doc_file("claude-code"))).unwrap();
    let slug = |h: &str| -> String {
        (h.chars())
            .filter(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | ' '))
            .map(|c| if c == ' ' { '-' } else { c })
            .collect::<String>()
            .to_lowercase()
    };
    let mut anchors = std::collections::BTreeMap::<String, usize>::new();
    let mut known = std::collections::BTreeSet::new();
    let mut in_code = false;
    for line in page.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
        }
        if in_code || !line.starts_with('#') {
            continue;
        }
        let base = slug(line.trim_start_matches('#').trim());
        let n = anchors.entry(base.clone()).or_default();
        known.insert(match *n {
            0 => base.clone(),
            n => format!("{base}-{n}"),
        });
        *n += 1;
    }
    let links = regex::Regex::new(r"\]\(#([^)]*)\)").unwrap();
    let mut broken = Vec::new();
    let mut count = 0;
    for c in links.captures_iter(&page) {
        count += 1;
        if !known.contains(&c[1]) {
            broken.push(c[1].to_string());
        }
    }
    assert!(count > 100, "only {count} anchor links");
    assert!(broken.is_empty(), "{} broken: {broken:?}", broken.len());
}

/// The SDK's word in the reference: each key's literal values and doc comment from the
/// committed SDK schema, and for every kind it declares that no scenario printed, a row
/// saying so with how a scenario could show it (targets/claude-code/sdk/unobserved.yaml,
/// which names no other kind).
#[test]
fn the_reference_carries_the_sdks_word_and_every_unobserved_kind_says_how_to_show_it() {
    let (inv, _) = claude_code();
    let page = std::fs::read_to_string(repo().join(render::doc_file("claude-code"))).unwrap();
    let row = |key: &str, after: &str| -> String {
        let start = page.find(&format!("## `{after}`")).unwrap();
        (page[start..].lines())
            .find(|l| l.starts_with(&format!("| `{key}` |")))
            .unwrap_or_else(|| panic!("no row {key} under {after}"))
            .to_string()
    };
    assert!(row("subtype", "result/success").ends_with("| one of `success` |"));
    let sdk_text = std::fs::read_to_string(repo().join(schema::sdk_file("claude-code"))).unwrap();
    let sdk_value: serde_json::Value = serde_json::from_str(&sdk_text).unwrap();
    let sdk = Sdk::new(&sdk_value).unwrap();
    let said = sdk.said("control_request/can_use_tool", "request.mcp_server");
    let doc = said.doc.expect("the SDK documents request.mcp_server");
    let first_words: String = doc.chars().take(40).collect();
    assert!(
        row("request.mcp_server", "control_request/can_use_tool").contains(&first_words),
        "{first_words}"
    );
    let newest = inv.releases.last().unwrap();
    let c = streamcheck::protocol::sdk::compare(&inv, newest, &sdk_value).unwrap();
    assert!(!c.unprinted.is_empty());
    let how_text =
        std::fs::read_to_string(repo().join(render::unobserved_file("claude-code"))).unwrap();
    let how: std::collections::BTreeMap<String, String> = serde_yaml::from_str(&how_text).unwrap();
    let unprinted: std::collections::BTreeSet<&String> = c.unprinted.iter().collect();
    let explained: std::collections::BTreeSet<&String> = how.keys().collect();
    assert_eq!(
        unprinted, explained,
        "each kind declared and not observed says how a scenario could show it, and no other"
    );
    for kind in &c.unprinted {
        let line = format!("| `{kind}` (declared by the SDK, not observed) |");
        let found = page.lines().find(|l| l.starts_with(&line));
        assert!(found.is_some_and(|l| l.contains(&how[kind])), "{kind}");
    }
    assert!(
        page.contains("| `control_request/initialize` |"),
        "a request only the client sends"
    );
}

/// The committed inventory records an enum-like key's values, marks a free one open and
/// never records a value the scenario chose; the reference shows them beside the SDK's
/// literal union with what it declares and no run printed.
#[test]
fn the_reference_shows_observed_values_beside_the_sdks_literals() {
    use streamcheck::protocol::observe::Values;
    let (inv, _) = claude_code();
    let key = |kind: &str, path: &str| inv.kinds[kind].keys[path].values.clone();
    let Values::Tokens(stops) = key("assistant", "message.stop_reason") else {
        panic!("message.stop_reason has no values recorded");
    };
    assert!(stops.contains("end_turn"), "{stops:?}");
    assert_eq!(key("system/init", "session_id"), Values::Unrecorded);
    assert_eq!(key("assistant[tool_use]", "name"), Values::Unrecorded);
    assert_eq!(key("assistant[tool_use]", "input"), Values::Unrecorded);
    assert_eq!(key("system/init", "claude_code_version"), Values::Open);
    let page = std::fs::read_to_string(repo().join(render::doc_file("claude-code"))).unwrap();
    let row = |key: &str, under: &str| -> String {
        let start = page.find(&format!("## `{under}`")).unwrap();
        (page[start..].lines())
            .find(|l| l.starts_with(&format!("| `{key}` |")))
            .unwrap_or_else(|| panic!("no row {key} under {under}"))
            .to_string()
    };
    let stop = row("message.stop_reason", "assistant");
    assert!(
        stop.contains("| `end_turn` ")
            && stop.contains("the SDK's, never observed: ")
            && stop.contains("`max_tokens`")
            && stop.contains("| one of "),
        "{stop}"
    );
    assert!(row("claude_code_version", "system/init").contains("| open (more than 16"));
    // A shared object's row: the values every carrier printed, and the SDK's word.
    let start = page.find("### shared: usage").unwrap();
    let tier = (page[start..].lines())
        .find(|l| l.starts_with("| `usage.service_tier` |"))
        .unwrap();
    assert!(
        tier.contains("| `standard`; the SDK's, never observed: ") && tier.contains("| one of "),
        "{tier}"
    );
}
