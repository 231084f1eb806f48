//! `streamcheck replay-cli`: a saved trial played back as the CLI, for an SDK host's tests
//! (point the host's CLI path at a one-line script running this with `--trial`, or with
//! `--scenario ID --release V` to take the trial from a saved run).

use super::setup::Location;
use super::Verdict;
use std::path::PathBuf;
use std::time::Duration;
use streamcheck::commands::consume::probe::Probe;
use streamcheck::commands::consume::replay::{find_trial, play, Host, Replay};
use streamcheck::error::{Error, Result};
use streamcheck::store::saved::SavedTrial;

#[derive(clap::Args)]
pub struct ReplayCliArgs {
    /// The saved trial to play back (RUN/outputs/<topic>/<stem>.json).
    #[arg(long, required_unless_present = "scenario", conflicts_with_all = ["scenario", "release", "from"])]
    trial: Option<PathBuf>,
    /// The scenario whose saved trial to play back (with --release), taken from the newest
    /// run folder holding it: --from folders in order, else those under reports/runs/.
    #[arg(long, requires = "release")]
    scenario: Option<String>,
    /// The release (e.g. 2.1.330) whose run of --scenario to play back.
    #[arg(long, requires = "scenario")]
    release: Option<String>,
    /// A run folder to take --scenario from (repeatable; looked through in order).
    #[arg(long)]
    from: Vec<PathBuf>,
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
    /// `--trial`, or the saved trial `--scenario` and `--release` name.
    fn trial(&self, loc: &Location) -> Result<PathBuf> {
        if let Some(t) = &self.trial {
            return Ok(t.clone());
        }
        let (Some(id), Some(release)) = (&self.scenario, &self.release) else {
            return Err(Error::Usage(
                "replay-cli: --trial, or --scenario and --release".into(),
            ));
        };
        let runs = match self.from.is_empty() {
            false => self.from.clone(),
            true => {
                let root = loc.setup()?.reports_root().join("runs");
                let mut runs: Vec<PathBuf> = std::fs::read_dir(&root)
                    .map_err(|e| Error::io(&root, e))?
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.is_dir())
                    .collect();
                // Folders are named by when they were made: the newest first.
                runs.sort_by(|a, b| b.cmp(a));
                runs
            }
        };
        find_trial(&runs, id, release).map_err(|e| {
            Error::Usage(format!(
                "replay-cli: {e}; record one with `streamcheck run --filter {id} --target claude-code@{release}`"
            ))
        })
    }

    pub fn exec(self, loc: &Location) -> Result<Verdict> {
        let trial = self.trial(loc)?;
        let text = std::fs::read_to_string(&trial).map_err(|e| Error::io(&trial, e))?;
        let saved: SavedTrial = serde_json::from_str(&text)
            .map_err(|e| Error::Usage(format!("{}: not a saved trial: {e}", trial.display())))?;
        let args = &self.cli_args;
        if args.iter().any(|a| a == "--version" || a == "-v") {
            println!("{} (Claude Code)", saved.key.target_version);
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
            .map_err(|s| Error::Failed(format!("replay-cli {}: {s}", trial.display())))?;
        if let Some(host) = host {
            // As the CLI does in stream-json mode: exit once the host closes stdin.
            host.wait_for_eof();
        }
        std::process::exit(replay.exit_code);
    }
}
