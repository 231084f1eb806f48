//! The HTTP server: routing, script progress, and turning an answer into a response.

use std::borrow::Cow;
use std::collections::{BTreeMap, VecDeque};
use std::convert::Infallible;
use std::fmt;
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::header::{HeaderName, HeaderValue, CONTENT_TYPE};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::{JoinHandle, JoinSet};

use crate::body::{Piece, StubBody};
use crate::faults;
use crate::journal::{self, Answer, JournalEntry, Store};
use crate::matching::{self, RequestInfo};
use crate::script::{Faults, HttpError, Message, Response as Reply, Rule, Script, Step, Times};
use crate::sse::{self, RenderCtx, Template};

/// Called with every journal entry as it is recorded (before the response is sent).
pub type OnRequest = Arc<dyn Fn(&JournalEntry) + Send + Sync>;

/// Options for [`StubServer::start_with`].
#[derive(Clone, Default)]
pub struct ServeOptions {
    /// Port on 127.0.0.1; 0 picks a free one. The stub only ever binds loopback.
    pub port: u16,
    pub on_request: Option<OnRequest>,
    /// Cap (approximate bytes) on the in-memory journal; once exceeded the oldest
    /// entries are dropped (the newest, with `journal_keep_first`). None keeps everything.
    pub journal_max_bytes: Option<usize>,
    /// Past the cap, keep the first requests and drop the new ones: a test asserts on
    /// the first requests, and a client in a request loop must not use up the memory.
    pub journal_keep_first: bool,
}

impl fmt::Debug for ServeOptions {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.debug_struct("ServeOptions")
            .field("port", &self.port)
            .field("on_request", &self.on_request.as_ref().map(|_| "Fn"))
            .field("journal_max_bytes", &self.journal_max_bytes)
            .field("journal_keep_first", &self.journal_keep_first)
            .finish()
    }
}

/// A running stub. Stops on [`StubServer::shutdown`] or when dropped.
pub struct StubServer {
    shared: Arc<Shared>,
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl StubServer {
    /// Serves `script` on an ephemeral port of 127.0.0.1.
    pub async fn start(script: Script) -> io::Result<StubServer> {
        Self::start_with(script, ServeOptions::default()).await
    }

    pub async fn start_with(script: Script, opts: ServeOptions) -> io::Result<StubServer> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, opts.port)).await?;
        let addr = listener.local_addr()?;
        if !addr.ip().is_loopback() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "stub-api binds loopback only",
            ));
        }
        let shared = Arc::new(Shared::new(script, opts));
        let (stop, stopped) = oneshot::channel();
        let task = tokio::spawn(accept_loop(listener, shared.clone(), stopped));
        Ok(StubServer {
            shared,
            addr,
            stop: Some(stop),
            task: Some(task),
        })
    }

    /// `http://127.0.0.1:PORT`, for ANTHROPIC_BASE_URL.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn script(&self) -> &Script {
        &self.shared.script
    }

    /// Every recorded request, in arrival order.
    pub fn journal(&self) -> Vec<JournalEntry> {
        self.shared.journal().snapshot(|_| true)
    }

    /// The requests no step could answer.
    pub fn unscripted(&self) -> Vec<JournalEntry> {
        self.shared.journal().snapshot(JournalEntry::is_unscripted)
    }

    /// Entries dropped from memory because of `journal_max_bytes`.
    pub fn journal_dropped(&self) -> u64 {
        self.shared.journal().dropped()
    }

    /// How many steps were consumed fully or partly.
    pub fn steps_used(&self) -> usize {
        let p = self.shared.progress();
        p.step + usize::from(p.used > 0)
    }

    /// Writes the journal as NDJSON.
    pub fn write_journal(&self, path: &Path) -> io::Result<()> {
        let mut out = io::BufWriter::new(std::fs::File::create(path)?);
        journal::write_ndjson(&mut out, &self.journal())?;
        io::Write::flush(&mut out)
    }

    /// Stops accepting and aborts open connections.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for StubServer {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

