//! The generic messages of each divergence kind: every shape the harness builds a message
//! in (runner/check.rs, matcher.rs, invariants.rs, sdk_contract.rs, ...), filled with
//! values no real divergence names (entry 97, frame 98, a request named `zz-generic`, the
//! key `$.zz_generic`). A known entry's `message` that matches one of them would match any
//! divergence of its kind: it names nothing, and is refused.
//!
//! A slot that says what the expectation asked (the timeout's seconds, the exit code or
//! the number of turns it expected, the run of a multi-run scenario) is not a symptom:
//! those are tried with every plausible value, so a pattern naming only them is refused
//! too.

use crate::divergence::Kind;
use crate::protocol::check::{Change, Direction, Finding, What};

/// The symptom slot's stand-ins.
const G: &str = "zz-generic";
const KEY: &str = "$.zz_generic";
const FOUND: &str = r#"expected "zz-generic", found "zz-generic-other""#;
/// The request a loop repeats (`repeated_request` in runner/check.rs), by stand-ins.
const LOOP: &str = r#"97 of the 98 kept requests ask zz-generic again after a zz-generic message "zz-generic" (the last with 99 message(s))"#;
/// What the harness says of where a killed CLI stopped (see `Output::stopped_at`).
const STOPPED: [&str; 2] = [
    "its last frame was frame 97 (zz_generic), after 98 scripted API request(s)",
    "it printed no frame, after 97 scripted API request(s)",
];

/// Where a killed CLI stopped, each maybe followed by the client's requests that got no
/// answer (`unanswered_requests` in runner/check.rs) or the request a loop repeats.
fn stopped() -> Vec<String> {
    let tails = [
        String::new(),
        format!("; no control_response to the client's {G} request `{G}`"),
        format!("; no control_response to the client's {G} request"),
        format!("; no control_response to the client's {G} request (request_id \"{G}\")"),
        format!("; a request loop (99 past the journal): {LOOP}"),
    ];
    STOPPED
        .iter()
        .flat_map(|at| tails.iter().map(move |t| format!("{at}{t}")))
        .collect()
}

/// How a message pattern names too little.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Broad {
    /// It matches this message, which names nothing specific.
    Any(String),
    /// It matches these two messages, which differ only in one numbered slot: it names a
    /// set of entries or frames (`entry [0-3]`), not one.
    Several(String, String),
}

impl std::fmt::Display for Broad {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Broad::Any(m) => write!(f, "matches any divergence of its kind (such as \"{m}\")"),
            Broad::Several(a, b) => write!(
                f,
                "names several entries or frames, not one (it matches \"{a}\" and \"{b}\")"
            ),
        }
    }
}

/// Whether `pattern` matches a message of `kind` that names nothing specific, or several
/// values of one numbered slot, and which.
pub(crate) fn catch_all(kind: Kind, pattern: &regex::Regex) -> Option<Broad> {
    let runs = (1..=4).flat_map(|total| (1..=total).map(move |n| format!("run {n} of {total}: ")));
    let prefixes = std::iter::once(String::new()).chain(runs);
    let found = prefixes
        .flat_map(|prefix| messages(kind).map(move |m| format!("{prefix}{m}")))
        .find(|m| pattern.is_match(m));
    (found.map(Broad::Any)).or_else(|| several_in_one_slot(kind, pattern))
}

/// The values a numbered slot (an entry, a frame, a stdout line, a request) is tried
/// with: a pattern matching some of them but not all names a set, not one; one that
/// matches all of them leaves the slot open, which is fine when another part of the
/// message is named.
const SLOT_VALUES: std::ops::RangeInclusive<usize> = 0..=40;

