use super::*;
use crate::pattern::Vars;
use crate::printed::output::Frame;
use serde_json::{json, Value};

fn plan_of(yaml: &str, turns: usize) -> Plan {
    let spec: ClientSpec = serde_yaml::from_str(yaml).unwrap();
    spec.validate().unwrap();
    let profile = spec.profile.as_deref().map(|p| profile::get(p).unwrap());
    Plan {
        profile,
        initialize: profile.map(|p| p.initialize(spec.initialize.as_ref())),
        lines: spec.conversation,
        responders: spec.respond,
        close: ClosePolicy::WhenSettled { turns },
        one_first_write: spec.one_first_write,
        split_utf8_chars: spec.split_utf8_chars,
    }
}

fn frame(i: usize, v: Value) -> Frame {
    Frame {
        index: i,
        line: i + 1,
        at_ms: 0,
        value: v,
    }
}

fn written(ios: &[Io]) -> Vec<Value> {
    ios.iter()
        .filter_map(|io| match io {
            Io::Write(l) => Some(serde_json::from_str(l).unwrap()),
            Io::Close => None,
        })
        .collect()
}

#[test]
fn python_waits_for_the_initialize_response_then_closes_when_settled() {
    let mut c = Client::new(
        plan_of("profile: sdk-py\nconversation:\n  - user: hi\n", 1),
        Vars::default(),
    );
    let first = c.start();
    assert_eq!(first.len(), 1, "only initialize before its response");
    let init = &written(&first)[0];
    assert_eq!(
        init["request"],
        json!({"subtype": "initialize", "hooks": null})
    );
    let id = init["request_id"].as_str().unwrap().to_string();
    assert!(id.starts_with("req_1_"), "{id}");
    let other = c.on_frame(&frame(
        0,
        json!({"type": "control_response", "response": {"request_id": "nope"}}),
    ));
    assert!(other.is_empty());
    let next = c.on_frame(&frame(
        1,
        json!({"type": "control_response", "response": {"subtype": "success", "request_id": id}}),
    ));
    assert_eq!(written(&next)[0]["message"]["content"], "hi");
    assert!(
        !next.contains(&Io::Close),
        "stdin stays open until the result"
    );
    let end = c.on_frame(&frame(2, json!({"type": "result"})));
    assert_eq!(end, vec![Io::Close]);
    let log = c.finish();
    assert_eq!(log.captures()["initialize"], json!(id));
}

#[test]
fn typescript_pipelines_the_prompt() {
    let mut c = Client::new(
        plan_of("profile: sdk-ts\nconversation:\n  - user: hi\n", 1),
        Vars::default(),
    );
    let out = written(&c.start());
    assert_eq!(out.len(), 2);
    let id = out[0]["request_id"].as_str().unwrap();
    assert!(
        id.len() == 11 && id.chars().all(|c| c.is_ascii_alphanumeric()),
        "{id}"
    );
    assert_eq!(
        out[1]["message"]["content"],
        json!([{"type": "text", "text": "hi"}])
    );
}

#[test]
fn responders_answer_with_values_from_the_request_and_unmatched_requests_are_logged() {
    let yaml = r#"
conversation:
  - user: hi
respond:
  - on: {subtype: can_use_tool, tool_name: Bash}
    reply: {behavior: allow, updatedInput: $request.input}
  - on: hook_callback
    times: 1
    reply: {}
"#;
    let mut c = Client::new(plan_of(yaml, 1), Vars::default());
    c.start();
    let req = json!({"type": "control_request", "request_id": "r1", "request": {"subtype": "can_use_tool", "tool_name": "Bash", "input": {"command": "ls"}}});
    let out = written(&c.on_frame(&frame(0, req)));
    assert_eq!(
        out[0],
        json!({"type": "control_response", "response": {"subtype": "success", "request_id": "r1", "response": {"behavior": "allow", "updatedInput": {"command": "ls"}}}})
    );
    let hook = |id: &str| json!({"type": "control_request", "request_id": id, "request": {"subtype": "hook_callback"}});
    assert_eq!(written(&c.on_frame(&frame(1, hook("h1")))).len(), 1);
    assert!(
        c.on_frame(&frame(2, hook("h2"))).is_empty(),
        "times: 1 is used up"
    );
    let log = c.finish();
    assert_eq!(log.unanswered.len(), 1);
    assert_eq!(log.unanswered[0].value["request_id"], "h2");
}

