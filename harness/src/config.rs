//! `streamcheck.toml`, the project file of a repository that uses streamcheck as a gate:
//! which scenarios (the bundled catalogue, all or by topic, plus the project's own
//! folders), which targets (a command or a pinned package, its dialect and the release it
//! conforms to), the known-divergences file, the report folder and the jobs.

use crate::dialect::Dialect;
use crate::file_error::FileError;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

mod error;
pub use error::{ConfigError, EntryError};

/// The file's name; it is looked for from the current folder upwards.
pub const FILE_NAME: &str = "streamcheck.toml";

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub scenarios: Scenarios,
    #[serde(default)]
    pub targets: BTreeMap<String, TargetEntry>,
    /// A known-divergences file (see `known.rs`) applied to every target of this project.
    #[serde(default)]
    pub known_divergences: Option<PathBuf>,
    /// Where runs write their reports (default `reports/`).
    #[serde(default)]
    pub report_dir: Option<PathBuf>,
    #[serde(default)]
    pub jobs: Option<usize>,
    /// What the protocol inventory's findings do to a trial: "report" (default), "strict", "off".
    #[serde(default)]
    pub protocol: Option<crate::protocol::check::Policy>,
    /// `[consumers.NAME]`: parsers `streamcheck consume` feeds the CLI's output to.
    #[serde(default)]
    pub consumers: BTreeMap<String, ConsumerEntry>,
    /// The folder the file is in: paths in it are relative to this.
    #[serde(skip)]
    pub dir: PathBuf,
    /// The file itself, for messages.
    #[serde(skip)]
    pub path: PathBuf,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenarios {
    /// The catalogue streamcheck ships: `true` (all), `false`, or a list of topics
    /// (`["basics", "tools"]`).
    #[serde(default = "all")]
    pub bundled: Bundled,
    /// Bundled scenarios not taken after all: topics and scenario ids, matched as `bundled`.
    #[serde(default)]
    pub exclude: Vec<String>,
    /// The project's own scenario folders; a scenario with a bundled one's id replaces it.
    #[serde(default)]
    pub folders: Vec<PathBuf>,
}

impl Default for Scenarios {
    fn default() -> Self {
        Scenarios {
            bundled: all(),
            exclude: Vec::new(),
            folders: Vec::new(),
        }
    }
}

impl Scenarios {
    /// Whether the bundled scenario `id` is taken: `bundled` takes it and `exclude` does not.
    pub fn takes(&self, id: &str) -> bool {
        self.bundled.takes(id) && !self.exclude.iter().any(|e| names(e, id))
    }

    /// `bundled` and `exclude` each name scenarios of the catalogue whose ids are `ids`.
    pub fn check(&self, ids: &[String]) -> Result<(), EntryError> {
        self.bundled.check(ids)?;
        match self
            .exclude
            .iter()
            .find(|e| !ids.iter().any(|id| names(e, id)))
        {
            Some(e) => Err(EntryError::Excluded {
                entry: e.clone(),
                topics: topics_of(ids),
            }),
            None => Ok(()),
        }
    }
}

/// The catalogue's topics (the first part of its ids), for messages.
fn topics_of(ids: &[String]) -> String {
    let known: std::collections::BTreeSet<&str> =
        ids.iter().filter_map(|id| id.split('/').next()).collect();
    known.into_iter().collect::<Vec<_>>().join(", ")
}

fn all() -> Bundled {
    Bundled::All(true)
}

#[derive(Debug, Clone, PartialEq)]
pub enum Bundled {
    All(bool),
    Topics(Vec<String>),
}

impl<'de> Deserialize<'de> for Bundled {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Form {
            All(bool),
            Topics(Vec<String>),
        }
        match Form::deserialize(d) {
            Ok(Form::All(all)) => Ok(Bundled::All(all)),
            Ok(Form::Topics(topics)) => Ok(Bundled::Topics(topics)),
            Err(_) => Err(serde::de::Error::custom(
                "`bundled` takes true, false, or a list of topics and scenario ids ([\"basics\", \"tools/bash-single-call\"])",
            )),
        }
    }
}