/// A generic message of a kind whose numbers say where (which entry, frame, line or
/// request), in which `pattern` matches several values of one numbered slot but not all
/// of them, with two of those values.
fn several_in_one_slot(kind: Kind, pattern: &regex::Regex) -> Option<Broad> {
    use Kind::*;
    if !matches!(
        kind,
        MissingFrame | UnexpectedFrame | FieldMismatch | Order | NonJson | Request | Invariant
    ) {
        return None;
    }
    let slot = regex::Regex::new(r"\b(97|98|99)\b").expect("a valid regex");
    for message in messages(kind) {
        let at: Vec<(usize, usize)> = slot
            .find_iter(&message)
            .map(|m| (m.start(), m.end()))
            .collect();
        // Three or more numbers are counts of a request loop, not where: left open.
        if at.is_empty() || at.len() > 2 {
            continue;
        }
        // The message's slots filled with `values`, in order.
        let fill = |values: &[usize]| {
            let mut out = String::new();
            let mut from = 0;
            for ((start, end), v) in at.iter().zip(values) {
                out.push_str(&message[from..*start]);
                out.push_str(&v.to_string());
                from = *end;
            }
            out + &message[from..]
        };
        // A filling the pattern matches, its slots tried from a few values each.
        let few = [0, 1, 2, 3, 4, 5, 97];
        let Some(base) = (0..few.len().pow(at.len() as u32))
            .map(|n| {
                (0..at.len())
                    .map(|i| few[n / few.len().pow(i as u32) % few.len()])
                    .collect::<Vec<_>>()
            })
            .find(|values| pattern.is_match(&fill(values)))
        else {
            continue;
        };
        for i in 0..at.len() {
            let matched: Vec<String> = SLOT_VALUES
                .map(|v| {
                    let mut values = base.clone();
                    values[i] = v;
                    fill(&values)
                })
                .filter(|m| pattern.is_match(m))
                .collect();
            if matched.len() > 1 && matched.len() < SLOT_VALUES.count() {
                return Some(Broad::Several(matched[0].clone(), matched[1].clone()));
            }
        }
    }
    None
}