#[test]
fn waits_count_frames_bind_names_and_replies_use_them() {
    let yaml = r#"
conversation:
  - user: go
  - wait: {type: stream_event}
    count: 2
  - request: {subtype: interrupt}
    as: int
  - wait: {type: control_request, request: {subtype: can_use_tool}}
    as: perm
  - reply: perm
    response: {behavior: allow, updatedInput: $perm.request.input}
respond:
  - on: can_use_tool
    silent: true
"#;
    let mut c = Client::new(plan_of(yaml, 0), Vars::default());
    assert_eq!(written(&c.start()).len(), 1);
    assert!(c
        .on_frame(&frame(0, json!({"type": "stream_event"})))
        .is_empty());
    let out = written(&c.on_frame(&frame(1, json!({"type": "stream_event"}))));
    assert_eq!(out[0]["request"]["subtype"], "interrupt");
    let perm = json!({"type": "control_request", "request_id": "p1", "request": {"subtype": "can_use_tool", "input": {"a": 1}}});
    let out = c.on_frame(&frame(2, perm));
    let frames = written(&out);
    assert_eq!(frames[0]["response"]["request_id"], "p1");
    assert_eq!(
        frames[0]["response"]["response"]["updatedInput"],
        json!({"a": 1})
    );
    assert!(
        !out.contains(&Io::Close),
        "the interrupt is not answered yet"
    );
    let int_id = c.requests()[0].id.clone();
    let out = c.on_frame(&frame(
        3,
        json!({"type": "control_response", "response": {"request_id": int_id}}),
    ));
    assert_eq!(out, vec![Io::Close]);
    assert!(c.finish().unanswered.is_empty());
}

#[test]
fn a_responder_can_close_stdin_and_templates_that_name_nothing_are_errors() {
    let yaml = "conversation:\n  - send: {type: user, x: $nobody}\nrespond:\n  - {on: can_use_tool, close_stdin: true}\n";
    let mut c = Client::new(plan_of(yaml, 5), Vars::default());
    assert!(c.start().is_empty());
    let req = json!({"type": "control_request", "request_id": "r", "request": {"subtype": "can_use_tool"}});
    assert_eq!(c.on_frame(&frame(0, req)), vec![Io::Close]);
    let log = c.finish();
    assert!(log.errors[0].contains("`$nobody`"), "{:?}", log.errors);
}

#[test]
fn one_first_write_sends_initialize_and_a_200_kb_prompt_in_a_single_write() {
    let yaml = "profile: sdk-ts\none_first_write: true\nconversation:\n  - {user: \"0123456789 \", repeat: 20000}\n  - wait: {type: result}\n  - user: second\n";
    let mut c = Client::new(plan_of(yaml, 2), Vars::default());
    let first = c.start();
    assert_eq!(first.len(), 1, "one write: {} pieces", first.len());
    let Io::Write(chunk) = &first[0] else {
        panic!("a write, not a close")
    };
    let lines: Vec<Value> = chunk
        .split('\n')
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["request"]["subtype"], "initialize");
    let text = lines[1]["message"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(text.len(), 220_000);
    // Lines after the first wait are written on their own, as before.
    let later = c.on_frame(&frame(0, json!({"type": "result"})));
    assert_eq!(written(&later).len(), 1);
}

#[test]
fn without_one_first_write_each_first_line_is_its_own_write() {
    let yaml = "profile: sdk-ts\nconversation:\n  - user: hi\n";
    let mut c = Client::new(plan_of(yaml, 1), Vars::default());
    assert_eq!(written(&c.start()).len(), 2);
}

#[test]
fn utf8_split_parts_cut_after_each_lead_byte_and_keep_the_bytes() {
    let text = "a é 日 🎉\n".as_bytes();
    let parts = pump::utf8_split_parts(text);
    assert_eq!(parts.concat(), text);
    assert_eq!(parts.len(), 4, "{parts:?}");
    for part in &parts[..3] {
        // Each part but the last ends on a lead byte: the character is cut there.
        assert!(*part.last().unwrap() >= 0xC0, "{part:?}");
        assert!(std::str::from_utf8(part).is_err());
    }
    assert_eq!(pump::utf8_split_parts(b"ascii\n"), vec![&b"ascii\n"[..]]);
}
