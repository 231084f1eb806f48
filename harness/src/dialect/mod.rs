//! The families of CLIs streamcheck knows, one file each: everything that differs between
//! them (names, features, install, flags, environment, the stub's side-request rule, how
//! they refuse input, how their frames read in neutral terms) is a method of
//! [`Conventions`], implemented once per dialect in `claude_code.rs`, `caliban.rs`,
//! `qwen_code.rs`.
//!
//! To add a dialect: write `<name>.rs` with a unit struct implementing [`Conventions`]
//! (copy the closest one), add its line `StructName in <name>,` to the `dialects!` list
//! below (the struct's name becomes the variant's), and put its pins and lists in
//! `targets/<name>/`. Nothing else names a dialect.
//!
//! The dialect files import only the leaves beside them (`conventions.rs`, `launch.rs`,
//! `neutral.rs`, `distribution.rs`), never this file, a scenario, the runner or a command.

mod conventions;
mod distribution;
mod launch;
mod neutral;

pub use conventions::Conventions;
pub use distribution::{CargoPin, Distribution, NpmPin};
pub use launch::{OutputFormat, PrintMode, Written};
pub use neutral::{content_text, Event, Neutral};

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

/// Declares the dialect files, the [`Dialect`] enum, [`Dialect::ALL`] and the one match
/// that hands out each dialect's [`Conventions`] ([`Dialect::conventions`]), from one list: a variant can be in none
/// of them without being in all.
macro_rules! dialects {
    ($($(#[$doc:meta])* $variant:ident in $module:ident,)+) => {
        $(mod $module;)+

        /// A family of CLIs with one set of flags, environment and frames. Its
        /// [`Conventions`] are what it does differently (`dialect.conventions().flags()`).
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[derive(serde::Serialize, serde::Deserialize)]
        #[serde(into = "&'static str", try_from = "String")]
        pub enum Dialect {
            $($(#[$doc])* $variant,)+
        }

        impl Dialect {
            pub const ALL: &'static [Dialect] = &[$(Dialect::$variant,)+];
        }

        impl Dialect {
            /// What this dialect does differently: its [`Conventions`].
            pub fn conventions(self) -> &'static dyn Conventions {
                match self {
                    $(Dialect::$variant => &$module::$variant,)+
                }
            }
        }
    };
}

dialects! {
    /// Claude Code, the reference and the default: scenarios are written in its flags and
    /// frames, and a command or target file that names no dialect speaks it.
    #[default]
    ClaudeCode in claude_code,
    /// caliban: its own frames and exit codes, no control protocol; built from crates.io.
    Caliban in caliban,
    /// Qwen Code: Claude Code's frames, its own flags, tool names and settings file.
    QwenCode in qwen_code,
}

impl Dialect {
    /// The dialect a target name, a target file or an expectation key names.
    pub fn from_key(key: &str) -> Option<Dialect> {
        Dialect::ALL
            .iter()
            .copied()
            .find(|d| d.conventions().expect_key() == key)
    }

    /// Every dialect's key, for messages that list the known names.
    pub fn known_keys() -> String {
        let keys: Vec<&str> = Dialect::ALL
            .iter()
            .map(|d| d.conventions().expect_key())
            .collect();
        keys.join(", ")
    }

    /// Every feature name some dialect offers: what a scenario's `features:` may say.
    /// Tools a tool map renames keep their neutral (Claude Code or caliban) names.
    pub fn known_features() -> BTreeSet<String> {
        Dialect::ALL
            .iter()
            .flat_map(|d| {
                let tools = d
                    .conventions()
                    .builtin_tools()
                    .iter()
                    .map(|t| format!("tool:{t}"));
                tools.chain(d.conventions().flags().iter().map(|f| f.to_string()))
            })
            .collect()
    }

    /// [`Dialect::known_features`] as messages list them: `api-retry, max-budget, ...`.
    pub fn feature_names() -> String {
        let known = Dialect::known_features();
        known.into_iter().collect::<Vec<_>>().join(", ")
    }
}

/// A name that is no dialect's key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown dialect `{name}` (known: {})", Dialect::known_keys())]
pub struct UnknownDialect {
    pub name: String,
}

/// A dialect built otherwise than from npm, asked for its npm pin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{0} is not installed from npm")]
pub struct NotFromNpm(pub Dialect);

impl NpmPin {
    /// The dialect's npm pin; an error for a dialect built otherwise.
    pub fn of(dialect: Dialect) -> Result<&'static NpmPin, NotFromNpm> {
        match dialect.conventions().distribution() {
            Distribution::Npm(pin) => Ok(pin),
            Distribution::Cargo(_) => Err(NotFromNpm(dialect)),
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.conventions().expect_key())
    }
}

impl FromStr for Dialect {
    type Err = UnknownDialect;

    fn from_str(s: &str) -> Result<Dialect, UnknownDialect> {
        Dialect::from_key(s).ok_or_else(|| UnknownDialect {
            name: s.to_string(),
        })
    }
}

impl From<Dialect> for &'static str {
    fn from(d: Dialect) -> &'static str {
        d.conventions().expect_key()
    }
}

impl TryFrom<String> for Dialect {
    type Error = UnknownDialect;

    fn try_from(s: String) -> Result<Dialect, UnknownDialect> {
        s.parse()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_every_spelling() {
        for &d in Dialect::ALL {
            assert_eq!(d.to_string().parse::<Dialect>(), Ok(d));
            let json = serde_json::to_string(&d).unwrap();
            assert_eq!(json, format!("\"{d}\""));
            assert_eq!(serde_json::from_str::<Dialect>(&json).unwrap(), d);
        }
        assert_eq!(
            "claude".parse::<Dialect>().unwrap_err().to_string(),
            "unknown dialect `claude` (known: claude-code, caliban, qwen-code)"
        );
        let err = serde_json::from_str::<Dialect>("\"gemini\"").unwrap_err();
        assert!(
            err.to_string().contains("unknown dialect `gemini`"),
            "{err}"
        );
    }

    #[test]
    fn only_a_dialect_from_npm_has_an_npm_pin() {
        assert!(NpmPin::of(Dialect::ClaudeCode).is_ok());
        let e = NpmPin::of(Dialect::Caliban).unwrap_err();
        assert_eq!(e.to_string(), "caliban is not installed from npm");
    }

    #[test]
    fn known_features_hold_every_dialects_tools_and_flags() {
        let known = Dialect::known_features();
        for f in [
            "tool:Bash",
            "tool:Glob",
            "tool:Task",
            "partial-messages",
            "max-budget",
            "api-retry",
        ] {
            assert!(known.contains(f), "{f}");
        }
        assert!(!known.contains("tool:Bsh"));
    }

    #[test]
    fn every_dialect_has_its_own_name_and_folder() {
        let keys: BTreeSet<&str> = Dialect::ALL
            .iter()
            .map(|d| d.conventions().expect_key())
            .collect();
        assert_eq!(keys.len(), Dialect::ALL.len());
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .unwrap();
        for d in Dialect::ALL {
            assert!(
                root.join("targets")
                    .join(d.conventions().expect_key())
                    .is_dir(),
                "targets/{d}/ is missing"
            );
            if let Distribution::Npm(pin) = d.conventions().distribution() {
                assert_eq!(
                    (pin.target, pin.title),
                    (d.conventions().expect_key(), d.conventions().title())
                );
                assert_eq!(pin.dir, format!("targets/{d}"));
            }
        }
    }
}
