//! A finished trial against its expectation: one function per part of the expectation
//! (how the process ended, invariants, frames, turns, exit code, stderr and stdout text,
//! requests, workspace files). Needs nothing but the trial, its plan and the workspace it
//! left: a finished trial is checked again against `Planner::replan`'s plan.

use super::trial::Trial;
use crate::divergence::{Divergence, Kind};
use crate::expectation::rules;
use crate::invariants::{self, Invariant};
use crate::matcher::{self, FrameRules};
use crate::pattern::{Captures, Vars};
use crate::plan::{PlanError, Planner, RunPlan};
use crate::printed::exit::Termination;
use crate::scenario::{FileExpect, Hang, OutputFormat, RequestsExpect, Scenario, TargetExpect};
use std::path::Path;
use std::time::Duration;
use stub_api::{Answer, JournalEntry};

/// Every divergence of `trial` from `expect`, the one that explains the rest first.
pub fn expectation(
    scenario: &Scenario,
    expect: &TargetExpect,
    trial: &Trial,
    timeout: Duration,
) -> Vec<Divergence> {
    let mut caps = Captures::new();
    let format = scenario.file.output_format;
    let mut out: Vec<Divergence> = termination(trial, timeout)
        .into_iter()
        .chain(pinned_hang(expect, trial))
        .collect();
    if format != OutputFormat::Text {
        let enabled = crate::plan::checks::enabled_invariants(expect, format);
        let hung_after_result = trial.exit.termination == Termination::HungAfterResult;
        out.extend(invariants::check(
            &trial.output,
            &enabled,
            hung_after_result,
        ));
        out.extend(run_invariants(expect, trial, &enabled));
        if enabled.contains(&Invariant::NoReplacementCharacter) {
            out.extend(invariants::no_replacement_character(
                &trial.output,
                sends_replacement_character(scenario, trial),
            ));
        }
        if let Some(log) = &trial.client {
            out.extend(log.divergences());
            if log.sdk.is_some() && enabled.contains(&Invariant::SdkContract) {
                out.extend(crate::sdk_contract::check(
                    &trial.output,
                    trial.exit.code,
                    log,
                ));
            }
            // Client requests are named: expectations `{$ref: initialize}` their ids.
            caps.extend(log.captures());
        }
        out.extend(frames(expect, trial, &mut caps));
        out.extend(rule_shapes(expect, trial));
        if format == OutputFormat::StreamJson {
            out.extend(turns(scenario, expect, trial, &enabled));
        }
    }
    out.extend(exit_code(expect, trial));
    out.extend(texts(expect, trial));
    out.extend(requests(expect, &trial.journal, &trial.vars, &mut caps));
    out.extend(unscripted(&trial.journal));
    out.extend(dropped_requests(trial));
    out.extend(files(expect, &trial.vars));
    most_telling_first(&mut out, trial.exit.signal.is_some());
    out
}

/// The run of its plan a finished trial's output is checked against again, held to
/// `held_to`'s expectation: [`Planner::replan`] from the trial's identity, the workspace
/// files aside (they went with the sandbox).
pub fn replanned(
    planner: &Planner,
    scenario: &Scenario,
    trial: &Trial,
    held_to: &str,
) -> Result<RunPlan, PlanError> {
    if trial.output.raw_truncated {
        return Err(PlanError::Truncated);
    }
    let mut run = replanned_with_files(planner, scenario, trial, held_to)?;
    run.expect.files = Default::default();
    Ok(run)
}

/// [`replanned`], the workspace files `held_to`'s expectation pins kept.
pub fn replanned_with_files(
    planner: &Planner,
    scenario: &Scenario,
    trial: &Trial,
    held_to: &str,
) -> Result<RunPlan, PlanError> {
    let plan = planner.replan(scenario, &trial.id()?.held_to(held_to))?;
    let mut run = plan.run(trial.run)?.clone();
    // A multi-run scenario's skip is its block's, not its first run's.
    if run.expect.skip.is_none() {
        run.expect.skip = plan.expect.skip;
    }
    Ok(run)
}

/// Every divergence of `trial` from what `run` planned for it.
pub fn run(run: &RunPlan, trial: &Trial) -> Vec<Divergence> {
    expectation(&run.scenario, &run.expect, trial, run.limits.timeout)
}

