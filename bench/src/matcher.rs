//! The matcher and the differ on synthetic stream-json outputs of growing size, and on
//! any_order groups built to make a naive search blow up.

use crate::render::{duration, tick};
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::time::{Duration, Instant};
use streamcheck::divergence::Kind;
use streamcheck::matcher::{self, Expected, FrameRules, Mode};
use streamcheck::pattern::{Captures, Pattern, Vars};
use streamcheck::printed::output::{Frame, Output};
use streamcheck::report;
use streamcheck::scenario::FrameEntry;

/// A synthetic `--include-partial-messages` run of about `n` frames, with what a scenario
/// would expect of it: exact mode, an ignore list, an any_order group, captures.
pub struct Synthetic {
    pub frames: Vec<Frame>,
    pub expected: Vec<Expected>,
    /// `expected` as a scenario writes it.
    pub sources: Vec<Value>,
    pub ignore: Vec<Pattern>,
}

impl Synthetic {
    fn rules(&self) -> FrameRules<'_> {
        FrameRules {
            expected: &self.expected,
            ignore: &self.ignore,
            absent: &[],
            mode: Mode::Exact,
        }
    }
}

pub fn synthetic(n: usize) -> Synthetic {
    const SID: &str = "7f0c9a3e-2b1d-4c55-9e41-0d6c2a7b8e90";
    let mut values = vec![json!({
        "type": "system", "subtype": "init", "session_id": SID, "cwd": "/tmp/w",
        "model": "claude-opus-4-8", "permissionMode": "default",
        "tools": ["Task", "Bash", "Edit", "Read", "Write", "WebFetch"],
        "uuid": "00000000-0000-4000-8000-000000000000"
    })];
    let mut sources = vec![
        json!({"type": "system", "subtype": "init", "session_id": {"$capture": "sid"}, "model": "$string", "tools": {"$contains": ["Bash"]}}),
    ];
    let delta_pattern = json!({"type": "stream_event", "session_id": {"$ref": "sid"}, "event": {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "$string"}}});
    let tail = 2 + 6; // any_order group, assistant, result
    let mut i = 0;
    while values.len() + tail < n.max(tail + 2) {
        if i % 100 == 99 {
            values.push(json!({"type": "rate_limit_event", "rate_limit_info": {"status": "allowed"}, "session_id": SID}));
        } else {
            values.push(json!({
                "type": "stream_event", "session_id": SID,
                "uuid": format!("00000000-0000-4000-8000-{i:012}"),
                "event": {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": format!("word{i} ")}}
            }));
            sources.push(delta_pattern.clone());
        }
        i += 1;
    }
    // Three parallel tool calls whose results arrive out of order.
    let tu = |k: usize| json!({"type": "assistant", "session_id": SID, "message": {"role": "assistant", "content": [{"type": "tool_use", "id": format!("toolu_{k}"), "name": "Bash", "input": {"command": format!("echo {k}")}}]}});
    let tr = |k: usize| json!({"type": "user", "session_id": SID, "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("toolu_{k}"), "content": format!("{k}")}]}});
    for v in [tu(0), tu(1), tr(1), tu(2), tr(0), tr(2)] {
        values.push(v);
    }
    let run_of = |k: usize| {
        vec![
            json!({"type": "assistant", "message": {"content": [{"type": "tool_use", "id": format!("toolu_{k}"), "name": "Bash"}]}}),
            json!({"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": format!("toolu_{k}")}]}}),
        ]
    };
    let group: Vec<Vec<Value>> = (0..3).map(run_of).collect();
    sources.push(json!({"any_order": group}));
    values.push(json!({"type": "assistant", "session_id": SID, "message": {"role": "assistant", "content": [{"type": "text", "text": "done"}]}}));
    sources.push(
        json!({"type": "assistant", "message": {"content": [{"type": "text", "text": "done"}]}}),
    );
    values.push(json!({"type": "result", "subtype": "success", "is_error": false, "result": "done", "session_id": SID, "num_turns": 2}));
    sources.push(json!({"type": "result", "subtype": "success", "is_error": false, "result": "$string", "session_id": {"$ref": "sid"}}));

    let expected = sources
        .iter()
        .map(|s| {
            let entry: FrameEntry = serde_json::from_value(s.clone()).expect("a valid entry");
            entry.0
        })
        .collect();
    let ignore = [
        json!({"type": "rate_limit_event"}),
        json!({"type": "system", "subtype": "status"}),
    ]
    .iter()
    .map(|p| Pattern::compile(p).expect("a valid pattern"))
    .collect();
    Synthetic {
        frames: frames(&values),
        expected,
        sources,
        ignore,
    }
}

