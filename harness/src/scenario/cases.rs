//! `cases:` in a scenario file: one file states a matrix. Each case is a set of named
//! parameters substituted into the rest of the file (`{{name}}`), and becomes a scenario of
//! its own, id `<file id>[<case name>]`. Expansion happens when the file is loaded, so
//! everything downstream (run, list, filters, reports, known lists, audit) sees ordinary
//! scenarios.
//!
//! A string that is exactly `{{p}}` becomes the parameter's value, of any type (`null`, a
//! number, a map); `{{p}}` inside a longer string (or a mapping key) becomes its text.

pub use super::cases_form::*;
use super::{id_of, read, Scenario, ScenarioError, ScenarioErrorKind};
use crate::trial_id::ScenarioId;
use regex::Regex;
use serde_json::Value as Json;
use serde_yaml::Value;
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::LazyLock;

pub(super) mod error;
pub use error::{CaseValueError, CasesError};

type Params = Vec<(String, Value)>;

/// One expanded case: its name and its parameters in the order written.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    pub name: String,
    pub params: Params,
    /// Blocks this case adds to `expect:` (`expect:` in a case item): a version block where
    /// one release behaves differently in this case only, or this case's own
    /// `min_version`/`max_version` on the file's block.
    pub expect: serde_yaml::Mapping,
}

static PLACEHOLDER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\{\{\s*([A-Za-z_][A-Za-z0-9_-]*)\s*\}\}").expect("a regex"));

const MAX_AUTO_NAME: usize = 60;

/// The scenarios of one file: each of its cases (`cases:`), or the file itself.
pub fn load(path: &Path, root: &Path) -> Result<Vec<Scenario>, ScenarioError> {
    parse_file(&read(path)?, path, root)
}

/// The scenarios of one file's text: one per case when it declares `cases:`, else the file itself.
pub fn parse_file(text: &str, path: &Path, root: &Path) -> Result<Vec<Scenario>, ScenarioError> {
    let err = |line, column, kind| ScenarioError::new(path, line, column, kind);
    let doc: Value = match serde_yaml::from_str(text) {
        Ok(Value::Mapping(m)) if m.contains_key("cases") => Value::Mapping(m),
        // Not YAML at all: say where, rather than what a plain scenario would make of it.
        Err(e) => {
            let loc = e.location();
            return Err(err(
                loc.as_ref().map(|l| l.line()),
                loc.as_ref().map(|l| l.column()),
                ScenarioErrorKind::NotYaml(e),
            ));
        }
        _ => return Scenario::parse(text, path, root).map(|s| vec![s]),
    };
    let (cases, body) = split(doc).map_err(|e| {
        let (line, column) = super::locate_text(text, "cases:").unzip();
        err(line, column, e.into())
    })?;
    let id = id_of(path, root);
    let mut out = Vec::with_capacity(cases.len());
    for case in &cases {
        let mut expanded = substitute(&body, case);
        add_blocks(&mut expanded, case).map_err(|e| err(None, None, e.into()))?;
        let yaml = serde_yaml::to_string(&expanded).expect("a YAML value serializes");
        // A place in the expanded text means nothing in the file: only why is kept.
        let mut s = Scenario::parse(&yaml, path, root).map_err(|e| {
            let case = case.name.clone();
            let source = e.kind;
            err(None, None, ScenarioErrorKind::InCase { case, source })
        })?;
        s.id = ScenarioId::of_case(&id, &case.name);
        s.case = Some(case.name.clone());
        out.push(s);
    }
    Ok(out)
}

/// The fields a case may give for a block the file already has: the case's own bounds
/// (cases of one file that start behaving as written at different releases).
const CASE_BOUNDS: [&str; 2] = ["min_version", "max_version"];

