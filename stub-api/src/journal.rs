//! The journal: every request the stub received, kept whole, and how it was answered.

use std::collections::{BTreeMap, VecDeque};
use std::io::{self, Write};
use std::sync::OnceLock;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// What answered a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Answer {
    /// Script step `step` (0-based), for the `repeat`-th time (0-based).
    Step { step: usize, repeat: u32 },
    /// A background rule, by name.
    Background { rule: String },
    /// Side traffic the script is not about (HEAD /, count_tokens, unknown paths).
    Side,
    /// No step could answer: the stub sent an HTTP 400 carrying `message`.
    Unscripted { message: String },
}

/// One recorded request.
#[derive(Debug, Clone)]
pub struct JournalEntry {
    /// 0-based arrival order over all requests of the server.
    pub seq: u64,
    pub method: String,
    pub path: String,
    pub query: Option<String>,
    /// Lower-case header names; repeated headers joined with ", "; the values of
    /// `x-api-key` and `authorization` replaced by "[redacted]".
    pub headers: BTreeMap<String, String>,
    /// The body exactly as received (lossy only if it was not UTF-8).
    pub body_raw: String,
    /// The request's `model`, if it had one.
    pub model: Option<String>,
    /// Milliseconds since the server started, when the request arrived.
    pub received_ms: u64,
    pub answer: Answer,
    /// The HTTP status sent.
    pub status: u16,
    body: OnceLock<Value>,
}

impl JournalEntry {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        seq: u64,
        method: String,
        path: String,
        query: Option<String>,
        headers: BTreeMap<String, String>,
        body_raw: String,
        model: Option<String>,
        received_ms: u64,
        answer: Answer,
        status: u16,
    ) -> JournalEntry {
        JournalEntry {
            seq,
            method,
            path,
            query,
            headers,
            body_raw,
            model,
            received_ms,
            answer,
            status,
            body: OnceLock::new(),
        }
    }

    /// The body as JSON (parsed on first use); `Null` if empty or not JSON.
    pub fn body(&self) -> &Value {
        self.body
            .get_or_init(|| serde_json::from_str(&self.body_raw).unwrap_or(Value::Null))
    }

    /// Whether the body parses as JSON.
    pub fn body_is_json(&self) -> bool {
        !self.body().is_null() || self.body_raw.trim() == "null"
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }

    pub fn is_unscripted(&self) -> bool {
        matches!(self.answer, Answer::Unscripted { .. })
    }

    /// Whether this was a POST /v1/messages request (answered by a step, a rule, or
    /// nothing).
    pub fn is_messages_request(&self) -> bool {
        !matches!(self.answer, Answer::Side)
    }

    /// Rough memory cost, for journal retention limits.
    pub(crate) fn cost(&self) -> usize {
        // Allocations round up and carry headers; BTreeMap nodes add their share.
        let alloc = |n: usize| n.next_multiple_of(16) + 16;
        let headers: usize = self
            .headers
            .iter()
            .map(|(k, v)| alloc(k.len()) + alloc(v.len()) + 64)
            .sum();
        let query = self.query.as_ref().map_or(0, |q| alloc(q.len()));
        let model = self.model.as_ref().map_or(0, |m| alloc(m.len()));
        let answer = match &self.answer {
            Answer::Background { rule } => alloc(rule.len()),
            Answer::Unscripted { message } => alloc(message.len()),
            _ => 0,
        };
        alloc(self.body_raw.capacity())
            + alloc(self.path.len())
            + alloc(self.method.len())
            + headers
            + query
            + model
            + answer
            + 256
    }

    /// One NDJSON line (with the trailing newline).
    pub fn to_ndjson(&self) -> String {
        let mut line = serde_json::to_string(self).expect("a journal entry serializes");
        line.push('\n');
        line
    }
}

impl PartialEq for JournalEntry {
    fn eq(&self, other: &Self) -> bool {
        self.seq == other.seq
            && self.method == other.method
            && self.path == other.path
            && self.query == other.query
            && self.headers == other.headers
            && self.body_raw == other.body_raw
            && self.model == other.model
            && self.received_ms == other.received_ms
            && self.answer == other.answer
            && self.status == other.status
    }
}

