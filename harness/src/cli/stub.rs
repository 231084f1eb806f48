//! `streamcheck stub ID|FILE`: serve one scenario's script for a person to point a CLI at.

use super::setup::Location;
use super::Verdict;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use streamcheck::error::{Error, Result};
use streamcheck::report::request_brief;

/// Serve one scenario's stub script for a person to point a CLI at.
#[derive(clap::Args)]
pub struct StubArgs {
    /// The scenario's id, as `streamcheck list` prints it (e.g. basics/text-reply), or a
    /// scenario or stub script file.
    file: PathBuf,
    #[arg(long, default_value_t = 0)]
    port: u16,
}

impl StubArgs {
    pub fn exec(self, loc: &Location) -> Result<Verdict> {
        let file = match self.file.is_file() {
            true => self.file,
            false => super::show::find(&loc.setup()?, &self.file.to_string_lossy())?,
        };
        serve(&file, self.port)
    }
}

fn serve(file: &Path, port: u16) -> Result<Verdict> {
    let text = std::fs::read_to_string(file).map_err(|e| Error::io(file, e))?;
    let script = stub_api::Script::from_yaml_or_scenario(&text)
        .map_err(|e| Error::Usage(format!("{}: {e}", file.display())))?;
    super::args::runtime()?.block_on(async {
        let on_request: Arc<dyn Fn(&stub_api::JournalEntry) + Send + Sync> = Arc::new(|e| {
            let b = request_brief(e);
            println!(
                "#{} {} model={} -> {} ({})",
                b["seq"],
                b["request"].as_str().unwrap_or(""),
                b["model"],
                b["answered_by"].as_str().unwrap_or(""),
                b["status"]
            );
        });
        let options = stub_api::ServeOptions {
            port,
            on_request: Some(on_request),
            ..Default::default()
        };
        let server = stub_api::StubServer::start_with(script, options)
            .await
            .map_err(|e| Error::Failed(format!("cannot start the stub: {e}")))?;
        println!("stub listening on {} (Ctrl-C to stop)", server.base_url());
        println!(
            "point a CLI at it: ANTHROPIC_BASE_URL={} ANTHROPIC_API_KEY=dummy claude -p ...",
            server.base_url()
        );
        let _ = tokio::signal::ctrl_c().await;
        server.shutdown().await;
        Ok(Verdict::AllGood)
    })
}
