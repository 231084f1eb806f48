//! One page: the template environment, the embedded trial data, the file it goes to.

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
pub struct Embedded {
    id: String,
    json: minijinja::Value,
}

impl Embedded {
    pub fn new(id: String, detail: &impl Serialize) -> Embedded {
        Embedded {
            id,
            json: minijinja::Value::from_safe_string(script_json(detail)),
        }
    }
}

/// Trials packed for a page of thousands: each trial's JSON deflated and base64-encoded,
/// inflated by the page's script only when the trial is opened (its own inflate: the
/// browser's DecompressionStream is asynchronous, and headless Chromium's --dump-dom does
/// not wait for it), and every long string (a request's system prompt, a tool's
/// description: the same in most trials) stored once in a table the trials point into. A packed string is `"\u{0}N"`, N its
/// index in the table; a string of the trial that starts with NUL goes into the table too,
/// so every such string is a pointer.
#[derive(Default)]
pub struct Packer {
    strings: Vec<String>,
    index: std::collections::HashMap<String, usize>,
}

/// Strings this long or longer are stored once per page.
const SHARED_FROM: usize = 200;

impl Packer {
    /// One trial's detail, packed.
    pub fn pack(&mut self, id: String, detail: &impl Serialize) -> Embedded {
        let mut value = serde_json::to_value(detail).unwrap_or(serde_json::Value::Null);
        self.share(&mut value);
        Embedded {
            id,
            json: minijinja::Value::from_safe_string(deflate_base64(value.to_string().as_bytes())),
        }
    }

    fn share(&mut self, v: &mut serde_json::Value) {
        match v {
            serde_json::Value::String(s) if s.len() >= SHARED_FROM || s.starts_with('\0') => {
                let text = std::mem::take(s);
                let i = match self.index.get(&text) {
                    Some(&i) => i,
                    None => {
                        self.strings.push(text.clone());
                        self.index.insert(text, self.strings.len() - 1);
                        self.strings.len() - 1
                    }
                };
                *s = format!("\0{i}");
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(|x| self.share(x)),
            serde_json::Value::Object(map) => map.values_mut().for_each(|x| self.share(x)),
            _ => {}
        }
    }

    /// The table of shared strings, packed as the trials are.
    pub fn table(&self) -> minijinja::Value {
        let json = serde_json::to_string(&self.strings).unwrap_or_default();
        minijinja::Value::from_safe_string(deflate_base64(json.as_bytes()))
    }
}

/// Raw deflate (RFC 1951), in base64: text safe anywhere in the page.
fn deflate_base64(bytes: &[u8]) -> String {
    use base64::Engine;
    use std::io::Write;
    let mut z = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
    let packed = z.write_all(bytes).and_then(|()| z.finish());
    base64::engine::general_purpose::STANDARD.encode(packed.unwrap_or_default())
}

/// Renders `template` with `ctx` into `dir/index.html`.
pub fn write_page(dir: &Path, template: &str, ctx: impl Serialize) -> io::Result<()> {
    let nonce = nonce();
    let html = env()
        .get_template(template)
        .and_then(|t| {
            t.render(minijinja::context! { nonce, ..minijinja::Value::from_serialize(ctx) })
        })
        .map_err(|e| io::Error::other(format!("{template}: {e}")))?;
    crate::store::write_atomic(&dir.join("index.html"), html.as_bytes())
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

    /// What the page's script does to a packed trial: inflate, parse, put the table back.
    fn unpack(packed: &str, table: &[String]) -> serde_json::Value {
        use base64::Engine;
        use std::io::Read;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(packed)
            .unwrap();
        let mut text = String::new();
        flate2::read::DeflateDecoder::new(&bytes[..])
            .read_to_string(&mut text)
            .unwrap();
        fn restore(v: &mut serde_json::Value, table: &[String]) {
            match v {
                serde_json::Value::String(s) if s.starts_with('\0') => {
                    *s = table[s[1..].parse::<usize>().unwrap()].clone();
                }
                serde_json::Value::Array(a) => a.iter_mut().for_each(|x| restore(x, table)),
                serde_json::Value::Object(m) => m.values_mut().for_each(|x| restore(x, table)),
                _ => {}
            }
        }
        let mut v = serde_json::from_str(&text).unwrap();
        restore(&mut v, table);
        v
    }

    #[test]
    fn packed_trials_share_long_strings_and_read_back_the_same() {
        let prompt = "You are Claude Code. ".repeat(40);
        let a = json!({"requests": [{"system": prompt.clone()}], "short": "hi", "nul": "\u{0}7"});
        let b = json!({"requests": [{"system": prompt.clone()}], "n": [1, 2]});
        let mut packer = Packer::default();
        let (pa, pb) = (packer.pack("a".into(), &a), packer.pack("b".into(), &b));
        assert_eq!(
            packer.strings,
            [prompt.clone(), "\u{0}7".to_string()],
            "stored once"
        );
        let table: Vec<String> = {
            use base64::Engine;
            use std::io::Read;
            let t = packer.table().to_string();
            let bytes = base64::engine::general_purpose::STANDARD.decode(t).unwrap();
            let mut text = String::new();
            flate2::read::DeflateDecoder::new(&bytes[..])
                .read_to_string(&mut text)
                .unwrap();
            serde_json::from_str(&text).unwrap()
        };
        assert_eq!(unpack(&pa.json.to_string(), &table), a);
        assert_eq!(unpack(&pb.json.to_string(), &table), b);
        // Short strings stay in the trial, compressed.
        let frames = json!({"frames": vec![json!({"type": "assistant", "text": "short"}); 5_000]});
        let packed = packer.pack("c".into(), &frames).json.to_string();
        assert!(
            frames.to_string().len() > 150_000 && packed.len() < 5_000,
            "{} bytes",
            packed.len()
        );
        assert_eq!(unpack(&packed, &table), frames);
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
