//! Load benchmark of the `stub-api` binary: `cargo bench -p stub-api --bench load`.
//!
//! Starts the release binary (cargo builds it for the bench; override with
//! STUB_API_BIN=path, or build it with `cargo build --release -p stub-api`) with a
//! `times: forever` script, then drives it over loopback with 4 keep-alive connections
//! from a lean hand-written HTTP/1.1 client on one thread: once with a small body,
//! once with the first real 87 KB Claude Code body. Prints req/s, p50/p99 latency and
//! the server's peak RSS (VmHWM). Extra server flags: STUB_API_ARGS="--threads 2".
//! Request counts: BENCH_SMALL (default 200000), BENCH_LARGE (default 20000).

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const CONNECTIONS: usize = 4;
const TIME_LIMIT: Duration = Duration::from_secs(30);
const OBSERVED: &str = "/work/shared/observed/claude-code-2.1.197/text.requests.jsonl";

const SCRIPT: &str = r#"
steps:
  - times: forever
    message:
      content:
        - text: "Hello! This is a scripted answer from stub-api."
"#;

fn main() {
    let bin = std::env::var_os("STUB_API_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_stub-api")));
    assert!(
        bin.exists(),
        "{} not found: run `cargo build --release -p stub-api` (or set STUB_API_BIN)",
        bin.display()
    );
    let small_n = env_usize("BENCH_SMALL", 200_000);
    let large_n = env_usize("BENCH_LARGE", 20_000);

    let dir = std::env::temp_dir().join(format!("stub-api-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("script.yaml");
    std::fs::write(&script, SCRIPT).unwrap();

    let extra = std::env::var("STUB_API_ARGS").unwrap_or_default();
    let mut child = Command::new(&bin)
        .args(["serve", "--script"])
        .arg(&script)
        .args(extra.split_whitespace())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start stub-api");
    let addr = read_addr(&mut child);
    let pid = child.id();
    println!(
        "stub-api {} (pid {pid}) on {addr}, flags [{extra}]",
        bin.display()
    );
    println!("idle RSS: {} kB", status_kb(pid, "VmRSS:"));

    let small = body(false);
    let large = body(true);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        run("warm-up", addr, &small, 2_000, pid).await;
        run("small body", addr, &small, small_n, pid).await;
        run("87 KB body", addr, &large, large_n, pid).await;
    });
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Reads the "listening on" line, then keeps draining the per-request log lines.
fn read_addr(child: &mut Child) -> SocketAddr {
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().expect("stub-api printed nothing").unwrap();
    let url = first
        .strip_prefix("stub-api listening on http://")
        .expect(&first)
        .to_string();
    std::thread::spawn(move || for _ in lines {});
    url.parse().unwrap()
}

fn status_kb(pid: u32, key: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// A full HTTP request with either a small streaming body or the real 87 KB one.
fn body(large: bool) -> Vec<u8> {
    let json = if large {
        let line = std::fs::read_to_string(OBSERVED)
            .unwrap_or_else(|e| panic!("{OBSERVED}: {e}"))
            .lines()
            .next()
            .unwrap()
            .to_string();
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        serde_json::to_string(&v["body"]).unwrap()
    } else {
        r#"{"model":"claude-opus-4-8","max_tokens":1024,"stream":true,"messages":[{"role":"user","content":[{"type":"text","text":"say hello"}]}]}"#.to_string()
    };
    let mut req = format!(
        "POST /v1/messages?beta=true HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\nx-api-key: sk-bench\r\nanthropic-version: 2023-06-01\r\ncontent-length: {}\r\n\r\n",
        json.len()
    )
    .into_bytes();
    req.extend_from_slice(json.as_bytes());
    req
}

/// User + system CPU time of a process, in clock ticks (1/100 s).
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
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

async fn run(label: &str, addr: SocketAddr, request: &[u8], total: usize, pid: u32) {
    if total == 0 {
        return;
    }
    let deadline = Instant::now() + TIME_LIMIT;
    let cpu_before = cpu_ticks(pid);
    let started = Instant::now();
    let mut tasks = Vec::new();
    for c in 0..CONNECTIONS {
        let n = total / CONNECTIONS + usize::from(c < total % CONNECTIONS);
        let request = request.to_vec();
        tasks.push(tokio::spawn(async move {
            connection(addr, request, n, deadline).await
        }));
    }
    let mut latencies = Vec::with_capacity(total);
    for t in tasks {
        latencies.extend(t.await.unwrap());
    }
    let elapsed = started.elapsed();
    let server_cpu_us = (cpu_ticks(pid) - cpu_before) as f64 * 10_000.0 / latencies.len() as f64;
    latencies.sort_unstable();
    let pct = |p: f64| latencies[((latencies.len() as f64 * p) as usize).min(latencies.len() - 1)];
    println!(
        "{label:>11}: {} requests in {:.2} s = {:>7.0} req/s, p50 {:>5} us, p99 {:>5} us, server CPU {:.1} us/req, server peak RSS {} kB{}",
        latencies.len(),
        elapsed.as_secs_f64(),
        latencies.len() as f64 / elapsed.as_secs_f64(),
        pct(0.50),
        pct(0.99),
        server_cpu_us,
        status_kb(pid, "VmHWM:"),
        if latencies.len() < total { " (stopped at the time limit)" } else { "" },
    );
}

/// One keep-alive connection sending `n` requests back to back; returns latencies in µs.
async fn connection(addr: SocketAddr, request: Vec<u8>, n: usize, deadline: Instant) -> Vec<u32> {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.set_nodelay(true).unwrap();
    let mut buf = Vec::with_capacity(64 * 1024);
    let mut latencies = Vec::with_capacity(n);
    for _ in 0..n {
        if Instant::now() > deadline {
            break;
        }
        let t = Instant::now();
        stream.write_all(&request).await.unwrap();
        read_response(&mut stream, &mut buf).await;
        latencies.push(t.elapsed().as_micros() as u32);
    }
    latencies
}

/// Reads one response (content-length or chunked) and checks its status is 200.
async fn read_response(stream: &mut TcpStream, buf: &mut Vec<u8>) {
    buf.clear();
    let head_end = loop {
        if let Some(i) = find(buf, b"\r\n\r\n") {
            break i + 4;
        }
        fill(stream, buf).await;
    };
    assert!(
        buf.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&buf[..head_end])
    );
    let head = std::str::from_utf8(&buf[..head_end])
        .unwrap()
        .to_ascii_lowercase();
    if let Some(len) = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .map(|v| v.trim().parse::<usize>().unwrap())
    {
        while buf.len() < head_end + len {
            fill(stream, buf).await;
        }
        return;
    }
    // Chunked: walk the chunk headers until the terminating 0-size chunk.
    let mut at = head_end;
    loop {
        let line_end = loop {
            if let Some(i) = find(&buf[at..], b"\r\n") {
                break at + i;
            }
            fill(stream, buf).await;
        };
        let size =
            usize::from_str_radix(std::str::from_utf8(&buf[at..line_end]).unwrap().trim(), 16)
                .unwrap();
        let next = line_end + 2 + size + 2;
        while buf.len() < next {
            fill(stream, buf).await;
        }
        if size == 0 {
            return;
        }
        at = next;
    }
}

async fn fill(stream: &mut TcpStream, buf: &mut Vec<u8>) {
    buf.reserve(16 * 1024);
    let n = stream.read_buf(buf).await.unwrap();
    assert!(n > 0, "server closed the connection");
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}
