//! The compare page: the parity table, and per scenario both CLIs' timelines side by
//! side, each event without a counterpart on the other side marked.

use crate::commands::compare::Parity;
use crate::report::html::timeline::Event;
use crate::report::html::trial::{view, view_saved, TrialView};
use crate::report::trial_stem;
use crate::runner::Trial;
use crate::store::RunReader;
use serde::Serialize;
use std::io;
use std::path::Path;

#[derive(Serialize)]
struct PairView {
    a: Option<TrialView>,
    b: Option<TrialView>,
}

#[derive(Serialize)]
struct Page<'a> {
    title: String,
    command: Option<&'a str>,
    parity: &'a Parity,
    /// Per scenario with a timeline: its comparison, for the script.
    pairs: Vec<crate::report::html::page::Embedded>,
}

/// Writes `dir/index.html` for a comparison; the trials' saved outputs (and
/// `results.json`, when written) in `dir` give the timelines.
pub fn write_parity(dir: &Path, parity: &Parity) -> io::Result<()> {
    let run = RunReader::open(dir);
    let trials: Vec<Trial> = run.results().map(|r| r.trials).unwrap_or_default();
    let saved = run.saved().unwrap_or_default();
    let mut pairs = Vec::new();
    for sp in &parity.scenarios {
        let side = |name: &str| {
            let s = saved
                .iter()
                .find(|s| s.key.scenario == sp.scenario && s.key.target == name)?;
            Some(
                match trials
                    .iter()
                    .find(|t| t.key.scenario == s.key.scenario && t.key.target == name)
                {
                    Some(t) => view(trial_stem(t), t, Some(s)),
                    None => view_saved(format!("{}.{name}", s.key.scenario), s),
                },
            )
        };
        let (mut a, mut b) = (side(&parity.a.name), side(&parity.b.name));
        if let (Some(a), Some(b)) = (&mut a, &mut b) {
            mark_differences(&mut a.events, &mut b.events);
        }
        if a.is_some() || b.is_some() {
            pairs.push(crate::report::html::page::Embedded::new(
                sp.scenario.clone(),
                &PairView { a, b },
            ));
        }
    }
    let page = Page {
        title: format!(
            "streamcheck compare: {} vs {}",
            parity.a.name, parity.b.name
        ),
        command: Some(&parity.command)
            .filter(|c| !c.is_empty())
            .map(String::as_str),
        parity,
        pairs,
    };
    crate::report::html::page::write_page(dir, "parity.html", page)
}

/// Lines the two timelines up by what each event is (source and label) and marks the
/// events that are not in their longest common sequence.
pub fn mark_differences(a: &mut [Event], b: &mut [Event]) {
    let keys_a: Vec<_> = a.iter().map(Event::key).collect();
    let keys_b: Vec<_> = b.iter().map(Event::key).collect();
    let ops = similar::capture_diff_slices(similar::Algorithm::Myers, &keys_a, &keys_b);
    let (mut differs_a, mut differs_b) = (Vec::new(), Vec::new());
    for op in ops {
        match op {
            similar::DiffOp::Equal { .. } => {}
            similar::DiffOp::Delete {
                old_index, old_len, ..
            } => differs_a.extend(old_index..old_index + old_len),
            similar::DiffOp::Insert {
                new_index, new_len, ..
            } => differs_b.extend(new_index..new_index + new_len),
            similar::DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                differs_a.extend(old_index..old_index + old_len);
                differs_b.extend(new_index..new_index + new_len);
            }
        }
    }
    for i in differs_a {
        a[i].differs = true;
    }
    for i in differs_b {
        b[i].differs = true;
    }
}
