//! What the Agent SDKs require of the CLI's output, checked in every scenario that plays
//! an SDK (`client.profile`). Each rule names the SDK behaviour a violation triggers
//! (Python `claude-agent-sdk` 0.2.187 `message_parser.py` / `subprocess_cli.py`,
//! TypeScript `@anthropic-ai/claude-agent-sdk` `readMessages`).

use crate::client::ClientLog;
use crate::divergence::{Divergence, Kind};
use crate::printed::output::{Frame, Output};
use serde_json::Value;

const PY_PARSE: &str =
    "Python SDK: MessageParseError (KeyError in message_parser.py), which ends the query";

/// Every contract violation in a finished run.
pub fn check(output: &Output, exit_code: Option<i32>, log: &ClientLog) -> Vec<Divergence> {
    let mut out = Vec::new();
    let sdk = log.sdk.as_deref().unwrap_or("the SDK");
    for bad in output.bad_lines.iter().take(3) {
        let fatal = if bad.excerpt.starts_with('{') {
            "Python SDK: CLIJSONDecodeError, fatal (a line starting with `{` must parse)"
        } else {
            "Python SDK < 0.1.51 and TypeScript SDK 0.1.0: fatal or a hang; newer ones skip it"
        };
        out.push(
            Divergence::new(
                Kind::SdkContract,
                format!(
                    "stdout line {} is not a JSON object ({}): {fatal}",
                    bad.line, bad.problem
                ),
            )
            .actual(Value::String(bad.excerpt.clone())),
        );
        out.last_mut().expect("just pushed").line = Some(bad.line);
    }
    out.extend(requests_answered_once(output, log, sdk));
    for f in &output.frames {
        out.extend(frame_fields(f));
    }
    out.extend(exit_after_error_result(output, exit_code));
    out
}

fn div(f: &Frame, path: &str, message: String) -> Divergence {
    f.divergence(Kind::SdkContract, message).at_path(path)
}

fn requests_answered_once(output: &Output, log: &ClientLog, sdk: &str) -> Vec<Divergence> {
    let mut out = Vec::new();
    for req in &log.requests {
        let answers: Vec<&Frame> = output
            .frames
            .iter()
            .filter(|f| {
                f.value["type"] == "control_response"
                    && f.value["response"]["request_id"].as_str() == Some(&req.id)
            })
            .collect();
        let named = req
            .name
            .as_ref()
            .map_or(String::new(), |n| format!(" (`{n}`)"));
        match answers.len() {
            1 => {}
            0 => out.push(
                Divergence::new(
                    Kind::SdkContract,
                    format!(
                        "the client's {} request {}{named} got no control_response: {sdk} waits for it (Python: \"Control request timeout: {}\" after 60 s; TypeScript: hangs)",
                        req.subtype, req.id, req.subtype
                    ),
                )
                .at_path("$.response.request_id")
                .expected(Value::String(req.id.clone())),
            ),
            n => out.push(
                div(
                    answers[1],
                    "$.response.request_id",
                    format!(
                        "the client's {} request {}{named} got {n} control_responses: one per request, the SDKs drop the rest",
                        req.subtype, req.id
                    ),
                ),
            ),
        }
    }
    out
}

fn frame_fields(f: &Frame) -> Vec<Divergence> {
    let v = &f.value;
    let mut out = Vec::new();
    let missing =
        |path: &str, who: &str| div(f, path, format!("frame {} lacks {path}: {who}", f.index));
    match v["type"].as_str() {
        Some("assistant") => {
            if !v["message"]["model"].is_string() {
                out.push(missing("$.message.model", PY_PARSE));
            }
            match v["message"]["content"].as_array() {
                None => out.push(div(
                    f,
                    "$.message.content",
                    format!(
                        "frame {}: assistant message.content is not a list: {PY_PARSE}",
                        f.index
                    ),
                )),
                Some(blocks) => {
                    for (i, b) in blocks.iter().enumerate() {
                        if b["type"] == "thinking" && !b["signature"].is_string() {
                            out.push(missing(
                                &format!("$.message.content[{i}].signature"),
                                PY_PARSE,
                            ));
                        }
                    }
                }
            }
        }
        Some("result") => {
            for key in [
                "subtype",
                "duration_ms",
                "duration_api_ms",
                "is_error",
                "num_turns",
                "session_id",
            ] {
                if v.get(key).is_none_or(Value::is_null) {
                    out.push(missing(&format!("$.{key}"), PY_PARSE));
                }
            }
            let error = v["is_error"] == true && v["subtype"] != "success";
            if error && !v["errors"].is_array() {
                out.push(missing(
                    "$.errors",
                    "TypeScript SDK: `errors.map` throws a TypeError in readMessages on an error result without `errors`, which ends the query",
                ));
            }
        }
        Some("stream_event") => {
            for key in ["uuid", "session_id", "event"] {
                if v.get(key).is_none_or(Value::is_null) {
                    out.push(missing(&format!("$.{key}"), PY_PARSE));
                }
            }
        }
        _ => {}
    }
    out
}

