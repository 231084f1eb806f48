//! The MCP fixture server (`fixtures/mcp-server/server.mjs`, started by the
//! scenarios in `scenarios/mcp/`) answers the MCP handshake, lists its tools and runs
//! them over stdio. It is installed into the cache first, as `run` installs it: a fixture
//! that cannot be installed fails the test, naming why. `session-server.mjs` beside it
//! serves the MCP session matrix (scenarios/edges/mcp-session.yaml).

mod common;

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

/// Long enough for a loaded 2-core machine; a server that says nothing for this long is broken.
const NO_ANSWER: Duration = Duration::from_secs(20);

fn server_dir() -> PathBuf {
    let installed = streamcheck::fixtures::install(&common::repo())
        .unwrap_or_else(|e| panic!("the MCP fixture could not be installed: {e}"));
    installed.join("mcp-server")
}

struct Server {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Server {
    fn start() -> Server {
        Self::start_with(&[])
    }

    fn start_with(extra: &[&str]) -> Server {
        let mut args = vec!["--name", "fixture-test"];
        args.extend_from_slice(extra);
        Self::start_script("server.mjs", &args)
    }

    fn start_script(script: &str, args: &[&str]) -> Server {
        let dir = server_dir();
        let mut child = Command::new("node")
            .arg(dir.join(script))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("node starts the fixture server");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Server {
            child,
            stdin,
            lines,
        }
    }

    fn send(&mut self, message: Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The answer to request `id` (the server sends nothing else unasked).
    fn call(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let line = self
            .lines
            .recv_timeout(NO_ANSWER)
            .unwrap_or_else(|e| panic!("no answer to {method}: {e}"));
        let answer: Value = serde_json::from_str(&line).expect("a JSON-RPC line");
        assert_eq!(answer["id"], id, "{answer}");
        answer
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn fixture_server_answers_the_handshake_lists_and_runs_its_tools() {
    let mut server = Server::start();
    let init = server.call(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "streamcheck-test", "version": "0"}}),
    );
    assert_eq!(
        init["result"]["serverInfo"]["name"], "fixture-test",
        "{init}"
    );
    assert!(
        init["result"]["capabilities"]["tools"].is_object(),
        "{init}"
    );
    server.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));

    let list = server.call(2, "tools/list", json!({}));
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .expect("a tool list")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["echo", "add", "fail"], "{list}");

    let echo = server.call(
        3,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "hi"}}),
    );
    assert_eq!(
        echo["result"],
        json!({"content": [{"type": "text", "text": "echo: hi"}]})
    );
    let fail = server.call(4, "tools/call", json!({"name": "fail", "arguments": {}}));
    assert_eq!(fail["result"]["isError"], true, "{fail}");
}

/// The session server (`session-server.mjs`, scenarios/edges/mcp-session.yaml) over stdio:
/// `probe N` counts the calls of one process, --mode changes only the first call.
#[test]
fn session_server_counts_its_calls_and_misbehaves_only_in_the_first() {
    let handshake = |server: &mut Server| {
        let init = server.call(
            1,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "streamcheck-test", "version": "0"}}),
        );
        assert_eq!(init["result"]["serverInfo"]["name"], "session", "{init}");
        server.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    };
    let probe = json!({"name": "probe", "arguments": {}});

    let mut normal = Server::start_script("session-server.mjs", &["--mode", "normal"]);
    handshake(&mut normal);
    let first = normal.call(2, "tools/call", probe.clone());
    assert_eq!(first["result"]["content"][0]["text"], "probe 1", "{first}");
    let second = normal.call(3, "tools/call", probe.clone());
    assert_eq!(
        second["result"]["content"][0]["text"], "probe 2",
        "{second}"
    );

    let mut error = Server::start_script("session-server.mjs", &["--mode", "error"]);
    handshake(&mut error);
    let first = error.call(2, "tools/call", probe.clone());
    assert_eq!(first["result"]["isError"], true, "{first}");
    let second = error.call(3, "tools/call", probe.clone());
    assert_eq!(second["result"]["isError"], Value::Null, "{second}");

    let mut exits = Server::start_script("session-server.mjs", &["--mode", "exit-after"]);
    handshake(&mut exits);
    let first = exits.call(2, "tools/call", probe);
    assert_eq!(first["result"]["content"][0]["text"], "probe 1", "{first}");
    let status = exits
        .child
        .wait()
        .expect("the server exits after its answer");
    assert!(status.success(), "{status}");
}

#[test]
fn a_slow_starting_fixture_answers_initialize_only_after_its_delay() {
    let delay = Duration::from_millis(1500);
    let started = Instant::now();
    let mut server = Server::start_with(&["--start-delay-ms", "1500"]);
    let init = server.call(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "streamcheck-test", "version": "0"}}),
    );
    // A lower bound only: the server must not answer before its delay is over.
    assert!(
        started.elapsed() >= delay,
        "answered after {:?}",
        started.elapsed()
    );
    assert_eq!(
        init["result"]["serverInfo"]["name"], "fixture-test",
        "{init}"
    );
    server.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let list = server.call(2, "tools/list", json!({}));
    assert_eq!(list["result"]["tools"].as_array().map(Vec::len), Some(3));
}