/// Adds a case's own `expect:` blocks to its expanded scenario; a block the file already
/// has for every case is not replaced, except for the bounds ([`CASE_BOUNDS`]) the case
/// gives it and the file does not.
fn add_blocks(expanded: &mut Value, case: &Case) -> Result<(), CasesError> {
    if case.expect.is_empty() {
        return Ok(());
    }
    let Some(Value::Mapping(expect)) = expanded.get_mut("expect") else {
        return Err(CasesError::NoExpect {
            case: case.name.clone(),
        });
    };
    let shown = |k: &Value| k.as_str().unwrap_or("?").to_string();
    for (key, block) in &case.expect {
        if let (Some(Value::Mapping(file_block)), Value::Mapping(own)) =
            (expect.get_mut(key), block)
        {
            let bounds_only = own
                .keys()
                .all(|k| k.as_str().is_some_and(|k| CASE_BOUNDS.contains(&k)));
            if bounds_only && !own.is_empty() {
                if let Some(k) = own.keys().find(|k| file_block.contains_key(*k)) {
                    return Err(CasesError::BoundTwice {
                        case: case.name.clone(),
                        key: shown(key),
                        bound: shown(k),
                    });
                }
                file_block.extend(own.clone());
                continue;
            }
        }
        if expect.contains_key(key) {
            return Err(CasesError::BlockTwice {
                case: case.name.clone(),
                key: shown(key),
            });
        }
        expect.insert(key.clone(), block.clone());
    }
    Ok(())
}

/// The cases of a file's document, checked against the rest of it (returned without
/// `cases:`). Err: what is wrong, naming the case.
pub fn split(doc: Value) -> Result<(Vec<Case>, Value), CasesError> {
    let Value::Mapping(mut map) = doc else {
        return Err(CasesError::NotAMapping);
    };
    let raw = map.remove("cases").unwrap_or(Value::Null);
    let cases: Cases = serde_yaml::from_value(raw).map_err(CasesError::Form)?;
    let cases = expand(cases)?;
    let body = Value::Mapping(map);
    let mut used = BTreeSet::new();
    placeholders(&body, &mut used);
    if used.is_empty() {
        return Err(CasesError::NoPlaceholder);
    }
    for case in &cases {
        let names: BTreeSet<&str> = case.params.iter().map(|(k, _)| k.as_str()).collect();
        if let Some(p) = used.iter().find(|p| !names.contains(p.as_str())) {
            return Err(CasesError::MissingParameter {
                case: case.name.clone(),
                parameter: p.clone(),
                given: names.iter().map(|n| n.to_string()).collect(),
            });
        }
        if let Some(p) = names.iter().find(|p| !used.contains(**p)) {
            return Err(CasesError::UnusedParameter {
                case: case.name.clone(),
                parameter: p.to_string(),
            });
        }
    }
    Ok((cases, body))
}

/// The cases `cases:` states, named and checked (names unique and usable in an id).
fn expand(cases: Cases) -> Result<Vec<Case>, CasesError> {
    let items = match cases {
        Cases::Product(p) => vec![CaseItem::Product(p)],
        Cases::List(items) => items,
    };
    if items.is_empty() {
        return Err(CasesError::Empty);
    }
    let mut out: Vec<Case> = Vec::new();
    for (index, item) in items.into_iter().enumerate() {
        match item {
            CaseItem::Set(mut set) => {
                let name = match set.remove("name") {
                    Some(Json::String(n)) => Some(n),
                    Some(found) => return Err(CasesError::NameNotString { index, found }),
                    None => None,
                };
                let expect = match set.remove("expect") {
                    None => serde_yaml::Mapping::new(),
                    Some(Json::Object(blocks)) => match to_yaml(&Json::Object(blocks)) {
                        Value::Mapping(m) => patch_indexes(m),
                        _ => unreachable!("an object becomes a mapping"),
                    },
                    Some(found) => return Err(CasesError::ExpectNotBlocks { index, found }),
                };
                if set.is_empty() {
                    return Err(CasesError::NoParameter { index, name });
                }
                let mut params = Vec::new();
                let mut auto = Vec::new();
                for (k, v) in set {
                    let v = generated(&v).map_err(|source| CasesError::Value {
                        index,
                        parameter: k.clone(),
                        source,
                    })?;
                    auto.push(format!("{k}={}", shown(&v)));
                    params.push((k, to_yaml(&v)));
                }
                let name = match name {
                    Some(n) => n,
                    None => auto_name(auto.join(","), index)?,
                };
                out.push(Case {
                    name,
                    params,
                    expect,
                });
            }
            CaseItem::Product(p) => {
                if p.product.is_empty() {
                    return Err(CasesError::EmptyProduct { index });
                }
                // Per parameter: (value name, value).
                let mut axes: Vec<(String, Vec<(String, Value)>)> = Vec::new();
                for (k, vs) in p.product {
                    let k = k
                        .as_str()
                        .ok_or(CasesError::ProductName { index })?
                        .to_string();
                    let in_product = |source| CasesError::ProductValue {
                        index,
                        parameter: k.clone(),
                        source,
                    };
                    let values: Vec<(String, Value)> = match vs {
                        Value::Sequence(list) => list
                            .into_iter()
                            .map(|v| {
                                let j = generated(&yaml_json(v)?)?;
                                Ok((shown(&j), to_yaml(&j)))
                            })
                            .collect::<Result<_, CaseValueError>>()
                            .map_err(in_product)?,
                        Value::Mapping(named) => named
                            .into_iter()
                            .map(|(n, v)| {
                                let n = n.as_str().ok_or(CaseValueError::NameNotString)?;
                                let j = generated(&yaml_json(v)?)?;
                                Ok((n.to_string(), to_yaml(&j)))
                            })
                            .collect::<Result<_, CaseValueError>>()
                            .map_err(in_product)?,
                        _ => {
                            let parameter = k.clone();
                            return Err(CasesError::ProductForm { index, parameter });
                        }
                    };
                    if values.is_empty() {
                        return Err(CasesError::NoValues {
                            index,
                            parameter: k,
                        });
                    }
                    axes.push((k, values));
                }
                // Per combination so far: the value names, and the parameters.
                let mut combos: Vec<(Vec<String>, Params)> = vec![(Vec::new(), Vec::new())];
                for (k, values) in &axes {
                    combos = combos
                        .into_iter()
                        .flat_map(|(names, params)| {
                            values.iter().map(move |(vn, v)| {
                                let mut names = names.clone();
                                let mut params = params.clone();
                                names.push(format!("{k}={vn}"));
                                params.push((k.clone(), v.clone()));
                                (names, params)
                            })
                        })
                        .collect();
                }
                for (names, params) in combos {
                    let name = auto_name(names.join(","), index)?;
                    out.push(Case {
                        name,
                        params,
                        expect: serde_yaml::Mapping::new(),
                    });
                }
            }
        }
    }
    let mut seen = BTreeSet::new();
    for c in &out {
        check_name(&c.name)?;
        if !seen.insert(c.name.as_str()) {
            let name = c.name.clone();
            return Err(CasesError::NamedTwice { name });
        }
    }
    Ok(out)
}

