//! The reference as one HTML page with a search box (`protocol doc --html FILE`): the
//! Markdown rendered by pulldown-cmark, with raw HTML in it shown as text (doc comments and
//! examples hold `<` of their own), and a script that keeps only the sections and table
//! rows holding every word typed (also from the address: `#q=sandbox_enabled`).

use pulldown_cmark::{html, Event, Options, Parser};

const STYLE: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:0 2em 3em;max-width:110em}\
header{position:sticky;top:0;background:#fff;padding:.6em 0;border-bottom:1px solid #ccc;z-index:1}\
#q{font-size:1.1em;width:28em;padding:.25em .4em}#matches{margin-left:1em;color:#555}\
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ddd;padding:.15em .5em;vertical-align:top}\
th{background:#f4f4f4}code{font-size:.95em}pre{background:#f6f6f6;padding:.5em;overflow:auto}\
[hidden]{display:none!important}";

/// Sections are the `h2`s with what follows them up to the next; a section is kept when
/// its heading matches (whole) or one of its rows does (those rows only).
const SCRIPT: &str = r#"(function () {
  var box = document.getElementById('q'), out = document.getElementById('matches');
  var sections = [], cur = null;
  Array.prototype.forEach.call(document.getElementById('doc').children, function (el) {
    if (el.tagName === 'H2') { cur = {head: el, parts: []}; sections.push(cur); }
    else if (cur) { cur.parts.push(el); }
  });
  function filter() {
    var words = box.value.toLowerCase().split(/\s+/).filter(Boolean), rows = 0;
    var has = function (el) {
      var t = el.textContent.toLowerCase();
      return words.every(function (w) { return t.indexOf(w) >= 0; });
    };
    sections.forEach(function (s) {
      var whole = !words.length || has(s.head), any = whole;
      s.parts.forEach(function (p) {
        var trs = p.tagName === 'TABLE' ? p.querySelectorAll('tbody tr') : [];
        var shown = 0;
        Array.prototype.forEach.call(trs, function (tr) {
          var on = whole || has(tr);
          tr.hidden = !on;
          if (on) { shown++; if (words.length) { rows++; } }
        });
        var keep = whole || shown > 0 || (p.tagName !== 'TABLE' && has(p));
        p.hidden = !keep;
        any = any || keep;
      });
      s.head.hidden = !any;
    });
    out.textContent = words.length ? rows + ' matching rows' : '';
    document.documentElement.setAttribute('data-matches', String(rows));
  }
  var m = /[#&]q=([^&]*)/.exec(location.hash);
  if (m) { box.value = decodeURIComponent(m[1]); }
  box.addEventListener('input', filter);
  filter();
  document.documentElement.setAttribute('data-ready', '1');
})();"#;

/// The HTML page of a reference written in Markdown.
pub fn page(markdown: &str, title: &str) -> String {
    let parser = Parser::new_ext(markdown, Options::ENABLE_TABLES).map(|e| match e {
        Event::Html(t) | Event::InlineHtml(t) => Event::Text(t),
        other => other,
    });
    let mut body = String::new();
    html::push_html(&mut body, parser);
    let mut title_html = String::new();
    html::push_html(&mut title_html, std::iter::once(Event::Text(title.into())));
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>{title_html}</title><style>{STYLE}</style></head><body>\n\
         <header><input id=\"q\" type=\"search\" placeholder=\"Search kinds, keys, values (all words)\" \
         autofocus><span id=\"matches\"></span></header>\n<main id=\"doc\">\n{body}</main>\n\
         <script>{SCRIPT}</script>\n</body></html>\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_html_in_the_markdown_is_text() {
        let page = page(
            "## `k`\n\n| key | doc |\n|---|---|\n| `a` | Record<string, unknown> <script>x()</script> |\n",
            "t<i>",
        );
        assert!(page.contains("Record&lt;string, unknown&gt;"), "{page}");
        assert!(!page.contains("<script>x()"), "{page}");
        assert!(page.contains("<title>t&lt;i&gt;</title>"), "{page}");
        assert!(page.contains("<table>"), "tables are rendered");
    }
}
