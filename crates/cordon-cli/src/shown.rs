//! The last step before a terminal: everything the command writes to standard output and
//! standard error passes through [`cordon::api::text::guard`], so no character that a terminal
//! would hide or obey (an escape sequence, OSC 52, a carriage return, a bidi override) reaches
//! it from data, whatever a module forgot. Data is escaped where it is quoted (`escape`); this
//! is the net under that. The only control sequences Cordon writes itself are colour (`colour`:
//! SGR escapes around the renderers' own words and marks, added to a line after it is guarded)
//! and indicatif's, which redraw a progress line on a terminal's standard error (`cordon
//! bench`'s bar, the wait for a model in `waiting.rs`): lines of Cordon's own words, a name in
//! them escaped.

use std::io::{self, Write};

use cordon::api::text::{guard, is_hidden, is_mark};

use crate::colour::Painter;

/// A writer whose text is guarded on its way to `inner`. Bytes that are not UTF-8 are written
/// as `\u{fffd}`; a character split across two writes is held until its end comes. Where colour
/// is on, each line is painted after it is guarded (`colour`), and so is held until its end
/// comes (or a flush).
#[derive(Debug)]
pub(crate) struct Guarded<W: Write> {
    inner: W,
    /// The start of a character (or, painting, a line) whose end has not been written yet.
    pending: Vec<u8>,
    painter: Option<Painter>,
}

impl<W: Write> Guarded<W> {
    /// A guarded writer to `inner`, painting each line if `paints`.
    pub(crate) fn painted(inner: W, paints: bool) -> Guarded<W> {
        Guarded { inner, pending: Vec::new(), painter: paints.then(Painter::default) }
    }

    /// Writes the pending bytes up to `end`, guarded (and painted, line by line).
    fn write_pending(&mut self, end: usize) -> io::Result<()> {
        let text = String::from_utf8_lossy(&self.pending[..end]).into_owned();
        self.pending.drain(..end);
        let guarded = guard(&text);
        let Some(painter) = &mut self.painter else { return self.inner.write_all(guarded.as_bytes()) };
        let mut painted = String::with_capacity(guarded.len() + 16);
        for line in guarded.split_inclusive('\n') {
            let (body, end) = line.strip_suffix('\n').map_or((line, ""), |body| (body, "\n"));
            painted.push_str(&painter.paint(body));
            painted.push_str(end);
        }
        self.inner.write_all(painted.as_bytes())
    }
}

impl<W: Write> Write for Guarded<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(buf);
        let end = match std::str::from_utf8(&self.pending) {
            Ok(text) => text.len(),
            // An incomplete character at the end: held for the next write.
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => self.pending.len(),
        };
        // Painting, a line is written whole.
        let end = match self.painter {
            Some(_) => self.pending[..end].iter().rposition(|&b| b == b'\n').map_or(0, |at| at + 1),
            None => end,
        };
        self.write_pending(end)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        let end = self.pending.len();
        self.write_pending(end)?;
        self.inner.flush()
    }
}

impl<W: Write> Drop for Guarded<W> {
    fn drop(&mut self) {
        // Output that cannot be written any more has nowhere to say so.
        let _ = self.flush();
    }
}

/// JSON text (as `serde_json` writes it) with every hidden character and combining mark in its
/// strings written as a `\uXXXX` escape, which every JSON reader decodes back to the same
/// character: the output still parses to the same value, and passes [`guard`] unchanged. Such
/// characters can only be inside strings (the rest of JSON is ASCII), and a line break only
/// outside them (`serde_json` escapes those inside).
pub(crate) fn visible_json(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        if c != '\n' && (is_hidden(c) || is_mark(c)) {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn control_sequences_do_not_pass_and_split_characters_arrive_whole() {
        let mut out = Vec::new();
        let mut guarded = Guarded::painted(&mut out, false);
        let text = "a\u{1b}]52;c;eA==\u{7}\r\u{9b}2J é\u{202e}\n".as_bytes();
        for byte in text {
            guarded.write_all(std::slice::from_ref(byte)).unwrap();
        }
        guarded.write_all(&[0xff, b'!']).unwrap();
        drop(guarded);
        let shown = String::from_utf8(out).unwrap();
        assert_eq!(shown, "a\\u{1b}]52;c;eA==\\u{7}\\u{d}\\u{9b}2J é\\u{202e}\n\\u{fffd}!");
    }

    #[test]
    fn json_stays_json_with_nothing_hidden() {
        let value = serde_json::json!({ "text": "a\u{1b}[2J\u{7f}\u{202e} \u{301}\u{e0041}é\n" });
        let json = visible_json(&serde_json::to_string_pretty(&value).unwrap());
        assert!(json.contains("\\u202e \\u0301\\udb40\\udc41é"), "{json}");
        assert_eq!(guard(&json), json);
        assert_eq!(serde_json::from_str::<serde_json::Value>(&json).unwrap(), value);
    }

    proptest::proptest! {
        /// Painted, any text (escapes, diagnostics' own words, split anywhere) arrives as it
        /// would unpainted, with only the painter's own escapes added.
        #[test]
        fn painting_adds_only_its_own_escapes(
            pieces in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::string::string_regex("(error|warning|cordon)(\\[[a-z]\\])?: [a-z ]{0,5}\n").unwrap(),
                    proptest::string::string_regex(" *[0-9]* \\| *[\\^-]{0,3}[a-z ]{0,4}\n| *= (help|note):[a-z ]{0,3}\n").unwrap(),
                    proptest::string::string_regex(" *[0-9]\\. (allowed|BLOCKED) x\n|p: (accepted|rejected: 1 error)\n").unwrap(),
                    proptest::string::string_regex("[\\x00-\\x7f\u{9b}\u{202e}]{0,8}").unwrap(),
                ],
                0..12,
            ),
            split in 0usize..64,
        ) {
            let text: String = pieces.concat();
            let mut out = Vec::new();
            let mut painted = Guarded::painted(&mut out, true);
            let bytes = text.as_bytes();
            let split = split.min(bytes.len());
            painted.write_all(&bytes[..split]).unwrap();
            painted.write_all(&bytes[split..]).unwrap();
            drop(painted);
            let mut shown = String::from_utf8(out).unwrap();
            for escape in crate::colour::ESCAPES {
                shown = shown.replace(escape, "");
            }
            proptest::prop_assert!(!shown.contains('\u{1b}'), "{shown:?}");
            proptest::prop_assert_eq!(shown, guard(&text));
        }
    }
}