/// What stopped the process explains everything after it: say it first.
fn most_telling_first(divergences: &mut [Divergence], signalled: bool) {
    divergences.sort_by_key(|d| match d.kind {
        Kind::Spawn => 0,
        Kind::Timeout => 1,
        Kind::Hang => 2,
        Kind::ExitCode if signalled => 3,
        _ => 4,
    });
}

/// The harness had to kill the CLI. (A kill after its last result is the
/// `exits_after_result` invariant's to report.)
fn termination(trial: &Trial, timeout: Duration) -> Option<Divergence> {
    let at = || {
        let scripted = trial.journal.iter().filter(|e| is_scripted(e)).count();
        format!(
            "{}, after {scripted} scripted API request(s){}{}",
            trial.output.stopped_at(),
            unanswered_requests(trial),
            match trial.requests_dropped {
                0 => String::new(),
                n => format!(
                    "; a request loop ({n} past the journal): {}",
                    repeated_request(&trial.journal)
                ),
            }
        )
    };
    match trial.exit.termination {
        Termination::Timeout => Some(Divergence::new(
            Kind::Timeout,
            format!(
                "the CLI did not finish within {}s and was killed: {}",
                timeout.as_secs(),
                at()
            ),
        )),
        Termination::StdoutHeldOpen => Some(Divergence::new(
            Kind::Hang,
            format!("the CLI exited but its stdout stayed open (a child process kept it); the process group was killed: {}", at()),
        )),
        Termination::Unanswered => Some(Divergence::new(
            Kind::Hang,
            format!("a control request the client sent got no answer within the expectation's `answer_within`; the CLI was killed: {}", at()),
        )),
        Termination::Exited | Termination::HungAfterResult => None,
    }
}

/// The client's control requests that no control_response answered, for the message of
/// a kill: `; no control_response to the client's set_model request \`bad-model\``
/// (each by its subtype and its `as:` name; a `raw:` line by its request_id), or nothing
/// when every one was answered.
fn unanswered_requests(trial: &Trial) -> String {
    use serde_json::Value;
    let Some(log) = &trial.client else {
        return String::new();
    };
    let id_of = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let answered: std::collections::HashSet<String> = (trial.output.frames.iter())
        .filter(|f| f.value.get("type").and_then(Value::as_str) == Some("control_response"))
        .filter_map(|f| f.value.pointer("/response/request_id").map(id_of))
        .collect();
    let mut open = Vec::new();
    for (_, line) in &log.written {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if v.get("type").and_then(Value::as_str) != Some("control_request") {
            continue;
        }
        let Some(id) = v.get("request_id").map(id_of) else {
            continue;
        };
        if answered.contains(&id) {
            continue;
        }
        let subtype = v
            .pointer("/request/subtype")
            .and_then(Value::as_str)
            .unwrap_or("?");
        open.push(match log.requests.iter().find(|r| r.id == id) {
            Some(r) => match &r.name {
                Some(name) => format!("{subtype} request `{name}`"),
                None => format!("{subtype} request"),
            },
            None => format!("{subtype} request (request_id {id:?})"),
        });
    }
    if open.is_empty() {
        return String::new();
    }
    format!("; no control_response to the client's {}", open.join(", "))
}

/// A hang the expectation pins (`hangs: after_result`) that did not happen: the CLI
/// exited by itself. (A timeout or a held stdout is reported as that.)
fn pinned_hang(expect: &TargetExpect, trial: &Trial) -> Option<Divergence> {
    let Some(Hang::AfterResult) = expect.hangs else {
        return None;
    };
    (trial.exit.termination == Termination::Exited).then(|| {
        Divergence::new(
            Kind::ExitCode,
            format!("the CLI exited by itself ({}) where the expectation pins a hang after its last result (`hangs: after_result`): drop `hangs` and write its exit", trial.exit),
        )
    })
}

