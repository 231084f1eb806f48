//! What is generated from an inventory: the reference (`docs/protocol/<dialect>.md`,
//! every frame kind with its keys, types, the release each key was first seen in and an
//! example from a real run). The JSON Schema of a release is [`super::schema`].

use super::error::ProtocolError;
use super::inventory::{Inventory, KeyEntry, Releases};
use super::observe::{Values, MAX_VALUES};
use super::sdk::{Comparison, Sdk};
use crate::file_error::FileError;
use semver::Version;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

pub fn examples_file(dialect: &str) -> PathBuf {
    Path::new("targets")
        .join(dialect)
        .join("protocol-examples.jsonl")
}

/// A dialect's hand-written overview, put on top of its reference when it exists.
pub fn overview_file(dialect: &str) -> PathBuf {
    Path::new("targets")
        .join(dialect)
        .join("protocol-overview.md")
}

/// Per kind the SDK declares that no scenario makes the CLI print: the scenario that would
/// show it, or why none can (hand-written; `protocol doc` puts it beside the kind).
pub fn unobserved_file(dialect: &str) -> PathBuf {
    Path::new("targets")
        .join(dialect)
        .join("sdk")
        .join("unobserved.yaml")
}

/// The dialect's [`unobserved_file`], kind to how it could be shown; none where missing.
pub fn load_unobserved(
    root: &Path,
    dialect: &str,
) -> Result<BTreeMap<String, String>, ProtocolError> {
    let path = root.join(unobserved_file(dialect));
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(serde_yaml::from_str(&text).map_err(FileError::at(&path))?),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
        Err(e) => Err(FileError::new(path, e).into()),
    }
}

pub fn doc_file(dialect: &str) -> PathBuf {
    Path::new("docs/protocol").join(format!("{dialect}.md"))
}

/// Strings in an example are cut to this many characters, arrays to this many items.
const CUT_STRING: usize = 160;
const CUT_ARRAY: usize = 3;

/// One example per frame kind, from the newest release that printed it (one JSON line
/// each: `{"kind", "release", "frame"}`), shortened.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Examples(pub BTreeMap<String, (Version, Value)>);

impl Examples {
    /// A missing file: none.
    pub fn load(path: &Path) -> Result<Examples, ProtocolError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Examples::default()),
            Err(e) => return Err(FileError::new(path, e).into()),
        };
        let mut out = BTreeMap::new();
        for (i, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let (path, line_no) = (path.to_path_buf(), i + 1);
            let v: Value =
                serde_json::from_str(line).map_err(|source| ProtocolError::ExampleJson {
                    path: path.clone(),
                    line: line_no,
                    source,
                })?;
            let (Some(kind), Some(release), Some(frame)) =
                (v["kind"].as_str(), v["release"].as_str(), v.get("frame"))
            else {
                return Err(ProtocolError::ExampleShape {
                    path,
                    line: line_no,
                });
            };
            let release =
                Version::parse(release).map_err(|source| ProtocolError::ExampleRelease {
                    path,
                    line: line_no,
                    source,
                })?;
            out.insert(kind.to_string(), (release, frame.clone()));
        }
        Ok(Examples(out))
    }

    /// Takes the examples of `found` (per kind, with the release) where they are newer.
    pub fn update(&mut self, found: &BTreeMap<String, (Version, Value)>) {
        for (kind, (release, frame)) in found {
            let newer = self.0.get(kind).is_none_or(|(r, _)| release >= r);
            if newer {
                self.0
                    .insert(kind.clone(), (release.clone(), shorten(frame)));
            }
        }
    }

    pub fn to_jsonl(&self) -> String {
        let mut out = String::new();
        for (kind, (release, frame)) in &self.0 {
            let line = json!({"kind": kind, "release": release.to_string(), "frame": frame});
            out.push_str(&line.to_string());
            out.push('\n');
        }
        out
    }
}

