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

impl FromStr for Formats {
    type Err = String;

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
                _ => {
                    return Err(format!(
                        "unknown report format `{name}` (html, md, junit, json or all, comma-separated)"
                    ))
                }
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
        let err = "html,pdf".parse::<Formats>().unwrap_err();
        assert!(err.contains("`pdf`"), "{err}");
        assert!("".parse::<Formats>().is_err());
    }
}
