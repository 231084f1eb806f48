//! One trial as a timeline: what the client wrote to stdin, what the CLI printed, the
//! requests the stub received and how it answered, stderr and the exit, in time order.

use crate::divergence::{Divergence, Kind};
use crate::printed::output::Output;
use crate::report::frame_diff::aligned;
use crate::store::saved::SavedTrial;
use serde::Serialize;
use serde_json::{json, Value};
use stub_api::JournalEntry;

/// Where an event comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// A line the scripted client wrote to the CLI's stdin.
    Stdin,
    /// A frame (or a line that is not one) the CLI printed.
    Stdout,
    /// A request the stub received, with its answer.
    Request,
    Stderr,
    Exit,
}

/// One thing that happened during the trial.
#[derive(Debug, Clone, Serialize)]
pub struct Event {
    /// ms since the CLI started, when known.
    pub t: Option<u64>,
    pub src: Source,
    /// What it is in a few words (`assistant`, `result/success`, `POST /v1/messages`).
    pub label: String,
    /// The JSON it carried, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub json: Option<Value>,
    /// Text it carried (a non-JSON line, stderr, the exit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// 0-based frame index, for frames.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frame: Option<usize>,
    /// 1-based stdout line, for what the CLI printed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// The expected pattern this frame is shown against.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<Value>,
    /// Indexes into the trial's divergences located at this event.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub div: Vec<usize>,
    /// In a comparison: this event has no counterpart on the other side.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub differs: bool,
}

impl Event {
    fn new(t: Option<u64>, src: Source, label: String) -> Event {
        Event {
            t,
            src,
            label,
            json: None,
            text: None,
            frame: None,
            line: None,
            expected: None,
            div: Vec::new(),
            differs: false,
        }
    }

    /// What a comparison lines up: the source and the label.
    pub fn key(&self) -> (Source, &str) {
        (self.src, &self.label)
    }
}

/// stderr past this is cut in the page (the trial's own files keep what was saved).
const STDERR_MAX: usize = 16 * 1024;

/// The events of a saved trial in time order; `divergences` are attached where they are.
pub fn timeline(saved: &SavedTrial, divergences: &[Divergence]) -> Vec<Event> {
    let output = saved.output();
    let mut events = stdout_events(saved, &output);
    insert_written(saved, &mut events);
    let mut events = merge_requests(events, &saved.journal, saved.stub_lead_ms);
    let stderr = saved.stderr.text();
    if !stderr.is_empty() {
        let mut e = Event::new(None, Source::Stderr, "stderr".into());
        e.text = Some(crate::text::clip(&stderr, STDERR_MAX));
        events.push(e);
    }
    let mut exit = Event::new(None, Source::Exit, format!("exit {}", saved.exit));
    exit.text = Some(saved.exit.to_string());
    events.push(exit);
    attach(&mut events, divergences);
    events
}

/// Frames and non-JSON lines in stdout order, each frame with its expected pattern.
fn stdout_events(saved: &SavedTrial, output: &Output) -> Vec<Event> {
    let at = |line: usize| saved.line_ms.get(line.wrapping_sub(1)).copied();
    let values: Vec<&Value> = output.frames.iter().map(|f| &f.value).collect();
    let patterns = aligned(&saved.expected_frames, &values);
    let mut events: Vec<(usize, Event)> = Vec::new();
    for (f, pattern) in output.frames.iter().zip(patterns) {
        let mut e = Event::new(at(f.line), Source::Stdout, frame_label(&f.value));
        e.json = Some(f.value.clone());
        e.frame = Some(f.index);
        e.line = Some(f.line);
        e.expected = pattern;
        events.push((f.line, e));
    }
    for b in &output.bad_lines {
        let mut e = Event::new(
            at(b.line),
            Source::Stdout,
            format!("line {}: {}", b.line, b.problem),
        );
        e.text = Some(b.excerpt.clone());
        e.line = Some(b.line);
        events.push((b.line, e));
    }
    events.sort_by_key(|(line, _)| *line);
    events.into_iter().map(|(_, e)| e).collect()
}

