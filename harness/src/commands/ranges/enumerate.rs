//! Every version range a project states, where it is written, and a hash of what a proof
//! of it judged: a version block of a scenario (`expect: {claude-code@<2.1.116: ...}`), a
//! version block of one case (`expect:` of a `cases:` item), a `min_version` or
//! `max_version` of a block, and a known-divergence entry's `versions`.

use super::subject::Subject;
use crate::dialect::Dialect;
use crate::expectation::ExpectKey;
use crate::known::{Entry, KnownList};
use crate::scenario::{cases, Scenario};
use crate::trial_id::ScenarioId;
use crate::version_range::VersionRange;
use serde_yaml::Value;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One range as written.
#[derive(Debug, Clone)]
pub struct Range {
    /// The file it is written in, relative to the project (or to the project file's folder).
    pub file: String,
    /// The same file on disk.
    pub path: PathBuf,
    pub line: usize,
    pub dialect: Dialect,
    /// The proofs file that holds its proof.
    pub proofs: PathBuf,
    pub case: Option<String>,
    pub subject: Subject,
    pub versions: VersionRange,
    /// `sha256:` of what its proof judges (the scenario or case as it runs, the entry).
    pub hash: String,
    /// The scenarios whose trials prove it.
    pub scenarios: Vec<ScenarioId>,
    /// A known entry's, typed.
    pub entry: Option<Entry>,
}

impl Range {
    /// Whether the range is an intermittent known entry's (proven by repeated runs).
    pub fn is_intermittent(&self) -> bool {
        self.entry.as_ref().is_some_and(|e| e.intermittent)
    }

    /// The range in a line: `claude-code@<2.1.154`, `sessions/continue field_mismatch >=2.1.90, <2.1.101`.
    pub fn describe(&self) -> String {
        let mut s = self.subject.describe();
        if let Some(case) = &self.case {
            s = format!("[{case}] {s}");
        }
        s
    }
}

/// Where a project's ranges are: its catalogue and target data, and a project file's own
/// scenario folders and known-divergences file.
#[derive(Debug, Clone)]
pub struct Sources {
    pub root: PathBuf,
    /// The project file's scenario folders.
    pub own_folders: Vec<PathBuf>,
    /// The project file's known-divergences file.
    pub own_known: Option<PathBuf>,
    /// The project file's folder (its proofs go beside its known-divergences file, else here).
    pub own_dir: Option<PathBuf>,
}

impl Sources {
    fn catalogue_known(&self, dialect: Dialect) -> PathBuf {
        let key = dialect.conventions().expect_key();
        (self.root.join("targets").join(key)).join("known-divergences.yaml")
    }

    fn catalogue_proofs(&self, dialect: Dialect) -> PathBuf {
        let key = dialect.conventions().expect_key();
        self.root.join("targets").join(key).join("ranges.yaml")
    }

    /// The project file's proofs: beside its known-divergences file, else beside it.
    pub fn own_proofs(&self) -> Option<PathBuf> {
        let beside = self
            .own_known
            .as_ref()
            .and_then(|k| k.parent().map(Path::to_path_buf));
        beside
            .or(self.own_dir.clone())
            .map(|d| d.join("ranges.yaml"))
    }

    fn is_own(&self, path: &Path) -> bool {
        self.own_folders.iter().any(|f| path.starts_with(f))
    }

    fn shown(&self, path: &Path) -> String {
        let own = self.is_own(path) || self.own_known.as_deref() == Some(path);
        let base = match (own, &self.own_dir) {
            (true, Some(dir)) => dir.as_path(),
            _ => self.root.as_path(),
        };
        path.strip_prefix(base)
            .unwrap_or(path)
            .to_string_lossy()
            .replace('\\', "/")
    }
}

/// Why the ranges could not be listed (a file that does not read).
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct EnumerateError(pub String);

