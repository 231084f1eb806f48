//! One trial's output against the inventory of the release it is held to: what is new
//! (a frame kind, key path, JSON type or name the inventory does not hold for that
//! release) and what is gone (a key every frame of its kind carried, a name its witness
//! scenario printed). A key is judged gone only where the inventory looked: each release
//! it answers with ran the trial's scenario and that scenario printed the kind; elsewhere
//! the key is "not checked here", never a failure.

use super::inventory::{Inventory, Releases};
use super::observe::Observed;
use semver::Version;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// What `run` does with the findings (`--protocol`, `protocol =` in streamcheck.toml).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Policy {
    /// Nothing is checked.
    Off,
    /// Gone fails the trial; new is reported and does not.
    #[default]
    Report,
    /// New fails the trial as well (for consumers whose decoders reject unknown keys).
    Strict,
    /// For a re-implementation of the release it conforms to: what only one of the two
    /// prints (a key, a frame kind, a name) goes to the run's parity table; a JSON type
    /// changed on a key both print fails.
    Parity,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    New,
    Gone,
    /// Nothing to check against: no inventory for the dialect or the release.
    Unchecked,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(tag = "what", rename_all = "snake_case")]
pub enum What {
    Kind {
        kind: String,
    },
    Key {
        kind: String,
        path: String,
        types: Vec<String>,
    },
    Type {
        kind: String,
        path: String,
        types: Vec<String>,
        known: Vec<String>,
    },
    Name {
        list: String,
        name: String,
        /// For a gone name: the scenario that printed it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        by: Option<String>,
    },
    /// No inventory: the file (and the releases it starts at, when it exists).
    Inventory {
        file: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        from: Option<String>,
    },
}

impl Change {
    /// The word a finding starts with.
    pub fn word(self) -> &'static str {
        match self {
            Change::New => "new",
            Change::Gone => "gone",
            Change::Unchecked => "not checked",
        }
    }
}

/// Which part of the protocol a [`What`] is in, without its data: what a consume probe
/// says it changes (`Probe::change`), in the check's own words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Shape {
    Kind,
    Key,
    Type,
    Name,
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Shape::Kind => "frame kind",
            Shape::Key => "key",
            Shape::Type => "type of a key",
            Shape::Name => "name",
        })
    }
}

impl What {
    /// `None`: no inventory, so no part of the protocol.
    pub fn shape(&self) -> Option<Shape> {
        match self {
            What::Kind { .. } => Some(Shape::Kind),
            What::Key { .. } => Some(Shape::Key),
            What::Type { .. } => Some(Shape::Type),
            What::Name { .. } => Some(Shape::Name),
            What::Inventory { .. } => None,
        }
    }
}

/// Which way a finding's protocol goes: what the CLI printed, or what it sent to the model
/// API (the request inventory, `targets/<dialect>/requests.yaml`).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    #[default]
    Printed,
    Request,
}

impl Direction {
    fn is_printed(&self) -> bool {
        *self == Direction::Printed
    }
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Finding {
    pub change: Change,
    #[serde(flatten)]
    pub what: What,
    #[serde(default, skip_serializing_if = "Direction::is_printed")]
    pub direction: Direction,
}

impl Finding {
    pub fn new(change: Change, what: What) -> Finding {
        Finding {
            change,
            what,
            direction: Direction::Printed,
        }
    }

    /// Whether it fails the trial under `policy`.
    pub fn fails(&self, policy: Policy) -> bool {
        match (self.change, policy) {
            (_, Policy::Off) | (Change::Unchecked, _) => false,
            (_, Policy::Parity) => matches!(self.what, What::Type { .. }),
            (Change::Gone, _) => true,
            (Change::New, p) => p == Policy::Strict,
        }
    }