impl Bundled {
    /// Whether the bundled scenario `id` is taken: a topic (a folder) takes every scenario
    /// in it, a scenario id itself.
    pub fn takes(&self, id: &str) -> bool {
        match self {
            Bundled::All(all) => *all,
            Bundled::Topics(topics) => topics.iter().any(|t| names(t, id)),
        }
    }

    /// Each topic or scenario listed names some scenario of the catalogue whose ids are
    /// `ids`: a typo would otherwise run only the project's own scenarios, and pass.
    pub fn check(&self, ids: &[String]) -> Result<(), EntryError> {
        let Bundled::Topics(topics) = self else {
            return Ok(());
        };
        match topics.iter().find(|t| !ids.iter().any(|id| names(t, id))) {
            Some(t) => Err(EntryError::Bundled {
                entry: t.clone(),
                topics: topics_of(ids),
            }),
            None => Ok(()),
        }
    }
}

/// Whether the topic or scenario id `entry` names the scenario `id`.
fn names(entry: &str, id: &str) -> bool {
    let entry = entry.trim_end_matches('/');
    !entry.is_empty()
        && id
            .strip_prefix(entry)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// `[targets.NAME]`: a CLI the project tests.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetEntry {
    /// An executable (relative to the file), e.g. `./mycli`.
    #[serde(default)]
    pub command: Option<PathBuf>,
    /// Or a published CLI, as `--target` names it: `claude-code@2.1.330`, `caliban`.
    #[serde(default)]
    pub package: Option<String>,
    /// Whose flags, environment and frames it speaks (default `claude-code`).
    #[serde(default)]
    pub dialect: Option<Dialect>,
    /// The release whose expectations and version blocks it is held to, `claude-code@2.1.330`
    /// (default: the dialect's pin).
    #[serde(default)]
    pub conforms_to: Option<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// What the protocol inventory's findings do to this target's trials (`--protocol`
    /// still overrides it; default: the file's `protocol`, else report).
    #[serde(default)]
    pub protocol: Option<crate::protocol::check::Policy>,
    /// The features it has (the names scenarios' `features:` use): a scenario needing
    /// another is skipped as unsupported. Default: everything its dialect offers.
    #[serde(default)]
    pub supports: Option<Vec<String>>,
}

/// The keys `[targets.NAME]` takes, for the message refusing another.
pub const TARGET_KEYS: &[&str] = &[
    "command",
    "package",
    "dialect",
    "conforms_to",
    "env",
    "protocol",
    "supports",
];

/// `[consumers.NAME]`: a command reading stream-json on stdin (an SDK's parser, a bot).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConsumerEntry {
    /// Run with `sh -c` in the file's folder.
    pub command: String,
    /// Seconds it may take after its input ends (default `consume --timeout`).
    #[serde(default)]
    pub timeout: Option<u64>,
    /// A pattern (as in scenario files) each line it prints must match: one JSON object
    /// per frame it understood.
    #[serde(default)]
    pub each: Option<serde_json::Value>,
}

impl TargetEntry {
    /// The version `conforms_to` names, checked against the target's dialect.
    pub fn conforms_to_version(&self, name: &str) -> Result<Option<String>, EntryError> {
        let Some(spec) = &self.conforms_to else {
            return Ok(None);
        };
        let key = self.dialect.unwrap_or_default().conventions().expect_key();
        match spec.split_once('@') {
            Some((d, v)) if d == key && semver::Version::parse(v).is_ok() => {
                Ok(Some(v.to_string()))
            }
            _ => Err(EntryError::ConformsTo {
                name: name.to_string(),
                key,
                spec: spec.clone(),
            }),
        }
    }
}

impl TargetEntry {
    /// The features `supports` declares, each one some dialect offers (`None`: not declared).
    pub fn supported(&self, name: &str) -> Result<Option<BTreeSet<String>>, EntryError> {
        let Some(list) = &self.supports else {
            return Ok(None);
        };
        let known = Dialect::known_features();
        match list.iter().find(|f| !known.contains(*f)) {
            Some(f) => Err(EntryError::UnknownFeature {
                name: name.to_string(),
                feature: f.clone(),
            }),
            None => Ok(Some(list.iter().cloned().collect())),
        }
    }
}

