//! The parity table of a re-implementation (`protocol = "parity"`): what the reference
//! release's inventory holds that the target does not print, and what the target prints
//! that the inventory does not hold, one row per frame kind, key path or name, with the
//! trials it was seen in. These findings fail no trial under parity; a JSON type changed on
//! a key both print does, and is no row here.

use super::check::{Change, Finding, Policy, What};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// Which side prints it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// The reference release prints it, the target does not.
    ReferenceOnly,
    /// The target prints it, the reference release does not.
    TargetOnly,
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Side::ReferenceOnly => "reference prints / target does not",
            Side::TargetOnly => "target prints / reference does not",
        })
    }
}

/// What a row is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Item {
    /// A whole frame kind (`system/thinking_tokens`).
    FrameKind,
    /// A key path inside a frame kind.
    Key,
    /// A name in a named list (a tool, a stop reason, a permission mode).
    Name,
}

/// One row: a frame kind, key path or name only one side prints, and where it was seen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Row {
    pub item: Item,
    /// The frame kind (`system/init`), or the list a name is in (`init.tools`).
    pub kind: String,
    /// The key path (`usage.service_tier`) or the name; empty for a frame kind.
    pub path: String,
    pub side: Side,
    /// The trials it was seen in (`scenario` or `scenario (target)`).
    pub trials: Vec<String>,
}

impl Row {
    /// `system/init.fast_mode_state`, `system/thinking_tokens`, `stop_reason: stop_sequence`.
    pub fn key_path(&self) -> String {
        match self.item {
            Item::FrameKind => self.kind.clone(),
            Item::Key => format!("{}.{}", self.kind, self.path),
            Item::Name => format!("{}: {}", self.kind, self.path),
        }
    }
}

/// The row a finding makes under parity, `None` for one that is no row (a changed JSON
/// type, which fails the trial; an inventory that is missing).
fn row_of(f: &Finding) -> Option<(Item, String, String, Side)> {
    let side = match f.change {
        Change::Gone => Side::ReferenceOnly,
        Change::New => Side::TargetOnly,
        Change::Unchecked => return None,
    };
    Some(match &f.what {
        What::Kind { kind } => (Item::FrameKind, kind.clone(), String::new(), side),
        What::Key { kind, path, .. } => (Item::Key, kind.clone(), path.clone(), side),
        What::Name { list, name, .. } => (Item::Name, list.clone(), name.clone(), side),
        What::Type { .. } | What::Inventory { .. } => return None,
    })
}

/// Whether the finding goes to the parity table of a trial checked under `policy` (and so
/// not to the run's protocol section).
pub fn in_table(policy: Option<Policy>, f: &Finding) -> bool {
    policy == Some(Policy::Parity) && row_of(f).is_some()
}

/// The table of a run: every trial checked under parity, named `name`, with its findings.
/// Rows sorted by what they are about; each lists its trials once.
pub fn table<'a>(
    trials: impl IntoIterator<Item = (&'a str, Option<Policy>, &'a [Finding])>,
) -> Vec<Row> {
    let mut by: BTreeMap<(String, String, Item, Side), Vec<String>> = BTreeMap::new();
    for (name, policy, findings) in trials {
        if policy != Some(Policy::Parity) {
            continue;
        }
        for (item, kind, path, side) in findings.iter().filter_map(row_of) {
            let seen = by.entry((kind, path, item, side)).or_default();
            if !seen.iter().any(|t| t == name) {
                seen.push(name.to_string());
            }
        }
    }
    by.into_iter()
        .map(|((kind, path, item, side), trials)| Row {
            item,
            kind,
            path,
            side,
            trials,
        })
        .collect()
}

impl Item {
    pub fn as_str(self) -> &'static str {
        match self {
            Item::FrameKind => "frame kind",
            Item::Key => "key",
            Item::Name => "name",
        }
    }
}

/// A row's trials: `9 trials (a, b, c, ...)`.
pub fn trials(row: &Row) -> String {
    const SHOWN: usize = 3;
    let mut names: Vec<&str> = row.trials.iter().take(SHOWN).map(String::as_str).collect();
    if row.trials.len() > SHOWN {
        names.push("...");
    }
    let n = row.trials.len();
    let s = if n == 1 { "" } else { "s" };
    format!("{n} trial{s} ({})", names.join(", "))
}

/// A row as one line: `` `system/init.fast_mode_state` (key): reference prints / target
/// does not, in 9 trials (a, b, ...) ``.
pub fn line(row: &Row) -> String {
    format!(
        "`{}` ({}): {}, in {}",
        row.key_path(),
        row.item.as_str(),
        row.side,
        trials(row)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(change: Change, kind: &str, path: &str) -> Finding {
        Finding {
            change,
            direction: Default::default(),
            what: What::Key {
                kind: kind.into(),
                path: path.into(),
                types: vec!["string".into()],
            },
        }
    }

    #[test]
    fn only_parity_trials_make_rows_and_a_changed_type_is_none() {
        let gone = key(Change::Gone, "system/init", "fast_mode_state");
        let new = key(Change::New, "result/success", "mycli_version");
        let retyped = Finding {
            change: Change::New,
            direction: Default::default(),
            what: What::Type {
                kind: "result/success".into(),
                path: "num_turns".into(),
                types: vec!["string".into()],
                known: vec!["number".into()],
            },
        };
        let a = [gone.clone(), new.clone(), retyped.clone()];
        let b = [gone.clone()];
        let rows = table([
            ("s/a", Some(Policy::Parity), &a[..]),
            ("s/b", Some(Policy::Parity), &b[..]),
            ("s/c", Some(Policy::Report), &b[..]),
        ]);
        assert_eq!(rows.len(), 2, "{rows:?}");
        let init = rows.iter().find(|r| r.kind == "system/init").unwrap();
        assert_eq!(
            (init.side, init.trials.clone()),
            (
                Side::ReferenceOnly,
                vec!["s/a".to_string(), "s/b".to_string()]
            )
        );
        assert_eq!(
            line(init),
            "`system/init.fast_mode_state` (key): reference prints / target does not, in 2 trials (s/a, s/b)"
        );
        let own = rows.iter().find(|r| r.kind == "result/success").unwrap();
        assert_eq!(own.side, Side::TargetOnly);
        assert!(retyped.fails(Policy::Parity) && !gone.fails(Policy::Parity));
        assert!(!new.fails(Policy::Parity));
        assert!(in_table(Some(Policy::Parity), &gone) && !in_table(Some(Policy::Report), &gone));
        assert!(!in_table(Some(Policy::Parity), &retyped));
    }
}
