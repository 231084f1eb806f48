//! stub-api against aimock (npm `@copilotkit/aimock`): both serve the same reply on
//! loopback and take the same load from `stub_api::loadgen`; req/s, latency, CPU and RSS.

use crate::procfs::clock_ticks;
use crate::render::tick;
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use stub_api::loadgen::{self, Load, LoadReport};

const AIMOCK_PACKAGE: &str = "@copilotkit/aimock";
const AIMOCK_VERSION: &str = "1.43";

/// The loads of the stub part.
pub struct Loads {
    /// Requests with the small body, and with the large (observed) one.
    pub small_requests: usize,
    pub large_requests: usize,
    /// Each load stops at its request count or at this, whichever comes first.
    pub time_limit: Duration,
    pub connections: usize,
    /// A recorded `*.requests.jsonl` whose first body is the large load.
    pub observed: Option<PathBuf>,
    pub aimock_version: String,
    pub stub_api: PathBuf,
}

impl Default for Loads {
    fn default() -> Self {
        Loads {
            small_requests: 100_000,
            large_requests: 10_000,
            time_limit: Duration::from_secs(15),
            connections: 4,
            observed: None,
            aimock_version: AIMOCK_VERSION.into(),
            stub_api: PathBuf::from("stub-api"),
        }
    }
}