impl Config {
    /// Reads `path`; an unknown key or a wrong type is an error naming file:line:column.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| ConfigError::Unreadable(FileError::new(path, source)))?;
        let mut config: Config = toml::from_str(&text).map_err(|source| {
            let at = source.span().map(|s| line_col(&text, s.start));
            let takes = source.span().and_then(|s| form_at(&text, s.start));
            // Unless the message names the allowed values itself.
            let says_what = ["takes", "expected one of", "known:"]
                .iter()
                .any(|m| source.message().contains(m));
            ConfigError::Toml {
                path: path.to_path_buf(),
                at,
                takes: takes.filter(|_| !says_what),
                source: Box::new(source),
            }
        })?;
        config.dir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
        config.path = path.to_path_buf();
        let in_file = |source| ConfigError::InFile(FileError::new(path, source));
        for (name, t) in &config.targets {
            if t.command.is_some() == t.package.is_some() {
                return Err(ConfigError::CommandOrPackage {
                    path: path.to_path_buf(),
                    name: name.clone(),
                });
            }
            t.conforms_to_version(name).map_err(in_file)?;
            t.supported(name).map_err(in_file)?;
        }
        Ok(config)
    }

    /// `streamcheck.toml` in `start` or the nearest folder above it.
    pub fn find(start: &Path) -> Option<PathBuf> {
        start
            .ancestors()
            .map(|d| d.join(FILE_NAME))
            .find(|p| p.is_file())
    }

    pub fn resolve(&self, path: &Path) -> PathBuf {
        self.dir.join(path)
    }
}

/// What each key of the file takes, for a value that is not of that form.
const FORMS: &[(&str, &str)] = &[
    ("jobs", "a number of trials run at once, e.g. `jobs = 2`"),
    ("protocol", "\"off\", \"report\", \"strict\" or \"parity\""),
    ("report_dir", "a folder, relative to this file, e.g. `report_dir = \"reports\"`"),
    ("known_divergences", "a file, relative to this file, e.g. `known_divergences = \"known.yaml\"`"),
    ("scenarios.bundled", "true, false, or a list of topics and scenario ids, e.g. `[\"basics\", \"tools/bash-single-call\"]`"),
    ("scenarios.exclude", "a list of topics and scenario ids, e.g. `[\"tools\", \"basics/init-fields\"]`"),
    ("scenarios.folders", "a list of folders, relative to this file, e.g. `[\"streamcheck/scenarios\"]`"),
    ("targets.command", "an executable, relative to this file or on PATH, e.g. `\"./mycli\"`"),
    ("targets.package", "a published CLI as `--target` names it, e.g. `\"claude-code@2.1.330\"`"),
    ("targets.dialect", "\"claude-code\", \"caliban\" or \"qwen-code\""),
    ("targets.conforms_to", "a release, e.g. `\"claude-code@2.1.330\"`"),
    ("targets.env", "a table of strings, e.g. `{ NAME = \"value\" }`"),
    ("targets.protocol", "\"off\", \"report\", \"strict\" or \"parity\""),
    ("targets.supports", "a list of features, e.g. `[\"input-stream-json\", \"tool:Bash\"]`"),
    ("consumers.command", "a shell command, e.g. `\"python3 bot/parse.py\"`"),
    ("consumers.timeout", "a number of seconds, e.g. `timeout = 10`"),
    ("consumers.each", "a pattern each line the consumer prints must match, e.g. `{ type = \"$string\" }`"),
];

