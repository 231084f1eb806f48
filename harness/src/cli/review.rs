//! What `streamcheck record` and `streamcheck review` print, and the review prompt.

use anstream::{print, println};
use std::io::{BufRead, Write as _};
use std::path::Path;
use streamcheck::commands::record::review::{scenario_of, Decision, PendingChange};
use streamcheck::install::Project;
use streamcheck::recording::{pending, Outcome, PendingPlace, Recording};
use streamcheck::runner::{Status, Trial};

/// One line per finished trial while recording (`run` of `runs`).
pub fn print_trial(t: &Trial, run: usize, runs: usize) {
    let state = match &t.status {
        Status::Passed => "passes ",
        Status::Failed | Status::Known(_) => "differs",
        Status::Skipped(_) | Status::Unavailable(_) => "skipped",
    };
    let run = if runs > 1 {
        format!(" [run {run}/{runs}]")
    } else {
        String::new()
    };
    println!("{state} {} ({}){run}", t.key.scenario, t.key.target);
}

/// Prints what `record` did and returns the number of pending files written.
pub fn print_outcomes(recorded: &[Recording], root: &Path) -> usize {
    println!();
    for r in recorded {
        let (id, target) = (&r.scenario, &r.target);
        match &r.outcome {
            Outcome::Pending(file) => {
                let shown = file.path.strip_prefix(root).unwrap_or(&file.path).display();
                let first = if file.first_block {
                    " (a first block)"
                } else {
                    ""
                };
                let replaced = if file.replaced {
                    " (replaces an unreviewed pending file)"
                } else {
                    ""
                };
                let note = format!("{first}{replaced}");
                println!("pending    {id} ({target}): {shown}{note}");
            }
            Outcome::Unchanged => println!("unchanged  {id} ({target})"),
            Outcome::Skipped(why) => println!("skipped    {id} ({target}): {why}"),
            Outcome::NotRecorded(why) => println!("NOT RECORDED {id} ({target}): {why}"),
        }
    }
    let count = |f: fn(&Outcome) -> bool| recorded.iter().filter(|r| f(&r.outcome)).count();
    let pending = count(|o| matches!(o, Outcome::Pending(_)));
    println!(
        "\n{pending} pending, {} unchanged, {} skipped, {} not recorded",
        count(|o| matches!(o, Outcome::Unchanged)),
        count(|o| matches!(o, Outcome::Skipped(_))),
        count(|o| matches!(o, Outcome::NotRecorded(_))),
    );
    if pending > 0 {
        println!("review them with `streamcheck review` (nothing in scenarios/ was changed)");
    }
    pending
}

/// How `review` decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReviewMode {
    AcceptAll,
    RejectAll,
    /// Ask on the terminal, file by file.
    Ask,
    /// Only show the diffs and list the files.
    List,
}

/// Counts of a review.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ReviewSummary {
    pub accepted: usize,
    pub rejected: usize,
    pub kept: usize,
    pub errors: usize,
}

/// `streamcheck review`: shows each pending change as a diff and applies the decision.
/// `filters` are substrings of scenario ids (empty: all).
pub fn review(
    project: &Project,
    place: &PendingPlace,
    filters: &[String],
    mode: ReviewMode,
) -> ReviewSummary {
    let dir = &place.dir;
    let files = pending::pending_files(dir);
    let mut sum = ReviewSummary::default();
    if files.is_empty() {
        println!("no pending recordings in {}", dir.display());
        return sum;
    }
    let mut quit = false;
    for path in files {
        let id = scenario_of(&path);
        if !filters.is_empty() && !filters.iter().any(|f| id.contains(f.as_str())) {
            continue;
        }
        let shown = (path
            .strip_prefix(dir.parent().unwrap_or(dir))
            .unwrap_or(&path))
        .display();
        let change = match PendingChange::load(project, place, &path) {
            Ok(c) => c,
            Err(e) => {
                println!("error      {shown}: {e} (kept)");
                sum.errors += 1;
                continue;
            }
        };
        if quit {
            sum.kept += 1;
            continue;
        }
        quit = review_one(&change, &shown.to_string(), mode, &mut sum) == Decision::Quit;
    }
    pending::remove_empty_dirs(dir);
    println!(
        "\n{} accepted, {} rejected, {} kept pending, {} error(s)",
        sum.accepted, sum.rejected, sum.kept, sum.errors
    );
    if mode == ReviewMode::List && sum.kept > 0 {
        println!(
            "(no terminal: only listed; run on a terminal, or pass --accept-all / --reject-all)"
        );
    }
    sum
}

/// Shows one change, decides, applies the decision and counts it.
fn review_one(
    change: &PendingChange,
    shown: &str,
    mode: ReviewMode,
    sum: &mut ReviewSummary,
) -> Decision {
    let p = &change.pending;
    if change.is_unchanged() {
        match change.reject() {
            Ok(()) => println!(
                "unchanged  {} ({}): the scenario already says this; pending file removed",
                p.scenario, p.target
            ),
            Err(e) => {
                sum.errors += 1;
                println!("error      {shown}: {e}");
            }
        }
        return Decision::Skip;
    }
    println!(
        "\n==== {} ({} {}, expect: {}) ====",
        p.scenario, p.target, p.version, p.expect
    );
    for n in &p.notes {
        println!("note: {n}");
    }
    for line in change.diff().lines() {
        println!("{}", super::term::diff_line(line));
    }
    let decision = match mode {
        ReviewMode::AcceptAll => Decision::Accept,
        ReviewMode::RejectAll => Decision::Reject,
        ReviewMode::Ask => ask_on_terminal(change),
        ReviewMode::List => Decision::Skip,
    };
    if let Err(e) = change.apply(decision) {
        sum.errors += 1;
        println!("error      {shown}: {e}");
        return decision;
    }
    match decision {
        Decision::Accept => {
            sum.accepted += 1;
            match &change.copied_from {
                Some(_) => println!(
                    "accepted   {} (the bundled scenario, copied into {}: the copy replaces it)",
                    p.scenario,
                    change.scenario_path.display()
                ),
                None => println!("accepted   {}", p.file),
            }
        }
        Decision::Reject => {
            sum.rejected += 1;
            println!("rejected   {shown}");
        }
        Decision::Skip | Decision::Quit => {
            sum.kept += 1;
            println!("kept       {shown}");
        }
    }
    decision
}

/// Asks on the terminal: accept, reject, skip or quit.
fn ask_on_terminal(change: &PendingChange) -> Decision {
    let stdin = std::io::stdin();
    loop {
        print!(
            "{} ({}): [a]ccept, [r]eject, [s]kip, [q]uit? ",
            change.pending.scenario, change.pending.target
        );
        let _ = std::io::stdout().flush();
        let mut line = String::new();
        match stdin.lock().read_line(&mut line) {
            Ok(0) | Err(_) => return Decision::Quit,
            Ok(_) => {}
        }
        match line.trim().to_ascii_lowercase().as_str() {
            "a" | "accept" | "y" | "yes" => return Decision::Accept,
            "r" | "reject" | "n" | "no" => return Decision::Reject,
            "s" | "skip" | "" => return Decision::Skip,
            "q" | "quit" => return Decision::Quit,
            _ => println!("answer a, r, s or q"),
        }
    }
}
