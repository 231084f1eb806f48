//! What a target offers (`features`) and the process one run starts: decided by the plan
//! as a [`Launch`] (its environment naming the sandbox's places, [`Place`]), made an
//! [`Invocation`] by the sandbox in one pass ([`Launch::fill`]). What every dialect shares,
//! filled in by the dialect's own flags and environment.

use crate::dialect::{Dialect, PrintMode};
use crate::install::spec::{version_lt, Target, DUMMY_API_KEY};
use crate::scenario::{Scenario, TargetExpect};
use std::path::{Path, PathBuf};

/// The process to start for one trial.
#[derive(Debug, Clone)]
pub struct Invocation {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    /// Whose conventions it follows (which variables a report shows).
    pub dialect: Dialect,
}

impl Invocation {
    /// The command line as a person would type it (for reports).
    pub fn display(&self) -> String {
        let env: Vec<String> = self
            .env
            .iter()
            .filter(|(k, _)| {
                let own = self.dialect.conventions().shown_env();
                k.starts_with("ANTHROPIC") || own.iter().any(|p| k.starts_with(p))
            })
            .map(|(k, v)| format!("{k}={}", shell_quote(v)))
            .collect();
        let mut parts = env;
        parts.push(shell_quote(&self.program.to_string_lossy()));
        parts.extend(self.args.iter().map(|a| shell_quote(a)));
        parts.join(" ")
    }
}

pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@,+%".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// Paths of one trial's sandbox.
pub struct Sandbox<'a> {
    pub workspace: &'a Path,
    pub home: &'a Path,
    pub tmp: &'a Path,
    pub base_url: &'a str,
}

/// A place of a run that exists only once its sandbox does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    Workspace,
    Home,
    Tmp,
    /// The stub's address.
    StubUrl,
}

impl Place {
    /// How a plan shows it.
    pub fn placeholder(self) -> &'static str {
        match self {
            Place::Workspace => "$WORKSPACE",
            Place::Home => "$HOME",
            Place::Tmp => "$TMPDIR",
            Place::StubUrl => "$STUB_URL",
        }
    }

    fn in_sandbox(self, sb: &Sandbox) -> String {
        match self {
            Place::Workspace => sb.workspace.display().to_string(),
            Place::Home => sb.home.display().to_string(),
            Place::Tmp => sb.tmp.display().to_string(),
            Place::StubUrl => sb.base_url.to_string(),
        }
    }
}

/// One environment value of a [`Launch`]: as written, or a place and what follows it
/// (`$HOME/.config`). Only the harness's own values name a place: a scenario's are text,
/// whatever they contain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnvValue {
    Text(String),
    At(Place, String),
}

/// The process a run starts, as its plan decides it before the sandbox exists.
#[derive(Debug, Clone)]
pub struct Launch {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub env: Vec<(String, EnvValue)>,
    pub dialect: Dialect,
}

impl Launch {
    /// The process, each place in its environment the sandbox's.
    pub fn fill(&self, sb: &Sandbox) -> Invocation {
        self.with(|place| place.in_sandbox(sb))
    }

    /// The process as a plan shows it: each place its placeholder (`$HOME`).
    pub fn shown(&self) -> Invocation {
        self.with(|place| place.placeholder().to_string())
    }

    fn with(&self, place: impl Fn(Place) -> String) -> Invocation {
        let value = |v: &EnvValue| match v {
            EnvValue::Text(text) => text.clone(),
            EnvValue::At(at, rest) => format!("{}{rest}", place(*at)),
        };
        Invocation {
            program: self.program.clone(),
            args: self.args.clone(),
            env: (self.env.iter())
                .map(|(k, v)| (k.clone(), value(v)))
                .collect(),
            dialect: self.dialect,
        }
    }
}

