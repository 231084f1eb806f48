//! [`ScenarioError`]: a scenario file that cannot be used, located as precisely as
//! possible, and [`ScenarioErrorKind`]: why. Each message is the sentence a user sees after
//! `path:line:column: `.

use super::cases::error::CasesError;
use crate::client::ClientError;
use crate::dialect::Dialect;
use crate::expectation::ExpectationError;
use regex::Regex;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

/// A scenario file that cannot be used, located as precisely as possible.
#[derive(Debug, thiserror::Error)]
#[error("{}{}: {kind}", .path.display(), place(*.line, *.column))]
pub struct ScenarioError {
    pub path: PathBuf,
    pub line: Option<usize>,
    pub column: Option<usize>,
    /// Boxed: a scenario error is returned everywhere a file is loaded, and why is large.
    #[source]
    pub kind: Box<ScenarioErrorKind>,
}

impl ScenarioError {
    pub fn new(
        path: &Path,
        line: Option<usize>,
        column: Option<usize>,
        kind: ScenarioErrorKind,
    ) -> ScenarioError {
        ScenarioError {
            path: path.to_path_buf(),
            line,
            column,
            kind: Box::new(kind),
        }
    }
}

/// Why a scenario file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioErrorKind {
    /// The file cannot be read.
    #[error("cannot read: {0}")]
    Unreadable(#[source] std::io::Error),
    /// A folder of the catalogue that cannot be read.
    #[error("cannot read this scenario folder: {0}")]
    FolderUnreadable(#[source] std::io::Error),
    /// A folder the walk of the catalogue cannot read or go into (a symlink loop).
    #[error("cannot read this scenario folder: {}", walk_why(.0))]
    FolderWalk(#[source] walkdir::Error),
    /// A file with `cases:` that is not YAML (the place is the error's line and column).
    #[error("not valid YAML: {}", without_place(.0))]
    NotYaml(#[source] serde_yaml::Error),
    /// Not YAML, or not of a scenario's shape.
    #[error(transparent)]
    Yaml(serde_yaml::Error),
    /// A file with `cases:` read as one scenario.
    #[error("this file declares `cases:`: it is a matrix of scenarios, loaded with `scenario::cases::load`")]
    DeclaresCases,
    /// An `expect` key or version block that cannot be used.
    #[error(transparent)]
    Expectation(#[from] ExpectationError),
    /// A path in `files`, `home_files` or `expect.<target>.files` outside the workspace.
    #[error("{field}: `{name}`: {source}")]
    Path {
        field: String,
        name: String,
        #[source]
        source: PathError,
    },
    /// A `setup` command of spaces only.
    #[error("setup[{index}]: an empty command")]
    EmptySetup { index: usize },
    /// `hangs` with an `exit_code`.
    #[error("expect.{target}: `hangs` and `exit_code`: a CLI killed for hanging has no exit code; write `exit_code: null`")]
    HangsAndExitCode { target: String },
    /// Invariants turned off without a reason.
    #[error("expect.{target}.invariants: say why in `reason`")]
    InvariantsWithoutReason { target: String },
    /// A `client:` block that does not load.
    #[error("client: {0}")]
    Client(#[source] ClientError),
    /// Both `client` and `stdin`.
    #[error("`client` and `stdin` both write stdin: put the lines in `client.conversation`")]
    ClientAndStdin,
    /// A target's `runs` in a scenario of one run.
    #[error("expect.{target}.runs: the scenario has no `runs:`")]
    NoRuns { target: String },
    /// A target's `runs` that are not one per run.
    #[error("expect.{target}.runs: {got} expectations for {want} runs: give one per run")]
    RunsPerRun {
        target: String,
        got: usize,
        want: usize,
    },
    /// A `{$ref: name}` nothing binds.
    #[error(transparent)]
    UnboundRef(#[from] UnboundRef),
    /// A `features:` name no dialect offers.
    #[error(transparent)]
    UnknownFeature(#[from] UnknownFeature),
    /// An empty `expect`.
    #[error("`expect` names no target: add e.g. `expect: {{claude-code: {{...}}}}`")]
    NoTarget,
    /// A file's `cases:` that cannot be expanded.
    #[error(transparent)]
    Cases(#[from] CasesError),
    /// A case whose scenario cannot be used; a place in the expanded text means nothing in
    /// the file, so none is shown.
    #[error("case `{case}`: {}", without_place(.source))]
    InCase {
        case: String,
        #[source]
        source: Box<ScenarioErrorKind>,
    },
}

/// A path a scenario writes that would not be inside the working directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    /// `""`.
    #[error("empty path")]
    Empty,
    /// A `..` in it.
    #[error("`..` would leave the working directory")]
    LeavesWorkdir,
    /// An absolute path.
    #[error("must be relative to the working directory")]
    Absolute,
}

/// A `{$ref: name}` naming no capture and no client request.
#[derive(Debug, thiserror::Error)]
pub enum UnboundRef {
    /// Outside `expect`: nothing in the file binds it.
    #[error("`{{$ref: {name}}}` refers to nothing: no `{{$capture: {name}}}` and no client request named `{name}` in the file")]
    InFile { name: String },
    /// In the expectation `key`: nothing its target's blocks (`base`) or the rest of the
    /// file bind.
    #[error("expect.{key}: `{{$ref: {name}}}` refers to nothing: no `{{$capture: {name}}}` in {base}'s expectations and no client request named `{name}`")]
    InExpectation {
        key: String,
        base: String,
        name: String,
    },
}

impl UnboundRef {
    /// The name nothing binds.
    pub fn name(&self) -> &str {
        match self {
            UnboundRef::InFile { name } | UnboundRef::InExpectation { name, .. } => name,
        }
    }
}

/// A `features:` name no dialect offers: a typo would skip the scenario on every target.
#[derive(Debug, thiserror::Error)]
#[error(
    "{field}: `{name}` is not a feature any target offers; the known features are {}",
    Dialect::feature_names()
)]
pub struct UnknownFeature {
    /// `features` or `expect.<key>.features`.
    pub field: String,
    pub name: String,
}

/// `:line:column`, as much of it as is known.
fn place(line: Option<usize>, column: Option<usize>) -> String {
    match (line, column) {
        (Some(line), Some(column)) => format!(":{line}:{column}"),
        (Some(line), None) => format!(":{line}"),
        (None, _) => String::new(),
    }
}

/// A message without the ` at line N column M` YAML puts in it.
fn without_place(message: &impl std::fmt::Display) -> String {
    static AT_LINE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r" at line \d+ column \d+").expect("a regex"));
    AT_LINE.replace(&message.to_string(), "").into_owned()
}

/// What went wrong in a walk: the io error when there is one (walkdir's own message
/// repeats the path), else walkdir's.
fn walk_why(e: &walkdir::Error) -> String {
    e.io_error()
        .map_or_else(|| e.to_string(), std::io::Error::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each message is the one the `String` errors it replaced printed, word for word.
    #[test]
    fn messages_read_as_before() {
        let target = || "claude-code".to_string();
        let gone = || std::io::Error::other("gone");
        let cases: Vec<(ScenarioErrorKind, String)> = vec![
            (ScenarioErrorKind::Unreadable(gone()), "cannot read: gone".into()),
            (
                ScenarioErrorKind::FolderUnreadable(gone()),
                "cannot read this scenario folder: gone".into(),
            ),
            (
                ScenarioErrorKind::DeclaresCases,
                "this file declares `cases:`: it is a matrix of scenarios, loaded with `scenario::cases::load`".into(),
            ),
            (
                ScenarioErrorKind::Path {
                    field: "expect.claude-code.files".into(),
                    name: "../x".into(),
                    source: PathError::LeavesWorkdir,
                },
                "expect.claude-code.files: `../x`: `..` would leave the working directory".into(),
            ),
            (
                ScenarioErrorKind::EmptySetup { index: 2 },
                "setup[2]: an empty command".into(),
            ),
            (
                ScenarioErrorKind::HangsAndExitCode { target: target() },
                "expect.claude-code: `hangs` and `exit_code`: a CLI killed for hanging has no exit code; write `exit_code: null`".into(),
            ),
            (
                ScenarioErrorKind::InvariantsWithoutReason { target: target() },
                "expect.claude-code.invariants: say why in `reason`".into(),
            ),
            (
                ScenarioErrorKind::Client(ClientError::RepeatZero),
                "client: `repeat` must be at least 1".into(),
            ),
            (
                ScenarioErrorKind::ClientAndStdin,
                "`client` and `stdin` both write stdin: put the lines in `client.conversation`".into(),
            ),
            (
                ScenarioErrorKind::NoRuns { target: target() },
                "expect.claude-code.runs: the scenario has no `runs:`".into(),
            ),
            (
                ScenarioErrorKind::RunsPerRun { target: target(), got: 1, want: 2 },
                "expect.claude-code.runs: 1 expectations for 2 runs: give one per run".into(),
            ),
            (
                UnboundRef::InFile { name: "sid".into() }.into(),
                "`{$ref: sid}` refers to nothing: no `{$capture: sid}` and no client request named `sid` in the file".into(),
            ),
            (
                UnboundRef::InExpectation {
                    key: "claude-code@>=2".into(),
                    base: target(),
                    name: "sid".into(),
                }
                .into(),
                "expect.claude-code@>=2: `{$ref: sid}` refers to nothing: no `{$capture: sid}` in claude-code's expectations and no client request named `sid`".into(),
            ),
            (
                UnknownFeature { field: "features".into(), name: "tool:Bsh".into() }.into(),
                format!(
                    "features: `tool:Bsh` is not a feature any target offers; the known features are {}",
                    Dialect::feature_names()
                ),
            ),
            (
                ScenarioErrorKind::NoTarget,
                "`expect` names no target: add e.g. `expect: {claude-code: {...}}`".into(),
            ),
            (
                ScenarioErrorKind::InCase {
                    case: "a".into(),
                    source: Box::new(ScenarioErrorKind::NoTarget),
                },
                "case `a`: `expect` names no target: add e.g. `expect: {claude-code: {...}}`".into(),
            ),
        ];
        for (kind, before) in cases {
            assert_eq!(kind.to_string(), before);
        }
        assert_eq!(PathError::Empty.to_string(), "empty path");
        assert_eq!(
            PathError::Absolute.to_string(),
            "must be relative to the working directory"
        );
    }

    #[test]
    fn a_place_shows_as_much_as_is_known_and_yaml_places_go_in_a_case() {
        let at = |line, column| {
            ScenarioError::new(
                Path::new("s/x.yaml"),
                line,
                column,
                ScenarioErrorKind::NoTarget,
            )
            .to_string()
        };
        let why = "`expect` names no target: add e.g. `expect: {claude-code: {...}}`";
        assert_eq!(at(Some(3), Some(7)), format!("s/x.yaml:3:7: {why}"));
        assert_eq!(at(Some(3), None), format!("s/x.yaml:3: {why}"));
        assert_eq!(at(None, Some(7)), format!("s/x.yaml: {why}"));
        let yaml = serde_yaml::from_str::<Vec<u8>>("- x").unwrap_err();
        let shown = yaml.to_string();
        let place = " at line 1 column 3";
        assert!(shown.contains(place), "{shown}");
        let in_case = ScenarioErrorKind::InCase {
            case: "a".into(),
            source: Box::new(ScenarioErrorKind::Yaml(yaml)),
        };
        let without = shown.replace(place, "");
        assert_eq!(in_case.to_string(), format!("case `a`: {without}"));
    }
}
