//! `streamcheck plan`: what each selected trial will do, decided as `run` decides it, without
//! installing or running anything (as `cargo nextest list`). `--json`: one object per trial
//! and line, of the shape docs/plan.md describes.

use super::args::{ExecArgs, SuiteArgs};
use super::setup::Location;
use super::{Context, Verdict};
use streamcheck::error::{Error, Result};
use streamcheck::plan::describe::{self, AsWrittenFor, Described, RunShown, Shown};
use streamcheck::runner::RunOptions;
use streamcheck::suite::Planned;
use streamcheck::text::clip_line;

/// Print what each selected trial will do (command line, environment, stub, client,
/// limits, checks) without running anything.
#[derive(clap::Args)]
pub struct PlanArgs {
    /// Scenario ids, or parts of them (as --filter): a file's id takes each of its cases.
    ids: Vec<String>,
    #[command(flatten)]
    suite: SuiteArgs,
    /// Hold each trial to the expectation this version of the target gets (as `run`).
    #[arg(long, value_name = "VERSION")]
    expect_for: Option<String>,
    /// One JSON object per trial, one per line (docs/plan.md).
    #[arg(long)]
    json: bool,
}

impl PlanArgs {
    pub fn exec(self, loc: &Location) -> Result<Verdict> {
        let mut select = self.suite.select.clone();
        select.filters.extend(self.ids.iter().cloned());
        let ctx = Context::load(loc, &select)?;
        let exec = ExecArgs {
            no_install: true,
            ..self.suite.exec.clone()
        };
        let resolved = exec.resolve(&self.suite.targets.specs(&ctx.setup)?, &ctx.setup)?;
        let opts = RunOptions {
            expect_for: self.expect_for.clone(),
            protocol: exec.protocol(&ctx.setup),
            ..exec.run_options()
        };
        let mut trials = 0;
        for planned in streamcheck::suite::plan_all(&ctx.scenarios, &resolved, &opts) {
            let Planned::Trial { plan, target } = planned else {
                continue;
            };
            let shown = describe::describe(&plan, &target);
            if self.json {
                let line = serde_json::to_string(&shown)
                    .map_err(|e| Error::Failed(format!("cannot write the plan: {e}")))?;
                println!("{line}");
            } else {
                print!("{}", text(&shown));
            }
            trials += 1;
        }
        let unavailable: Vec<_> = resolved.into_iter().filter_map(|t| t.err()).collect();
        Ok(ctx.run_verdict(Verdict::AllGood, &unavailable, trials))
    }
}

/// One trial as a person reads it.
fn text(d: &Described) -> String {
    let id = &d.id;
    let mut out = format!("{} [{}]\n", id.scenario, d.path);
    out += &format!(
        "  target: {} {} ({}), held to {}, printed by {}\n",
        id.target,
        id.version,
        id.dialect.conventions().expect_key(),
        id.held_to,
        id.printed_by
    );
    out += &match &d.decision {
        Shown::Run => "  decision: run\n".to_string(),
        Shown::AsWritten { to } => {
            let to = match to {
                AsWrittenFor::Record => "to record its first expectation",
                AsWrittenFor::Compare => "for comparison",
            };
            format!("  decision: run as written (no expectation), {to}\n")
        }
        Shown::Skip { message, .. } => format!("  decision: skip: {message}\n"),
    };
    if let Some(s) = &d.confirms_skip {
        out += &format!(
            "  confirms a skip: \"{}\" (the run must show: {})\n",
            s.because, s.reason
        );
    }
    for note in &d.notes {
        out += &format!("  note: {note}\n");
    }
    if d.fixtures {
        out += "  fixtures: installed before the trial\n";
    }
    for k in &d.known {
        let finding = k
            .finding
            .as_ref()
            .map_or(String::new(), |f| format!(" (finding {f})"));
        let sometimes = if k.intermittent { ", intermittent" } else { "" };
        let hidden = (k.hidden_by.as_ref())
            .map_or(String::new(), |f| format!(", not stale where {f} shows"));
        out += &format!(
            "  known: {}{finding}{sometimes}{hidden}: {} [{}]\n",
            k.entry, k.reason, k.at
        );
    }
    if !d.known.is_empty() && d.strict_known {
        out += "  known: an entry that matches nothing fails the trial (--strict)\n";
    }
    let total = d.runs.len();
    for r in &d.runs {
        out += &match r.run {
            Some(n) => format!("  run {n} of {total}:\n"),
            None => "  run:\n".to_string(),
        };
        out += &run_text(r);
    }
    out.push('\n');
    out
}

