//! `streamcheck install`: puts targets in place before a run (CI's first step), so the
//! run itself never spends its time budget building one.

use super::args::TargetArgs;
use super::setup::{Location, Setup};
use super::Verdict;
use streamcheck::error::{Error, Result};
use streamcheck::install;

/// Install targets into place (npm ci, or build caliban into the cache) without running anything.
#[derive(clap::Args)]
pub struct InstallArgs {
    #[command(flatten)]
    targets: TargetArgs,
}

impl InstallArgs {
    pub fn exec(self, loc: &Location) -> Result<Verdict> {
        install(&loc.setup()?, &self.targets)
    }
}

fn install(setup: &Setup, targets: &TargetArgs) -> Result<Verdict> {
    let mut failed = Vec::new();
    for spec in targets.specs(setup)? {
        match install::resolve(&spec, &setup.project, true) {
            Ok(t) => println!("{}: {} at {}", t.name, t.version, t.program.display()),
            Err(e) => {
                eprintln!("error: {e}");
                failed.push(e.target);
            }
        }
    }
    if failed.is_empty() {
        Ok(Verdict::AllGood)
    } else {
        Err(Error::Failed(format!(
            "not installed: {}",
            failed.join(", ")
        )))
    }
}
