//! Every planned trial yields a result: a trial whose task panics is a failed trial naming
//! the harness, and the run's counts show it.

use std::path::Path;
use std::sync::Arc;
use streamcheck::dialect::Dialect;
use streamcheck::divergence::Kind;
use streamcheck::install::{Cause, DialectData, NotInstalled, Project, Target};
use streamcheck::plan::TrialPlan;
use streamcheck::report::ReportWriter;
use streamcheck::runner::RunOptions;
use streamcheck::runner::{Status, Trial};
use streamcheck::scenario::Scenario;
use streamcheck::suite::{self, Completion, RunEnd, Tee, TrialSink};

fn scenario(id: &str) -> Scenario {
    let root = Path::new("/nonexistent-root");
    let text =
        "description: d\nprompt: hi\nstub: {steps: []}\nexpect: {claude-code: {frames: []}}\n";
    Scenario::parse(text, &root.join(format!("{id}.yaml")), root).unwrap()
}

fn target() -> Target {
    Target {
        name: "fake".into(),
        dialect: Dialect::ClaudeCode,
        program: "/bin/false".into(),
        lead_args: Vec::new(),
        version: "0.0.0".into(),
        features: Default::default(),
        known: Default::default(),
        data: Arc::new(DialectData::empty(
            Path::new("/nonexistent-root"),
            Dialect::ClaudeCode,
        )),
        env: Default::default(),
        conforms_to: None,
        project: Project::at("/nonexistent-root"),
        declared: Default::default(),
    }
}

#[tokio::test]
async fn a_panicking_or_vanished_trial_is_a_failed_trial() {
    let dir = tempfile::tempdir().unwrap();
    let mut writer = ReportWriter::create(dir.path(), vec![], vec![]).unwrap();
    let scenarios = vec![scenario("ok"), scenario("panics")];
    let mut seen = Vec::new();
    let mut sink = Tee {
        look: |t: &Trial, how: Completion| seen.push((t.key.scenario.to_string(), how)),
        inner: &mut writer,
    };
    let planned = suite::plan_all(&scenarios, &[Ok(target())], &RunOptions::default());
    let end = suite::run_with(
        planned,
        2,
        &mut sink,
        |p: Arc<TrialPlan>, t: Target| async move {
            match p.scenario.id.as_str() {
                "panics" => panic!("boom in {}", p.scenario.id),
                _ => suite::harness_error(&p.scenario, &t, "stand-in").tap_passed(),
            }
        },
    )
    .await
    .unwrap();
    assert_eq!(end, RunEnd::Finished);
    seen.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        seen,
        [
            ("ok".to_string(), Completion::Reported),
            ("panics".to_string(), Completion::Panicked)
        ]
    );
    let results = writer.finish().unwrap();
    assert_eq!(results.counts.passed, 1);
    assert_eq!(results.counts.failed, 1);
    let panicked = results
        .trials
        .iter()
        .find(|t| t.key.scenario == "panics")
        .unwrap();
    assert_eq!(panicked.status, Status::Failed);
    assert_eq!(panicked.divergences[0].kind, Kind::HarnessError);
    assert!(panicked.divergences[0].message.contains("boom in panics"));
}

trait TapPassed {
    fn tap_passed(self) -> Self;
}

impl TapPassed for Trial {
    fn tap_passed(mut self) -> Self {
        self.status = Status::Passed;
        self.divergences.clear();
        self
    }
}

/// A sink that keeps what it is given.
#[derive(Default)]
struct Collect(Vec<(Trial, Completion)>);

impl TrialSink for Collect {
    fn trial(&mut self, trial: Trial, how: Completion) -> std::io::Result<()> {
        self.0.push((trial, how));
        Ok(())
    }
}

#[tokio::test]
async fn a_target_that_cannot_run_gives_unavailable_trials_and_no_planned_ones() {
    let mut sink = Collect::default();
    let missing = NotInstalled {
        target: "caliban".into(),
        cause: Cause::NotInstalled,
        reason: "not built".into(),
        install: "streamcheck install --target caliban".into(),
    };
    let targets = [Ok(target()), Err(missing)];
    let planned = suite::plan_all(&[scenario("a")], &targets, &RunOptions::default());
    let end = suite::run_with(
        planned,
        2,
        &mut sink,
        |p: Arc<TrialPlan>, t: Target| async move {
            suite::harness_error(&p.scenario, &t, "stand-in").tap_passed()
        },
    )
    .await
    .unwrap();
    assert_eq!(end, RunEnd::Finished);
    sink.0.sort_by(|a, b| a.0.key.target.cmp(&b.0.key.target));
    let got: Vec<_> = sink
        .0
        .iter()
        .map(|(t, how)| (t.key.target.as_str(), t.status.clone(), *how))
        .collect();
    assert_eq!(got[1], ("fake", Status::Passed, Completion::Reported));
    assert_eq!(got[0].0, "caliban");
    assert_eq!(got[0].2, Completion::TargetUnavailable);
    assert!(matches!(&got[0].1, Status::Unavailable(why) if why.contains("not built")));
}

