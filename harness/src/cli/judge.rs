//! `streamcheck verdict`: one run of the catalogue on a release, classified against the
//! scenarios and the protocol inventory (verdict.md, verdict.json), with the pending
//! version blocks and inventory entries a maintainer would accept. (Not `verdict.rs`:
//! the layers test would read every `verdict` in `cli/mod.rs` as this module.)

use super::args::SuiteArgs;
use super::setup::Location;
use super::{term, Context, Verdict};
use std::path::PathBuf;
use std::time::Instant;
use streamcheck::commands::drift::pending::open_one;
use streamcheck::commands::protocol::{build::Runs, verdict};
use streamcheck::error::{Error, Result};
use streamcheck::protocol::{inventory, requests, Inventory, Policy};
use streamcheck::report::{write_atomic, ReportWriter};
use streamcheck::runner::{RunOptions, Status};
use streamcheck::suite;

#[derive(clap::Args)]
pub struct VerdictArgs {
    #[command(flatten)]
    suite: SuiteArgs,
    /// Where verdict.md, verdict.json, the pending protocol.yaml and the run (run/) go
    /// (default reports/verdict/<timestamp>/).
    #[arg(long)]
    report_dir: Option<PathBuf>,
}

impl VerdictArgs {
    pub fn exec(self, loc: &Location) -> Result<Verdict> {
        let started = Instant::now();
        let ctx = Context::load(loc, &self.suite.select)?;
        let specs = self.suite.targets.specs(&ctx.setup)?;
        let [spec] = specs.as_slice() else {
            return Err(Error::Usage(format!(
                "verdict judges one release: name one --target (got {})",
                specs.len()
            )));
        };
        let resolved = self
            .suite
            .exec
            .resolve(std::slice::from_ref(spec), &ctx.setup)?;
        let target = match &resolved[0] {
            Ok(t) => t.clone(),
            Err(e) => return Err(Error::Failed(format!("target {e}"))),
        };
        let dir = self
            .report_dir
            .unwrap_or_else(|| ctx.default_report_dir("verdict"));
        let run_dir = dir.join("run");
        let mut progress = term::Progress::new(ctx.scenarios.len());
        let writer = ReportWriter::create(&run_dir, suite::target_infos(&resolved), vec![])
            .map_err(|e| Error::io(&run_dir, e))?;
        let run = super::args::runtime()?.block_on(suite::run_and_report_as(
            writer,
            ctx.scenarios.clone(),
            &resolved,
            ctx.jobs(&self.suite.exec),
            RunOptions {
                protocol: Policy::Report,
                ..self.suite.exec.run_options()
            },
            |t, _| progress.trial(t),
        ))?;
        progress.finish();
        if !run.end.finished() {
            return Err(Error::Failed("interrupted: no verdict written".into()));
        }
        let trials = &run.results.trials;
        let key = target.dialect.conventions().expect_key();
        let root = &ctx.project.root;
        let inv_path = root.join(inventory::file_of(key));
        let before = match inv_path.exists() {
            true => Some(Inventory::load(&inv_path)?),
            false => None,
        };
        let at = semver::Version::parse(target.expect_version()).ok();
        let inventory_at = match (&before, &at) {
            (Some(inv), Some(v)) => (inv.view(v).into_iter().flatten())
                .map(|r| r.to_string())
                .collect(),
            _ => Vec::new(),
        };
        let mut v = verdict::classify(&target.name, &target.version, inventory_at, trials);
        for t in trials.iter().filter(|t| t.status == Status::Failed) {
            let pinned_failure = t
                .divergences
                .iter()
                .any(|d| d.kind != streamcheck::divergence::Kind::Protocol);
            let Some(scenario) = ctx.scenarios.iter().find(|s| s.id == t.key.scenario) else {
                continue;
            };
            if pinned_failure {
                let mut t = t.clone();
                t.divergences
                    .retain(|d| d.kind != streamcheck::divergence::Kind::Protocol);
                v.pending_blocks.extend(open_one(
                    &ctx.project,
                    &ctx.setup.pending_place(),
                    scenario,
                    &t,
                )?);
            }
        }
        let runs = Runs::read(&[&run_dir])?;
        if runs.by.contains_key(key) {
            let after = runs.inventory(key, before.clone());
            v.pending_inventory = match &before {
                Some(b) => verdict::Verdict::inventory_lines(b, &after),
                None => vec![format!(
                    "(no inventory yet: all of {})",
                    inventory::file_of(key).display()
                )],
            };
            let pending = dir.join("protocol.yaml");
            write_atomic(&pending, after.to_yaml().as_bytes())
                .map_err(|e| Error::io(&pending, e))?;
            let requests_path = root.join(requests::file_of(key));
            let sent_before = match requests_path.exists() {
                true => Some(Inventory::load(&requests_path)?),
                false => None,
            };
            let sent = runs.request_inventory(key, sent_before.clone());
            v.pending_requests = match &sent_before {
                Some(b) => verdict::Verdict::inventory_lines(b, &sent),
                None => vec![format!(
                    "(no request inventory yet: all of {})",
                    requests::file_of(key).display()
                )],
            };
            let pending = dir.join("requests.yaml");
            write_atomic(&pending, requests::to_yaml(&sent).as_bytes())
                .map_err(|e| Error::io(&pending, e))?;
        }
        v.duration_ms = started.elapsed().as_millis() as u64;
        let command = super::provenance::command_line();
        let md = v.to_md(&command);
        let json = serde_json::to_string_pretty(&v).expect("JSON") + "\n";
        for (name, text) in [("verdict.md", &md), ("verdict.json", &json)] {
            let path = dir.join(name);
            write_atomic(&path, text.as_bytes()).map_err(|e| Error::io(&path, e))?;
        }
        print!("{md}");
        println!("\nverdict: {}", dir.join("verdict.md").display());
        let own = Verdict::divergence_if(v.gate_fails());
        Ok(ctx.run_verdict(own, &[], trials.len()))
    }
}
