//! Transport faults, checked on the wire. Delays are checked only as lower bounds, which
//! a slow machine cannot break.

mod common;

use common::{body, post, script, Conn};
use serde_json::json;
use stub_api::StubServer;

const BLOCKS: &str = r#"
        - thinking: "Let me think ✓ about it"
          signature: sigABC
        - text: "Héllo, wörld! ✓ done"
        - tool_use: {id: toolu_1, name: Bash, input: {command: "echo ✓ hi"}}"#;

fn faulty(faults: &str) -> stub_api::Script {
    script(&format!(
        "steps:\n  - faults: {faults}\n    message:\n      content:{BLOCKS}\n"
    ))
}

fn plain() -> stub_api::Script {
    script(&format!("steps:\n  - message:\n      content:{BLOCKS}\n"))
}

async fn plain_body(stream: bool) -> Vec<u8> {
    let server = StubServer::start(plain()).await.unwrap();
    post(server.addr(), &body(stream, "hi")).await.body
}

#[tokio::test]
async fn split_deltas_reassemble_to_the_same_content() {
    let server = StubServer::start(faulty("{split_deltas: 5}"))
        .await
        .unwrap();
    let resp = post(server.addr(), &body(true, "hi")).await;
    assert!(resp.complete);
    let events = resp.events();
    let deltas: Vec<serde_json::Value> = events
        .iter()
        .filter(|e| e.name == "content_block_delta")
        .map(|e| e.json()["delta"].clone())
        .collect();
    let of = |ty: &str, field: &str| -> Vec<String> {
        deltas
            .iter()
            .filter(|d| d["type"] == ty)
            .map(|d| d[field].as_str().unwrap().to_string())
            .collect()
    };
    let thinking = of("thinking_delta", "thinking");
    let text = of("text_delta", "text");
    let json_parts = of("input_json_delta", "partial_json");
    assert_eq!(thinking.len(), 5);
    assert_eq!(text.len(), 5);
    assert_eq!(json_parts.len(), 5);
    assert!(text.iter().all(|p| !p.is_empty()));
    assert_eq!(thinking.concat(), "Let me think ✓ about it");
    assert_eq!(text.concat(), "Héllo, wörld! ✓ done");
    let input: serde_json::Value = serde_json::from_str(&json_parts.concat()).unwrap();
    assert_eq!(input, json!({"command": "echo ✓ hi"}));
    // The signature is still one delta, after the thinking deltas.
    assert_eq!(of("signature_delta", "signature"), ["sigABC"]);
    let names: Vec<&str> = events.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names.len(), 2 + (2 + 6) + (2 + 5) + (2 + 5) + 2);
    assert_eq!(names.last(), Some(&"message_stop"));
}

#[tokio::test]
async fn chunk_bytes_writes_small_chunks_with_identical_bytes() {
    let reference = plain_body(true).await;
    let server = StubServer::start(faulty("{chunk_bytes: 7}")).await.unwrap();
    let resp = post(server.addr(), &body(true, "hi")).await;
    assert!(resp.complete);
    assert_eq!(resp.body, reference, "chunking must not change the bytes");
    // Every chunk on the wire is at most 7 bytes: the stream was written piecewise,
    // with boundaries inside lines and inside multi-byte characters.
    assert_eq!(resp.chunk_sizes.len(), reference.len().div_ceil(7));
    assert!(resp.chunk_sizes.iter().all(|&n| n <= 7));
    let cuts_inside_chars = resp
        .chunk_sizes
        .iter()
        .scan(0, |at, n| {
            *at += n;
            Some(*at)
        })
        .filter(|&at| at < reference.len() && (reference[at] & 0xC0) == 0x80)
        .count();
    assert!(cuts_inside_chars > 0);
    eprintln!("socket reads: {}", resp.reads);
}

#[tokio::test]
async fn chunk_bytes_on_a_non_streaming_response() {
    let reference = plain_body(false).await;
    let server = StubServer::start(faulty("{chunk_bytes: 10}"))
        .await
        .unwrap();
    let resp = post(server.addr(), &body(false, "hi")).await;
    assert_eq!(resp.body, reference);
    assert_eq!(
        resp.header("content-length"),
        Some(reference.len().to_string().as_str())
    );
}

