//! Forward-compatibility probes: a trial's real output changed one way releases really
//! changed it, for `consume --probes` and `replay-cli --probe`. Each probe names the
//! change it models; lines it does not touch keep the exact text the CLI printed.

use crate::protocol::check::{Change, Shape};
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::fmt;

/// One forward-compatible change a later release may make to what a trial printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Probe {
    /// A frame of a new top-level `type` right after `system/init`.
    NewFrameType,
    /// A frame of a new top-level `type` before the first frame.
    NewFrameTypeBeforeInit,
    /// A frame of a new top-level `type` after the last `result`.
    NewFrameTypeAfterResult,
    /// A `system` frame of a new `subtype` right after `system/init`.
    NewSubtype,
    /// A new key in every frame.
    NewKey,
    /// A content block of a new `type` at the end of each assistant message.
    NewContentBlock,
    /// A `stream_event` of a new event `type` after the first `stream_event`.
    NewStreamEvent,
    /// Every top-level string value (but `type`, `subtype` and ids) an object.
    StringToObject,
    /// Every top-level string value (but `type`, `subtype` and ids) null.
    StringToNull,
    /// The keys of every frame in reverse order (`type` last).
    KeysReordered,
    /// The longest frame written in two writes, split mid-line.
    SplitWrite,
}

/// The change a probe makes, as the protocol check (`run`, `verdict`, `drift`) reports the
/// probed output held to an inventory of the output as printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Simulated {
    pub change: Change,
    pub shape: Shape,
}

impl fmt::Display for Simulated {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.change.word(), self.shape)
    }
}

/// What a consumer is given: the writes, in order, each ending where a `write()` ends.
#[derive(Debug, Clone, PartialEq)]
pub struct Feed {
    pub writes: Vec<Vec<u8>>,
    /// 1-based line numbers (in the fed text) of the lines the probe added or changed.
    pub changed: Vec<usize>,
}

impl Feed {
    /// Each line written on its own, as the CLI wrote it.
    pub fn lines(lines: &[String]) -> Feed {
        Feed {
            writes: lines
                .iter()
                .map(|l| format!("{l}\n").into_bytes())
                .collect(),
            changed: Vec::new(),
        }
    }

    /// The fed text's lines (a split write joined again).
    pub fn text_lines(&self) -> Vec<String> {
        let all: Vec<u8> = self.writes.concat();
        String::from_utf8_lossy(&all)
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// How many lines the feed holds.
    pub fn line_count(&self) -> usize {
        self.writes.iter().filter(|w| w.ends_with(b"\n")).count()
    }

    /// The writes that make up the first `n` lines (a split line keeps its two writes).
    pub fn prefix(&self, n: usize) -> Feed {
        let (mut writes, mut lines) = (Vec::new(), 0);
        for w in &self.writes {
            if lines == n {
                break;
            }
            lines += usize::from(w.ends_with(b"\n"));
            writes.push(w.clone());
        }
        Feed {
            writes,
            changed: self.changed.iter().copied().filter(|c| *c <= n).collect(),
        }
    }
}

/// A probe name (`--probe`) that names none.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown probe `{name}` (one of {})",
    Probe::ALL.map(Probe::name).join(", ")
)]
pub struct ProbeParseError {
    pub name: String,
}

/// The marker every probe's additions carry, so a report reader sees what was added.
pub const MARK: &str = "streamcheck_probe";