#[tokio::test]
async fn every_trial_is_decided_before_any_starts_and_a_skip_takes_no_place() {
    let root = Path::new("/nonexistent-root");
    let parse = |id: &str, text: &str| {
        Scenario::parse(text, &root.join(format!("{id}.yaml")), root).unwrap()
    };
    let other = "description: d\nprompt: hi\nstub: {steps: []}\nexpect: {caliban: {frames: []}}\n";
    let skip = "description: d\nprompt: hi\nstub: {steps: []}\nfeatures: [api-retry]\nexpect: {claude-code: {frames: []}}\n";
    let scenarios = vec![
        scenario("runs"),
        parse("other", other),
        parse("skips", skip),
    ];
    let planned = suite::plan_all(&scenarios, &[Ok(target())], &RunOptions::default());
    let ids: Vec<&str> = (planned.iter())
        .map(|p| match p {
            suite::Planned::Trial { plan, .. } => plan.scenario.id.as_str(),
            suite::Planned::Unavailable(t) => t.key.scenario.as_str(),
        })
        .collect();
    assert_eq!(
        ids,
        ["runs", "skips"],
        "a scenario for another dialect is no trial"
    );
    let mut sink = Collect::default();
    let end = suite::run_with(
        planned,
        1,
        &mut sink,
        |p: Arc<TrialPlan>, t: Target| async move {
            assert_ne!(p.scenario.id, "skips", "a skipped trial is never executed");
            suite::harness_error(&p.scenario, &t, "stand-in").tap_passed()
        },
    )
    .await
    .unwrap();
    assert_eq!(end, RunEnd::Finished);
    let skipped = sink
        .0
        .iter()
        .find(|(t, _)| t.key.scenario == "skips")
        .unwrap();
    assert!(
        matches!(&skipped.0.status, Status::Skipped(why) if why.contains("api-retry")),
        "{:?}",
        skipped.0.status
    );
}

/// The verdict marks only what the plan's known-divergence list names: the runner takes
/// the entries from the plan, not from the target it runs on.
#[tokio::test]
async fn a_trial_is_judged_with_the_known_entries_its_plan_holds() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("known.yaml");
    std::fs::write(
        &path,
        "- scenario: k\n  kind: exit_code\n  message: '^expected exit code 0, got 1$'\n  reason: exits 1\n",
    )
    .unwrap();
    let list = streamcheck::known::KnownList::load(&path, "known.yaml").unwrap();
    let mut t = target();
    t.known = Arc::new(list);
    let root = Path::new("/nonexistent-root");
    let text = "description: d\nprompt: hi\nstub: {steps: []}\nexpect: {claude-code: {frames: [], exit_code: 0}}\n";
    let s = Scenario::parse(text, &root.join("k.yaml"), root).unwrap();
    let opts = RunOptions {
        grace: std::time::Duration::from_secs(1),
        ..RunOptions::default()
    };
    let planner = streamcheck::plan::Planner::for_target(&t);
    let mut plan = planner.plan(&s, &t, &opts);
    assert_eq!(
        plan.known.list.entries.len(),
        1,
        "the plan holds the target's list"
    );

    let trial = streamcheck::runner::execute_plan(&plan, &t).await;
    let kinds: Vec<Kind> = trial.divergences.iter().map(|d| d.kind).collect();
    assert!(kinds.contains(&Kind::ExitCode), "{kinds:?}");
    let unnamed: Vec<_> = (trial.divergences.iter())
        .filter(|d| d.known.is_none())
        .map(|d| d.message.clone())
        .collect();
    match unnamed.is_empty() {
        true => assert!(
            matches!(trial.status, Status::Known(_)),
            "{:?}",
            trial.status
        ),
        false => assert_eq!(trial.status, Status::Failed, "{unnamed:?}"),
    }
    assert!(
        trial
            .divergences
            .iter()
            .any(|d| d.kind == Kind::ExitCode && d.known.is_some()),
        "the plan's entry marks the exit code"
    );

    plan.known = Default::default();
    let trial = streamcheck::runner::execute_plan(&plan, &t).await;
    assert_eq!(trial.status, Status::Failed);
    assert!(
        trial.divergences.iter().all(|d| d.known.is_none()),
        "a plan without entries marks nothing, whatever the target holds"
    );
}