/// `type` or `type/subtype` of a frame.
pub fn frame_label(v: &Value) -> String {
    let ty = v.get("type").and_then(Value::as_str).unwrap_or("?");
    match v.get("subtype").and_then(Value::as_str) {
        Some(sub) => format!("{ty}/{sub}"),
        None => ty.to_string(),
    }
}

/// The client's lines, each after the frames it had seen when it wrote it.
fn insert_written(saved: &SavedTrial, events: &mut Vec<Event>) {
    let Some(client) = &saved.client else { return };
    let mut out = Vec::with_capacity(events.len() + client.written.len());
    let mut written = client.written.iter().peekable();
    let mut seen = 0;
    let mut take = |seen: usize, t: Option<u64>, out: &mut Vec<Event>| {
        while let Some((_, line)) = written.next_if(|(n, _)| *n <= seen) {
            out.push(stdin_event(line, t));
        }
    };
    take(0, Some(0), &mut out);
    for e in events.drain(..) {
        let (is_frame, t) = (e.frame.is_some(), e.t);
        out.push(e);
        if is_frame {
            seen += 1;
            take(seen, t, &mut out);
        }
    }
    let last_t = out.last().and_then(|e| e.t);
    take(usize::MAX, last_t, &mut out);
    *events = out;
}

fn stdin_event(line: &str, t: Option<u64>) -> Event {
    let value: Option<Value> = serde_json::from_str(line).ok();
    let label = value.as_ref().map_or_else(|| "line".into(), frame_label);
    let mut e = Event::new(t, Source::Stdin, label);
    match value {
        Some(v) => e.json = Some(v),
        None => e.text = Some(line.to_string()),
    }
    e
}

/// Puts each request before the first stdout or stdin event that came after it. Both clocks
/// count whole milliseconds (the lead is rounded up, so a request's time is never later than
/// it was): a request in the same millisecond as a frame goes first, as it can only have
/// caused the frame, not answered it.
fn merge_requests(events: Vec<Event>, journal: &[JournalEntry], lead_ms: u64) -> Vec<Event> {
    let mut requests = journal.iter().peekable();
    let mut out = Vec::with_capacity(events.len() + journal.len());
    for e in events {
        if let Some(t) = e.t {
            while let Some(r) = requests.next_if(|r| r.received_ms.saturating_sub(lead_ms) <= t) {
                out.push(request_event(r, lead_ms));
            }
        }
        out.push(e);
    }
    out.extend(requests.map(|r| request_event(r, lead_ms)));
    out
}

/// A request: what it was and how the stub answered. The body is cut to what changes
/// from request to request (the system prompt and tool list are left out).
fn request_event(r: &JournalEntry, lead_ms: u64) -> Event {
    let brief = crate::report::trial::request_brief(r);
    let label = format!("{} {}", r.method, r.path);
    let mut e = Event::new(
        Some(r.received_ms.saturating_sub(lead_ms)),
        Source::Request,
        label,
    );
    let body = r.body();
    let last = body
        .get("messages")
        .and_then(Value::as_array)
        .and_then(|m| m.last())
        .cloned();
    e.json = Some(json!({
        "answered_by": brief["answered_by"],
        "status": r.status,
        "model": r.model,
        "messages": brief["messages"],
        "last_message": last,
    }));
    e
}

