//! The planner decides once: a finished trial planned again from its identity alone gets
//! the very runs its first plan made, for every trial of the catalogue.

use super::*;
use crate::install::supported::Versions;
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn catalogue() -> Vec<Scenario> {
    let dir = workspace().join("scenarios");
    let found = crate::catalogue::discover(&dir);
    assert!(found.errors.is_empty(), "{:?}", found.errors);
    // A file with `cases:` is one scenario per case.
    (found.paths.iter())
        .flat_map(|p| crate::scenario::cases::load(p, &dir).unwrap_or_else(|e| panic!("{e}")))
        .collect()
}

/// `dialect` at its pinned release (or caliban's), with every feature it declares, in this checkout.
fn target(dialect: Dialect, project: &Project) -> Target {
    let key = dialect.conventions().expect_key();
    let data = project.data(dialect).unwrap();
    Target {
        name: key.into(),
        dialect,
        program: PathBuf::from("cli"),
        lead_args: Vec::new(),
        // caliban and Qwen Code keep no versions.yaml; any release serves, both plans see it.
        version: Versions::load(project, key).map_or_else(|_| "0.15.0".into(), |v| v.pinned),
        features: crate::install::features(dialect, &data.tools),
        known: Default::default(),
        data,
        env: Vec::new(),
        conforms_to: None,
        project: project.clone(),
        declared: Default::default(),
    }
}

fn same(a: &RunPlan, b: &RunPlan) -> bool {
    format!("{:?}", (&a.scenario.file, &a.expect, &a.limits))
        == format!("{:?}", (&b.scenario.file, &b.expect, &b.limits))
}

#[test]
fn replan_is_plan_for_every_catalogue_trial() {
    let project = Project::at(workspace());
    let planner = Planner::new(&project).unwrap();
    let scenarios = catalogue();
    let opts = RunOptions::default();
    let mut compared = 0;
    for &dialect in Dialect::ALL {
        let target = target(dialect, &project);
        for scenario in &scenarios {
            let plan = planner.plan(scenario, &target, &opts);
            if !matches!(plan.decision, Decision::Run) {
                continue;
            }
            for (i, run) in plan.runs.iter().enumerate() {
                let number = (!scenario.file.runs.is_empty()).then_some(i + 1);
                let id = TrialId {
                    run: number,
                    ..plan.id.clone()
                };
                let again = planner.replan(scenario, &id).unwrap();
                let again = again.run(number).unwrap();
                assert!(
                    same(run, again),
                    "{} on {}: replan differs",
                    scenario.id,
                    target.name
                );
                compared += 1;
            }
        }
    }
    // The pinned Claude Code alone runs ~290 trials: a planner that skipped everything
    // would compare nothing and pass.
    assert!(compared > 400, "only {compared} runs compared");
}

#[test]
fn a_release_held_to_another_gets_that_release_s_block() {
    let yaml = r#"
description: x
prompt: hi
expect:
  claude-code:
    exit_code: 0
  claude-code@<2.0.0:
    exit_code: 3
"#;
    let scenario =
        Scenario::parse(yaml, Path::new("scenarios/x.yaml"), Path::new("scenarios")).unwrap();
    let project = Project::at(workspace());
    let planner = Planner::new(&project).unwrap();
    let mut target = target(Dialect::ClaudeCode, &project);
    target.version = "2.1.0".into();
    let plan = planner.plan(&scenario, &target, &RunOptions::default());
    assert_eq!(plan.expect.exit_code, Some(0));
    let old = planner
        .replan(&scenario, &plan.id.held_to("1.0.0"))
        .unwrap();
    assert_eq!(old.expect.exit_code, Some(3));
    let none = Scenario::parse(
        "description: x\nprompt: hi\nexpect:\n  caliban: {}\n",
        Path::new("scenarios/y.yaml"),
        Path::new("scenarios"),
    )
    .unwrap();
    let skipped = planner.plan(&none, &target, &RunOptions::default());
    assert!(matches!(
        skipped.decision,
        Decision::Skip(SkipReason::NoExpectation(Dialect::ClaudeCode))
    ));
    assert!(matches!(
        planner.replan(&none, &plan.id),
        Err(PlanError::NoExpectation(Dialect::ClaudeCode))
    ));
}

/// A saved trial gives back the id its plan had, so `audit` judges it by the rules `run`
/// did: a `run --expect-for` trial by the held-to release's let-through rules alone, a
/// probe's by the printing release's too, a wrapper's by the release it conforms to.
#[test]
fn a_saved_trial_gives_back_its_plan_s_id_under_every_let_through() {
    use crate::runner::trial::Trial;
    use crate::store::saved::SavedTrial;
    let scenario = Scenario::parse(
        "description: x\nprompt: hi\nexpect:\n  claude-code:\n    exit_code: 0\n",
        Path::new("scenarios/x.yaml"),
        Path::new("scenarios"),
    )
    .unwrap();
    let project = Project::at(workspace());
    let planner = Planner::new(&project).unwrap();
    let mut release = target(Dialect::ClaudeCode, &project);
    release.version = "2.1.300".into();
    let mut wrapper = release.clone();
    (wrapper.name, wrapper.version) = ("my-wrapper".into(), "0.3.0".into());
    wrapper.conforms_to = Some("2.1.250".into());
    let mut compared = Vec::new();
    for target in [&release, &wrapper] {
        for expect_for in [None, Some("2.1.200")] {
            for let_through in [LetThrough::HeldTo, LetThrough::AlsoPrinting] {
                let opts = RunOptions {
                    expect_for: expect_for.map(str::to_string),
                    let_through,
                    ..RunOptions::default()
                };
                let plan = planner.plan(&scenario, target, &opts);
                let back = Trial::from_saved(&SavedTrial::of(&Trial::planned(&plan, target)));
                assert_eq!(
                    back.id().unwrap(),
                    plan.id,
                    "{} with --expect-for {expect_for:?}, {let_through:?}",
                    target.name
                );
                compared.push(plan.id.printed_by);
            }
        }
    }
    assert!(
        compared.iter().any(|p| p == "2.1.200"),
        "no plan judged output by the held-to release's rules: {compared:?}"
    );
}
