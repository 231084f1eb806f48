//! Scenario files: one YAML file per scenario under `scenarios/`, grouped in folders.
//!
//! A scenario says how to drive the CLI (prompt or stdin frames, args, files), what
//! the stub answers (a `stub_api::Script`), and per target what must come out.

use crate::trial_id::ScenarioId;
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

pub mod cases;
pub mod cases_form;
mod error;
pub mod expect;
pub mod input;
pub mod skip;

pub use error::{PathError, ScenarioError, ScenarioErrorKind, UnboundRef, UnknownFeature};
pub use expect::*;
pub use input::*;
pub use skip::{Skip, SkipReason};

/// A scenario as written in its file.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    /// A human title; the scenario's id is its path under `scenarios/`.
    #[serde(default)]
    pub name: Option<String>,
    /// One line: what behaviour this scenario pins.
    pub description: String,
    /// The document (and section) the behaviour comes from.
    #[serde(default)]
    pub source: Option<String>,
    /// Where the CLI and the document disagree: what the document says.
    #[serde(default)]
    pub notes: Option<String>,
    #[serde(default)]
    pub tags: Vec<String>,
    /// What a target must offer (`tool:Bash`, `partial-messages`, ...); otherwise skipped.
    #[serde(default)]
    pub features: Vec<String>,

    /// One-shot prompt, passed as `-p PROMPT`.
    #[serde(default)]
    pub prompt: Option<String>,
    /// Frames written to stdin as NDJSON (implies `--input-format stream-json`).
    /// `{raw: "..."}` writes a line as is, to send malformed input.
    #[serde(default)]
    pub stdin: Option<Vec<StdinLine>>,
    /// When to close stdin.
    #[serde(default)]
    pub close_stdin: CloseStdin,
    /// The client side of the conversation, scripted (implies `--input-format stream-json`):
    /// an SDK profile, lines that wait for frames, responders to the CLI's control requests.
    #[serde(default)]
    pub client: Option<crate::client::script::ClientSpec>,
    #[serde(default)]
    pub output_format: OutputFormat,
    /// Add the target's usual flags (`-p`, `--output-format`, `--verbose`, ...).
    /// Off for scenarios about flag handling itself: then `args` is the whole command line.
    #[serde(default = "yes")]
    pub default_args: bool,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Files to create in the working directory first (path relative to it).
    #[serde(default)]
    pub files: BTreeMap<String, FileContent>,
    /// Files to create in the trial's HOME first (config, hooks, settings).
    #[serde(default)]
    pub home_files: BTreeMap<String, FileContent>,
    /// Shell commands (`sh -c`) run one after another in the working directory after the
    /// files are written and before the CLI starts, with the trial's HOME and TMPDIR (a git
    /// repository: `git init -q`). One that exits non-zero is a setup error naming it.
    #[serde(default)]
    pub setup: Vec<String>,
    /// Send the CLI a signal once it printed some frames (cancellation).
    #[serde(default)]
    pub signal: Option<SignalAt>,
    /// How the harness reads stdout: `fast` (default) or `slow` (a consumer that parses
    /// slowly: 4 KiB per 10 ms, so the pipe fills and the CLI's writes wait).
    #[serde(default)]
    pub stdout_reader: StdoutReader,

    /// The stub-api script: what the model answers, request by request.
    #[serde(default)]
    pub stub: stub_api::Script,
    /// Several runs of the CLI, one after another, sharing one HOME and workspace (session
    /// resume, continue, fork). Each run has its own args, prompt/stdin and stub; each target
    /// then lists one expectation per run, in order, under `expect.<target>.runs`.
    #[serde(default)]
    pub runs: Vec<RunSpec>,

    /// Per target name (`claude-code`, `caliban`, ...): what must come out. A key with
    /// versions (`claude-code@>=2.1.300`, `claude-code@2.1.74`) holds for those versions
    /// and states only what differs (see `expectation.rs`).
    #[schemars(schema_with = "crate::expectation::expect_map_schema")]
    pub expect: BTreeMap<String, TargetExpect>,

    /// A matrix: each case's parameters are put into the rest of the file (`{{name}}`) and
    /// the case runs as its own scenario, `<id>[<case name>]` (see `scenario::cases`).
    #[serde(default)]
    pub cases: Option<cases_form::Cases>,
}

