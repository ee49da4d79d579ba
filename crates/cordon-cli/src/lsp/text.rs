//! A document's text and the protocol's positions in it: a line and a column counted in UTF-16
//! code units, as LSP requires, from and to the byte offsets the library's places use. A
//! position past a line's end is at its end, past the last line at the text's end; an offset
//! inside a character is at its start.

use lsp_types::{Position, Range, TextDocumentContentChangeEvent};

/// A text with where its lines start.
#[derive(Debug)]
pub(super) struct Text {
    text: String,
    /// The byte offset of each line's start (lines end at `\n`).
    starts: Vec<usize>,
}

impl Text {
    pub(super) fn new(text: String) -> Text {
        let starts = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect();
        Text { text, starts }
    }

    pub(super) fn as_str(&self) -> &str {
        &self.text
    }

    /// The byte offset of `at`.
    pub(super) fn offset(&self, at: Position) -> usize {
        let Some(&start) = self.starts.get(at.line as usize) else { return self.text.len() };
        let end = self.starts.get(at.line as usize + 1).map_or(self.text.len(), |next| next - 1);
        let line = self.text.get(start..end).unwrap_or("");
        let line = line.strip_suffix('\r').unwrap_or(line);
        let mut units = 0;
        for (i, c) in line.char_indices() {
            units += c.len_utf16();
            if units > at.character as usize {
                return start + i;
            }
        }
        start + line.len()
    }

    /// The position of the byte offset `offset`.
    pub(super) fn position(&self, offset: usize) -> Position {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|&s| s <= offset).saturating_sub(1);
        let start = self.starts.get(line).copied().unwrap_or(0);
        let units: usize = self.text.get(start..offset).unwrap_or("").chars().map(char::len_utf16).sum();
        Position { line: u32::try_from(line).unwrap_or(u32::MAX), character: u32::try_from(units).unwrap_or(u32::MAX) }
    }

    pub(super) fn range(&self, start: usize, end: usize) -> Range {
        Range { start: self.position(start), end: self.position(end) }
    }

    /// The whole text's range.
    pub(super) fn whole(&self) -> Range {
        self.range(0, self.text.len())
    }

    /// The text after `change`: the whole new text, or a range of it replaced.
    pub(super) fn changed(&self, change: TextDocumentContentChangeEvent) -> Text {
        match change.range {
            None => Text::new(change.text),
            Some(range) => {
                let start = self.offset(range.start);
                let end = self.offset(range.end).max(start);
                let mut text = String::with_capacity(self.text.len() + change.text.len());
                text.push_str(self.text.get(..start).unwrap_or(""));
                text.push_str(&change.text);
                text.push_str(self.text.get(end..).unwrap_or(""));
                Text::new(text)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn at(line: u32, character: u32) -> Position {
        Position { line, character }
    }

    #[test]
    fn positions_count_utf16_units() {
        // `é` is one unit (two bytes), `😀` two units (four bytes).
        let text = Text::new("ab\r\né😀x\n".into());
        assert_eq!(text.offset(at(1, 0)), 4);
        assert_eq!(text.offset(at(1, 1)), 6);
        assert_eq!(text.offset(at(1, 3)), 10);
        assert_eq!(text.position(10), at(1, 3));
        assert_eq!(text.position(11), at(1, 4));
        // Inside the emoji's surrogate pair: its start.
        assert_eq!(text.offset(at(1, 2)), 6);
        // Past a line's end, past the last line, inside a character.
        assert_eq!(text.offset(at(0, 99)), 2);
        assert_eq!(text.offset(at(9, 0)), 12);
        assert_eq!(text.position(99), at(2, 0));
        assert_eq!(text.position(5), at(1, 0));
    }

    #[test]
    fn a_change_replaces_its_range_or_the_whole_text() {
        let text = Text::new("let x = 1;\nx".into());
        let range = Some(Range { start: at(0, 8), end: at(0, 9) });
        let changed = text.changed(TextDocumentContentChangeEvent { range, range_length: None, text: "42".into() });
        assert_eq!(changed.as_str(), "let x = 42;\nx");
        // A range the wrong way round, or past the end, replaces nothing that is not there.
        let range = Some(Range { start: at(5, 0), end: at(0, 0) });
        let changed = text.changed(TextDocumentContentChangeEvent { range, range_length: None, text: "!".into() });
        assert_eq!(changed.as_str(), "let x = 1;\nx!");
        let whole = text.changed(TextDocumentContentChangeEvent { range: None, range_length: None, text: "y".into() });
        assert_eq!(whole.as_str(), "y");
    }
}