#[tokio::test]
async fn disconnect_truncates_the_stream() {
    let server = StubServer::start(faulty("{disconnect_after_events: 4}"))
        .await
        .unwrap();
    let resp = post(server.addr(), &body(true, "hi")).await;
    assert_eq!(resp.status, 200);
    assert!(!resp.complete, "the chunked body must not be terminated");
    assert_eq!(
        resp.event_names(),
        [
            "message_start",
            "ping",
            "content_block_start",
            "content_block_delta"
        ]
    );
    // The server itself keeps serving (the script is used up: an unscripted 400).
    let next = post(server.addr(), &body(true, "again")).await;
    assert_eq!(next.status, 400);
}

#[tokio::test]
async fn disconnect_with_chunks_still_cuts_after_the_event() {
    let server = StubServer::start(faulty("{disconnect_after_events: 2, chunk_bytes: 5}"))
        .await
        .unwrap();
    let resp = post(server.addr(), &body(true, "hi")).await;
    assert!(!resp.complete);
    assert_eq!(resp.event_names(), ["message_start", "ping"]);
}

#[tokio::test]
async fn stream_error_event_then_end() {
    let server = StubServer::start(faulty("{stream_error: {after_events: 1}}"))
        .await
        .unwrap();
    let resp = post(server.addr(), &body(true, "hi")).await;
    assert_eq!(resp.status, 200);
    assert!(
        resp.complete,
        "the response ends normally after the error event"
    );
    let events = resp.events();
    let names: Vec<&str> = events.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["message_start", "error"]);
    assert_eq!(
        events[1].json(),
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    );

    let server = StubServer::start(faulty(
        "{stream_error: {after_events: 3, type: api_error, message: boom}}",
    ))
    .await
    .unwrap();
    let events = post(server.addr(), &body(true, "hi")).await.events();
    assert_eq!(events.len(), 4);
    assert_eq!(events[3].name, "error");
    assert_eq!(
        events[3].json()["error"],
        json!({"type": "api_error", "message": "boom"})
    );
}

#[tokio::test]
async fn malformed_data_line_is_inserted() {
    let reference = common::parse_sse(&String::from_utf8(plain_body(true).await).unwrap());
    let server = StubServer::start(faulty("{malformed_data_after_events: 2}"))
        .await
        .unwrap();
    let resp = post(server.addr(), &body(true, "hi")).await;
    assert!(resp.complete);
    let events = resp.events();
    assert_eq!(events.len(), reference.len() + 1);
    assert_eq!(events[2].name, "content_block_delta");
    assert!(serde_json::from_str::<serde_json::Value>(&events[2].data).is_err());
    assert!(events[2]
        .data
        .starts_with("{\"type\": \"content_block_delta\""));
    // Everything else is the normal stream, in order, through message_stop.
    let rest: Vec<_> = events
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != 2)
        .map(|(_, e)| e.data.clone())
        .collect();
    let want: Vec<_> = reference.iter().map(|e| e.data.clone()).collect();
    assert_eq!(rest, want);
}

#[tokio::test]
async fn delays_keep_order_and_content_and_take_their_time() {
    let reference = plain_body(true).await;
    let events = common::parse_sse(&String::from_utf8(reference.clone()).unwrap()).len() as u64;
    let server = StubServer::start(faulty(
        "{delay_before_headers_ms: 30, delay_between_events_ms: 2}",
    ))
    .await
    .unwrap();
    let started = std::time::Instant::now();
    let resp = post(server.addr(), &body(true, "hi")).await;
    let elapsed = started.elapsed();
    assert!(resp.complete);
    assert_eq!(resp.body, reference);
    // 30 ms before the headers, then 2 ms before each event after the first.
    let least = std::time::Duration::from_millis(30 + 2 * (events - 1));
    assert!(
        elapsed >= least,
        "answered in {elapsed:?}, before the delays ({least:?})"
    );
}

#[tokio::test]
async fn faults_leave_keep_alive_usable() {
    let yaml = format!(
        "steps:\n  - faults: {{chunk_bytes: 3, split_deltas: 2}}\n    message:\n      content:{BLOCKS}\n  - message: {{content: [{{text: second}}]}}\n"
    );
    let server = StubServer::start(script(&yaml)).await.unwrap();
    let mut conn = Conn::connect(server.addr()).await;
    let a = conn
        .send(
            "POST",
            "/v1/messages",
            &[],
            body(true, "a").to_string().as_bytes(),
        )
        .await;
    assert!(a.complete);
    let b = conn
        .send(
            "POST",
            "/v1/messages",
            &[],
            body(false, "b").to_string().as_bytes(),
        )
        .await;
    assert_eq!(b.json()["content"][0]["text"], "second");
}

