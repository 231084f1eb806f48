//! The scripted client as a state machine: fed every frame the CLI prints, it says what
//! to write to the CLI's stdin next (or to close it). No I/O here: the runner does that.

use super::error::ClientError;
use crate::client::profile::{Profile, RequestIdStyle};
use crate::client::script::{Answer, Line, Responder, ResponderAction};
use crate::client::template::{fill, Bindings};
use crate::divergence::{Divergence, Kind};
use crate::pattern::{Captures, Pattern, Vars};
use crate::printed::output::Frame;
use serde_json::{json, Value};

/// What the runner must do with the CLI's stdin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Io {
    /// Write this line (a newline is added).
    Write(String),
    Close,
}

/// When stdin is closed once the conversation has no line left.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ClosePolicy {
    Immediately,
    /// Once this many `result` frames came.
    AfterResults(usize),
    /// Once this many `result` frames came and every client request was answered (what
    /// an SDK does before it ends its input).
    WhenSettled {
        turns: usize,
    },
}

/// Everything the client needs to play its side.
#[derive(Debug, Clone)]
pub struct Plan {
    pub profile: Option<&'static Profile>,
    /// The initialize request to send first (`None`: none).
    pub initialize: Option<Value>,
    pub lines: Vec<Line>,
    pub responders: Vec<Responder>,
    pub close: ClosePolicy,
    /// The lines written before the CLI printed anything go out as one write.
    pub one_first_write: bool,
    /// Each multi-byte character is written in two parts (see `pump`).
    pub split_utf8_chars: bool,
}

/// A control request the client sent.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SentRequest {
    pub name: Option<String>,
    pub id: String,
    pub subtype: String,
}

/// What the client did, for the checks after the run (saved with the trial, so `audit`
/// can check it again).
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct ClientLog {
    pub requests: Vec<SentRequest>,
    /// CLI control requests that no responder or waiting line was ready for.
    pub unanswered: Vec<Frame>,
    /// Lines the client could not build (a `$name` that names nothing, ...).
    pub errors: Vec<String>,
    /// Every line written, with how many frames had been seen before it.
    pub written: Vec<(usize, String)>,
    /// The SDK this client played, if a profile.
    pub sdk: Option<String>,
}

impl ClientLog {
    /// CLI requests no rule answered, and lines the client could not build.
    pub fn divergences(&self) -> Vec<Divergence> {
        let mut out = Vec::new();
        for f in &self.unanswered {
            let req = &f.value["request"];
            out.push(
                Divergence::new(
                    Kind::UnansweredControlRequest,
                    format!(
                        "the CLI sent a {} control_request (request_id {}) that no `client.respond` rule answers",
                        req["subtype"].as_str().unwrap_or("?"),
                        f.value["request_id"]
                    ),
                )
                .at_frame(f.index, f.line)
                .actual(f.value.clone()),
            );
        }
        for e in &self.errors {
            out.push(Divergence::new(Kind::ClientScript, e.clone()));
        }
        out
    }

    /// `{$ref: name}` values for expectations: each named client request's id.
    pub fn captures(&self) -> Captures {
        self.requests
            .iter()
            .filter_map(|r| Some((r.name.clone()?, Value::String(r.id.clone()))))
            .collect()
    }
}

pub struct Client {
    plan: Plan,
    pos: usize,
    /// Matching frames still to see for the `wait` line at `pos`.
    wait_left: Option<usize>,
    results: usize,
    frames_seen: usize,
    bindings: Bindings,
    caps: Captures,
    vars: Vars,
    answered: Vec<String>,
    uses: Vec<usize>,
    closed: bool,
    rng: u64,
    log: ClientLog,
}

impl Client {
    pub fn new(mut plan: Plan, vars: Vars) -> Client {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
            ^ u64::from(std::process::id()).rotate_left(32);
        let mut prelude = Vec::new();
        if let Some(init) = plan.initialize.take() {
            prelude.push(Line::Request {
                request: init,
                name: Some("initialize".into()),
            });
        }
        let mut client = Client {
            uses: vec![0; plan.responders.len()],
            log: ClientLog {
                sdk: plan.profile.map(|p| format!("{} {}", p.sdk, p.version)),
                ..ClientLog::default()
            },
            plan,
            pos: 0,
            wait_left: None,
            results: 0,
            frames_seen: 0,
            bindings: Bindings::new(),
            caps: Captures::new(),
            vars,
            answered: Vec::new(),
            closed: false,
            rng: seed | 1,
        };
        prelude.append(&mut client.plan.lines);
        client.plan.lines = prelude;
        client
    }

