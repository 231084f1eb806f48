//! Each response kind, checked against the exact wire format.

mod common;

use common::{body, post, script};
use serde_json::json;
use stub_api::{Answer, StubServer};

const USAGE_START: &str = r#"{"input_tokens":5,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}"#;

#[tokio::test]
async fn text_message_streams_the_exact_event_sequence() {
    let server = StubServer::start(script(
        "steps:\n  - message: {content: [{text: 'Hello, wörld!'}]}\n",
    ))
    .await
    .unwrap();
    let resp = post(server.addr(), &body(true, "hi")).await;
    assert_eq!(resp.status, 200);
    assert_eq!(
        resp.header("content-type"),
        Some("text/event-stream; charset=utf-8")
    );
    assert_eq!(resp.header("transfer-encoding"), Some("chunked"));
    assert!(resp.complete);
    assert!(resp
        .text()
        .ends_with("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"));
    let events = resp.events();
    let names: Vec<&str> = events.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "message_start",
            "ping",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop"
        ]
    );
    // Each event's type field repeats its name.
    for e in &events {
        assert_eq!(e.json()["type"], e.name.as_str());
    }
    let usage_start: serde_json::Value = serde_json::from_str(USAGE_START).unwrap();
    assert_eq!(
        events[0].json(),
        json!({"type": "message_start", "message": {"id": "msg_0", "type": "message", "role": "assistant",
            "model": "claude-test-1", "content": [], "stop_reason": null, "stop_sequence": null, "usage": usage_start}})
    );
    assert_eq!(events[1].json(), json!({"type": "ping"}));
    assert_eq!(
        events[2].json(),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
    );
    assert_eq!(
        events[3].json(),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hello, wörld!"}})
    );
    assert_eq!(
        events[4].json(),
        json!({"type": "content_block_stop", "index": 0})
    );
    assert_eq!(
        events[5].json(),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null},
            "usage": {"input_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 7}})
    );
    assert_eq!(events[6].json(), json!({"type": "message_stop"}));
    assert_eq!(
        server.journal()[0].answer,
        Answer::Step { step: 0, repeat: 0 }
    );
}

/// The events of a message with two thinking blocks, a redacted one, a text and a tool_use.
const BLOCKS_EVENTS: &[&str] = &[
    "message_start",
    "ping",
    // thinking with its signature
    "content_block_start",
    "content_block_delta",
    "content_block_delta",
    "content_block_stop",
    // thinking with the default signature
    "content_block_start",
    "content_block_delta",
    "content_block_delta",
    "content_block_stop",
    // redacted_thinking: no deltas
    "content_block_start",
    "content_block_stop",
    // text
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    // tool_use
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
];

#[tokio::test]
async fn thinking_redacted_and_tool_use_blocks() {
    let yaml = r#"
steps:
  - message:
      content:
        - thinking: "Let me think"
          signature: sigABC
        - thinking: "More"
        - redacted_thinking: opaque-data
        - text: "Running it"
        - tool_use: {id: toolu_001, name: Bash, input: {command: "echo hi", nested: {a: [1, 2]}}}
"#;
    let server = StubServer::start(script(yaml)).await.unwrap();
    let events = post(server.addr(), &body(true, "hi")).await.events();
    let names: Vec<&str> = events.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, BLOCKS_EVENTS);
    let j: Vec<serde_json::Value> = events.iter().map(|e| e.json()).collect();
    assert_eq!(
        j[2]["content_block"],
        json!({"type": "thinking", "thinking": "", "signature": ""})
    );
    assert_eq!(
        j[3]["delta"],
        json!({"type": "thinking_delta", "thinking": "Let me think"})
    );
    assert_eq!(
        j[4]["delta"],
        json!({"type": "signature_delta", "signature": "sigABC"})
    );
    assert_eq!(j[8]["delta"]["type"], "signature_delta");
    assert!(!j[8]["delta"]["signature"].as_str().unwrap().is_empty());
    assert_eq!(
        j[10],
        json!({"type": "content_block_start", "index": 2,
            "content_block": {"type": "redacted_thinking", "data": "opaque-data"}})
    );
    assert_eq!(j[11], json!({"type": "content_block_stop", "index": 2}));
    assert_eq!(
        j[13]["delta"],
        json!({"type": "text_delta", "text": "Running it"})
    );
    assert_eq!(j[13]["index"], 3);
    assert_eq!(
        j[15],
        json!({"type": "content_block_start", "index": 4,
            "content_block": {"type": "tool_use", "id": "toolu_001", "name": "Bash", "input": {}}})
    );
    assert_eq!(j[16]["delta"]["type"], "input_json_delta");
    assert_eq!(
        j[16]["delta"]["partial_json"],
        r#"{"command":"echo hi","nested":{"a":[1,2]}}"#
    );
    assert_eq!(j[18]["delta"]["stop_reason"], "tool_use");
}