impl Target {
    /// Skip reason, if this target cannot run `scenario` as expected by `expect` (a
    /// version or feature it lacks; a `skip:` is confirmed by running it, `runner::skip`).
    pub fn unmet(&self, scenario: &Scenario, expect: &TargetExpect) -> Option<String> {
        if let Some(min) = &expect.min_version {
            if version_lt(&self.version, min) {
                return Some(format!(
                    "needs {} >= {min}, have {}",
                    self.name, self.version
                ));
            }
        }
        if let Some(max) = &expect.max_version {
            if version_lt(max, &self.version) {
                return Some(format!(
                    "needs {} <= {max}, have {}",
                    self.name, self.version
                ));
            }
        }
        let missing: Vec<&String> = scenario
            .file
            .features
            .iter()
            .chain(&expect.features)
            .filter(|f| !self.features.contains(*f))
            .collect();
        if !missing.is_empty() {
            let list: Vec<&str> = missing.iter().map(|s| s.as_str()).collect();
            return Some(format!("{} lacks {}", self.name, list.join(", ")));
        }
        None
    }

    /// The features `scenario` (as `expect` runs it) needs that the project file says this
    /// target does not support (`supports`), in the order the scenario names them.
    pub fn unsupported(&self, scenario: &Scenario, expect: &TargetExpect) -> Vec<String> {
        let Some(supports) = &self.declared.supports else {
            return Vec::new();
        };
        let mut out: Vec<String> = Vec::new();
        for f in scenario.file.features.iter().chain(&expect.features) {
            if !supports.contains(f) && !out.contains(f) {
                out.push(f.clone());
            }
        }
        out
    }

    /// The command line and a from-scratch environment for one trial in `sb`.
    pub fn invocation(
        &self,
        scenario: &Scenario,
        expect: &TargetExpect,
        sb: &Sandbox,
    ) -> Invocation {
        self.launch(scenario, expect).fill(sb)
    }

    /// The command line and a from-scratch environment for one run, its sandbox's places
    /// named.
    pub fn launch(&self, scenario: &Scenario, expect: &TargetExpect) -> Launch {
        let file = &scenario.file;
        let d = self.dialect;
        let mut args = self.lead_args.clone();
        let own = expect.args.as_ref().unwrap_or(&file.args);
        args.extend(d.conventions().lead_args(own));
        let profile = file.client.as_ref().and_then(|c| {
            let p = crate::client::profile::get(c.profile.as_deref()?).ok()?;
            Some((p, p.argv(&c.options).ok()?))
        });
        if let Some((_, sdk_args)) = &profile {
            // The SDK's exact command line; the scenario's args come after it.
            args.extend(d.conventions().translate_args(sdk_args, &self.data.tools));
        } else if file.default_args {
            args.extend(d.conventions().default_args(&PrintMode {
                prompt: scenario.prompt(expect).map(String::as_str),
                stdin_stream: scenario.uses_stdin(expect),
                output_format: file.output_format,
            }));
        }
        // The shared `args:` are in Claude Code's spelling; a block's own, in its dialect's.
        match expect.args {
            None => args.extend(d.conventions().translate_args(own, &self.data.tools)),
            Some(_) => args.extend(own.iter().cloned()),
        }
        let mut env = self.base_env();
        let sdk_env = profile.iter().flat_map(|(p, _)| &p.env);
        let target_env = self.env.iter().map(|(k, v)| (k, v)).chain(sdk_env);
        for (k, v) in target_env.chain(&file.env).chain(&expect.env) {
            env.retain(|(key, _)| key != k);
            env.push((k.clone(), EnvValue::Text(v.clone())));
        }
        // Whatever a scenario says, no trial may leave loopback.
        for (k, v) in d.conventions().forced_env() {
            env.retain(|(key, _)| key != k);
            env.push((k.to_string(), EnvValue::Text(v.to_string())));
        }
        Launch {
            program: self.program.clone(),
            args,
            env,
            dialect: d,
        }
    }

