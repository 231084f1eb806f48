//! `stub-api serve --script FILE.yaml [--port N] [--journal FILE.ndjson]`

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use anyhow::Context;
use clap::{Parser, Subcommand};
use stub_api::{Answer, JournalEntry, Script, ServeOptions, StubServer};

#[derive(Parser)]
#[command(
    name = "stub-api",
    version,
    about = "A scriptable Anthropic Messages API stub"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve a script on 127.0.0.1 until Ctrl-C or SIGTERM.
    Serve {
        /// A script, or a scenario file with a top-level `stub:` key.
        #[arg(long)]
        script: PathBuf,
        /// Port on 127.0.0.1 (0: any free port).
        #[arg(long, default_value_t = 0)]
        port: u16,
        /// Write every request to this NDJSON file as it arrives.
        #[arg(long)]
        journal: Option<PathBuf>,
        /// Do not print a line per request.
        #[arg(long)]
        quiet: bool,
        /// Approximate bytes of requests kept in memory for GET /__stub/journal
        /// (oldest dropped first; the --journal file always gets everything).
        #[arg(long, default_value_t = 2 << 20)]
        journal_memory: usize,
        /// Runtime worker threads (1: a single-threaded runtime).
        #[arg(long, default_value_t = 1)]
        threads: usize,
    },
    /// Parse a script or scenario file and report errors.
    Check { script: PathBuf },
    /// Print the JSON schema of the script format.
    Schema,
}

fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Serve {
            script,
            port,
            journal,
            quiet,
            journal_memory,
            threads,
        } => {
            let script = load(&script)?;
            let runtime = if threads <= 1 {
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()?
            } else {
                tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(threads)
                    .enable_all()
                    .build()?
            };
            runtime.block_on(serve(script, port, journal, quiet, journal_memory))
        }
        Command::Check { script } => {
            let s = load(&script)?;
            println!("{}: ok, {} steps", script.display(), s.steps_len());
            Ok(())
        }
        Command::Schema => {
            println!("{}", serde_json::to_string_pretty(&Script::json_schema())?);
            Ok(())
        }
    }
}

fn load(path: &PathBuf) -> anyhow::Result<Script> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    Script::from_yaml_or_scenario(&text).with_context(|| format!("parsing {}", path.display()))
}

async fn serve(
    script: Script,
    port: u16,
    journal: Option<PathBuf>,
    quiet: bool,
    journal_memory: usize,
) -> anyhow::Result<()> {
    let file = match &journal {
        Some(path) => Some(Mutex::new(BufWriter::new(
            File::create(path).with_context(|| format!("creating {}", path.display()))?,
        ))),
        None => None,
    };
    let file = Arc::new(file);
    let sink = file.clone();
    // Request lines are buffered and written by a ticker (or when the buffer fills up):
    // one write per request would cost more than answering it.
    let log = Arc::new(Mutex::new(Vec::<u8>::with_capacity(LOG_BUFFER)));
    let log_sink = log.clone();
    let on_request = move |entry: &JournalEntry| {
        if !quiet {
            let mut buf = log_sink.lock().unwrap_or_else(|e| e.into_inner());
            let _ = writeln!(buf, "{}", describe(entry));
            if buf.len() >= LOG_BUFFER {
                flush_log(&mut buf);
            }
        }
        if let Some(file) = sink.as_ref() {
            let mut file = file.lock().unwrap_or_else(|e| e.into_inner());
            let _ = file.write_all(entry.to_ndjson().as_bytes());
            let _ = file.flush();
        }
    };
    let ticker_log = log.clone();
    let ticker = tokio::spawn(async move {
        let mut tick = tokio::time::interval(std::time::Duration::from_millis(20));
        loop {
            tick.tick().await;
            flush_log(&mut ticker_log.lock().unwrap_or_else(|e| e.into_inner()));
        }
    });
    let opts = ServeOptions {
        port,
        on_request: Some(Arc::new(on_request)),
        journal_max_bytes: Some(journal_memory),
        journal_keep_first: false,
    };
    let server = StubServer::start_with(script, opts).await?;
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "stub-api listening on {}", server.base_url())?;
        out.flush()?;
    }
    wait_for_signal().await?;
    server.shutdown().await;
    ticker.abort();
    flush_log(&mut log.lock().unwrap_or_else(|e| e.into_inner()));
    if let Some(file) = file.as_ref() {
        file.lock().unwrap_or_else(|e| e.into_inner()).flush()?;
    }
    Ok(())
}

const LOG_BUFFER: usize = 32 * 1024;

fn flush_log(buf: &mut Vec<u8>) {
    if !buf.is_empty() {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(buf);
        let _ = out.flush();
        buf.clear();
    }
}

async fn wait_for_signal() -> std::io::Result<()> {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        r = tokio::signal::ctrl_c() => r,
        _ = term.recv() => Ok(()),
    }
}

fn describe(e: &JournalEntry) -> String {
    let answered = match &e.answer {
        Answer::Step { step, repeat: 0 } => format!("step {step}"),
        Answer::Step { step, repeat } => format!("step {step} (repeat {repeat})"),
        Answer::Background { rule } => format!("background rule {rule}"),
        Answer::Side => "side".to_string(),
        Answer::Unscripted { message } => format!("UNSCRIPTED: {message}"),
    };
    let query = e
        .query
        .as_deref()
        .map(|q| format!("?{q}"))
        .unwrap_or_default();
    let model = e
        .model
        .as_deref()
        .map(|m| format!(" model={m}"))
        .unwrap_or_default();
    format!(
        "#{} {} {}{}{} -> {} [{}]",
        e.seq, e.method, e.path, query, model, answered, e.status
    )
}