/// `values` as the frames of one stdout.
fn frames(values: &[Value]) -> Vec<Frame> {
    let ndjson: String = values.iter().map(|v| format!("{v}\n")).collect();
    Output::parse(ndjson.as_bytes()).frames
}

/// Median wall time of `f` over up to `reps` calls (fewer once 2 s went by: at least one).
fn time<T>(reps: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut times = Vec::new();
    let started = Instant::now();
    let mut last = None;
    while times.len() < reps.max(1)
        && (times.is_empty() || started.elapsed() < Duration::from_secs(2))
    {
        let t = Instant::now();
        let out = std::hint::black_box(f());
        times.push(t.elapsed());
        last = Some(out);
    }
    times.sort();
    (times[times.len() / 2], last.expect("ran at least once"))
}

/// One size's timings: frames, match, the aligned diff, the diff against 8 entries.
struct SizeTimes {
    frames: usize,
    matched: Duration,
    diff: Duration,
    diff_short: Duration,
}

pub fn part(sizes: &[usize]) -> String {
    let mut md = String::new();
    let _ = writeln!(
        md,
        "### Matcher and differ\n\nSynthetic partial-message outputs (stream_event deltas, a rate_limit_event every 100 frames under `ignore`, a 3-run any_order group of parallel tool calls, captures): `match_frames` in exact mode (passing), and `frame_diff` of a run with one wrong frame in the middle, against the full expectation (aligned) and against a short one (8 entries, as when a scenario ignores the deltas). Median of several calls.\n"
    );
    md.push_str("| frames | match | µs/frame | diff aligned | diff vs 8 entries | µs/frame (aligned) |\n|---:|---:|---:|---:|---:|---:|\n");
    let mut measured = Vec::new();
    for &n in sizes {
        eprintln!("bench: matcher on {n} frames ...");
        let (times, ok) = time_size(n);
        let per_frame = |d: Duration| d.as_secs_f64() * 1e6 / times.frames as f64;
        let _ = writeln!(
            md,
            "| {} | {} | {:.2} | {} | {} | {:.2} |{}",
            times.frames,
            duration(times.matched),
            per_frame(times.matched),
            duration(times.diff),
            duration(times.diff_short),
            per_frame(times.diff),
            if ok { "" } else { " (unexpected result!)" }
        );
        measured.push(times);
    }
    if let (Some(first), Some(last)) = (measured.first(), measured.last()) {
        let growth = last.frames as f64 / first.frames as f64;
        let slowest_diff = |t: &SizeTimes| t.diff.max(t.diff_short).as_secs_f64();
        let _ = writeln!(
            md,
            "\n{}x the frames: match {:.0}x the time, diff {:.0}x (linear = {:.0}x). Goal: < 1 s at 100k frames {}.",
            growth,
            last.matched.as_secs_f64() / first.matched.as_secs_f64(),
            slowest_diff(last) / slowest_diff(first),
            growth,
            tick(last.matched + last.diff.max(last.diff_short) < Duration::from_secs(1)),
        );
    }
    md.push_str(&pathological_groups());
    md
}

/// A synthetic run of about `n` frames with one frame made wrong in the middle, and its
/// expectation cut short to the 8 entries that are not deltas.
fn with_one_wrong_frame(s: &Synthetic) -> (Vec<Value>, Vec<Value>) {
    let mut actual: Vec<Value> = s.frames.iter().map(|f| f.value.clone()).collect();
    let mid = (actual.len() / 2..actual.len())
        .find(|&i| actual[i]["type"] == "stream_event")
        .unwrap_or(0);
    actual[mid]["event"]["delta"] = json!({"type": "input_json_delta", "partial_json": "{"});
    let short: Vec<Value> = (s.sources.iter())
        .filter(|v| v.get("type") != Some(&json!("stream_event")))
        .cloned()
        .collect();
    (actual, short)
}

