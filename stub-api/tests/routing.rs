//! Which request gets which answer: steps, unscripted requests, background rules, side
//! traffic, the journal endpoint.

mod common;

use common::{body, observed_body_raw, post, request, script, Conn};
use serde_json::json;
use stub_api::{Answer, Rule, StubServer};

#[tokio::test]
async fn requests_past_the_end_are_unscripted_every_time() {
    let server = StubServer::start(script("steps:\n  - message: {content: [{text: only}]}\n"))
        .await
        .unwrap();
    assert_eq!(post(server.addr(), &body(true, "1")).await.status, 200);
    for n in [2, 3] {
        let resp = post(server.addr(), &body(true, "again")).await;
        assert_eq!(
            resp.status, 400,
            "request #{n} must not repeat the last step"
        );
        assert_eq!(resp.header("x-should-retry"), Some("false"));
        let message = format!(
            "stub-api: no scripted response for request #{n} (script has 1 steps, all used)"
        );
        assert_eq!(
            resp.json(),
            json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}})
        );
    }
    let unscripted = server.unscripted();
    assert_eq!(unscripted.len(), 2);
    assert_eq!(
        unscripted[0].answer,
        Answer::Unscripted {
            message: "stub-api: no scripted response for request #2 (script has 1 steps, all used)"
                .into()
        }
    );
    assert_eq!(unscripted[1].status, 400);
    assert_eq!(server.steps_used(), 1);
}

#[tokio::test]
async fn an_empty_script_answers_nothing() {
    let server = StubServer::start(script("steps: []")).await.unwrap();
    let resp = post(server.addr(), &body(false, "x")).await;
    assert_eq!(resp.status, 400);
    assert_eq!(
        resp.json()["error"]["message"],
        "stub-api: no scripted response for request #1 (script has 0 steps, all used)"
    );
}

#[tokio::test]
async fn unmatched_step_names_the_failed_predicate() {
    let yaml = r#"
steps:
  - match: {model_contains: opus}
    message: {content: [{text: first}]}
  - match: {tool_results: [toolu_p1, toolu_p2], message_count: 3}
    message: {content: [{text: second}]}
"#;
    let server = StubServer::start(script(yaml)).await.unwrap();
    let resp = post(server.addr(), &body(false, "x")).await;
    assert_eq!(resp.status, 400);
    assert_eq!(
        resp.json()["error"]["message"],
        "stub-api: request #1 matches no step: step 0 expects `model_contains: \"opus\"` but the request's model is \"claude-test-1\""
    );
    // The unmatched request did not consume the step.
    let mut ok = body(false, "x");
    ok["model"] = json!("claude-opus-4-8");
    assert_eq!(
        post(server.addr(), &ok).await.json()["content"][0]["text"],
        "first"
    );
    // Step 1 wants both tool results in the last user message.
    let mut partial = body(false, "x");
    partial["messages"] = json!([
        {"role": "user", "content": "run"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_p1", "name": "Bash", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_p1", "content": "one"}]}
    ]);
    let resp = post(server.addr(), &partial).await;
    assert_eq!(resp.status, 400);
    let message = resp.json()["error"]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        message.starts_with("stub-api: request #3 matches no step: step 1 expects `tool_results: [\"toolu_p1\", \"toolu_p2\"]`"),
        "{message}"
    );
    assert!(message.contains("missing [\"toolu_p2\"]"), "{message}");
    partial["messages"][2]["content"]
        .as_array_mut()
        .unwrap()
        .push(json!({"type": "tool_result", "tool_use_id": "toolu_p2", "content": [{"type": "text", "text": "two"}]}));
    assert_eq!(
        post(server.addr(), &partial).await.json()["content"][0]["text"],
        "second"
    );
    let answers: Vec<_> = server.journal().into_iter().map(|e| e.answer).collect();
    assert!(matches!(answers[0], Answer::Unscripted { .. }));
    assert_eq!(answers[1], Answer::Step { step: 0, repeat: 0 });
    assert!(matches!(answers[2], Answer::Unscripted { .. }));
    assert_eq!(answers[3], Answer::Step { step: 1, repeat: 0 });
}

