//! What each side of a pair printed, judged by the protocol check `run` and `verdict` use
//! ([`check`]): the older run's trials make an inventory of one release, and each trial of
//! the newer run is checked against it (what is new; a key or name gone where the older
//! release always printed it); then the other way round, which finds what the newer
//! release no longer prints anywhere. Only scenarios both runs ran are looked at.

use super::model::{ProtocolChange, ScenarioOutput};
use crate::protocol::check::{self, Change, Finding};
use crate::protocol::inventory::Inventory;
use crate::protocol::observe::Observed;
use semver::Version;

/// A scenario both runs ran: its trial id and each side's output.
pub struct Both<'a> {
    pub id: &'a String,
    pub from: &'a ScenarioOutput,
    pub to: &'a ScenarioOutput,
}

/// `(printed, not_printed)` of [`super::PairDrift`].
pub fn changes(both: &[Both]) -> (Vec<ProtocolChange>, Vec<ProtocolChange>) {
    let observe = |id: &str, o: &ScenarioOutput| Observed::of(id, &o.frames, &o.written);
    let older: Vec<(&str, Observed)> = (both.iter())
        .map(|b| (b.id.as_str(), observe(b.id, b.from)))
        .collect();
    let newer: Vec<(&str, Observed)> = (both.iter())
        .map(|b| (b.id.as_str(), observe(b.id, b.to)))
        .collect();
    let printed = against(&inventory(&older), &newer, |_| true);
    let not_printed = against(&inventory(&newer), &older, |f| f.change == Change::New);
    (printed, not_printed)
}

/// The one release a side's inventory holds: any version, as each inventory is of one run.
fn release() -> Version {
    Version::new(0, 0, 0)
}

fn inventory(side: &[(&str, Observed)]) -> Inventory {
    let mut all = Observed::default();
    for (_, o) in side {
        all.merge(o);
    }
    let mut inv = Inventory::new("drift");
    inv.add(&release(), &all);
    inv
}

/// Each trial of `side` checked against `inv`, the findings `keep` keeps grouped as `run`
/// groups a run's.
fn against(
    inv: &Inventory,
    side: &[(&str, Observed)],
    keep: impl Fn(&Finding) -> bool,
) -> Vec<ProtocolChange> {
    let found: Vec<(&str, Vec<Finding>)> = (side.iter())
        .map(|(id, o)| {
            let findings = check::check(inv, "the other run", &release(), id, o);
            (*id, findings.into_iter().filter(&keep).collect())
        })
        .collect();
    check::group(found.iter().map(|(id, f)| (*id, f.as_slice())))
        .into_iter()
        .map(|(finding, scenarios)| ProtocolChange { finding, scenarios })
        .collect()
}
