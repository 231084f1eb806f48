//! Matches the frames a CLI printed against a scenario's expected frame sequence.

use crate::divergence::{Divergence, Kind};
use crate::pattern::{Captures, Pattern, Vars};
use crate::runner::output::Frame;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

/// One entry of an expected frame sequence.
#[derive(Debug, Clone)]
pub enum Expected {
    Frame(Pattern),
    /// Runs of frames that may interleave in any order; each run keeps its own order.
    AnyOrder(Vec<Vec<Pattern>>),
}

impl Expected {
    /// The entry as the scenario wrote it.
    pub fn source(&self) -> serde_json::Value {
        match self {
            Expected::Frame(p) => p.source().clone(),
            Expected::AnyOrder(runs) => group_source(runs),
        }
    }

    fn len(&self) -> usize {
        match self {
            Expected::Frame(_) => 1,
            Expected::AnyOrder(runs) => runs.iter().map(Vec::len).sum(),
        }
    }
}

#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Every frame not ignored must match the next expected entry.
    #[default]
    Exact,
    /// Expected entries must appear in order; other frames may come between them.
    Subsequence,
}

pub struct FrameRules<'a> {
    pub expected: &'a [Expected],
    pub ignore: &'a [Pattern],
    pub absent: &'a [Pattern],
    pub mode: Mode,
}

/// Above this many explored states an any-order group of multi-frame runs gives up
/// searching and reports an order divergence instead of going exponential.
const SEARCH_BUDGET: usize = 50_000;

/// Returns the first frame-sequence divergence (later ones are ambiguous once
/// alignment is lost) plus every frame matching an `absent` pattern.
pub fn match_frames(
    rules: &FrameRules,
    frames: &[Frame],
    vars: &Vars,
    caps: &mut Captures,
) -> Vec<Divergence> {
    let kept: Vec<&Frame> = frames
        .iter()
        .filter(|f| {
            !rules
                .ignore
                .iter()
                .any(|p| p.is_match(&f.value, vars, caps))
        })
        .collect();
    let mut out = Vec::new();
    let sequence = match rules.mode {
        Mode::Exact => match_exact(rules.expected, &kept, vars, caps),
        Mode::Subsequence => match_subsequence(rules.expected, &kept, vars, caps),
    };
    out.extend(sequence);
    for frame in frames {
        for p in rules.absent {
            if p.is_match(&frame.value, vars, caps) {
                out.push(
                    Divergence::new(
                        Kind::UnexpectedFrame,
                        format!(
                            "frame {} matches a pattern listed under `absent`",
                            frame.index
                        ),
                    )
                    .at_frame(frame.index, frame.line)
                    .expected(serde_json::json!({ "absent": p.source() }))
                    .actual(frame.value.clone()),
                );
            }
        }
    }
    out
}

fn frame_div(kind: Kind, msg: String, f: &Frame) -> Divergence {
    Divergence::new(kind, msg)
        .at_frame(f.index, f.line)
        .actual(f.value.clone())
}

