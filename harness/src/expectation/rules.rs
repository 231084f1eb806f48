//! Release-wide rules (`targets/<dialect>/rules.yaml`): changes a range of releases
//! makes to every scenario at once, stated once instead of as a version block in each.
//!
//! - `anywhere: PATTERN` with `shape:`: frames the CLI may print anywhere in a run (a new
//!   `system` subtype, one notice by its text). They are left out before the frames are
//!   matched, except in a scenario whose own patterns name that frame kind (it is about
//!   those frames and pins them); their shape is checked either way.
//! - `every: PATTERN` with `shape:`: every frame of a kind carries keys it did not before.
//! - `shape: PATTERN`: what each frame `anywhere` or `every` selects must still match
//!   (checked like an invariant: a rule lets frames through, never whatever they hold).
//! - `request_keys: {path: {to: PATTERN}}`: the request shape changed there; a scenario's
//!   request pattern that names that path gets the rule's pattern instead.
//! - `every: PATTERN` with `frame_keys: {path: PATTERN}`: the same for frames: each frame
//!   pattern of that kind that names the path gets the rule's pattern there (a key every
//!   result carries from some release on is `$absent` before it).
//! - `missing: PATTERN`: frames of a kind the CLI does not print in this range (they came
//!   later): a scenario's entries for them are left out and they must be absent.
//!
//! Each rule names its versions and a note saying which release first showed it.

use crate::divergence::{Divergence, Kind};
use crate::file_error::FileError;
use crate::pattern::PatternValue;
use crate::pattern::{Captures, Pattern, Vars};
use crate::printed::output::Frame;
use crate::scenario::expect::{Applied, FrameEntry, RequestsExpect, TargetExpect};
use crate::version_range::{parse_version, VersionRange};
use serde::Deserialize;
use serde_json::Value;
use std::path::Path;

mod error;
pub use error::{InvalidRules, RuleError, RulesError};

/// `targets/<dialect>/rules.yaml`.
#[derive(Debug, Clone, Default)]
pub struct Rules {
    pub rules: Vec<Rule>,
}

/// One release-wide rule.
#[derive(Debug, Clone)]
pub struct Rule {
    pub name: String,
    pub versions: VersionRange,
    /// Which release first showed it, and what it is.
    pub note: String,
    pub change: Change,
    /// What each selected frame must match.
    pub shape: Option<Pattern>,
}

