//! The names a trial is known by: which scenario ([`ScenarioId`]) on which target
//! ([`TargetName`]). Each is the text as written, and is written so in every file.

use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;

/// A string that says what it names: read as a `&str` (deref, borrow), compared with
/// strings, stored as the plain string.
macro_rules! name {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[derive(serde::Serialize, serde::Deserialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl Deref for $name {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<String> for $name {
            fn from(s: String) -> Self {
                $name(s)
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                $name(s.to_string())
            }
        }

        impl From<$name> for String {
            fn from(n: $name) -> String {
                n.0
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }

        impl PartialEq<String> for $name {
            fn eq(&self, other: &String) -> bool {
                &self.0 == other
            }
        }
    };
}

name! {
    /// A scenario's id as written: its file's path under the scenarios folder without the
    /// extension (`tools/bash-round-trip`), and for a case of a file with `cases:` the case's
    /// name in brackets (`edges/x[a=1]`).
    ScenarioId
}

name! {
    /// A target's name as given: `claude-code`, `claude-code@2.1.197`, a project file's
    /// `[targets.NAME]`, a command's file name.
    TargetName
}

impl ScenarioId {
    /// The id of case `case` of the file whose id is `file`.
    pub fn of_case(file: &str, case: &str) -> ScenarioId {
        ScenarioId(format!("{file}[{case}]"))
    }

    /// The file's id: `edges/x[a=1]` -> `edges/x`.
    pub fn file(&self) -> &str {
        Self::file_of(self)
    }

    /// The case's name: `edges/x[a=1]` -> `a=1`; `None` for a file's own id.
    pub fn case(&self) -> Option<&str> {
        Self::parts(self).1
    }

    /// The file's id of an id held as text (a filter, an inventory's trial).
    pub fn file_of(id: &str) -> &str {
        Self::parts(id).0
    }

    /// An id held as text as its file's id and its case's name. A case's name holds no
    /// bracket: the case is the last bracketed part.
    pub fn parts(id: &str) -> (&str, Option<&str>) {
        match id.strip_suffix(']').and_then(|s| s.rsplit_once('[')) {
            Some((file, case)) => (file, Some(case)),
            None => (id, None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_splits_into_its_file_and_its_case() {
        let case = ScenarioId::of_case("edges/x", "a=1");
        assert_eq!(case, "edges/x[a=1]");
        assert_eq!((case.file(), case.case()), ("edges/x", Some("a=1")));
        let file = ScenarioId::from("tools/bash");
        assert_eq!((file.file(), file.case()), ("tools/bash", None));
        assert_eq!(ScenarioId::parts("x[1][a]"), ("x[1]", Some("a")));
    }

    #[test]
    fn names_are_stored_as_the_plain_strings() {
        let id = ScenarioId::from("edges/x[a=1]");
        assert_eq!(serde_json::to_string(&id).unwrap(), r#""edges/x[a=1]""#);
        let back: TargetName = serde_json::from_str(r#""claude-code@2.1.197""#).unwrap();
        assert_eq!(back, "claude-code@2.1.197");
    }
}
