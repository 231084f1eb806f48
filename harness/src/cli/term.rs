//! Everything a person reads on the terminal while trials run: one line per trial, the
//! failure blocks with their coloured diffs, the progress bar, errors. Colour goes
//! through anstream, which drops it when stdout is not a terminal or NO_COLOR is set.

use anstream::{eprintln, println};
use anstyle::{AnsiColor, Style};
use std::io::IsTerminal;
use streamcheck::divergence::Kind;
use streamcheck::error::Error;
use streamcheck::report::{self, Counts};
use streamcheck::runner::{Status, Trial};
use streamcheck::scenario::ScenarioError;
use streamcheck::text::clip;

fn paint(s: &str, style: Style) -> String {
    format!("{style}{s}{style:#}")
}

fn fg(color: AnsiColor) -> Style {
    Style::new().fg_color(Some(color.into()))
}

/// `ok      basics/text-reply (claude-code) 1.2s`, `FAILED  …: field mismatch`, …
pub fn trial_line(t: &Trial) -> String {
    let name = format!("{} ({})", t.key.scenario, t.key.target);
    match &t.status {
        Status::Passed => format!(
            "{} {name} {:.1}s",
            paint("ok     ", fg(AnsiColor::Green)),
            t.duration_ms as f64 / 1000.0
        ),
        Status::Failed => {
            let first = t.divergences.first();
            let run = first.and_then(|d| d.run).map(|n| format!(" in run {n}"));
            format!(
                "{} {name}: {}{}",
                paint("FAILED ", fg(AnsiColor::Red).bold()),
                first.map(|d| d.kind.as_str()).unwrap_or(""),
                run.unwrap_or_default()
            )
        }
        Status::Skipped(why) => {
            format!("{} {name}: {why}", paint("skipped", fg(AnsiColor::Yellow)))
        }
        Status::Known(why) => format!("{} {name}: {why}", paint("known  ", fg(AnsiColor::Magenta))),
        Status::Unavailable(why) => {
            format!(
                "{} {name}: {why}",
                paint("UNAVAIL", fg(AnsiColor::Red).bold())
            )
        }
    }
}

/// A line of a unified diff, coloured by what it is (removed, added, hunk header).
pub fn diff_line(line: &str) -> String {
    match line.chars().next() {
        Some('-') => paint(line, fg(AnsiColor::Red)),
        Some('+') => paint(line, fg(AnsiColor::Green)),
        Some('@') => paint(line, fg(AnsiColor::Cyan)),
        _ => line.to_string(),
    }
}

/// Prints trials as they finish: above a progress bar on a terminal, else one per line.
pub struct Progress {
    bar: Option<indicatif::ProgressBar>,
    failures: Vec<Trial>,
}

impl Progress {
    pub fn new(total: usize) -> Progress {
        let bar = (std::io::stderr().is_terminal() && total > 8).then(|| {
            let b = indicatif::ProgressBar::new(total as u64);
            b.set_style(
                indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} {elapsed} {msg}")
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            b
        });
        Progress {
            bar,
            failures: Vec::new(),
        }
    }

    pub fn trial(&mut self, t: &Trial) {
        let line = trial_line(t);
        match &self.bar {
            Some(b) => {
                b.println(line);
                b.inc(1);
            }
            None => println!("{line}"),
        }
        if t.status == Status::Failed {
            self.failures.push(t.clone());
        }
    }

    /// Clears the bar and prints what failed, in full.
    pub fn finish(self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
        for t in &self.failures {
            failure(t);
        }
    }
}

fn failure(t: &Trial) {
    let title = format!(
        "---- {} on {} {} ----",
        t.key.scenario, t.key.target, t.key.target_version
    );
    println!("\n{}", paint(&title, Style::new().bold()));
    for d in &t.divergences {
        println!("{d}");
    }
    let spawn_failed = t.divergences.iter().any(|d| d.kind == Kind::Spawn);
    if !t.expected_frames.is_empty() && !spawn_failed {
        let frames: Vec<_> = t.output.frames.iter().map(|f| f.value.clone()).collect();
        for line in report::frame_diff(&t.expected_frames, &frames, &t.vars).lines() {
            println!("{}", diff_line(line));
        }
    }
    let last: Vec<String> = t
        .stderr
        .last_lines(5)
        .into_iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| clip(&l, 200))
        .collect();
    if !last.is_empty() {
        println!("stderr (last lines):\n  {}", last.join("\n  "));
    }
    for note in &t.notes {
        println!("note: {note}");
    }
}

/// The closing lines of a run: where the reports are, what did not load, the counts.
/// What to fix first, after the trials: the causes of the failures ranked by trials, the
/// protocol findings counted (one line per key), the trials skipped as unsupported and the
/// size of the parity table.
pub fn causes_first(r: &streamcheck::report::Results) {
    let causes = streamcheck::report::causes::ranked(&r.trials);
    if !causes.is_empty() {
        println!(
            "\nwhat to fix first ({} causes, most trials first):",
            causes.len()
        );
        for (i, c) in causes.iter().enumerate() {
            println!("{:>3}. {}", i + 1, c.line());
        }
    }
    let protocol = streamcheck::runner::protocol::run_findings(&r.trials);
    if !protocol.is_empty() {
        println!("\nprotocol ({} findings):", protocol.len());
        for (finding, trials) in &protocol {
            println!("  {}", streamcheck::protocol::check::line(finding, trials));
        }
    }
    let unsupported: Vec<String> = (r.trials.iter())
        .filter_map(|t| {
            Some(format!(
                "{} ({}): needs {}",
                t.key.scenario,
                t.key.target,
                t.unsupported()?.join(", ")
            ))
        })
        .collect();
    if !unsupported.is_empty() {
        println!(
            "\nskipped as unsupported ({}, the target's `supports`):",
            unsupported.len()
        );
        for u in unsupported {
            println!("  {u}");
        }
    }
    if !r.parity.is_empty() {
        println!(
            "\nparity: {} key path(s) only one side prints (protocol = \"parity\"): summary.md, index.html, results.json `parity`",
            r.parity.len()
        );
    }
}

pub fn run_summary(
    dir: &std::path::Path,
    broken_files: usize,
    counts: &Counts,
    rules: &std::collections::BTreeMap<&str, usize>,
) {
    println!("\nreports: {}", dir.display());
    for (rule, n) in rules {
        println!("rule {rule} held in {n} trial(s)");
    }
    if broken_files > 0 {
        println!("{broken_files} scenario file(s) could not be loaded (see above)");
    }
    if counts.known > 0 {
        println!(
            "{} known divergence(s) (listed per target in targets/*/known-divergences.yaml)",
            counts.known
        );
    }
    if counts.stale_known > 0 {
        println!(
            "{} stale known-divergence entr(ies): the CLI no longer shows them (see the trials' stale_known in results.json; --strict fails on them)",
            counts.stale_known
        );
    }
    println!("{}", counts.line());
}

pub fn scenario_errors(errors: &[ScenarioError]) {
    for e in errors {
        eprintln!("{}: {e}", paint("error", fg(AnsiColor::Red).bold()));
    }
}

pub fn error(e: &Error) {
    eprintln!("streamcheck: {e}");
}

/// What the library says while it works (an install under way, an interrupt) goes to
/// stderr as `streamcheck: ...`; `RUST_LOG` can quieten or widen it.
pub fn log_to_stderr() {
    use std::io::Write;
    env_logger::Builder::new()
        .filter_level(log::LevelFilter::Info)
        .parse_env("RUST_LOG")
        .format(|out, record| writeln!(out, "streamcheck: {}", record.args()))
        .init();
}
