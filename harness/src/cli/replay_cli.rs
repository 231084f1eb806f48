//! `streamcheck replay-cli`: a saved trial played back as the CLI, for an SDK host's tests
//! (point the host's CLI path at a one-line script running this with `--trial`).

use super::Verdict;
use std::path::PathBuf;
use std::time::Duration;
use streamcheck::commands::consume::probe::Probe;
use streamcheck::commands::consume::replay::{play, Host, Replay};
use streamcheck::error::{Error, Result};
use streamcheck::store::saved::SavedTrial;

#[derive(clap::Args)]
pub struct ReplayCliArgs {
    /// The saved trial to play back (RUN/outputs/<topic>/<stem>.json).
    #[arg(long)]
    trial: PathBuf,
    /// Play it back changed by this probe (see `consume --probes`).
    #[arg(long, value_parser = |s: &str| Probe::parse(s))]
    probe: Option<Probe>,
    /// Write each line at the time it was recorded (default: at once).
    #[arg(long)]
    timing: bool,
    /// Seconds to wait for the host (its initialize, user message, answers) before giving up.
    #[arg(long, default_value_t = 30)]
    wait: u64,
    /// The CLI's own command line, after `--`: `--version` (or `-v`) answers as the release
    /// that printed the trial; `--input-format stream-json` turns on the control protocol.
    #[arg(last = true)]
    cli_args: Vec<String>,
}

impl ReplayCliArgs {
    pub fn exec(self) -> Result<Verdict> {
        let text = std::fs::read_to_string(&self.trial).map_err(|e| Error::io(&self.trial, e))?;
        let saved: SavedTrial = serde_json::from_str(&text).map_err(|e| {
            Error::Usage(format!("{}: not a saved trial: {e}", self.trial.display()))
        })?;
        let args = &self.cli_args;
        if args.iter().any(|a| a == "--version" || a == "-v") {
            println!("{} (Claude Code)", saved.target_version);
            return Ok(Verdict::AllGood);
        }
        let stream_input = args.iter().enumerate().any(|(i, a)| {
            a == "--input-format=stream-json"
                || (a == "--input-format" && args.get(i + 1).is_some_and(|v| v == "stream-json"))
        });
        let wait = Duration::from_secs(self.wait);
        let replay = Replay::of(&saved, self.probe, self.timing, wait);
        let mut host =
            stream_input.then(|| Host::spawn(std::io::BufReader::new(std::io::stdin()), wait));
        let mut out = std::io::stdout().lock();
        play(&replay, host.as_mut(), &mut out)
            .map_err(|s| Error::Failed(format!("replay-cli {}: {s}", self.trial.display())))?;
        if let Some(host) = host {
            // As the CLI does in stream-json mode: exit once the host closes stdin.
            host.wait_for_eof();
        }
        std::process::exit(replay.exit_code);
    }
}
