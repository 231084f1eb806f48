//! `skip:` in an expectation: the target cannot run the scenario, for a reason its own run
//! shows. The trial still runs the CLI once (the scenario's first run) and checks the
//! reason against what it printed (`runner::skip`): confirmed, the trial is skipped with
//! the evidence; not confirmed, it fails as "skip no longer holds".

use crate::pattern::{Pattern, PatternValue};
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use std::fmt;

/// A skip: what the run must show, and the human explanation.
#[derive(Debug, Clone)]
pub struct Skip {
    pub reason: SkipReason,
    pub because: String,
}

/// What a run shows when the skip holds.
#[derive(Debug, Clone)]
pub enum SkipReason {
    /// The CLI refuses this command-line option: it exits non-zero and its output names it
    /// (`--permission-mode manual`: the option and the value it refuses, each named).
    FlagRefused(String),
    /// The CLI does not offer this tool: not in `system/init.tools` nor in any request's
    /// `tools[].name`.
    ToolAbsent(String),
    /// The CLI prints no frame matching this pattern (the frame the scenario is about).
    FrameAbsent(Pattern),
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkipReason::FlagRefused(flag) => write!(f, "{flag} refused"),
            SkipReason::ToolAbsent(tool) => write!(f, "no {tool} tool"),
            SkipReason::FrameAbsent(p) => write!(f, "no frame matching {}", p.source()),
        }
    }
}

const FORMS: &str = "`{flag_refused: --option, because: \"...\"}` (the CLI exits non-zero naming the option), `{tool_absent: ToolName, because: \"...\"}` (not in system/init.tools nor in a request's tools) or `{frame_absent: PATTERN, because: \"...\"}` (no frame matches)";

impl<'de> Deserialize<'de> for Skip {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let map = match Value::deserialize(d)? {
            Value::Object(map) => map,
            Value::String(text) => {
                return Err(Error::custom(format!(
                    "`skip` takes a reason the run can confirm, not free text ({text:?}): write {FORMS}"
                )))
            }
            other => {
                return Err(Error::custom(format!(
                    "`skip` takes a map, found {other}: write {FORMS}"
                )))
            }
        };
        let text = |key: &str, v: &Value| match v {
            Value::String(s) if !s.trim().is_empty() => Ok(s.clone()),
            _ => Err(Error::custom(format!(
                "`skip.{key}` takes a non-empty string"
            ))),
        };
        let mut reasons = Vec::new();
        let mut because = None;
        for (key, v) in &map {
            match key.as_str() {
                "because" => because = Some(text(key, v)?),
                "flag_refused" => reasons.push(SkipReason::FlagRefused(text(key, v)?)),
                "tool_absent" => reasons.push(SkipReason::ToolAbsent(text(key, v)?)),
                "frame_absent" => reasons.push(SkipReason::FrameAbsent(
                    PatternValue::deserialize(v)
                        .map_err(|e| Error::custom(format!("`skip.frame_absent`: {e}")))?
                        .0,
                )),
                other => {
                    return Err(Error::custom(format!(
                        "`skip.{other}` is not a skip reason: write {FORMS}"
                    )))
                }
            }
        }
        let Some(because) = because else {
            return Err(Error::custom(
                "`skip` needs `because`: why a person should not expect this target to run it",
            ));
        };
        match <[SkipReason; 1]>::try_from(reasons) {
            Ok([reason]) => Ok(Skip { reason, because }),
            Err(_) => Err(Error::custom(format!(
                "`skip` takes exactly one reason: {FORMS}"
            ))),
        }
    }
}

/// The schema of `skip`: one of the reasons, with `because`.
#[allow(dead_code)]
#[derive(JsonSchema)]
#[serde(untagged, deny_unknown_fields)]
enum SkipSchema {
    /// The CLI refuses this option: it exits non-zero and its stderr or stdout names it (an
    /// option an older release does not have; `--permission-mode manual`: a value it does
    /// not take, the option and the value each named).
    FlagRefused {
        flag_refused: String,
        because: String,
    },
    /// The CLI does not offer this tool: it is not in `system/init.tools` nor in any
    /// request's `tools[].name`.
    ToolAbsent {
        tool_absent: String,
        because: String,
    },
    /// The CLI prints no frame matching this pattern.
    FrameAbsent {
        frame_absent: PatternValue,
        because: String,
    },
}

impl JsonSchema for Skip {
    fn schema_name() -> String {
        "Skip".into()
    }
    fn json_schema(gen: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
        let mut s = SkipSchema::json_schema(gen).into_object();
        s.metadata().description = Some(
            "Skip this target for a reason its run shows: the CLI still runs the scenario once and the reason is checked against what it printed; a reason that no longer holds fails the trial (`skip no longer holds`).".into(),
        );
        s.into()
    }
}
