//! The inventory: per frame kind, every key path with its JSON types and the releases it
//! was seen on (and on which every frame of the kind carried it), and the names of the
//! named lists per release. Kept in `targets/<dialect>/protocol.yaml`; sets of releases
//! are written as spans over the releases it was built from (`2.1.250..` from 2.1.250
//! on, `2.1.74..2.1.290`), a span every release holds is left out.
//!
//! It also keeps what was looked at (format 2): per trial (scenario or `scenario[case]`)
//! the releases it ran on, and per kind the scenarios that printed it. A key absent from
//! a release says something only where that release ran a scenario printing its kind
//! ([`Inventory::ran_kind`]); elsewhere the kind was not run there.

use super::error::{BadVersion, InventoryError, ProtocolError};
use super::observe::{Observed, Values};
use crate::file_error::FileError;
use crate::frame::JSON_TYPES;
use crate::trial_id::ScenarioId;
use semver::Version;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub type Releases = BTreeSet<Version>;

/// The file of a dialect's inventory, relative to the project.
pub fn file_of(dialect: &str) -> PathBuf {
    Path::new("targets").join(dialect).join("protocol.yaml")
}

/// An inventory as read, shared by the trials checked against it, or why it did not load.
pub type Loaded = Result<Option<Arc<Inventory>>, Arc<ProtocolError>>;

/// A dialect's inventory in the project at `root` (`None`: it has none).
pub fn load(root: &Path, dialect: &str) -> Loaded {
    load_at(root.join(file_of(dialect)))
}

/// The inventory in the file at `path` (`None`: there is none).
pub fn load_at(path: PathBuf) -> Loaded {
    match path.exists() {
        false => Ok(None),
        true => Inventory::load(&path)
            .map(|i| Some(Arc::new(i)))
            .map_err(Arc::new),
    }
}

/// The file format this build writes: 2 added what was looked at (`ran`, `by`), 3 the
/// values of enum-like keys (`values`). An older file loads with no values recorded.
pub const FORMAT_VERSION: u32 = 3;

