//! Text cut and escaped for reports.

/// At most `max` characters of `s`, with `…` where it was cut.
pub fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// Text for a Markdown table cell: `|` escaped, on one line.
pub fn md_escape(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clips_on_characters() {
        assert_eq!(clip("日本語です", 3), "日本語…");
        assert_eq!(clip("abc", 3), "abc");
        assert_eq!(md_escape("a|b\nc"), "a\\|b c");
    }
}
