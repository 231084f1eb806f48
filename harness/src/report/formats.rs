//! `--report html,md,junit,json`: which run-level files a command writes.

use std::str::FromStr;

/// The report formats a run writes; all of them unless `--report` names fewer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Formats {
    /// `index.html`.
    pub html: bool,
    /// `summary.md` and each failed trial's `.md`.
    pub md: bool,
    /// `junit.xml`.
    pub junit: bool,
    /// `results.json` and each failed trial's `.json`.
    pub json: bool,
}

impl Default for Formats {
    fn default() -> Self {
        Formats {
            html: true,
            md: true,
            junit: true,
            json: true,
        }
    }
}

/// A `--report` name that is not a format.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown report format `{0}` (html, md, junit, json or all, comma-separated)")]
pub struct UnknownFormat(String);

impl FromStr for Formats {
    type Err = UnknownFormat;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut f = Formats {
            html: false,
            md: false,
            junit: false,
            json: false,
        };
        for name in s.split(',').map(str::trim) {
            match name {
                "html" => f.html = true,
                "md" => f.md = true,
                "junit" => f.junit = true,
                "json" => f.json = true,
                "all" => f = Formats::default(),
                _ => return Err(UnknownFormat(name.to_string())),
            }
        }
        Ok(f)
    }
}

/// How a [`super::ReportWriter`] or `merge` writes its run-level files.
#[derive(Debug, Clone, Default)]
pub struct ReportOptions {
    pub formats: Formats,
    /// The command line that made the report, shown in index.html.
    pub command: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lists_and_rejects_unknown_names() {
        let f: Formats = "html, junit".parse().unwrap();
        assert!(f.html && f.junit && !f.md && !f.json);
        assert_eq!("all".parse::<Formats>().unwrap(), Formats::default());
        let err = "html,pdf".parse::<Formats>().unwrap_err().to_string();
        assert_eq!(
            err,
            "unknown report format `pdf` (html, md, junit, json or all, comma-separated)"
        );
        assert!("".parse::<Formats>().is_err());
    }
}
