//! The protocol as printed: one inventory per dialect (`targets/<dialect>/protocol.yaml`)
//! of every frame kind, key path, JSON type and named list the catalogue makes the CLI
//! print, per release; every trial is checked against it.
//!
//! - [`observe`]: what one trial printed, as the inventory counts it
//! - [`inventory`]: the inventory, built and widened one release at a time, and its file
//! - [`check`](mod@check): a trial against the inventory (findings), a run's findings grouped
//! - [`build`]: the inventory from run folders (`streamcheck protocol build|add`)
//! - [`render`]: the reference (`docs/protocol/<dialect>.md`) and a release's JSON Schema
//! - [`sdk`]: the Agent SDK's declared message types against the inventory
//! - [`verdict`](mod@verdict): a release judged from one run (`streamcheck verdict`)

pub mod build;
pub mod check;
pub mod inventory;
pub mod observe;
pub mod render;
pub mod sdk;
pub mod verdict;

pub use check::{Change, Finding, Policy, What};
pub use inventory::Inventory;
pub use observe::Observed;

use crate::divergence::{Divergence, Kind};
use crate::runner::Trial;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::SystemTime;

type Loaded = Arc<Result<Option<Inventory>, String>>;

/// A dialect's inventory in the project at `root` (`None`: it has none), read once per
/// process while the file is unchanged.
pub fn load(root: &Path, dialect: &str) -> Loaded {
    type Cache = Mutex<HashMap<PathBuf, (Option<SystemTime>, Loaded)>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let path = root.join(inventory::file_of(dialect));
    let modified = std::fs::metadata(&path).and_then(|m| m.modified()).ok();
    let mut cache = CACHE
        .get_or_init(Default::default)
        .lock()
        .expect("not poisoned");
    if let Some((at, inv)) = cache.get(&path) {
        if *at == modified {
            return inv.clone();
        }
    }
    let inv: Loaded = Arc::new(match path.exists() {
        false => Ok(None),
        true => Inventory::load(&path).map(Some),
    });
    cache.insert(path, (modified, inv.clone()));
    inv
}

/// What one trial printed: its frames, the client's lines and the API requests.
pub fn observed(trial: &Trial) -> Observed {
    let written: Vec<String> = (trial.client.iter())
        .flat_map(|c| c.written.iter().map(|(_, l)| l.clone()))
        .collect();
    let bodies: Vec<&serde_json::Value> = (trial.journal.iter())
        .filter(|e| e.is_messages_request())
        .map(|e| e.body())
        .collect();
    Observed::of(
        &trial.scenario,
        trial.output.frames.iter().map(|f| &f.value),
        &written,
        bodies,
    )
}

/// Checks a finished run of a trial against its dialect's inventory at the release it is
/// held to: the findings go to `trial.protocol`, those `policy` fails on become
/// divergences. An inventory that does not load fails the trial.
pub fn check_trial(policy: Policy, root: &Path, trial: &mut Trial) {
    let Some(dialect) = trial.dialect.filter(|_| policy != Policy::Off) else {
        return;
    };
    let key = dialect.expect_key();
    let file = inventory::file_of(key).display().to_string();
    let findings = match &*load(root, key) {
        Err(e) => {
            trial.divergences.push(Divergence::new(
                Kind::Protocol,
                format!("the protocol inventory does not load: {e}"),
            ));
            return;
        }
        Ok(None) => vec![Finding {
            change: Change::Unchecked,
            what: What::Inventory { file, from: None },
        }],
        Ok(Some(inv)) => match semver::Version::parse(trial.expect_version()) {
            Ok(release) => check::check(inv, &file, &release, &trial.scenario, &observed(trial)),
            Err(_) => vec![Finding {
                change: Change::Unchecked,
                what: What::Inventory {
                    file,
                    from: Some(format!("releases, not `{}`", trial.expect_version())),
                },
            }],
        },
    };
    for f in &findings {
        if f.fails(policy) {
            trial
                .divergences
                .push(Divergence::new(Kind::Protocol, f.to_string()));
        }
    }
    trial.protocol.extend(findings);
}

/// A run's findings, each once with the trials it was seen in.
pub fn run_findings(trials: &[Trial]) -> Vec<(Finding, Vec<String>)> {
    let targets: std::collections::BTreeSet<&str> =
        trials.iter().map(|t| t.target.as_str()).collect();
    let names: Vec<String> = (trials.iter())
        .map(|t| match targets.len() {
            1 => t.scenario.clone(),
            _ => format!("{} ({})", t.scenario, t.target),
        })
        .collect();
    check::group(
        trials
            .iter()
            .zip(&names)
            .map(|(t, n)| (n.as_str(), t.protocol.as_slice())),
    )
}