/// The key whose value starts at or around `offset`, and the form it takes: the key
/// written on that line, under the nearest `[table]` above it.
fn form_at(text: &str, offset: usize) -> Option<(String, &'static str)> {
    let (line_no, _) = line_col(text, offset);
    let lines: Vec<&str> = text.lines().collect();
    let line = lines.get(line_no - 1)?;
    let key = line.split_once('=')?.0.trim().trim_matches('"');
    let table = lines[..line_no - 1]
        .iter()
        .rev()
        .find_map(|l| {
            let l = l.trim();
            (l.starts_with('[') && !l.starts_with("[[")).then(|| l.trim_matches(['[', ']']))
        })
        .unwrap_or("");
    // `[targets.mycli]` holds target keys whatever the target's name.
    let section = table.split('.').next().unwrap_or("");
    let name = match section {
        "" => key.to_string(),
        _ => format!("{section}.{key}"),
    };
    let form = FORMS.iter().find(|(k, _)| *k == name)?.1;
    let shown = match table {
        "" => key.to_string(),
        t => format!("{t}.{key}"),
    };
    Some((shown, form))
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The file's text, written in a folder of its own.
    fn written(text: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    fn load(text: &str) -> Config {
        let (_dir, path) = written(text);
        Config::load(&path).unwrap()
    }

    /// The error loading the file's text gives, as the user reads it (the file shown by
    /// its name).
    fn error(text: &str) -> String {
        let (_dir, path) = written(text);
        let shown = Config::load(&path).unwrap_err().to_string();
        shown.replace(&path.display().to_string(), "streamcheck.toml")
    }

    #[test]
    fn a_bundled_value_of_the_wrong_form_names_the_forms_it_takes() {
        let e = error("[scenarios]\nbundled = \"yes\"\n");
        assert!(e.starts_with("streamcheck.toml:2:"), "{e}");
        assert!(e.contains("takes true, false, or a list"), "{e}");
        assert!(!e.contains("untagged"), "{e}");
    }

    #[test]
    fn a_full_file_reads() {
        let c = load("jobs = 2\nreport_dir = \"out\"\nknown_divergences = \"known.yaml\"\n[scenarios]\nbundled = [\"basics\"]\nfolders = [\"mine\"]\n[targets.mycli]\ncommand = \"./mycli\"\ndialect = \"claude-code\"\nconforms_to = \"claude-code@2.1.330\"\nenv = { A = \"b\" }\n");
        assert_eq!(c.jobs, Some(2));
        assert!(c.scenarios.bundled.takes("basics/text") && !c.scenarios.bundled.takes("tools/x"));
        let t = &c.targets["mycli"];
        assert_eq!(t.dialect, Some(Dialect::ClaudeCode));
        assert_eq!(
            t.conforms_to_version("mycli").unwrap().as_deref(),
            Some("2.1.330")
        );
        assert!(load("").scenarios.bundled.takes("anything/x"));
    }

    #[test]
    fn bundled_takes_topics_and_scenario_ids_and_names_no_other() {
        let ids = [
            "basics/text".to_string(),
            "tools/bash/round-trip".to_string(),
        ];
        let bundled = Bundled::Topics(vec!["basics".into(), "tools/bash/round-trip".into()]);
        assert!(bundled.takes("basics/text") && bundled.takes("tools/bash/round-trip"));
        assert!(!bundled.takes("basics-more/x") && !bundled.takes("tools/other"));
        bundled.check(&ids).unwrap();
        Bundled::Topics(vec!["tools/".into()]).check(&ids).unwrap();
        let err = Bundled::Topics(vec!["basics".into(), "basic".into()])
            .check(&ids)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("`basic`") && err.contains("its topics are basics, tools"),
            "{err}"
        );
        assert!(Bundled::Topics(vec!["basics/tex".into()])
            .check(&ids)
            .is_err());
        assert!(Bundled::Topics(vec!["".into()]).check(&ids).is_err());
        Bundled::All(false).check(&ids).unwrap();
    }

    #[test]
    fn consumers_read_with_their_pattern_and_refuse_unknown_keys() {
        let c = load("[consumers.bot]\ncommand = \"python3 bot.py\"\ntimeout = 5\neach = { type = \"$string\" }\n");
        let bot = &c.consumers["bot"];
        assert_eq!(
            (bot.command.as_str(), bot.timeout),
            ("python3 bot.py", Some(5))
        );
        assert_eq!(bot.each, Some(serde_json::json!({"type": "$string"})));
        let err = error("[consumers.bot]\ncommand = \"x\"\ncmd = 1\n");
        assert!(err.starts_with("streamcheck.toml:3:"), "{err}");
        assert!(error("[consumers.bot]\ntimeout = 5\n").contains("command"));
    }

    #[test]
    fn unknown_keys_and_bad_values_name_their_line() {
        let err = error("jobs = 2\n[targets.x]\ncommand = \"./x\"\ncomand = 1\n");
        assert!(err.starts_with("streamcheck.toml:4:1:"), "{err}");
        assert!(err.contains("comand"), "{err}");
        let err = error("[targets.x]\ncommand = \"./x\"\ndialect = \"gemini\"\n");
        assert!(err.starts_with("streamcheck.toml:3:"), "{err}");
        let err = error("[targets.x]\ncommand = \"./x\"\nconforms_to = \"caliban@1\"\n");
        assert!(err.contains("claude-code@VERSION"), "{err}");
        let err = error("[targets.x]\ncommand = \"./x\"\nconforms_to = \"claude-code@abc\"\n");
        assert!(
            err.contains("claude-code@2.1.330") && err.contains("`claude-code@abc`"),
            "{err}"
        );
        let err = error("[targets.x]\n");
        assert!(err.contains("either `command` or `package`"), "{err}");
    }

    #[test]
    fn a_value_of_the_wrong_form_names_what_its_key_takes() {
        for (text, at, takes) in [
            ("jobs = \"two\"\n", ":1:", "`jobs` takes a number"),
            (
                "[scenarios]\nbundled = ture\n",
                ":2:",
                "`scenarios.bundled` takes true, false",
            ),
            (
                "[scenarios]\nfolders = \"own\"\n",
                ":2:",
                "`scenarios.folders` takes a list",
            ),
            (
                "[targets.mine]\ncommand = 3\n",
                ":2:",
                "`targets.mine.command` takes an executable",
            ),
            (
                "[targets.mine]\ncommand = \"a\"\nenv = { A = 1 }\n",
                ":3:",
                "`targets.mine.env` takes a table of strings",
            ),
            (
                "[consumers.bot]\ncommand = \"x\"\ntimeout = \"1s\"\n",
                ":3:",
                "`consumers.bot.timeout` takes a number",
            ),
        ] {
            let err = error(text);
            assert!(err.contains(at) && err.contains(takes), "{text:?}: {err}");
        }
        // A message that already names the allowed values gets no second list.
        let err = error("protocol = \"strictt\"\n");
        assert!(
            err.contains("expected one of") && !err.contains("takes"),
            "{err}"
        );
    }

    #[test]
    fn a_target_declares_its_protocol_and_features_and_no_other_key() {
        let c = load("[targets.mine]\ncommand = \"./m\"\nprotocol = \"parity\"\nsupports = [\"input-stream-json\", \"tool:Bash\"]\n");
        let t = &c.targets["mine"];
        assert_eq!(t.protocol, Some(crate::protocol::check::Policy::Parity));
        let supports = t.supported("mine").unwrap().unwrap();
        assert!(supports.contains("tool:Bash") && supports.len() == 2);
        let err = error("[targets.mine]\ncommand = \"./m\"\nsupports = [\"tools\"]\n");
        assert!(
            err.contains("`tools` is not a feature") && err.contains("tool:Bash"),
            "{err}"
        );
        let err = error("[targets.mine]\ncommand = \"./m\"\nfeatures = []\n");
        assert!(err.starts_with("streamcheck.toml:3:1:"), "{err}");
        for key in TARGET_KEYS {
            assert!(err.contains(&format!("`{key}`")), "{key}: {err}");
        }
    }

    #[test]
    fn exclude_takes_topics_and_ids_out_of_bundled_and_names_only_what_exists() {
        let ids = ["basics/text".to_string(), "tools/bash".to_string()];
        let c = load("[scenarios]\nbundled = true\nexclude = [\"tools\", \"basics/text\"]\n");
        c.scenarios.check(&ids).unwrap();
        assert!(!c.scenarios.takes("tools/bash") && !c.scenarios.takes("basics/text"));
        assert!(c.scenarios.takes("basics/other"));
        let c = load("[scenarios]\nexclude = [\"tool\"]\n");
        let err = c.scenarios.check(&ids).unwrap_err().to_string();
        assert!(
            err.contains("scenarios.exclude: `tool`") && err.contains("basics, tools"),
            "{err}"
        );
    }
}
