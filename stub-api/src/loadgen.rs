//! A lean HTTP/1.1 load generator for benchmarks, shared by `cargo bench -p stub-api
//! --bench load` and `streamcheck-bench` so that both (and every server they compare)
//! are driven the same way: `connections` keep-alive connections on one current-thread
//! runtime, one request in flight per connection, latencies measured per request.
//! Load is bounded by a request count and a time limit, whichever comes first.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A small streaming Messages request body.
pub const SMALL_BODY: &str = r#"{"model":"claude-opus-4-8","max_tokens":1024,"stream":true,"messages":[{"role":"user","content":[{"type":"text","text":"say hello"}]}]}"#;

/// The reply every server under load answers with: one text block in one delta.
pub const REPLY_TEXT: &str = "Hello! This is a scripted answer from stub-api.";

/// A stub-api script answering every request with [`REPLY_TEXT`].
pub const REPLY_SCRIPT: &str = "steps:
  - times: forever
    message:
      content:
        - text: \"Hello! This is a scripted answer from stub-api.\"
";

/// How much load to send.
#[derive(Debug, Clone)]
pub struct Load {
    pub requests: usize,
    pub connections: usize,
    pub time_limit: Duration,
}

/// What a load run measured.
#[derive(Debug, Clone, Default)]
pub struct LoadReport {
    /// Requests answered with a 200 (each one's latency is in `latencies_us`).
    pub completed: usize,
    /// The first thing that went wrong (a connection stops at its first error).
    pub error: Option<String>,
    pub elapsed: Duration,
    /// Sorted, in microseconds.
    pub latencies_us: Vec<u32>,
    /// True when the time limit stopped the run before `requests` were sent.
    pub stopped_at_time_limit: bool,
    /// CPU time the client itself used (its one thread), in clock ticks; 0 when unknown.
    pub client_cpu_ticks: u64,
}

impl LoadReport {
    pub fn req_per_sec(&self) -> f64 {
        self.completed as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// Latency at quantile `q` (0.5, 0.99), in microseconds.
    pub fn percentile(&self, q: f64) -> u32 {
        let l = &self.latencies_us;
        if l.is_empty() {
            return 0;
        }
        l[((l.len() as f64 * q) as usize).min(l.len() - 1)]
    }
}

/// A full `POST /v1/messages` request carrying `json` as its body.
pub fn messages_request(json: &str) -> Vec<u8> {
    let mut req = format!(
        "POST /v1/messages?beta=true HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\nx-api-key: sk-bench\r\nanthropic-version: 2023-06-01\r\ncontent-length: {}\r\n\r\n",
        json.len()
    )
    .into_bytes();
    req.extend_from_slice(json.as_bytes());
    req
}

/// The `body` of the first line of a recorded `*.requests.jsonl` (a real CLI request).
pub fn observed_body(path: &std::path::Path) -> Result<String, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let line = text
        .lines()
        .next()
        .ok_or_else(|| format!("{}: empty", path.display()))?;
    let v: serde_json::Value =
        serde_json::from_str(line).map_err(|e| format!("{}: {e}", path.display()))?;
    if v["body"].is_null() {
        return Err(format!("{}: the first line has no `body`", path.display()));
    }
    serde_json::to_string(&v["body"]).map_err(|e| e.to_string())
}

/// Runs the load on a current-thread runtime of its own (the same client whatever the caller runs on).
pub fn run_blocking(addr: SocketAddr, request: &[u8], load: &Load) -> LoadReport {
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => {
            let before = cpu_ticks_of("/proc/thread-self/stat");
            let mut report = rt.block_on(run(addr, request, load));
            report.client_cpu_ticks = cpu_ticks_of("/proc/thread-self/stat").saturating_sub(before);
            report
        }
        Err(e) => LoadReport {
            error: Some(format!("cannot build a runtime: {e}")),
            ..LoadReport::default()
        },
    }
}

/// Sends `load.requests` copies of `request` over `load.connections` connections.
pub async fn run(addr: SocketAddr, request: &[u8], load: &Load) -> LoadReport {
    let connections = load.connections.max(1);
    let deadline = Instant::now() + load.time_limit;
    let started = Instant::now();
    let mut tasks = Vec::new();
    for c in 0..connections {
        let n = load.requests / connections + usize::from(c < load.requests % connections);
        let request = request.to_vec();
        tasks.push(tokio::spawn(connection(addr, request, n, deadline)));
    }
    let mut report = LoadReport::default();
    let mut latencies = Vec::with_capacity(load.requests);
    for t in tasks {
        match t.await {
            Ok((l, err)) => {
                latencies.extend(l);
                if report.error.is_none() {
                    report.error = err;
                }
            }
            Err(e) => report.error = Some(e.to_string()),
        }
    }
    report.elapsed = started.elapsed();
    latencies.sort_unstable();
    report.completed = latencies.len();
    report.stopped_at_time_limit = report.error.is_none() && latencies.len() < load.requests;
    report.latencies_us = latencies;
    report
}