    /// The environment every trial of this dialect starts from, built from scratch.
    fn base_env(&self) -> Vec<(String, EnvValue)> {
        let text = |s: &str| EnvValue::Text(s.to_string());
        let path = std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".into());
        let mut env: Vec<(String, EnvValue)> = vec![
            ("PATH".into(), EnvValue::Text(path)),
            ("HOME".into(), EnvValue::At(Place::Home, String::new())),
            ("TMPDIR".into(), EnvValue::At(Place::Tmp, String::new())),
            ("LANG".into(), text("C.UTF-8")),
            ("SHELL".into(), text("/bin/bash")),
            ("TERM".into(), text("dumb")),
            ("NO_COLOR".into(), text("1")),
            ("USER".into(), text("streamcheck")),
            (
                "ANTHROPIC_BASE_URL".into(),
                EnvValue::At(Place::StubUrl, String::new()),
            ),
            ("ANTHROPIC_API_KEY".into(), text(DUMMY_API_KEY)),
        ];
        // The dialect's own variables under HOME, built from its placeholder: these values
        // are the harness's, so a `$HOME` at their start is the place.
        let home = Place::Home.placeholder();
        let own = self.dialect.conventions().env(Path::new(home));
        env.extend(own.into_iter().map(|(k, v)| {
            let value = match v.strip_prefix(home) {
                Some(rest) => EnvValue::At(Place::Home, rest.to_string()),
                None => EnvValue::Text(v),
            };
            (k, value)
        }));
        env
    }

    /// Writes what the CLI needs in its HOME before a trial (Qwen Code's settings file),
    /// unless the scenario wrote it itself.
    pub fn prepare_home(&self, home: &Path) -> std::io::Result<()> {
        self.dialect.conventions().prepare_home(home)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toolmap::ToolMap;
    use std::collections::BTreeSet;
    use std::path::Path;

    fn target(dialect: Dialect, tools: ToolMap) -> Target {
        Target {
            name: dialect.to_string().into(),
            dialect,
            program: PathBuf::from("cli"),
            lead_args: Vec::new(),
            version: "1.0.0".into(),
            features: BTreeSet::new(),
            known: Default::default(),
            data: std::sync::Arc::new(crate::install::DialectData {
                tools,
                ..crate::install::DialectData::empty(Path::new("proj"), dialect)
            }),
            env: Vec::new(),
            conforms_to: None,
            project: crate::install::Project::at(PathBuf::from("proj")),
            declared: Default::default(),
        }
    }

    /// The command line and environment of `yaml`'s only expectation on `dialect`.
    fn invoke(dialect: Dialect, tools: ToolMap, yaml: &str) -> Invocation {
        let scenario =
            Scenario::parse(yaml, Path::new("scenarios/x.yaml"), Path::new("scenarios")).unwrap();
        let expect = scenario.file.expect.values().next().unwrap();
        let sb = Sandbox {
            workspace: Path::new("/w"),
            home: Path::new("/h"),
            tmp: Path::new("/t"),
            base_url: "http://127.0.0.1:1",
        };
        target(dialect, tools).invocation(&scenario, expect, &sb)
    }

    fn env<'a>(inv: &'a Invocation, key: &str) -> Option<&'a str> {
        inv.env
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    #[test]
    fn each_dialect_fills_in_the_common_command_line() {
        let yaml = |key: &str, block: &str| {
            format!("description: d\nprompt: hi\nargs: [--dangerously-skip-permissions]\nenv: {{QWEN_CODE_DISABLE_PRECONNECT: '0'}}\nexpect: {{{key}: {{{block}}}}}\n")
        };
        let cc = invoke(
            Dialect::ClaudeCode,
            ToolMap::default(),
            &yaml("claude-code", ""),
        );
        let common = ["-p", "hi", "--output-format", "stream-json"];
        assert_eq!(
            cc.args,
            [
                &common[..],
                &["--verbose", "--dangerously-skip-permissions"]
            ]
            .concat()
        );
        assert_eq!(env(&cc, "IS_SANDBOX"), Some("1"));
        assert_eq!(env(&cc, "ANTHROPIC_BASE_URL"), Some("http://127.0.0.1:1"));
        assert!(cc.display().contains("IS_SANDBOX=1") && !cc.display().contains("QWEN"));

        let cal = invoke(Dialect::Caliban, ToolMap::default(), &yaml("caliban", ""));
        assert_eq!(
            cal.args,
            [&common[..], &["--dangerously-skip-permissions"]].concat()
        );
        assert_eq!(env(&cal, "XDG_CONFIG_HOME"), Some("/h/.config"));

        // The shared args are Claude Code's and translated; a block's own are Qwen Code's.
        let qwen = invoke(
            Dialect::QwenCode,
            ToolMap::default(),
            &yaml("qwen-code", ""),
        );
        let lead = ["--auth-type", "anthropic", "-m", "claude-sonnet-4-6"];
        assert_eq!(qwen.args, [&lead[..], &common[..], &["--yolo"]].concat());
        // What keeps it on loopback wins over the scenario's environment.
        assert_eq!(env(&qwen, "QWEN_CODE_DISABLE_PRECONNECT"), Some("1"));
        let own = invoke(
            Dialect::QwenCode,
            ToolMap::default(),
            &yaml("qwen-code", "args: [--approval-mode, plan]"),
        );
        assert_eq!(
            own.args,
            [&lead[..], &common[..], &["--approval-mode", "plan"]].concat()
        );
    }

