//! The reference page ([`super::render::page`]) with its "Requests" part: the request inventory
//! (`targets/<dialect>/requests.yaml`) as tables, per request kind its key paths, header
//! names, `anthropic-beta` flags and query parameters, the tools sent with their
//! `input_schema` keywords, and what changed from release to release.

use super::error::ProtocolError;
use super::inventory::{Inventory, Releases};
use super::render::{changes, every, first_seen, last_seen, types};
use super::requests::{self, kind_of_list};
use semver::Version;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

/// The whole reference of `inv`'s dialect as `protocol doc` writes it: the frames
/// ([`super::render::page`]) and then the Requests part from the project at `root`.
pub fn page(root: &Path, inv: &Inventory) -> Result<String, ProtocolError> {
    let frames = super::render::page(root, inv)?;
    let sent = requests::load(root, &inv.dialect)?;
    Ok(frames + &part(sent.as_deref()))
}

/// The part, appended to the page; `None`: the dialect has no request inventory.
pub fn part(inv: Option<&Inventory>) -> String {
    let mut s = String::from("\n## Requests\n\n");
    let Some(inv) = inv else {
        s.push_str("No request inventory for this dialect (`streamcheck protocol build` writes one from runs whose stub journaled the requests).\n");
        return s;
    };
    let releases: Vec<String> = inv.releases.iter().map(|r| r.to_string()).collect();
    let _ = writeln!(
        s,
        "What the CLI sent to the model API (the stub) in the same runs, from `{}`: every request \
         kind (method and path; for `/v1/messages`, `(not streamed)` and `(no tools)` when it is \
         not a streamed turn carrying the tools), the key paths of its body with their JSON types, \
         its header names (no values), `anthropic-beta` flags and query parameters, and the tools \
         sent with the JSON-Schema keywords of each `input_schema` (keywords, not values; every MCP \
         tool is `{}`). Message text, tool inputs and structured-output schemas are the \
         scenario's data, shown as their type only. Built from {} releases: {}. First seen counts \
         only releases that ran a scenario sending the kind.\n",
        requests::file_of(&inv.dialect).display(),
        requests::MCP_TOOLS,
        releases.len(),
        releases.join(", ")
    );
    let _ = writeln!(s, "| request kind | keys | first seen |\n|---|---|---|");
    super::render::kind_rows(&mut s, inv, "request-");
    for (kind, k) in &inv.kinds {
        let running = inv.releases_running(kind);
        let _ = writeln!(
            s,
            "\n### request: `{kind}`\n\n| key | type | every request | first seen | observed values |\n|---|---|---|---|---|"
        );
        for (path, key) in &k.keys {
            let seen = key.seen();
            let last = last_seen(inv, &running, &seen)
                .map(|l| format!(" ({l})"))
                .unwrap_or_default();
            let _ = writeln!(
                s,
                "| `{path}` | {} | {} | {}{last} | {} |",
                types(inv, &running, key),
                match super::observe::parent(path) {
                    Some(_) => every(key),
                    None => "-".into(),
                },
                first_seen(inv, &running, &seen),
                super::render::values_cell(None, kind, path, key)
            );
        }
        for (title, list) in [
            ("header", requests::headers_list(kind)),
            ("anthropic-beta flag", requests::betas_list(kind)),
            ("query parameter", requests::query_list(kind)),
            ("tool", requests::tools_list(kind)),
        ] {
            let Some(names) = inv.lists.get(&list) else {
                continue;
            };
            let _ = writeln!(s, "\n| {title} | first seen |\n|---|---|");
            for (name, n) in names {
                let last = last_seen(inv, &running, &n.seen)
                    .map(|l| format!(" ({l})"))
                    .unwrap_or_default();
                let _ = writeln!(
                    s,
                    "| `{name}` | {}{last} |",
                    first_seen(inv, &running, &n.seen)
                );
            }
        }
    }
    let every_release: Releases = inv.releases.iter().cloned().collect();
    let _ = writeln!(
        s,
        "\n### Tool schemas\n\nPer tool sent, the JSON-Schema keywords its `input_schema` uses \
         (through its subschemas), on the releases built from.\n\n| tool | keywords |\n|---|---|"
    );
    for (list, words) in tool_lists(inv) {
        let shown: Vec<String> = (words.iter())
            .map(|(w, n)| match n.seen == every_release {
                true => format!("`{w}`"),
                false => format!("`{w}` ({})", first_seen(inv, &every_release, &n.seen)),
            })
            .collect();
        let _ = writeln!(s, "| `{list}` | {} |", shown.join(", "));
    }
    let _ = writeln!(
        s,
        "\n### Request changes by release\n\nPer release built from, what differs from the release \
         before it that ran a scenario sending the same kind (as for frames above): kinds and key \
         paths, then header names, `anthropic-beta` flags, query parameters, tools and tool schema \
         keywords.\n"
    );
    let names = name_changes(inv);
    for (release, mut lines) in changes(inv) {
        lines.retain(|l| !l.starts_with("not run here"));
        lines.extend(names.get(&release).into_iter().flatten().cloned());
        let previous = (inv.releases.iter()).rfind(|r| **r < release);
        let after = previous
            .map(|p| format!(" (after {p})"))
            .unwrap_or_default();
        let _ = writeln!(s, "#### requests: {release}{after}\n");
        if lines.is_empty() {
            let _ = writeln!(s, "No change.");
        }
        for l in lines {
            let _ = writeln!(s, "- {l}");
        }
        s.push('\n');
    }
    s
}