#[tokio::test]
async fn explicit_message_fields() {
    let yaml = r#"
steps:
  - message:
      content: [{text: "cut"}]
      stop_reason: stop_sequence
      stop_sequence: "STOP"
      model: claude-override
      id: msg_custom
      usage: {input_tokens: 11, output_tokens: 22, cache_creation_input_tokens: 3, cache_read_input_tokens: 4}
  - message:
      content: [{tool_use: {id: t1, name: Bash}}]
      stop_reason: max_tokens
"#;
    let server = StubServer::start(script(yaml)).await.unwrap();
    let j: Vec<_> = post(server.addr(), &body(true, "a"))
        .await
        .events()
        .iter()
        .map(|e| e.json())
        .collect();
    assert_eq!(j[0]["message"]["id"], "msg_custom");
    assert_eq!(j[0]["message"]["model"], "claude-override");
    assert_eq!(
        j[0]["message"]["usage"],
        json!({"input_tokens": 11, "cache_creation_input_tokens": 3, "cache_read_input_tokens": 4, "output_tokens": 1})
    );
    assert_eq!(
        j[5],
        json!({"type": "message_delta", "delta": {"stop_reason": "stop_sequence", "stop_sequence": "STOP"},
            "usage": {"input_tokens": 11, "cache_creation_input_tokens": 3, "cache_read_input_tokens": 4, "output_tokens": 22}})
    );
    let j: Vec<_> = post(server.addr(), &body(true, "b"))
        .await
        .events()
        .iter()
        .map(|e| e.json())
        .collect();
    assert_eq!(j[0]["message"]["id"], "msg_1");
    assert_eq!(
        j[3]["delta"],
        json!({"type": "input_json_delta", "partial_json": "{}"})
    );
    assert_eq!(j[5]["delta"]["stop_reason"], "max_tokens");
}

