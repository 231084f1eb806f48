//! `streamcheck replay-cli`: a saved trial played back as the CLI, for an SDK host's own
//! tests. It answers `--version` as the release that printed the trial, replays stdout
//! (at once or with the recorded timing) and, when its input is stream-json, follows the
//! control protocol: a recorded `control_response` goes out only once the host sent the
//! request it answers (under the host's own `request_id`), a recorded `control_request`
//! waits for the host's answer, and the first turn waits for the host's user message.

use super::error::ConsumeError;
use super::probe::Probe;
use crate::store::saved::SavedTrial;
use serde_json::Value;
use std::collections::VecDeque;
use std::io::{BufRead, Write};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// How to play a trial back.
#[derive(Debug, Clone)]
pub struct Replay {
    pub lines: Vec<String>,
    pub line_ms: Vec<u64>,
    /// The ids and subtypes of the requests the recorded client sent.
    pub host_requests: Vec<(String, String)>,
    /// A line written in two writes (its index, the byte it is cut at), as a probe's feed
    /// wrote it.
    pub split: Option<(usize, usize)>,
    pub exit_code: i32,
    pub timing: bool,
    /// How long to wait for the host before giving up (exit 3).
    pub wait: Duration,
}

impl Replay {
    pub fn of(saved: &SavedTrial, probe: Option<Probe>, timing: bool, wait: Duration) -> Replay {
        let printed: Vec<String> = saved.stdout.lines().map(str::to_string).collect();
        let (lines, split) = match probe.and_then(|p| p.apply(&printed)) {
            Some(feed) => (feed.text_lines(), split_of(&feed.writes)),
            None => (printed, None),
        };
        let host_requests = (saved.client.iter())
            .flat_map(|c| c.requests.iter())
            .map(|r| (r.id.clone(), r.subtype.clone()))
            .collect();
        Replay {
            lines,
            // A probe's added line has no recorded time: timing is kept for the first lines.
            line_ms: saved.line_ms.clone(),
            host_requests,
            split,
            exit_code: saved.exit.code.unwrap_or(1),
            timing,
            wait,
        }
    }
}

/// The line a feed writes in two writes, and the byte it is cut at.
fn split_of(writes: &[Vec<u8>]) -> Option<(usize, usize)> {
    // Every write before the cut one is a whole line.
    (writes.iter().enumerate())
        .find_map(|(line, w)| (!w.ends_with(b"\n")).then_some((line, w.len())))
}

/// How long a split line's second half waits, so the host reads the halves apart.
const SPLIT_PAUSE: Duration = Duration::from_millis(20);

/// The saved trial of scenario `id` printed by `release`, from the first of `runs` (run
/// folders) that holds one. `Err` names what was looked through.
pub fn find_trial(
    runs: &[std::path::PathBuf],
    id: &str,
    release: &str,
) -> Result<std::path::PathBuf, ConsumeError> {
    use crate::store::RunReader;
    for dir in runs {
        let run = RunReader::open(dir);
        // A folder that is not a run (no results.json) is passed over.
        let Ok(results) = run.results() else {
            continue;
        };
        let found = (results.trials.iter()).find(|t| {
            t.key.scenario == id
                && t.key.target_version == release
                && t.status.did_not_run().is_none()
        });
        if let Some(path) = found.and_then(|t| run.saved_file_of(t)) {
            return Ok(path);
        }
    }
    Err(ConsumeError::NoSavedTrial {
        scenario: id.into(),
        release: release.to_string(),
        folders: runs.len(),
        newest: runs.first().cloned(),
    })
}

/// What went wrong with the host: the replay stops and says which.
#[derive(Debug, PartialEq)]
pub enum Stall {
    /// Nothing came in time while the replay waited for this.
    Waiting(String),
    /// stdin ended while the replay waited for this.
    Ended(String),
}

impl std::fmt::Display for Stall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stall::Waiting(what) => write!(f, "waited for {what}: none came in time"),
            Stall::Ended(what) => write!(f, "waited for {what}: stdin ended"),
        }
    }
}