#[tokio::test]
async fn title_request_before_main_goes_to_the_builtin_rule() {
    let yaml = r#"
builtin_rules: [claude-code-session-title]
steps:
  - message: {content: [{text: "main answer"}]}
"#;
    let server = StubServer::start(script(yaml)).await.unwrap();
    let title = observed_body_raw("title_request.requests.jsonl", 0);
    let main = observed_body_raw("title_request.requests.jsonl", 1);
    let resp = request(
        server.addr(),
        "POST",
        "/v1/messages?beta=true",
        title.as_bytes(),
    )
    .await;
    assert_eq!(resp.status, 200);
    let events = resp.events();
    let text: String = events
        .iter()
        .filter(|e| e.name == "content_block_delta")
        .map(|e| e.json()["delta"]["text"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(text, r#"{"title":"Stub session"}"#);
    assert_eq!(events[0].json()["message"]["model"], "claude-opus-4-8");
    assert_eq!(
        server.steps_used(),
        0,
        "the title request must not consume a step"
    );

    let resp = request(
        server.addr(),
        "POST",
        "/v1/messages?beta=true",
        main.as_bytes(),
    )
    .await;
    let text: Vec<String> = resp
        .events()
        .iter()
        .filter(|e| e.name == "content_block_delta")
        .map(|e| e.json()["delta"]["text"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(text, ["main answer"]);
    let journal = server.journal();
    assert_eq!(
        journal[0].answer,
        Answer::Background {
            rule: Rule::CLAUDE_CODE_SESSION_TITLE.into()
        }
    );
    assert_eq!(journal[1].answer, Answer::Step { step: 0, repeat: 0 });
    assert!(server.unscripted().is_empty());
}

/// Qwen Code 0.24.4, captured from a real run: its main request (line 0) and the
/// memory-extraction request it sends beside it (line 1), both with `Authorization: Bearer`
/// and no `x-api-key`.
#[tokio::test]
async fn qwen_memory_extraction_goes_to_the_builtin_rule_and_bearer_auth_is_accepted() {
    let yaml = r#"
builtin_rules: [qwen-code-memory-extraction]
steps:
  - message: {content: [{text: "main answer"}]}
"#;
    let server = StubServer::start(script(yaml)).await.unwrap();
    let file = "qwen_memory_extraction.requests.jsonl";
    let (main, memory) = (observed_body_raw(file, 0), observed_body_raw(file, 1));
    let addr = server.addr();
    let send = |body: String| async move {
        let bearer = [("authorization", "Bearer sk-ant-streamcheck-dummy-key")];
        let mut conn = Conn::connect(addr).await;
        conn.send("POST", "/v1/messages", &bearer, body.as_bytes())
            .await
    };
    // The side request first, as if it raced ahead of the main one.
    let resp = send(memory).await;
    assert_eq!(resp.status, 200);
    assert_eq!(server.steps_used(), 0, "the side request consumes no step");
    let resp = send(main).await;
    assert_eq!(resp.status, 200);
    let text: Vec<String> = resp
        .events()
        .iter()
        .filter(|e| e.name == "content_block_delta")
        .map(|e| e.json()["delta"]["text"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(text, ["main answer"]);
    let journal = server.journal();
    assert_eq!(
        journal[0].answer,
        Answer::Background {
            rule: Rule::QWEN_CODE_MEMORY_EXTRACTION.into()
        }
    );
    assert_eq!(journal[1].answer, Answer::Step { step: 0, repeat: 0 });
    assert_eq!(journal[1].headers["authorization"], "[redacted]");
    assert!(server.unscripted().is_empty());
}

#[tokio::test]
async fn explicit_background_rules_come_first_and_count_their_times() {
    let yaml = r#"
background:
  - name: title-twice
    times: 2
    match: {output_format_property: title, has_tools: false}
    message: {content: [{text: '{"title": "Test session"}'}]}
  - name: count-probe
    match: {last_user_text_contains: "probe"}
    http_error: {status: 500}
builtin_rules: [claude-code-session-title]
steps:
  - message: {content: [{text: main}]}
"#;
    let server = StubServer::start(script(yaml)).await.unwrap();
    let title = observed_body_raw("title_request.requests.jsonl", 0);
    for _ in 0..3 {
        request(server.addr(), "POST", "/v1/messages", title.as_bytes()).await;
    }
    assert_eq!(post(server.addr(), &body(true, "probe")).await.status, 500);
    assert_eq!(
        post(server.addr(), &body(false, "main")).await.json()["id"],
        "msg_0"
    );
    let rules: Vec<_> = server.journal().into_iter().map(|e| e.answer).collect();
    let bg = |r: &str| Answer::Background { rule: r.into() };
    assert_eq!(
        rules,
        [
            bg("title-twice"),
            bg("title-twice"),
            bg(Rule::CLAUDE_CODE_SESSION_TITLE),
            bg("count-probe"),
            Answer::Step { step: 0, repeat: 0 }
        ]
    );
}

#[tokio::test]
async fn side_traffic_is_recorded_and_consumes_nothing() {
    let server = StubServer::start(script("steps:\n  - message: {content: [{text: hi}]}\n"))
        .await
        .unwrap();
    let addr = server.addr();
    let head = request(addr, "HEAD", "/", b"").await;
    assert_eq!(head.status, 200);
    let get = request(addr, "GET", "/", b"").await;
    assert_eq!((get.status, get.body.len()), (200, 0));
    let count = request(
        addr,
        "POST",
        "/v1/messages/count_tokens?beta=true",
        body(false, "x").to_string().as_bytes(),
    )
    .await;
    assert_eq!(count.status, 200);
    assert!(count.json()["input_tokens"].as_u64().unwrap() > 0);
    let missing = request(addr, "GET", "/v1/models", b"").await;
    assert_eq!(missing.status, 404);
    assert_eq!(missing.json()["type"], "error");
    assert_eq!(missing.json()["error"]["type"], "not_found_error");
    assert_eq!(server.steps_used(), 0);
    let resp = request(
        addr,
        "POST",
        "/some/prefix/v1/messages?beta=true",
        body(false, "x").to_string().as_bytes(),
    )
    .await;
    assert_eq!(resp.json()["id"], "msg_0");

    let journal = server.journal();
    let summary: Vec<_> = journal
        .iter()
        .map(|e| {
            (
                e.seq,
                e.method.as_str(),
                e.path.as_str(),
                e.status,
                e.answer.clone(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (0, "HEAD", "/", 200, Answer::Side),
            (1, "GET", "/", 200, Answer::Side),
            (2, "POST", "/v1/messages/count_tokens", 200, Answer::Side),
            (3, "GET", "/v1/models", 404, Answer::Side),
            (
                4,
                "POST",
                "/some/prefix/v1/messages",
                200,
                Answer::Step { step: 0, repeat: 0 }
            ),
        ]
    );
    assert_eq!(journal[2].query.as_deref(), Some("beta=true"));
    assert_eq!(journal[4].model.as_deref(), Some("claude-test-1"));
}

#[tokio::test]
async fn journal_endpoint_serves_ndjson() {
    let server = StubServer::start(script("steps:\n  - message: {content: [{text: hi}]}\n"))
        .await
        .unwrap();
    request(server.addr(), "HEAD", "/", b"").await;
    post(server.addr(), &body(true, "hello")).await;
    let resp = request(server.addr(), "GET", "/__stub/journal", b"").await;
    assert_eq!(resp.status, 200);
    assert_eq!(resp.header("content-type"), Some("application/x-ndjson"));
    let entries = stub_api::journal::read_ndjson(&resp.text()).unwrap();
    assert_eq!(entries, server.journal());
    assert_eq!(
        entries.len(),
        2,
        "reading the journal is not itself journaled"
    );
    assert_eq!(
        entries[1].body()["messages"][0]["content"][0]["text"],
        "hello"
    );
}

#[tokio::test]
async fn non_json_body_is_recorded_raw_and_refused() {
    let server = StubServer::start(script("steps:\n  - message: {content: [{text: hi}]}\n"))
        .await
        .unwrap();
    let resp = request(server.addr(), "POST", "/v1/messages", b"{not json").await;
    assert_eq!(resp.status, 400);
    let message = resp.json()["error"]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        message.starts_with("stub-api: request #1 has a body that is not JSON"),
        "{message}"
    );
    let entry = &server.journal()[0];
    assert_eq!(entry.body_raw, "{not json");
    assert!(entry.is_unscripted());
    assert_eq!(server.steps_used(), 0);
    // Unknown fields and odd shapes are fine.
    let odd = json!({"model": "m", "stream": false, "betas": ["x"], "context_management": {},
        "messages": [{"role": "system", "content": "sys"}, {"role": "user", "content": "u"}]});
    assert_eq!(post(server.addr(), &odd).await.status, 200);
}

#[tokio::test]
async fn keep_alive_connection_serves_many_requests() {
    let server = StubServer::start(script(
        "steps:\n  - times: 20\n    message: {content: [{text: hi}]}\n",
    ))
    .await
    .unwrap();
    let mut conn = Conn::connect(server.addr()).await;
    for i in 0..20 {
        let stream = i % 2 == 0;
        let resp = conn
            .send(
                "POST",
                "/v1/messages",
                &[],
                body(stream, "x").to_string().as_bytes(),
            )
            .await;
        assert_eq!(resp.status, 200);
        assert!(resp.complete);
    }
    let resp = conn.send("HEAD", "/", &[], b"").await;
    assert_eq!(resp.status, 200);
    assert_eq!(server.journal().len(), 21);
}

#[tokio::test]
async fn a_tool_use_input_takes_a_value_from_the_answered_tool_result() {
    let yaml = r#"
steps:
  - message: {content: [{tool_use: {id: t2, name: TaskStop, input: {task_id: {$from_tool_result: t1, regex: "with ID: (\\w+)\\."}}}}]}
  - message: {content: [{tool_use: {id: t3, name: TaskStop, input: {task_id: {$from_tool_result: t1, regex: "with ID: (\\w+)\\."}}}}]}
"#;
    let server = StubServer::start(script(yaml)).await.unwrap();
    let with_result = |text: &str| {
        json!({"model": "m", "stream": false, "messages": [{"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": text}]}]}]})
    };
    let resp = post(
        server.addr(),
        &with_result("Command running in background with ID: bq7z1. Output is ..."),
    )
    .await;
    assert_eq!(resp.status, 200);
    assert_eq!(
        resp.json()["content"][0]["input"],
        json!({"task_id": "bq7z1"})
    );
    // The result in an earlier user message is found too.
    let later = json!({"model": "m", "stream": false, "messages": [
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "with ID: early1."}]},
        {"role": "assistant", "content": "x"},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2", "content": "stopped"}]}]});
    let server2 = StubServer::start(script(yaml)).await.unwrap();
    let resp = post(server2.addr(), &later).await;
    assert_eq!(
        resp.json()["content"][0]["input"],
        json!({"task_id": "early1"})
    );
    // The same reference on a request whose result does not match: not answered, named.
    let resp = post(server.addr(), &with_result("no id here")).await;
    assert_eq!(resp.status, 400);
    let message = resp.json()["error"]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        message.starts_with("stub-api: request #2: step 1: `$from_tool_result: t1`: /with ID: (\\w+)\\./ does not match its text \"no id here\""),
        "{message}"
    );
    assert_eq!(server.unscripted().len(), 1);
}
