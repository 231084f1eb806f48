//! What one target must do in a scenario (`expect.<target>`): frames, exit, requests,
//! files, text. Data, checked when the file is read; the checks run in `runner::check`.

use super::input::StdinLine;
use crate::matcher::{Expected, Mode};
use crate::pattern::{Pattern, PatternValue};
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use std::collections::BTreeMap;

/// What one target must do in this scenario.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct TargetExpect {
    /// Skip this target for a reason its run shows (see `Skip`).
    pub skip: Option<super::skip::Skip>,
    /// Oldest version of the target this expectation holds for.
    pub min_version: Option<String>,
    pub max_version: Option<String>,
    /// Features this target must offer on top of the scenario's.
    pub features: Vec<String>,
    /// Replaces the scenario's `args` for this target.
    pub args: Option<Vec<String>>,
    /// Replaces the scenario's `prompt` for this target.
    pub prompt: Option<String>,
    /// Replaces the scenario's `stdin` for this target (dialects shape input frames differently).
    pub stdin: Option<Vec<StdinLine>>,
    /// Added to the scenario's `env` for this target.
    pub env: BTreeMap<String, String>,

    pub mode: Mode,
    /// Frames to leave out before matching (in both modes).
    pub ignore: Vec<PatternValue>,
    /// The expected frames, in order; `{any_order: [...]}` for a group in any order.
    pub frames: Vec<FrameEntry>,
    /// In a version block: frames of the block it refines, by 0-based index
    /// (`{3: {type: result, is_error: true}}`); see `FramePatch`.
    #[serde(default)]
    pub frames_patch: BTreeMap<usize, FramePatch>,
    /// Patterns no frame may match.
    pub absent: Vec<PatternValue>,
    pub exit_code: Option<i32>,
    pub stderr: Option<TextExpect>,
    /// stdout as text (for `output_format: text`).
    pub text: Option<TextExpect>,
    pub requests: Option<RequestsExpect>,
    /// Files in the working directory after the run.
    pub files: BTreeMap<String, FileExpect>,
    /// Seconds before the CLI is killed (default 60).
    pub timeout: Option<u64>,
    /// Seconds each control request the scripted client sends has to get its answer: past
    /// that the CLI is killed and the trial fails as a hang, in seconds rather than at the
    /// timeout (default: no deadline but the timeout).
    pub answer_within: Option<u64>,
    /// The behaviour pinned is a hang (see `Hang`); by default the CLI exits by itself.
    pub hangs: Option<Hang>,
    /// How many turns (result frames) the run has; default 1, or the number of user frames on stdin.
    pub turns: Option<usize>,
    /// Protocol invariants this scenario turns off, with the reason.
    pub invariants: Option<InvariantOptOut>,
    /// In a multi-run scenario: one expectation per entry of the scenario's `runs`, in order.
    pub runs: Vec<TargetExpect>,
    /// The release-wide rules applied to this expectation (`expectation::rules`).
    #[serde(skip)]
    #[schemars(skip)]
    pub rules: Vec<Applied>,
}

/// A hang pinned as a release's behaviour, so that it is checked rather than skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Hang {
    /// The CLI prints its last result and does not exit: the harness kills it after the
    /// grace period. Exiting by itself is then a divergence (`exit code`); the
    /// `exits_after_result` invariant is not reported; leave `exit_code` out.
    AfterResult,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InvariantOptOut {
    pub skip: Vec<crate::invariants::Invariant>,
    pub reason: String,
}

/// One entry of `frames`.
#[derive(Debug, Clone)]
pub struct FrameEntry(pub Expected);

impl<'de> Deserialize<'de> for FrameEntry {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let v = Value::deserialize(d)?;
        let group = match &v {
            Value::Object(map) if map.len() == 1 && map.contains_key("any_order") => {
                &map["any_order"]
            }
            _ => {
                return Pattern::compile(&v)
                    .map(|p| FrameEntry(Expected::Frame(p)))
                    .map_err(Error::custom)
            }
        };
        let Value::Array(members) = group else {
            return Err(Error::custom(
                "`any_order` takes a list of patterns (or of lists of patterns that stay in order)",
            ));
        };
        let mut runs = Vec::with_capacity(members.len());
        for (i, m) in members.iter().enumerate() {
            let run = match m {
                Value::Array(seq) => seq.iter().collect(),
                single => vec![single],
            };
            let run = run
                .into_iter()
                .map(|p| {
                    Pattern::compile(p).map_err(|e| Error::custom(format!("any_order[{i}]: {e}")))
                })
                .collect::<Result<Vec<_>, _>>()?;
            if run.is_empty() {
                return Err(Error::custom(format!("any_order[{i}] is an empty list")));
            }
            runs.push(run);
        }
        Ok(FrameEntry(Expected::AnyOrder(runs)))
    }
}

