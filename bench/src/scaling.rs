//! The suite at several `--jobs` levels: speed-up, and the CPU the whole process tree
//! burns, which shows where the CLI saturates the machine.

use crate::procfs::{children_cpu, cores, Meter};
use crate::{Options, Subset};
use anyhow::{Context, Result};
use serde::Deserialize;
use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;
use streamcheck::catalogue;
use streamcheck::install::{Project, Target};
use streamcheck::report::Counts;
use streamcheck::scenario::Scenario;

/// One `streamcheck run` of the subset.
struct SuiteRun {
    /// Seconds of wall time and of CPU (user + system of the whole process tree).
    wall: f64,
    cpu: f64,
    /// Share of the machine other processes kept busy meanwhile.
    others_busy: f64,
    counts: Counts,
}

pub fn part(project: &Project, opts: &Options) -> Result<String> {
    crate::built(&opts.streamcheck, "streamcheck", "STREAMCHECK_BIN")?;
    let cores = cores();
    let tmp = crate::temp_dir()?;
    let (all, _) = catalogue::load_all(&project.scenarios_dir());
    let target = crate::overhead::claude_code(project)?;
    let (filters, subset) = match opts.subset {
        Subset::Spread(n) => {
            let (ids, runnable) = spread_subset(&all, &target, n);
            let text = format!(
                "{} scenarios spread evenly by id over the {runnable} of the suite's {} that run on {} {} ({})",
                ids.len(),
                all.len(),
                target.name,
                target.version,
                ids.join(", ")
            );
            (
                ids.iter()
                    .flat_map(|id| ["-f".to_string(), id.clone()])
                    .collect(),
                text,
            )
        }
        Subset::All => (
            Vec::new(),
            format!("the whole suite ({} scenarios)", all.len()),
        ),
    };
    let mut md = format!(
        "### Suite scaling\n\n`streamcheck run --jobs N{}`: {subset}; on {cores} cores. CPU = user + system time of the whole process tree (getrusage of reaped children); busy = CPU / (wall × cores), beside what other processes on the machine used meanwhile.\n\n\
         | jobs | wall (s) | speed-up | CPU (s) | CPU per trial (s) | wall per trial (s) | busy: suite + others | passed / failed / skipped |\n|---:|---:|---:|---:|---:|---:|---:|---|\n",
        if filters.is_empty() { "" } else { " -f ID ..." }
    );
    let (mut first_wall, mut cpu_per_wall_1) = (None, None);
    for &jobs in &opts.jobs {
        eprintln!("bench: suite subset at --jobs {jobs} ...");
        let dir = tmp.path().join(format!("jobs-{jobs}"));
        let run = run_suite(&opts.streamcheck, &project.root, jobs, &filters, &dir)?;
        let c = &run.counts;
        let trials = (c.passed + c.failed).max(1) as f64;
        let first = *first_wall.get_or_insert(run.wall);
        if jobs == 1 {
            cpu_per_wall_1 = Some(run.cpu / run.wall);
        }
        let _ = writeln!(
            md,
            "| {jobs} | {:.1} | {:.2}x | {:.1} | {:.2} | {:.2} | {:.0} % + {:.0} % | {} / {} / {} |",
            run.wall,
            first / run.wall,
            run.cpu,
            run.cpu / trials,
            run.wall / trials,
            100.0 * run.cpu / (run.wall * cores as f64),
            100.0 * run.others_busy,
            c.passed,
            c.failed,
            c.skipped,
        );
    }
    if let Some(r) = cpu_per_wall_1 {
        let _ = writeln!(
            md,
            "\nAt --jobs 1 the tree keeps {r:.2} cores busy: the CLI alone saturates this {cores}-core machine at about {:.1} trials in parallel, so the speed-up cannot exceed {:.1}x here whatever --jobs says.",
            cores as f64 / r,
            cores as f64 / r,
        );
    }
    Ok(md)
}

fn run_suite(
    bin: &Path,
    root: &Path,
    jobs: usize,
    filters: &[String],
    report_dir: &Path,
) -> Result<SuiteRun> {
    let meter = Meter::start();
    let cpu = children_cpu();
    let t = Instant::now();
    Command::new(bin)
        .arg("--root")
        .arg(root)
        .args(["run", "--jobs", &jobs.to_string(), "--report-dir"])
        .arg(report_dir)
        .args(filters)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .with_context(|| format!("cannot start {}", bin.display()))?;
    Ok(SuiteRun {
        wall: t.elapsed().as_secs_f64(),
        cpu: children_cpu().saturating_sub(cpu).as_secs_f64(),
        others_busy: meter.others_busy(),
        counts: counts_in(report_dir)?,
    })
}

/// The counts of the run whose reports are in `dir` (its `results.json`).
fn counts_in(dir: &Path) -> Result<Counts> {
    #[derive(Deserialize)]
    struct Results {
        counts: Counts,
    }
    let path = dir.join("results.json");
    let text = std::fs::read_to_string(&path).with_context(|| path.display().to_string())?;
    let results: Results =
        serde_json::from_str(&text).with_context(|| path.display().to_string())?;
    Ok(results.counts)
}

/// `n` scenarios that run on `target` (not skipped), spread evenly over the suite by id,
/// each named by an id that `-f` takes alone (not part of another id); and how many of
/// the suite's scenarios run on `target`.
fn spread_subset(all: &[Scenario], target: &Target, n: usize) -> (Vec<String>, usize) {
    let runnable: Vec<&str> = all
        .iter()
        .filter(|s| {
            s.file
                .expect
                .get(target.dialect.conventions().expect_key())
                .is_some_and(|e| target.unmet(s, e).is_none())
        })
        .map(|s| s.id.as_str())
        .filter(|id| all.iter().filter(|o| o.id.contains(id)).count() == 1)
        .collect();
    let step = (runnable.len() as f64 / n.max(1) as f64).max(1.0);
    let ids = (0..n.min(runnable.len()))
        .map(|i| runnable[(i as f64 * step) as usize].to_string())
        .collect();
    (ids, runnable.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use streamcheck::report::ReportWriter;
    use streamcheck::runner::Trial;

    #[test]
    fn counts_come_from_the_runs_results_json() {
        let dir = tempfile::tempdir().unwrap();
        let scenario = Scenario::parse(
            "description: d\nprompt: p\nexpect: {claude-code: {}}\n",
            Path::new("scenarios/x.yaml"),
            Path::new("scenarios"),
        )
        .unwrap();
        let mut writer =
            ReportWriter::create(dir.path(), Vec::new(), vec!["broken.yaml".into()]).unwrap();
        let skipped = Trial::skipped(&scenario, "claude-code", "1", "not installed".into());
        writer.record(skipped).unwrap();
        writer.finish().unwrap();
        let counts = counts_in(dir.path()).unwrap();
        assert_eq!(
            counts,
            Counts {
                skipped: 1,
                errors: 1,
                ..Counts::default()
            }
        );
        assert!(counts_in(&dir.path().join("nothing")).is_err());
    }
}
