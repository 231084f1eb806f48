//! The report model: one [`ScenarioParity`] per scenario, gathered into [`Parity`]
//! (`parity.json`), with the counts and the shape differences said once.

use super::aspects::{compare, Aspect, AspectRow, Side, Verdict};
use super::fields::{self, FieldDifference, PathRow};
use crate::dialect::Dialect;
use crate::report::timestamp;
use crate::text::clip_line;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::time::SystemTime;

pub const SCHEMA_VERSION: u32 = 1;

/// A target as the comparison names it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetSide {
    pub name: String,
    pub version: String,
    /// Its dialect (`claude-code`, `caliban`, `qwen-code`); none when the target is unavailable.
    #[serde(default)]
    pub dialect: Option<Dialect>,
}

/// One scenario (or captured case) on both targets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScenarioParity {
    pub scenario: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Why the two sides could not be compared (skipped, not captured, not started).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_compared: Option<String>,
    /// Targets that could not run the scenario as written (it has no expectation for them
    /// and they rejected its flags or stdin).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cannot_run_as_written: Vec<String>,
    /// Targets without the control protocol, given a control/ scenario (one with a
    /// `client:` section): they cannot run it at all, so it is not compared.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub no_control_protocol: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Targets that fail their own expectation here (not a parity difference, but the
    /// comparison's gate fails on it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fails_own_expectation: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aspects: Vec<AspectRow>,
    /// The substantive differences, one sentence each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub differences: Vec<String>,
    /// The key paths whose presence, JSON type or normalised value differs, per frame kind.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<FieldDifference>,
}

/// A scenario's parity and, per side, the frame kinds that carried nothing neutral.
pub type Compared = (ScenarioParity, [BTreeSet<String>; 2]);

impl ScenarioParity {
    pub(super) fn not_compared(scenario: &str, why: String) -> Compared {
        let sp = ScenarioParity {
            scenario: scenario.to_string(),
            description: None,
            not_compared: Some(why),
            cannot_run_as_written: vec![],
            no_control_protocol: vec![],
            notes: vec![],
            fails_own_expectation: vec![],
            aspects: vec![],
            differences: vec![],
            fields: vec![],
        };
        (sp, Default::default())
    }

    /// Compares two runs and keeps the rows, the differences, and stderr as context.
    pub fn of(scenario: &str, a: Side, b: Side) -> Compared {
        let c = compare(a, b);
        let mut notes = Vec::new();
        for side in [&a, &b] {
            if let Some(line) = side.run.stderr_headline() {
                notes.push(format!("{} stderr: {}", side.name, clip_line(line, 200)));
            }
        }
        let differences = c.differences(a.name, b.name);
        let sp = ScenarioParity {
            scenario: scenario.to_string(),
            description: None,
            not_compared: None,
            cannot_run_as_written: vec![],
            no_control_protocol: vec![],
            notes,
            fails_own_expectation: vec![],
            aspects: c.rows,
            differences,
            fields: fields::differences(&a.run.frames, &b.run.frames),
        };
        (sp, c.unmapped)
    }

    /// Run as written on both, and something differs: in substance or in a field.
    pub fn differs(&self) -> bool {
        self.cannot_run_as_written.is_empty()
            && !(self.differences.is_empty() && self.fields.is_empty())
    }