/// Every range of `scenarios` (the files they come from) and of the known-divergence
/// files, the entries' scenarios taken by `takes`.
pub fn enumerate(
    sources: &Sources,
    scenarios: &[Scenario],
    takes: impl Fn(&str) -> bool,
) -> Result<Vec<Range>, EnumerateError> {
    let mut by_file: BTreeMap<&Path, Vec<&Scenario>> = BTreeMap::new();
    for s in scenarios {
        by_file.entry(s.path.as_path()).or_default().push(s);
    }
    let mut ranges = Vec::new();
    let mut hashes: BTreeMap<ScenarioId, String> = BTreeMap::new();
    for (path, loaded) in by_file {
        let text = std::fs::read_to_string(path)
            .map_err(|e| EnumerateError(format!("{}: {e}", path.display())))?;
        let file = ScenarioText::read(&text, path)?;
        for s in &loaded {
            hashes.insert(s.id.clone(), file.hash_of(s.case.as_deref()));
        }
        ranges.extend(file.ranges(sources, path, &text, &loaded));
    }
    for dialect in Dialect::ALL {
        let path = sources.catalogue_known(*dialect);
        let proofs = sources.catalogue_proofs(*dialect);
        ranges.extend(entries(
            sources,
            &path,
            Some(*dialect),
            &proofs,
            &hashes,
            &takes,
        )?);
    }
    if let (Some(path), Some(proofs)) = (&sources.own_known, sources.own_proofs()) {
        ranges.extend(entries(sources, path, None, &proofs, &hashes, &takes)?);
    }
    // A block is judged seeing through the known entries of its scenarios (a known bug
    // inside its range is not a change of behaviour): its proof is of those entries too.
    let seen = seen_through(sources)?;
    for r in ranges.iter_mut().filter(|r| r.entry.is_none()) {
        let mut parts = vec![r.hash.clone()];
        for id in &r.scenarios {
            parts.extend(
                seen.get(&(r.dialect, id.clone()))
                    .into_iter()
                    .flatten()
                    .cloned(),
            );
        }
        if parts.len() > 1 {
            let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
            r.hash = hash(&parts);
        }
    }
    Ok(ranges)
}

/// A known entry's prose: it changes no trial, so rewording it stales no proof.
const REASON: &str = "reason";

/// When a known entry is stale: no proof judges that, so it stales none.
const HIDDEN_BY: &str = "hidden_by";

/// `entry` without the keys `left_out`.
fn judged_entry(entry: &Value, left_out: &[&str]) -> Value {
    let mut value = entry.clone();
    if let Value::Mapping(m) = &mut value {
        for key in left_out {
            m.remove(*key);
        }
    }
    value
}

/// Each known entry as written (all but `observed`, the evidence, and the prose), by its dialect and
/// scenario, from the catalogue's files and the project's own.
fn seen_through(
    sources: &Sources,
) -> Result<BTreeMap<(Dialect, ScenarioId), Vec<String>>, EnumerateError> {
    let mut files: Vec<(PathBuf, Option<Dialect>)> = (Dialect::ALL.iter())
        .map(|d| (sources.catalogue_known(*d), Some(*d)))
        .collect();
    files.extend(sources.own_known.clone().map(|p| (p, None)));
    let mut out: BTreeMap<(Dialect, ScenarioId), Vec<String>> = BTreeMap::new();
    for (path, dialect) in files {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let raw: Option<Vec<Value>> = serde_yaml::from_str(&text)
            .map_err(|e| EnumerateError(format!("{}: {e}", sources.shown(&path))))?;
        for value in raw.into_iter().flatten() {
            let Some(scenario) = value.get("scenario").and_then(Value::as_str) else {
                continue;
            };
            let scenario = ScenarioId::from(scenario);
            let dialect = dialect.unwrap_or_else(|| {
                let named = value.get("target").and_then(Value::as_str);
                (named.map(|t| t.split('@').next().unwrap_or(t)))
                    .and_then(Dialect::from_key)
                    .unwrap_or_default()
            });
            out.entry((dialect, scenario))
                .or_default()
                .push(yaml(&judged_entry(
                    &value,
                    &["observed", REASON, HIDDEN_BY],
                )));
        }
    }
    Ok(out)
}

/// `sha256:<hex>` of `parts`, each ended by a newline.
pub fn hash(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p.as_bytes());
        h.update(b"\n");
    }
    let digest = h.finalize();
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

fn yaml(v: &Value) -> String {
    serde_yaml::to_string(v).expect("a YAML value serializes")
}

/// A scenario file's document, split into its cases when it has `cases:`; the prose keys
/// (`description`, `notes`, `source`) are left out of every hash, as they change no trial.
struct ScenarioText {
    doc: Value,
    cases: Option<(Vec<cases::Case>, Value)>,
}