/// A server under load; killed when dropped.
struct Server {
    name: String,
    child: Child,
    addr: SocketAddr,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One load on one server.
struct LoadRow {
    server: String,
    body: &'static str,
    report: LoadReport,
    /// CPU per request, in µs, of the server and of the load generator.
    server_cpu_us: f64,
    client_cpu_us: f64,
    idle_kb: u64,
    peak_kb: u64,
}

pub fn part(loads: &Loads) -> String {
    let small = loadgen::messages_request(loadgen::SMALL_BODY);
    let large = match &loads.observed {
        Some(path) => loadgen::observed_body(path).map(|b| loadgen::messages_request(&b)),
        None => Err(
            "no recorded requests given (--observed-requests or STREAMCHECK_OBSERVED_REQUESTS)"
                .into(),
        ),
    };
    let mut md = header(loads, &large);
    let tmp = match crate::temp_dir() {
        Ok(t) => t,
        Err(e) => return format!("{md}cannot make a temp dir: {e}\n"),
    };
    let mut notes = Vec::new();
    let mut servers = Vec::new();
    match start_stub(tmp.path(), &loads.stub_api) {
        Ok(s) => servers.push(s),
        Err(e) => notes.push(format!("stub-api: {e}")),
    }
    eprintln!(
        "bench: installing {AIMOCK_PACKAGE}@{} into a temp dir ...",
        loads.aimock_version
    );
    match start_aimock(tmp.path(), &loads.aimock_version) {
        Ok(s) => servers.push(s),
        Err(e) => notes.push(format!("aimock could not be compared: {e}")),
    }
    let mut rows = Vec::new();
    for s in &servers {
        let idle_kb = loadgen::status_kb(s.child.id(), "VmRSS:");
        if let Err(e) = answers_the_reply(s, &small, &mut notes) {
            notes.push(format!("{}: {e}", s.name));
            continue;
        }
        eprintln!("bench: loading {} ...", s.name);
        rows.extend(load(s, idle_kb, &small, large.as_ref().ok(), loads));
    }
    md.push_str(&table(&rows));
    md.push_str(&ratios(&rows));
    for n in notes {
        let _ = writeln!(md, "\n- {n}");
    }
    md
}

fn header(loads: &Loads, large: &Result<Vec<u8>, String>) -> String {
    format!(
        "### Stub against aimock\n\nBoth serve the same reply (`{}`: one text block in one delta) on loopback, driven by the same client (`stub_api::loadgen`: {} keep-alive connections on one thread, one request in flight each), each load bounded to N requests or {} s. Bodies: a {}-byte streaming request, and the first real Claude Code request body ({}). Peak RSS = VmHWM after the load. Server CPU from /proc.\n\n",
        loadgen::REPLY_TEXT,
        loads.connections,
        loads.time_limit.as_secs(),
        loadgen::SMALL_BODY.len(),
        match large {
            Ok(r) => format!("{} bytes", r.len()),
            Err(e) => format!("unavailable: {e}"),
        }
    )
}

/// One request: it must answer 200 with the reply; a reply in several deltas is noted.
fn answers_the_reply(s: &Server, request: &[u8], notes: &mut Vec<String>) -> Result<(), String> {
    let (status, body) = loadgen::fetch_blocking(s.addr, request)?;
    let body = String::from_utf8_lossy(&body);
    if !status.starts_with("http/1.1 200") || !body.contains(loadgen::REPLY_TEXT) {
        return Err(format!("answered {status} without the reply"));
    }
    let deltas = body
        .lines()
        .filter(|l| l.trim() == "event: content_block_delta")
        .count();
    if deltas != 1 {
        notes.push(format!("{}: the reply came in {deltas} deltas", s.name));
    }
    Ok(())
}

/// A warm-up, then the small load and, when there is one, the large load.
fn load(
    s: &Server,
    idle_kb: u64,
    small: &[u8],
    large: Option<&Vec<u8>>,
    loads: &Loads,
) -> Vec<LoadRow> {
    let warm = Load {
        requests: 2_000,
        connections: loads.connections,
        time_limit: Duration::from_secs(5),
    };
    let _ = loadgen::run_blocking(s.addr, small, &warm);
    let load = |requests| Load {
        requests,
        connections: loads.connections,
        time_limit: loads.time_limit,
    };
    let mut rows = vec![measure(
        s,
        "small",
        small,
        &load(loads.small_requests),
        idle_kb,
    )];
    if let Some(large) = large {
        rows.push(measure(
            s,
            "87 KB",
            large,
            &load(loads.large_requests),
            idle_kb,
        ));
    }
    rows
}

fn measure(s: &Server, body: &'static str, request: &[u8], load: &Load, idle_kb: u64) -> LoadRow {
    let pid = s.child.id();
    let cpu = loadgen::cpu_ticks(pid);
    let report = loadgen::run_blocking(s.addr, request, load);
    let per_request = |ticks: f64| ticks * 1e6 / clock_ticks() / report.completed.max(1) as f64;
    LoadRow {
        server: s.name.clone(),
        body,
        server_cpu_us: per_request((loadgen::cpu_ticks(pid) - cpu) as f64),
        client_cpu_us: per_request(report.client_cpu_ticks as f64),
        idle_kb,
        peak_kb: loadgen::status_kb(pid, "VmHWM:"),
        report,
    }
}

fn table(rows: &[LoadRow]) -> String {
    let mut md = String::from("| server | body | requests | req/s | p50 (µs) | p99 (µs) | server CPU (µs/req) | client CPU (µs/req) | idle RSS (MB) | peak RSS (MB) |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for r in rows {
        let _ = writeln!(
            md,
            "| {} | {} | {}{} | {:.0} | {} | {} | {:.1} | {:.1} | {:.1} | {:.1} |",
            r.server,
            r.body,
            r.report.completed,
            match (&r.report.error, r.report.stopped_at_time_limit) {
                (Some(e), _) => format!(" (stopped: {e})"),
                (None, true) => " (time limit)".into(),
                _ => String::new(),
            },
            r.report.req_per_sec(),
            r.report.percentile(0.5),
            r.report.percentile(0.99),
            r.server_cpu_us,
            r.client_cpu_us,
            r.idle_kb as f64 / 1024.0,
            r.peak_kb as f64 / 1024.0,
        );
    }
    md
}

/// stub-api's throughput, latency and memory as multiples of aimock's, against the goals.
fn ratios(rows: &[LoadRow]) -> String {
    let find = |server: &str, body: &str| {
        rows.iter()
            .find(|r| r.server.starts_with(server) && r.body == body)
    };
    let mut ratios = Vec::new();
    for (body, goal) in [("small", 10.0), ("87 KB", 5.0)] {
        if let (Some(s), Some(a)) = (find("stub-api", body), find("aimock", body)) {
            let x = s.report.req_per_sec() / a.report.req_per_sec().max(1e-9);
            let p = a.report.percentile(0.99) as f64 / s.report.percentile(0.99).max(1) as f64;
            ratios.push(format!(
                "{body} bodies: {x:.1}x aimock's req/s {} (goal >= {goal:.0}x), p99 {p:.1}x lower",
                tick(x >= goal)
            ));
        }
    }
    let peak = |server: &str| {
        (rows.iter())
            .filter(|r| r.server.starts_with(server))
            .map(|r| r.peak_kb)
            .max()
    };
    if let (Some(s), Some(a)) = (peak("stub-api"), peak("aimock")) {
        let f = s as f64 / a.max(1) as f64;
        ratios.push(format!(
            "peak RSS {:.1} MB vs {:.1} MB = 1/{:.1} of aimock's {} (goal <= 1/5)",
            s as f64 / 1024.0,
            a as f64 / 1024.0,
            1.0 / f.max(1e-9),
            tick(f <= 0.2)
        ));
    }
    if ratios.is_empty() {
        return String::new();
    }
    format!("\nstub-api: {}.\n", ratios.join("; "))
}

/// The stub-api binary serving the bench's reply script.
fn start_stub(dir: &Path, bin: &Path) -> Result<Server, String> {
    crate::built(bin, "stub-api", "STUB_API_BIN").map_err(|e| e.to_string())?;
    let script = dir.join("script.yaml");
    std::fs::write(&script, loadgen::REPLY_SCRIPT).map_err(|e| e.to_string())?;
    let mut cmd = Command::new(bin);
    // --quiet: no line per request, as aimock prints none at its default level.
    cmd.args(["serve", "--quiet", "--script"]).arg(&script);
    start_server("stub-api", cmd, Duration::from_secs(10))
}

/// Installs aimock with npm into `dir` and starts its server on a free loopback port,
/// answering every request with the bench's reply in one delta.
fn start_aimock(dir: &Path, version: &str) -> Result<Server, String> {
    let prefix = dir.join("aimock");
    std::fs::create_dir_all(&prefix).map_err(|e| e.to_string())?;
    let out = Command::new("npm")
        .args([
            "install",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            "--prefix",
        ])
        .arg(&prefix)
        .arg(format!("{AIMOCK_PACKAGE}@{version}"))
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run npm: {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(format!(
            "`npm install {AIMOCK_PACKAGE}@{version}` failed ({}): {}",
            out.status,
            err.lines().last().unwrap_or("")
        ));
    }
    let pkg = prefix.join("node_modules").join(AIMOCK_PACKAGE);
    let manifest: Value = std::fs::read_to_string(pkg.join("package.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .ok_or("aimock's package.json is unreadable")?;
    // The `llmock` bin is the fixture server (the `aimock` one takes a config file).
    let bin = manifest["bin"]["llmock"]
        .as_str()
        .ok_or("aimock's package.json names no `llmock` bin")?;
    let installed = manifest["version"].as_str().unwrap_or("?").to_string();
    let fixtures = dir.join("aimock-fixtures.json");
    let fixture =
        json!({"fixtures": [{"match": {}, "response": {"content": loadgen::REPLY_TEXT}}]});
    std::fs::write(&fixtures, fixture.to_string()).map_err(|e| e.to_string())?;
    let mut cmd = Command::new("node");
    cmd.arg(pkg.join(bin))
        .args(["--port", "0", "--host", "127.0.0.1", "--fixtures"])
        .arg(&fixtures)
        // One delta, as the stub sends it (aimock's default splits every 20 characters).
        .args(["--chunk-size", "65536"]);
    start_server(&format!("aimock {installed}"), cmd, Duration::from_secs(30))
}

/// Starts `cmd` with stdout piped, waits for a line holding `http://127.0.0.1:PORT`, and
/// keeps draining its output.
fn start_server(name: &str, mut cmd: Command, within: Duration) -> Result<Server, String> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {name}: {e}"))?;
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = (child.stdout.take()).map(|p| Box::new(p) as Box<dyn std::io::Read + Send>);
    let stderr = (child.stderr.take()).map(|p| Box::new(p) as Box<dyn std::io::Read + Send>);
    for pipe in [stdout, stderr].into_iter().flatten() {
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
    }
    let mut server = Server {
        name: name.into(),
        child,
        addr: SocketAddr::from(([127, 0, 0, 1], 0)),
    };
    let deadline = Instant::now() + within;
    let mut said = Vec::new();
    while let Ok(line) = rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        if let Some(addr) = address_in(&line) {
            server.addr = addr;
            return Ok(server);
        }
        said.push(line);
    }
    Err(format!(
        "{name} printed no address within {} s{}",
        within.as_secs(),
        if said.is_empty() {
            String::new()
        } else {
            format!(": {}", said.join(" / "))
        }
    ))
}

/// The `HOST:PORT` of the first `http://HOST:PORT` in `line`.
fn address_in(line: &str) -> Option<SocketAddr> {
    line.split("http://")
        .nth(1)?
        .split(|c: char| c.is_whitespace() || c == '/')
        .next()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_address_is_found_in_its_banner() {
        assert_eq!(
            address_in("stub-api listening on http://127.0.0.1:4010/ (script x)"),
            Some(SocketAddr::from(([127, 0, 0, 1], 4010)))
        );
        assert_eq!(address_in("listening"), None);
    }
}