    fn differs_in(&self, aspect: Aspect) -> bool {
        self.aspects
            .iter()
            .any(|r| r.aspect == aspect && r.verdict == Verdict::Differs)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParityCounts {
    pub scenarios: usize,
    pub compared: usize,
    /// Run on both as written, with at least one difference (in substance or in a field).
    pub differ: usize,
    /// Of those, the ones with a difference in substance (neutral events).
    #[serde(default)]
    pub differ_in_substance: usize,
    /// Of those, the ones with a key path that differs (presence, JSON type, value).
    #[serde(default)]
    pub differ_in_fields: usize,
    pub not_compared: usize,
    /// Scenarios a target could not run as written.
    pub cannot_run_as_written: usize,
    /// Of the scenarios not compared: control/ scenarios, which a side without the control
    /// protocol cannot run at all.
    #[serde(default)]
    pub no_control_protocol: usize,
    /// Scenarios where a target fails its own expectation: the comparison exits 1.
    #[serde(default)]
    pub fail_own_expectation: usize,
}

impl ParityCounts {
    fn of(scenarios: &[ScenarioParity]) -> ParityCounts {
        let count = |f: fn(&ScenarioParity) -> bool| scenarios.iter().filter(|s| f(s)).count();
        ParityCounts {
            scenarios: scenarios.len(),
            compared: count(|s| s.not_compared.is_none()),
            differ: count(ScenarioParity::differs),
            differ_in_substance: count(|s| {
                !s.differences.is_empty() && s.cannot_run_as_written.is_empty()
            }),
            differ_in_fields: count(|s| !s.fields.is_empty() && s.cannot_run_as_written.is_empty()),
            not_compared: count(|s| s.not_compared.is_some()),
            cannot_run_as_written: count(|s| !s.cannot_run_as_written.is_empty()),
            no_control_protocol: count(|s| !s.no_control_protocol.is_empty()),
            fail_own_expectation: count(|s| !s.fails_own_expectation.is_empty()),
        }
    }
}

/// `parity.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Parity {
    pub schema_version: u32,
    pub generated_at: String,
    /// The command that made this report.
    pub command: String,
    pub a: TargetSide,
    pub b: TargetSide,
    pub counts: ParityCounts,
    /// Caveats about the whole comparison.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// How the dialects differ in shape: said once here, not per scenario.
    pub known_shape_differences: Vec<String>,
    /// Per target: kinds of frames that carry nothing neutral, seen in these runs.
    pub unmapped_frames: BTreeMap<String, Vec<String>>,
    /// Per aspect: how many compared scenarios differ there in substance.
    pub differences_by_aspect: BTreeMap<String, usize>,
    /// Per frame kind, key path and class of difference: the scenarios it differs in,
    /// the most first.
    #[serde(default)]
    pub fields_by_path: Vec<PathRow>,
    pub scenarios: Vec<ScenarioParity>,
}

impl Parity {
    pub fn new(command: String, a: TargetSide, b: TargetSide, results: Vec<Compared>) -> Parity {
        let mut unmapped: [BTreeSet<String>; 2] = Default::default();
        let mut scenarios = Vec::new();
        for (s, u) in results {
            for (all, one) in unmapped.iter_mut().zip(u) {
                all.extend(one);
            }
            scenarios.push(s);
        }
        let known = known_shape_differences(a.dialect, b.dialect);
        let [ua, ub] = unmapped;
        let mut unmapped_frames = BTreeMap::new();
        unmapped_frames.insert(a.name.clone(), ua.into_iter().collect());
        unmapped_frames.insert(b.name.clone(), ub.into_iter().collect());
        let fields_by_path = fields::by_path(
            (scenarios.iter())
                .filter(|s| s.cannot_run_as_written.is_empty())
                .map(|s| (s.scenario.as_str(), s.fields.as_slice())),
            &a.name,
            &b.name,
        );
        Parity {
            schema_version: SCHEMA_VERSION,
            generated_at: timestamp(SystemTime::now()),
            command,
            a,
            b,
            counts: ParityCounts::of(&scenarios),
            notes: Vec::new(),
            known_shape_differences: known,
            unmapped_frames,
            differences_by_aspect: differences_by_aspect(&scenarios),
            fields_by_path,
            scenarios,
        }
    }
}

/// Per aspect label, the scenarios run as written on both that differ there in substance.
fn differences_by_aspect(scenarios: &[ScenarioParity]) -> BTreeMap<String, usize> {
    let mut by_aspect = BTreeMap::new();
    for aspect in Aspect::ALL {
        let n = scenarios
            .iter()
            .filter(|s| s.cannot_run_as_written.is_empty() && s.differs_in(aspect))
            .count();
        if n > 0 {
            by_aspect.insert(aspect.label().to_string(), n);
        }
    }
    by_aspect
}

/// The shape differences between two dialects' stream-json, as the adapters absorb them:
/// each side's differences from Claude Code (its `shape_differences`). Empty when both
/// sides speak one dialect.
pub fn known_shape_differences(a: Option<Dialect>, b: Option<Dialect>) -> Vec<String> {
    match (a, b) {
        (Some(a), Some(b)) if a != b => [a, b]
            .iter()
            .flat_map(|d| markdown_items(d.conventions().shape_differences()))
            .collect(),
        _ => Vec::new(),
    }
}

/// The items of a Markdown `- ` list, each with its lines joined by spaces; lines before
/// the first item (a heading, an introduction) are left out.
fn markdown_items(md: &str) -> Vec<String> {
    let mut items: Vec<String> = Vec::new();
    for line in md.lines() {
        if let Some(item) = line.strip_prefix("- ") {
            items.push(item.to_string());
        } else if let (Some(item), false) = (items.last_mut(), line.trim().is_empty()) {
            item.push(' ');
            item.push_str(line.trim());
        }
    }
    items
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_items_join_wrapped_lines_and_skip_the_heading() {
        let md = "# Title\n\nIntro\nmore.\n\n- one\n  two\n- three\n";
        assert_eq!(markdown_items(md), ["one two", "three"]);
    }

    #[test]
    fn shape_differences_only_between_dialects() {
        let (cc, cal) = (Some(Dialect::ClaudeCode), Some(Dialect::Caliban));
        let qwen = Some(Dialect::QwenCode);
        assert!(known_shape_differences(cc, cc).is_empty());
        assert!(known_shape_differences(cc, None).is_empty());
        let known = known_shape_differences(cc, cal);
        assert!(known[0].starts_with("Assistant output: Claude Code prints `assistant` frames"));
        assert!(known.iter().all(|k| !k.contains('\n') && !k.contains("  ")));
        assert_eq!(known, known_shape_differences(cal, cc));
        let to_qwen = known_shape_differences(cc, qwen);
        assert!(to_qwen[0].starts_with("system/init fields: Qwen Code"));
        // Two dialects other than Claude Code: both lists, each against Claude Code.
        let both = known_shape_differences(cal, qwen);
        assert_eq!(both.len(), known.len() + to_qwen.len());
    }
}