impl ScenarioText {
    fn read(text: &str, path: &Path) -> Result<ScenarioText, EnumerateError> {
        let mut doc: Value = serde_yaml::from_str(text)
            .map_err(|e| EnumerateError(format!("{}: {e}", path.display())))?;
        if let Value::Mapping(m) = &mut doc {
            for prose in ["description", "notes", "source"] {
                m.remove(prose);
            }
        }
        let cases = match doc.get("cases") {
            Some(_) => Some(
                cases::split(doc.clone())
                    .map_err(|e| EnumerateError(format!("{}: {e}", path.display())))?,
            ),
            None => None,
        };
        Ok(ScenarioText { doc, cases })
    }

    /// What a trial of the file (or of its case `case`) runs and is held to.
    fn hash_of(&self, case: Option<&str>) -> String {
        let found = case.and_then(|name| {
            let (cases, body) = self.cases.as_ref()?;
            let c = cases.iter().find(|c| c.name == name)?;
            let expect = Value::Mapping(c.expect.clone());
            Some(hash(&[&yaml(&cases::substitute(body, c)), &yaml(&expect)]))
        });
        found.unwrap_or_else(|| hash(&[&yaml(&self.doc)]))
    }

    fn ranges(
        &self,
        sources: &Sources,
        path: &Path,
        text: &str,
        loaded: &[&Scenario],
    ) -> Vec<Range> {
        let own = sources.is_own(path);
        let file = sources.shown(path);
        let all: Vec<ScenarioId> = loaded.iter().map(|s| s.id.clone()).collect();
        let mut out = Vec::new();
        let mut push = |case: Option<String>,
                        expect: &Value,
                        scenarios: Vec<ScenarioId>,
                        hash: String,
                        from_line: usize| {
            let Value::Mapping(map) = expect else { return };
            for (key, block) in map {
                let Some(key) = key.as_str() else { continue };
                let Ok(parsed) = ExpectKey::parse(key) else {
                    continue;
                };
                let Some(dialect) = Dialect::from_key(&parsed.target) else {
                    continue;
                };
                let proofs = match own {
                    true => sources
                        .own_proofs()
                        .unwrap_or_else(|| sources.catalogue_proofs(dialect)),
                    false => sources.catalogue_proofs(dialect),
                };
                let at = line_of(text, key, from_line);
                let mut range = Range {
                    file: file.clone(),
                    path: path.to_path_buf(),
                    line: at,
                    dialect,
                    proofs: proofs.clone(),
                    case: case.clone(),
                    subject: Subject::Block(key.to_string()),
                    versions: VersionRange::parse(">=0.0.0").expect("a range"),
                    hash: hash.clone(),
                    scenarios: scenarios.clone(),
                    entry: None,
                };
                if let Some(versions) = parsed.range {
                    out.push(Range {
                        versions,
                        ..range.clone()
                    });
                }
                for (field, bound) in [("min_version", ">="), ("max_version", "<=")] {
                    let Some(v) = block.get(field).and_then(Value::as_str) else {
                        continue;
                    };
                    let Ok(versions) = VersionRange::parse(&format!("{bound}{v}")) else {
                        continue;
                    };
                    range.line = line_of(text, field, at);
                    out.push(Range {
                        subject: Subject::Bound {
                            key: key.to_string(),
                            field: field.to_string(),
                            version: v.to_string(),
                        },
                        versions,
                        ..range.clone()
                    });
                }
            }
        };
        match &self.cases {
            None => push(
                None,
                self.doc.get("expect").unwrap_or(&Value::Null),
                all,
                self.hash_of(None),
                1,
            ),
            Some((cases, body)) => {
                push(
                    None,
                    body.get("expect").unwrap_or(&Value::Null),
                    all,
                    self.hash_of(None),
                    1,
                );
                for c in cases.iter().filter(|c| !c.expect.is_empty()) {
                    let Some(s) = loaded
                        .iter()
                        .find(|s| s.case.as_deref() == Some(c.name.as_str()))
                    else {
                        continue;
                    };
                    let from = case_line(text, &c.name);
                    let expect = Value::Mapping(c.expect.clone());
                    push(
                        Some(c.name.clone()),
                        &expect,
                        vec![s.id.clone()],
                        self.hash_of(Some(&c.name)),
                        from,
                    );
                }
            }
        }
        out
    }
}

/// The first line from `from` (1-based) on that holds `needle`; `from` when none does.
fn line_of(text: &str, needle: &str, from: usize) -> usize {
    (text.lines().enumerate().skip(from.saturating_sub(1)))
        .find(|(_, l)| l.contains(needle))
        .map_or(from, |(n, _)| n + 1)
}