impl fmt::Debug for StubServer {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.debug_struct("StubServer")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

async fn accept_loop(
    listener: TcpListener,
    shared: Arc<Shared>,
    mut stopped: oneshot::Receiver<()>,
) {
    let mut http = http1::Builder::new();
    http.keep_alive(true).header_read_timeout(None);
    let mut conns = JoinSet::new();
    loop {
        tokio::select! {
            biased;
            _ = &mut stopped => break,
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let _ = stream.set_nodelay(true);
                    let shared = shared.clone();
                    let service = service_fn(move |req| handle(shared.clone(), req));
                    let conn = http.serve_connection(TokioIo::new(stream), service);
                    conns.spawn(async move {
                        let _ = conn.await;
                    });
                }
                // Out of file descriptors and the like: back off instead of spinning.
                Err(_) => tokio::time::sleep(Duration::from_millis(5)).await,
            },
        }
    }
    conns.abort_all();
}

struct Shared {
    script: Script,
    rules: Vec<Rule>,
    /// Pre-rendered bodies of fault-free messages, per step and per rule.
    step_templates: Vec<Option<Templates>>,
    rule_templates: Vec<Option<Templates>>,
    started: Instant,
    next_seq: AtomicU64,
    progress: Mutex<Progress>,
    journal: Mutex<Store>,
    on_request: Option<OnRequest>,
}

#[derive(Default)]
struct Progress {
    /// Index of the current step.
    step: usize,
    /// Answers the current step has given.
    used: u32,
    /// POST /v1/messages requests not answered by a background rule (N).
    scripted_requests: u64,
    background_answers: u64,
    rule_used: Vec<u32>,
}

/// How a POST /v1/messages request is answered.
enum Decision {
    Rule { rule: usize, k: u64 },
    Step { step: usize, repeat: u32, n: u64 },
    Unscripted { message: String },
}

/// A response plus what the journal should say about it.
struct Answered {
    response: Response<StubBody>,
    answer: Answer,
    delay: Duration,
}

impl Answered {
    fn unscripted(message: String) -> Answered {
        Answered {
            response: unscripted_response(&message),
            answer: Answer::Unscripted { message },
            delay: Duration::ZERO,
        }
    }
}

impl Shared {
    fn new(script: Script, opts: ServeOptions) -> Shared {
        let rules = script.all_rules();
        let step_templates = script
            .steps
            .iter()
            .map(|s| match (&s.response, &s.faults) {
                (Reply::Message(m), None) if !m.takes_from_tool_results() => Templates::new(m),
                _ => None,
            })
            .collect();
        let rule_templates = rules
            .iter()
            .map(|r| match &r.response {
                Reply::Message(m) if !m.takes_from_tool_results() => Templates::new(m),
                _ => None,
            })
            .collect();
        Shared {
            step_templates,
            rule_templates,
            progress: Mutex::new(Progress {
                rule_used: vec![0; rules.len()],
                ..Progress::default()
            }),
            rules,
            script,
            started: Instant::now(),
            next_seq: AtomicU64::new(0),
            journal: Mutex::new(Store::new(opts.journal_max_bytes, opts.journal_keep_first)),
            on_request: opts.on_request,
        }
    }

    fn progress(&self) -> MutexGuard<'_, Progress> {
        self.progress.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn journal(&self) -> MutexGuard<'_, Store> {
        self.journal.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn decide(&self, req: Option<&RequestInfo>, why_not_json: &str) -> Decision {
        let mut p = self.progress();
        let Some(req) = req else {
            p.scripted_requests += 1;
            return Decision::Unscripted {
                message: format!(
                    "stub-api: request #{} has a body that is not JSON ({why_not_json})",
                    p.scripted_requests
                ),
            };
        };
        for (i, rule) in self.rules.iter().enumerate() {
            let left = match rule.times {
                Times::Forever => true,
                Times::Count(n) => p.rule_used[i] < n,
            };
            if left && matching::check(&rule.matcher, req).is_ok() {
                p.rule_used[i] = p.rule_used[i].saturating_add(1);
                let k = p.background_answers;
                p.background_answers += 1;
                return Decision::Rule { rule: i, k };
            }
        }
        p.scripted_requests += 1;
        let n = p.scripted_requests;
        let steps = &self.script.steps;
        let Some(step) = steps.get(p.step) else {
            return Decision::Unscripted {
                message: format!(
                    "stub-api: no scripted response for request #{n} (script has {} steps, all used)",
                    steps.len()
                ),
            };
        };
        if let Err(why) = matching::check(&step.matcher, req) {
            return Decision::Unscripted {
                message: format!(
                    "stub-api: request #{n} matches no step: step {} expects {why}",
                    p.step
                ),
            };
        }
        let (index, repeat) = (p.step, p.used);
        p.used = p.used.saturating_add(1);
        if let Times::Count(times) = step.times {
            if p.used >= times {
                p.step += 1;
                p.used = 0;
            }
        }
        Decision::Step {
            step: index,
            repeat,
            n,
        }
    }

