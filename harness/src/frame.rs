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

/// Every name [`json_type`] gives.
pub const JSON_TYPES: [&str; 6] = ["null", "bool", "number", "string", "array", "object"];

/// What a frame pattern says about the kind of frame it is about: its `type`, and its
/// `subtype` when the pattern names one. A placeholder or operator (`$string`,
/// `{$regex: ..}`) names none: it is about every kind. The one rule lining patterns up
/// with frames (the report's diff, `record`'s blocks).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PatternKind {
    pub ty: Option<String>,
    pub subtype: Option<String>,
}

impl PatternKind {
    pub fn of(pattern: &Value) -> PatternKind {
        let literal = |key| {
            pattern
                .get(key)
                .and_then(Value::as_str)
                .filter(|s| !s.starts_with('$'))
                .map(str::to_string)
        };
        PatternKind {
            ty: literal("type"),
            subtype: literal("subtype"),
        }
    }

    /// Whether a frame of this `type` and `subtype` is of the kind (a pattern naming no
    /// type admits none: it is not about a frame kind).
    pub fn admits(&self, ty: &str, subtype: Option<&str>) -> bool {
        self.ty.as_deref() == Some(ty)
            && (self.subtype.is_none() || self.subtype.as_deref() == subtype)
    }

    /// Whether `frame` is of the kind.
    pub fn admits_frame(&self, frame: &Value) -> bool {
        let ty = frame
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default();
        self.admits(ty, frame.get("subtype").and_then(Value::as_str))
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

    #[test]
    fn a_pattern_is_about_the_kind_it_names_literally() {
        let init = json!({"type": "system", "subtype": "init"});
        let any_system = PatternKind::of(&json!({"type": "system", "subtype": "$string"}));
        assert!(any_system.admits_frame(&init));
        assert!(any_system.admits_frame(&json!({"type": "system", "subtype": "status"})));
        assert!(!any_system.admits_frame(&json!({"type": "result"})));
        let only_init = PatternKind::of(&init);
        assert!(only_init.admits_frame(&init));
        assert!(!only_init.admits_frame(&json!({"type": "system", "subtype": "status"})));
        assert!(!PatternKind::of(&json!({"any_order": []})).admits_frame(&init));
    }
}