/// One keep-alive connection sending `n` requests back to back.
async fn connection(
    addr: SocketAddr,
    request: Vec<u8>,
    n: usize,
    deadline: Instant,
) -> (Vec<u32>, Option<String>) {
    let mut latencies = Vec::with_capacity(n);
    let mut stream = match TcpStream::connect(addr).await {
        Ok(s) => s,
        Err(e) => return (latencies, Some(format!("connect {addr}: {e}"))),
    };
    let _ = stream.set_nodelay(true);
    let mut buf = Vec::with_capacity(64 * 1024);
    for _ in 0..n {
        if Instant::now() > deadline {
            break;
        }
        let t = Instant::now();
        let answered = match stream.write_all(&request).await {
            Ok(()) => read_response(&mut stream, &mut buf).await,
            Err(e) => Err(e.to_string()),
        };
        if let Err(e) = answered {
            return (latencies, Some(e));
        }
        latencies.push(t.elapsed().as_micros() as u32);
    }
    (latencies, None)
}

/// Sends `request` once on a fresh connection and returns the response's status line
/// and its body (de-chunked), to check what a server answers before loading it.
pub fn fetch_blocking(addr: SocketAddr, request: &[u8]) -> Result<(String, Vec<u8>), String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    rt.block_on(async {
        let mut stream = TcpStream::connect(addr)
            .await
            .map_err(|e| format!("connect {addr}: {e}"))?;
        stream.write_all(request).await.map_err(|e| e.to_string())?;
        let (mut buf, mut body) = (Vec::new(), Vec::new());
        let status = read_response_body(&mut stream, &mut buf, Some(&mut body)).await?;
        Ok((status, body))
    })
}

/// Reads one response (content-length or chunked); an error unless its status is 200.
async fn read_response(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Result<(), String> {
    let status = read_response_body(stream, buf, None).await?;
    if status.starts_with("http/1.1 200") {
        Ok(())
    } else {
        Err(format!("answered {status}"))
    }
}

/// Reads one response into `buf`; returns its lower-cased status line, and copies the
/// (de-chunked) body into `body` when given one.
async fn read_response_body(
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
    mut body: Option<&mut Vec<u8>>,
) -> Result<String, String> {
    buf.clear();
    let head_end = loop {
        if let Some(i) = find(buf, b"\r\n\r\n") {
            break i + 4;
        }
        fill(stream, buf).await?;
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    let status = head.lines().next().unwrap_or("").trim().to_string();
    if let Some(len) = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok())
    {
        while buf.len() < head_end + len {
            fill(stream, buf).await?;
        }
        if let Some(body) = body {
            body.extend_from_slice(&buf[head_end..head_end + len]);
        }
        return Ok(status);
    }
    // Chunked: walk the chunk headers until the terminating 0-size chunk.
    let mut at = head_end;
    loop {
        let line_end = loop {
            if let Some(i) = find(&buf[at..], b"\r\n") {
                break at + i;
            }
            fill(stream, buf).await?;
        };
        let size_text = String::from_utf8_lossy(&buf[at..line_end]);
        let size_text = size_text.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_text, 16)
            .map_err(|_| format!("bad chunk size `{size_text}`"))?;
        let next = line_end + 2 + size + 2;
        while buf.len() < next {
            fill(stream, buf).await?;
        }
        if size == 0 {
            return Ok(status);
        }
        if let Some(body) = body.as_deref_mut() {
            body.extend_from_slice(&buf[line_end + 2..line_end + 2 + size]);
        }
        at = next;
    }
}

async fn fill(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Result<(), String> {
    buf.reserve(16 * 1024);
    match stream.read_buf(buf).await {
        Ok(0) => Err("the server closed the connection".into()),
        Ok(_) => Ok(()),
        Err(e) => Err(e.to_string()),
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// A `/proc/PID/status` value in kB (`VmRSS:`, `VmHWM:`); 0 when unknown.
pub fn status_kb(pid: u32, key: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// User + system CPU time of a process, in clock ticks (1/100 s); 0 when unknown.
pub fn cpu_ticks(pid: u32) -> u64 {
    cpu_ticks_of(&format!("/proc/{pid}/stat"))
}

fn cpu_ticks_of(stat_path: &str) -> u64 {
    let stat = std::fs::read_to_string(stat_path).unwrap_or_default();
    // Fields after the parenthesized command name; utime and stime are fields 14 and 15.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |i: usize| {
        fields
            .get(i - 3)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    field(14) + field(15)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_and_rates() {
        let r = LoadReport {
            completed: 4,
            elapsed: Duration::from_secs(2),
            latencies_us: vec![1, 2, 3, 100],
            ..LoadReport::default()
        };
        assert_eq!(r.req_per_sec(), 2.0);
        assert_eq!(r.percentile(0.5), 3);
        assert_eq!(r.percentile(0.99), 100);
        assert_eq!(LoadReport::default().percentile(0.99), 0);
    }

    #[test]
    fn the_script_answers_the_reply() {
        assert!(REPLY_SCRIPT.contains(&format!("\"{REPLY_TEXT}\"")));
    }

    #[test]
    fn request_has_its_length() {
        let r = String::from_utf8(messages_request(SMALL_BODY)).unwrap();
        assert!(r.contains(&format!("content-length: {}\r\n", SMALL_BODY.len())));
        assert!(r.ends_with(SMALL_BODY));
    }
}