/// A case item is read as JSON, so `frames_patch: {"2": ...}` in its blocks has string
/// keys: they become the frame indexes they name.
fn patch_indexes(mut blocks: serde_yaml::Mapping) -> serde_yaml::Mapping {
    for (_, block) in blocks.iter_mut() {
        let Some(Value::Mapping(patch)) = block.get_mut("frames_patch") else {
            continue;
        };
        *patch = std::mem::take(patch)
            .into_iter()
            .map(
                |(k, v)| match k.as_str().and_then(|s| s.parse::<u64>().ok()) {
                    Some(i) => (Value::from(i), v),
                    None => (k, v),
                },
            )
            .collect();
    }
    blocks
}

fn auto_name(name: String, index: usize) -> Result<String, CasesError> {
    if name.chars().count() > MAX_AUTO_NAME {
        let start = name.chars().take(MAX_AUTO_NAME).collect();
        return Err(CasesError::NameTooLong { index, start });
    }
    Ok(name)
}

fn check_name(name: &str) -> Result<(), CasesError> {
    if name.trim().is_empty() {
        return Err(CasesError::EmptyName);
    }
    if let Some(found) = name
        .chars()
        .find(|c| matches!(c, '/' | '[' | ']') || c.is_control())
    {
        let name = name.to_string();
        return Err(CasesError::NameHolds { name, found });
    }
    Ok(())
}

fn yaml_json(v: Value) -> Result<Json, serde_yaml::Error> {
    serde_yaml::from_value(v)
}

fn to_yaml(v: &Json) -> Value {
    serde_yaml::to_value(v).expect("JSON is YAML")
}

/// `{$repeat: "ab", times: N}` (anywhere in the value) is the string repeated.
fn generated(v: &Json) -> Result<Json, CaseValueError> {
    let m = match v {
        Json::Object(m) if m.contains_key("$repeat") => m,
        Json::Object(m) => {
            return m
                .iter()
                .map(|(k, v)| Ok((k.clone(), generated(v)?)))
                .collect::<Result<_, _>>()
                .map(Json::Object)
        }
        Json::Array(items) => {
            return items
                .iter()
                .map(generated)
                .collect::<Result<_, _>>()
                .map(Json::Array)
        }
        other => return Ok(other.clone()),
    };
    let unit = &m["$repeat"];
    let (Some(unit), Some(times), 2) = (
        unit.as_str(),
        m.get("times").and_then(Json::as_u64),
        m.len(),
    ) else {
        return Err(CaseValueError::Repeat);
    };
    Ok(Json::String(unit.repeat(times as usize)))
}