/// One CLI run of a multi-run scenario: replaces the scenario's args, prompt, stdin and stub.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunSpec {
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub prompt: Option<String>,
    #[serde(default)]
    pub stdin: Option<Vec<StdinLine>>,
    #[serde(default)]
    pub stub: stub_api::Script,
}

fn yes() -> bool {
    true
}

/// A loaded scenario: the file, its id and where it came from.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Path under `scenarios/` without `.yaml`, e.g. `tools/bash-round-trip`.
    pub id: ScenarioId,
    pub path: PathBuf,
    pub file: ScenarioFile,
    /// The case's name when the file declares `cases:` (the id ends `[name]`).
    pub case: Option<String>,
}

impl Scenario {
    /// `scenarios/<id>.yaml`, as a person finds it in the repository.
    pub fn display_path(&self) -> String {
        let ext = self
            .path
            .extension()
            .map_or("yaml".into(), |e| e.to_string_lossy());
        let file = match self.case {
            Some(_) => self.id.file(),
            None => self.id.as_str(),
        };
        format!("scenarios/{file}.{ext}")
    }

    /// The stdin lines for a target: its own, else the scenario's.
    pub fn stdin<'a>(&'a self, expect: &'a TargetExpect) -> Option<&'a Vec<StdinLine>> {
        expect.stdin.as_ref().or(self.file.stdin.as_ref())
    }

    /// The prompt for a target: its own, else the scenario's.
    pub fn prompt<'a>(&'a self, expect: &'a TargetExpect) -> Option<&'a String> {
        expect.prompt.as_ref().or(self.file.prompt.as_ref())
    }

    /// Turns the scenario expects for a target: the explicit `turns`, else one per user frame.
    pub fn turns(&self, expect: &TargetExpect) -> usize {
        if let (None, Some(client)) = (expect.turns, &self.file.client) {
            return client.user_turns();
        }
        expect.turns.unwrap_or_else(|| match self.stdin(expect) {
            Some(lines) => lines.iter().filter(|l| l.is_user_turn()).count(),
            None => 1,
        })
    }

    /// True when the CLI reads stdin (a `stdin:` list or a `client:`).
    pub fn uses_stdin(&self, expect: &TargetExpect) -> bool {
        self.file.client.is_some() || self.stdin(expect).is_some()
    }
}

