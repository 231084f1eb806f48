//! An in-process (SDK) MCP server, as the Agent SDKs host one: the CLI sends it
//! JSON-RPC inside `mcp_message` control requests and gets `{mcp_response: ...}` back.

use super::error::ClientError;
use crate::client::template::{fill, Bindings};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpServer {
    /// `serverInfo.name` (default: the request's `server_name`).
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default = "default_version")]
    pub version: String,
    /// `tools/list` answers these (`{name, description, inputSchema}`).
    #[serde(default)]
    pub tools: Vec<Value>,
    /// `tools/call` result per tool name; `$arguments.x` is the call's argument `x`.
    #[serde(default)]
    pub results: BTreeMap<String, Value>,
}

fn default_version() -> String {
    "1.0.0".into()
}

impl McpServer {
    /// The control_response payload for one `mcp_message` request (its `request` object).
    pub fn answer(&self, request: &Value) -> Result<Value, ClientError> {
        let msg = &request["message"];
        let method = msg["method"].as_str().unwrap_or_default();
        let server = self
            .name
            .clone()
            .or_else(|| request["server_name"].as_str().map(str::to_string))
            .unwrap_or_default();
        let Some(id) = msg.get("id").cloned() else {
            // A notification: the TypeScript SDK still answers with an empty result.
            return Ok(json!({"mcp_response": {"jsonrpc": "2.0", "result": {}, "id": 0}}));
        };
        let result = match method {
            "initialize" => json!({
                "protocolVersion": msg["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": server, "version": self.version},
            }),
            "tools/list" => json!({ "tools": self.tools }),
            "tools/call" => {
                let name = msg["params"]["name"].as_str().unwrap_or_default();
                let Some(result) = self.results.get(name) else {
                    return Ok(rpc_error(
                        id,
                        &format!("no scripted result for tool {name}"),
                    ));
                };
                let mut b = Bindings::new();
                b.insert("arguments".into(), msg["params"]["arguments"].clone());
                fill(result, &b)?
            }
            other => return Ok(rpc_error(id, &format!("method not found: {other}"))),
        };
        Ok(json!({"mcp_response": {"jsonrpc": "2.0", "id": id, "result": result}}))
    }
}

fn rpc_error(id: Value, message: &str) -> Value {
    json!({"mcp_response": {"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": message}}})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server() -> McpServer {
        serde_yaml::from_str(
            "tools: [{name: add}]\nresults: {add: {content: [{type: text, text: $arguments.a}]}}\n",
        )
        .unwrap()
    }

    fn req(message: Value) -> Value {
        json!({"subtype": "mcp_message", "server_name": "calc", "message": message})
    }

    #[test]
    fn the_handshake_and_a_call() {
        let s = server();
        let init = s
            .answer(&req(json!({"method": "initialize", "id": 0, "params": {"protocolVersion": "2025-11-25"}})))
            .unwrap();
        assert_eq!(
            init["mcp_response"]["result"]["serverInfo"],
            json!({"name": "calc", "version": "1.0.0"})
        );
        assert_eq!(
            init["mcp_response"]["result"]["protocolVersion"],
            "2025-11-25"
        );
        let note = s
            .answer(&req(json!({"method": "notifications/initialized"})))
            .unwrap();
        assert_eq!(note["mcp_response"]["id"], 0);
        let list = s
            .answer(&req(json!({"method": "tools/list", "id": 1})))
            .unwrap();
        assert_eq!(list["mcp_response"]["result"]["tools"][0]["name"], "add");
        let call = s
            .answer(&req(json!({"method": "tools/call", "id": 2, "params": {"name": "add", "arguments": {"a": "40"}}})))
            .unwrap();
        assert_eq!(
            call["mcp_response"],
            json!({"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "40"}]}})
        );
        let unknown = s
            .answer(&req(json!({"method": "resources/list", "id": 3})))
            .unwrap();
        assert_eq!(unknown["mcp_response"]["error"]["code"], -32601);
    }
}
