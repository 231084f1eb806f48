//! The client script as written in a scenario's `client:` block: the conversation lines
//! the client writes (and the frames it waits for), and the responders that answer the
//! CLI's own `control_request`s.

use super::error::ClientError;
use crate::client::mcp::McpServer;
use crate::client::profile;
use crate::pattern::PatternValue;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// `client:`: the client side of the conversation (the mirror of the stub's script).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClientSpec {
    /// A named SDK (`sdk-py`, `sdk-ts`): its exact argv, environment, `initialize`
    /// request, user-frame shape and request-id format, and the SDK contract invariants.
    /// Without a profile the scenario's own args are used and nothing is sent unasked.
    #[serde(default)]
    pub profile: Option<String>,
    /// SDK options that change the argv, rendered the way the profile's SDK renders them
    /// (`can_use_tool: true`, `max_turns: 3`, `include_partial_messages: true`, ...).
    #[serde(default)]
    pub options: BTreeMap<String, Value>,
    /// Fields merged over the profile's `initialize` request (`hooks`, `sdkMcpServers`,
    /// ...); `false` sends no initialize at all. Its generated id is named `initialize`.
    #[serde(default)]
    pub initialize: Option<Value>,
    /// What the client writes, in order; `wait` lines hold the rest back.
    #[serde(default)]
    pub conversation: Vec<Line>,
    /// Rules answering each `control_request` the CLI sends; the first that matches wins.
    /// A request no rule answers (and no `wait` line expects) is a divergence.
    #[serde(default)]
    pub respond: Vec<Responder>,
    /// `true`: what the client writes before the CLI printed anything (the `initialize`
    /// request and the conversation up to its first `wait`) goes to stdin in one write,
    /// as a host that buffers its first lines does; otherwise one write per line.
    #[serde(default)]
    pub one_first_write: bool,
    /// `true`: every multi-byte UTF-8 character the client writes is cut after its first
    /// byte: the two parts go to stdin in separate writes with a short pause between them
    /// (the stub's `split_utf8_chars` fault, on the input side).
    #[serde(default)]
    pub split_utf8_chars: bool,
}

impl ClientSpec {
    /// Checks what parsing cannot: the profile exists and renders the options.
    pub fn validate(&self) -> Result<(), ClientError> {
        if let Some(name) = &self.profile {
            profile::get(name)?.argv(&self.options)?;
        } else if !self.options.is_empty() {
            return Err(ClientError::OptionsWithoutProfile);
        }
        Ok(())
    }

    /// User turns the conversation starts (each ends with a `result`).
    pub fn user_turns(&self) -> usize {
        self.conversation
            .iter()
            .filter(|l| match l {
                Line::User(_) => true,
                Line::Send(v) => v.get("type").and_then(Value::as_str) == Some("user"),
                _ => false,
            })
            .count()
    }
}

/// One conversation line.
#[derive(Debug, Clone)]
pub enum Line {
    /// A user turn, shaped like the profile's SDK shapes it.
    User(Value),
    /// A frame written as is (after `$name` substitution).
    Send(Value),
    /// A line written byte for byte (malformed input).
    Raw(String),
    /// A client `control_request` with a generated `request_id`; `name` lets
    /// expectations `{$ref: name}` it and later lines use `$name.request_id`.
    Request {
        request: Value,
        name: Option<String>,
    },
    /// Hold the next lines until `count` more frames match `pattern`; `name` binds the last.
    Wait {
        pattern: PatternValue,
        count: usize,
        name: Option<String>,
    },
    /// Hold the next lines until this many `result` frames came in all.
    AfterResults(usize),
    /// Answer a CLI request bound earlier by a `wait ... as: name`.
    Reply { to: String, answer: Answer },
    /// Close stdin.
    Close,
}

/// How a control request is answered.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// `{subtype: success, response: <value>}`; `None` leaves `response` out.
    Success(Option<Value>),
    /// `{subtype: error, error: <text>}`.
    Error(String),
}

/// A rule for the CLI's control requests.
#[derive(Debug, Clone)]
pub struct Responder {
    /// Pattern on the request's `request` object (`{subtype: can_use_tool, tool_name: Bash}`).
    pub on: PatternValue,
    pub action: ResponderAction,
    /// Answer at most this many requests, then let the next rule match.
    pub times: Option<usize>,
}

#[derive(Debug, Clone)]
pub enum ResponderAction {
    Answer(Answer),
    /// Write nothing (an SDK that never answers).
    Silent,
    /// Close stdin instead of answering.
    CloseStdin,
    /// An in-process (SDK) MCP server answering `mcp_message` JSON-RPC.
    Mcp(McpServer),
}