/// A value as it shows in a case name: strings as they are, the rest as compact JSON.
fn shown(v: &Json) -> String {
    match v {
        Json::String(s) if s.chars().count() > MAX_AUTO_NAME => {
            format!(
                "{}…({} chars)",
                s.chars().take(8).collect::<String>(),
                s.chars().count()
            )
        }
        Json::String(s) => s.clone(),
        // `[` and `]` close a case id: a list or a map shows as its kind and size.
        Json::Array(a) if a.is_empty() => "array".into(),
        Json::Array(a) => format!("array({})", a.len()),
        Json::Object(m) if m.is_empty() => "object".into(),
        Json::Object(m) => format!("object({})", m.len()),
        other => other.to_string(),
    }
}

/// The text a value takes inside a longer string.
fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        other => serde_json::to_string(&yaml_json(other.clone()).unwrap_or(Json::Null))
            .expect("JSON serializes"),
    }
}

fn placeholders(v: &Value, out: &mut BTreeSet<String>) {
    let from = |s: &str, out: &mut BTreeSet<String>| {
        out.extend(PLACEHOLDER.captures_iter(s).map(|c| c[1].to_string()));
    };
    match v {
        Value::String(s) => from(s, out),
        Value::Mapping(m) => {
            for (k, v) in m {
                if let Value::String(k) = k {
                    from(k, out);
                }
                placeholders(v, out);
            }
        }
        Value::Sequence(items) => items.iter().for_each(|v| placeholders(v, out)),
        Value::Tagged(t) => placeholders(&t.value, out),
        _ => {}
    }
}