/// Whether U+FFFD is in what the scenario itself sends: the model's script, the prompt,
/// the arguments or what the client wrote.
fn sends_replacement_character(scenario: &Scenario, trial: &Trial) -> bool {
    let has = |s: &str| s.contains('\u{FFFD}');
    let file = &scenario.file;
    serde_json::to_string(&file.stub).is_ok_and(|s| has(&s))
        || file
            .runs
            .iter()
            .any(|r| serde_json::to_string(&r.stub).is_ok_and(|s| has(&s)))
        || file.prompt.as_deref().is_some_and(has)
        || file.args.iter().any(|a| has(a))
        || trial
            .client
            .as_ref()
            .is_some_and(|log| log.written.iter().any(|(_, w)| has(w)))
}

/// The invariants that need more than the frames: the exit code and the requests.
fn run_invariants(expect: &TargetExpect, trial: &Trial, enabled: &[Invariant]) -> Vec<Divergence> {
    let mut out = Vec::new();
    // An exit code the expectation already rejects is reported once, as that.
    if enabled.contains(&Invariant::ExitCodeMatchesResult) && exit_code(expect, trial).is_none() {
        out.extend(invariants::exit_code_matches_result(
            &trial.output,
            &trial.exit,
        ));
    }
    if enabled.contains(&Invariant::SessionMatchesRequest) {
        out.extend(invariants::session_matches_request(
            &trial.output,
            &trial.journal,
        ));
    }
    if let Some(log) = &trial.client {
        // Playing an SDK, the SDK contract reports these, naming the SDK.
        let sdk_says_so = log.sdk.is_some() && enabled.contains(&Invariant::SdkContract);
        if enabled.contains(&Invariant::ClientRequestsAnswered) && !sdk_says_so {
            out.extend(invariants::client_requests_answered(
                &trial.output,
                &log.written,
            ));
        }
    }
    out
}

fn frames(expect: &TargetExpect, trial: &Trial, caps: &mut Captures) -> Vec<Divergence> {
    let ignore: Vec<_> = expect.ignore.iter().map(|p| p.0.clone()).collect();
    let absent: Vec<_> = expect.absent.iter().map(|p| p.0.clone()).collect();
    let expected: Vec<_> = expect.frames.iter().map(|e| e.0.clone()).collect();
    let rules = FrameRules {
        expected: &expected,
        ignore: &ignore,
        absent: &absent,
        mode: expect.mode,
    };
    matcher::match_frames(&rules, &trial.output.frames, &trial.vars, caps)
}

/// Frames a release-wide rule lets through that do not have the rule's shape.
fn rule_shapes(expect: &TargetExpect, trial: &Trial) -> Vec<Divergence> {
    expect
        .rules
        .iter()
        .flat_map(|r| rules::check_shapes(r, &trial.output.frames, &trial.vars).0)
        .collect()
}

/// The release-wide rules that held in `trial`: each let something through (a frame it
/// selects, a request path it replaced) and no frame it selects breaks its shape.
pub fn rules_held(expect: &TargetExpect, trial: &Trial) -> Vec<String> {
    expect
        .rules
        .iter()
        .filter(|r| {
            let (broken, used) = rules::check_shapes(r, &trial.output.frames, &trial.vars);
            used && broken.is_empty()
        })
        .map(|r| r.name.clone())
        .collect()
}

/// Every turn ends in a result (the invariant), or, where a scenario turned that off, as
/// many results as its `turns:` says. A CLI the harness had to stop is reported as that.
fn turns(
    scenario: &Scenario,
    expect: &TargetExpect,
    trial: &Trial,
    enabled: &[Invariant],
) -> Option<Divergence> {
    if matches!(
        trial.exit.termination,
        Termination::Timeout | Termination::Unanswered
    ) {
        return None;
    }
    if enabled.contains(&Invariant::EveryTurnEndsInResult) {
        let turns = scenario.turns(expect);
        if turns == 0 && expect.turns.is_none() {
            // No user message was sent and the scenario says nothing of turns: an error
            // result for the missing input, or none, are both answers.
            return None;
        }
        return invariants::every_turn_ends_in_result(&trial.output, turns);
    }
    let turns = expect.turns?;
    let results = trial.output.frames.iter().filter(|f| f.is_result()).count();
    (results != turns).then(|| {
        Divergence::new(
            Kind::MissingFrame,
            format!("expected {turns} turn(s) (result frames), the CLI printed {results}"),
        )
        .expected(turns.into())
        .actual(results.into())
    })
}