/// The aligned and the short diff of `n` frames, once each (for instruction counts).
pub fn differ_once(n: usize) -> String {
    let (vars, s) = (Vars::default(), synthetic(n));
    let (actual, short) = with_one_wrong_frame(&s);
    let (aligned, text) = time(1, || report::frame_diff(&s.sources, &actual, &vars));
    let (vs_short, _) = time(1, || report::frame_diff(&short, &actual, &vars));
    let ok = if text.contains("input_json_delta") {
        ""
    } else {
        " (unexpected result!)"
    };
    format!(
        "### Differ\n\n{} frames, one wrong: diff aligned {}, diff vs 8 entries {} (one call each){ok}.\n",
        s.frames.len(),
        duration(aligned),
        duration(vs_short)
    )
}

/// Times matching and diffing a synthetic run of about `n` frames; `ok` when the match
/// passed and the diff shows the frame that was made wrong.
fn time_size(n: usize) -> (SizeTimes, bool) {
    let vars = Vars::default();
    let s = synthetic(n);
    let reps = (200_000 / n.max(1)).clamp(3, 50);
    let rules = s.rules();
    let (matched, divs) = time(reps, || {
        matcher::match_frames(&rules, &s.frames, &vars, &mut Captures::new())
    });
    let (actual, short) = with_one_wrong_frame(&s);
    let (diff, text) = time(reps.min(10), || {
        report::frame_diff(&s.sources, &actual, &vars)
    });
    let (diff_short, _) = time(reps.min(10), || report::frame_diff(&short, &actual, &vars));
    let ok = divs.is_empty() && text.contains("input_json_delta");
    let frames = s.frames.len();
    (
        SizeTimes {
            frames,
            matched,
            diff,
            diff_short,
        },
        ok,
    )
}

fn pathological_groups() -> String {
    let mut md = String::from("\nPathological any_order groups (each must end in an order divergence, not run away):\n\n| group | frames | time | result |\n|---|---:|---:|---|\n");
    let x = || Pattern::compile(&json!({"t": "x"})).expect("pattern");
    let y = || Pattern::compile(&json!({"t": "y"})).expect("pattern");
    for k in [10, 20, 40, 80] {
        // k-1 interchangeable two-frame runs and one needing `y` then `x`; the only `y`
        // comes last, so no interleaving exists and the state space is exponential.
        let mut runs: Vec<Vec<Pattern>> = (1..k).map(|_| vec![x(), x()]).collect();
        runs.push(vec![y(), x()]);
        let mut vs: Vec<Value> = (0..2 * k - 1).map(|_| json!({"t": "x"})).collect();
        vs.push(json!({"t": "y"}));
        md.push_str(&pathological(
            &format!("{k} two-frame runs, no solution"),
            vec![Expected::AnyOrder(runs)],
            frames(&vs),
        ));
    }
    for k in [100, 300, 1000] {
        // k single-frame runs: bipartite matching; all but one pattern accept every
        // frame but the last, which only the odd one accepts: long augmenting paths.
        let mut runs: Vec<Vec<Pattern>> = (1..k).map(|_| vec![x()]).collect();
        runs.push(vec![Pattern::compile(&json!("$any")).expect("pattern")]);
        let mut vs: Vec<Value> = (0..k - 1).map(|_| json!({"t": "x"})).collect();
        vs.push(json!({"t": "y"}));
        md.push_str(&pathological(
            &format!("{k} single-frame runs, solvable"),
            vec![Expected::AnyOrder(runs)],
            frames(&vs),
        ));
    }
    md
}

fn pathological(label: &str, expected: Vec<Expected>, frames: Vec<Frame>) -> String {
    let rules = FrameRules {
        expected: &expected,
        ignore: &[],
        absent: &[],
        mode: Mode::Exact,
    };
    let (t, divs) = time(1, || {
        matcher::match_frames(&rules, &frames, &Vars::default(), &mut Captures::new())
    });
    let result = match divs.first() {
        None => "passes".to_string(),
        Some(d) if d.kind == Kind::Order => "order divergence".to_string(),
        Some(d) => d.kind.as_str().to_string(),
    };
    format!(
        "| {label} | {} | {} {} | {result} |\n",
        frames.len(),
        duration(t),
        tick(t < Duration::from_secs(1))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synthetic_runs_pass_their_own_expectation() {
        for n in [20, 1_000] {
            let s = synthetic(n);
            assert_eq!(s.frames.len(), n);
            let d = matcher::match_frames(
                &s.rules(),
                &s.frames,
                &Vars::default(),
                &mut Captures::new(),
            );
            assert!(d.is_empty(), "{}", d[0]);
        }
    }
}