    /// The lines written before the CLI printed anything (joined into one write when
    /// the plan says so).
    pub fn start(&mut self) -> Vec<Io> {
        let mut out = Vec::new();
        self.advance(&mut out);
        if !self.plan.one_first_write {
            return out;
        }
        let (mut lines, mut rest) = (Vec::new(), Vec::new());
        for io in out {
            match io {
                Io::Write(line) => lines.push(line),
                close => rest.push(close),
            }
        }
        if !lines.is_empty() {
            rest.insert(0, Io::Write(lines.join("\n")));
        }
        rest
    }

    /// Feeds one frame the CLI printed.
    pub fn on_frame(&mut self, frame: &Frame) -> Vec<Io> {
        let mut out = Vec::new();
        self.frames_seen += 1;
        let v = &frame.value;
        match v.get("type").and_then(Value::as_str) {
            Some("result") => self.results += 1,
            Some("control_response") => {
                if let Some(id) = v["response"]["request_id"].as_str() {
                    self.answered.push(id.to_string());
                }
            }
            _ => {}
        }
        let waited = self.wait_matches(v);
        if v.get("type").and_then(Value::as_str) == Some("control_request") {
            let handled = self.respond(frame, &mut out);
            if !handled && !waited {
                self.log.unanswered.push(frame.clone());
            }
        }
        if waited {
            let left = self.wait_left.map_or(0, |n| n.saturating_sub(1));
            if left == 0 {
                if let Some(Line::Wait { name: Some(n), .. }) = self.plan.lines.get(self.pos) {
                    self.bindings.insert(n.clone(), v.clone());
                }
                self.wait_left = None;
                self.pos += 1;
            } else {
                self.wait_left = Some(left);
            }
        }
        self.advance(&mut out);
        out
    }

    /// The CLI closed its stdout: nothing more will come.
    pub fn on_end(&mut self) -> Vec<Io> {
        let mut out = Vec::new();
        self.close(&mut out);
        out
    }

    /// Whether the writer cuts multi-byte characters between writes.
    pub fn splits_utf8_chars(&self) -> bool {
        self.plan.split_utf8_chars
    }

    /// The control requests sent so far.
    pub fn requests(&self) -> &[SentRequest] {
        &self.log.requests
    }

    pub fn finish(self) -> ClientLog {
        self.log
    }

    fn wait_matches(&self, v: &Value) -> bool {
        match self.plan.lines.get(self.pos) {
            Some(Line::Wait { pattern, .. }) if self.wait_left.is_some() => {
                pattern.0.is_match(v, &self.vars, &self.caps)
            }
            _ => false,
        }
    }

    /// Answers a CLI control request with the first responder that matches; false if none.
    fn respond(&mut self, frame: &Frame, out: &mut Vec<Io>) -> bool {
        let request = &frame.value["request"];
        let id = frame.value["request_id"].clone();
        let found = self.plan.responders.iter().enumerate().position(|(i, r)| {
            r.times.is_none_or(|t| self.uses[i] < t)
                && r.on.0.is_match(request, &self.vars, &self.caps)
        });
        let Some(i) = found else { return false };
        self.uses[i] += 1;
        let mut b = self.bindings.clone();
        b.insert("request".into(), request.clone());
        b.insert("request_id".into(), id.clone());
        let answer = match &self.plan.responders[i].action {
            ResponderAction::Silent => return true,
            ResponderAction::CloseStdin => {
                self.close(out);
                return true;
            }
            ResponderAction::Answer(a) => self.answer_frame(&id, a, &b),
            ResponderAction::Mcp(server) => server
                .answer(request)
                .map(|r| response_frame(&id, &Answer::Success(Some(r)))),
        };
        match answer {
            Ok(frame) => self.write(frame.to_string(), out),
            Err(e) => self.log.errors.push(format!("responder {i}: {e}")),
        }
        true
    }

    fn answer_frame(&self, id: &Value, a: &Answer, b: &Bindings) -> Result<Value, ClientError> {
        Ok(match a {
            Answer::Success(Some(v)) => response_frame(id, &Answer::Success(Some(fill(v, b)?))),
            other => response_frame(id, other),
        })
    }

    /// Writes lines until one must wait, then closes stdin if the conversation is over.
    fn advance(&mut self, out: &mut Vec<Io>) {
        while !self.closed {
            let Some(line) = self.plan.lines.get(self.pos).cloned() else {
                if self.settled() {
                    self.close(out);
                }
                return;
            };
            match line {
                Line::Wait { count, .. } => {
                    if self.wait_left.is_none() {
                        self.wait_left = Some(count);
                    }
                    return;
                }
                Line::AfterResults(n) if self.results < n => return,
                Line::AfterResults(_) => {}
                Line::Close => self.close(out),
                other => {
                    if let Err(e) = self.emit(&other, out) {
                        self.log.errors.push(format!("line {}: {e}", self.pos + 1));
                    }
                }
            }
            self.pos += 1;
        }
    }

