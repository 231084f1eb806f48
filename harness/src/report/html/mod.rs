//! `index.html`: one self-contained page per report folder (inline CSS and script, no
//! network), rendered with minijinja from templates under `templates/`.
//!
//! Everything a CLI printed reaches the page either through the template engine's HTML
//! escaping or as JSON inside `<script type="application/json">` blocks (see
//! [`script_json`]), which the page's script reads and shows with `textContent` only.

mod parity;
mod run;
pub mod timeline;
mod trial;

pub use parity::write_parity;
pub use run::write_run;

use minijinja::Environment;
use serde::Serialize;
use std::io;
use std::path::Path;
use std::sync::OnceLock;

const STYLE: &str = include_str!("templates/style.css");
const SCRIPT: &str = include_str!("templates/app.js");

fn env() -> &'static Environment<'static> {
    static ENV: OnceLock<Environment<'static>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Environment::new();
        for (name, source) in [
            ("base.html", include_str!("templates/base.html")),
            ("run.html", include_str!("templates/run.html")),
            ("parity.html", include_str!("templates/parity.html")),
            ("drift.html", include_str!("templates/drift.html")),
            ("audit.html", include_str!("templates/audit.html")),
        ] {
            env.add_template(name, source)
                .unwrap_or_else(|e| panic!("template {name}: {e}"));
        }
        env.add_global("style", minijinja::Value::from_safe_string(STYLE.into()));
        env.add_global("script", minijinja::Value::from_safe_string(SCRIPT.into()));
        env
    })
}

/// A trial's (or comparison's) detail for the page, serialized once here rather than
/// through the template engine's values (a 1,000-trial page embeds megabytes of it).
#[derive(Serialize)]
struct Embedded {
    id: String,
    json: minijinja::Value,
}

impl Embedded {
    fn new(id: String, detail: &impl Serialize) -> Embedded {
        Embedded {
            id,
            json: minijinja::Value::from_safe_string(script_json(detail)),
        }
    }
}

/// Renders `template` with `ctx` into `dir/index.html` (the commands' own pages, like
/// `drift.html`, render through this too).
pub fn write_page(dir: &Path, template: &str, ctx: impl Serialize) -> io::Result<()> {
    let nonce = nonce();
    let html = env()
        .get_template(template)
        .and_then(|t| {
            t.render(minijinja::context! { nonce, ..minijinja::Value::from_serialize(ctx) })
        })
        .map_err(|e| io::Error::other(format!("{template}: {e}")))?;
    super::write_atomic(&dir.join("index.html"), html.as_bytes())
}

/// `to` as a link from a page in `from_dir`: relative, so the folders can move together.
pub fn relative_link(from_dir: &Path, to: &Path) -> String {
    let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let (from, to) = (abs(from_dir), abs(to));
    let common = from
        .components()
        .zip(to.components())
        .take_while(|(a, b)| a == b)
        .count();
    let ups = std::iter::repeat_n("..".to_string(), from.components().count() - common);
    let rest = to
        .components()
        .skip(common)
        .map(|c| c.as_os_str().to_string_lossy().into_owned());
    ups.chain(rest).collect::<Vec<_>>().join("/")
}

/// A fresh value per page for its Content-Security-Policy: only the page's own script
/// carries it, so a script that got into the page some other way does not run.
fn nonce() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    format!("{:016x}", h.finish())
}

/// JSON safe inside `<script type="application/json">`: `<`, `>`, `&` and the line
/// separators U+2028/U+2029 are written as `\uXXXX`, so no text a CLI printed can close
/// the element or open a comment, and `JSON.parse` reads back the same value.
pub fn script_json(v: &impl Serialize) -> String {
    let text = serde_json::to_string(v).unwrap_or_else(|_| "null".into());
    let mut out = String::with_capacity(text.len() + text.len() / 16);
    for c in text.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn script_json_cannot_close_its_element_and_reads_back_the_same() {
        let v = json!({"out": "</script><script>alert(1)</script> & <!-- \u{2028}\u{2029}"});
        let s = script_json(&v);
        for bad in ['<', '>', '&', '\u{2028}', '\u{2029}'] {
            assert!(!s.contains(bad), "{s}");
        }
        assert_eq!(serde_json::from_str::<serde_json::Value>(&s).unwrap(), v);
    }

    #[test]
    fn links_between_report_folders_are_relative() {
        let link = relative_link(Path::new("/r/drift/x"), Path::new("/r/runs/y/index.html"));
        assert_eq!(link, "../../runs/y/index.html");
        assert_eq!(
            relative_link(Path::new("/r"), Path::new("/r/a.html")),
            "a.html"
        );
    }

    #[test]
    fn templates_escape_what_they_are_given() {
        let html = env()
            .render_str(
                "{% autoescape true %}{{ x }}{% endautoescape %}",
                minijinja::context! { x => "<script>" },
            )
            .unwrap();
        assert_eq!(html, "&lt;script&gt;");
    }
}
