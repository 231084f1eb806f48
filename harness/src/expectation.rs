//! Which expectation holds for a target at a version, and version blocks.
//!
//! A scenario's `expect` maps keys to expectations. `claude-code` is the general one;
//! `claude-code@>=2.1.300`, `claude-code@2.1.74`, `caliban@<0.16` hold for the versions
//! they name (see [`crate::version_range`]). A version block states only what differs
//! from the block it refines: each key it writes replaces that key (`requests`, `env`
//! and `files` merge key by key at any depth, so `requests: {bodies: {3: {stream: false}}}`
//! changes one field of one request pattern), and `frames_patch: {3: {...}}` replaces
//! single frames by index (`null` drops one, `{$merge: {..}}` changes some keys, a list splices). Ranges nest: a block inside another range
//! refines that one, and the innermost range that holds the running version wins.
//! Ranges that overlap without one holding the other, name the same versions twice,
//! name no version, or are covered entirely by narrower blocks are refused at load.

mod error;
pub mod rules;

pub use error::{BadKey, ExpectationError, PatchError};

use crate::dialect::Dialect;
use crate::scenario::expect::TargetExpect;
use crate::version_range::{parse_version, VersionRange};
use serde_yaml::{Mapping, Value};
use std::collections::BTreeMap;

/// An `expect` key: the target it is for and, for a version block, its versions.
#[derive(Debug, Clone)]
pub struct ExpectKey {
    pub target: String,
    pub range: Option<VersionRange>,
}

impl ExpectKey {
    pub fn parse(key: &str) -> Result<ExpectKey, BadKey> {
        match key.split_once('@') {
            None => Ok(ExpectKey {
                target: key.to_string(),
                range: None,
            }),
            Some((target, range)) => Ok(ExpectKey {
                target: target.to_string(),
                range: Some(VersionRange::parse(range).map_err(|source| BadKey {
                    key: key.to_string(),
                    source,
                })?),
            }),
        }
    }
}

/// The expectation for `target` (a dialect's key, `claude-code`) at `version` (as the
/// target reports it): the innermost version block that holds it, else the general one.
/// A version that does not read as one gets the general expectation.
pub fn for_version<'a>(
    expect: &'a BTreeMap<String, TargetExpect>,
    target: &str,
    version: &str,
) -> Option<&'a TargetExpect> {
    let general = expect.get(target);
    let Some(version) = parse_version(version) else {
        return general;
    };
    let matching: Vec<(VersionRange, &TargetExpect)> = expect
        .iter()
        .filter_map(|(key, exp)| {
            let key = ExpectKey::parse(key).ok()?;
            let range = key.range?;
            (key.target == target && range.contains(&version)).then_some((range, exp))
        })
        .collect();
    matching
        .iter()
        .find(|(r, _)| matching.iter().all(|(other, _)| other.holds(r)))
        .map(|(_, exp)| *exp)
        .or(general)
}

/// `expect` in the JSON Schema: keys are a target name, optionally `@` and a range.
pub fn expect_map_schema(gen: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
    use schemars::schema::{
        InstanceType, ObjectValidation, Schema, SchemaObject, StringValidation,
    };
    let names = SchemaObject {
        instance_type: Some(InstanceType::String.into()),
        string: Some(Box::new(StringValidation {
            pattern: Some("^[a-z][a-z0-9-]*(@[0-9<>=~^*., ]+)?$".into()),
            ..Default::default()
        })),
        ..Default::default()
    };
    let mut map = SchemaObject {
        instance_type: Some(InstanceType::Object.into()),
        object: Some(Box::new(ObjectValidation {
            additional_properties: Some(Box::new(gen.subschema_for::<TargetExpect>())),
            property_names: Some(Box::new(Schema::Object(names))),
            ..Default::default()
        })),
        ..Default::default()
    };
    map.metadata().description = Some(
        "Per target: `claude-code` holds for every version without a block of its own; `claude-code@>=2.1.300`, `claude-code@<2.1.200`, `claude-code@2.1.74` (semver ranges) hold for those versions and state only what differs: each key written replaces the general one (`requests`, `env`, `files` merge key by key), `frames_patch: {INDEX: pattern | null | {$merge: {...}} | [patterns]}` replaces, drops, partly changes or splices single frames. The innermost matching range wins; overlapping, duplicate, empty or unreachable ranges are refused.".into(),
    );
    Schema::Object(map)
}

/// Why a scenario's version blocks cannot be used, with where the key is written.
#[derive(Debug)]
pub struct BlockError {
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub kind: ExpectationError,
}

