//! The last step before a terminal: everything the command writes to standard output and
//! standard error passes through [`cordon::api::text::guard`], so no character that a terminal
//! would hide or obey (an escape sequence, OSC 52, a carriage return, a bidi override) reaches
//! it from data, whatever a module forgot. Data is escaped where it is quoted (`escape`); this
//! is the net under that. The only control sequences Cordon writes itself are indicatif's, which
//! redraw a progress line on a terminal's standard error (`cordon bench`'s bar, the wait for a
//! model in `waiting.rs`): lines of Cordon's own words, a name in them escaped.

use std::io::{self, Write};

use cordon::api::text::{guard, is_hidden, is_mark};

/// A writer whose text is guarded on its way to `inner`. Bytes that are not UTF-8 are written
/// as `\u{fffd}`; a character split across two writes is held until its end comes.
#[derive(Debug)]
pub(crate) struct Guarded<W: Write> {
    inner: W,
    /// The start of a character whose end has not been written yet.
    pending: Vec<u8>,
}

impl<W: Write> Guarded<W> {
    pub(crate) fn new(inner: W) -> Guarded<W> {
        Guarded { inner, pending: Vec::new() }
    }

    /// Writes the pending bytes up to `end`, guarded.
    fn write_pending(&mut self, end: usize) -> io::Result<()> {
        let text = String::from_utf8_lossy(&self.pending[..end]).into_owned();
        self.pending.drain(..end);
        self.inner.write_all(guard(&text).as_bytes())
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
        let mut guarded = Guarded::new(&mut out);
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
}
