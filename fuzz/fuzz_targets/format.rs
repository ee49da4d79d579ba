//! Any bytes, read as (lossy) UTF-8, must format without a panic; a text that formats must say
//! the same after formatting (`format` refuses otherwise, and that refusal is a bug here), and
//! formatting the result again must change nothing.

#![no_main]

use cordon_syntax::format::{FormatError, format};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match format(&text) {
        Ok(formatted) => assert_eq!(format(&formatted).ok().as_deref(), Some(formatted.as_str()), "not idempotent"),
        Err(FormatError::Syntax(_)) => {}
        Err(changed @ FormatError::Changed(_)) => panic!("{changed}"),
    }
});