/// Checks the version blocks of a parsed scenario and replaces each with the complete
/// expectation it stands for. `text` is the file the scenario was parsed from.
pub fn resolve_version_blocks(
    text: &str,
    expect: &mut BTreeMap<String, TargetExpect>,
) -> Result<(), BlockError> {
    let at = |key: &str, kind: ExpectationError| {
        let (line, column) = locate_key(text, key).unzip();
        BlockError { line, column, kind }
    };
    let mut blocks: Vec<(String, ExpectKey)> = Vec::new();
    for (key, exp) in expect.iter() {
        let parsed = ExpectKey::parse(key).map_err(|e| at(key, e.into()))?;
        if Dialect::from_key(&parsed.target).is_none() {
            let target = parsed.target;
            return Err(at(key, ExpectationError::NotATarget { target }));
        }
        if parsed.range.is_none() && !exp.frames_patch.is_empty() {
            return Err(at(
                key,
                ExpectationError::PatchInGeneral { key: key.clone() },
            ));
        }
        if parsed.range.is_some() {
            blocks.push((key.clone(), parsed));
        }
    }
    check_ranges(&blocks).map_err(|(key, e)| at(&key, e))?;
    if blocks.is_empty() {
        return Ok(());
    }
    let raw: Value = serde_yaml::from_str(text).map_err(|e| at("", e.into()))?;
    let raw_expect = raw.get("expect").and_then(Value::as_mapping);
    let raw_block = |key: &str| {
        raw_expect
            .and_then(|m| m.get(key))
            .and_then(Value::as_mapping)
            .cloned()
            .unwrap_or_default()
    };
    for (key, parsed) in &blocks {
        let range = parsed.range.as_ref().expect("only version blocks");
        let mut layers: Vec<(&String, &VersionRange)> = blocks
            .iter()
            .filter(|(k, p)| p.target == parsed.target && k != key)
            .filter_map(|(k, p)| p.range.as_ref().map(|r| (k, r)))
            .filter(|(_, r)| r.holds(range))
            .collect();
        // Outermost first: a range that holds another is applied before it.
        layers.sort_by(|a, b| match a.1.holds(b.1) {
            true => std::cmp::Ordering::Less,
            false => std::cmp::Ordering::Greater,
        });
        let mut merged = raw_block(&parsed.target);
        for (outer, _) in layers {
            refine(&mut merged, &raw_block(outer))
                .map_err(|e| at(outer, ExpectationError::OuterPatch(e)))?;
        }
        refine(&mut merged, &raw_block(key)).map_err(|source| {
            at(
                key,
                ExpectationError::Patch {
                    key: key.clone(),
                    source,
                },
            )
        })?;
        let exp: TargetExpect =
            serde_yaml::from_value(Value::Mapping(merged)).map_err(|source| {
                at(
                    key,
                    ExpectationError::Merged {
                        key: key.clone(),
                        source,
                    },
                )
            })?;
        expect.insert(key.clone(), exp);
    }
    Ok(())
}

/// Refuses ranges that are empty, written twice, overlap without nesting, or are hidden
/// entirely behind narrower ones. Returns the key to blame and why.
fn check_ranges(blocks: &[(String, ExpectKey)]) -> Result<(), (String, ExpectationError)> {
    let range = |k: &ExpectKey| k.range.clone().expect("only version blocks");
    for (i, (key, a)) in blocks.iter().enumerate() {
        let ra = range(a);
        if ra.is_empty() {
            return Err((
                key.clone(),
                ExpectationError::NoVersion { key: key.clone() },
            ));
        }
        for (other, b) in blocks
            .iter()
            .skip(i + 1)
            .filter(|(_, b)| b.target == a.target)
        {
            let rb = range(b);
            let pair = || (key.clone(), other.clone());
            if ra.same_versions(&rb) {
                let (key, other) = pair();
                return Err((other.clone(), ExpectationError::SameVersions { key, other }));
            }
            if ra.overlaps(&rb) && !ra.holds(&rb) && !rb.holds(&ra) {
                let (key, other) = pair();
                return Err((other.clone(), ExpectationError::Overlap { key, other }));
            }
        }
        let inner: Vec<VersionRange> = blocks
            .iter()
            .filter(|(k, b)| b.target == a.target && k != key)
            .map(|(_, b)| range(b))
            .filter(|rb| ra.holds(rb))
            .collect();
        if ra.covered_by(&inner) {
            return Err((
                key.clone(),
                ExpectationError::Unreachable { key: key.clone() },
            ));
        }
    }
    Ok(())
}

const DEEPER: [&str; 3] = ["requests", "env", "files"];