/// The line of the case item named `name` (after `cases:`): `name: x`, `name: "x"`,
/// `name: 'x'` or `"name": "x"`, the name whole (`x` is not found in `name: x2`).
fn case_line(text: &str, name: &str) -> usize {
    let start = line_of(text, "cases:", 1);
    let forms = [
        format!("\"name\": \"{name}\""),
        format!("name: \"{name}\""),
        format!("name: '{name}'"),
        format!("name: {name}"),
    ];
    let whole = |l: &str, f: &str| {
        (l.match_indices(f)).any(|(at, _)| {
            let next = l[at + f.len()..].chars().next();
            f.ends_with(['"', '\'']) || next.is_none_or(|c| matches!(c, ',' | '}' | ' ' | '#'))
        })
    };
    (text.lines().enumerate().skip(start))
        .find(|(_, l)| forms.iter().any(|f| whole(l, f)))
        .map_or(start, |(n, _)| n + 1)
}

/// The ranged entries of a known-divergences file (`dialect`: the file's; `None`: the
/// project's own, each entry's `target` says).
fn entries(
    sources: &Sources,
    path: &Path,
    dialect: Option<Dialect>,
    proofs: &Path,
    scenario_hashes: &BTreeMap<ScenarioId, String>,
    takes: impl Fn(&str) -> bool,
) -> Result<Vec<Range>, EnumerateError> {
    let file = sources.shown(path);
    let known = KnownList::load(path, &file).map_err(|e| EnumerateError(e.to_string()))?;
    if known.entries.is_empty() {
        return Ok(Vec::new());
    }
    let text = std::fs::read_to_string(path).map_err(|e| EnumerateError(format!("{file}: {e}")))?;
    let raw: Vec<Value> =
        serde_yaml::from_str(&text).map_err(|e| EnumerateError(format!("{file}: {e}")))?;
    let lines: Vec<usize> = (text.lines().enumerate())
        .filter(|(_, l)| l.starts_with("- "))
        .map(|(n, _)| n + 1)
        .collect();
    let mut out = Vec::new();
    for (i, (entry, value)) in known.entries.iter().zip(&raw).enumerate() {
        let Some(versions) = &entry.versions else {
            continue;
        };
        if !takes(&entry.scenario) {
            continue;
        }
        let dialect = dialect.unwrap_or_else(|| {
            let named = entry
                .target
                .as_deref()
                .map(|t| t.split('@').next().unwrap_or(t));
            named.and_then(Dialect::from_key).unwrap_or_default()
        });
        let judged = scenario_hashes
            .get(&entry.scenario)
            .map_or("no such scenario", String::as_str);
        out.push(Range {
            file: file.clone(),
            path: path.to_path_buf(),
            line: lines.get(i).copied().unwrap_or(1),
            dialect,
            proofs: proofs.to_path_buf(),
            case: None,
            subject: Subject::Entry {
                scenario: entry.scenario.clone(),
                kind: (value.get("kind").and_then(Value::as_str))
                    .map_or_else(|| entry.kind.as_str().to_string(), str::to_string),
                versions: versions.to_string(),
            },
            versions: versions.clone(),
            hash: hash(&[&yaml(&judged_entry(value, &[REASON, HIDDEN_BY])), judged]),
            scenarios: vec![entry.scenario.clone()],
            entry: Some(entry.clone()),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_case_line_is_found_after_cases_and_a_key_after_it() {
        let text = "expect:\n  claude-code: {}\ncases:\n  - {name: \"a\", x: 1}\n  - {name: \"b\", x: 2,\n     expect: {\"claude-code@<1.0.5\": {}}}\n";
        let from = case_line(text, "b");
        assert_eq!(from, 5);
        assert_eq!(line_of(text, "claude-code@<1.0.5", from), 6);
        // JSON-style items (edges/control-field-types), and a name another one starts with.
        let json = "cases:\n  - {\"name\": \"t=null2\", \"expect\": {\"claude-code@<2\": {}}}\n  - {\"name\": \"t=null\", \"expect\": {\"claude-code@<2\": {}}}\n  - {name: t=n, x: 1}\n  - {name: t=n2, x: 1}\n";
        assert_eq!(case_line(json, "t=null"), 3);
        assert_eq!(
            line_of(json, "claude-code@<2", case_line(json, "t=null")),
            3
        );
        assert_eq!(case_line(json, "t=n2"), 5);
        assert_eq!(case_line(json, "t=n"), 4);
        assert_eq!(hash(&["a"]), hash(&["a"]));
        assert_ne!(hash(&["a", "b"]), hash(&["ab"]));
    }
}
