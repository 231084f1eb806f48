//! Many servers in one process, each with its own script and state.

mod common;

use common::{body, post, script};
use stub_api::StubServer;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_servers_answer_their_own_scripts() {
    let mut servers = Vec::new();
    for i in 0..8 {
        let yaml =
            format!("steps:\n  - times: 5\n    message: {{content: [{{text: 'server {i}'}}]}}\n");
        servers.push(StubServer::start(script(&yaml)).await.unwrap());
    }
    let mut tasks = Vec::new();
    for (i, server) in servers.iter().enumerate() {
        for _ in 0..5 {
            let addr = server.addr();
            tasks.push(tokio::spawn(async move {
                let j = post(addr, &body(false, "who")).await.json();
                (i, j["content"][0]["text"].as_str().unwrap().to_string())
            }));
        }
    }
    for task in tasks {
        let (i, text) = task.await.unwrap();
        assert_eq!(text, format!("server {i}"));
    }
    for server in &servers {
        assert_eq!(server.journal().len(), 5);
        assert!(server.unscripted().is_empty());
        assert_eq!(server.steps_used(), 1);
        // A sixth request is past that server's script.
        assert_eq!(post(server.addr(), &body(false, "more")).await.status, 400);
    }
    let addrs: std::collections::HashSet<_> = servers.iter().map(StubServer::addr).collect();
    assert_eq!(addrs.len(), 8);
    for server in servers {
        server.shutdown().await;
    }
}

#[tokio::test]
async fn shutdown_stops_accepting() {
    let server = StubServer::start(script("steps: []")).await.unwrap();
    let addr = server.addr();
    assert!(server.base_url().starts_with("http://127.0.0.1:"));
    server.shutdown().await;
    assert!(tokio::net::TcpStream::connect(addr).await.is_err());
}

#[tokio::test]
async fn drop_stops_the_server_too() {
    let server = StubServer::start(script("steps: []")).await.unwrap();
    let addr = server.addr();
    drop(server);
    // The accept task is aborted; its listener closes once the runtime drops the task,
    // which takes it an unknown number of scheduler turns: wait for that, with a bound
    // only a broken drop reaches.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while tokio::net::TcpStream::connect(addr).await.is_ok() {
        assert!(
            std::time::Instant::now() < deadline,
            "{addr} still accepts 30 s after the server was dropped"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

/// The listening socket is bound to 127.0.0.1 itself, not to every interface: read the
/// kernel's socket table rather than trusting what the server reports.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn listens_on_loopback_only() {
    let server = StubServer::start(script("steps: []")).await.unwrap();
    let port = format!("{:04X}", server.addr().port());
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap();
    let listening: Vec<&str> = table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let cols: Vec<&str> = line.split_whitespace().collect();
            let (local, state) = (cols.get(1)?, cols.get(3)?);
            (local.ends_with(&format!(":{port}")) && *state == "0A").then_some(*local)
        })
        .collect();
    assert_eq!(
        listening,
        vec![format!("0100007F:{port}")],
        "bound to 127.0.0.1 only"
    );
    let table6 = std::fs::read_to_string("/proc/net/tcp6").unwrap_or_default();
    assert!(
        !table6.lines().any(|l| l
            .split_whitespace()
            .nth(1)
            .is_some_and(|a| a.ends_with(&format!(":{port}")))),
        "no IPv6 listener on the same port"
    );
    server.shutdown().await;
}