fn exit_code(expect: &TargetExpect, trial: &Trial) -> Option<Divergence> {
    let want = expect.exit_code?;
    let exit = &trial.exit;
    if exit.code == Some(want) || exit.termination.by_harness() {
        return None;
    }
    Some(
        Divergence::new(
            Kind::ExitCode,
            format!("expected exit code {want}, got {exit}"),
        )
        .expected(want.into())
        .actual(exit.code.map_or(exit.to_string().into(), Into::into)),
    )
}

/// The `stderr` and `text` (stdout as text) rules.
fn texts(expect: &TargetExpect, trial: &Trial) -> Vec<Divergence> {
    let mut out = Vec::new();
    if let Some(rule) = &expect.stderr {
        if let Err(why) = rule.check(&trial.stderr.text()) {
            out.push(Divergence::new(Kind::Stderr, format!("stderr: {why}")));
        }
    }
    if let Some(rule) = &expect.text {
        if let Err(why) = rule.check(&trial.output.text()) {
            out.push(Divergence::new(Kind::Text, format!("stdout text: {why}")));
        }
    }
    out
}

/// A request the scenario's script answers (or should have): a Messages API call that
/// no built-in rule took.
pub fn is_scripted(entry: &JournalEntry) -> bool {
    matches!(
        entry.answer,
        Answer::Step { .. } | Answer::Unscripted { .. }
    ) && entry.path.ends_with("/v1/messages")
}

fn requests(
    expect: &TargetExpect,
    journal: &[JournalEntry],
    vars: &Vars,
    caps: &mut Captures,
) -> Vec<Divergence> {
    let Some(req) = &expect.requests else {
        return Vec::new();
    };
    let scripted: Vec<&JournalEntry> = journal.iter().filter(|e| is_scripted(e)).collect();
    let background = journal
        .iter()
        .filter(|e| matches!(e.answer, Answer::Background { .. }))
        .count();
    let mut out = request_counts(req, scripted.len(), background);
    out.extend(request_bodies(req, &scripted, vars, caps));
    out
}

fn request_counts(req: &RequestsExpect, scripted: usize, background: usize) -> Vec<Divergence> {
    let mut out = Vec::new();
    if let Some(n) = req.count.filter(|n| *n != scripted) {
        out.push(
            Divergence::new(
                Kind::Request,
                format!("expected {n} scripted request(s), the CLI sent {scripted}"),
            )
            .expected(n.into())
            .actual(scripted.into()),
        );
    }
    if let Some(n) = req.background.filter(|n| *n != background) {
        out.push(Divergence::new(
            Kind::Request,
            format!("expected {n} background request(s), the CLI sent {background}"),
        ));
    }
    out
}

/// `bodies` (by index), `all` (every request) and `some` (at least one request).
fn request_bodies(
    req: &RequestsExpect,
    scripted: &[&JournalEntry],
    vars: &Vars,
    caps: &mut Captures,
) -> Vec<Divergence> {
    let div = |msg: String| Divergence::new(Kind::Request, msg);
    let mut out = Vec::new();
    for (idx, pat) in &req.bodies {
        let Some(e) = scripted.get(*idx) else {
            out.push(div(format!(
                "request {idx} was never sent ({} in all)",
                scripted.len()
            )));
            continue;
        };
        if let Err(m) = pat.0.check(e.body(), vars, caps) {
            out.push(
                div(format!("request {idx}: {}", m.reason))
                    .at_path(m.path)
                    .expected(m.expected)
                    .actual(m.actual.unwrap_or(serde_json::Value::Null)),
            );
        }
    }
    for (i, pat) in req.all.iter().enumerate() {
        let first_miss = scripted
            .iter()
            .enumerate()
            .find_map(|(idx, e)| (pat.0.check(e.body(), vars, caps)).err().map(|m| (idx, m)));
        if let Some((idx, m)) = first_miss {
            out.push(
                div(format!(
                    "request {idx} does not match requests.all[{i}]: {}",
                    m.reason
                ))
                .at_path(m.path),
            );
        }
    }
    for (i, pat) in req.some.iter().enumerate() {
        if !scripted
            .iter()
            .any(|e| pat.0.is_match(e.body(), vars, caps))
        {
            out.push(
                div(format!("no request matches requests.some[{i}]"))
                    .expected(pat.0.source().clone()),
            );
        }
    }
    out
}

