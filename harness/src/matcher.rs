//! Matches the frames a CLI printed against a scenario's expected frame sequence.

use crate::divergence::{compact, Divergence, Kind};
use crate::pattern::{Captures, Mismatch, Nearness, Pattern, Vars};
use crate::printed::output::Frame;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};

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

/// Past this many, further sequence divergences say little: the output is another one.
pub const MAX_SEQUENCE_DIVERGENCES: usize = 20;

/// Every frame-sequence divergence (after each, the sequence is realigned as the
/// divergence explains it: an extra frame or a missing entry is passed over), at most
/// [`MAX_SEQUENCE_DIVERGENCES`], plus every frame matching an `absent` pattern.
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
        for (k, p) in rules.absent.iter().enumerate() {
            if p.is_match(&frame.value, vars, caps) {
                out.push(
                    Divergence::new(
                        Kind::UnexpectedFrame,
                        format!(
                            "frame {} matches a pattern listed under `absent` (absent[{k}]: {})",
                            frame.index,
                            crate::divergence::compact(p.source())
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

fn match_exact(
    expected: &[Expected],
    frames: &[&Frame],
    vars: &Vars,
    caps: &mut Captures,
) -> Vec<Divergence> {
    let mut out = Vec::new();
    let (mut i, mut e_idx) = (0, 0);
    // Captures a frame failed to make, with that frame: the frames needing them say so.
    let mut failed: BTreeMap<String, usize> = BTreeMap::new();
    while e_idx < expected.len() && out.len() < MAX_SEQUENCE_DIVERGENCES {
        match &expected[e_idx] {
            Expected::Frame(p) => {
                let Some(frame) = frames.get(i) else {
                    out.push(missing(p, e_idx, frames.last().copied()));
                    e_idx += 1;
                    continue;
                };
                let Err(m) = p.check(&frame.value, vars, caps) else {
                    (i, e_idx) = (i + 1, e_idx + 1);
                    continue;
                };
                let found = FrameMismatch {
                    p,
                    e_idx,
                    frame,
                    m: *m,
                };
                let mut d = found.explain(
                    frames.get(i + 1).copied(),
                    expected.get(e_idx + 1),
                    vars,
                    caps,
                );
                if d.kind == Kind::FieldMismatch {
                    d = every_path(d, p, frame, vars, caps, &mut failed);
                }
                // Realign as the explanation says: an extra frame is passed over, a missing
                // entry is passed over, a wrong frame takes its entry.
                match d.kind {
                    Kind::UnexpectedFrame => i += 1,
                    Kind::MissingFrame => e_idx += 1,
                    _ => (i, e_idx) = (i + 1, e_idx + 1),
                }
                out.push(d);
            }
            Expected::AnyOrder(runs) => {
                let n = expected[e_idx].len();
                e_idx += 1;
                if frames.len() < i + n {
                    out.push(short_group(
                        runs,
                        n,
                        frames.len() - i,
                        e_idx - 1,
                        frames.last().copied(),
                    ));
                    i = frames.len();
                    continue;
                }
                let window = &frames[i..i + n];
                if let Err(d) = solve_interleaving(runs, window, vars, caps, e_idx - 1) {
                    out.push(d);
                }
                i += n;
            }
        }
    }
    if let Some(extra) = frames
        .get(i)
        .filter(|_| out.len() < MAX_SEQUENCE_DIVERGENCES)
    {
        out.push(extra.divergence(
            Kind::UnexpectedFrame,
            format!(
                "{} frame(s) after the last expected one, starting with frame {}",
                frames.len() - i,
                extra.index
            ),
        ));
    }
    out
}

/// An any_order group of `n` frames with only `got` frames left.
fn short_group(
    runs: &[Vec<Pattern>],
    n: usize,
    got: usize,
    e_idx: usize,
    last: Option<&Frame>,
) -> Divergence {
    let mut d = Divergence::new(
        Kind::MissingFrame,
        format!("the any_order group (entry {e_idx}) needs {n} frames, only {got} remain"),
    )
    .expected(group_source(runs));
    if let Some(last) = last {
        d = d.at_frame(last.index, last.line);
    }
    d
}

/// Expected entry `e_idx` (pattern `p`) does not match `frame`, for reason `m`.
struct FrameMismatch<'a> {
    p: &'a Pattern,
    e_idx: usize,
    frame: &'a Frame,
    m: Mismatch,
}

impl FrameMismatch<'_> {
    /// Tells an extra frame (the entry matches the next frame) and a skipped entry (the
    /// next entry matches this frame) apart from a wrong field.
    fn explain(
        self,
        next_frame: Option<&Frame>,
        next_entry: Option<&Expected>,
        vars: &Vars,
        caps: &Captures,
    ) -> Divergence {
        let FrameMismatch { p, e_idx, frame, m } = self;
        if next_frame.is_some_and(|next| p.is_match(&next.value, vars, caps)) {
            let msg = format!(
                "frame {} is not expected here (expected entry {e_idx} matches the frame after it)",
                frame.index
            );
            return frame
                .divergence(Kind::UnexpectedFrame, msg)
                .expected(p.source().clone());
        }
        if let Some(Expected::Frame(next)) = next_entry {
            if next.is_match(&frame.value, vars, caps) {
                let msg = format!(
                    "expected entry {e_idx} is missing before frame {} (which matches entry {})",
                    frame.index,
                    e_idx + 1
                );
                return frame
                    .divergence(Kind::MissingFrame, msg)
                    .expected(p.source().clone());
            }
        }
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
        .actual(m.actual.unwrap_or(serde_json::Value::Null))
    }
}

/// A frame that takes its entry but differs: every other path that differs (`also`; the
/// message, which known-divergence entries match, names the first as before), and the
/// captures the entry makes elsewhere in the frame kept for the frames after it. A path
/// that only needs a capture an earlier frame failed to make is that frame's cause, not
/// this one's: a frame with nothing else says it depends on it.
fn every_path(
    mut d: Divergence,
    p: &Pattern,
    frame: &Frame,
    vars: &Vars,
    caps: &mut Captures,
    failed: &mut BTreeMap<String, usize>,
) -> Divergence {
    let near = p.nearness_binding(&frame.value, vars, caps);
    for m in &near.differ {
        if let Some(name) = m.failed_capture() {
            failed.entry(name.to_string()).or_insert(frame.index);
        }
    }
    let (needs, own): (Vec<&Mismatch>, Vec<&Mismatch>) = (near.differ.iter())
        .partition(|m| m.needs_capture().is_some_and(|n| failed.contains_key(n)));
    let depends: Vec<String> = (needs.iter())
        .filter_map(|m| m.needs_capture())
        .map(|n| format!("`{n}` (not captured at frame {})", failed[n]))
        .collect();
    if own.is_empty() {
        if let Some(name) = needs.first().and_then(|m| m.needs_capture()) {
            d.message = format!("frame {} depends on {}", frame.index, depends.join(", "));
            d.depends_on = Some(name.to_string());
        }
        return d;
    }
    d.also = (own.iter())
        .filter(|m| d.path.as_deref() != Some(m.path.as_str()))
        .map(|m| format!("{}: {}", m.path, m.reason))
        .chain(depends.iter().map(|n| format!("depends on {n}")))
        .collect();
    d
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
    // Kuhn's matching is exact for single-frame runs whose patterns do not depend on each
    // other's captures; the search, which binds captures along its path, covers the rest.
    let order = runs
        .iter()
        .all(|r| r.len() == 1)
        .then(|| bipartite(runs, window, vars, caps))
        .flatten()
        .or_else(|| Search::new(runs, window, vars).run(caps));
    let Some(order) = order else {
        return Err(no_interleaving(runs, window, vars, caps, e_idx));
    };
    // Bind captures in the order the frames came. Two members capturing one name with
    // different values (or a $ref to a later member) is a divergence, not a harness error.
    for (f, (r, k)) in window.iter().zip(order) {
        if let Err(m) = runs[r][k].check(&f.value, vars, caps) {
            return Err(f.divergence(Kind::FieldMismatch, format!(
                    "frame {} in the any_order group (entry {e_idx}) conflicts with a capture of another member: {}",
                    f.index, m.reason
                ),
            )
            .at_path(m.path.clone())
            .expected(runs[r][k].source().clone()));
        }
    }
    Ok(())
}

/// Why no interleaving fits: a frame no pattern of the group accepts is the clearest thing
/// to report, else the order.
fn no_interleaving(
    runs: &[Vec<Pattern>],
    window: &[&Frame],
    vars: &Vars,
    caps: &Captures,
    e_idx: usize,
) -> Divergence {
    let stray = window.iter().find(|f| {
        !runs
            .iter()
            .flatten()
            .any(|p| p.is_match(&f.value, vars, caps))
    });
    if let Some(f) = stray {
        return f
            .divergence(
                Kind::UnexpectedFrame,
                format!(
                    "frame {} matches no pattern of the any_order group (entry {e_idx})",
                    f.index
                ),
            )
            .expected(group_source(runs));
    }
    let first = window[0];
    first.divergence(Kind::Order, format!(
            "frames {}..{} are not an interleaving of the any_order group (entry {e_idx}): some pattern of the group matches none of them in an allowed order",
            first.index,
            window[window.len() - 1].index
        ),
    )
    .expected(group_source(runs))
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

/// Multi-frame runs: a depth-first search over interleavings, bounded by
/// [`SEARCH_BUDGET`]. Captures are bound along the path, so a member may `$ref` what an
/// earlier frame of the group captured.
struct Search<'a> {
    runs: &'a [Vec<Pattern>],
    window: &'a [&'a Frame],
    vars: &'a Vars,
    pos: Vec<usize>,
    order: Vec<(usize, usize)>,
    seen: HashSet<Vec<usize>>,
    budget: usize,
}

impl<'a> Search<'a> {
    fn new(runs: &'a [Vec<Pattern>], window: &'a [&'a Frame], vars: &'a Vars) -> Self {
        Search {
            runs,
            window,
            vars,
            pos: vec![0; runs.len()],
            order: Vec::with_capacity(window.len()),
            seen: HashSet::new(),
            budget: SEARCH_BUDGET,
        }
    }

    fn run(mut self, caps: &Captures) -> Option<Vec<(usize, usize)>> {
        self.step(caps).then_some(self.order)
    }

    fn step(&mut self, caps: &Captures) -> bool {
        let i = self.order.len();
        if i == self.window.len() {
            return true;
        }
        // Positions already tried are not tried again; with captures inside the group this
        // may miss an interleaving reached first with other captures, never invent one.
        if self.budget == 0 || !self.seen.insert(self.pos.clone()) {
            return false;
        }
        self.budget -= 1;
        for r in 0..self.runs.len() {
            let k = self.pos[r];
            let Some(p) = self.runs[r].get(k) else {
                continue;
            };
            let mut next = caps.clone();
            if p.check(&self.window[i].value, self.vars, &mut next)
                .is_err()
            {
                continue;
            }
            self.pos[r] += 1;
            self.order.push((r, k));
            if self.step(&next) {
                return true;
            }
            self.order.pop();
            self.pos[r] -= 1;
        }
        false
    }
}

fn match_subsequence(
    expected: &[Expected],
    frames: &[&Frame],
    vars: &Vars,
    caps: &mut Captures,
) -> Vec<Divergence> {
    let mut out = Vec::new();
    let mut i = 0;
    for (e_idx, entry) in expected.iter().enumerate() {
        if out.len() >= MAX_SEQUENCE_DIVERGENCES {
            break;
        }
        match entry {
            Expected::Frame(p) => {
                let from = i;
                let found =
                    (from..frames.len()).find(|&k| p.check(&frames[k].value, vars, caps).is_ok());
                match found {
                    Some(k) => i = k + 1,
                    // Nothing printed: every entry is missing for that one reason, said once.
                    None if frames.is_empty() => {
                        out.push(missing(p, e_idx, None));
                        break;
                    }
                    // The entry is missing: the next one is looked for from the same frame.
                    None => {
                        let mut d = missing(p, e_idx, frames.last().copied());
                        d.message = format!(
                            "expected entry {e_idx} matches no frame from frame {} on",
                            frames.get(from).map_or(frames.len(), |f| f.index)
                        );
                        if let Some((frame, near)) = closest(p, &frames[from..], vars, caps) {
                            d = name_closest(d, frame, near);
                        }
                        out.push(d);
                    }
                }
            }
            Expected::AnyOrder(runs) => {
                let mut pos = vec![0; runs.len()];
                while pos.iter().zip(runs).any(|(k, r)| *k < r.len()) {
                    let Some(frame) = frames.get(i) else {
                        out.push(
                            Divergence::new(
                                Kind::MissingFrame,
                                format!(
                                    "the any_order group (entry {e_idx}) was not complete when the output ended"
                                ),
                            )
                            .expected(group_source(runs)),
                        );
                        return out;
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
    out
}

/// The frame nearest to pattern `p` among `frames`, none matching it: of the same kind
/// (`type` and `subtype` as the pattern says), the most of the pattern's leaves met, then
/// the fewest missed, then the first.
fn closest<'a>(
    p: &Pattern,
    frames: &[&'a Frame],
    vars: &Vars,
    caps: &Captures,
) -> Option<(&'a Frame, Nearness)> {
    let kind = |m: &Mismatch| m.path == "$.type" || m.path == "$.subtype";
    frames
        .iter()
        .map(|f| (*f, p.nearness(&f.value, vars, caps)))
        .filter(|(_, near)| !near.differ.is_empty() && !near.differ.iter().any(kind))
        .min_by_key(|(f, near)| (std::cmp::Reverse(near.met), near.differ.len(), f.index))
}

/// A missing entry `d` names its closest frame: where it is, and every path that differs
/// with both values (the first as the divergence's path, marked in the HTML page).
fn name_closest(d: Divergence, frame: &Frame, near: Nearness) -> Divergence {
    let differ: Vec<String> = (near.differ.iter())
        .map(|m| {
            let found = m.actual.as_ref().map_or("nothing".to_string(), compact);
            format!(
                "{}: expected {}, found {found}",
                m.path,
                compact(&m.expected)
            )
        })
        .collect();
    let first = &near.differ[0];
    let message = format!(
        "{}; the closest is frame {} (stdout line {}), which differs at {}",
        d.message,
        frame.index,
        frame.line,
        differ.join("; ")
    );
    Divergence {
        message,
        ..Divergence::new(d.kind, String::new())
    }
    .at_frame(frame.index, frame.line)
    .at_path(first.path.clone())
    .expected(first.expected.clone())
    .actual(first.actual.clone().unwrap_or(serde_json::Value::Null))
}

#[cfg(test)]
#[path = "matcher_tests.rs"]
mod tests;