impl Scenario {
    /// Parses a scenario from its text; `root` is the `scenarios/` folder (for the id).
    pub fn parse(text: &str, path: &Path, root: &Path) -> Result<Scenario, ScenarioError> {
        let err = |line, column, kind| ScenarioError::new(path, line, column, kind);
        let unplaced = |kind| err(None, None, kind);
        if cases_form::may_have_cases(text) {
            let (line, column) = locate_text(text, "cases:").unzip();
            return Err(err(line, column, ScenarioErrorKind::DeclaresCases));
        }
        let mut file: ScenarioFile = serde_yaml::from_str(text).map_err(|e| {
            let loc = e.location();
            err(
                loc.as_ref().map(|l| l.line()),
                loc.as_ref().map(|l| l.column()),
                ScenarioErrorKind::Yaml(e),
            )
        })?;
        crate::expectation::resolve_version_blocks(text, &mut file.expect)
            .map_err(|e| err(e.line, e.column, e.kind.into()))?;
        let relative = |field: &str, name: &String| {
            check_relative(name).map_err(|source| {
                unplaced(ScenarioErrorKind::Path {
                    field: field.to_string(),
                    name: name.clone(),
                    source,
                })
            })
        };
        for (field, files) in [("files", &file.files), ("home_files", &file.home_files)] {
            files.keys().try_for_each(|name| relative(field, name))?;
        }

        if let Some(index) = file.setup.iter().position(|c| c.trim().is_empty()) {
            return Err(unplaced(ScenarioErrorKind::EmptySetup { index }));
        }

        for (target, exp) in &file.expect {
            let field = format!("expect.{target}.files");
            exp.files
                .keys()
                .try_for_each(|name| relative(&field, name))?;
            let target = target.clone();
            if exp.hangs.is_some() && exp.exit_code.is_some() {
                return Err(unplaced(ScenarioErrorKind::HangsAndExitCode { target }));
            }
            if let Some(opt) = &exp.invariants {
                if opt.reason.trim().is_empty() {
                    return Err(unplaced(ScenarioErrorKind::InvariantsWithoutReason {
                        target,
                    }));
                }
            }
        }
        if let Some(client) = &file.client {
            client
                .validate()
                .map_err(|e| unplaced(ScenarioErrorKind::Client(e)))?;
            if file.stdin.is_some() || file.expect.values().any(|e| e.stdin.is_some()) {
                return Err(unplaced(ScenarioErrorKind::ClientAndStdin));
            }
        }
        check_runs(&file).map_err(unplaced)?;
        check_refs(text, client_names(&file)).map_err(|e| {
            let at = text.lines().enumerate().find_map(|(n, line)| {
                let c = line.find("$ref")?;
                line[c..].contains(e.name()).then_some((n + 1, c + 1))
            });
            let (line, column) = at.unzip();
            err(line, column, e.into())
        })?;
        check_features(&file).map_err(|e| {
            let (line, column) = locate_text(text, &e.name).unzip();
            err(line, column, e.into())
        })?;
        if file.expect.is_empty() {
            return Err(unplaced(ScenarioErrorKind::NoTarget));
        }
        let id = id_of(path, root);
        Ok(Scenario {
            id,
            path: path.to_path_buf(),
            file,
            case: None,
        })
    }

    pub fn load(path: &Path, root: &Path) -> Result<Scenario, ScenarioError> {
        Scenario::parse(&read(path)?, path, root)
    }
}

/// A scenario file's text.
pub fn read(path: &Path) -> Result<String, ScenarioError> {
    std::fs::read_to_string(path)
        .map_err(|e| ScenarioError::new(path, None, None, ScenarioErrorKind::Unreadable(e)))
}

impl Scenario {}

/// A multi-run scenario gives every (not skipped) target one expectation per run.
fn check_runs(file: &ScenarioFile) -> Result<(), ScenarioErrorKind> {
    for (target, exp) in &file.expect {
        let (want, got) = (file.runs.len(), exp.runs.len());
        if exp.skip.is_some() || want == got || (got == 0 && target.contains('@')) {
            continue;
        }
        let target = target.clone();
        if want == 0 {
            return Err(ScenarioErrorKind::NoRuns { target });
        }
        return Err(ScenarioErrorKind::RunsPerRun { target, got, want });
    }
    Ok(())
}

/// The names the scripted client gives its requests' ids: `initialize` (a profile's, unless
/// `initialize: false`) and each `request` line's `as`.
fn client_names(file: &ScenarioFile) -> std::collections::BTreeSet<String> {
    use crate::client::script::Line;
    let Some(client) = &file.client else {
        return Default::default();
    };
    let initialize =
        client.profile.is_some() && client.initialize != Some(serde_json::Value::Bool(false));
    let requests = client.conversation.iter().filter_map(|l| match l {
        Line::Request { name, .. } => name.clone(),
        _ => None,
    });
    (initialize.then(|| "initialize".to_string()))
        .into_iter()
        .chain(requests)
        .collect()
}

