//! Values the client writes may take parts of frames it has seen: a string that is
//! exactly `$name` or `$name.path.to[0].field` becomes the JSON value found there.
//! `$$` escapes a leading `$`.

use super::error::ClientError;
use serde_json::Value;
use std::collections::HashMap;

/// Named JSON values a template may refer to.
pub type Bindings = HashMap<String, Value>;

/// `value` with every `$name.path` string replaced; an unknown name or path is an error.
pub fn fill(value: &Value, bindings: &Bindings) -> Result<Value, ClientError> {
    Ok(match value {
        Value::String(s) => fill_string(s, bindings)?,
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| fill(v, bindings))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| Ok((k.clone(), fill(v, bindings)?)))
                .collect::<Result<_, ClientError>>()?,
        ),
        other => other.clone(),
    })
}

fn fill_string(s: &str, bindings: &Bindings) -> Result<Value, ClientError> {
    if let Some(rest) = s.strip_prefix("$$") {
        return Ok(Value::String(format!("${rest}")));
    }
    let Some(expr) = s.strip_prefix('$') else {
        return Ok(Value::String(s.to_string()));
    };
    let name_end = expr.find(['.', '[']).unwrap_or(expr.len());
    let (name, path) = expr.split_at(name_end);
    let root = bindings.get(name).ok_or_else(|| {
        let mut known: Vec<String> = bindings.keys().cloned().collect();
        known.sort();
        ClientError::UnknownName {
            template: s.to_string(),
            name: name.to_string(),
            known,
        }
    })?;
    lookup(root, path)
        .cloned()
        .ok_or_else(|| ClientError::NothingAt {
            template: s.to_string(),
            path: path.to_string(),
            name: name.to_string(),
        })
}

/// Follows `.key` and `[n]` steps.
fn lookup<'a>(mut v: &'a Value, mut path: &str) -> Option<&'a Value> {
    while !path.is_empty() {
        if let Some(rest) = path.strip_prefix('[') {
            let close = rest.find(']')?;
            let idx: usize = rest[..close].parse().ok()?;
            v = v.get(idx)?;
            path = &rest[close + 1..];
        } else {
            let rest = path.strip_prefix('.')?;
            let end = rest.find(['.', '[']).unwrap_or(rest.len());
            v = v.get(&rest[..end])?;
            path = &rest[end..];
        }
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_and_paths_are_replaced() {
        let mut b = Bindings::new();
        b.insert(
            "request".into(),
            json!({"input": {"command": "touch x"}, "list": [1, {"k": "v"}]}),
        );
        let t = json!({"behavior": "allow", "updatedInput": "$request.input", "k": "$request.list[1].k", "lit": "$$request", "plain": "a $b"});
        assert_eq!(
            fill(&t, &b).unwrap(),
            json!({"behavior": "allow", "updatedInput": {"command": "touch x"}, "k": "v", "lit": "$request", "plain": "a $b"})
        );
        assert!(fill(&json!("$nobody.x"), &b)
            .unwrap_err()
            .to_string()
            .contains("no frame or request is named `nobody`"));
        assert!(fill(&json!("$request.missing"), &b)
            .unwrap_err()
            .to_string()
            .contains("nothing at `.missing`"));
    }
}
