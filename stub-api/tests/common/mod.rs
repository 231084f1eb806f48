//! A small raw HTTP/1.1 client and SSE parser for the tests: raw so the tests see the
//! wire exactly (chunk framing, truncated streams, malformed events).
#![allow(dead_code)]

use std::net::SocketAddr;

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Requests captured from Claude Code 2.1.197 (copied from the project's shared captures).
pub const OBSERVED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

pub struct Resp {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    /// The body, de-chunked.
    pub body: Vec<u8>,
    /// Sizes of the chunks of a chunked body.
    pub chunk_sizes: Vec<usize>,
    /// Whether the body ended properly (terminating chunk / full content-length).
    pub complete: bool,
    /// Number of socket reads that returned data.
    pub reads: usize,
}

impl Resp {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8(self.body.clone()).expect("utf-8 body")
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("JSON body")
    }

    pub fn events(&self) -> Vec<Event> {
        parse_sse(&self.text())
    }

    pub fn event_names(&self) -> Vec<String> {
        self.events().into_iter().map(|e| e.name).collect()
    }
}

#[derive(Debug, Clone)]
pub struct Event {
    pub name: String,
    pub data: String,
}

impl Event {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.data)
            .unwrap_or_else(|e| panic!("event {} data is not JSON ({e}): {}", self.name, self.data))
    }
}

/// Parses `event:`/`data:` blocks separated by blank lines. Strict about the format
/// the stub must produce: every block has exactly one event line then one data line.
pub fn parse_sse(text: &str) -> Vec<Event> {
    let mut events = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let (block, after) = match rest.find("\n\n") {
            Some(i) => (&rest[..i], &rest[i + 2..]),
            None => (rest, ""),
        };
        rest = after;
        let mut lines = block.lines();
        let name = lines.next().and_then(|l| l.strip_prefix("event: "));
        let data = lines.next().and_then(|l| l.strip_prefix("data: "));
        match (name, data, lines.next()) {
            (Some(name), Some(data), None) => events.push(Event {
                name: name.to_string(),
                data: data.to_string(),
            }),
            _ if after.is_empty() && !block.contains("\ndata: ") => {
                // A stream cut in the middle of an event.
                events.push(Event {
                    name: format!("<truncated {block:?}>"),
                    data: String::new(),
                });
            }
            _ => panic!("malformed SSE block: {block:?}"),
        }
    }
    events
}

pub struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
    eof: bool,
    reads: usize,
}

impl Conn {
    pub async fn connect(addr: SocketAddr) -> Conn {
        let stream = TcpStream::connect(addr).await.expect("connect");
        stream.set_nodelay(true).unwrap();
        Conn {
            stream,
            buf: Vec::new(),
            eof: false,
            reads: 0,
        }
    }

    async fn fill(&mut self) -> bool {
        if self.eof {
            return false;
        }
        let mut tmp = vec![0u8; 65536];
        match self.stream.read(&mut tmp).await {
            Ok(0) | Err(_) => {
                self.eof = true;
                false
            }
            Ok(n) => {
                self.reads += 1;
                self.buf.extend_from_slice(&tmp[..n]);
                true
            }
        }
    }

    async fn line(&mut self) -> Option<String> {
        loop {
            if let Some(i) = self.buf.windows(2).position(|w| w == b"\r\n") {
                let line = String::from_utf8_lossy(&self.buf[..i]).into_owned();
                self.buf.drain(..i + 2);
                return Some(line);
            }
            if !self.fill().await {
                return None;
            }
        }
    }

    async fn take(&mut self, n: usize) -> Option<Vec<u8>> {
        while self.buf.len() < n {
            if !self.fill().await {
                return None;
            }
        }
        Some(self.buf.drain(..n).collect())
    }

