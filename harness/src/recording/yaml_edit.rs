//! Writing recorded patterns into a scenario file without losing what a person wrote.
//!
//! No YAML library keeps comments when it edits a file, so this edits lines: it finds
//! `expect: <target>:` by indentation and replaces only its `frames:` and `exit_code:`,
//! writing each frame on one line in flow style ([`to_yaml_flow`]). Every other line,
//! comments included, stays as it was; [`validate_edit`] proves it by parsing both.

use super::error::RecordError;
use crate::scenario::Scenario;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// A pattern value in YAML flow style, on one line (`{type: system, subtype: init}`).
/// Writes the value as it is: escaping `$` is the generaliser's job.
pub fn to_yaml_flow(v: &Value) -> String {
    let mut out = String::new();
    write_flow(v, &mut out);
    out
}

fn write_flow(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => out.push_str(&yaml_str(s)),
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_flow(x, out);
            }
            out.push(']');
        }
        Value::Object(m) => {
            out.push('{');
            for (i, (k, x)) in m.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&yaml_str(k));
                out.push_str(": ");
                write_flow(x, out);
            }
            out.push('}');
        }
    }
}

/// A string as a YAML scalar: plain when that reads back as the same string, else double-quoted.
pub fn yaml_str(s: &str) -> String {
    const WORDS: &[&str] = &[
        "true", "false", "null", "yes", "no", "on", "off", "y", "n", "inf", "nan", "infinity",
    ];
    let plain = s
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./$".contains(c))
        && !WORDS.contains(&s.to_ascii_lowercase().as_str());
    if plain {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20
                || (0x7f..=0x9f).contains(&(c as u32))
                || matches!(
                    c,
                    '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
                ) =>
            {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// A line that holds YAML content (not blank, not only a comment).
fn is_content(line: &str) -> bool {
    let t = line.trim();
    !t.is_empty() && !t.starts_with('#')
}

/// The value after `key:` on a line (trimmed, without a trailing comment), if the line is that key.
fn key_value<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let t = line.trim_start();
    let rest = [key.to_string(), format!("\"{key}\""), format!("'{key}'")]
        .iter()
        .find_map(|k| t.strip_prefix(k.as_str()))?;
    let rest = rest.strip_prefix(':')?;
    if !(rest.is_empty() || rest.starts_with([' ', '\n', '\r'])) {
        return None;
    }
    let rest = rest.trim();
    Some(match rest.find(" #") {
        _ if rest.starts_with('#') => "",
        Some(i) if !rest.starts_with(['"', '\'']) => rest[..i].trim_end(),
        _ => rest,
    })
}

/// The end (exclusive) of the block that starts after line `start` and holds lines
/// indented more than `indent`; trailing blank and comment lines are left outside.
fn block_end(lines: &[String], start: usize, indent: usize) -> usize {
    let mut end = start + 1;
    let mut last_content = start + 1;
    while end < lines.len() {
        let l = &lines[end];
        if is_content(l) {
            if indent_of(l) <= indent {
                break;
            }
            last_content = end + 1;
        }
        end += 1;
    }
    last_content
}

/// Where `expect: <key>:` is in a file's lines.
struct TargetBlock {
    /// The line of `<key>:`.
    key_line: usize,
    /// The end (exclusive) of its block.
    end: usize,
    /// The indentation of its fields.
    field_indent: usize,
}

impl TargetBlock {
    fn locate(lines: &[String], key: &str) -> Result<TargetBlock, RecordError> {
        let (expect, expect_end) = expect_lines(lines)?;
        let child =
            first_content_indent(&lines[expect + 1..expect_end]).ok_or(RecordError::ExpectEmpty)?;
        let key_line = (expect + 1..expect_end)
            .find(|&i| indent_of(&lines[i]) == child && key_value(&lines[i], key).is_some())
            .ok_or_else(|| RecordError::NoBlock { key: key.into() })?;
        if !key_value(&lines[key_line], key).unwrap_or("").is_empty() {
            return Err(RecordError::BlockFlowStyle { key: key.into() });
        }
        let end = block_end(lines, key_line, child);
        let field_indent = first_content_indent(&lines[key_line + 1..end])
            .ok_or_else(|| RecordError::BlockEmpty { key: key.into() })?;
        Ok(TargetBlock {
            key_line,
            end,
            field_indent,
        })
    }

    /// The end (exclusive) of the value of the field at line `at`: deeper lines, and
    /// `- ` items at the field's own indentation; trailing blank and comment lines stay out.
    fn value_end(&self, lines: &[String], at: usize) -> usize {
        let field = self.field_indent;
        let mut stop = at + 1;
        let mut last = at + 1;
        while stop < self.end {
            let l = &lines[stop];
            if is_content(l) {
                let i = indent_of(l);
                let item = i == field && l.trim_start().starts_with('-');
                if i < field || (i == field && !item) {
                    break;
                }
                last = stop + 1;
            }
            stop += 1;
        }
        last
    }

    /// The line of the field `name:`, if the block has one.
    fn field(&self, lines: &[String], name: &str) -> Option<usize> {
        (self.key_line + 1..self.end).find(|&i| {
            indent_of(&lines[i]) == self.field_indent && key_value(&lines[i], name).is_some()
        })
    }
}

/// The line of the top-level `expect:` and the end (exclusive) of its block.
fn expect_lines(lines: &[String]) -> Result<(usize, usize), RecordError> {
    let expect = lines
        .iter()
        .position(|l| indent_of(l) == 0 && key_value(l, "expect").is_some())
        .ok_or(RecordError::NoExpect)?;
    if !key_value(&lines[expect], "expect").unwrap_or("").is_empty() {
        return Err(RecordError::ExpectFlowStyle);
    }
    Ok((expect, block_end(lines, expect, 0)))
}

/// Adds `<key>:` with `fields` (given the indentation of a field) at the end of `expect:`.
fn insert_block(
    lines: &mut Vec<String>,
    key: &str,
    fields: impl FnOnce(&str) -> Vec<String>,
) -> Result<(), RecordError> {
    let (expect, end) = expect_lines(lines)?;
    let child = first_content_indent(&lines[expect + 1..end]).unwrap_or(2);
    let mut new = vec![format!("{}{key}:", " ".repeat(child))];
    new.extend(fields(&" ".repeat(child + 2)));
    lines.splice(end..end, new);
    Ok(())
}

fn first_content_indent(lines: &[String]) -> Option<usize> {
    lines.iter().find(|l| is_content(l)).map(|l| indent_of(l))
}

/// Replaces `frames:` (when `frames` is given) and `exit_code:` (when `exit_code` is given)
/// under `expect: <key>:` in a scenario file's text, leaving every other line as it is.
/// Frames are written one per line in flow style. Fails on layouts it cannot edit by
/// indentation (flow-style `expect`).
pub fn rewrite_expectation(
    text: &str,
    key: &str,
    frames: Option<&[Value]>,
    exit_code: Option<i32>,
) -> Result<String, RecordError> {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    if let Some(frames) = frames {
        replace_frames(&mut lines, key, frames)?;
    }
    if let Some(code) = exit_code {
        replace_exit_code(&mut lines, key, code)?;
    }
    let mut out = lines.join("\n");
    out.push('\n');
    Ok(out)
}

fn replace_frames(lines: &mut Vec<String>, key: &str, frames: &[Value]) -> Result<(), RecordError> {
    let block = TargetBlock::locate(lines, key)?;
    let new = frames_lines(&" ".repeat(block.field_indent), frames);
    let Some(at) = block.field(lines, "frames") else {
        lines.splice(block.end..block.end, new);
        return Ok(());
    };
    let last = block.value_end(lines, at);
    lines.splice(at..last, new);
    Ok(())
}

/// `frames:` and one line per frame, in flow style.
fn frames_lines(pad: &str, frames: &[Value]) -> Vec<String> {
    if frames.is_empty() {
        return vec![format!("{pad}frames: []")];
    }
    let mut out = vec![format!("{pad}frames:")];
    out.extend(
        frames
            .iter()
            .map(|f| format!("{pad}  - {}", to_yaml_flow(f))),
    );
    out
}

fn replace_exit_code(lines: &mut Vec<String>, key: &str, code: i32) -> Result<(), RecordError> {
    let block = TargetBlock::locate(lines, key)?;
    let field = block.field_indent;
    let new = format!("{}exit_code: {code}", " ".repeat(field));
    if let Some(at) = block.field(lines, "exit_code") {
        let comment = lines[at]
            .find(" #")
            .map(|i| lines[at][lines[at][..i].trim_end().len()..].to_string())
            .unwrap_or_default();
        lines[at] = format!("{new}{comment}");
        return Ok(());
    }
    // After the frames block if there is one, else at the end of the target.
    let after = block
        .field(lines, "frames")
        .map(|at| {
            let mut j = at + 1;
            while j < block.end && (!is_content(&lines[j]) || indent_of(&lines[j]) > field) {
                j += 1;
            }
            while j > at + 1 && !is_content(&lines[j - 1]) {
                j -= 1;
            }
            j
        })
        .unwrap_or(block.end);
    lines.insert(after, new);
    Ok(())
}

/// Writes the version block `expect: <key>:` (`claude-code@2.1.74`): its `frames_patch`
/// (left out when empty) and `exit_code` (left out when `None`). A block the file already
/// has keeps every other field; a new one goes at the end of `expect:`.
pub fn write_version_block(
    text: &str,
    key: &str,
    exit_code: Option<i32>,
    patch: &BTreeMap<usize, Value>,
) -> Result<String, RecordError> {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    match TargetBlock::locate(&lines, key) {
        Ok(block) => {
            let pad = " ".repeat(block.field_indent);
            let mut fields = Vec::new();
            if let Some(code) = exit_code {
                fields.push(format!("{pad}exit_code: {code}"));
            }
            fields.extend(patch_lines(&pad, patch));
            // Remove the old fields (last first, so the earlier line numbers hold), then
            // put the new ones where the block ends.
            let mut old: Vec<(usize, usize)> = ["exit_code", "frames_patch"]
                .iter()
                .filter_map(|f| block.field(&lines, f))
                .map(|at| (at, block.value_end(&lines, at)))
                .collect();
            old.sort_by_key(|r| std::cmp::Reverse(r.0));
            let mut end = block.end;
            for (at, stop) in old {
                lines.drain(at..stop);
                end -= stop - at;
            }
            lines.splice(end..end, fields);
        }
        Err(RecordError::NoBlock { .. }) => insert_block(&mut lines, key, |pad| {
            let mut new: Vec<String> = exit_code
                .map(|code| format!("{pad}exit_code: {code}"))
                .into_iter()
                .collect();
            new.extend(patch_lines(pad, patch));
            new
        })?,
        Err(e) => return Err(e),
    }
    let mut out = lines.join("\n");
    out.push('\n');
    Ok(out)
}

/// Adds the target's first expectation, `expect: <key>:` with `frames` (when given) and
/// `exit_code` (when given), at the end of `expect:`. Fails when the file has that block.
pub fn write_new_block(
    text: &str,
    key: &str,
    frames: Option<&[Value]>,
    exit_code: Option<i32>,
) -> Result<String, RecordError> {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    match TargetBlock::locate(&lines, key) {
        Ok(_) => return Err(RecordError::BlockExists { key: key.into() }),
        Err(RecordError::NoBlock { .. }) => {}
        Err(e) => return Err(e),
    }
    insert_block(&mut lines, key, |pad| {
        let mut new = frames.map_or_else(Vec::new, |f| frames_lines(pad, f));
        new.extend(exit_code.map(|code| format!("{pad}exit_code: {code}")));
        new
    })?;
    let mut out = lines.join("\n");
    out.push('\n');
    Ok(out)
}

fn patch_lines(pad: &str, patch: &BTreeMap<usize, Value>) -> Vec<String> {
    if patch.is_empty() {
        return Vec::new();
    }
    let mut out = vec![format!("{pad}frames_patch:")];
    out.extend(
        patch
            .iter()
            .map(|(i, v)| format!("{pad}  {i}: {}", to_yaml_flow(v))),
    );
    out
}

/// What a block must hold after an edit: each field's value, `Null` where it must be absent.
pub type Fields = Vec<(&'static str, serde_yaml::Value)>;

/// A version block's `exit_code` and `frames_patch` as [`Fields`] (absent: none, empty).
pub fn version_block_fields(
    exit_code: Option<i32>,
    patch: &BTreeMap<usize, Value>,
) -> Result<Fields, RecordError> {
    use serde_yaml::Value as Yaml;
    let patch = match patch.is_empty() {
        true => Yaml::Null,
        false => to_yaml(patch)?,
    };
    let code = exit_code.map_or(Yaml::Null, |c| Yaml::from(i64::from(c)));
    Ok(vec![("exit_code", code), ("frames_patch", patch)])
}

/// `frames` and `exit_code` as [`Fields`], each only when given.
pub fn recorded_fields(
    frames: Option<&[Value]>,
    exit_code: Option<i32>,
) -> Result<Fields, RecordError> {
    let mut out = Fields::new();
    if let Some(f) = frames {
        out.push(("frames", to_yaml(f)?));
    }
    if let Some(code) = exit_code {
        out.push(("exit_code", serde_yaml::Value::from(i64::from(code))));
    }
    Ok(out)
}

fn to_yaml(v: impl serde::Serialize) -> Result<serde_yaml::Value, RecordError> {
    serde_yaml::to_value(v).map_err(|source| RecordError::ToYaml { source })
}

/// Checks a scenario after an edit of `expect: <key>:` ([`rewrite_expectation`],
/// [`write_version_block`], [`write_new_block`]): it parses (ranges and patch indexes
/// included), the block holds `fields` as given, and with those fields taken out of both
/// texts (and the block, where that empties it) nothing else in the file changed meaning.
pub fn validate_edit(
    old: &str,
    new: &str,
    path: &Path,
    scenarios_root: &Path,
    key: &str,
    fields: &Fields,
) -> Result<(), RecordError> {
    use serde_yaml::Value as Yaml;
    Scenario::parse(new, path, scenarios_root)?;
    let parse = |t: &str| -> Result<Yaml, _> {
        serde_yaml::from_str(t).map_err(|e| RecordError::yaml(path, e))
    };
    let (mut a, mut b) = (parse(old)?, parse(new)?);
    if let Some((name, _)) = fields.iter().find(|(k, v)| b["expect"][key][*k] != *v) {
        return Err(RecordError::NotHeld {
            key: key.into(),
            field: name,
        });
    }
    for v in [&mut a, &mut b] {
        let Some(expect) = v.get_mut("expect").and_then(Yaml::as_mapping_mut) else {
            continue;
        };
        if let Some(m) = expect.get_mut(key).and_then(Yaml::as_mapping_mut) {
            for (name, _) in fields {
                m.remove(*name);
            }
            if m.is_empty() {
                expect.remove(key);
            }
        }
    }
    if a != b {
        return Err(RecordError::ChangesMore {
            key: key.into(),
            fields: fields.iter().map(|(k, _)| *k).collect(),
        });
    }
    Ok(())
}

/// Writes a version block into one case's own `expect:` (its one-line item in `cases:`,
/// `- {name: "x", ...}`), adding `expect:` to the item when it has none.
pub fn write_case_block(
    text: &str,
    case: &str,
    key: &str,
    exit_code: Option<i32>,
    patch: &BTreeMap<usize, Value>,
) -> Result<String, RecordError> {
    let names = [
        format!("name: {}", yaml_str(case)),
        format!("name: \"{case}\""),
        format!("name: {case},"),
    ];
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let found: Vec<usize> = (lines.iter().enumerate())
        .filter(|(_, l)| l.trim_start().starts_with("- {") && item_end(l).is_some())
        .filter(|(_, l)| names.iter().any(|n| l.contains(n.as_str())))
        .map(|(i, _)| i)
        .collect();
    let [at] = found[..] else {
        return Err(RecordError::CaseItems {
            case: case.into(),
            found: found.len(),
            key: key.into(),
        });
    };
    let mut block = Vec::new();
    if let Some(code) = exit_code {
        block.push(format!("exit_code: {code}"));
    }
    if !patch.is_empty() {
        let entries: Vec<String> = (patch.iter())
            // Quoted: a case item is read as JSON, whose keys are strings.
            .map(|(i, v)| format!("\"{i}\": {}", to_yaml_flow(v)))
            .collect();
        block.push(format!("frames_patch: {{{}}}", entries.join(", ")));
    }
    let entry = format!("{}: {{{}}}", yaml_str(key), block.join(", "));
    let line = &mut lines[at];
    if line.contains(&format!("{}:", yaml_str(key))) {
        return Err(RecordError::CaseBlockExists {
            case: case.into(),
            key: key.into(),
        });
    }
    match line.find("expect: {") {
        Some(i) => line.insert_str(i + "expect: {".len(), &format!("{entry}, ")),
        None => {
            let end = item_end(line).expect("a one-line item");
            line.insert_str(end, &format!(", expect: {{{entry}}}"));
        }
    }
    let mut out = lines.join("\n");
    if text.ends_with('\n') {
        out.push('\n');
    }
    Ok(out)
}

/// Where a one-line flow item's closing `}` is: the last one, with at most a comment after it.
fn item_end(line: &str) -> Option<usize> {
    let end = line.rfind('}')?;
    let rest = line[end + 1..].trim();
    (rest.is_empty() || rest.starts_with('#')).then_some(end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn flow_style_reads_back_as_the_same_value() {
        let v = json!({"type": "system", "s": "$uuid", "e": "$$x", "k": "a: b, c", "t": "true", "n": null,
            "num": 0.0004, "neg": -3, "arr": [], "obj": {}, "u": "日本語 \u{85} \u{7f}", "q": "it's \"x\"\\",
            "empty": "", "dash": "-x", "yes": "yes", "path": "$WORKSPACE/a.txt", "1": 1});
        let text = format!("- {}\n", to_yaml_flow(&v));
        let back: Vec<Value> = serde_yaml::from_str(&text).unwrap();
        assert_eq!(back[0], v, "{text}");
        assert!(
            text.starts_with("- {type: system, s: $uuid, e: $$x, "),
            "{text}"
        );
    }

    const FILE: &str = "# yaml-language-server: $schema=../schema.json
description: d # keep me
prompt: p
expect:
  caliban:
    frames:
      - {type: a}   # caliban's
    exit_code: 0
  # a comment about claude-code
  claude-code:
    ignore: [{type: rate_limit_event}]
    frames:
    - {type: system}
    # a comment inside frames
    - type: result
      result: x

    exit_code: 1  # was 1
    requests: {count: 1}
  claude-code@>=9.0.0:
    frames: [{type: z}]
";

    fn check_rewrite(text: &str, key: &str, frames: Option<&[Value]>, code: Option<i32>) -> String {
        let new = rewrite_expectation(text, key, frames, code).unwrap();
        let root = Path::new("scenarios");
        let fields = recorded_fields(frames, code).unwrap();
        validate_edit(text, &new, &root.join("t/x.yaml"), root, key, &fields)
            .unwrap_or_else(|e| panic!("{e}\n{new}"));
        new
    }

    #[test]
    fn rewrite_touches_only_frames_and_exit_code_of_the_target() {
        let frames = vec![
            json!({"type": "system", "subtype": "init"}),
            json!({"type": "result"}),
        ];
        let new = check_rewrite(FILE, "claude-code", Some(&frames), Some(0));
        assert!(new.contains("    frames:\n      - {type: system, subtype: init}\n      - {type: result}\n\n    exit_code: 0  # was 1\n    requests: {count: 1}\n"), "{new}");
        assert!(new.contains("description: d # keep me"));
        assert!(new.contains("      - {type: a}   # caliban's\n    exit_code: 0\n"));
        assert!(new.contains("  # a comment about claude-code\n"));
        assert!(!new.contains("a comment inside frames"));
        // Other targets: flow frames and a block without exit_code.
        let new = check_rewrite(FILE, "claude-code@>=9.0.0", Some(&frames), Some(3));
        assert!(new.ends_with("  claude-code@>=9.0.0:\n    frames:\n      - {type: system, subtype: init}\n      - {type: result}\n    exit_code: 3\n"), "{new}");
        let new = check_rewrite(FILE, "caliban", Some(&[]), None);
        assert!(
            new.contains("  caliban:\n    frames: []\n    exit_code: 0\n"),
            "{new}"
        );
    }

    #[test]
    fn rewrite_refuses_flow_style_and_missing_targets() {
        let flow = "description: d\nexpect: {claude-code: {frames: []}}\n";
        assert!(rewrite_expectation(flow, "claude-code", Some(&[]), None)
            .unwrap_err()
            .to_string()
            .contains("flow style"));
        assert!(rewrite_expectation(FILE, "nope", Some(&[]), None)
            .unwrap_err()
            .to_string()
            .contains("no `nope:`"));
    }

    #[test]
    fn a_first_block_goes_at_the_end_of_expect_and_nothing_else_changes() {
        let frames = vec![json!({"type": "system", "subtype": "init"})];
        let root = Path::new("scenarios");
        let path = root.join("t/x.yaml");
        let fields = recorded_fields(Some(&frames), Some(2)).unwrap();
        let text = format!("{FILE}# after expect\ntags: [x]\n");
        let new = write_new_block(&text, "qwen-code", Some(&frames), Some(2)).unwrap();
        assert_eq!(
            new,
            format!("{FILE}  qwen-code:\n    frames:\n      - {{type: system, subtype: init}}\n    exit_code: 2\n# after expect\ntags: [x]\n")
        );
        validate_edit(&text, &new, &path, root, "qwen-code", &fields).unwrap();
        // Text output: the exit code alone.
        let new = write_new_block(FILE, "qwen-code", None, Some(0)).unwrap();
        assert_eq!(new, format!("{FILE}  qwen-code:\n    exit_code: 0\n"));
        assert!(write_new_block(FILE, "caliban", Some(&frames), None)
            .unwrap_err()
            .to_string()
            .contains("by now"));
        // The check sees a block holding more than was recorded, or another block touched.
        let more = format!("{FILE}  qwen-code:\n    mode: subsequence\n    exit_code: 2\n");
        let fields = recorded_fields(None, Some(2)).unwrap();
        assert!(
            validate_edit(FILE, &more, &path, root, "qwen-code", &fields)
                .unwrap_err()
                .to_string()
                .contains("would change more than `expect.qwen-code`'s exit_code")
        );
        let other = FILE.replace("exit_code: 1  # was 1", "exit_code: 0")
            + "  qwen-code:\n    exit_code: 2\n";
        assert!(validate_edit(FILE, &other, &path, root, "qwen-code", &fields).is_err());
        let wrong = format!("{FILE}  qwen-code:\n    exit_code: 3\n");
        assert!(
            validate_edit(FILE, &wrong, &path, root, "qwen-code", &fields)
                .unwrap_err()
                .to_string()
                .contains("`expect.qwen-code.exit_code` does not hold")
        );
    }

    #[test]
    fn a_version_block_is_added_or_rewritten_and_nothing_else_changes() {
        let patch = BTreeMap::from([
            (0, json!({"$merge": {"model": "$absent"}})),
            (1, Value::Null),
            (2, json!([{"type": "user"}, {"type": "result"}])),
        ]);
        let root = Path::new("scenarios");
        let path = root.join("t/x.yaml");
        let check = |text: &str, key: &str, code: Option<i32>| {
            let new = write_version_block(text, key, code, &patch).unwrap();
            validate_edit(
                text,
                &new,
                &path,
                root,
                key,
                &version_block_fields(code, &patch).unwrap(),
            )
            .unwrap_or_else(|e| panic!("{e}\n{new}"));
            new
        };
        let file = "description: d\nprompt: p\nexpect:\n  claude-code:\n    frames:\n      - {type: system, model: m}\n      - {type: assistant}\n      - {type: result}\n    exit_code: 0\n# trailing comment\n";
        let new = check(file, "claude-code@2.1.74", Some(1));
        assert!(new.ends_with("    exit_code: 0\n  claude-code@2.1.74:\n    exit_code: 1\n    frames_patch:\n      0: {$merge: {model: $absent}}\n      1: null\n      2: [{type: user}, {type: result}]\n# trailing comment\n"), "{new}");
        // Rewriting it: the old fields go, a field the block had besides stays.
        let with_more = new.replace(
            "  claude-code@2.1.74:\n",
            "  claude-code@2.1.74:\n    timeout: 9 # kept\n",
        );
        let again = check(&with_more, "claude-code@2.1.74", None);
        assert!(
            again.contains(
                "  claude-code@2.1.74:\n    timeout: 9 # kept\n    frames_patch:\n      0: "
            ),
            "{again}"
        );
        assert!(!again.contains("exit_code: 1"), "{again}");
    }

    #[test]
    fn a_case_block_goes_into_that_case_item_only() {
        let text = "description: \"{{w}}\"\nprompt: p\nexpect:\n  claude-code:\n    exit_code: \"{{code}}\"\ncases:\n  - {name: \"a\", w: x, code: 0}\n  - {name: \"b\", w: y, code: 0} # kept\n";
        let patch = BTreeMap::from([(1usize, json!(null))]);
        let one = write_case_block(text, "b", "claude-code@2.1.74", Some(3), &patch).unwrap();
        assert!(one.contains("  - {name: \"a\", w: x, code: 0}\n"), "{one}");
        assert!(
            one.contains("{name: \"b\", w: y, code: 0, expect: {\"claude-code@2.1.74\": {exit_code: 3, frames_patch: {\"1\": null}}}} # kept"),
            "{one}"
        );
        // A second release's block joins the case's `expect:`; the same key again is refused.
        let two =
            write_case_block(&one, "b", "claude-code@2.1.197", Some(4), &BTreeMap::new()).unwrap();
        assert!(
            two.contains(
                "expect: {\"claude-code@2.1.197\": {exit_code: 4}, \"claude-code@2.1.74\""
            ),
            "{two}"
        );
        assert!(write_case_block(&two, "b", "claude-code@2.1.74", None, &patch).is_err());
        assert!(write_case_block(text, "nope", "claude-code@2.1.74", None, &patch).is_err());
    }
}