#[tokio::test]
async fn non_streaming_request_gets_one_json_message() {
    let yaml = r#"
steps:
  - message:
      content:
        - thinking: "hmm"
          signature: sig1
        - redacted_thinking: opaque
        - text: "Hello"
        - tool_use: {id: toolu_9, name: Read, input: {file_path: /tmp/x}}
"#;
    let server = StubServer::start(script(yaml)).await.unwrap();
    let mut req = body(false, "hi");
    req.as_object_mut().unwrap().remove("stream");
    let resp = post(server.addr(), &req).await;
    assert_eq!(resp.status, 200);
    assert_eq!(resp.header("content-type"), Some("application/json"));
    assert_eq!(
        resp.header("content-length"),
        Some(resp.body.len().to_string().as_str())
    );
    assert_eq!(
        resp.json(),
        json!({"id": "msg_0", "type": "message", "role": "assistant", "model": "claude-test-1",
            "content": [
                {"type": "thinking", "thinking": "hmm", "signature": "sig1"},
                {"type": "redacted_thinking", "data": "opaque"},
                {"type": "text", "text": "Hello"},
                {"type": "tool_use", "id": "toolu_9", "name": "Read", "input": {"file_path": "/tmp/x"}}
            ],
            "stop_reason": "tool_use", "stop_sequence": null,
            "usage": {"input_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 7}})
    );
}

#[tokio::test]
async fn http_error_with_headers_and_body() {
    let yaml = r#"
steps:
  - http_error:
      status: 529
      headers: {retry-after: "0", x-should-retry: "true", request-id: req_stub_1}
  - http_error: {status: 429, type: rate_limit_error, message: "slow down"}
  - http_error: {status: 500}
  - message: {content: [{text: ok}]}
"#;
    let server = StubServer::start(script(yaml)).await.unwrap();
    let resp = post(server.addr(), &body(true, "a")).await;
    assert_eq!(resp.status, 529);
    assert_eq!(resp.header("content-type"), Some("application/json"));
    assert_eq!(resp.header("retry-after"), Some("0"));
    assert_eq!(resp.header("x-should-retry"), Some("true"));
    assert_eq!(resp.header("request-id"), Some("req_stub_1"));
    assert_eq!(
        resp.json(),
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    );
    let resp = post(server.addr(), &body(true, "b")).await;
    assert_eq!(resp.status, 429);
    assert_eq!(
        resp.json(),
        json!({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}})
    );
    assert!(resp.header("request-id").unwrap().starts_with("req_stub_"));
    let resp = post(server.addr(), &body(false, "c")).await;
    assert_eq!(resp.status, 500);
    assert_eq!(resp.json()["error"]["type"], "api_error");
    let resp = post(server.addr(), &body(true, "d")).await;
    assert_eq!(resp.status, 200);
    let answers: Vec<_> = server
        .journal()
        .into_iter()
        .map(|e| (e.answer, e.status))
        .collect();
    assert_eq!(
        answers,
        [
            (Answer::Step { step: 0, repeat: 0 }, 529),
            (Answer::Step { step: 1, repeat: 0 }, 429),
            (Answer::Step { step: 2, repeat: 0 }, 500),
            (Answer::Step { step: 3, repeat: 0 }, 200),
        ]
    );
}

#[tokio::test]
async fn times_repeat_explicitly_then_forever() {
    let yaml = r#"
steps:
  - times: 2
    message: {content: [{text: first}]}
  - times: forever
    message: {content: [{text: always}]}
"#;
    let server = StubServer::start(script(yaml)).await.unwrap();
    assert_eq!(server.steps_used(), 0);
    let mut texts = Vec::new();
    for i in 0..5 {
        let j = post(server.addr(), &body(false, "x")).await.json();
        assert_eq!(j["id"], format!("msg_{i}"));
        texts.push(j["content"][0]["text"].as_str().unwrap().to_string());
        if i == 0 {
            assert_eq!(server.steps_used(), 1);
        }
    }
    assert_eq!(texts, ["first", "first", "always", "always", "always"]);
    assert_eq!(server.steps_used(), 2);
    let answers: Vec<_> = server.journal().into_iter().map(|e| e.answer).collect();
    assert_eq!(answers[1], Answer::Step { step: 0, repeat: 1 });
    assert_eq!(answers[4], Answer::Step { step: 1, repeat: 2 });
}

#[tokio::test]
async fn server_tool_blocks_stream_and_keep_the_stop_reason() {
    let yaml = r#"
steps:
  - message:
      content:
        - server_tool_use: {id: srvtoolu_1, name: web_search, input: {query: "rust"}}
        - web_search_tool_result: {tool_use_id: srvtoolu_1, content: [{type: web_search_result, url: "https://example.invalid/r", title: R, encrypted_content: e1}]}
        - text: "Found it."
    times: 2
"#;
    let server = StubServer::start(script(yaml)).await.unwrap();
    let events = post(server.addr(), &body(true, "hi")).await.events();
    let names: Vec<&str> = events.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "message_start",
            "ping",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "content_block_start",
            "content_block_stop",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop"
        ]
    );
    let j: Vec<serde_json::Value> = events.iter().map(|e| e.json()).collect();
    assert_eq!(
        j[2]["content_block"],
        json!({"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}})
    );
    assert_eq!(
        j[3]["delta"],
        json!({"type": "input_json_delta", "partial_json": "{\"query\":\"rust\"}"})
    );
    let result = json!({"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1",
        "content": [{"type": "web_search_result", "url": "https://example.invalid/r", "title": "R", "encrypted_content": "e1"}]});
    assert_eq!(j[5]["content_block"], result);
    assert_eq!(j[10]["delta"]["stop_reason"], "end_turn");
    let whole = post(server.addr(), &body(false, "hi")).await.json();
    assert_eq!(
        whole["content"][0],
        json!({"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "rust"}})
    );
    assert_eq!(whole["content"][1], result);
    assert_eq!(whole["stop_reason"], "end_turn");
}
