//! Scenario files: one YAML file per scenario under `scenarios/`, grouped in folders.
//!
//! A scenario says how to drive the CLI (prompt or stdin frames, args, files), what
//! the stub answers (a `stub_api::Script`), and per target what must come out.

use crate::matcher::{Expected, Mode};
use crate::pattern::{Pattern, PatternValue};
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Component, Path, PathBuf};

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
    pub client: Option<crate::client::ClientSpec>,
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
    /// Send the CLI a signal once it printed some frames (cancellation).
    #[serde(default)]
    pub signal: Option<SignalAt>,

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

/// What the CLI is asked to print; a dialect's default command line needs it too.
pub use crate::target::dialect::OutputFormat;

/// `{send: TERM, after_frames: 2}`: signal the CLI once it printed that many frames.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SignalAt {
    pub send: Signal,
    #[serde(default)]
    pub after_frames: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum Signal {
    Term,
    Int,
    Hup,
}

impl Signal {
    pub fn number(self) -> i32 {
        match self {
            Signal::Term => libc::SIGTERM,
            Signal::Int => libc::SIGINT,
            Signal::Hup => libc::SIGHUP,
        }
    }
}

/// When to close stdin: `immediately` (default), or `{after_results: N}`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum CloseStdin {
    /// `immediately`: right after the last line is written.
    #[default]
    #[serde(deserialize_with = "immediately")]
    Immediately,
    /// Keep stdin open until this many `result` frames came (or the CLI exits).
    AfterResults { after_results: usize },
}

fn immediately<'de, D: Deserializer<'de>>(d: D) -> Result<(), D::Error> {
    let word = String::deserialize(d)?;
    if word == "immediately" {
        Ok(())
    } else {
        Err(serde::de::Error::custom(format!(
            "close_stdin: `{word}`: write `immediately` or `{{after_results: N}}`"
        )))
    }
}

/// A line for stdin: a JSON frame, `{raw: "..."}` for a line written as is (malformed
/// input), or `{after_results: N}` to wait until N `result` frames came before writing
/// the lines after it (a real second turn, sent once the first one ended).
#[derive(Debug, Clone, PartialEq, JsonSchema)]
#[schemars(untagged)]
pub enum StdinLine {
    Raw { raw: String },
    AfterResults { after_results: usize },
    Frame(Value),
}

impl<'de> Deserialize<'de> for StdinLine {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let v = Value::deserialize(d)?;
        if let Value::Object(map) = &v {
            if map.len() == 1 {
                if let Some(raw) = map.get("raw") {
                    let raw = raw
                        .as_str()
                        .ok_or_else(|| Error::custom("`raw` takes a string"))?;
                    return Ok(StdinLine::Raw {
                        raw: raw.to_string(),
                    });
                }
                if let Some(n) = map.get("after_results") {
                    let n = n.as_u64().ok_or_else(|| {
                        Error::custom("`after_results` takes a number of result frames")
                    })?;
                    return Ok(StdinLine::AfterResults {
                        after_results: n as usize,
                    });
                }
            }
        }
        Ok(StdinLine::Frame(v))
    }
}

impl StdinLine {
    /// The line to write, or `None` for a pause.
    pub fn to_line(&self) -> Option<String> {
        match self {
            StdinLine::Raw { raw } => Some(raw.clone()),
            StdinLine::Frame(v) => Some(v.to_string()),
            StdinLine::AfterResults { .. } => None,
        }
    }

    fn is_user_turn(&self) -> bool {
        matches!(self, StdinLine::Frame(v) if v.get("type").and_then(Value::as_str) == Some("user"))
    }
}

/// A file's content: text as is, or any other YAML value written as JSON (notebooks).
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum FileContent {
    Text(String),
    Json(Value),
}

impl FileContent {
    pub fn bytes(&self) -> Vec<u8> {
        match self {
            FileContent::Text(s) => s.clone().into_bytes(),
            FileContent::Json(v) => serde_json::to_vec_pretty(v).expect("a JSON value serializes"),
        }
    }
}

