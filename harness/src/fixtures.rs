//! `$FIXTURES` in what a scenario hands the CLI: its args, env values, and the text of
//! `files` / `home_files`. It names the project's `targets/fixtures` folder as an absolute
//! path, so a scenario can start a test fixture (the MCP server in `mcp-server/`) from
//! the trial's sandbox. The stub script and the expectations do not see it.

use crate::scenario::{FileContent, Scenario};
use serde_json::Value;
use std::borrow::Cow;
use std::path::{Path, PathBuf};

pub const VARIABLE: &str = "$FIXTURES";

/// The fixtures folder of the project a scenario belongs to: `<root>/targets/fixtures`,
/// where `<root>/scenarios/` holds the scenario file.
pub fn dir_of(scenario: &Scenario) -> PathBuf {
    let depth = scenario.id.split('/').count();
    let scenarios = scenario
        .path
        .ancestors()
        .nth(depth)
        .unwrap_or(Path::new("."));
    let root = scenarios.parent().unwrap_or(Path::new("."));
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    root.join("targets").join("fixtures")
}

/// The scenario with `$FIXTURES` replaced, or itself when it does not use the variable.
pub fn resolve(scenario: &Scenario) -> Cow<'_, Scenario> {
    if !uses_variable(scenario) {
        return Cow::Borrowed(scenario);
    }
    let dir = dir_of(scenario).display().to_string();
    let sub = |s: &String| s.replace(VARIABLE, &dir);
    let mut resolved = scenario.clone();
    let file = &mut resolved.file;
    file.args = file.args.iter().map(sub).collect();
    file.env.values_mut().for_each(|v| *v = sub(v));
    for content in file.files.values_mut().chain(file.home_files.values_mut()) {
        substitute_content(content, &dir);
    }
    for expect in file.expect.values_mut() {
        if let Some(args) = &mut expect.args {
            *args = args.iter().map(sub).collect();
        }
        expect.env.values_mut().for_each(|v| *v = sub(v));
    }
    Cow::Owned(resolved)
}

fn uses_variable(scenario: &Scenario) -> bool {
    let file = &scenario.file;
    let in_str = |s: &String| s.contains(VARIABLE);
    let in_content = |c: &FileContent| match c {
        FileContent::Text(t) => t.contains(VARIABLE),
        FileContent::Json(v) => v.to_string().contains(VARIABLE),
    };
    file.args.iter().any(in_str)
        || file.env.values().any(in_str)
        || file.files.values().any(in_content)
        || file.home_files.values().any(in_content)
        || file
            .expect
            .values()
            .any(|e| e.args.iter().flatten().any(in_str) || e.env.values().any(in_str))
}

fn substitute_content(content: &mut FileContent, dir: &str) {
    fn walk(v: &mut Value, dir: &str) {
        match v {
            Value::String(s) => *s = s.replace(VARIABLE, dir),
            Value::Array(a) => a.iter_mut().for_each(|x| walk(x, dir)),
            Value::Object(m) => m.values_mut().for_each(|x| walk(x, dir)),
            _ => {}
        }
    }
    match content {
        FileContent::Text(t) => *t = t.replace(VARIABLE, dir),
        FileContent::Json(v) => walk(v, dir),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(extra: &str) -> Scenario {
        let text = format!(
            "description: x\nprompt: p\n{extra}\nexpect:\n  claude-code:\n    exit_code: 0\n"
        );
        Scenario::parse(
            &text,
            Path::new("proj/scenarios/mcp/x.yaml"),
            Path::new("proj/scenarios"),
        )
        .unwrap()
    }

    #[test]
    fn the_folder_is_targets_fixtures_beside_scenarios() {
        let s = scenario("");
        assert!(
            dir_of(&s).ends_with("proj/targets/fixtures"),
            "{:?}",
            dir_of(&s)
        );
    }

    #[test]
    fn a_scenario_without_the_variable_is_borrowed() {
        assert!(matches!(resolve(&scenario("args: [-x]")), Cow::Borrowed(_)));
    }

    #[test]
    fn args_env_and_file_contents_are_substituted() {
        let s = scenario(
            "args: [--mcp-config, \"$FIXTURES/a.json\"]\nenv: {X: \"$FIXTURES\"}\nfiles: {a.json: {cmd: [\"$FIXTURES/s.mjs\"]}, b.txt: \"at $FIXTURES\"}\nhome_files: {c: \"$FIXTURES/c\"}",
        );
        let r = resolve(&s);
        let dir = dir_of(&s).display().to_string();
        assert_eq!(r.file.args[1], format!("{dir}/a.json"));
        assert_eq!(r.file.env["X"], dir);
        let FileContent::Json(json) = &r.file.files["a.json"] else {
            panic!("json content")
        };
        assert_eq!(json["cmd"][0], format!("{dir}/s.mjs"));
        assert_eq!(
            r.file.files["b.txt"],
            FileContent::Text(format!("at {dir}"))
        );
        assert_eq!(
            r.file.home_files["c"],
            FileContent::Text(format!("{dir}/c"))
        );
    }
}