    fn settled(&self) -> bool {
        match self.plan.close {
            ClosePolicy::Immediately => true,
            ClosePolicy::AfterResults(n) => self.results >= n,
            ClosePolicy::WhenSettled { turns } => {
                self.results >= turns
                    && self
                        .log
                        .requests
                        .iter()
                        .all(|r| self.answered.contains(&r.id))
            }
        }
    }

    fn emit(&mut self, line: &Line, out: &mut Vec<Io>) -> Result<(), ClientError> {
        let frame = match line {
            Line::Raw(s) => {
                self.write(s.clone(), out);
                return Ok(());
            }
            Line::User(content) => match self.plan.profile {
                Some(p) => p.user_frame(&fill(content, &self.bindings)?),
                None => {
                    json!({"type": "user", "message": {"role": "user", "content": fill(content, &self.bindings)?}})
                }
            },
            Line::Send(v) => fill(v, &self.bindings)?,
            Line::Request { request, name } => {
                let request = fill(request, &self.bindings)?;
                let id = self.next_id();
                let frame =
                    json!({"type": "control_request", "request_id": id, "request": request});
                self.log.requests.push(SentRequest {
                    name: name.clone(),
                    id: id.clone(),
                    subtype: request["subtype"].as_str().unwrap_or_default().into(),
                });
                if let Some(n) = name {
                    self.bindings.insert(n.clone(), frame.clone());
                    self.caps.insert(n.clone(), Value::String(id));
                    if n == "initialize" && self.awaits_initialize() {
                        self.insert_initialize_wait();
                    }
                }
                frame
            }
            Line::Reply { to, answer } => {
                let target = self
                    .bindings
                    .get(to)
                    .ok_or_else(|| ClientError::ReplyWithoutWait { to: to.clone() })?;
                let id = target["request_id"].clone();
                self.answer_frame(&id, answer, &self.bindings.clone())?
            }
            Line::Wait { .. } | Line::AfterResults(_) | Line::Close => return Ok(()),
        };
        self.write(frame.to_string(), out);
        Ok(())
    }

    fn awaits_initialize(&self) -> bool {
        self.pos == 0
            && self
                .plan
                .profile
                .is_some_and(|p| p.handshake == crate::client::profile::Handshake::Await)
    }

    /// Python's SDK writes nothing else until the initialize response came.
    fn insert_initialize_wait(&mut self) {
        let pattern = Pattern::compile(&json!({
            "type": "control_response",
            "response": {"request_id": {"$ref": "initialize"}}
        }))
        .expect("a fixed pattern compiles");
        self.plan.lines.insert(
            self.pos + 1,
            Line::Wait {
                pattern: crate::pattern::PatternValue(pattern),
                count: 1,
                name: None,
            },
        );
    }

    fn write(&mut self, line: String, out: &mut Vec<Io>) {
        if self.closed {
            return;
        }
        self.log.written.push((self.frames_seen, line.clone()));
        out.push(Io::Write(line));
    }

    fn close(&mut self, out: &mut Vec<Io>) {
        if !self.closed {
            self.closed = true;
            out.push(Io::Close);
        }
    }

    fn next_id(&mut self) -> String {
        // xorshift64: ids need only differ, not be secret.
        let mut next = || {
            self.rng ^= self.rng << 13;
            self.rng ^= self.rng >> 7;
            self.rng ^= self.rng << 17;
            self.rng
        };
        let style = self
            .plan
            .profile
            .map_or(RequestIdStyle::Python, |p| p.request_id);
        match style {
            RequestIdStyle::Python => {
                let n = self.log.requests.len() + 1;
                format!("req_{n}_{:08x}", next() as u32)
            }
            RequestIdStyle::Typescript => {
                let mut x = next();
                (0..11)
                    .map(|_| {
                        let d = (x % 36) as u32;
                        x /= 36;
                        char::from_digit(d, 36).expect("a base-36 digit")
                    })
                    .collect()
            }
        }
    }
}

/// A `control_response` frame for request `id`.
pub fn response_frame(id: &Value, answer: &Answer) -> Value {
    match answer {
        Answer::Success(Some(r)) => {
            json!({"type": "control_response", "response": {"subtype": "success", "request_id": id, "response": r}})
        }
        Answer::Success(None) => {
            json!({"type": "control_response", "response": {"subtype": "success", "request_id": id}})
        }
        Answer::Error(e) => {
            json!({"type": "control_response", "response": {"subtype": "error", "request_id": id, "error": e}})
        }
    }
}