/// What a rule lets change.
#[derive(Debug, Clone)]
pub enum Change {
    /// Frames matching this may come anywhere.
    Anywhere(Pattern),
    /// Every frame matching this carries what `shape` says.
    Every(Pattern),
    /// Request-body patterns naming these paths get these patterns there.
    RequestKeys(serde_json::Map<String, Value>),
    /// Frame patterns of the kind the first names that name these paths get these
    /// patterns there.
    FrameKeys(Pattern, serde_json::Map<String, Value>),
    /// Frames matching this are not printed: expected entries for them are left out.
    Missing(Pattern),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RulesFile {
    rules: Vec<RuleFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleFile {
    name: String,
    versions: String,
    note: String,
    anywhere: Option<Value>,
    every: Option<Value>,
    shape: Option<Value>,
    request_keys: Option<serde_json::Map<String, Value>>,
    frame_keys: Option<serde_json::Map<String, Value>>,
    missing: Option<Value>,
}

impl Rules {
    /// `targets/<dialect>/rules.yaml` under `root`; no file: no rules.
    pub fn load(root: &Path, dialect: &str) -> Result<Rules, RulesError> {
        let path = root.join("targets").join(dialect).join("rules.yaml");
        match std::fs::read_to_string(&path) {
            Ok(text) => Rules::parse(&text)
                .map_err(|source| RulesError::Invalid(FileError::new(path, source))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Rules::default()),
            Err(source) => Err(RulesError::Unreadable(FileError::new(path, source))),
        }
    }

    pub fn parse(text: &str) -> Result<Rules, InvalidRules> {
        let file: RulesFile = serde_yaml::from_str(text)?;
        let rules = file
            .rules
            .into_iter()
            .map(|f| {
                let name = f.name.clone();
                Rule::from_file(f).map_err(|source| InvalidRules::Rule { name, source })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut names: Vec<&str> = rules.iter().map(|r| r.name.as_str()).collect();
        names.sort_unstable();
        if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
            let name = w[0].to_string();
            return Err(InvalidRules::Twice { name });
        }
        Ok(Rules { rules })
    }

    /// The rules holding at `version` (none when it does not read as a version).
    pub fn at(&self, version: &str) -> Vec<&Rule> {
        let Some(v) = parse_version(version) else {
            return Vec::new();
        };
        self.rules
            .iter()
            .filter(|r| r.versions.contains(&v))
            .collect()
    }

    /// `expect` with the rules holding at `version` applied, and the rules applied.
    pub fn apply(&self, expect: &TargetExpect, version: &str) -> (TargetExpect, Vec<Applied>) {
        self.apply_printed_by(expect, version, version)
    }

    /// [`Rules::apply`] for output that `printed_by` printed, held to `version`'s
    /// expectation: the rules at `version`, and also the rules that only let frames through
    /// at `printed_by` (frames a release prints anywhere say nothing about the scenario, so
    /// a release's output checked against another release's expectation keeps them out).
    pub fn apply_printed_by(
        &self,
        expect: &TargetExpect,
        version: &str,
        printed_by: &str,
    ) -> (TargetExpect, Vec<Applied>) {
        let (held, printing) = (parse_version(version), parse_version(printed_by));
        let holds = |r: &Rule, v: &Option<semver::Version>| {
            v.as_ref().is_some_and(|v| r.versions.contains(v))
        };
        let lets_through = |r: &Rule| matches!(r.change, Change::Anywhere(_) | Change::Every(_));
        let rules = (self.rules.iter())
            .filter(|r| holds(r, &held) || (lets_through(r) && holds(r, &printing)));
        let mut out = expect.clone();
        let mut applied = Vec::new();
        for rule in rules {
            if let Some(a) = rule.apply_to(&mut out) {
                applied.push(a);
            }
        }
        attach(&mut out, &applied);
        (out, applied)
    }
}

/// Each run of a multi-run scenario checks the same rules.
fn attach(expect: &mut TargetExpect, applied: &[Applied]) {
    expect.rules = applied.to_vec();
    for run in &mut expect.runs {
        attach(run, applied);
    }
}

impl Rule {
    fn from_file(f: RuleFile) -> Result<Rule, RuleError> {
        let versions = VersionRange::parse(&f.versions)?;
        if f.note.trim().is_empty() {
            return Err(RuleError::NoNote);
        }
        let change = match (&f.anywhere, &f.every, &f.request_keys, &f.missing) {
            (Some(p), None, None, None) => Change::Anywhere(Pattern::compile(p)?),
            (None, Some(p), None, None) => match &f.frame_keys {
                Some(k) => Change::FrameKeys(Pattern::compile(p)?, k.clone()),
                None => Change::Every(Pattern::compile(p)?),
            },
            (None, None, Some(k), None) => Change::RequestKeys(k.clone()),
            (None, None, None, Some(p)) => Change::Missing(Pattern::compile(p)?),
            _ => return Err(RuleError::Changes),
        };
        if f.frame_keys.is_some() && !matches!(change, Change::FrameKeys(..)) {
            return Err(RuleError::FrameKeysWithoutEvery);
        }
        if matches!(change, Change::Every(_)) && f.shape.is_none() {
            return Err(RuleError::EveryWithoutShape);
        }
        if matches!(change, Change::Anywhere(_)) && f.shape.is_none() {
            return Err(RuleError::AnywhereWithoutShape);
        }
        let shape = f.shape.as_ref().map(Pattern::compile).transpose()?;
        Ok(Rule {
            name: f.name.clone(),
            versions,
            note: f.note.clone(),
            change,
            shape,
        })
    }

    /// Applies the rule to `expect` (and each run's); `None` when the scenario is exempt.
    fn apply_to(&self, expect: &mut TargetExpect) -> Option<Applied> {
        let mut applied = Applied {
            name: self.name.clone(),
            select: None,
            shape: self.shape.clone(),
            replaced: 0,
        };
        match &self.change {
            Change::Anywhere(select) => {
                // A scenario about these frames pins them itself; their shape still holds.
                if !names_kind(expect, select.source()) {
                    add_ignore(expect, select);
                }
                applied.select = Some(select.clone());
            }
            Change::Every(select) => applied.select = Some(select.clone()),
            Change::RequestKeys(keys) => applied.replaced = replace_request_keys(expect, keys),
            Change::FrameKeys(select, keys) => {
                applied.replaced = replace_frame_keys(expect, select.source(), keys)
            }
            Change::Missing(select) => applied.replaced = leave_out(expect, select),
        }
        let rewrites = matches!(
            self.change,
            Change::RequestKeys(_) | Change::FrameKeys(..) | Change::Missing(_)
        );
        (!rewrites || applied.replaced > 0).then_some(applied)
    }
}

/// Whether any pattern of `expect` (frames, ignore, absent, every run's) names a frame
/// with the `type` and `subtype` `select` names.
fn names_kind(expect: &TargetExpect, select: &Value) -> bool {
    let kind = |v: &Value| (v.get("type").cloned(), v.get("subtype").cloned());
    let wanted = kind(select);
    let mut sources: Vec<Value> = expect.frames.iter().map(|e| e.0.source()).collect();
    sources.extend(expect.ignore.iter().map(|p| p.0.source().clone()));
    sources.extend(expect.absent.iter().map(|p| p.0.source().clone()));
    let mut found = false;
    for s in &sources {
        visit_frames(s, &mut |f| found |= kind(f) == wanted);
    }
    found || expect.runs.iter().any(|r| names_kind(r, select))
}

/// Calls `f` on each frame pattern of an entry (an `any_order` group holds several).
fn visit_frames(entry: &Value, f: &mut impl FnMut(&Value)) {
    match entry.get("any_order").and_then(Value::as_array) {
        Some(runs) => {
            for run in runs {
                match run.as_array() {
                    Some(frames) => frames.iter().for_each(&mut *f),
                    None => f(run),
                }
            }
        }
        None => f(entry),
    }
}

fn add_ignore(expect: &mut TargetExpect, select: &Pattern) {
    expect.ignore.push(PatternValue(select.clone()));
    for run in &mut expect.runs {
        add_ignore(run, select);
    }
}

/// Replaces, in every request-body pattern, the pattern at each path `keys` names (when
/// the pattern names it); how many it replaced.
fn replace_request_keys(expect: &mut TargetExpect, keys: &serde_json::Map<String, Value>) -> usize {
    let mut n = 0;
    if let Some(req) = &mut expect.requests {
        n += replace_in_requests(req, keys);
    }
    for run in &mut expect.runs {
        n += replace_request_keys(run, keys);
    }
    n
}

fn replace_in_requests(req: &mut RequestsExpect, keys: &serde_json::Map<String, Value>) -> usize {
    let mut n = 0;
    let patterns = req
        .bodies
        .values_mut()
        .chain(req.all.iter_mut())
        .chain(req.some.iter_mut());
    for p in patterns {
        let mut source = p.0.source().clone();
        let here = replace_at(&mut source, keys);
        if here > 0 {
            // The rule's patterns compiled when it was loaded; the merge compiles too.
            if let Ok(compiled) = Pattern::compile(&source) {
                p.0 = compiled;
                n += here;
            }
        }
    }
    n
}

/// Replaces, in `pattern`, each leaf of `keys` whose path `pattern` names.
fn replace_at(pattern: &mut Value, keys: &serde_json::Map<String, Value>) -> usize {
    let Some(obj) = pattern.as_object_mut() else {
        return 0;
    };
    let mut n = 0;
    for (k, want) in keys {
        let Some(have) = obj.get_mut(k) else {
            continue;
        };
        match want.as_object() {
            Some(deeper) if have.is_object() && !crate::pattern::is_operator(want) => {
                n += replace_at(have, deeper)
            }
            _ => {
                *have = want.clone();
                n += 1;
            }
        }
    }
    n
}

/// Whether frame pattern `source` names each plain value `select` names (`{type: result}`
/// selects every result pattern).
fn of_kind(source: &Value, select: &Value) -> bool {
    let Some(want) = select.as_object() else {
        return false;
    };
    want.iter()
        .filter(|(_, v)| !v.is_object() && !v.is_array())
        .all(|(k, v)| source.get(k) == Some(v))
}

/// Rewrites each frame pattern of `expect` (and of each run's, `any_order` groups
/// included) with `f`, recompiling it when `f` reports a change; the changes `f` reported.
fn rewrite_frames(expect: &mut TargetExpect, f: &mut impl FnMut(&mut Value) -> usize) -> usize {
    let mut n = 0;
    for entry in &mut expect.frames {
        let mut source = entry.0.source();
        let here = match source.get_mut("any_order").and_then(Value::as_array_mut) {
            Some(group) => group
                .iter_mut()
                .map(|run| match run.as_array_mut() {
                    Some(seq) => seq.iter_mut().map(&mut *f).sum(),
                    None => f(run),
                })
                .sum(),
            None => f(&mut source),
        };
        if here > 0 {
            if let Ok(FrameEntry(compiled)) = serde_json::from_value(source) {
                entry.0 = compiled;
                n += here;
            }
        }
    }
    for run in &mut expect.runs {
        n += rewrite_frames(run, f);
    }
    n
}

/// Replaces, in every frame pattern of the kind `select` names, the pattern at each path
/// `keys` names (when the pattern names it); how many it replaced.
fn replace_frame_keys(
    expect: &mut TargetExpect,
    select: &Value,
    keys: &serde_json::Map<String, Value>,
) -> usize {
    rewrite_frames(expect, &mut |p: &mut Value| {
        if of_kind(p, select) {
            replace_at(p, keys)
        } else {
            0
        }
    })
}

/// Leaves the entries of the kind `select` names out of `expect`'s frames (and each
/// run's, `any_order` groups included) and makes such frames absent there; how many it
/// left out.
fn leave_out(expect: &mut TargetExpect, select: &Pattern) -> usize {
    let wanted = select.source();
    let mut n = 0;
    let mut kept = Vec::with_capacity(expect.frames.len());
    for entry in std::mem::take(&mut expect.frames) {
        let mut source = entry.0.source();
        let Some(group) = source.get_mut("any_order").and_then(Value::as_array_mut) else {
            match of_kind(&source, wanted) {
                true => n += 1,
                false => kept.push(entry),
            }
            continue;
        };
        let count =
            |g: &Vec<Value>| -> usize { g.iter().map(|r| r.as_array().map_or(1, Vec::len)).sum() };
        let before = count(group);
        for run in group.iter_mut() {
            if let Some(seq) = run.as_array_mut() {
                seq.retain(|p| !of_kind(p, wanted));
            }
        }
        group.retain(|run| {
            run.as_array()
                .map_or(!of_kind(run, wanted), |s| !s.is_empty())
        });
        let here = before - count(group);
        n += here;
        match (here, group.is_empty()) {
            (0, _) => kept.push(entry),
            (_, true) => {}
            _ => kept.extend(serde_json::from_value::<FrameEntry>(source).ok()),
        }
    }
    expect.frames = kept;
    if n > 0 {
        expect.absent.push(PatternValue(select.clone()));
    }
    for run in &mut expect.runs {
        n += leave_out(run, select);
    }
    n
}

/// The frames a rule selects that break its `shape`, one divergence each, and whether
/// it selected any frame.
pub fn check_shapes(applied: &Applied, frames: &[Frame], vars: &Vars) -> (Vec<Divergence>, bool) {
    let caps = Captures::new();
    let Some(select) = &applied.select else {
        return (Vec::new(), applied.replaced > 0);
    };
    let mut out = Vec::new();
    let mut any = false;
    for frame in frames
        .iter()
        .filter(|f| select.is_match(&f.value, vars, &caps))
    {
        any = true;
        let Some(shape) = &applied.shape else {
            continue;
        };
        let mut c = caps.clone();
        if let Err(m) = shape.check(&frame.value, vars, &mut c) {
            out.push(
                Divergence::new(
                    Kind::Invariant,
                    format!(
                        "frame {} is one rule `{}` lets through but does not have its shape: {}",
                        frame.index, applied.name, m.reason
                    ),
                )
                .at_frame(frame.index, frame.line)
                .at_path(m.path)
                .expected(shape.source().clone())
                .actual(frame.value.clone()),
            );
        }
    }
    (out, any)
}

#[cfg(test)]
mod tests;