impl Probe {
    pub const ALL: [Probe; 11] = [
        Probe::NewFrameType,
        Probe::NewFrameTypeBeforeInit,
        Probe::NewFrameTypeAfterResult,
        Probe::NewSubtype,
        Probe::NewKey,
        Probe::NewContentBlock,
        Probe::NewStreamEvent,
        Probe::StringToObject,
        Probe::StringToNull,
        Probe::KeysReordered,
        Probe::SplitWrite,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Probe::NewFrameType => "new-frame-type",
            Probe::NewFrameTypeBeforeInit => "new-frame-type-before-init",
            Probe::NewFrameTypeAfterResult => "new-frame-type-after-result",
            Probe::NewSubtype => "new-subtype",
            Probe::NewKey => "new-key",
            Probe::NewContentBlock => "new-content-block",
            Probe::NewStreamEvent => "new-stream-event",
            Probe::StringToObject => "string-to-object",
            Probe::StringToNull => "string-to-null",
            Probe::KeysReordered => "keys-reordered",
            Probe::SplitWrite => "split-write",
        }
    }

    pub fn parse(name: &str) -> Result<Probe, ProbeParseError> {
        (Probe::ALL.into_iter().find(|p| p.name() == name)).ok_or_else(|| ProbeParseError {
            name: name.to_string(),
        })
    }

    /// The real change the probe models: the release and the public report.
    pub fn models(self) -> &'static str {
        match self {
            Probe::NewFrameType => "`rate_limit_event` after `system/init` (2.1.45; anthropics/claude-code#27239, anthropics/claude-agent-sdk-python#599: the Python, Go and Elixir SDKs raised on it)",
            Probe::NewFrameTypeBeforeInit => "frames printed before `system/init`: `rate_limit_event` moved to wherever the rate-limit headers arrive (2.1.45 on; anthropics/claude-code#26498) and hook frames before init (`--include-hook-events`, 2.1.88)",
            Probe::NewFrameTypeAfterResult => "frames after the `result` of a turn: a finished background task's notification and unsolicited turn (2.1.41; agentclientprotocol/claude-agent-acp#336)",
            Probe::NewSubtype => "new `system` subtypes: `task_notification` (2.1.41; agentclientprotocol/claude-agent-acp#336), later `api_retry`, `status`, `hook_started`",
            Probe::NewKey => "new keys in every frame of a kind: `fast_mode_state` in `system/init` (2.1.38; hrntknr/claude-code-protocol 2b619a6) and in `result` (2.1.63; 4b05b5b)",
            Probe::NewContentBlock => "new content block types the Messages API adds and the CLI passes through in `assistant` frames (`thinking`, `redacted_thinking`, `server_tool_use`); the TS SDK's types lagged so `SDKMessage` became `any`",
            Probe::NewStreamEvent => "`stream_event` wrappers drifting from a consumer's schema (about 2.1.128; nshkrdotcom/claude_agent_sdk#8) and new SSE event and delta types forwarded in them",
            Probe::StringToObject => "a value changing its JSON type: the `set_permission_mode` reply's empty success gained a `response` object (2.1.41; hrntknr/claude-code-protocol 34db23f)",
            Probe::StringToNull => "a value turning null or back: `result.stop_reason` went from null to a string (2.1.69; hrntknr/claude-code-protocol#4)",
            Probe::KeysReordered => "key order: `result` stopped starting with `type` between 2.1.205 and 2.1.222 (seen by streamcheck's catalogue runs of both)",
            Probe::SplitWrite => "a frame arriving in two reads: the CLI's writes are not frame-aligned (the split-chunk U+FFFD fix of 2.1.94 is the same boundary seen from the CLI's side)",
        }
    }

    /// The change it makes in the protocol check's words; `None` for a change in how the
    /// lines are written or ordered, which no inventory holds.
    pub fn change(self) -> Option<Simulated> {
        let shape = match self {
            Probe::NewFrameType
            | Probe::NewFrameTypeBeforeInit
            | Probe::NewFrameTypeAfterResult
            | Probe::NewSubtype
            | Probe::NewContentBlock
            | Probe::NewStreamEvent => Shape::Kind,
            Probe::NewKey => Shape::Key,
            Probe::StringToObject | Probe::StringToNull => Shape::Type,
            Probe::KeysReordered | Probe::SplitWrite => return None,
        };
        Some(Simulated {
            change: Change::New,
            shape,
        })
    }

    /// `lines` (stdout as printed) changed by this probe; `None` when it has nothing to
    /// change there (no `stream_event` for [`Probe::NewStreamEvent`], ...).
    pub fn apply(self, lines: &[String]) -> Option<Feed> {
        let frames: Vec<Option<Map<String, Value>>> = lines.iter().map(|l| object(l)).collect();
        let session = frames
            .iter()
            .flatten()
            .find_map(|f| f.get("session_id").cloned())
            .unwrap_or(Value::Null);
        let new_frame = |ty: &str| {
            json!({"type": ty, MARK: true, "uuid": PROBE_UUID, "session_id": session}).to_string()
        };
        let is = |i: usize, ty: &str, sub: Option<&str>| {
            frames[i].as_ref().is_some_and(|f| {
                f.get("type").and_then(Value::as_str) == Some(ty)
                    && sub.is_none_or(|s| f.get("subtype").and_then(Value::as_str) == Some(s))
            })
        };
        let any_frame = frames.iter().any(Option::is_some);
        match self {
            Probe::NewFrameType | Probe::NewSubtype => {
                let at = (0..lines.len()).find(|&i| is(i, "system", Some("init")))? + 1;
                let added = match self {
                    Probe::NewFrameType => new_frame("probe_new_frame"),
                    _ => json!({"type": "system", "subtype": "probe_new_subtype", MARK: true, "uuid": PROBE_UUID, "session_id": session}).to_string(),
                };
                Some(insert(lines, at, added))
            }
            Probe::NewFrameTypeBeforeInit => {
                any_frame.then(|| insert(lines, 0, new_frame("probe_new_frame")))
            }
            Probe::NewFrameTypeAfterResult => {
                let last = (0..lines.len()).rev().find(|&i| is(i, "result", None))?;
                Some(insert(lines, last + 1, new_frame("probe_new_frame")))
            }
            Probe::NewKey => rewrite(lines, &frames, |_, f| {
                f.insert(MARK.into(), json!("new"));
                true
            }),
            Probe::NewContentBlock => rewrite(lines, &frames, |_, f| {
                if f.get("type").and_then(Value::as_str) != Some("assistant") {
                    return false;
                }
                let Some(Value::Array(content)) =
                    f.get_mut("message").and_then(|m| m.get_mut("content"))
                else {
                    return false;
                };
                content.push(json!({"type": "probe_block", MARK: true}));
                true
            }),
            Probe::NewStreamEvent => {
                let first = (0..lines.len()).find(|&i| is(i, "stream_event", None))?;
                let mut frame = frames[first].clone()?;
                frame.insert("event".into(), json!({"type": "probe_event", MARK: true}));
                frame.insert("uuid".into(), json!(PROBE_UUID));
                Some(insert(lines, first + 1, Value::Object(frame).to_string()))
            }
            Probe::StringToObject | Probe::StringToNull => rewrite(lines, &frames, |_, f| {
                let mut changed = false;
                for (k, v) in f.iter_mut() {
                    if KEPT_STRINGS.contains(&k.as_str()) || !v.is_string() {
                        continue;
                    }
                    *v = match self {
                        Probe::StringToObject => json!({ MARK: v.clone() }),
                        _ => Value::Null,
                    };
                    changed = true;
                }
                changed
            }),
            Probe::KeysReordered => rewrite(lines, &frames, |_, f| {
                let reversed: Map<String, Value> = std::mem::take(f).into_iter().rev().collect();
                *f = reversed;
                f.len() > 1
            }),
            Probe::SplitWrite => {
                let (longest, line) = (lines.iter().enumerate())
                    .filter(|(i, _)| frames[*i].is_some())
                    .max_by_key(|(_, l)| l.len())?;
                let mut feed = Feed::lines(lines);
                let bytes = format!("{line}\n").into_bytes();
                let mid = line.len() / 2;
                feed.writes.splice(
                    longest..=longest,
                    [bytes[..mid].to_vec(), bytes[mid..].to_vec()],
                );
                feed.changed = vec![longest + 1];
                Some(feed)
            }
        }
    }

    /// Whether the probe's writes are meant to reach the consumer in separate reads.
    pub fn pauses_between_writes(self) -> bool {
        self == Probe::SplitWrite
    }
}