/// Every `{$ref: name}` names a value the scenario binds: a `{$capture: name}` in an
/// expectation of the same target (any of its version blocks) or outside `expect`, or one
/// of the client's request names. An unbound name fails every trial that gets there, so
/// it is the file's error, found without running anything.
fn check_refs(text: &str, client: std::collections::BTreeSet<String>) -> Result<(), UnboundRef> {
    use serde_yaml::Value;
    use std::collections::BTreeSet;
    #[derive(Default)]
    struct Names {
        bound: BTreeSet<String>,
        refs: Vec<String>,
    }
    fn walk(v: &Value, names: &mut Names) {
        match v {
            Value::Mapping(m) => {
                let text = |key: &str| m.get(key).and_then(Value::as_str).map(str::to_string);
                names.refs.extend(text("$ref"));
                names.bound.extend(text("$capture"));
                m.values().for_each(|v| walk(v, names));
            }
            Value::Sequence(items) => items.iter().for_each(|v| walk(v, names)),
            Value::Tagged(t) => walk(&t.value, names),
            _ => {}
        }
    }
    let Ok(Value::Mapping(doc)) = serde_yaml::from_str::<Value>(text) else {
        return Ok(());
    };
    let mut shared = Names {
        bound: client,
        refs: Vec::new(),
    };
    let mut targets: BTreeMap<String, Names> = BTreeMap::new();
    let mut keys: Vec<(String, Names)> = Vec::new();
    for (k, v) in &doc {
        match (k.as_str(), v) {
            (Some("expect"), Value::Mapping(expect)) => {
                for (key, e) in expect {
                    let key = key.as_str().unwrap_or_default().to_string();
                    let mut names = Names::default();
                    walk(e, &mut names);
                    let base = key.split('@').next().unwrap_or_default().to_string();
                    let all = targets.entry(base).or_default();
                    all.bound.extend(names.bound.iter().cloned());
                    keys.push((key, names));
                }
            }
            _ => walk(v, &mut shared),
        }
    }
    let unbound = |name: &String, own: Option<&Names>| {
        !shared.bound.contains(name) && own.is_none_or(|n| !n.bound.contains(name))
    };
    let outside = shared
        .refs
        .iter()
        .find(|n| unbound(n, None) && targets.values().all(|t| !t.bound.contains(n.as_str())));
    if let Some(name) = outside {
        let name = name.clone();
        return Err(UnboundRef::InFile { name });
    }
    for (key, names) in &keys {
        let base = key.split('@').next().unwrap_or_default();
        if let Some(name) = names.refs.iter().find(|n| unbound(n, targets.get(base))) {
            return Err(UnboundRef::InExpectation {
                key: key.clone(),
                base: base.to_string(),
                name: name.clone(),
            });
        }
    }
    Ok(())
}

/// Every `features:` name, the scenario's and each expectation's, is one some dialect offers:
/// a typo would otherwise skip the scenario on every target.
fn check_features(file: &ScenarioFile) -> Result<(), UnknownFeature> {
    let known = crate::dialect::Dialect::known_features();
    let all = file.features.iter().map(|f| ("features".to_string(), f));
    let per_target = (file.expect.iter()).flat_map(|(key, e)| {
        e.features
            .iter()
            .map(move |f| (format!("expect.{key}.features"), f))
    });
    for (field, name) in all.chain(per_target) {
        if !known.contains(name) {
            let name = name.clone();
            return Err(UnknownFeature { field, name });
        }
    }
    Ok(())
}

/// Line and column (1-based) of the first place `needle` is written in `text`.
fn locate_text(text: &str, needle: &str) -> Option<(usize, usize)> {
    text.lines()
        .enumerate()
        .find_map(|(n, line)| line.find(needle).map(|c| (n + 1, c + 1)))
}

/// The JSON Schema of scenario files (committed as `scenarios/schema.json`).
pub fn json_schema_string() -> String {
    let schema = schemars::schema_for!(ScenarioFile);
    serde_json::to_string_pretty(&schema).expect("a schema serializes") + "\n"
}

/// A scenario's id: its path under `root` without the extension.
pub fn id_of(path: &Path, root: &Path) -> ScenarioId {
    (path.strip_prefix(root).unwrap_or(path).with_extension(""))
        .to_string_lossy()
        .replace('\\', "/")
        .into()
}

/// A path inside the working directory: relative, and no `..`.
pub fn check_relative(name: &str) -> Result<(), PathError> {
    let p = Path::new(name);
    if name.is_empty() {
        return Err(PathError::Empty);
    }
    for c in p.components() {
        match c {
            Component::Normal(_) | Component::CurDir => {}
            Component::ParentDir => return Err(PathError::LeavesWorkdir),
            Component::RootDir | Component::Prefix(_) => return Err(PathError::Absolute),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