/// Each tool's keyword list by tool name.
fn tool_lists(
    inv: &Inventory,
) -> impl Iterator<Item = (&str, &BTreeMap<String, super::inventory::NameEntry>)> {
    (inv.lists.iter()).filter_map(|(list, names)| {
        let tool = list.strip_prefix("input_schema[")?.strip_suffix(']')?;
        Some((tool, names))
    })
}

/// Per release, the names added to and removed from each list since the release before it
/// that ran a scenario sending the list's kind (a tool's keywords: any kind, where the tool
/// was sent on both).
fn name_changes(inv: &Inventory) -> BTreeMap<Version, Vec<String>> {
    let any_kind: Releases = (inv.kinds.keys())
        .flat_map(|k| inv.releases_running(k))
        .collect();
    let mut out: BTreeMap<Version, Vec<String>> = BTreeMap::new();
    for (list, names) in &inv.lists {
        let running = match kind_of_list(list) {
            Some(kind) => inv.releases_running(kind),
            None => any_kind.clone(),
        };
        let what = describe(list);
        for (i, r) in inv.releases.iter().enumerate().skip(1) {
            if !running.contains(r) {
                continue;
            }
            let Some(before) = running.iter().rfind(|x| *x < r) else {
                continue;
            };
            let since = match *before == inv.releases[i - 1] {
                true => String::new(),
                false => format!(" (after {before}: not run in between)"),
            };
            // A tool's keywords change only where the tool was sent on both: a tool added
            // or removed is one line in its tools list.
            let sent = |x: &Version| names.values().any(|n| n.seen.contains(x));
            if kind_of_list(list).is_none() && !(sent(before) && sent(r)) {
                continue;
            }
            for (name, n) in names {
                let line = match (n.seen.contains(before), n.seen.contains(r)) {
                    (false, true) => format!("added {what} `{name}`{since}"),
                    (true, false) => format!("removed {what} `{name}`{since}"),
                    _ => continue,
                };
                out.entry(r.clone()).or_default().push(line);
            }
        }
    }
    out
}

/// A list in words: `header of POST /v1/messages`, `keyword of Bash's input_schema`.
fn describe(list: &str) -> String {
    let Some((what, rest)) = list.split_once('[') else {
        return list.to_string();
    };
    let of = rest.strip_suffix(']').unwrap_or(rest);
    match what {
        "headers" => format!("header of `{of}`:"),
        "anthropic-beta" => format!("anthropic-beta flag of `{of}`:"),
        "query" => format!("query parameter of `{of}`:"),
        "tools" => format!("tool of `{of}`:"),
        "input_schema" => format!("keyword of `{of}`'s input_schema:"),
        _ => list.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};
    use stub_api::{Answer, JournalEntry};

    fn sent(tools: Value) -> super::super::observe::Observed {
        let body = json!({"model": "m", "stream": true, "messages": [], "tools": tools});
        let entry = JournalEntry::new(
            0,
            "POST".into(),
            "/v1/messages".into(),
            None,
            Default::default(),
            body.to_string(),
            None,
            0,
            Answer::Step { step: 0, repeat: 0 },
            200,
        );
        requests::observe("s/a", [&entry])
    }

    #[test]
    fn a_removed_tool_is_one_line_and_a_kept_tools_new_keyword_is_named() {
        let schema = |extra: Option<&str>| {
            let mut s = json!({"type": "object", "properties": {"n": {"type": "number"}}});
            if let Some(word) = extra {
                s["properties"]["n"][word] = json!(1);
            }
            s
        };
        let mut inv = Inventory::new("claude-code");
        let old = json!([{"name": "Old", "input_schema": schema(None)}, {"name": "Kept", "input_schema": schema(None)}]);
        let new = json!([{"name": "Kept", "input_schema": schema(Some("minimum"))}]);
        inv.add(&Version::new(2, 1, 1), &sent(old));
        inv.add(&Version::new(2, 1, 2), &sent(new));
        let lines = &name_changes(&inv)[&Version::new(2, 1, 2)];
        assert_eq!(
            lines,
            &[
                "added keyword of `Kept`'s input_schema: `minimum`",
                "removed tool of `POST /v1/messages`: `Old`",
            ]
        );
        assert!(part(Some(&inv))
            .contains("| `Kept` | `minimum` (after 2.1.1, by 2.1.2), `properties`, `type` |"));
    }
}