    pub async fn send(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Resp {
        let mut req = format!(
            "{method} {path} HTTP/1.1\r\nhost: stub\r\ncontent-length: {}\r\n",
            body.len()
        );
        for (k, v) in headers {
            req.push_str(&format!("{k}: {v}\r\n"));
        }
        req.push_str("\r\n");
        let mut bytes = req.into_bytes();
        bytes.extend_from_slice(body);
        self.stream.write_all(&bytes).await.expect("write request");
        self.reads = 0;
        let head = self.read_head().await;
        if method == "HEAD" {
            return head;
        }
        self.read_body(head).await
    }

    /// Sends a POST and reads only the status line and headers.
    pub async fn post_head(&mut self, body: &Value) -> Resp {
        let body = body.to_string();
        let req = format!(
            "POST /v1/messages HTTP/1.1\r\nhost: stub\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        );
        self.stream
            .write_all(req.as_bytes())
            .await
            .expect("write request");
        self.reads = 0;
        self.read_head().await
    }

    async fn read_head(&mut self) -> Resp {
        let status_line = self.line().await.expect("status line");
        let status: u16 = status_line
            .split(' ')
            .nth(1)
            .expect("status")
            .parse()
            .expect("status code");
        let mut headers = Vec::new();
        loop {
            let line = self.line().await.expect("header line");
            if line.is_empty() {
                break;
            }
            let (k, v) = line.split_once(':').expect("header");
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
        Resp {
            status,
            headers,
            body: Vec::new(),
            chunk_sizes: Vec::new(),
            complete: true,
            reads: 0,
        }
    }

    /// Reads the body of a response whose head `read_head` returned.
    pub async fn read_body(&mut self, mut resp: Resp) -> Resp {
        if resp.header("transfer-encoding") == Some("chunked") {
            resp.complete = false;
            while let Some(size_line) = self.line().await {
                let size = usize::from_str_radix(size_line.trim(), 16).expect("chunk size");
                if size == 0 {
                    let _ = self.line().await;
                    resp.complete = true;
                    break;
                }
                let Some(data) = self.take(size).await else {
                    resp.body.extend_from_slice(&std::mem::take(&mut self.buf));
                    break;
                };
                resp.chunk_sizes.push(size);
                resp.body.extend_from_slice(&data);
                if self.take(2).await.is_none() {
                    break;
                }
            }
        } else if let Some(len) = resp.header("content-length") {
            let len: usize = len.parse().unwrap();
            match self.take(len).await {
                Some(data) => resp.body = data,
                None => {
                    resp.complete = false;
                    resp.body = std::mem::take(&mut self.buf);
                }
            }
        } else {
            while self.fill().await {}
            resp.body = std::mem::take(&mut self.buf);
        }
        resp.reads = self.reads;
        resp
    }
}

/// One request on a fresh connection.
pub async fn request(addr: SocketAddr, method: &str, path: &str, body: &[u8]) -> Resp {
    Conn::connect(addr)
        .await
        .send(method, path, &[], body)
        .await
}

pub async fn post(addr: SocketAddr, body: &Value) -> Resp {
    request(
        addr,
        "POST",
        "/v1/messages?beta=true",
        body.to_string().as_bytes(),
    )
    .await
}

/// A minimal messages request body.
pub fn body(stream: bool, user_text: &str) -> Value {
    json!({
        "model": "claude-test-1",
        "max_tokens": 100,
        "stream": stream,
        "messages": [{"role": "user", "content": [{"type": "text", "text": user_text}]}],
        "tools": [{"name": "Bash", "input_schema": {"type": "object"}}],
    })
}

pub fn script(yaml: &str) -> stub_api::Script {
    stub_api::Script::from_yaml(yaml).unwrap_or_else(|e| panic!("bad test script: {e}\n{yaml}"))
}

/// The exact bytes of the `body` field of line `line` of an observed requests file.
pub fn observed_body_raw(file: &str, line: usize) -> String {
    #[derive(serde::Deserialize)]
    struct Line<'a> {
        #[serde(borrow)]
        body: &'a serde_json::value::RawValue,
    }
    let path = format!("{OBSERVED}/{file}");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let l = text
        .lines()
        .nth(line)
        .unwrap_or_else(|| panic!("{path} has no line {line}"));
    let parsed: Line = serde_json::from_str(l).expect("observed line");
    parsed.body.get().to_string()
}
