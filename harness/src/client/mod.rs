//! The scripted client: a scenario's stdin as the client side of the conversation.
//!
//! - [`script`]: the `client:` block (conversation lines, responders)
//! - [`profile`]: named SDKs (`sdk-py`, `sdk-ts`): argv, env, initialize, frame shapes
//! - [`session`]: the state machine fed each stdout frame, saying what to write next
//! - [`mcp`]: an in-process (SDK) MCP server answering `mcp_message`
//! - [`template`]: `$name.path` values taken from frames already seen
//! - [`pump`]: the runner's side: feeding frames in, writing lines out
//! - [`ClientError`]: why a script does not load, or a line cannot be written
//!
//! Plain `stdin:` lists run through the same client (each line written as is,
//! `{after_results: N}` pauses, `close_stdin` as the close policy).

mod error;
pub mod mcp;
pub mod profile;
pub mod pump;
pub mod script;
pub mod session;
pub mod template;

pub use error::ClientError;
pub use script::{ClientSpec, Line};
pub use session::{Client, ClientLog, ClosePolicy, Io, Plan};

#[cfg(test)]
mod tests;
