//! The scripted client: a scenario's stdin as the client side of the conversation.
//!
//! - [`script`]: the `client:` block (conversation lines, responders)
//! - [`profile`]: named SDKs (`sdk-py`, `sdk-ts`): argv, env, initialize, frame shapes
//! - [`session`]: the state machine fed each stdout frame, saying what to write next
//! - [`mcp`]: an in-process (SDK) MCP server answering `mcp_message`
//! - [`template`]: `$name.path` values taken from frames already seen
//! - [`pump`]: the runner's side: feeding frames in, writing lines out
//!
//! Plain `stdin:` lists run through the same client (each line written as is,
//! `{after_results: N}` pauses, `close_stdin` as the close policy).

pub mod mcp;
pub mod profile;
pub mod pump;
pub mod script;
pub mod session;
pub mod template;

pub use script::{ClientSpec, Line};
pub use session::{Client, ClientLog, ClosePolicy, Io, Plan};

use crate::scenario::{CloseStdin, Scenario, StdinLine, TargetExpect};

/// The client plan for a scenario on a target, `None` when stdin is not used at all.
pub fn plan(scenario: &Scenario, expect: &TargetExpect) -> Option<Plan> {
    if let Some(spec) = &scenario.file.client {
        let profile = spec
            .profile
            .as_deref()
            .map(|p| profile::get(p).expect("checked when the scenario was loaded"));
        let initialize = match (&spec.initialize, profile) {
            (Some(serde_json::Value::Bool(false)), _) | (_, None) => None,
            (over, Some(p)) => Some(p.initialize(over.as_ref())),
        };
        return Some(Plan {
            profile,
            initialize,
            lines: spec.conversation.clone(),
            responders: spec.respond.clone(),
            close: ClosePolicy::WhenSettled {
                turns: scenario.turns(expect),
            },
            one_first_write: spec.one_first_write,
            split_utf8_chars: spec.split_utf8_chars,
        });
    }
    let lines = scenario.stdin(expect)?;
    Some(Plan {
        profile: None,
        initialize: None,
        lines: lines
            .iter()
            .map(|l| match l {
                StdinLine::AfterResults { after_results } => Line::AfterResults(*after_results),
                other => Line::Raw(other.to_line().expect("a line to write")),
            })
            .collect(),
        responders: Vec::new(),
        close: match scenario.file.close_stdin {
            CloseStdin::Immediately => ClosePolicy::Immediately,
            CloseStdin::AfterResults { after_results } => ClosePolicy::AfterResults(after_results),
        },
        one_first_write: false,
        split_utf8_chars: false,
    })
}

/// Checks what parsing cannot: the profile exists and renders the options.
pub fn validate(spec: &ClientSpec) -> Result<(), String> {
    if let Some(name) = &spec.profile {
        profile::get(name)?.argv(&spec.options)?;
    } else if !spec.options.is_empty() {
        return Err("`options` need a `profile` to render them".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests;