/// What one target must do in this scenario.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct TargetExpect {
    /// Skip this target, with the reason.
    pub skip: Option<String>,
    /// Oldest version of the target this expectation holds for.
    pub min_version: Option<String>,
    pub max_version: Option<String>,
    /// Features this target must offer on top of the scenario's.
    pub features: Vec<String>,
    /// Replaces the scenario's `args` for this target.
    pub args: Option<Vec<String>>,
    /// Replaces the scenario's `prompt` for this target.
    pub prompt: Option<String>,
    /// Replaces the scenario's `stdin` for this target (dialects shape input frames differently).
    pub stdin: Option<Vec<StdinLine>>,
    /// Added to the scenario's `env` for this target.
    pub env: BTreeMap<String, String>,

    pub mode: Mode,
    /// Frames to leave out before matching (in both modes).
    pub ignore: Vec<PatternValue>,
    /// The expected frames, in order; `{any_order: [...]}` for a group in any order.
    pub frames: Vec<FrameEntry>,
    /// In a version block: frames of the block it refines, by 0-based index
    /// (`{3: {type: result, is_error: true}}`); see `expectation::FramePatch`.
    #[serde(default)]
    pub frames_patch: BTreeMap<usize, crate::expectation::FramePatch>,
    /// Patterns no frame may match.
    pub absent: Vec<PatternValue>,
    pub exit_code: Option<i32>,
    pub stderr: Option<TextExpect>,
    /// stdout as text (for `output_format: text`).
    pub text: Option<TextExpect>,
    pub requests: Option<RequestsExpect>,
    /// Files in the working directory after the run.
    pub files: BTreeMap<String, FileExpect>,
    /// Seconds before the CLI is killed (default 60).
    pub timeout: Option<u64>,
    /// How many turns (result frames) the run has; default 1, or the number of user frames on stdin.
    pub turns: Option<usize>,
    /// Protocol invariants this scenario turns off, with the reason.
    pub invariants: Option<InvariantOptOut>,
    /// In a multi-run scenario: one expectation per entry of the scenario's `runs`, in order.
    pub runs: Vec<TargetExpect>,
    /// The release-wide rules applied to this expectation (`expectation::rules`).
    #[serde(skip)]
    #[schemars(skip)]
    pub rules: Vec<crate::expectation::rules::Applied>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InvariantOptOut {
    pub skip: Vec<crate::invariants::Invariant>,
    pub reason: String,
}

/// One entry of `frames`.
#[derive(Debug, Clone)]
pub struct FrameEntry(pub Expected);

impl<'de> Deserialize<'de> for FrameEntry {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let v = Value::deserialize(d)?;
        let group = match &v {
            Value::Object(map) if map.len() == 1 && map.contains_key("any_order") => {
                &map["any_order"]
            }
            _ => {
                return Pattern::compile(&v)
                    .map(|p| FrameEntry(Expected::Frame(p)))
                    .map_err(Error::custom)
            }
        };
        let Value::Array(members) = group else {
            return Err(Error::custom(
                "`any_order` takes a list of patterns (or of lists of patterns that stay in order)",
            ));
        };
        let mut runs = Vec::with_capacity(members.len());
        for (i, m) in members.iter().enumerate() {
            let run = match m {
                Value::Array(seq) => seq.iter().collect(),
                single => vec![single],
            };
            let run = run
                .into_iter()
                .map(|p| {
                    Pattern::compile(p).map_err(|e| Error::custom(format!("any_order[{i}]: {e}")))
                })
                .collect::<Result<Vec<_>, _>>()?;
            if run.is_empty() {
                return Err(Error::custom(format!("any_order[{i}] is an empty list")));
            }
            runs.push(run);
        }
        Ok(FrameEntry(Expected::AnyOrder(runs)))
    }
}

impl JsonSchema for FrameEntry {
    fn schema_name() -> String {
        "FrameEntry".into()
    }
    fn json_schema(gen: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
        let mut s = schemars::schema::SchemaObject::default();
        s.metadata().description = Some(
            "A frame pattern, or {any_order: [pattern | [pattern, ...], ...]}: frames that may come in any order (each inner list keeps its own order).".into(),
        );
        let _ = gen;
        s.into()
    }
}

/// Text expectations: a plain string must be equal; a map says how to compare.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged, try_from = "RawTextExpect")]
pub enum TextExpect {
    Equals(String),
    Rules(TextRules),
}