/// Top-level strings the type-changing probes keep: what a consumer dispatches and keys on.
const KEPT_STRINGS: &[&str] = &["type", "subtype", "uuid", "session_id"];

/// The `uuid` of every frame a probe adds.
const PROBE_UUID: &str = "00000000-0000-4000-8000-0000000000ff";

fn object(line: &str) -> Option<Map<String, Value>> {
    match serde_json::from_str(line) {
        Ok(Value::Object(m)) => Some(m),
        _ => None,
    }
}

fn insert(lines: &[String], at: usize, added: String) -> Feed {
    let mut out = lines.to_vec();
    out.insert(at, added);
    Feed {
        changed: vec![at + 1],
        ..Feed::lines(&out)
    }
}

/// Each frame `change` says it changed written back compactly; `None` if it changed none.
fn rewrite(
    lines: &[String],
    frames: &[Option<Map<String, Value>>],
    mut change: impl FnMut(usize, &mut Map<String, Value>) -> bool,
) -> Option<Feed> {
    let mut out = lines.to_vec();
    let mut changed = Vec::new();
    for (i, f) in frames.iter().enumerate() {
        let Some(mut f) = f.clone() else { continue };
        if change(i, &mut f) {
            out[i] = Value::Object(f).to_string();
            changed.push(i + 1);
        }
    }
    (!changed.is_empty()).then(|| Feed {
        changed,
        ..Feed::lines(&out)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn printed() -> Vec<String> {
        [
            r#"{"type":"system","subtype":"init","session_id":"s1","model":"m"}"#,
            r#"{"type":"stream_event","event":{"type":"message_start"},"session_id":"s1","uuid":"u0"}"#,
            r#"{"type":"assistant","message":{"content":[{"type":"text","text":"hi"}]},"session_id":"s1"}"#,
            r#"{"type":"result","subtype":"success","result":"hi","session_id":"s1"}"#,
        ]
        .map(str::to_string)
        .to_vec()
    }

    fn types(feed: &Feed) -> Vec<String> {
        feed.text_lines()
            .iter()
            .map(|l| serde_json::from_str::<Value>(l).unwrap()["type"].to_string())
            .collect()
    }

    #[test]
    fn new_frames_land_where_the_real_ones_did() {
        let p = printed();
        let t = |probe: Probe| types(&probe.apply(&p).unwrap());
        assert_eq!(t(Probe::NewFrameType)[1], "\"probe_new_frame\"");
        assert_eq!(t(Probe::NewFrameTypeBeforeInit)[0], "\"probe_new_frame\"");
        assert_eq!(t(Probe::NewFrameTypeAfterResult)[4], "\"probe_new_frame\"");
        let sub = Probe::NewSubtype.apply(&p).unwrap();
        assert!(sub.text_lines()[1].contains("\"subtype\":\"probe_new_subtype\""));
        assert_eq!(sub.changed, vec![2]);
        let ev = Probe::NewStreamEvent.apply(&p).unwrap().text_lines();
        assert!(ev[2].contains("probe_event") && ev[2].contains("\"session_id\":\"s1\""));
    }

    #[test]
    fn untouched_lines_keep_their_text_and_absent_kinds_are_not_applicable() {
        let p = printed();
        let block = Probe::NewContentBlock.apply(&p).unwrap();
        assert_eq!(block.changed, vec![3]);
        let lines = block.text_lines();
        assert_eq!((&lines[0], &lines[3]), (&p[0], &p[3]));
        assert!(lines[2].contains("probe_block"));
        let only_result = vec![p[3].clone()];
        assert_eq!(Probe::NewStreamEvent.apply(&only_result), None);
        assert_eq!(Probe::NewFrameType.apply(&only_result), None);
        assert_eq!(Probe::NewFrameTypeBeforeInit.apply(&["text".into()]), None);
    }

    #[test]
    fn type_changes_keep_what_consumers_dispatch_on() {
        let p = printed();
        let lines = Probe::StringToNull.apply(&p).unwrap().text_lines();
        let result: Value = serde_json::from_str(&lines[3]).unwrap();
        assert_eq!(result["result"], Value::Null);
        assert_eq!(
            (result["type"].as_str(), result["subtype"].as_str()),
            (Some("result"), Some("success"))
        );
        let lines = Probe::StringToObject.apply(&p).unwrap().text_lines();
        let init: Value = serde_json::from_str(&lines[0]).unwrap();
        assert_eq!(init["model"], json!({MARK: "m"}));
        let reordered = Probe::KeysReordered.apply(&p).unwrap().text_lines();
        assert!(
            reordered[3].starts_with(r#"{"session_id":"s1""#),
            "{}",
            reordered[3]
        );
        assert!(reordered[3].ends_with(r#""type":"result"}"#));
    }

    #[test]
    fn a_split_write_is_the_same_text_in_one_more_write() {
        let p = printed();
        let feed = Probe::SplitWrite.apply(&p).unwrap();
        assert_eq!(feed.writes.len(), p.len() + 1);
        assert_eq!(feed.text_lines(), p);
        assert!(
            feed.writes.iter().any(|w| !w.ends_with(b"\n")),
            "the longest frame is cut mid-line"
        );
        assert_eq!(Probe::parse("split-write"), Ok(Probe::SplitWrite));
        assert!(Probe::parse("nope")
            .unwrap_err()
            .to_string()
            .contains("new-frame-type"));
    }

    /// Each probe applied to a real capture and checked by the protocol check against an
    /// inventory of the capture as printed: the check finds exactly the change the probe
    /// names, and nothing for a probe that names none.
    #[test]
    fn the_protocol_check_finds_in_each_probe_the_change_it_names() {
        use crate::protocol::check::check;
        use crate::protocol::inventory::Inventory;
        use crate::protocol::observe::Observed;
        let capture = include_str!(
            "../../../tests/fixtures/observed/claude-code-2.1.328/partial_tool.stdout.jsonl"
        );
        let lines: Vec<String> = capture.lines().map(str::to_string).collect();
        let observe = |lines: &[String]| {
            let frames: Vec<Value> = (lines.iter())
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            Observed::of("probe/capture", &frames, &[])
        };
        let release = semver::Version::new(2, 1, 328);
        let mut inv = Inventory::new("claude-code");
        inv.add(&release, &observe(&lines));
        for probe in Probe::ALL {
            let feed = probe
                .apply(&lines)
                .unwrap_or_else(|| panic!("{probe:?} applies"));
            let found = check(
                &inv,
                "inv",
                &release,
                "probe/capture",
                &observe(&feed.text_lines()),
            );
            let said: Vec<Option<Simulated>> = (found.iter())
                .map(|f| {
                    f.what.shape().map(|shape| Simulated {
                        change: f.change,
                        shape,
                    })
                })
                .collect();
            match probe.change() {
                None => assert!(found.is_empty(), "{probe:?} names no change: {found:?}"),
                Some(c) => assert!(
                    !said.is_empty() && said.iter().all(|s| *s == Some(c)),
                    "{probe:?} names {c}; the check found {found:?}"
                ),
            }
        }
    }
}
