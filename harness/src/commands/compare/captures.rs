//! Folders of captured runs (`NAME.stdout.jsonl`, `NAME.exit_code`, ...): which target a
//! folder holds, which cases it has, and how the cases of two folders pair up.

use super::aspects::Side;
use super::parity::{Compared, ScenarioParity, TargetSide};
use crate::dialect::Dialect;
use crate::recording::recorded::Recorded;
use crate::store::StoreError;
use std::collections::BTreeMap;
use std::path::Path;

/// A capture folder's target, from its name: `<dialect>-<version>` (`claude-code-2.1.197`,
/// `caliban-0.15.0`) or just `<dialect>`.
pub fn capture_side(dir: &Path) -> Result<(TargetSide, Dialect), StoreError> {
    let base = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| dir.display().to_string());
    let named = Dialect::ALL.iter().find_map(|&d| {
        let rest = base.strip_prefix(d.conventions().expect_key())?;
        match rest.strip_prefix('-') {
            Some(version) if !version.is_empty() => Some((d, version)),
            None if rest.is_empty() => Some((d, "unknown")),
            _ => None,
        }
    });
    let Some((dialect, version)) = named else {
        return Err(StoreError::CaptureName {
            dir: dir.to_path_buf(),
        });
    };
    let side = TargetSide {
        name: dialect.conventions().expect_key().to_string(),
        version: version.to_string(),
        dialect: Some(dialect),
    };
    Ok((side, dialect))
}

/// One capture folder and the target it holds.
pub(super) struct Folder<'a> {
    pub dir: &'a Path,
    pub side: TargetSide,
    pub dialect: Dialect,
}

impl Folder<'_> {
    pub(crate) fn new(dir: &Path) -> Result<Folder<'_>, StoreError> {
        let (side, dialect) = capture_side(dir)?;
        Ok(Folder { dir, side, dialect })
    }

    fn with_run<'a>(&'a self, run: &'a Recorded) -> Side<'a> {
        Side {
            name: &self.side.name,
            dialect: self.dialect,
            run,
        }
    }

    /// Cases in the folder: names with a `NAME.exit_code`.
    fn cases(&self) -> Result<Vec<String>, StoreError> {
        let dir = self.dir;
        let entries = std::fs::read_dir(dir).map_err(|e| StoreError::io(dir, e))?;
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

/// The name a case is paired under: `input_<other>_shape` (this CLI fed another
/// dialect's stdin frames) pairs with the other folder's mirror case.
fn case_key(name: &str) -> String {
    let foreign = name
        .strip_prefix("input_")
        .and_then(|n| n.strip_suffix("_shape"))
        .is_some_and(|other| !other.is_empty());
    match foreign {
        true => "input_foreign_shape".to_string(),
        false => name.to_string(),
    }
}

/// Case names by the key they pair under: per folder, the case or `None`.
pub(super) fn pair_cases(
    a: &Folder,
    b: &Folder,
) -> Result<BTreeMap<String, [Option<String>; 2]>, StoreError> {
    let mut keys: BTreeMap<String, [Option<String>; 2]> = BTreeMap::new();
    for (i, folder) in [a, b].into_iter().enumerate() {
        for name in folder.cases()? {
            let key = case_key(&name);
            keys.entry(key).or_default()[i] = Some(name);
        }
    }
    Ok(keys)
}

/// Compares one paired case, with the command lines the folders recorded as context.
pub(super) fn compare_case(
    key: &str,
    [a, b]: [&Folder; 2],
    names: &[Option<String>; 2],
) -> Result<Compared, StoreError> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_capture_folder_is_named_by_its_dialect_and_version() {
        let side = |name: &str| capture_side(Path::new("x").join(name).as_path());
        let (s, d) = side("claude-code-2.1.197").unwrap();
        assert_eq!(
            (s.name.as_str(), s.version.as_str(), d),
            ("claude-code", "2.1.197", Dialect::ClaudeCode)
        );
        let (s, d) = side("qwen-code").unwrap();
        assert_eq!((s.version.as_str(), d), ("unknown", Dialect::QwenCode));
        assert_eq!(side("caliban-0.15.0").unwrap().1, Dialect::Caliban);
        // No guessing from a part of the name.
        for name in ["claude-2.1.197", "my-caliban-run", "claude-codex-1"] {
            let err = side(name).unwrap_err().to_string();
            assert!(err.contains("claude-code, caliban, qwen-code"), "{err}");
        }
    }

    #[test]
    fn a_case_fed_another_dialects_stdin_pairs_with_its_mirror() {
        assert_eq!(case_key("input_claude_shape"), "input_foreign_shape");
        assert_eq!(case_key("input_caliban_shape"), "input_foreign_shape");
        assert_eq!(case_key("input__shape"), "input__shape");
        assert_eq!(case_key("bash_tool"), "bash_tool");
    }
}