    fn answer_messages(&self, raw: &str) -> (Answered, Option<String>) {
        let parsed = RequestInfo::parse(raw);
        let (info, why) = match &parsed {
            Ok(info) => (Some(info), String::new()),
            Err(e) => (None, e.to_string()),
        };
        let model = info.and_then(RequestInfo::model).map(str::to_owned);
        let answered = match self.decide(info, &why) {
            Decision::Unscripted { message } => Answered::unscripted(message),
            Decision::Rule { rule, k } => {
                let template = self.rule_templates[rule].as_ref();
                let rule = &self.rules[rule];
                let info = info.expect("rules only answer JSON bodies");
                match resolved(&rule.response, info) {
                    Err(message) => Answered::unscripted(message),
                    Ok(response) => Answered {
                        response: with_headers(
                            reply(&response, None, template, info, || format!("msg_bg_{k}")),
                            &rule.headers,
                        ),
                        answer: Answer::Background {
                            rule: rule.name.clone(),
                        },
                        delay: Duration::ZERO,
                    },
                }
            }
            Decision::Step { step, repeat, n } => {
                let Step {
                    response,
                    faults,
                    headers,
                    ..
                } = &self.script.steps[step];
                let template = self.step_templates[step].as_ref();
                let info = info.expect("steps only answer JSON bodies");
                let response = match resolved(response, info) {
                    Err(message) => {
                        return (
                            Answered::unscripted(format!(
                                "stub-api: request #{n}: step {step}: {message}"
                            )),
                            model,
                        )
                    }
                    Ok(response) => response,
                };
                let response = reply(&response, faults.as_ref(), template, info, || {
                    format!("msg_{}", n - 1)
                });
                Answered {
                    response: with_headers(response, headers),
                    answer: Answer::Step { step, repeat },
                    delay: faults.as_ref().map_or(Duration::ZERO, |f| {
                        Duration::from_millis(f.delay_before_headers_ms)
                    }),
                }
            }
        };
        (answered, model)
    }

    fn record(&self, entry: JournalEntry) {
        if let Some(on_request) = &self.on_request {
            on_request(&entry);
        }
        self.journal().push(entry);
    }
}

#[derive(PartialEq)]
enum Route {
    Messages,
    CountTokens,
    Root,
    Journal,
    NotFound,
}

fn route(method: &Method, path: &str) -> Route {
    if *method == Method::POST {
        if path.ends_with("/v1/messages") {
            return Route::Messages;
        }
        if path.ends_with("/v1/messages/count_tokens") {
            return Route::CountTokens;
        }
    } else if *method == Method::GET || *method == Method::HEAD {
        if path == "/" {
            return Route::Root;
        }
        if path == "/__stub/journal" && *method == Method::GET {
            return Route::Journal;
        }
    }
    Route::NotFound
}