impl JsonSchema for FrameEntry {
    fn schema_name() -> String {
        "FrameEntry".into()
    }
    fn json_schema(gen: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
        let mut s = schemars::schema::SchemaObject::default();
        s.metadata().description = Some(
            "A frame pattern, or {any_order: [pattern | [pattern, ...], ...]}: frames that may come in any order (each inner list keeps its own order).".into(),
        );
        let _ = gen;
        s.into()
    }
}

/// Text expectations: a plain string must be equal; a map says how to compare.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged, try_from = "RawTextExpect")]
pub enum TextExpect {
    Equals(String),
    Rules(TextRules),
}

/// `TextExpect` as written, before its regex is compiled: an untagged enum would hide
/// why a variant failed, so the regex is compiled after the shape is known.
#[derive(Deserialize)]
#[serde(untagged)]
enum RawTextExpect {
    Equals(String),
    Rules(RawTextRules),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTextRules {
    #[serde(default)]
    equals: Option<String>,
    #[serde(default)]
    contains: Vec<String>,
    #[serde(default)]
    not_contains: Vec<String>,
    #[serde(default)]
    regex: Option<String>,
    #[serde(default)]
    empty: Option<bool>,
}

impl TryFrom<RawTextExpect> for TextExpect {
    type Error = BadRegex;
    fn try_from(raw: RawTextExpect) -> Result<Self, BadRegex> {
        let r = match raw {
            RawTextExpect::Equals(s) => return Ok(TextExpect::Equals(s)),
            RawTextExpect::Rules(r) => r,
        };
        Ok(TextExpect::Rules(TextRules {
            equals: r.equals,
            contains: r.contains,
            not_contains: r.not_contains,
            regex: r.regex.map(TextRegex::try_from).transpose()?,
            empty: r.empty,
        }))
    }
}

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TextRules {
    #[serde(default)]
    pub equals: Option<String>,
    #[serde(default)]
    pub contains: Vec<String>,
    #[serde(default)]
    pub not_contains: Vec<String>,
    #[serde(default)]
    pub regex: Option<TextRegex>,
    #[serde(default)]
    pub empty: Option<bool>,
}

/// A regex compiled when the file is read, so a bad one is reported with its line.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(try_from = "String")]
#[schemars(transparent)]
pub struct TextRegex(#[schemars(with = "String")] pub regex::Regex);

/// A `regex` in a text expectation that does not compile.
#[derive(Debug, thiserror::Error)]
#[error("bad regex: {0}")]
pub struct BadRegex(#[source] regex::Error);

impl TryFrom<String> for TextRegex {
    type Error = BadRegex;
    fn try_from(s: String) -> Result<Self, BadRegex> {
        regex::Regex::new(&s).map(TextRegex).map_err(BadRegex)
    }
}

/// What a text does not do that its [`TextExpect`] asks; `found` is the text, cut.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TextMismatch {
    /// Not equal (trailing whitespace aside).
    #[error("expected {want:?}, found {found:?}")]
    NotEqual { want: String, found: String },
    /// A `contains` it lacks.
    #[error("expected it to contain {want:?}, found {found:?}")]
    Lacks { want: String, found: String },
    /// A `not_contains` it holds.
    #[error("expected it not to contain {unwanted:?}, found {found:?}")]
    Contains { unwanted: String, found: String },
    /// A `regex` it does not match.
    #[error("expected it to match /{regex}/, found {found:?}")]
    NoMatch { regex: String, found: String },
    /// Text where `empty: true` wants none.
    #[error("expected nothing, found {found:?}")]
    NotEmpty { found: String },
    /// No text where `empty: false` wants some.
    #[error("expected some text, found none")]
    Empty,
}

impl TextExpect {
    /// Returns what does not hold, if anything.
    pub fn check(&self, text: &str) -> Result<(), TextMismatch> {
        let found = || crate::text::clip(text, 300);
        let rules = match self {
            TextExpect::Equals(s) => {
                return if text.trim_end() == s.trim_end() {
                    Ok(())
                } else {
                    Err(TextMismatch::NotEqual {
                        want: s.clone(),
                        found: found(),
                    })
                }
            }
            TextExpect::Rules(r) => r,
        };
        if let Some(s) = &rules.equals {
            if text.trim_end() != s.trim_end() {
                let want = s.clone();
                return Err(TextMismatch::NotEqual {
                    want,
                    found: found(),
                });
            }
        }
        if let Some(c) = rules.contains.iter().find(|c| !text.contains(c.as_str())) {
            let want = c.clone();
            return Err(TextMismatch::Lacks {
                want,
                found: found(),
            });
        }
        if let Some(c) = rules
            .not_contains
            .iter()
            .find(|c| text.contains(c.as_str()))
        {
            let unwanted = c.clone();
            return Err(TextMismatch::Contains {
                unwanted,
                found: found(),
            });
        }
        if let Some(TextRegex(re)) = &rules.regex {
            if !re.is_match(text) {
                let regex = re.to_string();
                return Err(TextMismatch::NoMatch {
                    regex,
                    found: found(),
                });
            }
        }
        if let Some(empty) = rules.empty {
            if empty != text.trim().is_empty() {
                return Err(match empty {
                    true => TextMismatch::NotEmpty { found: found() },
                    false => TextMismatch::Empty,
                });
            }
        }
        Ok(())
    }
}

/// Assertions on the requests the CLI sent to the stub.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RequestsExpect {
    /// Number of scripted `POST /v1/messages` requests (background and side traffic excluded).
    #[serde(default)]
    pub count: Option<usize>,
    /// Body patterns by 0-based index among the scripted requests.
    #[serde(default)]
    pub bodies: BTreeMap<usize, PatternValue>,
    /// Every scripted request's body must match each of these.
    #[serde(default)]
    pub all: Vec<PatternValue>,
    /// Some scripted request's body must match each of these.
    #[serde(default)]
    pub some: Vec<PatternValue>,
    /// Number of background requests (e.g. Claude Code's session-title request).
    #[serde(default)]
    pub background: Option<usize>,
}

/// What a workspace file must hold after the run.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum FileExpect {
    /// `false`: the file must not exist. `true`: it must.
    Exists(bool),
    Text(TextExpect),
}

