//! Text cut and escaped for reports.

/// At most `max` characters of `s`, with `…` where it was cut.
pub fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// One line (each line break shown as `⏎`), at most `max` characters, with `…` where
/// it was cut.
pub fn clip_line(s: &str, max: usize) -> String {
    clip(&s.replace("\r\n", "⏎").replace('\n', "⏎"), max)
}

/// Text for a Markdown table cell: `|` escaped, on one line.
pub fn md_escape(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// A Markdown table: a header row, then body rows. Every cell goes through
/// [`md_escape`], so a cell may hold Markdown (links, emphasis, code) but never breaks
/// the table.
pub struct Table {
    out: String,
}

impl Table {
    pub fn new<S: AsRef<str>>(header: impl IntoIterator<Item = S>) -> Table {
        let mut table = Table { out: String::new() };
        let columns = table.push_row(header);
        table.out.push('|');
        table.out.push_str(&"---|".repeat(columns));
        table.out.push('\n');
        table
    }

    pub fn row<S: AsRef<str>>(&mut self, cells: impl IntoIterator<Item = S>) -> &mut Table {
        self.push_row(cells);
        self
    }

    /// The table, each row ending in a newline.
    pub fn finish(self) -> String {
        self.out
    }

    fn push_row<S: AsRef<str>>(&mut self, cells: impl IntoIterator<Item = S>) -> usize {
        let mut columns = 0;
        self.out.push('|');
        for cell in cells {
            let cell = cell.as_ref();
            if !cell.is_empty() {
                self.out.push(' ');
                self.out.push_str(&md_escape(cell));
            }
            self.out.push_str(" |");
            columns += 1;
        }
        self.out.push('\n');
        columns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clips_on_characters() {
        assert_eq!(clip("日本語です", 3), "日本語…");
        assert_eq!(clip("abc", 3), "abc");
        assert_eq!(clip_line("a\r\nb\nc", 3), "a⏎b…");
        assert_eq!(md_escape("a|b\nc"), "a\\|b c");
    }

    #[test]
    fn a_table_escapes_every_cell_the_same_way() {
        let mut t = Table::new(["a", "b"]);
        t.row(["x|y", "two\nlines"]).row(["[link](f.md)", ""]);
        assert_eq!(
            t.finish(),
            "| a | b |\n|---|---|\n| x\\|y | two lines |\n| [link](f.md) | |\n"
        );
    }
}
