//! stub-api: a scriptable stand-in for the Anthropic Messages API.
//!
//! A [`Script`] lists one [`Step`] per `POST /v1/messages` request; a [`StubServer`]
//! serves it on loopback (point a CLI at it with `ANTHROPIC_BASE_URL`) and records
//! every request in a journal. A request the script does not cover gets an HTTP 400
//! and is flagged; the last step is never repeated implicitly.

mod body;
mod faults;
pub mod journal;
pub mod loadgen;
mod matching;
pub mod script;
mod server;
mod sse;

pub use body::Disconnect;
pub use journal::{Answer, JournalEntry};
pub use script::{
    Block, BuiltinRule, Faults, HttpError, Match, Message, Response, Rule, Script, Step,
    StopReason, StreamError, Times, ToolUse, Usage,
};
pub use server::{OnRequest, ServeOptions, StubServer};
