//! Every planned trial yields a result: a trial whose task panics is a failed trial naming
//! the harness, and the run's counts show it.

use std::path::Path;
use std::sync::Arc;
use streamcheck::divergence::Kind;
use streamcheck::report::ReportWriter;
use streamcheck::runner::{Status, Trial};
use streamcheck::scenario::Scenario;
use streamcheck::suite::{self, Plan};
use streamcheck::target::{Dialect, Target};

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
        tools: Default::default(),
        env: Default::default(),
    }
}

#[tokio::test]
async fn a_panicking_or_vanished_trial_is_a_failed_trial() {
    let dir = tempfile::tempdir().unwrap();
    let mut writer = ReportWriter::create(dir.path(), vec![], vec![]).unwrap();
    let scenarios = vec![scenario("ok"), scenario("panics")];
    let mut seen = Vec::new();
    let finished = suite::run_with(
        scenarios,
        &[Ok(target())],
        Plan {
            jobs: 2,
            every_scenario: false,
        },
        &mut writer,
        |t: &Trial| seen.push(t.scenario.clone()),
        |s: Arc<Scenario>, t: Target| async move {
            match s.id.as_str() {
                "panics" => panic!("boom in {}", s.id),
                _ => suite::harness_error(&s, &t, "stand-in").tap_passed(),
            }
        },
    )
    .await
    .unwrap();
    assert!(finished);
    seen.sort();
    assert_eq!(seen, ["ok", "panics"]);
    let results = writer.finish().unwrap();
    assert_eq!(results.counts.passed, 1);
    assert_eq!(results.counts.failed, 1);
    let panicked = results
        .trials
        .iter()
        .find(|t| t.scenario == "panics")
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
