//! A decided trial as `streamcheck plan` shows it: everything the plan holds, with the
//! sandbox's paths as placeholders (`$WORKSPACE`, `$HOME`, `$TMPDIR`, `$STUB_URL`), as one
//! value of a stable shape ([`FORMAT_VERSION`], documented in docs/plan.md).

use super::{checks, Decision, SkipReason, TrialId, TrialPlan, JOURNAL_BUDGET};
use crate::client::script::{Answer, Line, Responder, ResponderAction};
use crate::client::session::ClosePolicy;
use crate::install::Target;
use crate::invariants::Invariant;
use crate::matcher::Mode;
use crate::scenario::{Hang, SignalAt};
use serde::Serialize;
use serde_json::Value;

/// The version of the shape below; raised when a field changes meaning or goes.
pub const FORMAT_VERSION: u32 = 1;

/// One trial, decided.
#[derive(Debug, Serialize)]
pub struct Described {
    pub format_version: u32,
    pub id: TrialId,
    /// The scenario file (with `[case]` for a case).
    pub path: String,
    pub decision: Shown,
    /// A `skip:` expectation: the one run that confirms its reason.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confirms_skip: Option<SkipShown>,
    pub notes: Vec<String>,
    /// The project's fixtures are installed before the trial (`$FIXTURES`).
    pub fixtures: bool,
    /// The known-divergence entries about this trial on its target.
    pub known: Vec<KnownShown>,
    /// A known entry that matches nothing fails the trial (`--strict`).
    pub strict_known: bool,
    /// The CLI runs, in order (none when the trial is skipped).
    pub runs: Vec<RunShown>,
}

/// Whether the trial runs.
#[derive(Debug, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Shown {
    Run,
    /// With an empty expectation: the scenario has none for the dialect.
    AsWritten {
        to: AsWrittenFor,
    },
    Skip {
        reason: SkipReason,
        message: String,
    },
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AsWrittenFor {
    Record,
    Compare,
}

#[derive(Debug, Serialize)]
pub struct SkipShown {
    pub because: String,
    /// What the run must show for the skip to hold.
    pub reason: String,
}

#[derive(Debug, Serialize)]
pub struct KnownShown {
    /// The entry in a sentence.
    pub entry: String,
    pub reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finding: Option<String>,
    pub intermittent: bool,
    /// The finding whose showing keeps this entry from being stale.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hidden_by: Option<String>,
    /// `file:line` of the entry.
    pub at: String,
}

/// One CLI run.
#[derive(Debug, Serialize)]
pub struct RunShown {
    /// In a multi-run scenario: its number (1-based).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run: Option<usize>,
    pub command: CommandShown,
    /// The stub's script in the scenario format (`steps`, `background`, `builtin_rules`).
    pub stub: stub_api::Script,
    /// The scripted client on stdin; `None`: stdin is closed at once.
    pub client: Option<ClientShown>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal: Option<SignalAt>,
    pub limits: LimitsShown,
    pub checks: ChecksShown,
}

/// The process, started in `$WORKSPACE` with exactly this environment.
#[derive(Debug, Serialize)]
pub struct CommandShown {
    pub program: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    /// As a person would type it (the variables a report shows).
    pub line: String,
}

#[derive(Debug, Serialize)]
pub struct ClientShown {
    /// The SDK it plays (`name` of targets/sdk profiles), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// The initialize request it sends first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initialize: Option<Value>,
    /// Each conversation line, in a sentence.
    pub lines: Vec<String>,
    /// Each rule for the CLI's control requests, in a sentence.
    pub responders: Vec<String>,
    pub close: ClosePolicy,
    pub one_first_write: bool,
    pub split_utf8_chars: bool,
}

#[derive(Debug, Serialize)]
pub struct LimitsShown {
    pub timeout_ms: u128,
    pub grace_ms: u128,
    pub turns: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer_within_ms: Option<u128>,
    /// Requests the stub keeps (bytes); past it, counted and dropped.
    pub journal_max_bytes: usize,
}

#[derive(Debug, Serialize)]
pub struct ChecksShown {
    pub mode: Mode,
    /// Expected frames (an `any_order` group counts as one).
    pub frames: usize,
    pub ignore: usize,
    pub absent: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    pub hangs_after_result: bool,
    pub stderr: bool,
    pub text: bool,
    pub requests: bool,
    /// Workspace files checked after the run.
    pub files: Vec<String>,
    pub invariants: Vec<Invariant>,
    /// Invariants the expectation turns off, and why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub invariants_off: Option<(Vec<Invariant>, String)>,
    /// The release-wide rules applied to the expectation.
    pub rules: Vec<String>,
    pub protocol: crate::protocol::check::Policy,
    /// The inventories the output is checked against, read when the trial was planned.
    pub against: Vec<String>,
}

