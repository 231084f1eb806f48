//! Client profiles: how a named SDK version starts the CLI (argv, environment) and
//! talks to it (initialize request, handshake order, user-frame shape, request ids).
//! The data lives in `targets/claude-code/clients/*.yaml`, one file per SDK: a new SDK
//! release is one file change.

use super::error::ClientError;
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::OnceLock;

const FILES: &[(&str, &str)] = &[
    (
        "sdk-py",
        include_str!("../../../targets/claude-code/clients/sdk-py.yaml"),
    ),
    (
        "sdk-ts",
        include_str!("../../../targets/claude-code/clients/sdk-ts.yaml"),
    ),
];

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    pub name: String,
    /// The package, for messages ("which SDK it would break").
    pub sdk: String,
    pub version: String,
    pub args_head: Vec<String>,
    pub options: Vec<OptionFlag>,
    pub args_tail: Vec<String>,
    /// Options the SDK always sets, unless the scenario sets them.
    #[serde(default)]
    pub defaults: BTreeMap<String, Value>,
    pub env: BTreeMap<String, String>,
    pub initialize: Value,
    pub handshake: Handshake,
    pub user_frame: Value,
    pub user_content: UserContent,
    pub request_id: RequestIdStyle,
}

/// An SDK option and the argv it becomes; `$value` is the option's value.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OptionFlag {
    pub name: String,
    pub args: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Handshake {
    /// The first user frame waits for the initialize response (Python).
    Await,
    /// The first user frame follows the initialize request at once (TypeScript).
    Pipelined,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UserContent {
    /// `content: "text"`.
    String,
    /// `content: [{type: text, text: "text"}]`.
    Blocks,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestIdStyle {
    /// `req_<n>_<8 hex>`.
    Python,
    /// Base-36 characters (up to 13 from the SDK; 11 generated here).
    Typescript,
}

/// Every profile, parsed once.
pub fn all() -> &'static BTreeMap<String, Profile> {
    static ALL: OnceLock<BTreeMap<String, Profile>> = OnceLock::new();
    ALL.get_or_init(|| {
        FILES
            .iter()
            .map(|(name, text)| {
                let p: Profile = serde_yaml::from_str(text)
                    .unwrap_or_else(|e| panic!("targets/claude-code/clients/{name}.yaml: {e}"));
                assert_eq!(p.name, *name, "profile file name and `name` differ");
                (p.name.clone(), p)
            })
            .collect()
    })
}

pub fn get(name: &str) -> Result<&'static Profile, ClientError> {
    all().get(name).ok_or_else(|| ClientError::UnknownProfile {
        name: name.to_string(),
        known: all().keys().cloned().collect(),
    })
}

impl Profile {
    /// The argv for these options; an option the profile does not know is an error.
    pub fn argv(&self, options: &BTreeMap<String, Value>) -> Result<Vec<String>, ClientError> {
        for name in options.keys() {
            if !self.options.iter().any(|o| &o.name == name) {
                return Err(ClientError::UnknownOption {
                    option: name.clone(),
                    profile: self.name.clone(),
                    known: self.options.iter().map(|o| o.name.clone()).collect(),
                });
            }
        }
        let mut args = self.args_head.clone();
        for flag in &self.options {
            let value = options.get(&flag.name).or(self.defaults.get(&flag.name));
            let text = match value {
                None | Some(Value::Null) | Some(Value::Bool(false)) => continue,
                Some(Value::Bool(true)) => String::new(),
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
            };
            args.extend(flag.args.iter().map(|a| a.replace("$value", &text)));
        }
        args.extend(self.args_tail.iter().cloned());
        Ok(args)
    }

    /// The initialize request with the scenario's fields merged over the profile's.
    pub fn initialize(&self, overrides: Option<&Value>) -> Value {
        let mut init = self.initialize.clone();
        if let (Some(Value::Object(over)), Value::Object(base)) = (overrides, &mut init) {
            for (k, v) in over {
                base.insert(k.clone(), v.clone());
            }
        }
        init
    }

    /// A user frame carrying `content` (a string is shaped as the SDK shapes it).
    pub fn user_frame(&self, content: &Value) -> Value {
        let content = match (content, self.user_content) {
            (Value::String(s), UserContent::Blocks) => {
                serde_json::json!([{"type": "text", "text": s}])
            }
            (other, _) => other.clone(),
        };
        let mut b = crate::client::template::Bindings::new();
        b.insert("content".into(), content);
        crate::client::template::fill(&self.user_frame, &b).expect("profiles use only $content")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn profiles_render_the_sdk_argv() {
        let py = get("sdk-py").unwrap();
        let opts: BTreeMap<String, Value> = [
            ("max_turns".into(), json!(3)),
            ("can_use_tool".into(), json!(true)),
        ]
        .into();
        assert_eq!(
            py.argv(&opts).unwrap().join(" "),
            "--output-format stream-json --verbose --system-prompt  --max-turns 3 --permission-prompt-tool stdio --input-format stream-json"
        );
        let ts = get("sdk-ts").unwrap();
        assert_eq!(
            ts.argv(&BTreeMap::new()).unwrap().join(" "),
            "--output-format stream-json --verbose --input-format stream-json"
        );
        let plan: BTreeMap<String, Value> = [("permission_mode".into(), json!("plan"))].into();
        assert!(ts
            .argv(&plan)
            .unwrap()
            .contains(&"--permission-mode=plan".to_string()));
        let bad: BTreeMap<String, Value> = [("maxturns".into(), json!(1))].into();
        assert!(py
            .argv(&bad)
            .unwrap_err()
            .to_string()
            .contains("`maxturns`"));
        assert!(get("sdk-go")
            .unwrap_err()
            .to_string()
            .contains("sdk-py, sdk-ts"));
    }

    #[test]
    fn user_frames_and_initialize() {
        let ts = get("sdk-ts").unwrap();
        assert_eq!(
            ts.user_frame(&json!("hi"))["message"]["content"],
            json!([{"type": "text", "text": "hi"}])
        );
        let py = get("sdk-py").unwrap();
        assert_eq!(py.user_frame(&json!("hi"))["message"]["content"], "hi");
        assert_eq!(
            py.initialize(Some(&json!({"hooks": {"PreToolUse": []}}))),
            json!({"subtype": "initialize", "hooks": {"PreToolUse": []}})
        );
    }
}