/// A CLI that sent more than the journal keeps is in a request loop (or close to one).
fn dropped_requests(trial: &Trial) -> Option<Divergence> {
    (trial.requests_dropped > 0).then(|| {
        Divergence::new(
            Kind::Request,
            format!(
                "the CLI sent {} request(s) after the first {} ({} MiB of requests, all the harness keeps): a request loop? Request assertions saw only the first {}{}",
                trial.requests_dropped,
                trial.journal.len(),
                super::trial::JOURNAL_BUDGET / (1024 * 1024),
                trial.journal.len(),
                match repeated_request(&trial.journal) {
                    r if r.is_empty() => r,
                    r => format!("; {r}"),
                }
            ),
        )
    })
}

/// The request a loop repeats, for its message: of the kept requests, the most frequent
/// (model, last message) pair, named by the model, the last message's role and its first
/// text (or block type), and how many messages the last of them carried:
/// `160 of the 161 kept requests ask claude-sonnet-4-6 again after a user message "Stop
/// hook feedback: ..." (the last with 321 message(s))`. Empty when no request repeats.
fn repeated_request(journal: &[JournalEntry]) -> String {
    use serde_json::Value;
    let shape = |e: &JournalEntry| -> (String, String, String, usize) {
        let body = e.body();
        let model = (e.model.clone())
            .or_else(|| body["model"].as_str().map(str::to_string))
            .unwrap_or_else(|| format!("{} {}", e.method, e.path));
        let messages = body["messages"].as_array().map_or(&[][..], Vec::as_slice);
        let last = messages.last().unwrap_or(&Value::Null);
        let role = last["role"].as_str().unwrap_or("no").to_string();
        let text = match &last["content"] {
            Value::String(t) => t.clone(),
            Value::Array(blocks) => (blocks.iter())
                .find_map(|b| b["text"].as_str().map(str::to_string))
                .or_else(|| {
                    blocks
                        .first()
                        .and_then(|b| b["type"].as_str())
                        .map(|t| format!("[{t}]"))
                })
                .unwrap_or_default(),
            _ => String::new(),
        };
        let text: String = text.chars().take(80).collect();
        (model, role, text, messages.len())
    };
    let mut counts: std::collections::HashMap<(String, String, String), (usize, usize)> =
        std::collections::HashMap::new();
    let mut order = Vec::new();
    for e in journal {
        let (model, role, text, n) = shape(e);
        let key = (model, role, text);
        let c = counts.entry(key.clone()).or_insert_with(|| {
            order.push(key.clone());
            (0, 0)
        });
        c.0 += 1;
        c.1 = n;
    }
    let Some(key) = order.iter().max_by_key(|k| {
        (
            counts[*k].0,
            std::cmp::Reverse(order.iter().position(|o| o == *k)),
        )
    }) else {
        return String::new();
    };
    let (count, messages) = counts[key];
    if count < 2 {
        return String::new();
    }
    let (model, role, text) = key;
    format!(
        "{count} of the {} kept requests ask {model} again after a {role} message {text:?} (the last with {messages} message(s))",
        journal.len()
    )
}

fn unscripted(journal: &[JournalEntry]) -> Vec<Divergence> {
    journal
        .iter()
        .filter_map(|entry| match &entry.answer {
            Answer::Unscripted { message } => Some(Divergence::new(
                Kind::UnscriptedRequest,
                format!(
                    "{} {} was not scripted: {message}",
                    entry.method, entry.path
                ),
            )),
            _ => None,
        })
        .collect()
}