/// `TextExpect` as written, before its regex is compiled: an untagged enum would hide
/// why a variant failed, so the regex is compiled after the shape is known.
#[derive(Deserialize)]
#[serde(untagged)]
enum RawTextExpect {
    Equals(String),
    Rules(RawTextRules),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTextRules {
    #[serde(default)]
    equals: Option<String>,
    #[serde(default)]
    contains: Vec<String>,
    #[serde(default)]
    not_contains: Vec<String>,
    #[serde(default)]
    regex: Option<String>,
    #[serde(default)]
    empty: Option<bool>,
}

impl TryFrom<RawTextExpect> for TextExpect {
    type Error = String;
    fn try_from(raw: RawTextExpect) -> Result<Self, String> {
        let r = match raw {
            RawTextExpect::Equals(s) => return Ok(TextExpect::Equals(s)),
            RawTextExpect::Rules(r) => r,
        };
        Ok(TextExpect::Rules(TextRules {
            equals: r.equals,
            contains: r.contains,
            not_contains: r.not_contains,
            regex: r.regex.map(TextRegex::try_from).transpose()?,
            empty: r.empty,
        }))
    }
}

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TextRules {
    #[serde(default)]
    pub equals: Option<String>,
    #[serde(default)]
    pub contains: Vec<String>,
    #[serde(default)]
    pub not_contains: Vec<String>,
    #[serde(default)]
    pub regex: Option<TextRegex>,
    #[serde(default)]
    pub empty: Option<bool>,
}

/// A regex compiled when the file is read, so a bad one is reported with its line.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(try_from = "String")]
#[schemars(transparent)]
pub struct TextRegex(#[schemars(with = "String")] pub regex::Regex);

impl TryFrom<String> for TextRegex {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        regex::Regex::new(&s)
            .map(TextRegex)
            .map_err(|e| format!("bad regex: {e}"))
    }
}

impl TextExpect {
    /// Returns what does not hold, if anything.
    pub fn check(&self, text: &str) -> Result<(), String> {
        let rules = match self {
            TextExpect::Equals(s) => {
                return if text.trim_end() == s.trim_end() {
                    Ok(())
                } else {
                    Err(format!("expected {s:?}, found {:?}", clip(text)))
                }
            }
            TextExpect::Rules(r) => r,
        };
        if let Some(s) = &rules.equals {
            if text.trim_end() != s.trim_end() {
                return Err(format!("expected {s:?}, found {:?}", clip(text)));
            }
        }
        for c in &rules.contains {
            if !text.contains(c.as_str()) {
                return Err(format!(
                    "expected it to contain {c:?}, found {:?}",
                    clip(text)
                ));
            }
        }
        for c in &rules.not_contains {
            if text.contains(c.as_str()) {
                return Err(format!(
                    "expected it not to contain {c:?}, found {:?}",
                    clip(text)
                ));
            }
        }
        if let Some(TextRegex(re)) = &rules.regex {
            if !re.is_match(text) {
                return Err(format!(
                    "expected it to match /{re}/, found {:?}",
                    clip(text)
                ));
            }
        }
        if let Some(empty) = rules.empty {
            if empty != text.trim().is_empty() {
                return Err(if empty {
                    format!("expected nothing, found {:?}", clip(text))
                } else {
                    "expected some text, found none".into()
                });
            }
        }
        Ok(())
    }
}

fn clip(s: &str) -> String {
    const MAX: usize = 300;
    if s.len() <= MAX {
        return s.to_string();
    }
    let mut end = MAX;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// Assertions on the requests the CLI sent to the stub.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RequestsExpect {
    /// Number of scripted `POST /v1/messages` requests (background and side traffic excluded).
    #[serde(default)]
    pub count: Option<usize>,
    /// Body patterns by 0-based index among the scripted requests.
    #[serde(default)]
    pub bodies: BTreeMap<usize, PatternValue>,
    /// Every scripted request's body must match each of these.
    #[serde(default)]
    pub all: Vec<PatternValue>,
    /// Some scripted request's body must match each of these.
    #[serde(default)]
    pub some: Vec<PatternValue>,
    /// Number of background requests (e.g. Claude Code's session-title request).
    #[serde(default)]
    pub background: Option<usize>,
}

/// What a workspace file must hold after the run.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum FileExpect {
    /// `false`: the file must not exist. `true`: it must.
    Exists(bool),
    Text(TextExpect),
}

/// A loaded scenario: the file, its id and where it came from.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Path under `scenarios/` without `.yaml`, e.g. `tools/bash-round-trip`.
    pub id: String,
    pub path: PathBuf,
    pub file: ScenarioFile,
}