async fn handle(
    shared: Arc<Shared>,
    req: Request<Incoming>,
) -> Result<Response<StubBody>, Infallible> {
    let (parts, body) = req.into_parts();
    let route = route(&parts.method, parts.uri.path());
    if route == Route::Journal {
        // Reading the journal is not itself journaled.
        return Ok(journal_response(&shared));
    }
    let seq = shared.next_seq.fetch_add(1, Ordering::Relaxed);
    let received_ms = shared.started.elapsed().as_millis() as u64;
    let Ok(body) = read_body(body, &parts.headers).await else {
        // The client went away mid-body; there is no one to answer.
        return Ok(plain_response(StatusCode::BAD_REQUEST, StubBody::empty()));
    };
    let raw = match String::from_utf8(body) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    };

    let (answered, model) = match route {
        Route::Messages => shared.answer_messages(&raw),
        Route::CountTokens => {
            let tokens = (raw.len() / 4).max(1);
            let body = format!("{{\"input_tokens\":{tokens}}}");
            (side(json_response(StatusCode::OK, body.into_bytes())), None)
        }
        Route::Root => (
            side(plain_response(StatusCode::OK, StubBody::empty())),
            None,
        ),
        Route::Journal | Route::NotFound => {
            let body = sse::error_body(
                "not_found_error",
                &format!(
                    "stub-api: no route for {} {}",
                    parts.method,
                    parts.uri.path()
                ),
            );
            (side(json_response(StatusCode::NOT_FOUND, body)), None)
        }
    };
    let Answered {
        mut response,
        answer,
        delay,
    } = answered;
    let request_id = HeaderName::from_static("request-id");
    if !response.headers().contains_key(&request_id) {
        let id = HeaderValue::try_from(format!("req_stub_{seq}")).expect("ascii");
        response.headers_mut().insert(request_id, id);
    }

    shared.record(JournalEntry::new(
        seq,
        parts.method.as_str().to_owned(),
        parts.uri.path().to_owned(),
        parts.uri.query().map(str::to_owned),
        header_map(&parts.headers),
        raw,
        model,
        received_ms,
        answer,
        response.status().as_u16(),
    ));
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    Ok(response)
}

/// Reads the whole body into one buffer, sized from content-length when given: one
/// copy out of hyper's read buffer, none after.
async fn read_body(
    mut body: Incoming,
    headers: &hyper::HeaderMap,
) -> Result<Vec<u8>, hyper::Error> {
    let expected = headers
        .get(hyper::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(0);
    let mut buf = Vec::with_capacity(expected.min(64 << 20));
    while let Some(frame) = body.frame().await {
        if let Ok(data) = frame?.into_data() {
            buf.extend_from_slice(&data);
        }
    }
    Ok(buf)
}

fn side(response: Response<StubBody>) -> Answered {
    Answered {
        response,
        answer: Answer::Side,
        delay: Duration::ZERO,
    }
}

fn header_map(headers: &hyper::HeaderMap) -> BTreeMap<String, String> {
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    for (name, value) in headers {
        let value = if name.as_str() == "x-api-key" || name == hyper::header::AUTHORIZATION {
            "[redacted]".into()
        } else {
            String::from_utf8_lossy(value.as_bytes())
        };
        out.entry(name.as_str().to_owned())
            .and_modify(|v| {
                v.push_str(", ");
                v.push_str(&value);
            })
            .or_insert_with(|| value.into_owned());
    }
    out
}

fn plain_response(status: StatusCode, body: StubBody) -> Response<StubBody> {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    response
}

fn json_response(status: StatusCode, body: Vec<u8>) -> Response<StubBody> {
    let mut response = plain_response(status, StubBody::full(body));
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

fn unscripted_response(message: &str) -> Response<StubBody> {
    let mut response = json_response(
        StatusCode::BAD_REQUEST,
        sse::error_body("invalid_request_error", message),
    );
    response
        .headers_mut()
        .insert("x-should-retry", HeaderValue::from_static("false"));
    response
}

fn journal_response(shared: &Shared) -> Response<StubBody> {
    let mut out = Vec::new();
    let entries = shared.journal().snapshot(|_| true);
    journal::write_ndjson(&mut out, &entries).expect("writing to a Vec cannot fail");
    let mut response = plain_response(StatusCode::OK, StubBody::full(out));
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("application/x-ndjson"),
    );
    response
}

/// The reply with its `$from_tool_result` references filled from `req` (borrowed as is
/// when it has none).
fn resolved<'r>(reply: &'r Reply, req: &RequestInfo) -> Result<Cow<'r, Reply>, String> {
    match reply {
        Reply::Message(m) if m.takes_from_tool_results() => m
            .resolve_tool_result_refs(|id| req.tool_result_text(id))
            .map(|m| Cow::Owned(Reply::Message(m))),
        _ => Ok(Cow::Borrowed(reply)),
    }
}