/// The YAML form of a line: one verb key, plus `as`/`count` where they apply.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct LineFields {
    /// A user turn: a string or a list of content blocks.
    #[serde(default)]
    user: Option<Value>,
    /// With a string `user`: the text written this many times over (a long prompt
    /// without pasting it: `user: "0123456789 "`, `repeat: 20000` is 220 KB).
    #[serde(default)]
    repeat: Option<usize>,
    /// A frame written as is; strings `$name.path` are replaced.
    #[serde(default)]
    send: Option<Value>,
    /// A line written byte for byte.
    #[serde(default)]
    raw: Option<String>,
    /// A client control request (`{subtype: interrupt}`); the id is generated.
    #[serde(default)]
    request: Option<Value>,
    /// Wait for a frame matching this pattern.
    #[serde(default)]
    wait: Option<PatternValue>,
    /// With `wait`: how many matching frames (default 1).
    #[serde(default)]
    count: Option<usize>,
    /// With `wait`/`request`: a name for the frame or the request.
    #[serde(default, rename = "as")]
    name: Option<String>,
    /// Wait until this many `result` frames came in all.
    #[serde(default)]
    after_results: Option<usize>,
    /// Answer the CLI request named by an earlier `wait ... as:`.
    #[serde(default)]
    reply: Option<String>,
    /// With `reply`: the success `response` (omit for none).
    #[serde(default)]
    response: Option<Value>,
    /// With `reply`: answer with an error instead.
    #[serde(default)]
    error: Option<String>,
    /// `close: true`: close stdin here.
    #[serde(default)]
    close: Option<bool>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(untagged)]
enum LineDef {
    /// `close`: close stdin here.
    Word(String),
    Fields(Box<LineFields>),
}

impl<'de> Deserialize<'de> for Line {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let def = LineDef::deserialize(d)?;
        Line::try_from(def).map_err(serde::de::Error::custom)
    }
}

impl JsonSchema for Line {
    fn schema_name() -> String {
        "ClientLine".into()
    }
    fn json_schema(gen: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
        LineDef::json_schema(gen)
    }
}

impl TryFrom<LineDef> for Line {
    type Error = ClientError;

    fn try_from(def: LineDef) -> Result<Line, ClientError> {
        let f = match def {
            LineDef::Word(w) if w == "close" => return Ok(Line::Close),
            LineDef::Word(word) => return Err(ClientError::OneWordLine { word }),
            LineDef::Fields(f) => *f,
        };
        let verbs = [
            ("user", f.user.is_some()),
            ("send", f.send.is_some()),
            ("raw", f.raw.is_some()),
            ("request", f.request.is_some()),
            ("wait", f.wait.is_some()),
            ("after_results", f.after_results.is_some()),
            ("reply", f.reply.is_some()),
            ("close", f.close.is_some()),
        ];
        let given: Vec<&'static str> = verbs.iter().filter(|v| v.1).map(|v| v.0).collect();
        if given.len() != 1 {
            return Err(ClientError::LineVerbs { given });
        }
        let verb = given[0];
        let misplaced =
            |key: &'static str, ok: &'static [&'static str]| -> Result<(), ClientError> {
                if ok.contains(&verb) {
                    Ok(())
                } else {
                    Err(ClientError::Misplaced {
                        key,
                        goes_with: ok,
                        verb,
                    })
                }
            };
        if f.count.is_some() {
            misplaced("count", &["wait"])?;
        }
        if f.name.is_some() {
            misplaced("as", &["wait", "request"])?;
        }
        if f.response.is_some() || f.error.is_some() {
            misplaced("response/error", &["reply"])?;
        }
        if f.repeat.is_some() {
            misplaced("repeat", &["user"])?;
        }
        Ok(match verb {
            "user" => Line::User(repeated(f.user.expect("checked"), f.repeat)?),
            "send" => Line::Send(f.send.expect("checked")),
            "raw" => Line::Raw(f.raw.expect("checked")),
            "request" => {
                let request = f.request.expect("checked");
                if request.get("subtype").and_then(Value::as_str).is_none() {
                    return Err(ClientError::RequestWithoutSubtype);
                }
                Line::Request {
                    request,
                    name: f.name,
                }
            }
            "wait" => Line::Wait {
                pattern: f.wait.expect("checked"),
                count: f.count.unwrap_or(1).max(1),
                name: f.name,
            },
            "after_results" => Line::AfterResults(f.after_results.expect("checked")),
            "reply" => Line::Reply {
                to: f.reply.expect("checked"),
                answer: answer(f.response, f.error)?,
            },
            _ => Line::Close,
        })
    }
}

fn repeated(user: Value, times: Option<usize>) -> Result<Value, ClientError> {
    match (times, user) {
        (None, user) => Ok(user),
        (Some(0), _) => Err(ClientError::RepeatZero),
        (Some(n), Value::String(text)) => Ok(Value::String(text.repeat(n))),
        (Some(_), _) => Err(ClientError::RepeatNotString),
    }
}

fn answer(response: Option<Value>, error: Option<String>) -> Result<Answer, ClientError> {
    match (response, error) {
        (Some(_), Some(_)) => Err(ClientError::ResponseAndError),
        (None, Some(e)) => Ok(Answer::Error(e)),
        (r, None) => Ok(Answer::Success(r)),
    }
}