/// The serialized form: `body` as JSON, plus `body_raw` only when the exact bytes
/// differ from the compact serialization of `body` (so it always round-trips).
#[derive(Serialize)]
struct EntryDef<'a> {
    seq: u64,
    method: &'a str,
    path: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    query: Option<&'a str>,
    headers: &'a BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<&'a str>,
    received_ms: u64,
    status: u16,
    answer: &'a Answer,
    body: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    body_raw: Option<&'a str>,
}

#[derive(Deserialize)]
struct OwnedEntryDef {
    seq: u64,
    method: String,
    path: String,
    #[serde(default)]
    query: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    model: Option<String>,
    received_ms: u64,
    status: u16,
    answer: Answer,
    #[serde(default)]
    body: Value,
    #[serde(default)]
    body_raw: Option<String>,
}

impl Serialize for JournalEntry {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let body = self.body();
        let compact = serde_json::to_string(body).unwrap_or_default();
        EntryDef {
            seq: self.seq,
            method: &self.method,
            path: &self.path,
            query: self.query.as_deref(),
            headers: &self.headers,
            model: self.model.as_deref(),
            received_ms: self.received_ms,
            status: self.status,
            answer: &self.answer,
            body,
            body_raw: (compact != self.body_raw).then_some(self.body_raw.as_str()),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for JournalEntry {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let def = OwnedEntryDef::deserialize(d)?;
        let body_raw = match def.body_raw {
            Some(raw) => raw,
            None => serde_json::to_string(&def.body).map_err(serde::de::Error::custom)?,
        };
        let entry = JournalEntry::new(
            def.seq,
            def.method,
            def.path,
            def.query,
            def.headers,
            body_raw,
            def.model,
            def.received_ms,
            def.answer,
            def.status,
        );
        let _ = entry.body.set(def.body);
        Ok(entry)
    }
}

/// Writes entries as NDJSON.
pub fn write_ndjson<'a>(
    out: &mut impl Write,
    entries: impl IntoIterator<Item = &'a JournalEntry>,
) -> io::Result<()> {
    for entry in entries {
        serde_json::to_writer(&mut *out, entry)?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// Reads NDJSON written by `write_ndjson`.
pub fn read_ndjson(text: &str) -> Result<Vec<JournalEntry>, serde_json::Error> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(serde_json::from_str)
        .collect()
}

/// In-memory store, optionally bounded by an approximate byte budget (oldest dropped, or
/// with `keep_first` the newest).
pub(crate) struct Store {
    /// Entries with their estimated cost (0 when unbounded).
    entries: VecDeque<(usize, JournalEntry)>,
    cost: usize,
    max_bytes: Option<usize>,
    keep_first: bool,
    dropped: u64,
}

impl Store {
    pub(crate) fn new(max_bytes: Option<usize>, keep_first: bool) -> Store {
        Store {
            entries: VecDeque::new(),
            cost: 0,
            max_bytes,
            keep_first,
            dropped: 0,
        }
    }

    pub(crate) fn push(&mut self, entry: JournalEntry) {
        let Some(max) = self.max_bytes else {
            self.entries.push_back((0, entry));
            return;
        };
        let cost = entry.cost();
        if self.keep_first && self.cost + cost > max {
            self.dropped += 1;
            return;
        }
        self.cost += cost;
        self.entries.push_back((cost, entry));
        while self.cost > max {
            let Some((old, _)) = self.entries.pop_front() else {
                break;
            };
            self.cost -= old;
            self.dropped += 1;
        }
    }

    /// Entries in arrival (`seq`) order.
    pub(crate) fn snapshot(&self, filter: impl Fn(&JournalEntry) -> bool) -> Vec<JournalEntry> {
        let mut out: Vec<JournalEntry> = self
            .entries
            .iter()
            .map(|(_, e)| e)
            .filter(|e| filter(e))
            .cloned()
            .collect();
        out.sort_by_key(|e| e.seq);
        out
    }

    pub(crate) fn dropped(&self) -> u64 {
        self.dropped
    }
}
