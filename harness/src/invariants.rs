//! Protocol invariants, checked in every stream-json scenario unless it opts out.

use crate::divergence::{Divergence, Kind};
use crate::printed::exit::Exit;
use crate::printed::output::{Frame, Output};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use std::collections::HashSet;
use stub_api::JournalEntry;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Invariant {
    /// stdout holds only JSON objects, one per line, UTF-8, each line ended.
    NdjsonOnly,
    /// The first frame is `system/init`.
    InitFirst,
    /// A `result` ends each turn and only a new turn follows it.
    ResultEndsTurn,
    /// stdout is not empty, and every turn the scenario runs ends in a `result`: as many
    /// results as turns (`turns:`, else one per user message sent) and the conversation's
    /// last frame a result. A scenario whose run ends otherwise says how many turns end in
    /// a result (`turns: 0` for none).
    EveryTurnEndsInResult,
    /// Every frame carrying a `session_id` carries the same one.
    OneSession,
    /// Every `tool_result` refers to a `tool_use` id printed earlier.
    ToolResultsReferToToolUses,
    /// The CLI exits by itself after its last result.
    ExitsAfterResult,
    /// What the Agent SDKs require of the output (only with a client profile; see
    /// `sdk_contract`).
    SdkContract,
    /// The exit code is 0 exactly when the last `result` has `is_error: false`.
    ExitCodeMatchesResult,
    /// The `session_id` printed is the one the CLI sent to the API (Claude Code puts it
    /// in each request's `metadata.user_id`; a CLI that sends none is not checked).
    SessionMatchesRequest,
    /// A successful `result` does not come with an empty `result` text when the last
    /// assistant frame of its turn had text (a field that went empty).
    ResultTextKept,
    /// Every `control_request` the client wrote got a `control_response` with its
    /// `request_id` before the CLI ended (with an SDK profile the SDK contract says so,
    /// naming the SDK).
    ClientRequestsAnswered,
    /// No frame holds U+FFFD (the replacement character) unless the scenario itself
    /// does: text split inside a multi-byte character, decoded piecewise.
    NoReplacementCharacter,
    /// Each tool call is answered by its own result: no `tool_use` id gets more
    /// `tool_result`s than it had calls, and every call printed before a successful
    /// `result` got one by then (parallel calls each answered, none twice, none lost).
    ToolUsesAnsweredOnce,
}

impl Invariant {
    pub const ALL: [Invariant; 14] = [
        Invariant::NdjsonOnly,
        Invariant::InitFirst,
        Invariant::ResultEndsTurn,
        Invariant::EveryTurnEndsInResult,
        Invariant::OneSession,
        Invariant::ToolResultsReferToToolUses,
        Invariant::ExitsAfterResult,
        Invariant::SdkContract,
        Invariant::ExitCodeMatchesResult,
        Invariant::SessionMatchesRequest,
        Invariant::ResultTextKept,
        Invariant::ClientRequestsAnswered,
        Invariant::NoReplacementCharacter,
        Invariant::ToolUsesAnsweredOnce,
    ];
}

/// Control-protocol frames run beside the conversation (an SDK's initialize response
/// comes before `system/init`, a `set_model` response after a result), and so do frames
/// meant for the SDK host only (`sdk_host_only: true`, e.g. `system/session_state_changed`
/// since 2.1.198, before init and after each result): the turn rules look past them.
fn is_beside_conversation(frame: &Value) -> bool {
    let control = matches!(
        frame.get("type").and_then(Value::as_str),
        Some("control_request" | "control_response" | "control_cancel_request" | "keep_alive")
    );
    control || frame.get("sdk_host_only") == Some(&Value::Bool(true))
}

fn is(frame: &Value, ty: &str, subtype: Option<&str>) -> bool {
    frame.get("type").and_then(Value::as_str) == Some(ty)
        && subtype.is_none_or(|s| frame.get("subtype").and_then(Value::as_str) == Some(s))
}

/// A frame that may start a new turn after a `result`: a new `system/init`, or a
/// user message echoed back (`--replay-user-messages`) that is not a tool result.
fn starts_turn(frame: &Value) -> bool {
    if is(frame, "system", Some("init")) {
        return true;
    }
    if is(frame, "user", None) {
        return !contains_type(frame, "tool_result");
    }
    false
}