fn match_exact(
    expected: &[Expected],
    frames: &[&Frame],
    vars: &Vars,
    caps: &mut Captures,
) -> Option<Divergence> {
    let mut i = 0;
    for (e_idx, entry) in expected.iter().enumerate() {
        match entry {
            Expected::Frame(p) => {
                let Some(frame) = frames.get(i) else {
                    return Some(missing(p, e_idx, frames.last().copied()));
                };
                if let Err(m) = p.check(&frame.value, vars, caps) {
                    // Tell an extra frame and a skipped one apart from a wrong field.
                    if frames
                        .get(i + 1)
                        .is_some_and(|next| p.is_match(&next.value, vars, caps))
                    {
                        return Some(
                            frame_div(
                                Kind::UnexpectedFrame,
                                format!(
                                    "frame {} is not expected here (expected entry {e_idx} matches the frame after it)",
                                    frame.index
                                ),
                                frame,
                            )
                            .expected(p.source().clone()),
                        );
                    }
                    if let Some(Expected::Frame(next)) = expected.get(e_idx + 1) {
                        if next.is_match(&frame.value, vars, caps) {
                            return Some(
                                frame_div(
                                    Kind::MissingFrame,
                                    format!(
                                        "expected entry {e_idx} is missing before frame {} (which matches entry {})",
                                        frame.index,
                                        e_idx + 1
                                    ),
                                    frame,
                                )
                                .expected(p.source().clone()),
                            );
                        }
                    }
                    return Some(
                        Divergence::new(
                            Kind::FieldMismatch,
                            format!(
                                "frame {} vs expected entry {e_idx}: {}",
                                frame.index, m.reason
                            ),
                        )
                        .at_frame(frame.index, frame.line)
                        .at_path(m.path)
                        .expected(m.expected)
                        .actual(m.actual.unwrap_or(serde_json::Value::Null)),
                    );
                }
                i += 1;
            }
            Expected::AnyOrder(runs) => {
                let n = entry.len();
                if frames.len() < i + n {
                    let got = frames.len() - i;
                    let mut d = Divergence::new(
                        Kind::MissingFrame,
                        format!(
                            "the any_order group (entry {e_idx}) needs {n} frames, only {got} remain"
                        ),
                    )
                    .expected(group_source(runs));
                    if let Some(last) = frames.last() {
                        d = d.at_frame(last.index, last.line);
                    }
                    return Some(d);
                }
                let window = &frames[i..i + n];
                if let Err(d) = solve_interleaving(runs, window, vars, caps, e_idx) {
                    return Some(d);
                }
                i += n;
            }
        }
    }
    frames.get(i).map(|extra| {
        frame_div(
            Kind::UnexpectedFrame,
            format!(
                "{} frame(s) after the last expected one, starting with frame {}",
                frames.len() - i,
                extra.index
            ),
            extra,
        )
    })
}

fn missing(p: &Pattern, e_idx: usize, last: Option<&Frame>) -> Divergence {
    let mut d = Divergence::new(
        Kind::MissingFrame,
        match last {
            Some(f) => format!(
                "expected entry {e_idx} never came: output ended after frame {}",
                f.index
            ),
            None => format!("expected entry {e_idx} never came: the CLI printed no frame"),
        },
    )
    .expected(p.source().clone());
    if let Some(f) = last {
        d.frame = Some(f.index + 1);
        d.line = Some(f.line + 1);
    }
    d
}

fn group_source(runs: &[Vec<Pattern>]) -> serde_json::Value {
    serde_json::json!({
        "any_order": runs
            .iter()
            .map(|run| run.iter().map(|p| p.source().clone()).collect::<Vec<_>>())
            .collect::<Vec<_>>()
    })
}

/// Checks that `window` is an interleaving of `runs` (each run in its own order).
#[allow(clippy::result_large_err)] // cold path: only on a divergence
fn solve_interleaving(
    runs: &[Vec<Pattern>],
    window: &[&Frame],
    vars: &Vars,
    caps: &mut Captures,
    e_idx: usize,
) -> Result<(), Divergence> {
    // A frame no pattern of the group accepts is the clearest thing to report.
    for f in window {
        if !runs
            .iter()
            .flatten()
            .any(|p| p.is_match(&f.value, vars, caps))
        {
            return Err(frame_div(
                Kind::UnexpectedFrame,
                format!(
                    "frame {} matches no pattern of the any_order group (entry {e_idx})",
                    f.index
                ),
                f,
            )
            .expected(group_source(runs)));
        }
    }
    let order = if runs.iter().all(|r| r.len() == 1) {
        bipartite(runs, window, vars, caps)
    } else {
        let mut seen = HashSet::new();
        let mut pos = vec![0; runs.len()];
        let mut order = Vec::with_capacity(window.len());
        let mut budget = SEARCH_BUDGET;
        search(
            runs,
            window,
            vars,
            caps,
            &mut pos,
            &mut order,
            &mut seen,
            &mut budget,
        )
        .then_some(order)
    };
    let Some(order) = order else {
        let first = window[0];
        return Err(frame_div(
            Kind::Order,
            format!(
                "frames {}..{} are not an interleaving of the any_order group (entry {e_idx}): some pattern of the group matches none of them in an allowed order",
                first.index,
                window[window.len() - 1].index
            ),
            first,
        )
        .expected(group_source(runs)));
    };
    // Bind captures in the order the frames came.
    for (f, (r, k)) in window.iter().zip(order) {
        runs[r][k]
            .check(&f.value, vars, caps)
            .expect("assignment was checked");
    }
    Ok(())
}