/// `plan` on `target`, as shown.
pub fn describe(plan: &TrialPlan, target: &Target) -> Described {
    let decision = match &plan.decision {
        Decision::Run => Shown::Run,
        Decision::AsWritten(super::AsWritten::ToCompare) => Shown::AsWritten {
            to: AsWrittenFor::Compare,
        },
        Decision::AsWritten(_) => Shown::AsWritten {
            to: AsWrittenFor::Record,
        },
        Decision::Skip(why) => Shown::Skip {
            reason: why.clone(),
            message: why.to_string(),
        },
    };
    let multi = !plan.scenario.file.runs.is_empty();
    let runs = (plan.runs.iter().enumerate())
        .map(|(i, run)| {
            let inv = match &run.launch {
                Some(launch) => launch.shown(),
                None => target.launch(&run.scenario, &run.expect).shown(),
            };
            RunShown {
                run: multi.then_some(i + 1),
                command: CommandShown {
                    program: inv.program.display().to_string(),
                    line: inv.display(),
                    args: inv.args,
                    env: inv.env,
                },
                stub: super::stub::script(&run.scenario, target.dialect, &target.data.tools),
                client: run.client().map(|c| ClientShown {
                    profile: c.profile.map(|p| p.name.clone()),
                    initialize: c.initialize,
                    lines: c.lines.iter().map(line).collect(),
                    responders: c.responders.iter().map(responder).collect(),
                    close: c.close,
                    one_first_write: c.one_first_write,
                    split_utf8_chars: c.split_utf8_chars,
                }),
                signal: run.scenario.file.signal.clone(),
                limits: LimitsShown {
                    timeout_ms: run.limits.timeout.as_millis(),
                    grace_ms: run.limits.grace.as_millis(),
                    turns: run.limits.turns,
                    answer_within_ms: run.limits.answer_within.map(|d| d.as_millis()),
                    journal_max_bytes: JOURNAL_BUDGET,
                },
                checks: checks(run, plan),
            }
        })
        .collect();
    let ran = crate::known::Ran {
        name: &target.name,
        dialect: target.dialect.conventions().expect_key(),
        version: &target.version,
        printed: &[],
    };
    let list = &plan.known.list;
    let known = (list.for_trial(&plan.id.scenario, &ran).into_iter())
        .map(|e| KnownShown {
            entry: e.describe(),
            reason: e.reason.clone(),
            finding: e.finding.as_ref().map(|f| f.as_str().to_string()),
            intermittent: e.intermittent,
            hidden_by: e.hidden_by.as_ref().map(|f| f.as_str().to_string()),
            at: format!("{}:{}", list.file, e.line),
        })
        .collect();
    Described {
        format_version: FORMAT_VERSION,
        id: plan.id.clone(),
        path: plan.scenario.display_path(),
        decision,
        confirms_skip: (plan.expect.skip.as_ref()).map(|s| SkipShown {
            because: s.because.clone(),
            reason: s.reason.to_string(),
        }),
        notes: plan.notes.clone(),
        fixtures: plan.fixtures.is_some(),
        known,
        strict_known: plan.known.strict,
        runs,
    }
}

fn checks(run: &super::RunPlan, plan: &TrialPlan) -> ChecksShown {
    let e = &run.expect;
    let format = run.scenario.file.output_format;
    ChecksShown {
        mode: e.mode,
        frames: e.frames.len(),
        ignore: e.ignore.len(),
        absent: e.absent.len(),
        exit_code: e.exit_code,
        hangs_after_result: e.hangs == Some(Hang::AfterResult),
        stderr: e.stderr.is_some(),
        text: e.text.is_some(),
        requests: e.requests.is_some(),
        files: e.files.keys().cloned().collect(),
        invariants: checks::enabled_invariants(e, format),
        invariants_off: (e.invariants.as_ref()).map(|o| (o.skip.clone(), o.reason.clone())),
        rules: (plan.expect.rules.iter()).map(|r| r.name.clone()).collect(),
        protocol: run.protocol.policy,
        against: (run.protocol.inventories.iter()).map(against).collect(),
    }
}

/// An inventory a run is checked against: its file and the releases it was built from,
/// or that there is none, or why it does not load.
fn against(a: &crate::protocol::against::Against) -> String {
    let file = a.file.display();
    match &a.loaded {
        Ok(Some(inv)) => match (inv.releases.first(), inv.releases.last()) {
            (Some(first), Some(last)) => format!("{file} ({first} to {last})"),
            _ => format!("{file} (no release)"),
        },
        Ok(None) => format!("{file} (none: the output is not checked)"),
        Err(e) => format!("{file} (does not load: {e})"),
    }
}

fn json(v: &Value) -> String {
    v.to_string()
}

/// One conversation line in a sentence.
fn line(l: &Line) -> String {
    match l {
        Line::User(v) => format!("user {}", json(v)),
        Line::Send(v) => format!("send {}", json(v)),
        Line::Raw(s) => format!("raw {}", json(&Value::String(s.clone()))),
        Line::Request { request, name } => {
            let named = name.as_ref().map_or(String::new(), |n| format!(" as {n}"));
            format!("request {}{named}", json(request))
        }
        Line::Wait {
            pattern,
            count,
            name,
        } => {
            let named = name.as_ref().map_or(String::new(), |n| format!(" as {n}"));
            format!(
                "wait for {count} frame(s) {}{named}",
                json(pattern.0.source())
            )
        }
        Line::AfterResults(n) => format!("after {n} result(s)"),
        Line::Reply { to, answer: a } => format!("reply to {to}: {}", answer(a)),
        Line::Close => "close stdin".to_string(),
    }
}

fn answer(a: &Answer) -> String {
    match a {
        Answer::Success(None) => "success".to_string(),
        Answer::Success(Some(v)) => format!("success {}", json(v)),
        Answer::Error(e) => format!("error {}", json(&Value::String(e.clone()))),
    }
}

/// One control-request rule in a sentence.
fn responder(r: &Responder) -> String {
    let action = match &r.action {
        ResponderAction::Answer(a) => answer(a),
        ResponderAction::Silent => "no answer".to_string(),
        ResponderAction::CloseStdin => "close stdin".to_string(),
        ResponderAction::Mcp(_) => "the in-process MCP server answers".to_string(),
    };
    let times = r
        .times
        .map_or(String::new(), |n| format!(" (at most {n} time(s))"));
    format!("on {}: {action}{times}", json(r.on.0.source()))
}