#[tokio::test]
async fn step_headers_go_with_the_response() {
    let server = StubServer::start(script(
        "steps:\n  - message: {content: [{text: hi}]}\n    headers:\n      anthropic-ratelimit-unified-status: allowed\n      anthropic-ratelimit-unified-reset: \"1900000000\"\n      request-id: req_scripted\n",
    ))
    .await
    .unwrap();
    let resp = post(server.addr(), &body(true, "hi")).await;
    assert_eq!(resp.status, 200);
    assert_eq!(
        resp.header("anthropic-ratelimit-unified-status"),
        Some("allowed")
    );
    assert_eq!(
        resp.header("anthropic-ratelimit-unified-reset"),
        Some("1900000000")
    );
    // A scripted header replaces the stub's own of the same name.
    assert_eq!(resp.header("request-id"), Some("req_scripted"));
    assert!(resp.complete);
}

#[test]
fn a_bad_step_header_is_refused_at_load() {
    let err = stub_api::Script::from_yaml(
        "steps:\n  - message: {content: [{text: hi}]}\n    headers: {\"bad name\": x}\n",
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("invalid header name"), "{err}");
}

/// Reads the head of a stalled response, stops the stub, and returns the rest.
async fn stalled(faults: &str, stream: bool) -> common::Resp {
    let server = StubServer::start(faulty(faults)).await.unwrap();
    let mut conn = Conn::connect(server.addr()).await;
    let head = conn.post_head(&body(stream, "hi")).await;
    assert_eq!(head.status, 200);
    // Whatever the stub was going to send it had sent before answering the head; stopping
    // it now ends the connection, so the body holds exactly what came before the stall.
    server.shutdown().await;
    conn.read_body(head).await
}

#[tokio::test]
async fn stall_after_the_headers_sends_no_byte_of_the_body() {
    let resp = stalled("{stall_after_events: 0}", true).await;
    assert_eq!(
        resp.header("content-type"),
        Some("text/event-stream; charset=utf-8")
    );
    assert!(!resp.complete, "a stalled stream is never terminated");
    assert!(
        resp.body.is_empty(),
        "{:?}",
        String::from_utf8_lossy(&resp.body)
    );
}

#[tokio::test]
async fn stall_after_two_events_sends_exactly_two() {
    let resp = stalled("{stall_after_events: 2}", true).await;
    assert!(!resp.complete);
    assert_eq!(resp.event_names(), ["message_start", "ping"]);
}

#[tokio::test]
async fn stall_on_a_non_streaming_response_holds_the_json_body() {
    let resp = stalled("{stall_after_events: 0}", false).await;
    assert!(resp.header("content-length").is_some());
    assert!(!resp.complete);
    assert!(resp.body.is_empty());
}

#[test]
fn stall_past_the_last_event_is_refused_at_load() {
    let err = stub_api::Script::from_yaml(
        "steps:\n  - message: {content: [{text: hi}]}\n    faults: {stall_after_events: 99}\n",
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("stall_after_events is 99"), "{err}");
}

#[tokio::test]
async fn split_utf8_chars_cuts_every_multibyte_character_between_chunks() {
    let reference = plain_body(true).await;
    let server = StubServer::start(faulty("{split_utf8_chars: true}"))
        .await
        .unwrap();
    let resp = post(server.addr(), &body(true, "hi")).await;
    assert!(resp.complete);
    assert_eq!(resp.body, reference, "splitting must not change the bytes");
    let ends: Vec<usize> = resp
        .chunk_sizes
        .iter()
        .scan(0, |at, n| {
            *at += n;
            Some(*at)
        })
        .collect();
    let leads: Vec<usize> = (0..reference.len())
        .filter(|&i| reference[i] >= 0xC0)
        .collect();
    assert!(
        !leads.is_empty(),
        "the fixture text has multi-byte characters"
    );
    for lead in &leads {
        assert!(
            ends.contains(&(lead + 1)),
            "no chunk ends right after the lead byte at {lead}: {ends:?}"
        );
    }
    // No cut anywhere else: one chunk per cut plus the tail.
    assert_eq!(resp.chunk_sizes.len(), leads.len() + 1);
}