/// Single-frame runs: a maximum bipartite matching (Kuhn), polynomial in the group size.
fn bipartite(
    runs: &[Vec<Pattern>],
    window: &[&Frame],
    vars: &Vars,
    caps: &Captures,
) -> Option<Vec<(usize, usize)>> {
    let n = window.len();
    let ok: Vec<Vec<bool>> = window
        .iter()
        .map(|f| {
            runs.iter()
                .map(|r| r[0].is_match(&f.value, vars, caps))
                .collect()
        })
        .collect();
    let mut owner: Vec<Option<usize>> = vec![None; n]; // pattern -> frame
    fn augment(f: usize, ok: &[Vec<bool>], owner: &mut [Option<usize>], seen: &mut [bool]) -> bool {
        for p in 0..owner.len() {
            if ok[f][p] && !seen[p] {
                seen[p] = true;
                if owner[p].is_none_or(|g| augment(g, ok, owner, seen)) {
                    owner[p] = Some(f);
                    return true;
                }
            }
        }
        false
    }
    for f in 0..n {
        let mut seen = vec![false; n];
        if !augment(f, &ok, &mut owner, &mut seen) {
            return None;
        }
    }
    let mut order = vec![(0, 0); n];
    for (p, f) in owner.iter().enumerate() {
        order[f.expect("perfect matching")] = (p, 0);
    }
    Some(order)
}

#[allow(clippy::too_many_arguments)]
fn search(
    runs: &[Vec<Pattern>],
    window: &[&Frame],
    vars: &Vars,
    caps: &Captures,
    pos: &mut Vec<usize>,
    order: &mut Vec<(usize, usize)>,
    seen: &mut HashSet<Vec<usize>>,
    budget: &mut usize,
) -> bool {
    let i = order.len();
    if i == window.len() {
        return true;
    }
    if *budget == 0 || !seen.insert(pos.clone()) {
        return false;
    }
    *budget -= 1;
    for r in 0..runs.len() {
        let k = pos[r];
        if k < runs[r].len() && runs[r][k].is_match(&window[i].value, vars, caps) {
            pos[r] += 1;
            order.push((r, k));
            if search(runs, window, vars, caps, pos, order, seen, budget) {
                return true;
            }
            order.pop();
            pos[r] -= 1;
        }
    }
    false
}

