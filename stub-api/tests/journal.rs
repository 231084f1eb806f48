//! The journal keeps requests whole.

mod common;

use std::sync::{Arc, Mutex};

use common::{observed_body_raw, request, script, Conn};
use stub_api::{journal, Answer, JournalEntry, ServeOptions, StubServer};

#[tokio::test]
async fn real_87kb_body_is_kept_byte_for_byte() {
    // The exact bytes of the first body in text.requests.jsonl (as captured: spaces after
    // separators and \u escapes, so a re-serialization would differ).
    let raw = observed_body_raw("text.requests.jsonl", 0);
    assert!(
        raw.len() > 80_000,
        "expected the ~87 KB body, got {} bytes",
        raw.len()
    );
    let parsed: serde_json::Value = serde_json::from_str(&raw).unwrap();
    assert_ne!(
        serde_json::to_string(&parsed).unwrap(),
        raw,
        "the test needs non-canonical bytes"
    );

    let seen = Arc::new(Mutex::new(Vec::<JournalEntry>::new()));
    let sink = seen.clone();
    let opts = ServeOptions {
        on_request: Some(Arc::new(move |e: &JournalEntry| {
            sink.lock().unwrap().push(e.clone())
        })),
        ..ServeOptions::default()
    };
    let server = StubServer::start_with(
        script("steps:\n  - message: {content: [{text: hi}]}\n"),
        opts,
    )
    .await
    .unwrap();
    let mut conn = Conn::connect(server.addr()).await;
    let resp = conn
        .send(
            "POST",
            "/v1/messages?beta=true",
            &[
                ("x-api-key", "sk-secret"),
                ("authorization", "Bearer t"),
                ("anthropic-version", "2023-06-01"),
            ],
            raw.as_bytes(),
        )
        .await;
    assert_eq!(resp.status, 200);

    let entry = &server.journal()[0];
    assert_eq!(entry.body_raw, raw);
    assert_eq!(entry.body(), &parsed);
    assert_eq!(entry.model.as_deref(), Some("claude-opus-4-8"));
    assert_eq!(entry.header("x-api-key"), Some("[redacted]"));
    assert_eq!(entry.header("Authorization"), Some("[redacted]"));
    assert_eq!(entry.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(entry.query.as_deref(), Some("beta=true"));
    assert_eq!(&seen.lock().unwrap()[0], entry);

    // NDJSON on disk round-trips the exact bytes.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.ndjson");
    server.write_journal(&path).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 1);
    let back = journal::read_ndjson(&text).unwrap();
    assert_eq!(back[0].body_raw, raw);
    assert_eq!(&back[0], entry);
}

#[tokio::test]
async fn canonical_json_is_written_once_and_still_round_trips() {
    let server = StubServer::start(script("steps: []")).await.unwrap();
    let body = r#"{"model":"m","messages":[{"role":"user","content":"é ✓"}]}"#;
    request(server.addr(), "POST", "/v1/messages", body.as_bytes()).await;
    request(server.addr(), "POST", "/v1/messages", b"not json at all").await;
    let entries = server.journal();
    let line = entries[0].to_ndjson();
    assert!(
        !line.contains("body_raw"),
        "canonical bodies are stored once: {line}"
    );
    let all: String = entries.iter().map(JournalEntry::to_ndjson).collect();
    let back = journal::read_ndjson(&all).unwrap();
    assert_eq!(back, entries);
    assert_eq!(back[0].body_raw, body);
    assert_eq!(back[1].body_raw, "not json at all");
    assert!(back[1].body().is_null());
    assert!(matches!(back[1].answer, Answer::Unscripted { .. }));
}

/// Six 1 KB requests to a stub whose journal holds about 3 KB: the `seq`s it kept (some,
/// not all; the rest counted as dropped).
async fn six_requests_over_a_small_cap(keep_first: bool) -> Vec<u64> {
    let opts = ServeOptions {
        journal_max_bytes: Some(3_000),
        journal_keep_first: keep_first,
        ..ServeOptions::default()
    };
    let server = StubServer::start_with(script("steps: []"), opts)
        .await
        .unwrap();
    let big = format!("{{\"pad\":\"{}\"}}", "x".repeat(1_000));
    for _ in 0..6 {
        request(server.addr(), "POST", "/v1/messages", big.as_bytes()).await;
    }
    let kept: Vec<u64> = server.journal().iter().map(|e| e.seq).collect();
    assert!(kept.len() < 6 && !kept.is_empty());
    assert_eq!(server.journal_dropped() as usize + kept.len(), 6);
    kept
}

#[tokio::test]
async fn journal_memory_cap_drops_oldest_entries() {
    let kept = six_requests_over_a_small_cap(false).await;
    assert_eq!(kept.last(), Some(&5));
}

#[tokio::test]
async fn journal_memory_cap_can_keep_the_first_entries() {
    let kept = six_requests_over_a_small_cap(true).await;
    assert_eq!(kept, (0..kept.len() as u64).collect::<Vec<_>>());
}