/// Files in the workspace after the run.
fn files(expect: &TargetExpect, vars: &Vars) -> Vec<Divergence> {
    let mut out = Vec::new();
    for (name, want) in &expect.files {
        let content = std::fs::read(Path::new(&vars.workspace).join(name)).ok();
        let problem = match (want, &content) {
            (FileExpect::Exists(true), None) => Some("does not exist".to_string()),
            (FileExpect::Exists(false), Some(_)) => Some("exists".to_string()),
            (FileExpect::Text(_), None) => Some("does not exist".to_string()),
            (FileExpect::Text(rule), Some(bytes)) => {
                (rule.check(&String::from_utf8_lossy(bytes)).err()).map(|m| m.to_string())
            }
            _ => None,
        };
        if let Some(p) = problem {
            out.push(Divergence::new(
                Kind::Workspace,
                format!("workspace file {name}: {p}"),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_past_the_journal_budget_are_a_divergence_naming_how_many() {
        let mut t = Trial::blank("s", "claude-code", "2.1.74");
        assert!(dropped_requests(&t).is_none());
        t.requests_dropped = 609;
        let d = dropped_requests(&t).expect("a divergence");
        assert_eq!(d.kind, Kind::Request);
        assert!(
            d.message.contains("609 request(s) after the first 0"),
            "{}",
            d.message
        );
    }

    fn request(seq: u64, body: serde_json::Value) -> JournalEntry {
        let answer = Answer::Background { rule: "any".into() };
        let model = body["model"].as_str().map(str::to_string);
        let (method, path) = ("POST".to_string(), "/v1/messages".to_string());
        let raw = body.to_string();
        JournalEntry::new(
            seq,
            method,
            path,
            None,
            Default::default(),
            raw,
            model,
            0,
            answer,
            200,
        )
    }

    #[test]
    fn a_request_loop_names_the_request_it_repeats() {
        let mut t = Trial::blank("s", "claude-code", "2.1.74");
        let msg = |n: usize, text: &str| {
            let mut messages =
                vec![serde_json::json!({"role": "assistant", "content": "ok"}); n - 1];
            messages.push(
                serde_json::json!({"role": "user", "content": [{"type": "text", "text": text}]}),
            );
            serde_json::json!({"model": "m-1", "messages": messages})
        };
        t.journal.push(request(0, msg(1, "go")));
        for i in 1..4 {
            t.journal.push(request(
                i,
                msg(1 + 2 * i as usize, "Stop hook feedback:\nagain"),
            ));
        }
        t.requests_dropped = 9;
        let d = dropped_requests(&t).expect("a divergence");
        let want = r#"; 3 of the 4 kept requests ask m-1 again after a user message "Stop hook feedback:\nagain" (the last with 7 message(s))"#;
        assert!(d.message.ends_with(want), "{}", d.message);
        t.exit.termination = Termination::Timeout;
        let d = termination(&t, Duration::from_secs(30)).expect("a timeout");
        assert!(
            d.message
                .contains("; a request loop (9 past the journal): 3 of the 4"),
            "{}",
            d.message
        );
    }

    #[test]
    fn a_kill_names_the_client_requests_left_unanswered() {
        use crate::client::session::{ClientLog, SentRequest};
        let mut t = Trial::blank("s", "claude-code", "2.1.197");
        let sent = |name: Option<&str>, id: &str, subtype: &str| SentRequest {
            name: name.map(str::to_string),
            id: id.into(),
            subtype: subtype.into(),
        };
        let line = |id: &str, subtype: &str| {
            (0, serde_json::json!({"type": "control_request", "request_id": id, "request": {"subtype": subtype}}).to_string())
        };
        t.client = Some(ClientLog {
            requests: vec![
                sent(Some("initialize"), "r1", "initialize"),
                sent(Some("bad"), "r2", "set_model"),
                sent(None, "r3", "mcp_call"),
            ],
            written: vec![
                line("r1", "initialize"),
                line("r2", "set_model"),
                line("r3", "mcp_call"),
                line("init-2", "initialize"),
            ],
            ..ClientLog::default()
        });
        t.output = crate::printed::output::Output::parse(
            br#"{"type":"control_response","response":{"subtype":"success","request_id":"r1"}}
"#,
        );
        t.exit.termination = Termination::Unanswered;
        let d = termination(&t, Duration::from_secs(30)).expect("a hang");
        assert!(
            d.message.ends_with(
                r#"; no control_response to the client's set_model request `bad`, mcp_call request, initialize request (request_id "init-2")"#
            ),
            "{}",
            d.message
        );
    }
}