/// Applies one version block (as written) to the expectation it refines.
fn refine(base: &mut Mapping, layer: &Mapping) -> Result<(), PatchError> {
    for (k, v) in layer {
        let name = k.as_str().unwrap_or_default();
        if name == "frames_patch" {
            continue;
        }
        match (base.get_mut(k), v) {
            (Some(Value::Mapping(b)), Value::Mapping(l)) if DEEPER.contains(&name) => {
                deep_merge(b, l)
            }
            _ => {
                base.insert(k.clone(), v.clone());
            }
        }
    }
    match layer.get("frames_patch") {
        None => Ok(()),
        Some(Value::Mapping(patch)) => patch_frames(base, patch),
        Some(_) => Err(PatchError::NotAMapping),
    }
}

/// Mappings merge key by key at any depth; anything else is replaced.
fn deep_merge(base: &mut Mapping, layer: &Mapping) {
    for (k, v) in layer {
        match (base.get_mut(k), v) {
            (Some(Value::Mapping(b)), Value::Mapping(l)) => deep_merge(b, l),
            _ => {
                base.insert(k.clone(), v.clone());
            }
        }
    }
}

/// `frames` (patterns as written) with a `frames_patch` applied, as a version block
/// would apply it.
pub fn apply_frames_patch(
    frames: &[serde_json::Value],
    patch: &BTreeMap<usize, serde_json::Value>,
) -> Result<Vec<serde_json::Value>, PatchError> {
    let yaml = |v: &serde_json::Value| serde_yaml::to_value(v);
    let mut base = Mapping::new();
    base.insert(
        "frames".into(),
        yaml(&serde_json::Value::from(frames.to_vec()))?,
    );
    let mut entries = Mapping::new();
    for (i, v) in patch {
        entries.insert(Value::from(*i as u64), yaml(v)?);
    }
    patch_frames(&mut base, &entries)?;
    let frames: serde_json::Value = serde_yaml::from_value(base["frames"].clone())?;
    Ok(frames.as_array().cloned().unwrap_or_default())
}

/// Applies `frames_patch` (see [`FramePatch`]). Indexes are those of the frames being
/// refined, whatever the other entries do.
fn patch_frames(base: &mut Mapping, patch: &Mapping) -> Result<(), PatchError> {
    let Some(Value::Sequence(frames)) = base.get_mut("frames") else {
        return Err(PatchError::NoFrames);
    };
    let mut entries = Vec::new();
    for (index, value) in patch {
        let i = index
            .as_u64()
            .map(|i| i as usize)
            .ok_or_else(|| PatchError::NotAnIndex {
                index: Box::new(index.clone()),
            })?;
        let past_end = i > frames.len() || (i == frames.len() && !value.is_sequence());
        if past_end {
            return Err(PatchError::PastTheEnd {
                index: i,
                len: frames.len(),
            });
        }
        entries.push((i, value));
    }
    entries.sort_by_key(|e| std::cmp::Reverse(e.0));
    for (i, value) in entries {
        match value {
            Value::Null => {
                frames.remove(i);
            }
            Value::Sequence(new) => {
                let end = (i + 1).min(frames.len());
                frames.splice(i..end, new.iter().cloned());
            }
            Value::Mapping(m) if m.len() == 1 && m.contains_key("$merge") => {
                let (Some(Value::Mapping(frame)), Some(Value::Mapping(keys))) =
                    (frames.get_mut(i), m.get("$merge"))
                else {
                    return Err(PatchError::MergeWhat { index: i });
                };
                for (k, v) in keys {
                    frame.insert(k.clone(), v.clone());
                }
            }
            other => frames[i] = other.clone(),
        }
    }
    Ok(())
}

/// Line and column (1-based) of `key` under the top-level `expect:`.
fn locate_key(text: &str, key: &str) -> Option<(usize, usize)> {
    let mut in_expect = false;
    for (n, line) in text.lines().enumerate() {
        if !line.starts_with([' ', '\t', '#']) && !line.is_empty() {
            in_expect = line.starts_with("expect:");
            if in_expect && key.is_empty() {
                return Some((n + 1, 1));
            }
            continue;
        }
        if !in_expect || key.is_empty() {
            continue;
        }
        let body = line.trim_start();
        let unquoted = body.trim_start_matches(['"', '\'', '{', ' ']);
        if let Some(rest) = unquoted.strip_prefix(key) {
            if rest.trim_start_matches(['"', '\'']).starts_with(':') {
                let column = line.len() - unquoted.len() + 1;
                return Some((n + 1, column));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests;