/// Every generic message of `kind` (a few hundred for the kinds with a context slot).
pub(crate) fn messages(kind: Kind) -> Box<dyn Iterator<Item = String>> {
    let fixed = |v: Vec<String>| -> Box<dyn Iterator<Item = String>> { Box::new(v.into_iter()) };
    let counts = 0..=20usize;
    match kind {
        Kind::MissingFrame => {
            let closest = format!("; the closest is frame 98 (stdout line 99), which differs at {KEY}: {FOUND}");
            let mut v = vec![
                "the any_order group (entry 97) needs 98 frames, only 99 remain".to_string(),
                "expected entry 97 is missing before frame 98 (which matches entry 98)".into(),
                "expected entry 97 never came: output ended after frame 98".into(),
                "expected entry 97 never came: the CLI printed no frame".into(),
                "expected entry 97 matches no frame from frame 98 on".into(),
                "the any_order group (entry 97) was not complete when the output ended".into(),
            ];
            v.extend(v.clone().into_iter().map(|m| format!("{m}{closest}")));
            Box::new(v.into_iter().chain(
                counts.map(|t| format!("expected {t} turn(s) (result frames), the CLI printed 97")),
            ))
        }
        Kind::UnexpectedFrame => fixed(vec![
            "frame 97 matches a pattern listed under `absent` (absent[98]: {\"zz_generic\":true})".into(),
            "97 frame(s) after the last expected one, starting with frame 98".into(),
            "frame 97 is not expected here (expected entry 98 matches the frame after it)".into(),
            "frame 97 matches no pattern of the any_order group (entry 98)".into(),
        ]),
        Kind::FieldMismatch => fixed(vec![
            format!("frame 97 vs expected entry 98: {FOUND}"),
            "frame 97 vs expected entry 98: missing".into(),
            format!("frame 97 in the any_order group (entry 98) conflicts with a capture of another member: {FOUND}"),
        ]),
        Kind::Order => fixed(vec![
            "frames 97..98 are not an interleaving of the any_order group (entry 99): some pattern of the group matches none of them in an allowed order".into(),
        ]),
        Kind::ExitCode => Box::new(
            (0..=255)
                .flat_map(|want| {
                    [
                        format!("expected exit code {want}, got 999"),
                        format!("expected exit code {want}, got killed by signal 99"),
                    ]
                })
                .chain([format!("the CLI exited by itself ({G}) where the expectation pins a hang after its last result (`hangs: after_result`): drop `hangs` and write its exit")]),
        ),
        Kind::Stderr => fixed(vec![
            format!("stderr: {G}"),
            format!("stderr: expected it to match /{G}/"),
        ]),
        Kind::Text => fixed(vec![
            format!("stdout text: {G}"),
            format!("stdout text: expected it to match /{G}/"),
        ]),
        Kind::Timeout => {
            let stopped = stopped();
            // The seconds a trial may be given (the default and every `timeout:` a scenario
            // or --timeout is likely to set): not a symptom. Not 1..=900, which made loading
            // a list take seconds in a debug build.
            let seconds = (1..=120).chain([150, 180, 240, 300, 600, 900]);
            Box::new(seconds.flat_map(move |secs| {
                (stopped.clone().into_iter())
                    .map(move |at| format!("the CLI did not finish within {secs}s and was killed: {at}"))
            }))
        }
        Kind::Hang => fixed(
            stopped()
                .iter()
                .flat_map(|at| {
                    [
                        format!("the CLI exited but its stdout stayed open (a child process kept it); the process group was killed: {at}"),
                        format!("a control request the client sent got no answer within the expectation's `answer_within`; the CLI was killed: {at}"),
                    ]
                })
                .chain([
                    "the CLI printed its last result but did not exit (killed after the grace period): its last frame was frame 97 (zz_generic)".into(),
                ])
                .collect(),
        ),
        Kind::NonJson => fixed(vec![
            format!("stdout line 97: {G}: \"{G}\""),
            "… and 97 more bad stdout lines".into(),
        ]),
        Kind::Request => Box::new(
            counts
                .flat_map(|n| {
                    [
                        format!("expected {n} scripted request(s), the CLI sent 97"),
                        format!("expected {n} background request(s), the CLI sent 97"),
                    ]
                })
                .chain([
                    "request 97 was never sent (98 in all)".into(),
                    format!("request 97: {FOUND}"),
                    "request 97: missing".into(),
                    format!("request 97 does not match requests.all[98]: {FOUND}"),
                    "no request matches requests.some[97]".into(),
                    "the CLI sent 97 request(s) after the first 98 (99 MiB of requests, all the harness keeps): a request loop? Request assertions saw only the first 98".into(),
                    format!("the CLI sent 97 request(s) after the first 98 (99 MiB of requests, all the harness keeps): a request loop? Request assertions saw only the first 98; {LOOP}"),
                ]),
        ),
        Kind::UnscriptedRequest => fixed(
            [
                format!("stub-api: request #97 matches no step: step 98 expects {G}"),
                "stub-api: no scripted response for request #97 (script has 98 steps, all used)".into(),
                format!("stub-api: request #97 has a body that is not JSON ({G})"),
            ]
            .map(|why| format!("POST /{G} was not scripted: {why}"))
            .to_vec(),
        ),
        Kind::Invariant => Box::new(
            (1..=20usize)
                .flat_map(|t| {
                    [
                        format!("the output ends with frame 97 (zz_generic), not a result: {t} turn(s) expected to end in a result, 98 did"),
                        format!("{t} turn(s) expected to end in a result, the CLI printed 97 result frame(s)"),
                    ]
                })
                .chain((0..=1).flat_map(|want| {
                    [true, false].map(|e| format!("the CLI exited with 999, but its last result has is_error: {e} (expected exit code {want})"))
                }))
                .chain([
                    "the first frame is not system/init but zz_generic".into(),
                    "frame 97 (zz_generic) follows the result of a turn without starting a new turn".into(),
                    format!("session_id changes: \"{G}\" since frame 97, \"{G}-other\" in frame 98"),
                    format!("frame 97 has a tool_result for \"{G}\", which no earlier tool_use has"),
                    format!("frame 97 answers the tool call \"{G}\" again: 98 tool_result(s) for 99 call(s)"),
                    format!("the turn ends in a successful result (frame 97) with tool call(s) no tool_result answered: \"{G}\""),
                    format!("the successful result of frame 97 has an empty `result`, but the last assistant frame said {G}"),
                    format!("the client's zz_generic control_request \"{G}\" (stdin line 97) got no control_response before the CLI ended"),
                    "frame 97 holds U+FFFD (a replacement character) that nothing in the scenario sent: a multi-byte character was cut and decoded in pieces".into(),
                    format!("session_id \"{G}\" is not the one the CLI sent to the API (\"{G}-other\" in metadata.user_id)"),
                    format!("frame 97 is one rule `{G}` lets through but does not have its shape: {G}"),
                ]),
        ),
        Kind::Workspace => fixed(
            [G, "exists", "does not exist"]
                .map(|why| format!("workspace file {G}: {why}"))
                .to_vec(),
        ),
        Kind::Spawn => fixed(vec![format!("cannot start {G}: {G}"), G.into()]),
        Kind::KnownDivergencePasses => fixed(vec![format!(
            "{G} lists `{G}` as a known divergence, but the trial does not show it now: remove the entry"
        )]),
        Kind::HarnessError => fixed(vec![format!(
            "harness error (a bug in streamcheck, not in the CLI): {G}"
        )]),
        Kind::Fixture | Kind::ClientScript => fixed(vec![G.into()]),
        Kind::UnansweredControlRequest => fixed(vec![format!(
            "the CLI sent a zz_generic control_request (request_id \"{G}\") that no `client.respond` rule answers"
        )]),
        Kind::SdkContract => fixed(vec![
            format!("stdout line 97 is not a JSON object ({G}): {G}"),
            format!("the client's zz_generic request {G} got no control_response: {G} waits for it (Python: \"Control request timeout: zz_generic\" after 60 s; TypeScript: hangs)"),
            format!("the client's zz_generic request {G} got 97 control_responses: one per request, the SDKs drop the rest"),
            format!("frame 97 lacks {KEY}: {G}"),
            format!("frame 97: assistant message.content is not a list: {G}"),
            format!("exit code 999 without an error result before it: Python SDK raises ProcessError, TypeScript SDK \"Claude Code process exited with code 999\" (an error result first makes it \"returned an error result\")"),
        ]),
        Kind::SkipNoLongerHolds => fixed(vec![format!(
            "the expectation skips this release for \"{G}\" ({G}), but {G}: write what it does instead"
        )]),
        Kind::Protocol => {
            let whats = [
                What::Kind { kind: G.into() },
                What::Key { kind: G.into(), path: KEY.into(), types: vec![G.into()] },
                What::Type { kind: G.into(), path: KEY.into(), types: vec![G.into()], known: vec![G.into()] },
                What::Name { list: G.into(), name: G.into(), by: Some(G.into()) },
                What::Inventory { file: G.into(), from: Some(G.into()) },
            ];
            let findings = [Change::New, Change::Gone, Change::Unchecked].into_iter().flat_map(
                move |change| {
                    let whats = whats.clone();
                    [Direction::Printed, Direction::Request].into_iter().flat_map(move |direction| {
                        whats.clone().into_iter().map(move |what| {
                            Finding { direction, ..Finding::new(change, what) }.to_string()
                        })
                    })
                },
            );
            Box::new(findings.chain([
                format!("the protocol inventory does not load: {G}"),
                format!("the request inventory does not load: {G}"),
            ]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind, so each has its generic messages checked.
    const KINDS: [Kind; 23] = [
        Kind::MissingFrame,
        Kind::UnexpectedFrame,
        Kind::FieldMismatch,
        Kind::Order,
        Kind::ExitCode,
        Kind::Stderr,
        Kind::Text,
        Kind::Timeout,
        Kind::Hang,
        Kind::NonJson,
        Kind::Request,
        Kind::UnscriptedRequest,
        Kind::Invariant,
        Kind::Workspace,
        Kind::Spawn,
        Kind::KnownDivergencePasses,
        Kind::HarnessError,
        Kind::Fixture,
        Kind::UnansweredControlRequest,
        Kind::ClientScript,
        Kind::SdkContract,
        Kind::SkipNoLongerHolds,
        Kind::Protocol,
    ];

    fn re(s: &str) -> regex::Regex {
        regex::Regex::new(s).unwrap()
    }

    #[test]
    fn a_pattern_that_matches_anything_is_a_catch_all_for_every_kind() {
        for kind in KINDS {
            for any in [".*", "", "^", "(?s).+"] {
                assert!(catch_all(kind, &re(any)).is_some(), "{kind}: /{any}/");
            }
        }
    }

    /// Per kind: a pattern that names only the shape of its messages (refused) and one
    /// that names this divergence (accepted), as the real messages read.
    #[test]
    fn each_kind_refuses_its_shape_and_accepts_its_symptom() {
        let cases: [(Kind, &str, &str); 23] = [
            (
                Kind::MissingFrame,
                r"^expected entry \d+ matches no frame",
                r"^expected entry 3 matches no frame",
            ),
            (
                Kind::UnexpectedFrame,
                "listed under `absent`",
                "^frame 4 matches a pattern listed under `absent`",
            ),
            (
                Kind::FieldMismatch,
                r"vs expected entry \d+",
                r#"expected "success", found "error_during_execution""#,
            ),
            (
                Kind::Order,
                "not an interleaving",
                r"^frames 3\.\.5 are not",
            ),
            (
                Kind::ExitCode,
                "^expected exit code 0",
                "^expected exit code 0, got 1$",
            ),
            (Kind::Stderr, "^stderr: ", "no session named"),
            (Kind::Text, "^stdout text", "expected it to match /hello/"),
            (
                Kind::Timeout,
                "^the CLI did not finish within 60s",
                r"killed: its last frame was frame 5 \(assistant\)",
            ),
            (
                Kind::Hang,
                "got no answer within|did not exit|printed its last result",
                r"did not exit \(killed after the grace period\): its last frame was frame 6 \(result/success\)",
            ),
            (
                Kind::NonJson,
                "^stdout line",
                "a JSON array where a JSON object was expected",
            ),
            (
                Kind::Request,
                r"^expected 0 background request\(s\)",
                r"expected 0 background request\(s\), the CLI sent 1$",
            ),
            (
                Kind::UnscriptedRequest,
                "was not scripted",
                "tool_result_is_error: false",
            ),
            (
                Kind::Invariant,
                "got no control_response",
                "the client's mcp_call control_request",
            ),
            (Kind::Workspace, "exists$", "workspace file marker: exists"),
            (Kind::Spawn, "cannot start", "No such file or directory"),
            (
                Kind::KnownDivergencePasses,
                "as a known divergence",
                "lists `s/a missing frame`",
            ),
            (Kind::HarnessError, "^harness error", "panicked at 'boom'"),
            (Kind::Fixture, "(?s).", "mcp server exited with 3"),
            (
                Kind::UnansweredControlRequest,
                "control_request",
                "a can_use_tool control_request",
            ),
            (Kind::ClientScript, ".", r"\$initialize names nothing"),
            (
                Kind::SdkContract,
                "got no control_response",
                r"^the client's interrupt request",
            ),
            (
                Kind::SkipNoLongerHolds,
                "write what it does instead",
                "--json-schema",
            ),
            (
                Kind::Protocol,
                "^gone key",
                r"gone key `result\.\$\.errors`",
            ),
        ];
        for (kind, shape, symptom) in cases {
            assert!(
                catch_all(kind, &re(shape)).is_some(),
                "{kind}: /{shape}/ names only the shape"
            );
            assert_eq!(
                catch_all(kind, &re(symptom)),
                None,
                "{kind}: /{symptom}/ names a symptom"
            );
        }
        let kinds: std::collections::BTreeSet<Kind> = cases.iter().map(|c| c.0).collect();
        assert_eq!(kinds.len(), KINDS.len(), "a case per kind");
    }

    #[test]
    fn a_pattern_naming_several_entries_or_frames_names_none() {
        for (kind, pattern) in [
            (
                Kind::MissingFrame,
                "^expected entry [0-3] matches no frame from frame 0 on$",
            ),
            (Kind::MissingFrame, "^expected entry 2"),
            (Kind::UnexpectedFrame, r"^frame (4|5) is not expected here"),
        ] {
            assert!(
                catch_all(kind, &re(pattern)).is_some(),
                "{kind}: /{pattern}/"
            );
        }
        for (kind, pattern) in [
            (
                Kind::MissingFrame,
                r"^expected entry 3 matches no frame from frame \d+ on$",
            ),
            (
                Kind::MissingFrame,
                "^expected entry 2 matches no frame from frame 0 on$",
            ),
        ] {
            assert_eq!(catch_all(kind, &re(pattern)), None, "{kind}: /{pattern}/");
        }
    }

    #[test]
    fn the_context_of_a_message_is_not_a_symptom() {
        let cases = [
            (
                Kind::Timeout,
                "^the CLI did not finish within 45s and was killed",
            ),
            (Kind::ExitCode, "^expected exit code 143"),
            (Kind::Invariant, r"^2 turn\(s\) expected to end in a result"),
            (Kind::FieldMismatch, "^run 2 of 2: "),
        ];
        for (kind, pattern) in cases {
            assert!(
                catch_all(kind, &re(pattern)).is_some(),
                "{kind}: /{pattern}/"
            );
        }
    }
}