/// The host's stdin, line by line, with what came but was not yet wanted kept.
pub struct Host {
    rx: Receiver<String>,
    kept: VecDeque<Value>,
    wait: Duration,
}

impl Host {
    /// Reads `input` on a thread of its own.
    pub fn spawn(input: impl BufRead + Send + 'static, wait: Duration) -> Host {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in input.lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Host {
            rx,
            kept: VecDeque::new(),
            wait,
        }
    }

    /// Until stdin ends or nothing more came for the wait.
    pub fn wait_for_eof(self) {
        while self.rx.recv_timeout(self.wait).is_ok() {}
    }

    /// The first message (kept or new) `wanted` says yes to, taken out.
    fn take(&mut self, what: &str, wanted: impl Fn(&Value) -> bool) -> Result<Value, Stall> {
        if let Some(i) = self.kept.iter().position(&wanted) {
            return Ok(self.kept.remove(i).expect("found"));
        }
        let deadline = Instant::now() + self.wait;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match self.rx.recv_timeout(left) {
                Ok(line) => line,
                Err(RecvTimeoutError::Timeout) => return Err(Stall::Waiting(what.to_string())),
                Err(RecvTimeoutError::Disconnected) => return Err(Stall::Ended(what.to_string())),
            };
            let Ok(v) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if wanted(&v) {
                return Ok(v);
            }
            self.kept.push_back(v);
        }
    }
}

fn kind(v: &Value) -> Option<&str> {
    v.get("type").and_then(Value::as_str)
}