fn shorten(v: &Value) -> Value {
    match v {
        Value::String(s) if s.chars().count() > CUT_STRING => {
            Value::String(s.chars().take(CUT_STRING).collect::<String>() + "…")
        }
        Value::Array(a) => Value::Array(a.iter().take(CUT_ARRAY).map(shorten).collect()),
        Value::Object(m) => Value::Object(m.iter().map(|(k, x)| (k.clone(), shorten(x))).collect()),
        other => other.clone(),
    }
}

/// Releases listed in words: `2.1.77, 2.1.91`.
fn listed(rs: &[&Version]) -> String {
    rs.iter()
        .map(|r| r.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Where a set of releases starts, in words, counting only `running` (the releases that
/// ran a scenario printing the kind): `2.1.74 or earlier` for the first of them, else
/// `after 2.1.290, by 2.1.309` (not bisected), each with the releases before it that did
/// not run the kind (`not run on 2.1.291`).
pub(super) fn first_seen(inv: &Inventory, running: &Releases, seen: &Releases) -> String {
    let Some(first) = seen.first() else {
        return "-".into();
    };
    let ran_before = running.iter().rfind(|r| *r < first);
    let unrun: Vec<&Version> = (inv.releases.iter())
        .filter(|r| *r < first && ran_before.is_none_or(|a| *r > a) && !running.contains(*r))
        .collect();
    let not_run = match unrun.is_empty() {
        true => String::new(),
        false => format!(" (not run on {})", listed(&unrun)),
    };
    match ran_before {
        None => format!("{first} or earlier{not_run}"),
        Some(a) => format!("after {a}, by {first}{not_run}"),
    }
}

/// Where a set of releases ends when it is not the newest release built from: `last seen
/// 2.1.290, gone by 2.1.309` where a later release ran the kind, else `last seen 2.1.290;
/// not run on 2.1.309, 2.1.330`.
pub(super) fn last_seen(inv: &Inventory, running: &Releases, seen: &Releases) -> Option<String> {
    let last = seen.last()?;
    if inv.releases.last() == Some(last) {
        return None;
    }
    let gone_by = running.iter().find(|r| *r > last);
    let unrun: Vec<&Version> = (inv.releases.iter())
        .filter(|r| *r > last && gone_by.is_none_or(|b| *r < b) && !running.contains(*r))
        .collect();
    Some(match (gone_by, unrun.is_empty()) {
        (Some(b), true) => format!("last seen {last}, gone by {b}"),
        (Some(b), false) => format!(
            "last seen {last}, gone by {b}; not run on {}",
            listed(&unrun)
        ),
        (None, _) => format!("last seen {last}; not run on {}", listed(&unrun)),
    })
}

/// What changed from one release built from to the next that ran the same kinds: per
/// release, kinds and keys added, removed and retyped.
pub fn changes(inv: &Inventory) -> Vec<(Version, Vec<String>)> {
    let mut out = Vec::new();
    let running: BTreeMap<&String, Releases> = (inv.kinds.keys())
        .map(|k| (k, inv.releases_running(k)))
        .collect();
    for (i, r) in inv.releases.iter().enumerate().skip(1) {
        let previous = &inv.releases[i - 1];
        let mut lines = Vec::new();
        let mut unrun = Vec::new();
        for (kind, k) in &inv.kinds {
            let ran = &running[kind];
            if !ran.contains(r) {
                // Judged at the next release that runs it, if any: said once, here, where
                // the release before printed it.
                if k.seen.contains(previous) {
                    unrun.push(format!("`{kind}`"));
                }
                continue;
            }
            let Some(before) = ran.iter().rfind(|x| *x < r) else {
                continue;
            };
            let since = match before == previous {
                true => String::new(),
                false => format!(" (after {before}: not run in between)"),
            };
            match (k.seen.contains(before), k.seen.contains(r)) {
                (false, true) => lines.push(format!("added kind `{kind}`{since}")),
                (true, false) => lines.push(format!("removed kind `{kind}`{since}")),
                (false, false) => {}
                (true, true) => {
                    for (path, key) in &k.keys {
                        let at = |x: &Version| -> Vec<&str> {
                            (key.types.iter())
                                .filter(|(_, d)| d.contains(x))
                                .map(|(t, _)| t.as_str())
                                .collect()
                        };
                        let (was, is) = (at(before), at(r));
                        let line = match (was.is_empty(), is.is_empty()) {
                            (true, false) => {
                                format!("added key `{kind}.{path}` ({})", is.join("|"))
                            }
                            (false, true) => {
                                format!("removed key `{kind}.{path}` ({})", was.join("|"))
                            }
                            (false, false) if was != is => format!(
                                "retyped key `{kind}.{path}`: {} -> {}",
                                was.join("|"),
                                is.join("|")
                            ),
                            _ => continue,
                        };
                        lines.push(line + &since);
                    }
                }
            }
        }
        if !unrun.is_empty() {
            lines.push(format!(
                "not judged here: {} (printed by {previous}; no scenario printing them ran on {r}); a change is listed at the next release that runs them",
                unrun.join(", ")
            ));
        }
        out.push((r.clone(), lines));
    }
    out
}

/// The reference page of `inv` as `protocol doc` writes it, from the project at `root`:
/// its examples, the hand-written overview (if the dialect has one) and the kinds the
/// SDK declares but the inventory never saw (if the dialect has an SDK schema).
pub fn page(root: &Path, inv: &Inventory) -> Result<String, ProtocolError> {
    let examples = Examples::load(&root.join(examples_file(&inv.dialect)))?;
    let overview_path = root.join(overview_file(&inv.dialect));
    let overview = match overview_path.exists() {
        true => std::fs::read_to_string(&overview_path).map_err(FileError::at(&overview_path))?,
        false => String::new(),
    };
    let sdk_path = root.join(super::schema::sdk_file(&inv.dialect));
    let (Some(newest), true) = (inv.releases.last(), sdk_path.exists()) else {
        return Ok(doc(inv, &examples, &overview, None));
    };
    let text = std::fs::read_to_string(&sdk_path).map_err(FileError::at(&sdk_path))?;
    let schema: Value = serde_json::from_str(&text).map_err(FileError::at(&sdk_path))?;
    let word = SdkWord {
        sdk: Sdk::new(&schema).map_err(FileError::at(&sdk_path))?,
        comparison: super::sdk::compare(inv, newest, &schema).map_err(FileError::at(&sdk_path))?,
        how: load_unobserved(root, &inv.dialect)?,
    };
    Ok(doc(inv, &examples, &overview, Some(&word)))
}

/// The SDK's word beside the inventory's: its declared types, how they compare with the
/// newest release built from, and per kind it declares that no scenario printed how one
/// could ([`unobserved_file`]).
pub struct SdkWord<'a> {
    pub sdk: Sdk<'a>,
    pub comparison: Comparison,
    pub how: BTreeMap<String, String>,
}

/// A doc comment's first sentence, on one line and safe in a table cell.
fn first_sentence(doc: &str) -> String {
    let flat = doc.split_whitespace().collect::<Vec<_>>().join(" ");
    // A sentence ends at `. ` before a capital, not after an abbreviation (`e.g. /voice`).
    let end = (flat.match_indices(". "))
        .map(|(i, _)| i + 1)
        .find(|&i| {
            let next_is_capital = flat[i + 1..].starts_with(|c: char| c.is_uppercase());
            next_is_capital && !flat[..i].ends_with("e.g.") && !flat[..i].ends_with("i.e.")
        })
        .unwrap_or(flat.len());
    let mut out: String = flat[..end].chars().take(DOC_CHARS).collect();
    if out.len() < flat[..end].len() {
        out.push('…');
    }
    out
}

/// A doc comment in the reference is cut to this many characters.
const DOC_CHARS: usize = 200;

/// The SDK column of a key: its literal values and the first sentence of its doc comment.
fn sdk_cell(word: Option<&SdkWord>, kind: &str, path: &str) -> String {
    let Some(w) = word else {
        return String::new();
    };
    let said = w.sdk.said(kind, path);
    let mut parts = Vec::new();
    if !said.literals.is_empty() {
        let list: Vec<String> = said.literals.iter().map(|l| format!("`{l}`")).collect();
        parts.push(format!("one of {}", list.join(", ").replace('|', "\\|")));
    }
    if let Some(d) = said
        .doc
        .as_deref()
        .map(first_sentence)
        .filter(|d| !d.is_empty())
    {
        parts.push(d);
    }
    parts.join("; ")
}

/// The observed values of a key beside the SDK's literals: the values, each one the SDK's
/// literal union lacks flagged (a protocol finding), then the literals never observed.
pub fn values_cell(word: Option<&SdkWord>, kind: &str, path: &str, key: &KeyEntry) -> String {
    let literals = word
        .map(|w| w.sdk.said(kind, path).literals)
        .unwrap_or_default();
    let code = |v: &[&String]| -> String {
        let list: Vec<String> = v.iter().map(|x| format!("`{x}`")).collect();
        list.join(" ")
    };
    let observed = match &key.values {
        Values::Unrecorded => return String::new(),
        Values::Open => return format!("open (more than {MAX_VALUES}, or not tokens)"),
        Values::Tokens(v) => v,
    };
    let mut out = code(&observed.iter().collect::<Vec<_>>());
    if literals.is_empty() {
        return out;
    }
    let undeclared: Vec<&String> = observed.iter().filter(|v| !literals.contains(v)).collect();
    let unobserved: Vec<&String> = literals.iter().filter(|l| !observed.contains(*l)).collect();
    if !undeclared.is_empty() {
        let _ = write!(out, "; **not in the SDK's union**: {}", code(&undeclared));
    }
    if !unobserved.is_empty() {
        let _ = write!(out, "; the SDK's, never observed: {}", code(&unobserved));
    }
    out
}

/// The reference: generated, never edited by hand. `sdk`: the SDK's word (each key's doc
/// comment and literals, the kinds it declares that no frame of the newest release built
/// from matches).
pub fn doc(inv: &Inventory, examples: &Examples, overview: &str, sdk: Option<&SdkWord>) -> String {
    let releases: Vec<String> = inv.releases.iter().map(|r| r.to_string()).collect();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# The {} stream-json protocol, as printed\n",
        inv.dialect
    );
    let _ = writeln!(
        s,
        "Generated by `streamcheck protocol doc` from `{}` (do not edit): every frame kind the \
         scenario catalogue made the CLI print, every key path in it with its JSON types, whether \
         every frame of the kind carried it, and the release it was first seen in. Built from {} \
         releases: {}. A key first seen in a release that is not the first one built from appeared \
         after the release before it (`after A, by B`: not bisected). Arrays are `[]`, keys that are \
         not identifiers (model or file names used as keys) `{{*}}`; a tool's input and structured \
         output are the scenario's data and shown as their type only. Observed values are an \
         enum-like key's distinct string values over every release (tokens only, at most \
         {MAX_VALUES}; `open` past that or for free text; never ids, text, names or other values \
         the scenario chose), beside the SDK's literal union where it declares one. Examples are real frames, \
         strings cut to {CUT_STRING} characters and arrays to {CUT_ARRAY} items.\n",
        super::inventory::file_of(&inv.dialect).display(),
        releases.len(),
        releases.join(", ")
    );
    if !overview.is_empty() {
        let _ = writeln!(s, "{}\n", overview.trim_end());
    }
    let _ = writeln!(s, "{}", shared_section(inv, sdk));
    let _ = writeln!(
        s,
        "## Frame kinds\n\n| kind | keys | first seen |\n|---|---|---|"
    );
    kind_rows(&mut s, inv, "");
    for (kind, k) in &inv.kinds {
        let running = inv.releases_running(kind);
        let _ = writeln!(s, "\n## `{kind}`\n");
        let (sdk_head, sdk_rule) = match sdk {
            Some(_) => (" the SDK says |", "---|"),
            None => ("", ""),
        };
        let _ = writeln!(
            s,
            "| key | type | every frame | first seen | observed values |{sdk_head}\n|---|---|---|---|---|{sdk_rule}"
        );
        let mut shown_shared = Vec::new();
        for (path, key) in &k.keys {
            if let Some(name) = SHARED.iter().find(|n| path.starts_with(&format!("{n}."))) {
                if !shown_shared.contains(name) {
                    shown_shared.push(name);
                    let _ = writeln!(
                        s,
                        "| `{name}.*` | see [`{name}`](#shared-{}) | | | |{}",
                        anchor(name),
                        if sdk.is_some() { " |" } else { "" }
                    );
                }
                continue;
            }
            let seen = key.seen();
            let last = last_seen(inv, &running, &seen)
                .map(|l| format!(" ({l})"))
                .unwrap_or_default();
            let _ = writeln!(
                s,
                "| `{path}` | {} | {} | {}{last} | {} |{}",
                types(inv, &running, key),
                match super::observe::parent(path) {
                    Some(_) => every(key),
                    None => "-".into(),
                },
                first_seen(inv, &running, &seen),
                values_cell(sdk, kind, path, key),
                sdk.map(|_| format!(" {} |", sdk_cell(sdk, kind, path)))
                    .unwrap_or_default()
            );
        }
        if let Some((release, frame)) = examples.0.get(kind) {
            let text = serde_json::to_string_pretty(frame).expect("JSON");
            let _ = writeln!(s, "\nExample ({release}):\n\n```json\n{text}\n```");
        }
    }
    s.push_str(&unobserved_section(inv, sdk));
    let _ = writeln!(s, "\n## Named lists\n");
    let all: Releases = inv.releases.iter().cloned().collect();
    for (list, names) in &inv.lists {
        let _ = writeln!(s, "### {list}\n\n| name | first seen |\n|---|---|");
        for (name, n) in names {
            let last = last_seen(inv, &all, &n.seen)
                .map(|l| format!(" ({l})"))
                .unwrap_or_default();
            let _ = writeln!(s, "| `{name}` | {}{last} |", first_seen(inv, &all, &n.seen));
        }
        s.push('\n');
    }
    let _ = writeln!(
        s,
        "## Changes by release\n\nPer release built from, what differs from the release before it \
         that ran a scenario printing the same kind (a kind no scenario printed on a release is not \
         judged there). A change listed at B after A happened in one of the published releases \
         after A up to B: nothing between them was run. To narrow it, run a scenario that prints \
         the kind on releases in between (`streamcheck run --filter SCENARIO --target \
         {d}@VERSION`), or write the changed key into that scenario's expectation as a version \
         block from B and let `streamcheck bisect --filter SCENARIO --from A --to B` search the \
         published releases between for the first that prints it.\n",
        d = inv.dialect
    );
    for (release, lines) in changes(inv) {
        let previous = (inv.releases.iter()).rfind(|r| **r < release);
        let after = previous
            .map(|p| format!(" (after {p})"))
            .unwrap_or_default();
        let _ = writeln!(s, "### {release}{after}\n");
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

/// The kinds the SDK declares that no scenario made the newest release print, each with
/// the SDK's doc comment and how a scenario could show it; the control requests it
/// declares that the CLI never sent.
fn unobserved_section(inv: &Inventory, sdk: Option<&SdkWord>) -> String {
    let mut s = format!(
        "\n## Declared by the SDK, not observed\n\nWhat the Agent SDK's `StdoutMessage` \
         (targets/{}/sdk/) declares that no scenario of the catalogue made the newest release built \
         from print: their keys are the SDK's word only.\n\n",
        inv.dialect
    );
    let Some(w) = sdk else {
        s.push_str("No SDK schema for this dialect.\n");
        return s;
    };
    let doc = |kind: &str| {
        let first = kind.split(", ").next().unwrap_or(kind);
        w.sdk
            .kind_doc(first)
            .map(|d| first_sentence(&d))
            .unwrap_or_default()
    };
    let _ = writeln!(
        s,
        "| kind | the SDK says | what would show it |\n|---|---|---|"
    );
    for kind in &w.comparison.unprinted {
        let how = w.how.get(kind).map_or("", String::as_str);
        let _ = writeln!(
            s,
            "| `{kind}` (declared by the SDK, not observed) | {} | {} |",
            doc(kind),
            how.replace('|', "\\|")
        );
    }
    let _ = writeln!(
        s,
        "\nControl requests the SDK declares that the CLI never sent (the client sends most of \
         them; each one's doc comment says which side does):\n\n| request | the SDK says |\n|---|---|"
    );
    for kind in &w.comparison.unsent_requests {
        let _ = writeln!(s, "| `{kind}` | {} |", doc(kind));
    }
    s
}

/// A heading's anchor as GitHub makes it: lowercase, spaces to `-`, other punctuation
/// (but `_` and `-`) dropped.
pub(super) fn anchor(heading: &str) -> String {
    (heading.chars())
        .filter(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect::<String>()
        .to_lowercase()
}

/// Objects many kinds carry alike, defined once in "Shared objects" (from the kinds with
/// the most keys under them) and referred to from each kind.
const SHARED: [&str; 2] = ["usage", "modelUsage"];

fn shared_section(inv: &Inventory, sdk: Option<&SdkWord>) -> String {
    let mut s = String::from(
        "## Shared objects\n\nKeys under these objects, as the kinds carrying them print them (their \
         types and first seen as in that kind); each kind's table refers here.\n",
    );
    for name in SHARED {
        let prefix = format!("{name}.");
        let most = (inv.kinds.iter())
            .max_by_key(|(_, k)| k.keys.keys().filter(|p| p.starts_with(&prefix)).count());
        let Some((kind, k)) = most.filter(|(_, k)| k.keys.keys().any(|p| p.starts_with(&prefix)))
        else {
            continue;
        };
        let running = inv.releases_running(kind);
        let carriers: Vec<&String> = (inv.kinds.iter())
            .filter(|(_, k)| k.keys.keys().any(|p| p.starts_with(&prefix)))
            .map(|(n, _)| n)
            .collect();
        let named: Vec<String> = carriers.iter().map(|n| format!("`{n}`")).collect();
        let (sdk_head, sdk_rule) = match sdk {
            Some(_) => (" the SDK says |", "---|"),
            None => ("", ""),
        };
        let _ = writeln!(
            s,
            "\n### shared: {name}\n\nIn {}; keys as `{kind}` prints them.\n\n| key | type | every frame | first seen | observed values |{sdk_head}\n|---|---|---|---|---|{sdk_rule}",
            named.join(", ")
        );
        for (path, key) in k.keys.iter().filter(|(p, _)| p.starts_with(&prefix)) {
            let seen = key.seen();
            // The SDK's word from the first carrier it declares the key in.
            let declared = (carriers.iter())
                .find(|c| !sdk_cell(sdk, c, path).is_empty())
                .map_or(kind.as_str(), |c| c.as_str());
            let sdk_col = match sdk {
                Some(_) => format!(" {} |", sdk_cell(sdk, declared, path)),
                None => String::new(),
            };
            // Values as every carrier printed them (inside a tool result none are recorded).
            let mut all = key.clone();
            for c in &carriers {
                if let Some(theirs) = inv.kinds[*c].keys.get(path) {
                    all.values.merge(&theirs.values);
                }
            }
            let _ = writeln!(
                s,
                "| `{path}` | {} | {} | {} | {} |{sdk_col}",
                types(inv, &running, key),
                match super::observe::parent(path) {
                    Some(_) => every(key),
                    None => "-".into(),
                },
                first_seen(inv, &running, &seen),
                values_cell(sdk, declared, path, &all)
            );
        }
    }
    s
}

pub(super) fn types(inv: &Inventory, running: &Releases, key: &KeyEntry) -> String {
    let seen = key.seen();
    let parts: Vec<String> = (key.types.iter())
        .map(|(t, during)| match during == &seen {
            true => t.clone(),
            false => format!("{t} (from {})", first_seen(inv, running, during)),
        })
        .collect();
    parts.join(" \\| ")
}

pub(super) fn every(key: &KeyEntry) -> String {
    let seen = key.seen();
    if key.every.is_empty() {
        "no".into()
    } else if key.every == seen {
        "yes".into()
    } else {
        let list: Vec<String> = key.every.iter().map(|r| r.to_string()).collect();
        format!("on {}", list.join(", "))
    }
}

/// One row per kind of `inv`: a link to its section (anchors prefixed `prefix`), its key
/// count and where it was first and last seen.
pub(super) fn kind_rows(s: &mut String, inv: &Inventory, prefix: &str) {
    for (kind, k) in &inv.kinds {
        let running = inv.releases_running(kind);
        let last = last_seen(inv, &running, &k.seen)
            .map(|l| format!(" ({l})"))
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "| [`{kind}`](#{prefix}{}) | {} | {}{last} |",
            anchor(kind),
            k.keys.len(),
            first_seen(inv, &running, &k.seen)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Observed;

    #[test]
    fn a_release_lists_only_its_changes_and_a_kind_not_run_is_named_once() {
        let mut inv = Inventory::new("claude-code");
        let (r1, r2, r3) = (
            Version::new(2, 1, 1),
            Version::new(2, 1, 2),
            Version::new(2, 1, 3),
        );
        let old = json!({"type": "old_kind"});
        let init = json!({"type": "system", "subtype": "init"});
        let init_new = json!({"type": "system", "subtype": "init", "sandbox_enabled": true});
        inv.add(&r1, &Observed::of("a/only-early", [&old], &[]));
        for (r, frame) in [(&r1, &init), (&r2, &init), (&r3, &init_new)] {
            inv.add(r, &Observed::of("a/every", [frame], &[]));
        }
        let changes = changes(&inv);
        assert_eq!(
            changes[0],
            (
                r2.clone(),
                vec!["not judged here: `old_kind` (printed by 2.1.1; no scenario printing them ran on 2.1.2); a change is listed at the next release that runs them".to_string()]
            )
        );
        assert_eq!(
            changes[1],
            (
                r3.clone(),
                vec!["added key `system/init.sandbox_enabled` (bool)".to_string()]
            ),
            "a kind not run since an earlier release is not named again"
        );
    }

    #[test]
    fn a_keys_observed_values_stand_beside_the_sdks_literals_with_both_differences() {
        let schema = json!({"anyOf": [{"$ref": "#/definitions/Req"}], "definitions": {
            "Req": {"type": "object", "properties": {"type": {"const": "control_request"},
                "request": {"type": "object", "properties": {"subtype": {"const": "can_use_tool"},
                    "mode": {"enum": ["a", "b", "c"]}, "tool_name": {"type": "string"}}}}}}});
        let frame = |mode: &str| json!({"type": "control_request", "request": {"subtype": "can_use_tool", "mode": mode, "tool_name": "T"}});
        let mut inv = Inventory::new("claude-code");
        inv.add(
            &Version::new(2, 1, 1),
            &Observed::of("s", &[frame("a"), frame("z")], &[]),
        );
        let word = SdkWord {
            sdk: Sdk::new(&schema).unwrap(),
            comparison: Comparison::default(),
            how: BTreeMap::new(),
        };
        let kind = "control_request/can_use_tool";
        let keys = &inv.kinds[kind].keys;
        assert_eq!(
            values_cell(Some(&word), kind, "request.mode", &keys["request.mode"]),
            "`a` `z`; **not in the SDK's union**: `z`; the SDK's, never observed: `b` `c`"
        );
        assert_eq!(
            values_cell(None, kind, "request.mode", &keys["request.mode"]),
            "`a` `z`"
        );
        assert_eq!(
            values_cell(
                Some(&word),
                kind,
                "request.tool_name",
                &keys["request.tool_name"]
            ),
            ""
        );
        let page = doc(&inv, &Examples::default(), "", Some(&word));
        let row = (page.lines())
            .find(|l| l.starts_with("| `request.mode` |"))
            .unwrap();
        assert!(
            row.ends_with("| `a` `z`; **not in the SDK's union**: `z`; the SDK's, never observed: `b` `c` | one of `a`, `b`, `c` |"),
            "{row}"
        );
    }
}