impl Scenario {
    /// `scenarios/<id>.yaml`, as a person finds it in the repository.
    pub fn display_path(&self) -> String {
        let ext = self
            .path
            .extension()
            .map_or("yaml".into(), |e| e.to_string_lossy());
        format!("scenarios/{}.{ext}", self.id)
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

/// A scenario file that cannot be used, located as precisely as possible.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioError {
    pub path: PathBuf,
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(col) = self.column {
                write!(f, ":{col}")?;
            }
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ScenarioError {}

impl Scenario {
    /// Parses a scenario from its text; `root` is the `scenarios/` folder (for the id).
    pub fn parse(text: &str, path: &Path, root: &Path) -> Result<Scenario, ScenarioError> {
        let err = |line, column, message: String| ScenarioError {
            path: path.to_path_buf(),
            line,
            column,
            message,
        };
        let mut file: ScenarioFile = serde_yaml::from_str(text).map_err(|e| {
            let loc = e.location();
            err(
                loc.as_ref().map(|l| l.line()),
                loc.as_ref().map(|l| l.column()),
                e.to_string(),
            )
        })?;
        crate::expectation::resolve_version_blocks(text, &mut file)
            .map_err(|e| err(e.line, e.column, e.message))?;
        for (field, files) in [("files", &file.files), ("home_files", &file.home_files)] {
            for name in files.keys() {
                check_relative(name)
                    .map_err(|m| err(None, None, format!("{field}: `{name}`: {m}")))?;
            }
        }

        for (target, exp) in &file.expect {
            for name in exp.files.keys() {
                check_relative(name).map_err(|m| {
                    err(None, None, format!("expect.{target}.files: `{name}`: {m}"))
                })?;
            }
            if let Some(opt) = &exp.invariants {
                if opt.reason.trim().is_empty() {
                    return Err(err(
                        None,
                        None,
                        format!("expect.{target}.invariants: say why in `reason`"),
                    ));
                }
            }
        }
        if let Some(client) = &file.client {
            crate::client::validate(client).map_err(|m| err(None, None, format!("client: {m}")))?;
            if file.stdin.is_some() || file.expect.values().any(|e| e.stdin.is_some()) {
                return Err(err(
                    None,
                    None,
                    "`client` and `stdin` both write stdin: put the lines in `client.conversation`"
                        .into(),
                ));
            }
        }
        check_runs(&file).map_err(|m| err(None, None, m))?;
        check_features(&file).map_err(|(name, m)| {
            let (line, column) = locate_text(text, &name).unzip();
            err(line, column, m)
        })?;
        if file.expect.is_empty() {
            return Err(err(
                None,
                None,
                "`expect` names no target: add e.g. `expect: {claude-code: {...}}`".into(),
            ));
        }
        let id = id_of(path, root);
        Ok(Scenario {
            id,
            path: path.to_path_buf(),
            file,
        })
    }

    pub fn load(path: &Path, root: &Path) -> Result<Scenario, ScenarioError> {
        let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
            path: path.to_path_buf(),
            line: None,
            column: None,
            message: format!("cannot read: {e}"),
        })?;
        Scenario::parse(&text, path, root)
    }
}

/// A multi-run scenario gives every (not skipped) target one expectation per run.
fn check_runs(file: &ScenarioFile) -> Result<(), String> {
    for (target, exp) in &file.expect {
        let (want, got) = (file.runs.len(), exp.runs.len());
        if exp.skip.is_some() || want == got || (got == 0 && target.contains('@')) {
            continue;
        }
        if want == 0 {
            return Err(format!("expect.{target}.runs: the scenario has no `runs:`"));
        }
        return Err(format!(
            "expect.{target}.runs: {got} expectations for {want} runs: give one per run"
        ));
    }
    Ok(())
}

/// Every `features:` name, the scenario's and each expectation's, is one some dialect offers:
/// a typo would otherwise skip the scenario on every target. Err: the name and the message.
fn check_features(file: &ScenarioFile) -> Result<(), (String, String)> {
    let known = crate::target::dialect::Dialect::known_features();
    let all = file.features.iter().map(|f| ("features".to_string(), f));
    let per_target = (file.expect.iter()).flat_map(|(key, e)| {
        e.features
            .iter()
            .map(move |f| (format!("expect.{key}.features"), f))
    });
    for (field, name) in all.chain(per_target) {
        if !known.contains(name) {
            let names: Vec<&str> = known.iter().map(String::as_str).collect();
            return Err((
                name.clone(),
                format!("{field}: `{name}` is not a feature any target offers; the known features are {}", names.join(", ")),
            ));
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
pub fn id_of(path: &Path, root: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .with_extension("")
        .to_string_lossy()
        .replace('\\', "/")
}

/// A path inside the working directory: relative, and no `..`.
pub fn check_relative(name: &str) -> Result<(), String> {
    let p = Path::new(name);
    if name.is_empty() {
        return Err("empty path".into());
    }
    for c in p.components() {
        match c {
            Component::Normal(_) | Component::CurDir => {}
            Component::ParentDir => return Err("`..` would leave the working directory".into()),
            Component::RootDir | Component::Prefix(_) => {
                return Err("must be relative to the working directory".into())
            }
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "scenario_tests.rs"]
mod tests;