/// One entry of `frames_patch`, checked when the file is read so a bad pattern is
/// reported with its line. Applied to the YAML as written (see [`patch_frames`]).
#[derive(Debug, Clone)]
pub enum FramePatch {
    /// `null`: the frame is dropped.
    Drop,
    /// A pattern (or `any_order` group) in place of the frame.
    Replace(FrameEntry),
    /// `{$merge: {key: pattern}}`: these keys of the frame's pattern replaced, the rest kept.
    Merge(BTreeMap<String, PatternValue>),
    /// `[pattern, ...]`: the frame replaced by these; at the index after the last, appended.
    Splice(Vec<FrameEntry>),
}

impl<'de> serde::Deserialize<'de> for FramePatch {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        use serde_json::Value as Json;
        let v = Json::deserialize(d)?;
        let merge = match &v {
            Json::Null => return Ok(FramePatch::Drop),
            Json::Array(_) => {
                return serde_json::from_value(v)
                    .map(FramePatch::Splice)
                    .map_err(Error::custom)
            }
            Json::Object(m) if m.len() == 1 && m.contains_key("$merge") => &m["$merge"],
            _ => {
                return serde_json::from_value(v)
                    .map(FramePatch::Replace)
                    .map_err(Error::custom)
            }
        };
        serde_json::from_value(merge.clone())
            .map(FramePatch::Merge)
            .map_err(|e| Error::custom(format!("`$merge` takes a map of keys to patterns: {e}")))
    }
}

impl schemars::JsonSchema for FramePatch {
    fn schema_name() -> String {
        "FramePatch".into()
    }
    fn json_schema(_: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
        let mut s = schemars::schema::SchemaObject::default();
        s.metadata().description = Some(
            "A frame pattern in place of the frame at this index; null drops it; {$merge: {key: pattern}} replaces some keys of its pattern; a list of patterns replaces it by several (at the index after the last frame: appends).".into(),
        );
        s.into()
    }
}

/// A rule that applies to one trial's expectation: its name and what it checks.
#[derive(Debug, Clone)]
pub struct Applied {
    pub name: String,
    pub select: Option<Pattern>,
    pub shape: Option<Pattern>,
    /// How many request- or frame-pattern paths it replaced, or expected frames it left out.
    pub replaced: usize,
}