    /// docs/targets.md's environment table names exactly what a Claude Code trial gets.
    #[test]
    fn the_documented_environment_is_what_a_trial_gets() {
        let inv = invoke(
            Dialect::ClaudeCode,
            ToolMap::default(),
            "description: d\nprompt: hi\nexpect: {claude-code: {}}\n",
        );
        let set: BTreeSet<&str> = inv.env.iter().map(|(k, _)| k.as_str()).collect();
        let doc = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/targets.md"),
        )
        .unwrap();
        let table = doc.split("### Environment").nth(1).unwrap();
        let documented: BTreeSet<&str> = (table.lines())
            .take_while(|l| !l.starts_with("###"))
            .filter_map(|l| l.strip_prefix("| `")?.split('`').next())
            .collect();
        assert_eq!(documented, set);
    }

    /// The plan names the sandbox's places; the sandbox fills in those and nothing else.
    #[test]
    fn the_sandbox_fills_in_only_the_places_the_harness_named() {
        let scenario = Scenario::parse(
            "description: d\nprompt: hi\nenv: {FOO: $HOME/x}\nexpect: {caliban: {}}\n",
            Path::new("scenarios/x.yaml"),
            Path::new("scenarios"),
        )
        .unwrap();
        let expect = scenario.file.expect.values().next().unwrap();
        let launch = target(Dialect::Caliban, ToolMap::default()).launch(&scenario, expect);
        let shown = launch.shown();
        assert_eq!(env(&shown, "HOME"), Some("$HOME"));
        assert_eq!(env(&shown, "XDG_CONFIG_HOME"), Some("$HOME/.config"));
        assert_eq!(env(&shown, "ANTHROPIC_BASE_URL"), Some("$STUB_URL"));
        let sb = Sandbox {
            workspace: Path::new("/w"),
            home: Path::new("/h"),
            tmp: Path::new("/t"),
            base_url: "http://127.0.0.1:1",
        };
        let run = launch.fill(&sb);
        assert_eq!(env(&run, "XDG_CONFIG_HOME"), Some("/h/.config"));
        assert_eq!(env(&run, "TMPDIR"), Some("/t"));
        assert_eq!(env(&run, "ANTHROPIC_BASE_URL"), Some("http://127.0.0.1:1"));
        // What the scenario wrote is passed as written.
        assert_eq!(env(&run, "FOO"), Some("$HOME/x"));
        assert_eq!((run.program, run.args), (shown.program, shown.args));
    }

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("say hello"), "'say hello'");
        assert_eq!(shell_quote("--verbose"), "--verbose");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
    }
}