/// `v` with the case's parameters put in.
pub fn substitute(v: &Value, case: &Case) -> Value {
    let get = |name: &str| case.params.iter().find(|(k, _)| k == name).map(|(_, v)| v);
    let text = |s: &str| {
        PLACEHOLDER
            .replace_all(s, |c: &regex::Captures| {
                get(&c[1]).map_or_else(|| c[0].to_string(), text_of)
            })
            .into_owned()
    };
    match v {
        Value::String(s) => {
            if let Some(c) = PLACEHOLDER.captures(s) {
                if c[0].len() == s.len() {
                    if let Some(v) = get(&c[1]) {
                        return v.clone();
                    }
                }
            }
            Value::String(text(s))
        }
        Value::Mapping(m) => Value::Mapping(
            m.iter()
                .map(|(k, v)| {
                    let k = match k {
                        Value::String(k) => Value::String(text(k)),
                        other => other.clone(),
                    };
                    (k, substitute(v, case))
                })
                .collect(),
        ),
        Value::Sequence(items) => {
            Value::Sequence(items.iter().map(|v| substitute(v, case)).collect())
        }
        Value::Tagged(t) => Value::Tagged(Box::new(serde_yaml::value::TaggedValue {
            tag: t.tag.clone(),
            value: substitute(&t.value, case),
        })),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::script::Line;

    const BASE: &str = "description: \"{{what}}\"\nclient:\n  profile: sdk-py\n  conversation:\n    - request: {subtype: interrupt, extra: \"{{value}}\"}\n      as: req\nexpect:\n  claude-code:\n    exit_code: \"{{code}}\"\n    frames: []\n";

    fn load(text: &str) -> Result<Vec<Scenario>, ScenarioError> {
        parse_file(
            text,
            Path::new("scenarios/edges/m.yaml"),
            Path::new("scenarios"),
        )
    }

    fn request_extra(s: &Scenario) -> Json {
        match &s.file.client.as_ref().unwrap().conversation[0] {
            Line::Request { request, .. } => request["extra"].clone(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_matrix_that_is_not_yaml_is_reported_where_it_breaks() {
        let text = format!(
            "notes: \"a \"quoted\" word\"\n{BASE}cases:\n  - {{what: w, value: 1, code: 0}}\n"
        );
        let e = load(&text).unwrap_err();
        assert!(matches!(*e.kind, ScenarioErrorKind::NotYaml(_)), "{e}");
        assert!(e.kind.to_string().starts_with("not valid YAML: "), "{e}");
        assert_eq!(e.line, Some(1), "{e}");
    }

    #[test]
    fn named_sets_become_scenarios_with_typed_values() {
        let text = format!("{BASE}cases:\n  - {{name: \"extra=null\", what: w1, value: null, code: 0}}\n  - {{what: w2, value: [1, {{a: b}}], code: 1}}\n");
        let got = load(&text).unwrap();
        let ids: Vec<&str> = got.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "edges/m[extra=null]",
                "edges/m[code=1,value=array(2),what=w2]"
            ]
        );
        assert_eq!(request_extra(&got[0]), Json::Null);
        assert_eq!(request_extra(&got[1]), serde_json::json!([1, {"a": "b"}]));
        assert_eq!(got[0].file.description, "w1");
        assert_eq!(got[1].file.expect["claude-code"].exit_code, Some(1));
        assert_eq!(got[0].case.as_deref(), Some("extra=null"));
        assert_eq!(got[1].display_path(), "scenarios/edges/m.yaml");
    }

    #[test]
    fn a_product_gives_every_combination_named_by_its_values() {
        let text = format!("{BASE}cases:\n  product:\n    what: [w]\n    value: {{none: null, long: {{$repeat: ab, times: 3}}}}\n    code: [0, 2]\n");
        let got = load(&text).unwrap();
        let ids: Vec<&str> = got.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "edges/m[what=w,value=none,code=0]",
                "edges/m[what=w,value=none,code=2]",
                "edges/m[what=w,value=long,code=0]",
                "edges/m[what=w,value=long,code=2]"
            ]
        );
        assert_eq!(request_extra(&got[2]), Json::String("ababab".into()));
        let nested = format!("{BASE}cases:\n  - {{name: n, what: w, code: 0, value: [{{k: {{$repeat: a, times: 2}}}}]}}\n");
        assert_eq!(
            request_extra(&load(&nested).unwrap()[0]),
            serde_json::json!([{"k": "aa"}])
        );
    }

    #[test]
    fn a_case_adds_its_own_version_blocks_and_only_to_itself() {
        let text = format!("{BASE}cases:\n  - {{name: old, what: w, value: 1, code: 0, expect: {{\"claude-code@<2.1.100\": {{exit_code: 1}}}}}}\n  - {{name: new, what: w, value: 1, code: 0}}\n");
        let got = load(&text).unwrap();
        let exit_at = |s: &Scenario, v: &str| {
            crate::expectation::for_version(&s.file.expect, "claude-code", v)
                .and_then(|e| e.exit_code)
        };
        assert_eq!(exit_at(&got[0], "2.1.74"), Some(1));
        assert_eq!(exit_at(&got[0], "2.1.330"), Some(0));
        assert_eq!(exit_at(&got[1], "2.1.74"), Some(0));

        let twice = format!("{BASE}cases:\n  - {{what: w, value: 1, code: 0, expect: {{claude-code: {{exit_code: 1}}}}}}\n");
        let err = load(&twice).unwrap_err().to_string();
        assert!(err.contains("`expect.claude-code` is in the file"), "{err}");
        let not_a_map = format!("{BASE}cases:\n  - {{what: w, value: 1, code: 0, expect: [1]}}\n");
        let err = load(&not_a_map).unwrap_err().to_string();
        assert!(err.contains("`expect` takes the blocks"), "{err}");
    }

    #[test]
    fn a_case_gives_its_own_min_version_to_the_files_block_and_only_to_itself() {
        let text = format!("{BASE}cases:\n  - {{name: late, what: w, value: 1, code: 0, expect: {{claude-code: {{min_version: 2.1.300}}}}}}\n  - {{name: early, what: w, value: 1, code: 0}}\n");
        let got = load(&text).unwrap();
        let min = |s: &Scenario| s.file.expect["claude-code"].min_version.clone();
        assert_eq!(min(&got[0]).as_deref(), Some("2.1.300"));
        assert_eq!(min(&got[1]), None);
        assert_eq!(got[0].file.expect["claude-code"].exit_code, Some(0));

        let more = format!("{BASE}cases:\n  - {{name: x, what: w, value: 1, code: 0, expect: {{claude-code: {{min_version: 2.1.300, exit_code: 1}}}}}}\n");
        let err = load(&more).unwrap_err().to_string();
        assert!(err.contains("`expect.claude-code` is in the file"), "{err}");
        let file_has = BASE.replace(
            "  claude-code:\n",
            "  claude-code:\n    min_version: 2.1.1\n",
        );
        assert_ne!(
            file_has, BASE,
            "BASE has a claude-code block to add the bound to"
        );
        let both = format!("{file_has}cases:\n  - {{name: x, what: w, value: 1, code: 0, expect: {{claude-code: {{min_version: 2.1.300}}}}}}\n");
        let err = load(&both).unwrap_err().to_string();
        assert!(
            err.contains("`expect.claude-code.min_version` is in the file"),
            "{err}"
        );
    }

    #[test]
    fn a_placeholder_inside_text_takes_the_value_as_text() {
        let text = "description: \"field {{f}} is {{v}}\"\nprompt: \"p {{v}}\"\nexpect: {claude-code: {frames: []}}\ncases:\n  - {f: request_id, v: null}\n  - {f: x, v: {a: 1}}\n";
        let got = load(text).unwrap();
        assert_eq!(got[0].file.description, "field request_id is null");
        assert_eq!(got[1].file.prompt.as_deref(), Some("p {\"a\":1}"));
    }

    #[test]
    fn a_file_without_cases_is_one_scenario_as_before() {
        let got = load("description: d\nprompt: \"{{x}}\"\nexpect: {claude-code: {frames: []}}\n")
            .unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].id, "edges/m");
        assert_eq!(got[0].case, None);
        assert_eq!(got[0].file.prompt.as_deref(), Some("{{x}}"));
    }

    fn error(cases: &str) -> String {
        let e = load(&format!("{BASE}{cases}")).unwrap_err();
        let msg = e.to_string();
        assert!(msg.starts_with("scenarios/edges/m.yaml"), "{msg}");
        msg
    }

    #[test]
    fn a_placeholder_a_case_does_not_give_is_an_error_naming_file_and_case() {
        let msg = error("cases:\n  - {name: short, what: w, value: 1}\n");
        assert!(msg.contains("case `short`"), "{msg}");
        assert!(msg.contains("{{code}}"), "{msg}");
    }

    #[test]
    fn a_case_naming_no_parameter_is_an_error() {
        let msg = error("cases:\n  - {what: w, value: 1, code: 0}\n  - {name: empty}\n");
        assert!(
            msg.contains("cases[1] (`empty`): the case names no parameter"),
            "{msg}"
        );
    }

    #[test]
    fn a_parameter_used_nowhere_is_an_error() {
        let msg = error("cases:\n  - {name: typo, what: w, value: 1, code: 0, valeu: 2}\n");
        assert!(
            msg.contains("case `typo`: parameter `valeu` is used nowhere"),
            "{msg}"
        );
    }

    #[test]
    fn duplicate_case_names_are_an_error() {
        let msg = error("cases:\n  - {name: a, what: w, value: 1, code: 0}\n  - {name: a, what: w, value: 2, code: 0}\n");
        assert!(msg.contains("case `a` is named twice"), "{msg}");
    }

    #[test]
    fn a_name_that_cannot_be_part_of_an_id_is_an_error() {
        let msg = error("cases:\n  - {name: \"a/b\", what: w, value: 1, code: 0}\n");
        assert!(msg.contains("cannot hold '/'"), "{msg}");
    }

    #[test]
    fn a_case_that_makes_a_bad_scenario_is_an_error_naming_the_case() {
        let msg = error("cases:\n  - {name: ok, what: w, value: 1, code: 0}\n  - {name: bad, what: w, value: 1, code: not-a-number}\n");
        assert!(msg.contains("case `bad`: "), "{msg}");
        assert!(msg.contains("exit_code"), "{msg}");
    }

    #[test]
    fn cases_that_use_no_placeholder_are_an_error() {
        let e = load(
            "description: d\nprompt: p\nexpect: {claude-code: {frames: []}}\ncases:\n  - {x: 1}\n",
        )
        .unwrap_err();
        assert!(e.to_string().contains("uses no `{{parameter}}`"), "{e}");
        assert_eq!(e.line, Some(4), "{e}");
    }

    #[test]
    fn a_file_with_cases_is_not_one_scenario() {
        let e = Scenario::parse(
            &format!("{BASE}cases:\n  - {{what: w, value: 1, code: 0}}\n"),
            Path::new("scenarios/edges/m.yaml"),
            Path::new("scenarios"),
        )
        .unwrap_err();
        assert!(matches!(*e.kind, ScenarioErrorKind::DeclaresCases), "{e}");
    }
}