/// Each divergence at the event it is about: its frame, the exit, stderr, a request.
fn attach(events: &mut [Event], divergences: &[Divergence]) {
    for (i, d) in divergences.iter().enumerate() {
        let at = match (d.frame, d.kind) {
            (Some(f), _) => events.iter().position(|e| e.frame == Some(f)),
            (None, _) if d.line.is_some() => events.iter().position(|e| e.line == d.line),
            (None, Kind::ExitCode | Kind::Timeout | Kind::Hang) => {
                events.iter().position(|e| e.src == Source::Exit)
            }
            (None, Kind::Stderr) => events.iter().position(|e| e.src == Source::Stderr),
            (None, Kind::UnscriptedRequest) => events.iter().position(|e| {
                e.src == Source::Request
                    && e.json
                        .as_ref()
                        .is_some_and(|j| j["answered_by"] == "UNSCRIPTED")
            }),
            _ => None,
        };
        if let Some(at) = at {
            events[at].div.push(i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::ClientLog;
    use crate::runner::{Exit, Status, Stderr};

    fn saved(stdout: &str, written: Vec<(usize, String)>) -> SavedTrial {
        SavedTrial {
            format_version: 1,
            key: crate::runner::TrialKey::new("t/x", "claude-code", "1"),
            status: Status::Failed,
            exit: Exit {
                code: Some(1),
                ..Exit::default()
            },
            stdout: stdout.into(),
            stdout_truncated: false,
            stderr: Stderr::default(),
            workspace: "/w".into(),
            home: "/h".into(),
            journal: Vec::new(),
            requests_dropped: 0,
            run: None,
            client: Some(ClientLog {
                written,
                ..ClientLog::default()
            }),
            line_ms: vec![10, 20, 30],
            stub_lead_ms: 0,
            expected_frames: vec![json!({"type": "a"}), json!({"type": "b"})],
        }
    }

    #[test]
    fn stdin_lines_follow_the_frames_they_saw_and_divergences_sit_at_their_frame() {
        let s = saved(
            "{\"type\":\"a\"}\nnot json\n{\"type\":\"b\"}\n",
            vec![(0, "{\"type\":\"user\"}".into()), (1, "x".into())],
        );
        let mut d = Divergence::new(Kind::FieldMismatch, "m");
        d.frame = Some(1);
        let exit = Divergence::new(Kind::ExitCode, "e");
        let events = timeline(&s, &[d, exit]);
        let labels: Vec<&str> = events.iter().map(|e| e.label.as_str()).collect();
        let want = ["user", "a", "line", "line 2: ", "b", "exit 1"];
        // The client's second line came after it saw one frame: before the line after it.
        assert_eq!(labels.len(), want.len(), "{labels:?}");
        for (got, want) in labels.iter().zip(want) {
            assert!(got.starts_with(want), "{labels:?}");
        }
        assert_eq!(events[4].div, vec![0]);
        assert_eq!(events[4].expected, Some(json!({"type": "b"})));
        assert_eq!(events[5].div, vec![1]);
        assert_eq!(events[2].src, Source::Stdin);
        assert_eq!(events[2].t, Some(10));
        assert_eq!(events[3].line, Some(2));
    }

    #[test]
    fn a_request_in_the_same_millisecond_as_a_frame_comes_before_it() {
        let mut s = saved("{\"type\":\"a\"}\n{\"type\":\"b\"}\n", Vec::new());
        s.client = None;
        s.stub_lead_ms = 5;
        let request = |seq, received_ms| {
            JournalEntry::new(
                seq,
                "POST".into(),
                "/v1/messages".into(),
                None,
                Default::default(),
                "{}".into(),
                None,
                received_ms,
                stub_api::journal::Answer::Side,
                200,
            )
        };
        // On the CLI's clock: 10 ms (with frame a) and 21 ms (after frame b at 20 ms).
        s.journal = vec![request(0, 15), request(1, 26)];
        let events = timeline(&s, &[]);
        let labels: Vec<&str> = events.iter().map(|e| e.label.as_str()).collect();
        assert_eq!(labels.len(), 5, "{labels:?}");
        assert_eq!(events[0].src, Source::Request, "{labels:?}");
        assert!(
            labels[1].starts_with('a') && labels[2].starts_with('b'),
            "{labels:?}"
        );
        assert_eq!(events[3].src, Source::Request, "{labels:?}");
    }
}