fn contains_type(v: &Value, ty: &str) -> bool {
    match v {
        Value::Object(m) => {
            m.get("type").and_then(Value::as_str) == Some(ty)
                || m.values().any(|x| contains_type(x, ty))
        }
        Value::Array(a) => a.iter().any(|x| contains_type(x, ty)),
        _ => false,
    }
}

/// Walks every object in `v`, calling `f` on each.
fn for_each_object(v: &Value, f: &mut dyn FnMut(&serde_json::Map<String, Value>)) {
    match v {
        Value::Object(m) => {
            f(m);
            for x in m.values() {
                for_each_object(x, f);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| for_each_object(x, f)),
        _ => {}
    }
}

/// Checks the invariants in `enabled` on a finished run's stdout. `hung` says the
/// CLI had to be killed after printing its last result.
pub fn check(output: &Output, enabled: &[Invariant], hung_after_result: bool) -> Vec<Divergence> {
    let on = |i: Invariant| enabled.contains(&i);
    let mut out = Vec::new();
    if on(Invariant::NdjsonOnly) {
        out.extend(ndjson_only(output));
    }
    let frames = &output.frames;
    let conversation: Vec<&Frame> = frames
        .iter()
        .filter(|f| !is_beside_conversation(&f.value))
        .collect();
    if on(Invariant::InitFirst) {
        out.extend(init_first(&conversation));
    }
    if on(Invariant::ResultEndsTurn) {
        out.extend(result_ends_turn(&conversation));
    }
    if on(Invariant::OneSession) {
        out.extend(one_session(frames));
    }
    if on(Invariant::ToolResultsReferToToolUses) {
        out.extend(tool_results_refer_to_tool_uses(frames));
    }
    if on(Invariant::ResultTextKept) {
        out.extend(result_text_kept(&conversation));
    }
    if on(Invariant::ToolUsesAnsweredOnce) {
        out.extend(tool_uses_answered_once(frames));
    }
    if on(Invariant::ExitsAfterResult) && hung_after_result {
        out.push(Divergence::new(
            Kind::Hang,
            format!(
                "the CLI printed its last result but did not exit (killed after the grace period): {}",
                output.stopped_at()
            ),
        ));
    }
    out
}

/// [`Invariant::NdjsonOnly`]: the first five bad lines, and how many more there were.
fn ndjson_only(output: &Output) -> Vec<Divergence> {
    let mut out = Vec::new();
    for bad in output.bad_lines.iter().take(5) {
        let mut d = Divergence::new(
            Kind::NonJson,
            format!(
                "stdout line {}: {}: {:?}",
                bad.line, bad.problem, bad.excerpt
            ),
        );
        d.line = Some(bad.line);
        out.push(d);
    }
    if output.bad_lines.len() > 5 {
        out.push(Divergence::new(
            Kind::NonJson,
            format!("… and {} more bad stdout lines", output.bad_lines.len() - 5),
        ));
    }
    out
}

/// [`Invariant::InitFirst`], on the frames of the conversation.
fn init_first(conversation: &[&Frame]) -> Option<Divergence> {
    let first = conversation.first()?;
    if is(&first.value, "system", Some("init")) {
        return None;
    }
    Some(
        Divergence::new(
            Kind::Invariant,
            format!(
                "the first frame is not system/init but {}",
                frame_kind(&first.value)
            ),
        )
        .at_frame(first.index, first.line)
        .expected(serde_json::json!({"type": "system", "subtype": "init"}))
        .actual(first.value.clone()),
    )
}

/// [`Invariant::ResultEndsTurn`], on the frames of the conversation.
fn result_ends_turn(conversation: &[&Frame]) -> Option<Divergence> {
    let pair = conversation
        .windows(2)
        .find(|pair| is(&pair[0].value, "result", None) && !starts_turn(&pair[1].value))?;
    let next = pair[1];
    Some(next.divergence(
        Kind::Invariant,
        format!(
            "frame {} ({}) follows the result of a turn without starting a new turn",
            next.index,
            frame_kind(&next.value)
        ),
    ))
}

/// `turns: 0`: no turn ends in a result, so the CLI prints no result frame (a case that
/// pins a refusal at startup fails when a turn ran, whatever it ended in).
fn no_result_printed(output: &Output) -> Option<Divergence> {
    let results: Vec<&Frame> = output.frames.iter().filter(|f| f.is_result()).collect();
    let first = results.first()?;
    Some(first.divergence(
        Kind::Invariant,
        format!(
            "the CLI printed {} result frame(s) (the first is frame {}) where no turn was expected to end in a result (`turns: 0`)",
            results.len(),
            first.index
        ),
    ))
}

/// [`Invariant::EveryTurnEndsInResult`]: `turns` turns each end in a result. Control and
/// host-only frames may follow the last result.
pub fn every_turn_ends_in_result(output: &Output, turns: usize) -> Option<Divergence> {
    if turns == 0 {
        return no_result_printed(output);
    }
    if output.frames.is_empty() && output.bad_lines.is_empty() {
        return Some(
            Divergence::new(
                Kind::Invariant,
                format!("stdout is empty: {turns} turn(s) were expected to end in a result"),
            )
            .expected(turns.into())
            .actual(0.into()),
        );
    }
    let conversation: Vec<&Frame> = (output.frames.iter())
        .filter(|f| !is_beside_conversation(&f.value))
        .collect();
    let results = conversation.iter().filter(|f| f.is_result()).count();
    if let Some(last) = conversation.last().filter(|f| !f.is_result()) {
        let what = frame_kind(&last.value);
        return Some(last.divergence(
            Kind::Invariant,
            format!(
                "the output ends with frame {} ({what}), not a result: {turns} turn(s) expected to end in a result, {results} did",
                last.index
            ),
        ));
    }
    (results != turns).then(|| {
        Divergence::new(
            Kind::Invariant,
            format!("{turns} turn(s) expected to end in a result, the CLI printed {results} result frame(s)"),
        )
        .expected(turns.into())
        .actual(results.into())
    })
}

/// `type/subtype` of a frame, for messages.
fn frame_kind(frame: &Value) -> String {
    let ty = frame.get("type").and_then(Value::as_str).unwrap_or("?");
    match frame.get("subtype").and_then(Value::as_str) {
        Some(sub) => format!("{ty}/{sub}"),
        None => ty.to_string(),
    }
}

/// [`Invariant::OneSession`]: the first frame whose session_id differs from the first one.
fn one_session(frames: &[Frame]) -> Option<Divergence> {
    let mut ids = frames.iter().filter_map(|f| {
        let sid = f.value.get("session_id").and_then(Value::as_str)?;
        Some((sid, f))
    });
    let (s, first) = ids.next()?;
    let (sid, f) = ids.find(|(sid, _)| *sid != s)?;
    Some(
        Divergence::new(
            Kind::Invariant,
            format!(
                "session_id changes: {s:?} since frame {}, {sid:?} in frame {}",
                first.index, f.index
            ),
        )
        .at_frame(f.index, f.line)
        .at_path("$.session_id")
        .expected(Value::String(s.to_string()))
        .actual(Value::String(sid.to_string())),
    )
}

/// [`Invariant::ToolResultsReferToToolUses`]: the first tool_result whose id no earlier
/// frame's tool_use has.
fn tool_results_refer_to_tool_uses(frames: &[Frame]) -> Option<Divergence> {
    let mut ids: HashSet<String> = HashSet::new();
    for f in frames {
        let mut orphan = None;
        let mut seen_here = Vec::new();
        for_each_object(&f.value, &mut |m| {
            let ty = m.get("type").and_then(Value::as_str);
            if ty == Some("tool_use") {
                if let Some(id) = m.get("id").and_then(Value::as_str) {
                    seen_here.push(id.to_string());
                }
            } else if ty == Some("tool_result") {
                if let Some(id) = m.get("tool_use_id").and_then(Value::as_str) {
                    if !ids.contains(id) && orphan.is_none() {
                        orphan = Some(id.to_string());
                    }
                }
            }
        });
        if let Some(id) = orphan {
            return Some(f.divergence(
                Kind::Invariant,
                format!(
                    "frame {} has a tool_result for {id:?}, which no earlier tool_use has",
                    f.index
                ),
            ));
        }
        ids.extend(seen_here);
    }
    None
}

/// [`Invariant::ToolUsesAnsweredOnce`]: the first tool_result answering a call more often
/// than it was made, else the first successful result with calls still unanswered.
fn tool_uses_answered_once(frames: &[Frame]) -> Option<Divergence> {
    use std::collections::HashMap;
    let mut calls: HashMap<String, usize> = HashMap::new();
    let mut answers: HashMap<String, usize> = HashMap::new();
    let mut open: Vec<String> = Vec::new();
    for f in frames {
        let mut twice = None;
        for_each_object(&f.value, &mut |m| {
            let id = |key: &str| m.get(key).and_then(Value::as_str).map(str::to_string);
            match m.get("type").and_then(Value::as_str) {
                Some("tool_use") => {
                    if let Some(id) = id("id") {
                        *calls.entry(id.clone()).or_default() += 1;
                        open.push(id);
                    }
                }
                Some("tool_result") => {
                    if let Some(id) = id("tool_use_id") {
                        let n = answers.entry(id.clone()).or_default();
                        *n += 1;
                        // A result for no call at all is tool_results_refer_to_tool_uses's.
                        let made = calls.get(&id).copied().unwrap_or(0);
                        if made > 0 && *n > made && twice.is_none() {
                            twice = Some(id);
                        }
                    }
                }
                _ => {}
            }
        });
        if let Some(id) = twice {
            return Some(f.divergence(
                Kind::Invariant,
                format!(
                    "frame {} answers the tool call {id:?} again: {} tool_result(s) for {} call(s)",
                    f.index,
                    answers[&id],
                    calls.get(&id).copied().unwrap_or(0)
                ),
            ));
        }
        if is(&f.value, "result", Some("success")) {
            let lost: Vec<&String> = open
                .iter()
                .filter(|id| !answers.contains_key(*id))
                .collect();
            if !lost.is_empty() {
                return Some(f.divergence(
                    Kind::Invariant,
                    format!(
                        "the turn ends in a successful result (frame {}) with tool call(s) no tool_result answered: {}",
                        f.index,
                        lost.iter().map(|id| format!("{id:?}")).collect::<Vec<_>>().join(", ")
                    ),
                ));
            }
            open.clear();
        }
    }
    None
}

/// The text of an assistant frame's text blocks, joined.
fn assistant_text(frame: &Value) -> String {
    let Some(blocks) = frame.pointer("/message/content").and_then(Value::as_array) else {
        return String::new();
    };
    blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect()
}

/// [`Invariant::ResultTextKept`]: per turn, a successful result whose `result` is empty
/// or blank while the turn's last top-level assistant frame had text.
fn result_text_kept(conversation: &[&Frame]) -> Option<Divergence> {
    let mut last_text = String::new();
    for f in conversation {
        let v = &f.value;
        if is(v, "system", Some("init")) {
            last_text.clear();
        } else if is(v, "assistant", None) && v.get("parent_tool_use_id").is_none_or(Value::is_null)
        {
            last_text = assistant_text(v);
        } else if is(v, "result", Some("success")) {
            let kept = match v.get("result") {
                Some(Value::String(r)) => !r.trim().is_empty(),
                // No `result` key at all is a missing field, for the expectation to pin.
                _ => true,
            };
            if !kept && !last_text.trim().is_empty() && v["is_error"] != Value::Bool(true) {
                return Some(
                    Divergence::new(
                        Kind::Invariant,
                        format!(
                            "the successful result of frame {} has an empty `result`, but the last assistant frame said {}",
                            f.index,
                            crate::text::clip(&last_text, 80)
                        ),
                    )
                    .at_frame(f.index, f.line)
                    .at_path("$.result")
                    .expected(Value::String(last_text))
                    .actual(v["result"].clone()),
                );
            }
            last_text.clear();
        }
    }
    None
}

/// [`Invariant::ClientRequestsAnswered`]: each `control_request` line the client wrote
/// (a `request:` line, or a raw or `stdin:` line that is one) without a
/// `control_response` naming its `request_id`.
pub fn client_requests_answered(output: &Output, written: &[(usize, String)]) -> Vec<Divergence> {
    let answered: HashSet<&str> = output
        .frames
        .iter()
        .filter(|f| is(&f.value, "control_response", None))
        .filter_map(|f| f.value.pointer("/response/request_id")?.as_str())
        .collect();
    let mut out = Vec::new();
    for (line, text) in written.iter().flat_map(|(_, w)| w.lines()).enumerate() {
        let Ok(v) = serde_json::from_str::<Value>(text) else {
            continue;
        };
        if !is(&v, "control_request", None) {
            continue;
        }
        let Some(id) = v.get("request_id").and_then(Value::as_str) else {
            continue;
        };
        if answered.contains(id) {
            continue;
        }
        let subtype = v.pointer("/request/subtype").and_then(Value::as_str);
        out.push(
            Divergence::new(
                Kind::Invariant,
                format!(
                    "the client's {} control_request {id:?} (stdin line {}) got no control_response before the CLI ended",
                    subtype.unwrap_or("?"),
                    line + 1
                ),
            )
            .at_path("$.response.request_id")
            .expected(Value::String(id.to_string())),
        );
    }
    out
}

/// [`Invariant::NoReplacementCharacter`]: the first frame holding U+FFFD, unless
/// `scenario_has_it` (the character is in the scenario's own text).
pub fn no_replacement_character(output: &Output, scenario_has_it: bool) -> Option<Divergence> {
    if scenario_has_it {
        return None;
    }
    let f = output
        .frames
        .iter()
        .find(|f| f.value.to_string().contains('\u{FFFD}'))?;
    Some(
        f.divergence(Kind::Invariant,
            format!(
                "frame {} holds U+FFFD (a replacement character) that nothing in the scenario sent: a multi-byte character was cut and decoded in pieces",
                f.index
            ),),
    )
}

/// [`Invariant::ExitCodeMatchesResult`]: checked when the CLI exited by itself with a
/// code after printing a `result` that says whether it is an error.
pub fn exit_code_matches_result(output: &Output, exit: &Exit) -> Option<Divergence> {
    let code = exit.code.filter(|_| !exit.termination.by_harness())?;
    let last = output.frames.iter().rev().find(|f| f.is_result())?;
    let is_error = last.value.get("is_error")?.as_bool()?;
    if (code == 0) != is_error {
        return None;
    }
    let want = if is_error { "non-zero" } else { "0" };
    Some(
        Divergence::new(
            Kind::Invariant,
            format!("the CLI exited with {code}, but its last result has is_error: {is_error} (expected exit code {want})"),
        )
        .at_frame(last.index, last.line)
        .at_path("$.is_error")
        .actual(code.into()),
    )
}

/// The session id a request carries in `metadata.user_id`.
fn request_session(entry: &JournalEntry) -> Option<String> {
    user_id_session(entry.body().pointer("/metadata/user_id")?.as_str()?)
}

/// A JSON object as a string (`{"session_id": ..}`), or the flat
/// `user_<hash>_account_<id>_session_<uuid>` of Claude Code 2.1.74 and older.
fn user_id_session(user_id: &str) -> Option<String> {
    match serde_json::from_str::<Value>(user_id) {
        Ok(inner) => inner.get("session_id")?.as_str().map(str::to_string),
        Err(_) => user_id
            .rsplit_once("_session_")
            .map(|(_, id)| id.to_string())
            .filter(|id| !id.is_empty()),
    }
}

/// [`Invariant::SessionMatchesRequest`]: the first `session_id` printed is one the CLI
/// sent to the API.
pub fn session_matches_request(output: &Output, journal: &[JournalEntry]) -> Option<Divergence> {
    let sent: Vec<String> = journal.iter().filter_map(request_session).collect();
    let (frame, printed) = output
        .frames
        .iter()
        .find_map(|f| Some((f, f.value.get("session_id")?.as_str()?)))?;
    if sent.is_empty() || sent.iter().any(|s| s == printed) {
        return None;
    }
    Some(
        Divergence::new(
            Kind::Invariant,
            format!(
                "session_id {printed:?} is not the one the CLI sent to the API ({:?} in metadata.user_id)",
                sent[0]
            ),
        )
        .at_frame(frame.index, frame.line)
        .at_path("$.session_id")
        .expected(Value::String(sent[0].clone()))
        .actual(Value::String(printed.to_string())),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_id_session_reads_both_forms() {
        let id = "5e55a1d0-0000-4000-8000-000000000001";
        let json = format!(r#"{{"device_id":"d","session_id":"{id}"}}"#);
        assert_eq!(user_id_session(&json).as_deref(), Some(id));
        let flat = format!("user_abc123_account__session_{id}");
        assert_eq!(user_id_session(&flat).as_deref(), Some(id));
        assert_eq!(user_id_session("user_abc123"), None);
        assert_eq!(user_id_session("user_abc_session_"), None);
    }

    fn run(text: &str) -> Vec<Divergence> {
        check(&Output::parse(text.as_bytes()), &Invariant::ALL, false)
    }

    const INIT: &str = r#"{"type":"system","subtype":"init","session_id":"s"}"#;
    const RESULT: &str = r#"{"type":"result","subtype":"success","session_id":"s"}"#;

    #[test]
    fn a_frame_after_the_result_is_named_with_its_kind() {
        let after = r#"{"type":"command_lifecycle","state":"completed","session_id":"s"}"#;
        let found = run(&format!("{INIT}\n{RESULT}\n{after}\n"));
        let d = (found.iter())
            .find(|d| d.message.contains("follows the result"))
            .expect("the frame after the result is reported");
        assert_eq!(
            d.message,
            "frame 2 (command_lifecycle) follows the result of a turn without starting a new turn"
        );
        assert_eq!(d.frame, Some(2));
    }

    #[test]
    fn turns_0_fails_on_a_printed_result() {
        let failed = r#"{"type":"result","subtype":"error_during_execution","is_error":true,"session_id":"s"}"#;
        let output = Output::parse(format!("{INIT}\n{failed}\n").as_bytes());
        let d = every_turn_ends_in_result(&output, 0).expect("a result where none was expected");
        assert_eq!(d.kind, Kind::Invariant);
        assert!(d.message.contains("`turns: 0`"), "{}", d.message);
        assert_eq!(d.frame, Some(1));
        assert!(
            every_turn_ends_in_result(&Output::parse(format!("{INIT}\n").as_bytes()), 0).is_none()
        );
        assert!(every_turn_ends_in_result(&Output::parse(b""), 0).is_none());
    }

    #[test]
    fn a_clean_run_breaks_nothing() {
        assert!(run(&format!("{INIT}\n{RESULT}\n{INIT}\n{RESULT}\n")).is_empty());
    }

    #[test]
    fn non_json_lines_are_reported_with_their_line() {
        let d = run(&format!("{INIT}\nhello\n{RESULT}\n"));
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].kind, Kind::NonJson);
        assert_eq!(d[0].line, Some(2));
        let ok = check(
            &Output::parse(format!("{INIT}\nhello\n{RESULT}\n").as_bytes()),
            &[],
            false,
        );
        assert!(ok.is_empty());
    }

    #[test]
    fn first_frame_must_be_init() {
        let d = run(&format!("{RESULT}\n"));
        assert_eq!(d[0].kind, Kind::Invariant);
        assert!(d[0].message.contains("system/init"));
    }

    #[test]
    fn nothing_but_a_new_turn_after_result() {
        let d = run(&format!(
            "{INIT}\n{RESULT}\n{{\"type\":\"assistant\",\"session_id\":\"s\"}}\n"
        ));
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].frame, Some(2));
        let replay = r#"{"type":"user","message":{"content":"again"},"session_id":"s"}"#;
        assert!(run(&format!("{INIT}\n{RESULT}\n{replay}\n{RESULT}\n")).is_empty());
    }

    #[test]
    fn session_id_must_not_change() {
        let d = run(&format!(
            "{INIT}\n{{\"type\":\"result\",\"session_id\":\"t\"}}\n"
        ));
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].path.as_deref(), Some("$.session_id"));
    }

    #[test]
    fn parallel_calls_are_each_answered_once() {
        let calls = r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"a"},{"type":"tool_use","id":"b"}]},"session_id":"s"}"#;
        let tr = |id: &str| {
            format!(
                r#"{{"type":"user","message":{{"content":[{{"type":"tool_result","tool_use_id":"{id}"}}]}},"session_id":"s"}}"#
            )
        };
        let only = |text: String| {
            check(
                &Output::parse(text.as_bytes()),
                &[Invariant::ToolUsesAnsweredOnce],
                false,
            )
        };
        // Each call answered, in either order: nothing to say.
        assert!(only(format!(
            "{INIT}\n{calls}\n{}\n{}\n{RESULT}\n",
            tr("b"),
            tr("a")
        ))
        .is_empty());
        // One call answered twice (the other's result answering the wrong call).
        let d = only(format!(
            "{INIT}\n{calls}\n{}\n{}\n{RESULT}\n",
            tr("a"),
            tr("a")
        ));
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(
            d[0].message.contains("answers the tool call \"a\" again"),
            "{d:?}"
        );
        assert_eq!(d[0].frame, Some(3));
        // A call left without a result when the turn ends well.
        let d = only(format!("{INIT}\n{calls}\n{}\n{RESULT}\n", tr("a")));
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(
            d[0].message.contains("no tool_result answered: \"b\""),
            "{d:?}"
        );
        // A turn that ends in an error may leave calls open (interrupted, max_tokens).
        let failed = RESULT.replace(
            "\"subtype\":\"success\"",
            "\"subtype\":\"error_during_execution\"",
        );
        assert_ne!(failed, RESULT);
        assert!(only(format!("{INIT}\n{calls}\n{failed}\n")).is_empty());
        // The same id called again in a later turn (a stub's fixed id) is two calls.
        assert!(only(format!(
            "{INIT}\n{calls}\n{}\n{}\n{RESULT}\n{INIT}\n{calls}\n{}\n{}\n{RESULT}\n",
            tr("a"),
            tr("b"),
            tr("a"),
            tr("b")
        ))
        .is_empty());
    }

    #[test]
    fn tool_results_need_an_earlier_tool_use() {
        let tu = r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1"}]},"session_id":"s"}"#;
        let tr = |id: &str| {
            format!(
                r#"{{"type":"user","message":{{"content":[{{"type":"tool_result","tool_use_id":"{id}"}}]}},"session_id":"s"}}"#
            )
        };
        assert!(run(&format!("{INIT}\n{tu}\n{}\n{RESULT}\n", tr("t1"))).is_empty());
        let d = run(&format!("{INIT}\n{tu}\n{}\n{RESULT}\n", tr("t9")));
        // The orphan, and (tool_uses_answered_once) t1 left unanswered.
        assert_eq!(d.len(), 2, "{d:?}");
        assert_eq!(d[0].frame, Some(2));
        assert!(d[0].message.contains("\"t9\""));
        assert!(
            d[1].message.contains("no tool_result answered: \"t1\""),
            "{d:?}"
        );
    }

    #[test]
    fn control_frames_are_outside_the_turn_rules() {
        let resp = r#"{"type":"control_response","response":{"request_id":"a"}}"#;
        assert!(run(&format!(
            "{resp}\n{INIT}\n{RESULT}\n{resp}\n{INIT}\n{RESULT}\n"
        ))
        .is_empty());
        let d = run(&format!("{resp}\n{RESULT}\n"));
        assert_eq!(d[0].frame, Some(1));
    }

    #[test]
    fn host_only_frames_are_outside_the_turn_rules() {
        let state = r#"{"type":"system","subtype":"session_state_changed","state":"idle","sdk_host_only":true}"#;
        assert!(run(&format!("{state}\n{INIT}\n{RESULT}\n{state}\n")).is_empty());
        let not_host = r#"{"type":"system","subtype":"session_state_changed","state":"idle"}"#;
        assert_eq!(run(&format!("{not_host}\n{INIT}\n{RESULT}\n")).len(), 1);
    }

    fn assistant(text: &str) -> String {
        serde_json::json!({"type": "assistant", "session_id": "s", "parent_tool_use_id": null,
            "message": {"content": [{"type": "text", "text": text}]}})
        .to_string()
    }

    fn success(result: &str) -> String {
        serde_json::json!({"type": "result", "subtype": "success", "is_error": false,
            "result": result, "session_id": "s"})
        .to_string()
    }

    #[test]
    fn an_empty_result_after_assistant_text_is_a_field_that_went_empty() {
        let d = run(&format!(
            "{INIT}\n{}\n{}\n",
            assistant("\n\nHello!"),
            success("")
        ));
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].path.as_deref(), Some("$.result"));
        assert!(d[0].message.contains("Hello!"), "{}", d[0].message);
        // The text kept, or no text to keep (a tool-only last frame): nothing to say.
        assert!(run(&format!(
            "{INIT}\n{}\n{}\n",
            assistant("Hello!"),
            success("Hello!")
        ))
        .is_empty());
        let tool_only = r#"{"type":"assistant","session_id":"s","message":{"content":[{"type":"tool_use","id":"t","name":"Bash"}]}}"#;
        let answered = r#"{"type":"user","session_id":"s","message":{"content":[{"type":"tool_result","tool_use_id":"t"}]}}"#;
        assert!(run(&format!(
            "{INIT}\n{tool_only}\n{answered}\n{}\n",
            success("")
        ))
        .is_empty());
        // A second turn starts afresh: its empty result has no text of its own to keep.
        assert!(run(&format!(
            "{INIT}\n{}\n{}\n{INIT}\n{}\n",
            assistant("one"),
            success("one"),
            success("")
        ))
        .is_empty());
    }

    #[test]
    fn client_requests_without_a_response_are_reported() {
        let written = vec![
            (0, r#"{"type":"control_request","request_id":"a","request":{"subtype":"initialize"}}"#.to_string()),
            (0, "{\"type\":\"user\"}\n{\"type\":\"control_request\",\"request_id\":\"b\",\"request\":{\"subtype\":\"interrupt\"}}".to_string()),
        ];
        let answered_a =
            r#"{"type":"control_response","response":{"subtype":"success","request_id":"a"}}"#;
        let out = Output::parse(format!("{answered_a}\n{INIT}\n{RESULT}\n").as_bytes());
        let d = client_requests_answered(&out, &written);
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(
            d[0].message
                .contains("interrupt control_request \"b\" (stdin line 3)"),
            "{}",
            d[0].message
        );
        let error_b = r#"{"type":"control_response","response":{"subtype":"error","request_id":"b","error":"no"}}"#;
        let out = Output::parse(format!("{answered_a}\n{error_b}\n").as_bytes());
        assert!(client_requests_answered(&out, &written).is_empty());
    }

    #[test]
    fn a_replacement_character_nobody_sent_is_reported() {
        let out =
            Output::parse(format!("{INIT}\n{}\n{RESULT}\n", assistant("caf\u{FFFD}")).as_bytes());
        let d = no_replacement_character(&out, false).expect("reported");
        assert_eq!(d.frame, Some(1));
        assert!(no_replacement_character(&out, true).is_none());
        let clean =
            Output::parse(format!("{INIT}\n{}\n{RESULT}\n", assistant("café 日本")).as_bytes());
        assert!(no_replacement_character(&clean, false).is_none());
    }

    #[test]
    fn hang_after_result_is_reported_when_checked() {
        let out = Output::parse(format!("{INIT}\n{RESULT}\n").as_bytes());
        assert_eq!(check(&out, &Invariant::ALL, true)[0].kind, Kind::Hang);
        assert!(check(&out, &[], true).is_empty());
    }
}

#[cfg(test)]
mod registered {
    use super::Invariant;

    /// A variant left out of `Invariant::ALL` would silently never run: the schema lists
    /// every variant the enum has, and each must be in `ALL`.
    #[test]
    fn every_invariant_is_in_all() {
        let schema = serde_json::to_value(schemars::schema_for!(Invariant)).unwrap();
        let mut names: Vec<String> = Vec::new();
        let mut collect = |v: &serde_json::Value| {
            for n in v["enum"].as_array().into_iter().flatten() {
                names.push(n.as_str().unwrap().to_string());
            }
        };
        collect(&schema);
        for alt in schema["oneOf"].as_array().into_iter().flatten() {
            collect(alt);
        }
        assert!(!names.is_empty(), "{schema}");
        for name in &names {
            let v: Invariant = serde_json::from_value(serde_json::json!(name)).unwrap();
            assert!(
                Invariant::ALL.contains(&v),
                "{name} is not in Invariant::ALL"
            );
        }
        assert_eq!(names.len(), Invariant::ALL.len());
    }
}
