//! The words every command uses for a stream-json frame: its kind and the JSON types in it.

use serde_json::Value;

/// `type`, or `type/subtype` when the frame has a string subtype.
pub fn frame_kind(v: &Value) -> String {
    let ty = v.get("type").and_then(Value::as_str).unwrap_or("(no type)");
    match v.get("subtype").and_then(Value::as_str) {
        Some(sub) => format!("{ty}/{sub}"),
        None => ty.to_string(),
    }
}

/// A `result` frame (the end of a turn).
pub fn is_result(v: &Value) -> bool {
    v.get("type").and_then(Value::as_str) == Some("result")
}

/// The JSON type of a value: `null`, `bool`, `number`, `string`, `array` or `object`.
pub fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn kinds_name_the_subtype_when_there_is_one() {
        assert_eq!(
            frame_kind(&json!({"type": "system", "subtype": "init"})),
            "system/init"
        );
        assert_eq!(
            frame_kind(&json!({"type": "assistant", "subtype": 3})),
            "assistant"
        );
        assert_eq!(frame_kind(&json!({"x": 1})), "(no type)");
        assert!(is_result(&json!({"type": "result"})) && !is_result(&json!({"type": "user"})));
        assert_eq!(json_type(&json!([1])), "array");
    }
}