fn run_text(r: &RunShown) -> String {
    let mut out = format!("    command: {}\n    env:\n", r.command.line);
    for (k, v) in &r.command.env {
        out += &format!("      {k}={v}\n");
    }
    let stub = &r.stub;
    let rules: Vec<String> = (stub.builtin_rules.iter()).map(word).collect();
    out += &format!(
        "    stub: {} step(s), {} background rule(s), built-in: {}\n",
        stub.steps.len(),
        stub.background.len(),
        if rules.is_empty() {
            "none".to_string()
        } else {
            rules.join(", ")
        }
    );
    let script = serde_json::to_value(stub).unwrap_or_default();
    for (i, step) in script["steps"].as_array().into_iter().flatten().enumerate() {
        out += &format!(
            "      step {}: {}\n",
            i + 1,
            clip_line(&step.to_string(), 160)
        );
    }
    for rule in script["background"].as_array().into_iter().flatten() {
        out += &format!("      background: {}\n", clip_line(&rule.to_string(), 160));
    }
    match &r.client {
        None => out += "    stdin: closed at once\n",
        Some(c) => {
            let profile = c.profile.as_deref().unwrap_or("none");
            let close = word(&c.close);
            out += &format!("    client: SDK profile {profile}, close stdin: {close}");
            if c.one_first_write {
                out += ", first lines in one write";
            }
            if c.split_utf8_chars {
                out += ", characters split across writes";
            }
            out.push('\n');
            if let Some(init) = &c.initialize {
                out += &format!("      initialize: {}\n", clip_line(&init.to_string(), 160));
            }
            for l in &c.lines {
                out += &format!("      line: {}\n", clip_line(l, 160));
            }
            for l in &c.responders {
                out += &format!("      responder: {}\n", clip_line(l, 160));
            }
        }
    }
    if let Some(s) = &r.signal {
        let signal = word(&s.send);
        out += &format!("    signal: {signal} after {} frame(s)\n", s.after_frames);
    }
    let l = &r.limits;
    let within = l.answer_within_ms.map_or(String::new(), |ms| {
        format!(", control answers within {ms} ms")
    });
    out += &format!(
        "    limits: timeout {} ms, grace {} ms, {} turn(s){within}, journal {} bytes\n",
        l.timeout_ms, l.grace_ms, l.turns, l.journal_max_bytes
    );
    let c = &r.checks;
    let mut what = vec![format!("{} frame(s) ({})", c.frames, word(&c.mode))];
    if let Some(code) = c.exit_code {
        what.push(format!("exit code {code}"));
    }
    if c.hangs_after_result {
        what.push("hangs after its result".into());
    }
    for (on, name) in [
        (c.stderr, "stderr"),
        (c.text, "stdout text"),
        (c.requests, "requests"),
    ] {
        if on {
            what.push(name.into());
        }
    }
    if !c.files.is_empty() {
        what.push(format!("files {}", c.files.join(", ")));
    }
    out += &format!("    checks: {}\n", what.join(", "));
    let names = |list: &[streamcheck::invariants::Invariant]| -> String {
        let v: Vec<String> = (list.iter()).map(word).collect();
        if v.is_empty() {
            "none".into()
        } else {
            v.join(", ")
        }
    };
    out += &format!("      invariants: {}\n", names(&c.invariants));
    if let Some((off, why)) = &c.invariants_off {
        out += &format!("      invariants off: {} ({why})\n", names(off));
    }
    if !c.rules.is_empty() {
        out += &format!("      rules: {}\n", c.rules.join(", "));
    }
    out += &format!("      protocol: {}\n", word(&c.protocol));
    for inventory in &c.against {
        out += &format!("        against {inventory}\n");
    }
    out
}

/// A value's serialized name (`report`, `exact`, `TERM`), or its JSON when it is not a word.
fn word<T: serde::Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(e) => format!("({e})"),
    }
}
