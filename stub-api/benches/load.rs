//! Load benchmark of the `stub-api` binary: `cargo bench -p stub-api --bench load`.
//!
//! Starts the release binary (cargo builds it for the bench; override with
//! STUB_API_BIN=path, or build it with `cargo build --release -p stub-api`) with a
//! `times: forever` script, then drives it over loopback with 4 keep-alive connections
//! from the lean HTTP/1.1 client in `stub_api::loadgen` (the one `streamcheck-bench`
//! also uses against aimock): once with a small body, once with the first real 87 KB
//! Claude Code body. Prints req/s, p50/p99 latency and the server's peak RSS (VmHWM).
//! Extra server flags: STUB_API_ARGS="--threads 2".
//! Request counts: BENCH_SMALL (default 200000), BENCH_LARGE (default 20000).

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use stub_api::loadgen::{self, Load};

const CONNECTIONS: usize = 4;
const TIME_LIMIT: Duration = Duration::from_secs(30);
const OBSERVED: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/text.requests.jsonl"
);

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
    std::fs::write(&script, loadgen::REPLY_SCRIPT).unwrap();

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
    println!("idle RSS: {} kB", loadgen::status_kb(pid, "VmRSS:"));

    let small = loadgen::messages_request(loadgen::SMALL_BODY);
    let large = loadgen::messages_request(
        &loadgen::observed_body(Path::new(OBSERVED)).unwrap_or_else(|e| panic!("{e}")),
    );
    run("warm-up", addr, &small, 2_000, pid);
    run("small body", addr, &small, small_n, pid);
    run("87 KB body", addr, &large, large_n, pid);
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

fn run(label: &str, addr: SocketAddr, request: &[u8], total: usize, pid: u32) {
    if total == 0 {
        return;
    }
    let cpu_before = loadgen::cpu_ticks(pid);
    let load = Load {
        requests: total,
        connections: CONNECTIONS,
        time_limit: TIME_LIMIT,
    };
    let r = loadgen::run_blocking(addr, request, &load);
    if let Some(e) = &r.error {
        panic!("{label}: {e}");
    }
    let server_cpu_us =
        (loadgen::cpu_ticks(pid) - cpu_before) as f64 * 10_000.0 / r.completed.max(1) as f64;
    println!(
        "{label:>11}: {} requests in {:.2} s = {:>7.0} req/s, p50 {:>5} us, p99 {:>5} us, server CPU {:.1} us/req, server peak RSS {} kB{}",
        r.completed,
        r.elapsed.as_secs_f64(),
        r.req_per_sec(),
        r.percentile(0.50),
        r.percentile(0.99),
        server_cpu_us,
        loadgen::status_kb(pid, "VmHWM:"),
        if r.stopped_at_time_limit { " (stopped at the time limit)" } else { "" },
    );
}
