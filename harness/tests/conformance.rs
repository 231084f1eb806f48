//! The scenario catalogue as cargo tests: one trial per scenario and target.
//!
//! `cargo test -p streamcheck --test conformance [FILTER]`. Targets come from
//! `STREAMCHECK_TARGETS` (comma-separated, default `claude-code,caliban,qwen-code`). A
//! target named there is installed first when missing; by default only claude-code is,
//! and the trials of caliban (about 10 minutes to build: `streamcheck install --target
//! caliban`) and qwen-code (`streamcheck install --target qwen-code`) are ignored with
//! the install command until they are installed. Only a CLI that is not installed is
//! ignored: a target whose data files (`targets/<dialect>/*.yaml`) do not load, or whose
//! install fails, fails every one of its trials. Every trial is also held to its
//! dialect's protocol inventory under `--protocol strict`: the catalogue on the pin, on
//! caliban 0.15.0 and on Qwen Code 0.24.4 has no protocol finding, and a trial of a
//! dialect without an inventory fails (it would not be checked).

mod common;

use libtest_mimic::{Arguments, Failed, Trial};
use std::sync::{Arc, OnceLock};
use streamcheck::catalogue;
use streamcheck::install::{self, Cause, Project, Target, TargetSpec};
use streamcheck::plan::{Decision, Planner};
use streamcheck::runner::{self, RunOptions, Status};
use streamcheck::scenario::Scenario;

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a tokio runtime")
    })
}

fn main() {
    let args = Arguments::from_args();
    let project = Project::at(common::repo());
    // caliban takes about 10 minutes to build and Qwen Code brings its own Node: by
    // default they run only if already installed; naming them in STREAMCHECK_TARGETS
    // installs them.
    let asked = std::env::var("STREAMCHECK_TARGETS").ok();
    let names = asked
        .clone()
        .unwrap_or_else(|| "claude-code,caliban,qwen-code".into());
    let (scenarios, errors) = catalogue::load_all(&project.scenarios_dir());
    let mut trials: Vec<Trial> = errors
        .into_iter()
        .map(|e| {
            Trial::test(format!("scenario-file::{}", e.path.display()), move || {
                Err(Failed::from(e.to_string()))
            })
        })
        .collect();
    // Listing must not install anything.
    let install = !args.list;
    for name in names.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let spec = match TargetSpec::parse(name) {
            Ok(s) => s,
            Err(e) => {
                trials.push(Trial::test(format!("target::{name}"), move || {
                    Err(Failed::from(e))
                }));
                continue;
            }
        };
        let allow_install = install
            && (spec.dialect == streamcheck::dialect::Dialect::ClaudeCode || asked.is_some());
        let resolved = install::resolve(&spec, &project, allow_install)
            .map(|t| (Planner::for_target(&t), Arc::new(t)));
        match &resolved {
            Err(e) if e.cause == Cause::NotInstalled => {
                eprintln!("{}: its trials are ignored: {e}", spec.name)
            }
            // A data file that does not load, a failed install: every trial fails with it,
            // so that no filter can select its trials and pass.
            Err(e) => eprintln!("{}: its trials fail: {e}", spec.name),
            Ok(_) => {}
        }
        for s in scenarios.iter().filter(|s| {
            s.file
                .expect
                .contains_key(spec.dialect.conventions().expect_key())
        }) {
            let trial_name = format!("{}::{}", spec.name, s.id);
            trials.push(match &resolved {
                Err(e) if e.cause == Cause::NotInstalled => {
                    Trial::test(trial_name, || Ok(())).with_ignored_flag(true)
                }
                Err(e) => {
                    let why = format!("target {e}");
                    Trial::test(trial_name, move || Err(Failed::from(why)))
                }
                Ok((planner, t)) => trial_of(trial_name, s.clone(), planner, t.clone()),
            });
        }
    }
    libtest_mimic::run(&args, trials).exit();
}

/// One scenario on one resolved target as a test, ignored when the target cannot run it (a
/// `skip:` is not such a case: its run confirms the reason, or fails).
fn trial_of(name: String, s: Scenario, planner: &Planner, t: Arc<Target>) -> Trial {
    // Strict on the protocol too: on the pin a frame kind, key, type or name the
    // inventory (targets/<dialect>/protocol.yaml) does not hold fails, so a stale
    // inventory fails CI; a dialect without one fails here.
    let opts = RunOptions {
        strict_known: true,
        protocol: streamcheck::protocol::Policy::Strict,
        ..RunOptions::default()
    };
    let plan = planner.plan(&s, &t, &opts);
    let ignored = matches!(plan.decision, Decision::Skip(_));
    Trial::test(name, move || {
        let trial = runtime().block_on(runner::execute_plan(&plan, &t));
        if let Some(no) = (trial.protocol.iter()).find(|f| {
            matches!(
                f.what,
                streamcheck::protocol::check::What::Inventory { from: None, .. }
            )
        }) {
            return Err(Failed::from(format!(
                "{no}: build one with `streamcheck protocol build`"
            )));
        }
        match trial.status {
            Status::Passed | Status::Skipped(_) | Status::Known(_) => Ok(()),
            Status::Unavailable(why) => Err(Failed::from(why)),
            Status::Failed => Err(Failed::from(
                trial
                    .divergences
                    .iter()
                    .map(|d| d.to_string())
                    .collect::<Vec<_>>()
                    .join("\n"),
            )),
        }
    })
    .with_ignored_flag(ignored)
}