fn match_subsequence(
    expected: &[Expected],
    frames: &[&Frame],
    vars: &Vars,
    caps: &mut Captures,
) -> Option<Divergence> {
    let mut i = 0;
    for (e_idx, entry) in expected.iter().enumerate() {
        match entry {
            Expected::Frame(p) => {
                let from = i;
                loop {
                    let Some(frame) = frames.get(i) else {
                        let mut d = missing(p, e_idx, frames.last().copied());
                        d.message = format!(
                            "expected entry {e_idx} matches no frame from frame {} on",
                            frames.get(from).map_or(frames.len(), |f| f.index)
                        );
                        return Some(d);
                    };
                    i += 1;
                    if p.check(&frame.value, vars, caps).is_ok() {
                        break;
                    }
                }
            }
            Expected::AnyOrder(runs) => {
                let mut pos = vec![0; runs.len()];
                while pos.iter().zip(runs).any(|(k, r)| *k < r.len()) {
                    let Some(frame) = frames.get(i) else {
                        return Some(
                            Divergence::new(
                                Kind::MissingFrame,
                                format!(
                                    "the any_order group (entry {e_idx}) was not complete when the output ended"
                                ),
                            )
                            .expected(group_source(runs)),
                        );
                    };
                    i += 1;
                    for (r, run) in runs.iter().enumerate() {
                        if pos[r] < run.len() && run[pos[r]].check(&frame.value, vars, caps).is_ok()
                        {
                            pos[r] += 1;
                            break;
                        }
                    }
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn frames(values: Vec<Value>) -> Vec<Frame> {
        values
            .into_iter()
            .enumerate()
            .map(|(i, value)| Frame {
                index: i,
                line: i + 1,
                at_ms: 0,
                value,
            })
            .collect()
    }

    fn p(v: Value) -> Pattern {
        Pattern::compile(&v).unwrap()
    }

    fn one(v: Value) -> Expected {
        Expected::Frame(p(v))
    }

    fn run(
        expected: &[Expected],
        ignore: &[Pattern],
        mode: Mode,
        fs: Vec<Value>,
    ) -> Vec<Divergence> {
        let rules = FrameRules {
            expected,
            ignore,
            absent: &[],
            mode,
        };
        match_frames(&rules, &frames(fs), &Vars::default(), &mut Captures::new())
    }

    fn exact(expected: &[Expected], fs: Vec<Value>) -> Vec<Divergence> {
        run(expected, &[], Mode::Exact, fs)
    }

    #[test]
    fn exact_sequence_passes() {
        let e = [
            one(json!({"type": "system"})),
            one(json!({"type": "result"})),
        ];
        assert!(exact(
            &e,
            vec![json!({"type": "system"}), json!({"type": "result"})]
        )
        .is_empty());
    }

    #[test]
    fn field_mismatch_names_frame_and_path() {
        let e = [
            one(json!({"type": "system"})),
            one(json!({"type": "result", "result": "Hello!"})),
        ];
        let d = exact(
            &e,
            vec![
                json!({"type": "system"}),
                json!({"type": "result", "result": "Hello?"}),
            ],
        );
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].kind, Kind::FieldMismatch);
        assert_eq!(d[0].frame, Some(1));
        assert_eq!(d[0].line, Some(2));
        assert_eq!(d[0].path.as_deref(), Some("$.result"));
        assert_eq!(d[0].expected, Some(json!("Hello!")));
        assert_eq!(d[0].actual, Some(json!("Hello?")));
    }

    #[test]
    fn a_duplicated_frame_is_unexpected() {
        let e = [
            one(json!({"type": "assistant"})),
            one(json!({"type": "result"})),
        ];
        let d = exact(
            &e,
            vec![
                json!({"type": "assistant"}),
                json!({"type": "assistant"}),
                json!({"type": "result"}),
            ],
        );
        assert_eq!(d[0].kind, Kind::UnexpectedFrame);
        assert_eq!(d[0].frame, Some(1));
    }

    #[test]
    fn a_skipped_frame_is_missing() {
        let e = [
            one(json!({"type": "system"})),
            one(json!({"type": "assistant"})),
            one(json!({"type": "result"})),
        ];
        let d = exact(
            &e,
            vec![json!({"type": "system"}), json!({"type": "result"})],
        );
        assert_eq!(d[0].kind, Kind::MissingFrame);
        assert_eq!(d[0].frame, Some(1));
    }

    #[test]
    fn trailing_frames_are_unexpected_and_early_end_is_missing() {
        let e = [one(json!({"type": "result"}))];
        let d = exact(
            &e,
            vec![json!({"type": "result"}), json!({"type": "assistant"})],
        );
        assert_eq!(d[0].kind, Kind::UnexpectedFrame);
        assert_eq!(d[0].frame, Some(1));
        let d = exact(
            &[
                one(json!({"type": "system"})),
                one(json!({"type": "result"})),
            ],
            vec![json!({"type": "system"})],
        );
        assert_eq!(d[0].kind, Kind::MissingFrame);
        let d = exact(&e, vec![]);
        assert!(d[0].message.contains("printed no frame"), "{}", d[0]);
    }

    #[test]
    fn ignored_frames_are_skipped_in_exact_mode() {
        let e = [
            one(json!({"type": "system"})),
            one(json!({"type": "result"})),
        ];
        let ignore = [p(json!({"type": "rate_limit_event"}))];
        let fs = vec![
            json!({"type": "system"}),
            json!({"type": "rate_limit_event"}),
            json!({"type": "result"}),
        ];
        assert!(run(&e, &ignore, Mode::Exact, fs.clone()).is_empty());
        assert_eq!(run(&e, &[], Mode::Exact, fs)[0].kind, Kind::UnexpectedFrame);
    }

    #[test]
    fn subsequence_mode_allows_frames_between() {
        let e = [
            one(json!({"type": "system"})),
            one(json!({"type": "result"})),
        ];
        let fs = vec![
            json!({"type": "system"}),
            json!({"type": "x"}),
            json!({"type": "result"}),
            json!({"type": "y"}),
        ];
        assert!(run(&e, &[], Mode::Subsequence, fs).is_empty());
        let fs = vec![json!({"type": "result"}), json!({"type": "system"})];
        let d = run(&e, &[], Mode::Subsequence, fs);
        assert_eq!(d[0].kind, Kind::MissingFrame);
    }

    fn tool_result(id: &str) -> Value {
        json!({"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": id}]}})
    }

    #[test]
    fn any_order_group_accepts_both_orders() {
        let group = Expected::AnyOrder(vec![vec![p(tool_result("a"))], vec![p(tool_result("b"))]]);
        let e = [group, one(json!({"type": "result"}))];
        assert!(exact(
            &e,
            vec![
                tool_result("a"),
                tool_result("b"),
                json!({"type": "result"})
            ]
        )
        .is_empty());
        assert!(exact(
            &e,
            vec![
                tool_result("b"),
                tool_result("a"),
                json!({"type": "result"})
            ]
        )
        .is_empty());
        let d = exact(
            &e,
            vec![
                tool_result("a"),
                tool_result("a"),
                json!({"type": "result"}),
            ],
        );
        assert_eq!(d[0].kind, Kind::Order, "{}", d[0]);
        let d = exact(
            &e,
            vec![
                tool_result("a"),
                tool_result("c"),
                json!({"type": "result"}),
            ],
        );
        assert_eq!(d[0].kind, Kind::UnexpectedFrame);
        assert_eq!(d[0].frame, Some(1));
    }

    #[test]
    fn any_order_runs_may_interleave_but_keep_their_order() {
        let tu = |id: &str| json!({"type": "tool_use", "id": id});
        let tr = |id: &str| json!({"type": "tool_result", "tool_use_id": id});
        let group = Expected::AnyOrder(vec![
            vec![p(tu("a")), p(tr("a"))],
            vec![p(tu("b")), p(tr("b"))],
        ]);
        let e = [group];
        assert!(exact(&e, vec![tu("a"), tu("b"), tr("b"), tr("a")]).is_empty());
        assert!(exact(&e, vec![tu("b"), tr("b"), tu("a"), tr("a")]).is_empty());
        let d = exact(&e, vec![tr("a"), tu("a"), tu("b"), tr("b")]);
        assert_eq!(d[0].kind, Kind::Order);
    }

    #[test]
    fn pathological_any_order_group_is_bounded() {
        // 39 interchangeable two-frame runs and one that needs `y` followed by `x`;
        // the only `y` comes last, so no interleaving exists. The state space is
        // exponential in the number of runs: the search budget bounds it.
        let mut runs: Vec<Vec<Pattern>> = (0..39)
            .map(|_| vec![p(json!({"t": "x"})), p(json!({"t": "x"}))])
            .collect();
        runs.push(vec![p(json!({"t": "y"})), p(json!({"t": "x"}))]);
        let mut fs: Vec<Value> = (0..79).map(|_| json!({"t": "x"})).collect();
        fs.push(json!({"t": "y"}));
        let d = exact(&[Expected::AnyOrder(runs)], fs);
        assert_eq!(d[0].kind, Kind::Order, "{}", d[0]);
    }

    #[test]
    fn captures_carry_across_frames() {
        let e = [
            one(json!({"type": "system", "session_id": {"$capture": "sid"}})),
            one(json!({"type": "result", "session_id": {"$ref": "sid"}})),
        ];
        assert!(exact(
            &e,
            vec![
                json!({"type": "system", "session_id": "s1"}),
                json!({"type": "result", "session_id": "s1"})
            ]
        )
        .is_empty());
        let d = exact(
            &e,
            vec![
                json!({"type": "system", "session_id": "s1"}),
                json!({"type": "result", "session_id": "s2"}),
            ],
        );
        assert_eq!(d[0].kind, Kind::FieldMismatch);
        assert_eq!(d[0].path.as_deref(), Some("$.session_id"));
    }

    #[test]
    fn absent_patterns_flag_every_matching_frame() {
        let rules = FrameRules {
            expected: &[],
            ignore: &[],
            absent: &[p(json!({"type": "system", "subtype": "api_retry"}))],
            mode: Mode::Subsequence,
        };
        let fs = frames(vec![
            json!({"type": "system", "subtype": "init"}),
            json!({"type": "system", "subtype": "api_retry"}),
        ]);
        let d = match_frames(&rules, &fs, &Vars::default(), &mut Captures::new());
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].kind, Kind::UnexpectedFrame);
        assert_eq!(d[0].frame, Some(1));
        let fs = frames(vec![json!({"type": "system", "subtype": "init"})]);
        assert!(match_frames(&rules, &fs, &Vars::default(), &mut Captures::new()).is_empty());
    }
}