    /// A change that breaks a consumer relying on what was there (gone keys and names,
    /// a JSON type a decoder of the old one rejects).
    pub fn breaking(&self) -> bool {
        self.change == Change::Gone
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let change = match self.change {
            Change::New => Change::New.word().to_string(),
            other => format!("{}:", other.word()),
        };
        let request = self.direction == Direction::Request;
        let (kind_noun, key_noun, carrier, lister) = match request {
            false => ("frame kind", "key", "", "printed"),
            true => ("request kind", "request key", " request", "sent"),
        };
        let list_of = |list: &str| match request {
            false => list.to_string(),
            true => format!("request {list}"),
        };
        let at = |kind: &str, path: &str| format!("`{kind}.{path}`");
        match &self.what {
            What::Kind { kind } => write!(f, "{change} {kind_noun} `{kind}`"),
            What::Key { kind, path, types } if self.change == Change::Unchecked => {
                write!(
                    f,
                    "not checked here: {key_noun} {} ({}) is missing, but the releases the inventory answers with did not all run this scenario {}ing `{kind}`",
                    at(kind, path),
                    types.join("|"),
                    match request {
                        false => "print",
                        true => "send",
                    }
                )
            }
            What::Key { kind, path, types } if self.change == Change::Gone => {
                write!(
                    f,
                    "gone {key_noun} {} ({}; every `{kind}`{carrier} carried it)",
                    at(kind, path),
                    types.join("|")
                )
            }
            What::Key { kind, path, types } => {
                write!(
                    f,
                    "{change} {key_noun} {} ({})",
                    at(kind, path),
                    types.join("|")
                )
            }
            What::Type {
                kind,
                path,
                types,
                known,
            } => write!(
                f,
                "{change} type of {}{}: {} (the inventory has {})",
                match request {
                    false => "",
                    true => "request key ",
                },
                at(kind, path),
                types.join("|"),
                known.join("|")
            ),
            What::Name {
                list,
                name,
                by: Some(by),
            } => {
                write!(
                    f,
                    "gone name `{name}` from {} ({by} {lister} it)",
                    list_of(list)
                )
            }
            What::Name {
                list,
                name,
                by: None,
            } => write!(f, "{change} name `{name}` in {}", list_of(list)),
            What::Inventory { file, from: None } if request => {
                write!(
                    f,
                    "not checked: no request inventory for this dialect ({file})"
                )
            }
            What::Inventory { file, from: None } => write!(f, "not checked: no inventory ({file})"),
            What::Inventory {
                file,
                from: Some(from),
            } => {
                write!(f, "not checked: {file} starts at {from}")
            }
        }
    }
}

/// `observed` (one trial of `scenario`) against `inv` at `release`.
pub fn check(
    inv: &Inventory,
    file: &str,
    release: &Version,
    scenario: &str,
    observed: &Observed,
) -> Vec<Finding> {
    let Some(at) = inv.view(release) else {
        let from = inv.releases.first().map(|r| format!("{} {r}", inv.dialect));
        return vec![Finding::new(
            Change::Unchecked,
            What::Inventory {
                file: file.to_string(),
                from,
            },
        )];
    };
    let any = |s: &Releases| at.iter().any(|r| s.contains(r));
    let all = |s: &Releases| at.iter().all(|r| s.contains(r));
    let mut out = Vec::new();
    let new = |what| Finding::new(Change::New, what);
    for (kind, count) in &observed.kinds {
        let Some(entry) = inv.kinds.get(kind).filter(|e| any(&e.seen)) else {
            out.push(new(What::Kind { kind: kind.clone() }));
            continue;
        };
        let mut reported: Vec<&str> = Vec::new();
        for (path, k) in &count.keys {
            if reported.iter().any(|r| within(path, r)) {
                continue;
            }
            let types = |ts: &BTreeSet<&str>| ts.iter().map(|t| t.to_string()).collect::<Vec<_>>();
            let known: Vec<String> = (entry.keys.get(path).into_iter())
                .flat_map(|e| e.types.iter())
                .filter(|(_, during)| any(during))
                .map(|(t, _)| t.clone())
                .collect();
            if known.is_empty() {
                out.push(new(What::Key {
                    kind: kind.clone(),
                    path: path.clone(),
                    types: types(&k.types),
                }));
                reported.push(path);
                continue;
            }
            let extra: BTreeSet<&str> = (k.types.iter())
                .filter(|t| !known.iter().any(|x| x == *t))
                .copied()
                .collect();
            if !extra.is_empty() {
                out.push(new(What::Type {
                    kind: kind.clone(),
                    path: path.clone(),
                    types: types(&extra),
                    known,
                }));
                reported.push(path);
            }
        }
        let looked =
            (at.iter()).all(|r| entry.seen.contains(*r) && inv.printed_by(kind, scenario, r));
        for (path, key) in &entry.keys {
            let missing = count.every(path) == Some(false);
            if missing && all(&key.every) {
                let change = match looked {
                    true => Change::Gone,
                    false => Change::Unchecked,
                };
                out.push(Finding::new(
                    change,
                    What::Key {
                        kind: kind.clone(),
                        path: path.clone(),
                        types: key.types.keys().cloned().collect(),
                    },
                ));
            }
        }
    }
    for (list, by) in &observed.lists {
        let printed: BTreeSet<&String> = by.values().flatten().collect();
        let names = inv.lists.get(list);
        for name in &printed {
            let known = names
                .and_then(|n| n.get(*name))
                .is_some_and(|n| any(&n.seen));
            if !known {
                out.push(new(What::Name {
                    list: list.clone(),
                    name: (*name).clone(),
                    by: None,
                }));
            }
        }
        for (name, entry) in names.into_iter().flatten() {
            let witness = entry.witnesses.contains(scenario) && all(&entry.seen);
            if witness && by.contains_key(scenario) && !printed.contains(name) {
                out.push(Finding::new(
                    Change::Gone,
                    What::Name {
                        list: list.clone(),
                        name: name.clone(),
                        by: Some(scenario.to_string()),
                    },
                ));
            }
        }
    }
    out
}

/// Whether `path` lies inside `outer` (a key or the items of an array under it).
pub(crate) fn within(path: &str, outer: &str) -> bool {
    path.strip_prefix(outer)
        .is_some_and(|rest| rest.starts_with('.') || rest.starts_with("[]"))
}

/// Each finding of a run once, with the trials it was seen in (`scenario` or
/// `scenario (target)` when the run had several targets), breaking ones first. A name gone
/// from several scenarios is one finding: each names the scenario that printed it, which
/// its trial list already says.
pub fn group<'a>(
    trials: impl IntoIterator<Item = (&'a str, &'a [Finding])>,
) -> Vec<(Finding, Vec<String>)> {
    let mut by: BTreeMap<Finding, (&Finding, Vec<String>)> = BTreeMap::new();
    for (trial, findings) in trials {
        let mut seen = BTreeSet::new();
        for f in findings {
            let key = unwitnessed(f);
            if seen.insert(key.clone()) {
                (by.entry(key).or_insert((f, Vec::new())).1).push(trial.to_string());
            }
        }
    }
    let mut out: Vec<(Finding, Vec<String>)> = (by.into_iter())
        .map(|(key, (first, t))| match t.len() {
            1 => (first.clone(), t),
            _ => (key, t),
        })
        .collect();
    out.sort_by(|a, b| (b.0.breaking(), &a.0).cmp(&(a.0.breaking(), &b.0)));
    out
}

