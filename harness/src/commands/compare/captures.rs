//! Folders of captured runs (`NAME.stdout.jsonl`, `NAME.exit_code`, ...): which target a
//! folder holds, which cases it has, and how the cases of two folders pair up.

use super::aspects::Side;
use super::parity::{dialect_name, Compared, ScenarioParity, TargetSide};
use super::recorded::Recorded;
use crate::target::Dialect;
use std::collections::BTreeMap;
use std::path::Path;

/// A capture folder's target, from its name: `claude-code-2.1.197` is claude-code
/// 2.1.197; a name containing `caliban` is in caliban's dialect, any other in Claude Code's.
pub fn capture_side(dir: &Path) -> (TargetSide, Dialect) {
    let base = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| dir.display().to_string());
    let (name, version) = match base.rfind('-') {
        Some(i) if base[i + 1..].starts_with(|c: char| c.is_ascii_digit()) => {
            (base[..i].to_string(), base[i + 1..].to_string())
        }
        _ => (base.clone(), "unknown".to_string()),
    };
    let dialect = if base.contains("caliban") {
        Dialect::Caliban
    } else if base.contains("qwen") {
        Dialect::QwenCode
    } else {
        Dialect::ClaudeCode
    };
    (
        TargetSide {
            name,
            version,
            dialect: dialect_name(dialect),
        },
        dialect,
    )
}

/// One capture folder and the target it holds.
pub(super) struct Folder<'a> {
    pub dir: &'a Path,
    pub side: TargetSide,
    pub dialect: Dialect,
}

impl Folder<'_> {
    pub fn new(dir: &Path) -> Folder<'_> {
        let (side, dialect) = capture_side(dir);
        Folder { dir, side, dialect }
    }

    fn with_run<'a>(&'a self, run: &'a Recorded) -> Side<'a> {
        Side {
            name: &self.side.name,
            dialect: self.dialect,
            run,
        }
    }

    /// Cases in the folder: names with a `NAME.exit_code`.
    fn cases(&self) -> Result<Vec<String>, String> {
        let dir = self.dir;
        let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let mut names: Vec<String> = entries
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                e.file_name()
                    .to_string_lossy()
                    .strip_suffix(".exit_code")
                    .map(str::to_string)
            })
            .collect();
        names.sort();
        Ok(names)
    }

    /// `claude-code ran (case NAME): `COMMAND``, from `NAME.cmdline` when there is one.
    fn command_note(&self, name: &str, key: &str) -> Option<String> {
        let cmd = std::fs::read_to_string(self.dir.join(format!("{name}.cmdline"))).ok()?;
        let label = if name == key {
            String::new()
        } else {
            format!(" (case {name})")
        };
        Some(format!("{} ran{label}: `{}`", self.side.name, cmd.trim()))
    }
}

/// The name a case is paired under: `input_<other>_shape` (this CLI fed the other
/// dialect's stdin frames) pairs with the other folder's mirror case.
fn case_key(name: &str, other: Dialect) -> String {
    let other = match other {
        Dialect::ClaudeCode => "claude",
        Dialect::Caliban => "caliban",
        Dialect::QwenCode => "qwen",
    };
    if name == format!("input_{other}_shape") {
        "input_foreign_shape".to_string()
    } else {
        name.to_string()
    }
}

/// Case names by the key they pair under: per folder, the case or `None`.
pub(super) fn pair_cases(
    a: &Folder,
    b: &Folder,
) -> Result<BTreeMap<String, [Option<String>; 2]>, String> {
    let mut keys: BTreeMap<String, [Option<String>; 2]> = BTreeMap::new();
    for name in a.cases()? {
        let key = case_key(&name, b.dialect);
        keys.entry(key).or_default()[0] = Some(name);
    }
    for name in b.cases()? {
        let key = case_key(&name, a.dialect);
        keys.entry(key).or_default()[1] = Some(name);
    }
    Ok(keys)
}

/// Compares one paired case, with the command lines the folders recorded as context.
pub(super) fn compare_case(
    key: &str,
    [a, b]: [&Folder; 2],
    names: &[Option<String>; 2],
) -> Result<Compared, String> {
    let [Some(na), Some(nb)] = names else {
        let (have, lack) = if names[0].is_some() {
            (&a.side.name, &b.side.name)
        } else {
            (&b.side.name, &a.side.name)
        };
        let why = format!("captured for {have} only, not for {lack}");
        return Ok(ScenarioParity::not_compared(key, why));
    };
    let ra = Recorded::from_capture(a.dir, na)?;
    let rb = Recorded::from_capture(b.dir, nb)?;
    let (mut sp, unmapped) = ScenarioParity::of(key, a.with_run(&ra), b.with_run(&rb));
    let mut notes: Vec<String> = [(a, na), (b, nb)]
        .into_iter()
        .filter_map(|(f, name)| f.command_note(name, key))
        .collect();
    notes.append(&mut sp.notes);
    sp.notes = notes;
    Ok((sp, unmapped))
}