fn exit_after_error_result(output: &Output, exit_code: Option<i32>) -> Vec<Divergence> {
    let Some(code) = exit_code.filter(|c| *c != 0) else {
        return Vec::new();
    };
    let last = output
        .frames
        .iter()
        .rev()
        .find(|f| f.value["type"] == "result");
    if last.is_some_and(|f| f.value["is_error"] == true) {
        return Vec::new();
    }
    vec![Divergence::new(
        Kind::SdkContract,
        format!(
            "exit code {code} without an error result before it: Python SDK raises ProcessError, TypeScript SDK \"Claude Code process exited with code {code}\" (an error result first makes it \"returned an error result\")"
        ),
    )
    .actual(code.into())]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::session::SentRequest;

    fn log(ids: &[&str]) -> ClientLog {
        ClientLog {
            requests: ids
                .iter()
                .map(|id| SentRequest {
                    name: Some("initialize".into()),
                    id: id.to_string(),
                    subtype: "initialize".into(),
                })
                .collect(),
            sdk: Some("sdk 1".into()),
            ..ClientLog::default()
        }
    }

    fn run(text: &str, code: i32, ids: &[&str]) -> Vec<Divergence> {
        check(&Output::parse(text.as_bytes()), Some(code), &log(ids))
    }

    const OK_RESULT: &str = r#"{"type":"result","subtype":"success","duration_ms":1,"duration_api_ms":1,"is_error":false,"num_turns":1,"session_id":"s"}"#;

    #[test]
    fn a_clean_run_keeps_the_contract() {
        let resp =
            r#"{"type":"control_response","response":{"subtype":"success","request_id":"a"}}"#;
        let asst = r#"{"type":"assistant","message":{"model":"m","content":[{"type":"thinking","thinking":"x","signature":"s"}]}}"#;
        assert_eq!(
            run(&format!("{resp}\n{asst}\n{OK_RESULT}\n"), 0, &["a"]),
            vec![]
        );
    }

    #[test]
    fn unanswered_and_twice_answered_requests() {
        let d = run(&format!("{OK_RESULT}\n"), 0, &["a"]);
        assert_eq!(d.len(), 1);
        assert!(d[0].message.contains("got no control_response"), "{}", d[0]);
        let resp =
            r#"{"type":"control_response","response":{"subtype":"success","request_id":"a"}}"#;
        let d = run(&format!("{resp}\n{resp}\n"), 0, &["a"]);
        assert!(d[0].message.contains("got 2 control_responses"));
        assert_eq!(d[0].frame, Some(1));
    }

    #[test]
    fn missing_fields_name_their_path_and_the_sdk() {
        let asst =
            r#"{"type":"assistant","message":{"content":[{"type":"thinking","thinking":"x"}]}}"#;
        let err = r#"{"type":"result","subtype":"error_during_execution","duration_ms":1,"duration_api_ms":1,"is_error":true,"num_turns":1}"#;
        let ev = r#"{"type":"stream_event","event":{}}"#;
        let d = run(&format!("{asst}\n{ev}\n{err}\nnot json\n"), 1, &[]);
        let paths: Vec<&str> = d.iter().filter_map(|x| x.path.as_deref()).collect();
        assert_eq!(
            paths,
            [
                "$.message.model",
                "$.message.content[0].signature",
                "$.uuid",
                "$.session_id",
                "$.session_id",
                "$.errors"
            ]
        );
        assert!(d[0].message.contains("not a JSON object"));
        assert!(d.iter().any(|x| x.message.contains("TypeScript SDK")));
        assert!(d.iter().all(|x| x.kind == Kind::SdkContract));
    }

    #[test]
    fn non_zero_exit_needs_an_error_result_first() {
        assert_eq!(run(&format!("{OK_RESULT}\n"), 1, &[]).len(), 1);
        let err = OK_RESULT
            .replace("\"success\"", "\"error_max_turns\"")
            .replace("\"is_error\":false", "\"is_error\":true,\"errors\":[]");
        assert!(run(&format!("{err}\n"), 1, &[]).is_empty());
    }
}