#[derive(Debug, Clone, PartialEq)]
pub struct Inventory {
    pub dialect: String,
    /// The releases it was built from, oldest first.
    pub releases: Vec<Version>,
    /// Per trial (`scenario` or `scenario[case]`) that ran with stream-json output, the
    /// releases it ran on.
    pub ran: BTreeMap<ScenarioId, Releases>,
    /// Releases built from whose trials are not known (added from a format 1 file): no
    /// interval starts or ends there and nothing is judged gone against them.
    pub unknown_coverage: Releases,
    pub kinds: BTreeMap<String, KindEntry>,
    /// Per list, per name.
    pub lists: BTreeMap<String, BTreeMap<String, NameEntry>>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct KindEntry {
    pub seen: Releases,
    /// The scenarios (without their case) that printed it on some release.
    pub by: BTreeSet<String>,
    pub keys: BTreeMap<String, KeyEntry>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct KeyEntry {
    /// Per JSON type, the releases it had that type on.
    pub types: BTreeMap<String, Releases>,
    /// The releases on which every frame of the kind (every object the key sits in)
    /// carried it.
    pub every: Releases,
    /// Its distinct values over every release, where it is enum-like.
    pub values: Values,
}

impl KeyEntry {
    pub fn seen(&self) -> Releases {
        self.types.values().flatten().cloned().collect()
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct NameEntry {
    pub seen: Releases,
    /// Scenarios that printed the name on every release they ran on where it was seen:
    /// a run of one of them without it shows the name gone. The file keeps the first.
    pub witnesses: BTreeSet<String>,
}

impl Inventory {
    pub fn new(dialect: &str) -> Inventory {
        Inventory {
            dialect: dialect.to_string(),
            releases: Vec::new(),
            ran: BTreeMap::new(),
            unknown_coverage: Releases::new(),
            kinds: BTreeMap::new(),
            lists: BTreeMap::new(),
        }
    }

    /// Adds what one release printed (the trials of one or more runs on it, merged).
    /// A release already in the inventory keeps what it had and widens it; "every frame
    /// carried it" holds only while every run says so.
    pub fn add(&mut self, release: &Version, o: &Observed) {
        let existed = self.releases.contains(release);
        if !existed {
            self.releases.push(release.clone());
            self.releases.sort();
        }
        for trial in &o.ran {
            (self.ran.entry(trial.clone()).or_default()).insert(release.clone());
        }
        for (kind, count) in &o.kinds {
            let entry = self.kinds.entry(kind.clone()).or_default();
            let kind_before = entry.seen.contains(release);
            entry.seen.insert(release.clone());
            entry.by.extend(count.by.iter().cloned());
            for (path, k) in &count.keys {
                let key = entry.keys.entry(path.clone()).or_default();
                key.values.merge(&k.values);
                for t in &k.types {
                    (key.types.entry(t.to_string()).or_default()).insert(release.clone());
                }
                // Frames of the kind seen on this release before without it, or one here
                // without it: not every frame carries it.
                let every_here = count.every(path) == Some(true);
                if every_here && (!kind_before || key.every.contains(release)) {
                    key.every.insert(release.clone());
                } else {
                    key.every.remove(release);
                }
            }
            for (path, key) in &mut entry.keys {
                if count.keys.contains_key(path) {
                    continue;
                }
                // Objects it would sit in came here without it.
                if count.every(path) == Some(false) {
                    key.every.remove(release);
                }
            }
        }
        for (list, by) in &o.lists {
            let names = self.lists.entry(list.clone()).or_default();
            let printed: BTreeSet<&String> = by.values().flatten().collect();
            for n in &printed {
                names.entry((*n).clone()).or_default();
            }
            for (name, entry) in names.iter_mut() {
                let printers: BTreeSet<String> = (by.iter())
                    .filter(|(_, ns)| ns.contains(name))
                    .map(|(s, _)| s.clone())
                    .collect();
                let lackers: BTreeSet<&String> = (by.iter())
                    .filter(|(_, ns)| !ns.contains(name))
                    .map(|(s, _)| s)
                    .collect();
                entry.witnesses.retain(|w| !lackers.contains(w));
                if printers.is_empty() {
                    continue;
                }
                entry.seen.insert(release.clone());
                if entry.witnesses.is_empty() {
                    entry.witnesses = printers;
                }
            }
        }
    }

    /// The releases the inventory answers for `release` with: itself, or the two it lies
    /// between (a change there is not bisected: either side's word holds), or the newest
    /// for a later one. `None` before the oldest.
    pub fn view(&self, release: &Version) -> Option<Vec<&Version>> {
        if self.releases.contains(release) {
            return self
                .releases
                .iter()
                .find(|r| *r == release)
                .map(|r| vec![r]);
        }
        let below = self.releases.iter().rev().find(|r| *r < release)?;
        let above = self.releases.iter().find(|r| *r > release);
        Some(std::iter::once(below).chain(above).collect())
    }

    /// The scenarios (without their case) that ran on `release`; `None`: not known.
    pub fn scenarios_on(&self, release: &Version) -> Option<BTreeSet<&str>> {
        if self.unknown_coverage.contains(release) {
            return None;
        }
        Some(
            (self.ran.iter())
                .filter(|(_, on)| on.contains(release))
                .map(|(t, _)| ScenarioId::file_of(t))
                .collect(),
        )
    }

    /// Whether `release` ran a scenario that prints `kind` (on some release); `None`: what
    /// ran there is not known.
    pub fn ran_kind(&self, kind: &str, release: &Version) -> Option<bool> {
        let on = self.scenarios_on(release)?;
        let by = &self.kinds.get(kind)?.by;
        Some(by.iter().any(|s| on.contains(s.as_str())))
    }

    /// Whether `scenario` (a trial id or a scenario) printed `kind` and ran on `release`.
    pub fn printed_by(&self, kind: &str, scenario: &str, release: &Version) -> bool {
        let scenario = ScenarioId::file_of(scenario);
        let printer = (self.kinds.get(kind)).is_some_and(|k| k.by.contains(scenario));
        printer && (self.scenarios_on(release)).is_some_and(|on| on.contains(scenario))
    }

    /// The releases built from that ran a scenario printing `kind`.
    pub fn releases_running(&self, kind: &str) -> Releases {
        (self.releases.iter())
            .filter(|r| self.ran_kind(kind, r) == Some(true))
            .cloned()
            .collect()
    }

    pub fn key_paths(&self) -> usize {
        self.kinds.values().map(|k| k.keys.len()).sum()
    }

    // ---- the file ----

    pub fn load(path: &Path) -> Result<Inventory, ProtocolError> {
        let text = std::fs::read_to_string(path).map_err(FileError::at(path))?;
        Ok(Inventory::parse(&text).map_err(FileError::at(path))?)
    }

    pub fn parse(text: &str) -> Result<Inventory, InventoryError> {
        let file: File = serde_yaml::from_str(text)?;
        let at = |at: String, source| InventoryError::Release { at, source };
        let version = |r: &String| {
            Version::parse(r).map_err(|source| BadVersion {
                text: r.clone(),
                source,
            })
        };
        let mut releases = Vec::new();
        for r in &file.releases {
            releases.push(version(r).map_err(|e| at("releases".into(), e))?);
        }
        releases.sort();
        let spans = Spans(&releases);
        let format = file.format_version.unwrap_or(1);
        if format > FORMAT_VERSION {
            return Err(InventoryError::Format {
                found: format,
                reads: FORMAT_VERSION,
            });
        }
        let unknown_coverage = match format {
            1 => releases.iter().cloned().collect(),
            _ => (file.unknown_coverage.iter())
                .map(|r| version(r).map_err(|e| at("unknown_coverage".into(), e)))
                .collect::<Result<_, _>>()?,
        };
        let mut ran = BTreeMap::new();
        for (trial, on) in file.ran {
            let on = spans
                .parse(Some(&on))
                .map_err(|e| at(format!("ran.{trial}"), e))?;
            ran.insert(trial, on);
        }
        let all: BTreeSet<String> = ran
            .keys()
            .map(|t| ScenarioId::file_of(t).to_string())
            .collect();
        let mut inv = Inventory {
            dialect: file.dialect,
            releases: releases.clone(),
            ran,
            unknown_coverage,
            kinds: BTreeMap::new(),
            lists: BTreeMap::new(),
        };
        for (kind, k) in file.kinds {
            let seen = (spans.parse(k.seen.as_deref()))
                .map_err(|e| at(format!("kinds.{kind}.seen"), e))?;
            let by = match (k.by, k.by_all_but) {
                (Some(by), None) => by.into_iter().collect(),
                (None, Some(not)) => all.iter().filter(|s| !not.contains(s)).cloned().collect(),
                (None, None) => BTreeSet::new(),
                (Some(_), Some(_)) => return Err(InventoryError::ByTwice { kind }),
            };
            let mut entry = KindEntry {
                seen: seen.clone(),
                by,
                keys: BTreeMap::new(),
            };
            for (path, key) in k.keys {
                let here = |e| at(format!("kinds.{kind}.keys.{path}"), e);
                let key_seen = match &key.seen {
                    Some(s) => spans.parse(Some(s)).map_err(here)?,
                    None => seen.clone(),
                };
                let mut types = BTreeMap::new();
                for t in key.r#type.split('|').map(str::trim) {
                    if !JSON_TYPES.contains(&t) {
                        return Err(InventoryError::NotAJsonType {
                            kind,
                            path,
                            found: t.to_string(),
                        });
                    }
                    let during = match key.types.get(t) {
                        Some(s) => spans.parse(Some(s)).map_err(here)?,
                        None => key_seen.clone(),
                    };
                    types.insert(t.to_string(), during);
                }
                let every = match key.every {
                    None | Some(Every::All(false)) => Releases::new(),
                    Some(Every::All(true)) => key_seen.clone(),
                    Some(Every::Span(s)) => spans.parse(Some(&s)).map_err(here)?,
                };
                let values = match key.values {
                    None => Values::Unrecorded,
                    Some(FileValues::List(v)) => Values::Tokens(v.into_iter().collect()),
                    Some(FileValues::Open(o)) if o == "open" => Values::Open,
                    Some(FileValues::Open(found)) => {
                        return Err(InventoryError::Values { kind, path, found })
                    }
                };
                let key = KeyEntry {
                    types,
                    every,
                    values,
                };
                entry.keys.insert(path, key);
            }
            inv.kinds.insert(kind, entry);
        }
        for (list, names) in file.lists {
            let mut out = BTreeMap::new();
            for (name, n) in names {
                let seen = (spans.parse(n.seen.as_deref()))
                    .map_err(|e| at(format!("lists.{list}.{name}"), e))?;
                let witnesses = n.by.into_iter().collect();
                out.insert(name, NameEntry { seen, witnesses });
            }
            inv.lists.insert(list, out);
        }
        Ok(inv)
    }

    /// The file: one line per key and per name.
    pub fn to_yaml(&self) -> String {
        self.to_yaml_headed(&format!(
            "# The {} protocol as printed: every frame kind, key path (JSON types) and named list\n\
             # seen in the scenario catalogue's runs. Written by `streamcheck protocol build|add`;\n\
             # a span `A..B` is the releases built from that lie in it, `A..` from A on; no span: all of them.\n\
             # `ran`: each trial (stream-json output) and the releases it ran on; `by`: the scenarios that\n\
             # printed a kind (`by_all_but`: every scenario that ran but these). A key's first and last\n\
             # seen count only releases that ran a scenario printing its kind. `values`: an enum-like key's\n\
             # distinct values (`open`: more than 16, or not tokens); none where values are not recorded.",
            self.dialect
        ))
    }

    /// The file under `header` (comment lines saying what it holds).
    pub fn to_yaml_headed(&self, header: &str) -> String {
        let spans = Spans(&self.releases);
        let q = |s: &str| serde_json::to_string(s).expect("a string");
        let mut out = String::new();
        let _ = writeln!(out, "{header}");
        let _ = writeln!(out, "format_version: {FORMAT_VERSION}");
        let _ = writeln!(out, "dialect: {}", self.dialect);
        let releases: Vec<String> = self.releases.iter().map(|r| q(&r.to_string())).collect();
        let _ = writeln!(out, "releases: [{}]", releases.join(", "));
        if !self.unknown_coverage.is_empty() {
            let unknown: Vec<String> = (self.unknown_coverage.iter())
                .map(|r| q(&r.to_string()))
                .collect();
            let _ = writeln!(out, "unknown_coverage: [{}]", unknown.join(", "));
        }
        let _ = writeln!(out, "ran:");
        for (trial, on) in &self.ran {
            let all = Spans::all(&self.releases);
            let span = spans.write(on).or(all).unwrap_or_default();
            let _ = writeln!(out, "  {}: {}", q(trial), q(&span));
        }
        let scenarios: BTreeSet<&str> = self.ran.keys().map(|t| ScenarioId::file_of(t)).collect();
        let _ = writeln!(out, "kinds:");
        for (kind, k) in &self.kinds {
            let _ = writeln!(out, "  {}:", q(kind));
            if let Some(s) = spans.write(&k.seen) {
                let _ = writeln!(out, "    seen: {}", q(&s));
            }
            let not: Vec<String> = (scenarios.iter())
                .filter(|s| !k.by.contains(**s))
                .map(|s| q(s))
                .collect();
            if not.len() * 2 < k.by.len() && k.by.iter().all(|s| scenarios.contains(s.as_str())) {
                let _ = writeln!(out, "    by_all_but: [{}]", not.join(", "));
            } else if !k.by.is_empty() {
                let by: Vec<String> = k.by.iter().map(|s| q(s)).collect();
                let _ = writeln!(out, "    by: [{}]", by.join(", "));
            }
            let _ = writeln!(out, "    keys:");
            for (path, key) in &k.keys {
                let seen = key.seen();
                let names: Vec<&str> = key.types.keys().map(String::as_str).collect();
                let mut fields = vec![format!("type: {}", q(&names.join("|")))];
                if seen != k.seen {
                    fields.push(format!(
                        "seen: {}",
                        q(&spans.write(&seen).unwrap_or_default())
                    ));
                }
                let own: Vec<String> = (key.types.iter())
                    .filter(|(_, during)| **during != seen)
                    .map(|(t, during)| {
                        format!("{t}: {}", q(&spans.write(during).unwrap_or_default()))
                    })
                    .collect();
                if !own.is_empty() {
                    fields.push(format!("types: {{{}}}", own.join(", ")));
                }
                if key.every == seen && !seen.is_empty() {
                    fields.push("every: true".into());
                } else if !key.every.is_empty() {
                    let during = spans.write(&key.every).unwrap_or_default();
                    fields.push(format!("every: {}", q(&during)));
                }
                match &key.values {
                    Values::Unrecorded => {}
                    Values::Open => fields.push("values: open".into()),
                    Values::Tokens(v) => {
                        let v: Vec<String> = v.iter().map(|x| q(x)).collect();
                        fields.push(format!("values: [{}]", v.join(", ")));
                    }
                }
                let _ = writeln!(out, "      {}: {{{}}}", q(path), fields.join(", "));
            }
        }
        let _ = writeln!(out, "lists:");
        for (list, names) in &self.lists {
            let _ = writeln!(out, "  {}:", q(list));
            for (name, n) in names {
                let mut fields = Vec::new();
                if let Some(s) = spans.write(&n.seen) {
                    fields.push(format!("seen: {}", q(&s)));
                }
                if let Some(w) = n.witnesses.first() {
                    fields.push(format!("by: {}", q(w)));
                }
                let _ = writeln!(out, "    {}: {{{}}}", q(name), fields.join(", "));
            }
        }
        out
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    format_version: Option<u32>,
    dialect: String,
    releases: Vec<String>,
    #[serde(default)]
    unknown_coverage: Vec<String>,
    #[serde(default)]
    ran: BTreeMap<ScenarioId, String>,
    #[serde(default)]
    kinds: BTreeMap<String, FileKind>,
    #[serde(default)]
    lists: BTreeMap<String, BTreeMap<String, FileName>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileKind {
    seen: Option<String>,
    by: Option<Vec<String>>,
    by_all_but: Option<Vec<String>>,
    #[serde(default)]
    keys: BTreeMap<String, FileKey>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileKey {
    r#type: String,
    seen: Option<String>,
    #[serde(default)]
    types: BTreeMap<String, String>,
    every: Option<Every>,
    values: Option<FileValues>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum FileValues {
    List(Vec<String>),
    Open(String),
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Every {
    All(bool),
    Span(String),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileName {
    seen: Option<String>,
    by: Option<String>,
}

/// Sets of releases written as spans over the releases an inventory was built from.
struct Spans<'a>(&'a [Version]);

impl Spans<'_> {
    /// Every release as a span (`A..`); `None` when there is none.
    fn all(releases: &[Version]) -> Option<String> {
        releases.first().map(|r| format!("{r}.."))
    }

    /// `None` for every release.
    fn write(&self, set: &Releases) -> Option<String> {
        if self.0.iter().all(|r| set.contains(r)) {
            return None;
        }
        let mut parts = Vec::new();
        let mut i = 0;
        while i < self.0.len() {
            if !set.contains(&self.0[i]) {
                i += 1;
                continue;
            }
            let start = i;
            while i + 1 < self.0.len() && set.contains(&self.0[i + 1]) {
                i += 1;
            }
            parts.push(match (i + 1 == self.0.len(), start == i) {
                (true, _) => format!("{}..", self.0[start]),
                (false, true) => self.0[start].to_string(),
                (false, false) => format!("{}..{}", self.0[start], self.0[i]),
            });
            i += 1;
        }
        Some(parts.join(", "))
    }

    fn parse(&self, text: Option<&str>) -> Result<Releases, BadVersion> {
        let Some(text) = text else {
            return Ok(self.0.iter().cloned().collect());
        };
        let v = |s: &str| {
            Version::parse(s.trim()).map_err(|source| BadVersion {
                text: s.to_string(),
                source,
            })
        };
        let mut out = Releases::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (from, to) = match part.split_once("..") {
                Some((a, "")) => (v(a)?, None),
                Some((a, b)) => (v(a)?, Some(v(b)?)),
                None => (v(part)?, Some(v(part)?)),
            };
            out.extend(
                (self.0.iter())
                    .filter(|r| **r >= from && to.as_ref().is_none_or(|t| *r <= t))
                    .cloned(),
            );
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::observe::Observed;
    use serde_json::json;

    fn v(s: &str) -> Version {
        Version::parse(s).unwrap()
    }

    fn obs(scenario: &str, frames: &[serde_json::Value]) -> Observed {
        Observed::of(scenario, frames, &[])
    }

    #[test]
    fn a_key_added_later_and_one_dropped_are_spans_and_the_file_reads_back_as_built() {
        let mut inv = Inventory::new("claude-code");
        let old = [
            json!({"type": "result", "subtype": "success", "uuid": "a", "n": 1, "tools": ["Bash", "Old"]}),
        ];
        let new = [
            json!({"type": "result", "subtype": "success", "n": null, "fresh": true}),
            json!({"type": "result", "subtype": "success", "n": 2}),
        ];
        inv.add(&v("2.1.1"), &obs("s/a", &old));
        inv.add(&v("2.1.5"), &obs("s/a", &new));
        let result = &inv.kinds["result/success"];
        assert_eq!(result.keys["uuid"].seen(), Releases::from([v("2.1.1")]));
        assert_eq!(
            result.keys["fresh"].every,
            Releases::new(),
            "one of two frames"
        );
        assert_eq!(result.keys["n"].every.len(), 2);
        let yaml = inv.to_yaml();
        assert!(
            yaml.contains(r#""uuid": {type: "string", seen: "2.1.1", every: true}"#),
            "{yaml}"
        );
        assert!(
            yaml.contains(r#""fresh": {type: "bool", seen: "2.1.5.."}"#),
            "{yaml}"
        );
        assert!(
            yaml.contains(r#""n": {type: "null|number", types: {null: "2.1.5.."}, every: true}"#),
            "{yaml}"
        );
        assert_eq!(Inventory::parse(&yaml).unwrap(), inv);
        assert_eq!(
            inv.view(&v("2.1.3")).unwrap(),
            vec![&v("2.1.1"), &v("2.1.5")],
            "between two releases: either side"
        );
        assert_eq!(inv.view(&v("2.1.9")).unwrap(), vec![&v("2.1.5")]);
        assert!(inv.view(&v("2.0.0")).is_none());
    }

    #[test]
    fn a_second_run_of_a_release_takes_every_away_but_never_gives_it() {
        let mut inv = Inventory::new("claude-code");
        let r = v("2.1.1");
        inv.add(&r, &obs("s/a", &[json!({"type": "user", "a": 1, "b": 1})]));
        inv.add(&r, &obs("s/b", &[json!({"type": "user", "a": 1, "c": 1})]));
        let keys = &inv.kinds["user"].keys;
        assert!(keys["a"].every.contains(&r));
        assert!(
            !keys["b"].every.contains(&r),
            "the second run's frame lacks it"
        );
        assert!(
            !keys["c"].every.contains(&r),
            "the first run's frame lacked it"
        );
    }

    #[test]
    fn a_name_keeps_a_witness_that_printed_it_wherever_it_ran() {
        let mut inv = Inventory::new("claude-code");
        let init = |tools: &[&str]| json!({"type": "system", "subtype": "init", "tools": tools});
        let mut o = obs("a/x", &[init(&["Bash", "Read"])]);
        o.merge(&obs("b/y", &[init(&["Read"])]));
        inv.add(&v("2.1.1"), &o);
        let tools = &inv.lists["init.tools"];
        assert_eq!(tools["Bash"].witnesses, BTreeSet::from(["a/x".to_string()]));
        assert_eq!(tools["Read"].witnesses.len(), 2);
        inv.add(&v("2.1.2"), &obs("a/x", &[init(&["Read"])]));
        let tools = &inv.lists["init.tools"];
        assert!(tools["Bash"].witnesses.is_empty(), "a/x ran without it");
        assert_eq!(tools["Bash"].seen, Releases::from([v("2.1.1")]));
    }

    #[test]
    fn a_bad_file_names_the_entry() {
        let e = Inventory::parse("dialect: x\nreleases: [\"1.0.0\"]\nkinds:\n  result:\n    keys:\n      a: {type: \"strung\"}\n").unwrap_err().to_string();
        assert!(
            e.contains("kinds.result.keys.a") && e.contains("strung"),
            "{e}"
        );
        let e = Inventory::parse("dialect: x\nreleases: [\"one\"]\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("releases: `one`"), "{e}");
    }

    #[test]
    fn values_are_kept_sorted_read_back_and_an_older_file_loads_without_them() {
        let mut inv = Inventory::new("claude-code");
        let frame = |stop: &str| json!({"type": "result", "subtype": "success", "stop_reason": stop, "error": "a b"});
        inv.add(&v("2.1.1"), &obs("s/a", &[frame("tool_use")]));
        inv.add(&v("2.1.2"), &obs("s/a", &[frame("end_turn")]));
        let yaml = inv.to_yaml();
        assert!(
            yaml.contains(
                r#""stop_reason": {type: "string", every: true, values: ["end_turn", "tool_use"]}"#
            ),
            "{yaml}"
        );
        assert!(
            yaml.contains(r#""error": {type: "string", every: true, values: open}"#),
            "{yaml}"
        );
        assert!(yaml.contains("format_version: 3"), "{yaml}");
        assert_eq!(Inventory::parse(&yaml).unwrap(), inv);
        let older = yaml.replace("format_version: 3", "format_version: 2");
        let older = older
            .replace(r#", values: ["end_turn", "tool_use"]"#, "")
            .replace(", values: open", "");
        let read = Inventory::parse(&older).unwrap();
        let keys = &read.kinds["result/success"].keys;
        assert_eq!(
            keys["stop_reason"].values,
            Values::Unrecorded,
            "format 2 recorded none"
        );
        assert_eq!(
            keys["stop_reason"].types,
            inv.kinds["result/success"].keys["stop_reason"].types
        );
        let e = Inventory::parse(&yaml.replace("values: open", "values: many"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("kinds.result/success.keys.error") && e.contains("many"),
            "{e}"
        );
        let dir = tempfile::tempdir().unwrap();
        let newer = dir.path().join("protocol.yaml");
        std::fs::write(
            &newer,
            yaml.replace("format_version: 3", "format_version: 4"),
        )
        .unwrap();
        let e = Inventory::load(&newer).unwrap_err().to_string();
        assert!(
            e.contains(&newer.display().to_string()) && e.contains("format_version 4"),
            "{e}"
        );
    }
}