/// `f` without the scenario a gone name was printed by.
fn unwitnessed(f: &Finding) -> Finding {
    let mut f = f.clone();
    if let What::Name { by, .. } = &mut f.what {
        *by = None;
    }
    f
}

/// `finding, in 14 trials (a, b, c, d, e, ...)`.
pub fn line(finding: &Finding, trials: &[String]) -> String {
    const SHOWN: usize = 5;
    let mut names: Vec<&str> = trials.iter().take(SHOWN).map(String::as_str).collect();
    if trials.len() > SHOWN {
        names.push("...");
    }
    let n = trials.len();
    let s = if n == 1 { "" } else { "s" };
    format!("{finding}, in {n} trial{s} ({})", names.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn v(s: &str) -> Version {
        Version::parse(s).unwrap()
    }

    fn inventory() -> Inventory {
        let mut inv = Inventory::new("claude-code");
        let frames = [
            json!({"type": "system", "subtype": "init", "tools": ["Bash", "Read"], "uuid": "u"}),
            json!({"type": "result", "subtype": "success", "uuid": "u", "n": 1, "usage": {"a": 1}}),
        ];
        inv.add(&v("2.1.1"), &Observed::of("s/a", &frames, &[]));
        inv
    }

    fn findings(frames: &[Value]) -> Vec<String> {
        let o = Observed::of("s/a", frames, &[]);
        check(
            &inventory(),
            "targets/claude-code/protocol.yaml",
            &v("2.1.1"),
            "s/a",
            &o,
        )
        .iter()
        .map(|f| f.to_string())
        .collect()
    }

    #[test]
    fn what_the_inventory_holds_is_no_finding_and_each_change_is_named() {
        let same = [
            json!({"type": "system", "subtype": "init", "tools": ["Read", "Bash"], "uuid": "x"}),
            json!({"type": "result", "subtype": "success", "uuid": "y", "n": 2, "usage": {"a": 3}}),
        ];
        assert_eq!(findings(&same), Vec::<String>::new());
        let changed = [
            json!({"type": "system", "subtype": "init", "tools": ["Bash", "Grep"], "uuid": "x", "sandbox": {"on": true}}),
            json!({"type": "result", "subtype": "success", "n": "2", "usage": {"a": 1}}),
            json!({"type": "rate_limit_event", "uuid": "z"}),
        ];
        assert_eq!(
            findings(&changed),
            [
                "new frame kind `rate_limit_event`",
                "new type of `result/success.n`: string (the inventory has number)",
                "gone key `result/success.uuid` (string; every `result/success` carried it)",
                "new key `system/init.sandbox` (object)",
                "new name `Grep` in init.tools",
                "gone name `Read` from init.tools (s/a printed it)",
            ]
        );
    }

    #[test]
    fn a_key_is_gone_only_where_the_inventory_ran_the_scenario_printing_its_kind() {
        let result = |extra: bool| match extra {
            true => json!({"type": "result", "subtype": "success", "uuid": "u"}),
            false => json!({"type": "result", "subtype": "success"}),
        };
        let mut inv = Inventory::new("claude-code");
        inv.add(&v("2.1.1"), &Observed::of("s/a[x=1]", &[result(true)], &[]));
        let mut later = Observed::of("s/a[x=1]", &[result(true)], &[]);
        later.merge(&Observed::of(
            "s/b",
            &[json!({"type": "system", "subtype": "init"})],
            &[],
        ));
        inv.add(&v("2.1.5"), &later);
        inv.add(&v("2.1.9"), &Observed::of("s/c", &[result(true)], &[]));
        let changes = |trial: &str, release: &str| -> Vec<(Change, String)> {
            let o = Observed::of(trial, &[result(false)], &[]);
            check(&inv, "p.yaml", &v(release), trial, &o)
                .into_iter()
                .map(|f| (f.change, f.to_string()))
                .collect()
        };
        let gone = changes("s/a[x=2]", "2.1.3");
        assert_eq!(gone.len(), 1);
        assert_eq!(
            gone[0].0,
            Change::Gone,
            "s/a printed result on 2.1.1 and 2.1.5: {gone:?}"
        );
        let other = changes("s/b", "2.1.5");
        assert_eq!(
            other[0].0,
            Change::Unchecked,
            "s/b never printed a result: {other:?}"
        );
        assert!(
            other[0]
                .1
                .starts_with("not checked here: key `result/success.uuid`"),
            "{other:?}"
        );
        let unrun = changes("s/a", "2.1.7");
        assert_eq!(
            unrun[0].0,
            Change::Unchecked,
            "2.1.9 printed it from s/c, not s/a: {unrun:?}"
        );
        assert!(!Finding {
            change: unrun[0].0,
            direction: Default::default(),
            what: What::Kind { kind: "k".into() }
        }
        .fails(Policy::Strict));
    }

    #[test]
    fn a_release_before_the_inventory_is_not_checked_and_says_so() {
        let o = Observed::of("s/a", &[json!({"type": "x"})], &[]);
        let f = check(
            &inventory(),
            "targets/claude-code/protocol.yaml",
            &v("1.0.0"),
            "s/a",
            &o,
        );
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].change, Change::Unchecked);
        assert!(!f[0].fails(Policy::Strict));
        assert!(
            f[0].to_string().contains("starts at claude-code 2.1.1"),
            "{}",
            f[0]
        );
    }

    #[test]
    fn a_finding_in_many_trials_is_one_line_gone_first() {
        let new = Finding {
            change: Change::New,
            direction: Default::default(),
            what: What::Kind { kind: "k".into() },
        };
        let gone = Finding {
            change: Change::Gone,
            direction: Default::default(),
            what: What::Key {
                kind: "result".into(),
                path: "uuid".into(),
                types: vec!["string".into()],
            },
        };
        let a = [new.clone(), new.clone()];
        let b = [new.clone(), gone.clone()];
        let g = group([("s/a", &a[..]), ("s/b", &b[..])]);
        assert_eq!(g.len(), 2);
        assert_eq!(g[0], (gone.clone(), vec!["s/b".to_string()]));
        assert_eq!(
            line(&g[1].0, &g[1].1),
            "new frame kind `k`, in 2 trials (s/a, s/b)"
        );
        assert!(
            gone.fails(Policy::Report) && !new.fails(Policy::Report) && new.fails(Policy::Strict)
        );
        assert!(!gone.fails(Policy::Off));
    }

    #[test]
    fn a_name_gone_from_several_scenarios_is_one_finding_listing_them() {
        let gone = |by: &str| Finding {
            change: Change::Gone,
            what: What::Name {
                list: "init.tools".into(),
                name: "Glob".into(),
                by: Some(by.into()),
            },
            direction: Direction::Printed,
        };
        let (a, b) = ([gone("s/a")], [gone("s/b")]);
        let grouped = group([("s/a", &a[..]), ("s/b", &b[..])]);
        assert_eq!(grouped.len(), 1, "{grouped:?}");
        assert_eq!(
            line(&grouped[0].0, &grouped[0].1),
            "gone: name `Glob` in init.tools, in 2 trials (s/a, s/b)"
        );
        let alone = group([("s/a", &a[..])]);
        assert_eq!(
            line(&alone[0].0, &alone[0].1),
            "gone name `Glob` from init.tools (s/a printed it), in 1 trial (s/a)"
        );
    }
}