/// The response for a step's or rule's reply to a messages request.
fn reply(
    reply: &Reply,
    faults: Option<&Faults>,
    template: Option<&Templates>,
    req: &RequestInfo,
    default_id: impl FnOnce() -> String,
) -> Response<StubBody> {
    match reply {
        Reply::HttpError(e) => http_error_response(e),
        Reply::Message(msg) => {
            let id_buf;
            let id = match &msg.id {
                Some(id) => id.as_str(),
                None => {
                    id_buf = default_id();
                    id_buf.as_str()
                }
            };
            let model = msg
                .model
                .as_deref()
                .or(req.model())
                .unwrap_or("claude-stub");
            let ctx = RenderCtx { id, model };
            match (template, req.stream()) {
                (Some(t), true) => sse_response_from(t.sse.fill(&ctx)),
                (Some(t), false) => json_response(StatusCode::OK, t.json.fill(&ctx)),
                (None, true) => sse_response(msg, &ctx, faults),
                (None, false) => message_json_response(msg, &ctx, faults),
            }
        }
    }
}

fn http_error_response(e: &HttpError) -> Response<StubBody> {
    let status = StatusCode::from_u16(e.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let response = json_response(
        status,
        sse::error_body(e.effective_type(), e.effective_message()),
    );
    with_headers(response, &e.headers)
}

/// Adds scripted headers, replacing the stub's own of the same name.
fn with_headers(
    mut response: Response<StubBody>,
    headers: &BTreeMap<String, String>,
) -> Response<StubBody> {
    for (name, value) in headers {
        // Validated when the script was parsed.
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            response.headers_mut().insert(name, value);
        }
    }
    response
}

/// Both bodies of a fault-free message, pre-rendered.
struct Templates {
    sse: Template,
    json: Template,
}

impl Templates {
    fn new(msg: &Message) -> Option<Templates> {
        Some(Templates {
            sse: Template::new(|ctx, out| sse::render_sse(msg, ctx, 1, out, None))?,
            json: Template::new(|ctx, out| sse::render_json(msg, ctx, out))?,
        })
    }
}

fn sse_response(msg: &Message, ctx: &RenderCtx, faults: Option<&Faults>) -> Response<StubBody> {
    let mut out = Vec::with_capacity(1024);
    match faults {
        None => {
            sse::render_sse(msg, ctx, 1, &mut out, None);
            sse_response_from(out)
        }
        Some(f) => {
            let mut ends = Vec::new();
            let split = f.split_deltas.unwrap_or(1) as usize;
            sse::render_sse(msg, ctx, split, &mut out, Some(&mut ends));
            sse_with_body(StubBody::scripted(
                faults::sse_pieces(Bytes::from(out), &ends, f),
                None,
            ))
        }
    }
}

/// A fault-free event stream, sent chunked in one piece.
fn sse_response_from(stream: Vec<u8>) -> Response<StubBody> {
    sse_with_body(StubBody::scripted(
        VecDeque::from([Piece::Data(stream.into())]),
        None,
    ))
}

fn sse_with_body(body: StubBody) -> Response<StubBody> {
    let mut response = plain_response(StatusCode::OK, body);
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream; charset=utf-8"),
    );
    headers.insert(
        hyper::header::CACHE_CONTROL,
        HeaderValue::from_static("no-cache"),
    );
    response
}

fn message_json_response(
    msg: &Message,
    ctx: &RenderCtx,
    faults: Option<&Faults>,
) -> Response<StubBody> {
    let mut out = Vec::with_capacity(512);
    sse::render_json(msg, ctx, &mut out);
    let len = out.len() as u64;
    let body = match faults {
        None => StubBody::full(out),
        Some(f) => StubBody::scripted(faults::json_pieces(out.into(), f), Some(len)),
    };
    let mut response = plain_response(StatusCode::OK, body);
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}