/// Plays `replay` to `out`; with `host`, following the control protocol.
pub fn play(
    replay: &Replay,
    mut host: Option<&mut Host>,
    out: &mut impl Write,
) -> Result<(), Stall> {
    let started = Instant::now();
    let mut turn_started = false;
    for (i, line) in replay.lines.iter().enumerate() {
        let mut text = line.clone();
        let frame = serde_json::from_str::<Value>(line).ok();
        if let (Some(host), Some(frame)) = (host.as_deref_mut(), &frame) {
            match kind(frame) {
                Some("control_response") => {
                    let id = frame
                        .pointer("/response/request_id")
                        .and_then(Value::as_str);
                    let subtype = (replay.host_requests.iter())
                        .find(|(rid, _)| Some(rid.as_str()) == id)
                        .map_or("initialize", |(_, s)| s.as_str());
                    let asked =
                        host.take(&format!("the host's `{subtype}` control_request"), |v| {
                            kind(v) == Some("control_request")
                                && v.pointer("/request/subtype").and_then(Value::as_str)
                                    == Some(subtype)
                        })?;
                    let mut answer = frame.clone();
                    if let (Some(slot), Some(own)) = (
                        answer.pointer_mut("/response/request_id"),
                        asked.get("request_id"),
                    ) {
                        *slot = own.clone();
                    }
                    text = answer.to_string();
                }
                Some("control_request") | Some("control_cancel_request") => {}
                _ if !turn_started => {
                    host.take("the host's user message", |v| kind(v) == Some("user"))?;
                    turn_started = true;
                }
                _ => {}
            }
        }
        if replay.timing {
            if let Some(&ms) = replay.line_ms.get(i) {
                let at = Duration::from_millis(ms);
                std::thread::sleep(at.saturating_sub(started.elapsed()));
            }
        }
        // The split line as the probe's feed writes it: cut at a byte, maybe mid-character.
        let cut = (replay.split).filter(|(at, mid)| *at == i && text == *line && *mid < text.len());
        let (first, rest) = match cut {
            Some((_, mid)) => text.as_bytes().split_at(mid),
            None => (&[][..], text.as_bytes()),
        };
        if !first.is_empty() {
            if out.write_all(first).and_then(|_| out.flush()).is_err() {
                return Ok(());
            }
            std::thread::sleep(SPLIT_PAUSE);
        }
        let rest = [rest, b"\n"].concat();
        if out.write_all(&rest).and_then(|_| out.flush()).is_err() {
            return Ok(());
        }
        if let (Some(host), Some(frame)) = (host.as_deref_mut(), &frame) {
            if kind(frame) == Some("control_request") {
                let id = frame.get("request_id").cloned();
                let answered = host.take("the host's answer to a control_request", |v| {
                    kind(v) == Some("control_response")
                        && v.pointer("/response/request_id") == id.as_ref()
                });
                match answered {
                    // A host that closed stdin cannot answer: the CLI goes on without it
                    // too, and the recording says how.
                    Err(Stall::Ended(_)) => {}
                    other => {
                        other?;
                    }
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn replay(lines: &[&str]) -> Replay {
        Replay {
            lines: lines.iter().map(|l| l.to_string()).collect(),
            line_ms: Vec::new(),
            host_requests: vec![("rec_1".into(), "initialize".into())],
            split: None,
            exit_code: 0,
            timing: false,
            wait: Duration::from_secs(5),
        }
    }

    const RECORDED: [&str; 4] = [
        r#"{"type":"control_response","response":{"subtype":"success","request_id":"rec_1","response":{}}}"#,
        r#"{"type":"system","subtype":"init","session_id":"s"}"#,
        r#"{"type":"control_request","request_id":"cli_1","request":{"subtype":"can_use_tool"}}"#,
        r#"{"type":"result","subtype":"success","session_id":"s"}"#,
    ];

    #[test]
    fn the_handshake_is_answered_under_the_hosts_id_and_a_cli_request_waits_for_its_answer() {
        let input = [
            r#"{"type":"control_request","request_id":"host_7","request":{"subtype":"initialize"}}"#,
            r#"{"type":"user","message":{"role":"user","content":"hi"}}"#,
            r#"{"type":"control_response","response":{"subtype":"success","request_id":"cli_1","response":{"behavior":"allow"}}}"#,
        ]
        .join("\n");
        let mut host = Host::spawn(std::io::Cursor::new(input), Duration::from_secs(5));
        let mut out = Vec::new();
        play(&replay(&RECORDED), Some(&mut host), &mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 4);
        assert!(
            lines[0].contains("\"request_id\":\"host_7\""),
            "{}",
            lines[0]
        );
        assert_eq!(&lines[1..], &RECORDED[1..]);
    }

    #[test]
    fn a_host_that_never_answers_stops_the_replay_naming_what_it_waited_for() {
        let input =
            r#"{"type":"control_request","request_id":"h","request":{"subtype":"initialize"}}"#;
        let mut host = Host::spawn(
            std::io::Cursor::new(input.to_string()),
            Duration::from_secs(5),
        );
        let mut out = Vec::new();
        let stall = play(&replay(&RECORDED), Some(&mut host), &mut out).unwrap_err();
        assert_eq!(stall, Stall::Ended("the host's user message".into()));
        assert_eq!(
            String::from_utf8(out).unwrap().lines().count(),
            1,
            "only the handshake went out"
        );
    }

    /// Keeps each `write` apart.
    #[derive(Default)]
    struct Writes(Vec<Vec<u8>>);

    impl Write for Writes {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.push(buf.to_vec());
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_split_write_probe_reaches_the_host_in_two_writes_of_the_same_text() {
        let lines = [
            "{\"type\":\"system\"}",
            "{\"type\":\"result\",\"result\":\"é\"}",
        ];
        let printed: Vec<String> = lines.map(str::to_string).to_vec();
        let feed = Probe::SplitWrite.apply(&printed).unwrap();
        let r = Replay {
            split: split_of(&feed.writes),
            host_requests: Vec::new(),
            ..replay(&lines)
        };
        assert_eq!(r.split, Some((1, lines[1].len() / 2)));
        let mut out = Writes::default();
        play(&r, None, &mut out).unwrap();
        let mid = lines[1].len() / 2;
        let (first, rest) = lines[1].as_bytes().split_at(mid);
        let want = [
            format!("{}\n", lines[0]).into_bytes(),
            first.to_vec(),
            [rest, b"\n"].concat(),
        ];
        assert_eq!(out.0, want);
    }
}