/// The YAML form of a responder: `on`, then exactly one action.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ResponderDef {
    /// Pattern on the CLI request's `request` object; a string is short for `{subtype: <it>}`.
    on: Value,
    /// Answer with success and this `response` (`$request.input` is the request's input).
    #[serde(default)]
    reply: Option<Value>,
    /// Answer with success and no `response` field.
    #[serde(default)]
    ack: Option<bool>,
    /// Answer with an error reply carrying this text.
    #[serde(default)]
    error: Option<String>,
    /// `true`: never answer.
    #[serde(default)]
    silent: Option<bool>,
    /// `true`: close stdin instead of answering.
    #[serde(default)]
    close_stdin: Option<bool>,
    /// An in-process MCP server answering `mcp_message` requests.
    #[serde(default)]
    mcp: Option<McpServer>,
    /// Answer at most this many requests.
    #[serde(default)]
    times: Option<usize>,
}

impl<'de> Deserialize<'de> for Responder {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let def = ResponderDef::deserialize(d)?;
        Responder::try_from(def).map_err(serde::de::Error::custom)
    }
}

impl JsonSchema for Responder {
    fn schema_name() -> String {
        "ClientResponder".into()
    }
    fn json_schema(gen: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
        ResponderDef::json_schema(gen)
    }
}

impl TryFrom<ResponderDef> for Responder {
    type Error = ClientError;

    fn try_from(d: ResponderDef) -> Result<Responder, ClientError> {
        let on = match d.on {
            Value::String(s) => serde_json::json!({ "subtype": s }),
            other => other,
        };
        let on = crate::pattern::Pattern::compile(&on)
            .map(PatternValue)
            .map_err(ClientError::Pattern)?;
        let mut actions = Vec::new();
        if let Some(r) = d.reply {
            actions.push(ResponderAction::Answer(Answer::Success(Some(r))));
        }
        if d.ack == Some(true) {
            actions.push(ResponderAction::Answer(Answer::Success(None)));
        }
        if let Some(e) = d.error {
            actions.push(ResponderAction::Answer(Answer::Error(e)));
        }
        if d.silent == Some(true) {
            actions.push(ResponderAction::Silent);
        }
        if d.close_stdin == Some(true) {
            actions.push(ResponderAction::CloseStdin);
        }
        if let Some(m) = d.mcp {
            actions.push(ResponderAction::Mcp(m));
        }
        if actions.len() != 1 {
            return Err(ClientError::ResponderActions {
                found: actions.len(),
            });
        }
        Ok(Responder {
            on,
            action: actions.pop().expect("one action"),
            times: d.times,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(yaml: &str) -> Result<ClientSpec, serde_yaml::Error> {
        serde_yaml::from_str(yaml)
    }

    #[test]
    fn lines_and_responders_parse() {
        let s = spec(
            r#"
profile: sdk-py
conversation:
  - user: hi
  - wait: {type: stream_event}
    count: 4
  - request: {subtype: interrupt}
    as: int
  - reply: perm
    error: late
  - close
respond:
  - on: can_use_tool
    reply: {behavior: allow, updatedInput: $request.input}
  - on: {subtype: hook_callback}
    silent: true
"#,
        )
        .unwrap();
        assert_eq!(s.conversation.len(), 5);
        assert!(matches!(&s.conversation[1], Line::Wait { count: 4, .. }));
        assert!(matches!(&s.conversation[2], Line::Request { name: Some(n), .. } if n == "int"));
        assert!(matches!(
            &s.conversation[3],
            Line::Reply { to, answer: Answer::Error(e) } if to == "perm" && e == "late"
        ));
        assert!(matches!(s.conversation[4], Line::Close));
        assert!(matches!(s.respond[1].action, ResponderAction::Silent));
    }

    #[test]
    fn a_line_takes_one_verb() {
        let e = spec("conversation:\n  - {user: hi, raw: x}\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("exactly one of"), "{e}");
        let e = spec("conversation:\n  - {user: hi, count: 2}\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("`count` goes with wait"), "{e}");
        let e = spec("conversation:\n  - {request: {mode: x}}\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("needs a `subtype`"), "{e}");
        let e = spec("respond:\n  - {on: x, silent: true, error: y}\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("exactly one of reply"), "{e}");
        let e = spec("conversation:\n  - {send: {}, repeat: 2}\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("`repeat` goes with user"), "{e}");
        let e = spec("conversation:\n  - {user: [{type: text}], repeat: 2}\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("needs `user` to be a string"), "{e}");
    }

    #[test]
    fn repeat_writes_the_user_text_that_many_times() {
        let s = spec("conversation:\n  - {user: \"ab \", repeat: 3}\n").unwrap();
        assert!(matches!(&s.conversation[0], Line::User(Value::String(t)) if t == "ab ab ab "));
    }
}
